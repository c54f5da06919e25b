//! Putting text into a pane (docs/design.md#delivery): a named buffer loaded from stdin, a
//! bracketed paste, a check that the text arrived, then Enter as its own key press after a
//! per-agent delay. Long text is never typed key by key. The paste and every Enter go to
//! nothing but the recorded [`Recipient`] while it has the pane's foreground: each is
//! preceded by [`recipient::check`] and made conditional in tmux itself. Also the watcher's
//! side: [`deliver_queued`].

use std::collections::HashSet;
use std::time::{Duration, Instant};

use chrono::Utc;
use serde::Serialize;

use super::queue::{disposition, Damaged, Disposition, Outcome, Queued, Store};
use super::recipient::{self, Recipient, Refusal};
use crate::events::AgentKind;
use crate::scan::PaneReport;
use crate::state::Source;
use crate::state::State;
use crate::tmux::{Tmux, TmuxError};

/// Lines of scrollback looked at when checking that a paste arrived.
const VERIFY_LINES: u32 = 200;
/// The pasted tail must show within this many non-empty lines of the bottom.
const NEAR_BOTTOM: usize = 15;
/// How often the pane is captured while waiting for the paste.
const VERIFY_POLL: Duration = Duration::from_millis(25);
/// Queued messages older than this are held for the human instead of delivered.
pub const QUEUE_MAX_AGE: chrono::Duration = chrono::Duration::hours(24);

/// Placeholders agents show instead of a long paste (Claude Code, Codex; opencode's
/// `[Pasted ~3 lines]`; Gemini CLI's `[Pasted Text: 3 lines]`; Copilot CLI's
/// `[Paste #1 - 20 lines]`; pi's `[paste #1 +20 lines]`).
const PASTE_PLACEHOLDERS: [&str; 6] = [
    "[Pasted text",
    "[Pasted Content",
    "[Pasted ~",
    "[Pasted Text",
    "[Paste #",
    "[paste #",
];

/// How long after Enter a destination that may drop it is looked at again.
const RESUBMIT_CHECK: Duration = Duration::from_millis(400);

/// How long a delivery waits for another one into the same pane.
const PANE_LOCK_WAIT: Duration = Duration::from_secs(30);

/// True when a pane in `state` may receive text: its agent is not inside a turn. `waiting`
/// (a permission dialog) and `stalled` are inside a turn; pasting there would answer a dialog.
/// `none` (no agent) never receives anything.
pub fn is_free(state: State) -> bool {
    matches!(state, State::YourTurn | State::Idle | State::Attention)
}

/// The state of `pane_id` in a scan; a pane that is not in the scan runs no agent.
pub fn state_of(reports: &[PaneReport], pane_id: &str) -> (State, Option<AgentKind>) {
    reports
        .iter()
        .find(|r| r.resolved.pane.pane_id == pane_id)
        .map(|r| (r.status.state, r.resolved.agent.as_ref().map(|a| a.kind)))
        .unwrap_or((State::None, None))
}

/// The state of `pane_id`, double-checked on screen when an agent runs there without any
/// transcript evidence: a visible "esc to interrupt" means a turn is running.
pub fn checked_state_of(
    tmux: &Tmux,
    reports: &[PaneReport],
    pane_id: &str,
) -> (State, Option<AgentKind>) {
    let (state, agent) = state_of(reports, pane_id);
    let blind = reports
        .iter()
        .find(|r| r.resolved.pane.pane_id == pane_id)
        .is_some_and(|r| r.resolved.agent.is_some() && r.source == Source::None);
    if blind && is_free(state) {
        if let Ok(screen) = tmux.capture(pane_id, 0) {
            if screen_busy(&screen) {
                return (State::Working, agent);
            }
        }
    }
    (state, agent)
}

/// Whether `to` can take text in `dst` now: `Ok(None)` free, `Ok(Some(why))` busy (inside a
/// turn, or something else has its terminal for now), `Err` gone for good.
pub fn readiness(
    tmux: &Tmux,
    reports: &[PaneReport],
    dst: &str,
    to: &Recipient,
) -> Result<Option<String>, Refusal> {
    match recipient::check(tmux, dst, to, reports) {
        Err(r) if r.is_final() => return Err(r),
        Err(r) => return Ok(Some(r.to_string())),
        Ok(_) => {}
    }
    let (state, _) = checked_state_of(tmux, reports, dst);
    Ok((!is_free(state)).then(|| state.to_string()))
}

