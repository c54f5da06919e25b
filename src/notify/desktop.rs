//! The desktop channel (docs/design.md#desktop-notifications): a notification on the desktop
//! of the machine the watcher runs on — the freedesktop notification service on the session
//! bus (Linux, BSD), `osascript` on macOS — with a **Jump** action that switches the person's
//! tmux client to the pane and, on a permission wait, **Allow** and **Deny**, decided by
//! [`crate::answer::answer`] exactly as `agentpane answer` decides: held to the request the
//! notification showed, refused (and the reason shown in a second notification) when the
//! dialog changed or someone is typing.
//!
//! [`send`] never blocks its caller: the notification is sent over D-Bus from a thread of the
//! watcher ([`super::bus`]), which waits there until the person picks an action or the
//! notification closes, then carries the action out; the thread dies with the watcher. Every
//! text is untrusted (it quotes the agent): control characters dropped, cut to size, the
//! body's markup characters escaped (daemons read a body as a small markup language), and it
//! never reaches a shell or any process's argument list.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use crate::answer::Choice;
use crate::exec;
use crate::tmux::{Socket, Tmux};

/// The longest summary and body shown, in characters.
const MAX_SUMMARY: usize = 120;
const MAX_BODY: usize = 600;
/// How long a notification's actions stay live: after that it is closed and no click comes.
const ACTION_WAIT: Duration = Duration::from_secs(3600);
/// How many notifications may wait for a click at once; past that they are shown without
/// actions, so a flood of alerts never piles up threads and bus connections.
const MAX_WAITING: usize = 16;
/// How long `osascript` may take to hand a notification over.
const SHOW_TIMEOUT: Duration = Duration::from_secs(5);

static WAITING: AtomicUsize = AtomicUsize::new(0);

/// Where notifications go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Notifier {
    /// The freedesktop notification service on the session bus: actions supported.
    Bus,
    /// `osascript` at this path (macOS): a notification without actions.
    Osascript(PathBuf),
}

/// One desktop notification.
#[derive(Debug, Clone)]
pub struct Desktop {
    /// Where it goes ([`notifier`]).
    pub notifier: Notifier,
    /// The title line (e.g. `claude in main:1.0: waiting`); untrusted, cleaned by [`send`].
    pub summary: String,
    /// What the agent asks or why; untrusted, cleaned and escaped by [`send`].
    pub body: String,
    /// The pane (`%N`) Jump switches to and Allow/Deny answer.
    pub pane: String,
    /// The tmux server the pane is in.
    pub socket: Socket,
    /// On a permission wait, the fingerprint of the request shown: Allow and Deny are offered
    /// and held to it. `None`: only Jump.
    pub request: Option<String>,
    /// Where what happened after a click is written (the watcher's log).
    pub log: fn(&str),
}

impl Desktop {
    /// The notification for `alert` (its one-line message; for a wait, what is asked).
    pub fn for_alert(
        alert: &crate::alert::Alert,
        notifier: Notifier,
        socket: Socket,
        log: fn(&str),
    ) -> Desktop {
        let asked = alert.request.as_ref();
        Desktop {
            notifier,
            summary: alert.message(),
            body: asked.map(crate::answer::decide::words).unwrap_or_default(),
            pane: alert.pane.clone(),
            socket,
            request: asked
                .filter(|r| r.kind == crate::read::request::PromptKind::Permission)
                .map(|r| r.fingerprint.clone()),
            log,
        }
    }
}

/// What the person picked on a notification.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Jump,
    Allow,
    Deny,
}

impl Action {
    /// The action whose key the daemon reported as invoked.
    fn parse(key: &str) -> Option<Action> {
        match key.trim() {
            "jump" => Some(Action::Jump),
            "allow" => Some(Action::Allow),
            "deny" => Some(Action::Deny),
            _ => None,
        }
    }
}

/// The notifier of this machine: on macOS `osascript` when on PATH; elsewhere the
/// notification service, when it answers on the session bus.
pub fn notifier() -> Option<Notifier> {
    if cfg!(target_os = "macos") {
        return exec::which("osascript").map(Notifier::Osascript);
    }
    on_bus::reachable().then_some(Notifier::Bus)
}

