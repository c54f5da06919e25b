//! The desktop channel (docs/design.md#desktop-notifications): a notification on the desktop
//! of the machine the watcher runs on — `notify-send` (freedesktop), `osascript` on macOS —
//! with a **Jump** action that switches the person's tmux client to the pane and, on a
//! permission wait, **Allow** and **Deny**, decided by [`crate::answer::answer`] exactly as
//! `agentpane answer` decides: held to the request the notification showed, refused (and the
//! reason shown in a second notification) when the dialog changed or someone is typing.
//!
//! [`send`] never blocks its caller: `notify-send --wait` runs on a thread of its own until the
//! person picks an action or the notification closes, and prints the action's name, which
//! that thread then carries out. Every text is untrusted (it quotes the agent): control
//! characters dropped, cut to size, and the body's markup characters escaped (daemons read a
//! body as a small markup language); nothing of it reaches a shell, and it follows `--`.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use crate::answer::Choice;
use crate::exec;
use crate::tmux::{Socket, Tmux};

/// The longest summary and body shown, in characters.
const MAX_SUMMARY: usize = 120;
const MAX_BODY: usize = 600;
/// How long a notification's actions stay live: after that `notify-send` is ended and a click
/// does nothing.
const ACTION_WAIT: Duration = Duration::from_secs(3600);
/// How many notifications may wait for a click at once; past that they are shown without
/// actions, so a flood of alerts never piles up threads and processes.
const MAX_WAITING: usize = 16;
/// A notification without actions is handed over at once.
const SHOW_TIMEOUT: Duration = Duration::from_secs(5);

static WAITING: AtomicUsize = AtomicUsize::new(0);

/// One desktop notification.
#[derive(Debug, Clone)]
pub struct Desktop {
    /// The notifier to run ([`notifier`]).
    pub program: PathBuf,
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
        program: PathBuf,
        socket: Socket,
        log: fn(&str),
    ) -> Desktop {
        let asked = alert.request.as_ref();
        Desktop {
            program,
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
    /// The name `notify-send` prints for the action picked.
    fn parse(printed: &str) -> Option<Action> {
        match printed.trim() {
            "jump" => Some(Action::Jump),
            "allow" => Some(Action::Allow),
            "deny" => Some(Action::Deny),
            _ => None,
        }
    }
}

/// The desktop notifier on this machine's PATH: `osascript` on macOS, `notify-send` elsewhere.
pub fn notifier() -> Option<PathBuf> {
    exec::which(if cfg!(target_os = "macos") {
        "osascript"
    } else {
        "notify-send"
    })
}

/// Shows `d` and, on a thread of its own, carries out the action the person picks. Returns at
/// once; `Err` only when no thread can be started.
pub fn send(d: Desktop) -> anyhow::Result<()> {
    let summary = summary_text(&d.summary);
    let body = body_text(&d.body);
    let mac = d.program.file_name().is_some_and(|n| n == "osascript");
    let waits = !mac && WAITING.fetch_add(1, Ordering::SeqCst) < MAX_WAITING;
    if !mac && !waits {
        WAITING.fetch_sub(1, Ordering::SeqCst);
    }
    let args = if mac {
        osascript_args(&summary, &body)
    } else {
        notify_send_args(&summary, &body, waits, d.request.is_some())
    };
    let spawned = std::thread::Builder::new()
        .name("desktop-notification".into())
        .spawn(move || {
            let timeout = if waits { ACTION_WAIT } else { SHOW_TIMEOUT };
            let shown = exec::run(&d.program.to_string_lossy(), &args, None, timeout);
            if waits {
                WAITING.fetch_sub(1, Ordering::SeqCst);
            }
            match shown {
                Ok(out) => {
                    if let Some(action) = Action::parse(&String::from_utf8_lossy(&out.stdout)) {
                        act(&d, action);
                    }
                }
                Err(e) => (d.log)(&format!("desktop notification for {}: {e}", d.pane)),
            }
        });
    if spawned.is_err() && waits {
        WAITING.fetch_sub(1, Ordering::SeqCst);
    }
    spawned.map(drop).map_err(anyhow::Error::new)
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
    let body = body_text(what);
    let mac = d.program.file_name().is_some_and(|n| n == "osascript");
    let args = if mac {
        osascript_args(&summary, &body)
    } else {
        notify_send_args(&summary, &body, false, false)
    };
    if let Err(e) = exec::run(&d.program.to_string_lossy(), &args, None, SHOW_TIMEOUT) {
        (d.log)(&format!("desktop notification for {}: {e}", d.pane));
    }
}

/// `notify-send`'s arguments: Jump (and Allow/Deny when `decidable`) when it `waits` for a
/// click; the texts after `--`, so neither is read as an option.
fn notify_send_args(summary: &str, body: &str, waits: bool, decidable: bool) -> Vec<String> {
    let mut args = vec!["--app-name=agentpane".to_string()];
    if waits {
        args.push("--action=jump=Jump".into());
        if decidable {
            // A decision waits for the person: the daemon keeps it on screen.
            args.extend(
                [
                    "--action=allow=Allow",
                    "--action=deny=Deny",
                    "--urgency=critical",
                ]
                .map(String::from),
            );
        }
        args.push("--wait".into());
    }
    args.extend(["--".into(), summary.into(), body.into()]);
    args
}

/// `osascript`'s arguments: a fixed script that reads both texts from its arguments, so no
/// text is ever part of the script.
fn osascript_args(summary: &str, body: &str) -> Vec<String> {
    [
        "-e",
        "on run argv",
        "-e",
        "display notification (item 2 of argv) with title (item 1 of argv)",
        "-e",
        "end run",
        summary,
        body,
    ]
    .map(String::from)
    .to_vec()
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
        let args = notify_send_args("s", "b", true, true);
        assert_eq!(
            args,
            [
                "--app-name=agentpane",
                "--action=jump=Jump",
                "--action=allow=Allow",
                "--action=deny=Deny",
                "--urgency=critical",
                "--wait",
                "--",
                "s",
                "b"
            ]
        );
        let jump_only = notify_send_args("s", "b", true, false);
        assert!(jump_only.contains(&"--action=jump=Jump".to_string()));
        assert!(!jump_only.iter().any(|a| a.contains("allow")));
        assert_eq!(
            notify_send_args("s", "b", false, true),
            ["--app-name=agentpane", "--", "s", "b"]
        );
    }

    #[test]
    fn texts_that_look_like_options_follow_the_double_dash() {
        let args = notify_send_args(
            &summary_text("--help"),
            &body_text("--action=x"),
            true,
            true,
        );
        let dd = args.iter().position(|a| a == "--").unwrap();
        assert_eq!(&args[dd + 1..], ["help", "--action=x"]);
        assert_eq!(osascript_args("t", "b")[6..], ["t", "b"]);
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