/// True when the bottom of a screen shows an agent's running-turn status line.
pub fn screen_busy(screen: &str) -> bool {
    let lines: Vec<&str> = screen.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(NEAR_BOTTOM)..]
        .iter()
        .any(|l| {
            let l = l.to_ascii_lowercase();
            l.contains("esc to interrupt")
                || l.contains("ctrl+c to interrupt")
                || l.contains("esc interrupt")
        })
}

/// Pause between the paste and Enter, so the agent's input box has taken the paste as a
/// paste. `AGENTPANE_ENTER_DELAY_MS` overrides every default.
pub fn enter_delay(agent: Option<AgentKind>) -> Duration {
    if let Some(ms) = std::env::var("AGENTPANE_ENTER_DELAY_MS")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
    {
        return Duration::from_millis(ms.min(10_000));
    }
    agent.map_or(Duration::ZERO, |a| crate::agents::of(a).enter_delay())
}

/// How one paste is done.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    pub submit: bool,
    pub enter_delay: Duration,
    pub verify_timeout: Duration,
    /// Check that Enter submitted, and press it again while the input box still holds the
    /// text (an agent may take an Enter its busy event loop handles right after the paste as
    /// a newline, `agents::Agent::resubmits`; an Enter on an empty box does nothing, so a
    /// repeat cannot send twice).
    pub resubmit: bool,
}

impl Options {
    /// Defaults for a destination running `agent` (3 s to see the paste arrive).
    pub fn for_agent(agent: Option<AgentKind>, submit: bool) -> Options {
        Options {
            submit,
            enter_delay: enter_delay(agent),
            verify_timeout: Duration::from_secs(3),
            resubmit: agent.is_some_and(|a| crate::agents::of(a).resubmits()),
        }
    }
}

/// What a successful paste did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Pasted {
    pub submitted: bool,
    /// From the start of the paste to Enter (or to the verified paste without Enter).
    pub elapsed_ms: u64,
}

/// Why a paste did not complete.
#[derive(Debug, thiserror::Error)]
pub enum DeliverError {
    /// Nothing reached the pane: safe to try again.
    #[error("nothing was pasted: {0}")]
    NotPasted(TmuxError),
    /// The paste was sent, then tmux failed: never repeated.
    #[error("pasted, then: {0}")]
    AfterPaste(TmuxError),
    #[error("the text did not appear in pane {pane} within {waited:?}; Enter was not pressed")]
    Unverified { pane: String, waited: Duration },
    /// The recipient was not there to receive: nothing was pasted.
    #[error("not delivered: {0}")]
    Refused(Refusal),
    /// Pasted into the recipient, which then left before Enter: Enter was not pressed.
    #[error("pasted, but Enter was not pressed: {0}")]
    NotSubmitted(Refusal),
}