/// Shows `d` and, on a thread of its own, carries out the action the person picks. Returns at
/// once; `Err` only when no thread can be started.
pub fn send(d: Desktop) -> anyhow::Result<()> {
    let summary = summary_text(&d.summary);
    let body = body_text(&d.body);
    let bus = d.notifier == Notifier::Bus;
    let waits = bus && WAITING.fetch_add(1, Ordering::SeqCst) < MAX_WAITING;
    if bus && !waits {
        WAITING.fetch_sub(1, Ordering::SeqCst);
    }
    let spawned = std::thread::Builder::new()
        .name("desktop-notification".into())
        .spawn(move || {
            let picked = show(
                &d.notifier,
                &summary,
                &body,
                &actions(waits, d.request.is_some()),
            );
            if waits {
                WAITING.fetch_sub(1, Ordering::SeqCst);
            }
            match picked {
                Ok(Some(action)) => act(&d, action),
                Ok(None) => {}
                Err(e) => (d.log)(&format!("desktop notification for {}: {e:#}", d.pane)),
            }
        });
    if spawned.is_err() && waits {
        WAITING.fetch_sub(1, Ordering::SeqCst);
    }
    spawned.map(drop).map_err(anyhow::Error::new)
}

/// Shows a notification with `actions` `(key, label)` (none: handed over at once) and waits
/// for the one the person picks. Allow and Deny make it critical: the daemon keeps a decision
/// on screen.
fn show(
    notifier: &Notifier,
    summary: &str,
    body: &str,
    actions: &[(&str, &str)],
) -> anyhow::Result<Option<Action>> {
    match notifier {
        Notifier::Bus => {
            let critical = actions.iter().any(|(key, _)| *key == "allow");
            on_bus::show(summary, body, actions, critical, ACTION_WAIT)
        }
        Notifier::Osascript(program) => {
            let program = program.to_string_lossy();
            let input = osascript_input(summary, body);
            exec::run(&program, OSASCRIPT, Some(input.as_bytes()), SHOW_TIMEOUT)?;
            Ok(None)
        }
    }
}

/// The actions offered: Jump (and Allow/Deny when `decidable`) when the notification `waits`
/// for a click, none otherwise.
fn actions(waits: bool, decidable: bool) -> Vec<(&'static str, &'static str)> {
    let mut actions = Vec::new();
    if waits {
        actions.push(("jump", "Jump"));
        if decidable {
            actions.extend([("allow", "Allow"), ("deny", "Deny")]);
        }
    }
    actions
}

#[cfg(all(unix, not(target_os = "macos")))]
mod on_bus {
    use super::{Action, Duration};
    use crate::notify::bus;

    pub fn reachable() -> bool {
        bus::reachable()
    }

    pub fn show(
        summary: &str,
        body: &str,
        actions: &[(&str, &str)],
        critical: bool,
        limit: Duration,
    ) -> anyhow::Result<Option<Action>> {
        let shown = bus::Shown {
            summary,
            body,
            actions,
            critical,
        };
        let picked = bus::show(&shown, limit)?;
        Ok(picked.as_deref().and_then(Action::parse))
    }
}

/// macOS has no freedesktop notification service: notifications go through `osascript`.
#[cfg(not(all(unix, not(target_os = "macos"))))]
mod on_bus {
    use super::{Action, Duration};

    pub fn reachable() -> bool {
        false
    }

    pub fn show(
        _: &str,
        _: &str,
        _: &[(&str, &str)],
        _: bool,
        _: Duration,
    ) -> anyhow::Result<Option<Action>> {
        anyhow::bail!("no freedesktop notification service on this system")
    }
}

/// Carries out `action`; what went wrong is logged and, for a refused answer, shown.
fn act(d: &Desktop, action: Action) {
    let tmux = Tmux::new(d.socket.clone());
    let choice = match action {
        Action::Jump => {
            match jump(&tmux, &d.pane) {
                Ok(client) => (d.log)(&format!("desktop jump to {}: client {client}", d.pane)),
                Err(e) => {
                    (d.log)(&format!("desktop jump to {}: {e:#}", d.pane));
                    tell(d, &format!("cannot jump to {}: {e:#}", d.pane));
                }
            }
            return;
        }
        Action::Allow => Choice::Allow,
        Action::Deny => Choice::Deny,
    };
    // Only a notification that offered the buttons carries a request to hold them to.
    let Some(shown) = d.request.as_deref() else {
        return;
    };
    let word = match choice {
        Choice::Allow => "allow",
        Choice::Deny => "deny",
    };
    match crate::answer::answer(&tmux, &d.pane, choice, false, Some(shown), None) {
        Ok(a) => match &a.refused {
            None => (d.log)(&format!(
                "desktop {word} in {}: keys {:?}",
                a.target, a.keys
            )),
            Some(why) => {
                let why = format!("{word} refused, nothing typed: {why}");
                (d.log)(&format!("desktop {} {why}", a.target));
                tell(d, &why);
            }
        },
        Err(e) => {
            (d.log)(&format!("desktop {word} in {}: {e:#}", d.pane));
            tell(d, &format!("{word} failed, nothing typed: {e:#}"));
        }
    }
}

