//! Deciding from anywhere (docs/design.md#deciding-from-anywhere): allow or deny what a waiting
//! agent asks, from another pane. The rule is [`decide::decide`], a pure function of what was
//! shown and what is observed now; this side observes (the agent's foreground, its log, its
//! screen, and whether someone is typing in the pane), types the keys the agent's dialog names
//! — each one only while the agent has its pane's foreground, held there by tmux itself as a
//! route's paste is, its screen still shows the dialog decided on, and no one else's key came
//! in ([`press`]) — and watches the dialog close.

pub mod decide;
pub mod press;

use std::time::{Duration, Instant};

use chrono::Utc;
use serde::Serialize;

pub use decide::{Choice, Refused, Typing};

use crate::read::request::Request;
use crate::route::recipient::{self, Refusal};
use crate::scan::PaneReport;
use crate::tmux::Tmux;

/// How long the dialog is watched for closing after the keys.
const CLOSE_WAIT: Duration = Duration::from_secs(3);
const POLL: Duration = Duration::from_millis(50);
/// Pause between the two looks before any key (see [`answer`]).
const SETTLE: Duration = Duration::from_millis(300);
/// How long a look before a key waits for a dialog the agent is redrawing.
const REDRAW: Duration = Duration::from_millis(300);

/// What one answer did.
#[derive(Debug, Clone, Serialize)]
pub struct Answered {
    pub pane: String,
    pub target: String,
    pub choice: Choice,
    pub always: bool,
    /// The request answered (or, when refused, the one the pane asks now, if any).
    pub request: Option<Request>,
    /// The keys typed (empty when refused).
    pub keys: Vec<String>,
    /// Why nothing was typed.
    #[serde(skip)]
    pub refused: Option<Refused>,
    /// The dialog left the screen after the keys.
    pub closed: bool,
}

/// Answers what `target` asks with `choice` (`always`: don't ask again), held to `shown` (the
/// fingerprint of the request the person saw; `None`: what it asks now, reported back).
/// `caller` is the tmux client (name or terminal) the answer comes from, if any: its own keys
/// are not someone typing in the pane. `Err` only when tmux or the pane cannot be read at all.
pub fn answer(
    tmux: &Tmux,
    target: &str,
    choice: Choice,
    always: bool,
    shown: Option<&str>,
    caller: Option<&str>,
) -> anyhow::Result<Answered> {
    let reports = [looked_at(tmux, target)?];
    let pane = reports[0].resolved.pane.pane_id.clone();
    let mut done = Answered {
        target: reports[0].resolved.pane.target(),
        pane: pane.clone(),
        choice,
        always,
        request: None,
        keys: Vec::new(),
        refused: None,
        closed: false,
    };
    let (facts, _) = observe(tmux, &pane, &reports, caller);
    let mut plan = decide::decide(&pane, shown, choice, always, &facts);
    let (mut facts, mut seen) = (facts, None);
    if let Ok(first) = &plan {
        // A key the person pressed in the pane a moment ago may not have been taken yet:
        // look again after a pause, held to what the first look found.
        std::thread::sleep(SETTLE);
        let shown = shown.unwrap_or(&first.request.fingerprint).to_string();
        (facts, seen) = observe(tmux, &pane, &reports, caller);
        plan = decide::decide(&pane, Some(&shown), choice, always, &facts);
    }
    done.request = match &plan {
        Ok(p) => Some(p.request.clone()),
        Err(_) => facts
            .logged
            .clone()
            .or_else(|| facts.screen.as_ref().map(|d| d.request.clone())),
    };
    let (plan, seen, shown) = match (plan, seen, facts.screen.clone()) {
        (Ok(plan), Some(seen), Some(shown)) => (plan, seen, shown),
        (Err(refused), _, _) => {
            done.refused = Some(refused);
            return Ok(done);
        }
        (Ok(_), _, _) => unreachable!("a plan needs the foreground and the dialog on screen"),
    };
    let to = recipient::of_pane(tmux, &reports, &pane).map_err(anyhow::Error::new)?;
    let mut live = Live {
        tmux,
        pane: &pane,
        agent: crate::agents::of(to.kind),
        to: &to,
        reports: &reports,
        caller,
        seen,
    };
    let (typed, refused) = press::press_keys(&pane, &plan, &shown, &mut live)?;
    done.keys = typed;
    if refused.is_some() {
        done.refused = refused;
        return Ok(done);
    }
    done.closed = dialog_closes(tmux, &pane, to.kind, &facts);
    Ok(done)
}