/// Pastes `text` (already sanitised) into `pane` through the buffer `agentpane-<id>`, checks
/// that it arrived, then presses Enter when `opts.submit` — each write only while `to` has the
/// pane's foreground (`reports`: a recent scan, for the session check).
pub fn paste(
    tmux: &Tmux,
    pane: &str,
    id: &str,
    text: &str,
    opts: Options,
    to: &Recipient,
    reports: &[PaneReport],
) -> Result<Pasted, DeliverError> {
    use DeliverError::{AfterPaste, NotPasted};
    let started = Instant::now();
    let tail = tail_marker(text);
    let mut screen = tmux.capture(pane, VERIFY_LINES).map_err(NotPasted)?;
    if let Some((key, times)) = crate::agents::of(to.kind).clear_input(&screen) {
        // Text the agent put back in its box (a cancelled prompt) would be sent with ours.
        clear_input(tmux, pane, key, times, to, reports)?;
        screen = tmux.capture(pane, VERIFY_LINES).map_err(NotPasted)?;
    }
    let before = Seen::of(&screen, &tail);
    let buffer = format!("agentpane-{id}");
    tmux.load_buffer(&buffer, text.as_bytes())
        .map_err(NotPasted)?;
    // The last look before the paste; tmux holds the pane to it in the paste command itself.
    let pasted = recipient::check(tmux, pane, to, reports)
        .map_err(DeliverError::Refused)
        .and_then(|seen| match tmux.paste_buffer_if(&buffer, pane, &seen) {
            Ok(true) => Ok(()),
            Ok(false) => Err(DeliverError::Refused(Refusal::Away(format!(
                "{pane}'s foreground changed just before the paste"
            )))),
            Err(e) => Err(NotPasted(e)),
        });
    if let Err(e) = pasted {
        tmux.delete_buffer(&buffer);
        return Err(e);
    }
    loop {
        let now = Seen::of(
            &tmux.capture(pane, VERIFY_LINES).map_err(AfterPaste)?,
            &tail,
        );
        if now.arrived_since(&before) {
            break;
        }
        if started.elapsed() >= opts.verify_timeout {
            return Err(DeliverError::Unverified {
                pane: pane.to_string(),
                waited: opts.verify_timeout,
            });
        }
        std::thread::sleep(VERIFY_POLL);
    }
    if opts.submit {
        std::thread::sleep(opts.enter_delay);
        enter(tmux, pane, to, reports)?;
        for _ in 0..3 {
            if !opts.resubmit {
                break;
            }
            std::thread::sleep(RESUBMIT_CHECK);
            let screen = tmux.capture(pane, VERIFY_LINES).map_err(AfterPaste)?;
            if !crate::agents::of(to.kind).input_pending(&screen) {
                break;
            }
            enter(tmux, pane, to, reports)?;
        }
    }
    Ok(Pasted {
        submitted: opts.submit,
        elapsed_ms: started.elapsed().as_millis() as u64,
    })
}

/// Empties `to`'s input box with `times` presses of `key`, only into `to` while it has the
/// pane's foreground (the checks of a paste); waits until the screen shows it took them.
fn clear_input(
    tmux: &Tmux,
    pane: &str,
    key: &str,
    times: usize,
    to: &Recipient,
    reports: &[PaneReport],
) -> Result<(), DeliverError> {
    let seen = recipient::check(tmux, pane, to, reports).map_err(DeliverError::Refused)?;
    match tmux.send_keys_if(pane, &seen, key, times) {
        Ok(true) => {}
        Ok(false) => {
            return Err(DeliverError::Refused(Refusal::Away(format!(
                "{pane}'s foreground changed just before its input box was cleared"
            ))))
        }
        Err(e) => return Err(DeliverError::NotPasted(e)),
    }
    let agent = crate::agents::of(to.kind);
    let until = Instant::now() + CLEAR_WAIT;
    while Instant::now() < until {
        std::thread::sleep(VERIFY_POLL);
        let screen = tmux
            .capture(pane, VERIFY_LINES)
            .map_err(DeliverError::NotPasted)?;
        if agent.clear_input(&screen).is_none() {
            break;
        }
    }
    Ok(())
}

/// How long delivery waits to see an input box it cleared empty.
const CLEAR_WAIT: Duration = Duration::from_millis(500);

/// One Enter, only into `to` while it has the pane's foreground.
fn enter(
    tmux: &Tmux,
    pane: &str,
    to: &Recipient,
    reports: &[PaneReport],
) -> Result<(), DeliverError> {
    let seen = recipient::check(tmux, pane, to, reports).map_err(DeliverError::NotSubmitted)?;
    match tmux.send_enter_if(pane, &seen) {
        Ok(true) => Ok(()),
        Ok(false) => Err(DeliverError::NotSubmitted(Refusal::Away(format!(
            "{pane}'s foreground changed just before Enter"
        )))),
        Err(e) => Err(DeliverError::AfterPaste(e)),
    }
}

/// `text` without its whitespace.
fn squash(text: &str) -> String {
    text.chars().filter(|c| !c.is_whitespace()).collect()
}

/// A distinctive end of the text as a terminal shows it: the last non-empty line, after its
/// last tab (tabs become spaces on screen), at most 24 characters.
pub fn tail_marker(text: &str) -> String {
    let line = text
        .lines()
        .rev()
        .map(str::trim_end)
        .find(|l| !l.trim().is_empty())
        .unwrap_or("");
    let after_tab = line.rsplit('\t').next().unwrap_or(line).trim();
    let chars: Vec<char> = after_tab.chars().collect();
    chars[chars.len().saturating_sub(24)..].iter().collect()
}

/// What a capture shows of a paste.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Seen {
    tails: usize,
    placeholders: usize,
    near_bottom: bool,
}