/// Switches the client the person used last to `pane`; its name.
fn jump(tmux: &Tmux, pane: &str) -> anyhow::Result<String> {
    let clients = tmux.clients()?;
    let Some(client) = clients.into_iter().max_by_key(|c| c.activity) else {
        anyhow::bail!("no tmux client is attached to switch");
    };
    tmux.switch_to(Some(&client.name), pane)?;
    Ok(client.name)
}

/// A second notification, without actions: what became of a click.
fn tell(d: &Desktop, what: &str) {
    let summary = summary_text(&format!("agentpane: {}", d.pane));
    if let Err(e) = show(&d.notifier, &summary, &body_text(what), &[]) {
        (d.log)(&format!("desktop notification for {}: {e:#}", d.pane));
    }
}

/// `osascript`'s arguments: a fixed script that reads both texts from its standard input
/// (the title, a newline, the body), so no text is part of the script or of any argument.
const OSASCRIPT: [&str; 8] = [
    "-e",
    "on run",
    "-e",
    "set input to read (POSIX file \"/dev/stdin\") as «class utf8»",
    "-e",
    "display notification (text ((offset of linefeed in input) + 1) thru -1 of input) with title (paragraph 1 of input)",
    "-e",
    "end run",
];

/// What `osascript` reads: the one-line title, a newline, the body (never empty, so the
/// script's text range exists).
fn osascript_input(summary: &str, body: &str) -> String {
    let body = if body.is_empty() { " " } else { body };
    format!("{summary}\n{body}")
}

/// The summary as shown: one clean line, bounded, never starting with `-`. Daemons show it as
/// plain text, but some format it into markup: `<`, `>` and `&` become look-alikes.
fn summary_text(text: &str) -> String {
    let line = crate::text::terminal_line(text)
        .replace('<', "‹")
        .replace('>', "›")
        .replace('&', "＆");
    crate::text::chars(
        line.trim().trim_start_matches('-').trim_start(),
        MAX_SUMMARY,
    )
}

/// The body as shown: control characters dropped (lines kept), bounded, then its markup
/// characters escaped.
fn body_text(text: &str) -> String {
    let clean = crate::text::terminal_safe(text).replace('\t', " ");
    crate::text::chars(clean.trim(), MAX_BODY)
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::HOSTILE;

    #[test]
    fn a_permission_wait_offers_allow_and_deny_and_waits_for_the_click() {
        assert_eq!(
            actions(true, true),
            [("jump", "Jump"), ("allow", "Allow"), ("deny", "Deny")]
        );
        assert_eq!(actions(true, false), [("jump", "Jump")]);
        assert!(actions(false, true).is_empty());
    }

    #[test]
    fn osascript_reads_the_texts_from_its_input_never_from_its_arguments() {
        let (summary, body) = (summary_text("--help"), body_text("rm -rf /\nmore"));
        assert_eq!(summary, "help");
        let input = osascript_input(&summary, &body);
        assert_eq!(input, "help\nrm -rf /\nmore");
        assert!(OSASCRIPT.iter().all(|a| !a.contains("rm -rf")));
        assert_eq!(osascript_input("t", ""), "t\n ");
    }

    #[test]
    fn model_text_is_cleaned_bounded_and_its_markup_escaped() {
        let body = body_text(&format!("rm <b>x</b> && {HOSTILE}\n{}", "y".repeat(2000)));
        assert!(
            body.starts_with("rm &lt;b&gt;x&lt;/b&gt; &amp;&amp; abcdef\n"),
            "{body}"
        );
        assert!(!body.chars().any(crate::text::is_control), "{body:?}");
        assert!(!body.contains('<') && !body.contains('>'));
        let shown = body
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&amp;", "&");
        assert_eq!(shown.chars().count(), MAX_BODY);
        let summary = summary_text(&format!("a <i>&</i>\n{HOSTILE}{}", "z".repeat(500)));
        assert!(summary.starts_with("a ‹i›＆‹/i› abcdef"), "{summary}");
        assert!(!summary.contains('\n') && !summary.chars().any(crate::text::is_control));
        assert_eq!(summary.chars().count(), MAX_SUMMARY);
    }

    #[test]
    fn only_the_actions_offered_are_read_back() {
        assert_eq!(Action::parse("allow\n"), Some(Action::Allow));
        assert_eq!(Action::parse("deny"), Some(Action::Deny));
        assert_eq!(Action::parse("jump"), Some(Action::Jump));
        assert_eq!(Action::parse(""), None);
        assert_eq!(Action::parse("default"), None);
    }
}