/// What `target` asks now, as [`answer`] would see it (its log's pending request, else the
/// dialog on its screen), and whether the dialog offers "don't ask again"; `None` when it
/// asks nothing. For a page that shows the request before the person decides.
pub fn offered(tmux: &Tmux, target: &str) -> anyhow::Result<Option<(Request, bool)>> {
    let reports = [looked_at(tmux, target)?];
    let pane = reports[0].resolved.pane.pane_id.clone();
    let (facts, _) = observe(tmux, &pane, &reports, None);
    let always = facts
        .screen
        .as_ref()
        .is_some_and(|d| d.choices.always.is_some());
    Ok(facts
        .logged
        .or_else(|| facts.screen.map(|d| d.request))
        .map(|r| (r, always)))
}

/// The report of the pane `target` names, with its evidence, now.
fn looked_at(tmux: &Tmux, target: &str) -> anyhow::Result<PaneReport> {
    let now = Utc::now();
    let Some(resolved) = crate::scan::resolve_target(tmux, target, now)? else {
        anyhow::bail!("no pane matches the tmux target `{target}`");
    };
    Ok(crate::scan::with_evidence(
        crate::scan::report(resolved, now),
        tmux,
        &crate::paths::state_dir(),
        now,
    ))
}

/// The pane an answer types into, looked at through tmux.
struct Live<'a> {
    tmux: &'a Tmux,
    pane: &'a str,
    agent: &'static dyn crate::agents::Agent,
    to: &'a recipient::Recipient,
    reports: &'a [PaneReport],
    caller: Option<&'a str>,
    /// tmux's view of the pane at the last look, that a key is held to.
    seen: crate::tmux::PaneNow,
}

impl press::Pane for Live<'_> {
    fn foreground(&mut self) -> Result<(), Refusal> {
        self.seen = recipient::check(self.tmux, self.pane, self.to, self.reports)?;
        Ok(())
    }

    fn dialog(&mut self) -> Option<crate::read::dialog::OnScreen> {
        // A screen caught while the agent redraws (after an arrow key) may show no dialog
        // for a moment: look again until one is read, within the margin.
        let end = Instant::now() + REDRAW;
        loop {
            let d = screen_dialog(self.tmux, self.pane, self.agent);
            if d.is_some() || Instant::now() >= end {
                return d;
            }
            std::thread::sleep(POLL);
        }
    }

    fn shows(&mut self, step: &str) -> bool {
        shows(self.tmux, self.pane, step)
    }

    fn typing(&mut self, first: bool) -> Option<Typing> {
        // Our own keys are input the agent reads after the first, so unread input is only
        // looked for before it.
        let unread = if first { unread(&self.seen.tty) } else { 0 };
        someone_typing(self.tmux, self.pane, self.caller, unread)
    }

    fn press(&mut self, key: &str) -> anyhow::Result<bool> {
        Ok(self.tmux.send_keys_if(self.pane, &self.seen, key, 1)?)
    }
}

/// The dialog on `pane`'s screen as `agent` reads it (with colours where it needs them).
fn screen_dialog(
    tmux: &Tmux,
    pane: &str,
    agent: &dyn crate::agents::Agent,
) -> Option<crate::read::dialog::OnScreen> {
    let captured = if agent.styled_dialogs() {
        tmux.capture_styled(pane)
    } else {
        tmux.capture(pane, 0)
    };
    captured.ok().and_then(|s| agent.on_screen(&s))
}

/// Whether someone is typing in `pane` now: `unread` bytes wait in its terminal, or a key came
/// in through a client that shows it (other than `caller`) within the margin. A server that
/// cannot list its clients shows none.
fn someone_typing(tmux: &Tmux, pane: &str, caller: Option<&str>, unread: u64) -> Option<Typing> {
    let clients = tmux.clients().unwrap_or_default();
    decide::typing(pane, &clients, caller, unread, Utc::now().timestamp())
}

/// How many bytes of input wait in terminal `tty`, not yet read by the program in it
/// (`FIONREAD`; 0 when it cannot be opened). Opening a terminal that is not ours to ask takes
/// nothing from it: `O_NOCTTY` keeps it from becoming ours, and nothing is read.
fn unread(tty: &str) -> u64 {
    use rustix::fs::{Mode, OFlags};
    if !tty.starts_with("/dev/") {
        return 0;
    }
    let flags = OFlags::RDONLY | OFlags::NOCTTY | OFlags::NONBLOCK | OFlags::CLOEXEC;
    rustix::fs::open(tty, flags, Mode::empty())
        .and_then(rustix::io::ioctl_fionread)
        .unwrap_or(0)
}