impl Seen {
    /// The tail is looked for without whitespace: an input box that wraps the text itself
    /// (Qwen Code's) breaks a line inside it, with an indent, where the text had a space.
    fn of(capture: &str, tail: &str) -> Seen {
        let count = |needle: &str| {
            if needle.is_empty() {
                0
            } else {
                capture.matches(needle).count()
            }
        };
        let tail = squash(tail);
        let lines: Vec<&str> = capture.lines().filter(|l| !l.trim().is_empty()).collect();
        let bottom = squash(&lines[lines.len().saturating_sub(NEAR_BOTTOM)..].concat());
        Seen {
            tails: if tail.is_empty() {
                0
            } else {
                squash(capture).matches(&tail).count()
            },
            placeholders: PASTE_PLACEHOLDERS.iter().map(|p| count(p)).sum(),
            near_bottom: !tail.is_empty() && bottom.contains(&tail),
        }
    }

    fn arrived_since(&self, before: &Seen) -> bool {
        self.tails > before.tails
            || self.placeholders > before.placeholders
            || (self.near_bottom && !before.near_bottom)
    }
}

/// One queued message the watcher handled.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Delivered {
    pub id: String,
    pub src: String,
    pub dst: String,
    pub bytes: usize,
    pub outcome: Outcome,
    pub detail: Option<String>,
}

/// One pass over the queue.
#[derive(Debug, Default)]
pub struct Pass {
    pub delivered: Vec<Delivered>,
    /// Journal lines that could not be read, when the pass read the journal (skipped).
    pub damaged: Vec<Damaged>,
}

impl Pass {
    fn failed(detail: String) -> Pass {
        Pass {
            delivered: vec![failure(detail)],
            damaged: Vec::new(),
        }
    }
}

/// The watcher's step: delivers queued messages whose destination is free in `reports` (at
/// most one per destination per call), using the default state dir. Errors are reported as
/// `Failed` entries, never raised: a watcher keeps going.
pub fn deliver_queued(tmux: &Tmux, reports: &[PaneReport]) -> Pass {
    match Store::open_default() {
        Ok(store) => deliver_pass(&store, tmux, reports),
        Err(e) => Pass::failed(format!("{e:#}")),
    }
}

/// [`deliver_queued`] on an explicit store, what was delivered.
pub fn deliver_queued_in(store: &Store, tmux: &Tmux, reports: &[PaneReport]) -> Vec<Delivered> {
    deliver_pass(store, tmux, reports).delivered
}

/// [`deliver_queued`] on an explicit store.
pub fn deliver_pass(store: &Store, tmux: &Tmux, reports: &[PaneReport]) -> Pass {
    // One deliverer at a time: a message another process is pasting right now must not look
    // like a crash mid-delivery, nor be pasted twice.
    let _deliverer = match store.deliverer_lock() {
        Ok(Some(lock)) => lock,
        Ok(None) => return Pass::default(),
        Err(e) => return Pass::failed(format!("{e:#}")),
    };
    let pending = match store.pending() {
        Ok(p) if p.is_empty() => return Pass::default(),
        Ok(p) => p,
        Err(e) => return Pass::failed(format!("{e:#}")),
    };
    let server = match tmux.socket_path() {
        Ok(s) => s,
        Err(e) => return Pass::failed(e.to_string()),
    };
    let alive: HashSet<String> = match tmux.list_panes() {
        Ok(panes) => panes.into_iter().map(|p| p.pane_id).collect(),
        Err(e) => return Pass::failed(e.to_string()),
    };
    // An unreadable journal could hide a finished or started paste: nothing is sent.
    let journal = match store.read_journal() {
        Ok(j) => j,
        Err(e) => return Pass::failed(format!("{e:#}")),
    };
    let outcomes = journal.last_outcomes();
    let mut served: HashSet<String> = HashSet::new();
    let mut out = Vec::new();
    for msg in pending.iter().filter(|m| m.server == server) {
        let done = |outcome: Outcome, detail: Option<String>| {
            let _ = store.record(msg, outcome, detail.clone());
            Delivered::of(msg, outcome, detail)
        };
        match disposition(outcomes.get(&msg.id).copied()) {
            Disposition::AlreadyDone => {
                let _ = store.remove(&msg.id);
                continue;
            }
            Disposition::Uncertain => {
                out.push(done(
                    Outcome::Uncertain,
                    Some("a paste was started before a crash; not repeated".into()),
                ));
                let _ = store.hold(&msg.id);
                continue;
            }
            Disposition::Deliver => {}
        }
        if !alive.contains(&msg.dst) {
            out.push(done(Outcome::DstGone, None));
            let _ = store.hold(&msg.id);
            continue;
        }
        if Utc::now() - msg.created > QUEUE_MAX_AGE {
            out.push(done(Outcome::Expired, None));
            let _ = store.hold(&msg.id);
            continue;
        }
        if served.contains(&msg.dst) {
            continue;
        }
        // The agent it was queued for must still be the one there, whether or not it is busy:
        // one that went away is reported now, not when the pane next looks free.
        let Some(to) = &msg.recipient else {
            out.push(done(Outcome::Undeliverable, Some(NO_RECIPIENT.into())));
            let _ = store.hold(&msg.id);
            continue;
        };
        match recipient::check(tmux, &msg.dst, to, reports) {
            Err(r) if r.is_final() => {
                out.push(done(Outcome::Undeliverable, Some(r.to_string())));
                let _ = store.hold(&msg.id);
                continue;
            }
            Err(_) => continue,
            Ok(_) => {}
        }
        let (state, _) = checked_state_of(tmux, reports, &msg.dst);
        if !is_free(state) {
            continue;
        }
        served.insert(msg.dst.clone());
        out.push(deliver_one(store, tmux, msg, reports));
    }
    Pass {
        delivered: out,
        damaged: journal.damaged,
    }
}

/// Why a queued message without a recorded recipient is held.
const NO_RECIPIENT: &str =
    "queued without the agent it was meant for (an older agentpane); re-issue it with `agentpane route-queue --requeue ID`";

/// Delivers one message to its recorded recipient with the journal around it: `pasting`
/// first (fsynced), then the outcome. The queue file goes once a paste was sent (delivered or
/// not confirmed: never repeated); when nothing reached the pane it stays queued for the next
/// try, unless its recipient is gone for good: then it is held as `undeliverable`.
pub fn deliver_one(store: &Store, tmux: &Tmux, msg: &Queued, reports: &[PaneReport]) -> Delivered {
    let report = |outcome: Outcome, detail: Option<String>| {
        let _ = store.record(msg, outcome, detail.clone());
        Delivered::of(msg, outcome, detail)
    };
    let Some(to) = &msg.recipient else {
        let _ = store.hold(&msg.id);
        return report(Outcome::Undeliverable, Some(NO_RECIPIENT.into()));
    };
    // One delivery at a time per pane: another route's paste and Enter must not interleave.
    let _pane_lock = match store.pane_lock(&msg.server, &msg.dst, PANE_LOCK_WAIT) {
        Ok(Some(lock)) => lock,
        Ok(None) => {
            return Delivered::of(
                msg,
                Outcome::Failed,
                Some(format!("{} stayed busy with another delivery", msg.dst)),
            )
        }
        Err(e) => return Delivered::of(msg, Outcome::Failed, Some(format!("{e:#}"))),
    };
    if let Err(e) = store.record(msg, Outcome::Pasting, None) {
        // Without the journal line a crash could repeat the paste: do not paste.
        return Delivered::of(msg, Outcome::Failed, Some(format!("{e:#}")));
    }
    let opts = Options::for_agent(Some(to.kind), msg.submit);
    let delivered = match paste(tmux, &msg.dst, &msg.id, &msg.text, opts, to, reports) {
        Ok(p) => report(Outcome::Delivered, Some(format!("{} ms", p.elapsed_ms))),
        Err(DeliverError::Refused(r)) if r.is_final() => {
            let _ = store.hold(&msg.id);
            return report(Outcome::Undeliverable, Some(r.to_string()));
        }
        Err(e @ (DeliverError::NotPasted(_) | DeliverError::Refused(_))) => {
            return report(Outcome::Failed, Some(e.to_string()))
        }
        Err(e) => report(Outcome::Unverified, Some(e.to_string())),
    };
    let _ = store.remove(&msg.id);
    delivered
}