/// What is observed of `pane` now: the agent's foreground (and tmux's view to hold keys to),
/// whether someone is typing in it, its log's pending request, the dialog on its screen.
fn observe(
    tmux: &Tmux,
    pane: &str,
    reports: &[PaneReport],
    caller: Option<&str>,
) -> (decide::Facts, Option<crate::tmux::PaneNow>) {
    let report = &reports[0];
    let (foreground, seen) = match recipient::of_pane(tmux, reports, pane)
        .and_then(|to| recipient::check(tmux, pane, &to, reports))
    {
        Ok(seen) => (Ok(()), Some(seen)),
        Err(r) => (Err(r), None),
    };
    let typing = seen
        .as_ref()
        .and_then(|s| someone_typing(tmux, pane, caller, unread(&s.tty)));
    let Some(kind) = report.resolved.agent.as_ref().map(|a| a.kind) else {
        return (
            decide::Facts {
                foreground,
                logs: false,
                logged: None,
                screen: None,
                typing,
            },
            seen,
        );
    };
    let agent = crate::agents::of(kind);
    let transcript = report.resolved.transcript.as_deref();
    let logs = agent.logs_requests() && transcript.is_some();
    let logged = transcript
        .filter(|_| logs)
        .and_then(|t| agent.pending_request(t));
    let screen = screen_dialog(tmux, pane, agent);
    (
        decide::Facts {
            foreground,
            logs,
            logged,
            screen,
            typing,
        },
        seen,
    )
}

/// Whether `pane`'s screen shows a line containing `step` within [`CLOSE_WAIT`].
fn shows(tmux: &Tmux, pane: &str, step: &str) -> bool {
    let end = Instant::now() + CLOSE_WAIT;
    loop {
        let Ok(screen) = tmux.capture(pane, 0) else {
            return false;
        };
        if screen.lines().any(|l| l.contains(step)) {
            return true;
        }
        if Instant::now() >= end {
            return false;
        }
        std::thread::sleep(POLL);
    }
}

/// Whether the dialog answered leaves the screen within [`CLOSE_WAIT`].
fn dialog_closes(
    tmux: &Tmux,
    pane: &str,
    kind: crate::events::AgentKind,
    before: &decide::Facts,
) -> bool {
    let was = before
        .screen
        .as_ref()
        .map(|d| d.request.fingerprint.clone());
    let agent = crate::agents::of(kind);
    let end = Instant::now() + CLOSE_WAIT;
    while Instant::now() < end {
        std::thread::sleep(POLL);
        let Ok(screen) = tmux.capture(pane, 0) else {
            return false;
        };
        if agent.on_screen(&screen).map(|d| d.request.fingerprint) != was {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::unread;

    #[test]
    fn input_waiting_in_a_terminal_is_counted_without_being_read() {
        // SAFETY: plain libc calls on a pty this test opens and closes; the buffer outlives
        // the call that fills it.
        let (master, slave) = unsafe {
            let master = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY);
            assert!(master >= 0, "no pty");
            assert_eq!(libc::grantpt(master), 0);
            assert_eq!(libc::unlockpt(master), 0);
            let mut buf = [0 as libc::c_char; 64];
            assert_eq!(libc::ptsname_r(master, buf.as_mut_ptr(), buf.len()), 0);
            let name = std::ffi::CStr::from_ptr(buf.as_ptr());
            (master, name.to_string_lossy().into_owned())
        };
        // Someone else holds the terminal open, as the agent in a pane does.
        let held = std::fs::File::open(&slave).expect("open the terminal");
        assert_eq!(unread(&slave), 0);
        // SAFETY: writes two bytes from a live buffer to the pty's master.
        let wrote = unsafe { libc::write(master, b"y\n".as_ptr().cast(), 2) };
        assert_eq!(wrote, 2);
        let mut n = 0;
        for _ in 0..100 {
            n = unread(&slave);
            if n > 0 {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert_eq!(n, 2);
        // Asking again took nothing: it is still there for the program in it.
        assert_eq!(unread(&slave), 2);
        // What cannot be opened, or is no device, has nothing waiting.
        assert_eq!(unread("/dev/pts/does-not-exist"), 0);
        assert_eq!(unread("relative/tty"), 0);
        drop(held);
        // SAFETY: closes the master this test opened.
        unsafe { libc::close(master) };
    }
}