impl Delivered {
    /// What to tell the person about a message held for them (not delivered, kept with its
    /// reason); `None` for any other outcome.
    pub fn held_notice(&self) -> Option<String> {
        let what = match self.outcome {
            Outcome::Undeliverable => "not delivered",
            Outcome::DstGone => "not delivered: the pane is gone",
            Outcome::Expired => "not delivered: older than 24 h",
            Outcome::Uncertain => "held: a paste may have started before a crash",
            _ => return None,
        };
        Some(format!(
            "agentpane: route {} → {} {what}{}; kept — `agentpane route-queue` lists it",
            self.src,
            self.dst,
            self.detail
                .as_deref()
                .filter(|_| self.outcome == Outcome::Undeliverable)
                .map(|x| format!(": {x}"))
                .unwrap_or_default()
        ))
    }

    fn of(msg: &Queued, outcome: Outcome, detail: Option<String>) -> Delivered {
        Delivered {
            id: msg.id.clone(),
            src: msg.src.clone(),
            dst: msg.dst.clone(),
            bytes: msg.text.len(),
            outcome,
            detail,
        }
    }
}

/// A failure before any message was looked at.
fn failure(detail: String) -> Delivered {
    Delivered {
        id: String::new(),
        src: String::new(),
        dst: String::new(),
        bytes: 0,
        outcome: Outcome::Failed,
        detail: Some(detail),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tmux::Runner;
    use std::sync::{Arc, Mutex};

    /// A tmux that records every call; the pane shows the pasted text once it was pasted.
    #[derive(Clone, Default)]
    struct FakeTmux {
        calls: Arc<Mutex<Vec<String>>>,
        pasted: Arc<Mutex<Option<String>>>,
        fail: Option<&'static str>,
    }

    impl Runner for FakeTmux {
        fn run(&self, args: &[String], stdin: Option<&[u8]>) -> Result<Vec<u8>, TmuxError> {
            self.calls.lock().unwrap().push(args.join(" "));
            if self.fail.is_some_and(|f| args[0] == f) {
                return Err(TmuxError::Command(format!("{} failed", args[0])));
            }
            match args[0].as_str() {
                "load-buffer" => {
                    *self.pasted.lock().unwrap() =
                        stdin.map(|b| String::from_utf8_lossy(b).into_owned());
                    Ok(Vec::new())
                }
                "display-message" => Ok(b"4242\x1f/dev/pts/99\x1f0\x1fclaude\n".to_vec()),
                "capture-pane" => {
                    let calls = self.calls.lock().unwrap();
                    let pasted = calls.iter().any(|c| c.starts_with("paste-buffer"));
                    let text = if pasted {
                        self.pasted.lock().unwrap().clone()
                    } else {
                        None
                    };
                    Ok(format!("$ cat\n{}\n", text.unwrap_or_default()).into_bytes())
                }
                _ => Ok(Vec::new()),
            }
        }
    }

    fn msg() -> Queued {
        Queued {
            id: "20260101-000000-000-1-0".into(),
            created: Utc::now(),
            server: "/s".into(),
            src: "%1".into(),
            dst: "%2".into(),
            text: "line one\nthe end".into(),
            submit: true,
            recipient: Some(Recipient {
                kind: AgentKind::Codex,
                pid: std::process::id(),
                start_ticks: 0,
                session: None,
            }),
        }
    }

    /// A pid no process has now.
    fn dead_pid() -> u32 {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        pid
    }

    #[test]
    fn a_message_for_an_agent_that_exited_is_held_and_nothing_is_pasted() {
        let fake = FakeTmux::default();
        let tmux = Tmux::with_runner(Box::new(fake.clone()));
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let m = Queued {
            recipient: Some(Recipient {
                kind: AgentKind::Claude,
                pid: dead_pid(),
                start_ticks: 1,
                session: None,
            }),
            ..msg()
        };
        store.enqueue(&m).unwrap();
        let d = deliver_one(&store, &tmux, &m, &[]);
        assert_eq!(d.outcome, Outcome::Undeliverable, "{d:?}");
        assert!(d.detail.as_deref().unwrap().contains("has exited"), "{d:?}");
        let calls = fake.calls.lock().unwrap().clone();
        let id = &m.id;
        assert_eq!(calls[0], "capture-pane -p -J -S -200 -t %2");
        assert_eq!(calls[1], format!("load-buffer -b agentpane-{id} -"));
        assert!(
            calls[2].starts_with("display-message -p -t %2 "),
            "{calls:?}"
        );
        assert_eq!(calls[3], format!("delete-buffer -b agentpane-{id}"));
        assert_eq!(calls.len(), 4, "no paste, no Enter: {calls:?}");
        assert!(
            calls.iter().all(|c| !c.contains("the end")),
            "text only on stdin"
        );
        assert!(store.pending().unwrap().is_empty(), "held, not queued");
        let held = store.held().unwrap();
        assert_eq!(held.len(), 1);
        assert_eq!(held[0].msg.text, m.text, "the text is kept");
        assert_eq!(held[0].outcome, Some(Outcome::Undeliverable));
    }

    #[test]
    fn a_message_without_a_recipient_is_held_untouched() {
        let fake = FakeTmux::default();
        let tmux = Tmux::with_runner(Box::new(fake.clone()));
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let m = Queued {
            recipient: None,
            ..msg()
        };
        store.enqueue(&m).unwrap();
        let d = deliver_one(&store, &tmux, &m, &[]);
        assert_eq!(d.outcome, Outcome::Undeliverable);
        assert!(fake.calls.lock().unwrap().is_empty(), "tmux never called");
        assert_eq!(store.held().unwrap().len(), 1);
        assert!(d.held_notice().unwrap().contains("route-queue"));
    }

    #[test]
    fn a_failure_before_the_paste_keeps_the_message_queued() {
        let fake = FakeTmux {
            fail: Some("load-buffer"),
            ..FakeTmux::default()
        };
        let tmux = Tmux::with_runner(Box::new(fake.clone()));
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let m = msg();
        store.enqueue(&m).unwrap();
        assert_eq!(deliver_one(&store, &tmux, &m, &[]).outcome, Outcome::Failed);
        assert_eq!(store.pending().unwrap().len(), 1, "still queued");
        assert_eq!(
            disposition(store.last_outcomes().unwrap().get(&m.id).copied()),
            Disposition::Deliver
        );
    }

    #[test]
    fn tail_is_the_end_of_the_last_line() {
        assert_eq!(tail_marker("a\nlast line here\n\n  \n"), "last line here");
        assert_eq!(tail_marker("x\tcolumn two"), "column two");
        assert_eq!(
            tail_marker("0123456789abcdefghijklmnopqrstuvwxyz"),
            "cdefghijklmnopqrstuvwxyz"
        );
        assert_eq!(tail_marker("검토해 주세요"), "검토해 주세요");
        assert_eq!(tail_marker(""), "");
    }

    #[test]
    fn arrival_is_a_new_occurrence_or_a_placeholder() {
        let before = Seen::of("$ cat\nold end\n", "the end");
        assert!(!before.arrived_since(&before));
        let after = Seen::of("$ cat\nold end\nthe end\nthe end\n", "the end");
        assert!(after.arrived_since(&before));
        let claude = Seen::of("❯ [Pasted text #1 +40 lines]\n", "zzz");
        assert!(claude.arrived_since(&Seen::of("❯ \n", "zzz")));
        // Gemini CLI 0.61.0 shows a multi-line paste as one placeholder line.
        let gemini = Seen::of(" > [Pasted Text: 8 lines]\n", "zzz");
        assert!(gemini.arrived_since(&Seen::of(" >   Type your message\n", "zzz")));
        // Qwen Code 0.24.4 wraps a long line in its box itself, indenting the rest.
        let tail = tail_marker("… once you start building the project.");
        let wrapped = Seen::of(
            "> … once you start\n  building the project. \u{200B}\n",
            &tail,
        );
        assert!(wrapped.arrived_since(&Seen::of(">   Type your message\n", &tail)));
    }

    #[test]
    fn running_turn_on_screen_is_busy() {
        assert!(screen_busy(
            "⏺ ok\n\n✶ Deliberating… (4s · esc to interrupt)\n───\n❯ \n"
        ));
        assert!(screen_busy("• Working (12s • Esc to interrupt)\n› \n"));
        assert!(!screen_busy("⏺ Done.\n───\n❯ \n  ? for shortcuts\n"));
    }

    #[test]
    fn free_states_exclude_turns_and_dialogs() {
        assert!(is_free(State::YourTurn) && is_free(State::Idle) && is_free(State::Attention));
        assert!(!is_free(State::Working) && !is_free(State::Waiting) && !is_free(State::Stalled));
        assert!(
            !is_free(State::None),
            "a pane without an agent never receives"
        );
    }
}
