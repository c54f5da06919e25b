//! The evidence beside a pane's transcript (docs/design.md#evidence-order): hooks, the
//! session record, and the screen when it can change the answer.

use std::path::Path;

use super::screens::Screens;
use super::PaneReport;
use crate::events::Time;
use crate::evidence::{self, HookEvidence, PaneEvidence, RecordStatus};
use crate::state::Source;
use crate::state::Windows;
use crate::tmux::{Pane, Tmux};

/// One pane's report on its way to its evidence: what was read before the screen.
struct Gathered {
    report: PaneReport,
    hook: Option<HookEvidence>,
    record: Option<RecordStatus>,
    /// The screen can change the answer.
    wants_screen: bool,
    /// Agents retry a failed request (429, 5xx) with little or nothing of it in their logs: a
    /// quiet open turn is worth a look at the screen (docs/design.md#evidence-order).
    quiet_turn: bool,
}

/// Folds hook, session-record and pane evidence onto a transcript report
/// (docs/design.md#evidence-order). The pane is captured only when its screen can change the
/// answer: a pending tool call (a permission dialog may be up), a wait to confirm, or no
/// transcript at all.
pub fn with_evidence(report: PaneReport, tmux: &Tmux, state_dir: &Path, now: Time) -> PaneReport {
    let g = gather(report, state_dir, now, None);
    let screen = g
        .wants_screen
        .then(|| capture(tmux, &g.report.resolved.pane.pane_id))
        .flatten();
    settle(g, screen, tmux, now)
}

/// [`with_evidence`] for many reports, with every screen that can matter captured (or kept
/// in `screens`) in one tmux call.
pub(super) fn evidence_all(
    reports: Vec<PaneReport>,
    tmux: &Tmux,
    state_dir: &Path,
    now: Time,
    screens: &mut Screens,
) -> Vec<PaneReport> {
    let gathered: Vec<Gathered> = reports
        .into_iter()
        .map(|r| gather(r, state_dir, now, screens.tool_look))
        .collect();
    let wanted: Vec<&Pane> = gathered
        .iter()
        .filter(|g| g.wants_screen)
        .map(|g| &g.report.resolved.pane)
        .collect();
    let mut got = screens.of(tmux, &wanted);
    let mut ready: Vec<(Gathered, Option<String>)> = gathered
        .into_iter()
        .map(|g| {
            let screen = got.remove(&g.report.resolved.pane.pane_id).flatten();
            (g, screen)
        })
        .collect();
    // Settling reads each agent's `/proc/PID/stat` (and may ask tmux): many panes settle
    // on two threads.
    let settle_all = |part: Vec<(Gathered, Option<String>)>| -> Vec<PaneReport> {
        part.into_iter()
            .map(|(g, screen)| settle(g, screen, tmux, now))
            .collect()
    };
    if ready.len() < SETTLE_APART {
        return settle_all(ready);
    }
    let second = ready.split_off(ready.len() / 2);
    std::thread::scope(|s| {
        let other = s.spawn(|| settle_all(second));
        let mut out = settle_all(ready);
        match other.join() {
            Ok(more) => out.extend(more),
            // As if settled here: a panic is this scan's.
            Err(panic) => std::panic::resume_unwind(panic),
        }
        out
    })
}

/// From this many panes on, settling is shared by two threads.
const SETTLE_APART: usize = 16;

/// When the screen of `status`'s pending tool call is to be looked at, `look` after the
/// call's last write: `Some` while that is still to come. A call answered sooner (most are:
/// reads, searches, allowed commands) asked nobody, so a long-running caller looking at its
/// screen only then captures no screen per tool call of a busy agent; a permission dialog
/// stays up, and is seen then.
pub(super) fn tool_look_due(
    status: &crate::state::Status,
    now: Time,
    look: chrono::Duration,
) -> Option<Time> {
    let due = status.last_activity? + look;
    (pending_tool(status) && now < due).then_some(due)
}

/// The turn is open on a tool call (a permission dialog may be up).
pub(super) fn pending_tool(status: &crate::state::Status) -> bool {
    status.turn_open
        && status
            .reason
            .as_deref()
            .is_some_and(|r| r.starts_with("tool"))
}

fn gather(
    report: PaneReport,
    state_dir: &Path,
    now: Time,
    tool_look: Option<chrono::Duration>,
) -> Gathered {
    let resolved = &report.resolved;
    let status = &report.status;
    let hook = resolved
        .transcript
        .as_deref()
        .and_then(|t| evidence::hook::load_for_transcript(state_dir, t));
    let record = resolved
        .record
        .as_ref()
        .and_then(RecordStatus::from_session_record);
    let pending_tool = pending_tool(status)
        && !tool_look.is_some_and(|look| tool_look_due(status, now, look).is_some());
    let waiting_elsewhere = hook
        .as_ref()
        .and_then(|h| h.latest_decisive())
        .is_some_and(|h| h.kind == evidence::HookKind::PermissionPrompt)
        || record
            .as_ref()
            .is_some_and(|r| r.state == evidence::RecordState::Waiting);
    let no_transcript = report.source == Source::None;
    let kind = resolved.agent.as_ref().map(|a| a.kind);
    let quiet_turn = status.turn_open
        && kind.is_some_and(crate::agents::shows_retries)
        && crate::state::age(now, status.last_activity) >= crate::agents::retry::RETRY_LOOK;
    let agent_asks =
        kind.is_some_and(|k| crate::agents::of(k).wants_screen(status, &resolved.pane.title, now));
    Gathered {
        wants_screen: pending_tool
            || waiting_elsewhere
            || no_transcript
            || quiet_turn
            || agent_asks,
        hook,
        record,
        quiet_turn,
        report,
    }
}

fn settle(g: Gathered, pane: Option<String>, tmux: &Tmux, now: Time) -> PaneReport {
    let Gathered {
        report:
            PaneReport {
                resolved,
                status,
                source: _,
                usage,
            },
        hook,
        record,
        quiet_turn,
        ..
    } = g;
    let pane_evidence = pane
        .as_deref()
        .map(|text| evidence::detect_prompt(text).unwrap_or(PaneEvidence::NoPrompt));
    let (mut status, mut source) = evidence::reconcile(
        &status,
        hook.as_ref(),
        record.as_ref(),
        pane_evidence.as_ref(),
        now,
        &Windows::default(),
    );
    if quiet_turn && status.turn_open && status.state != crate::state::State::Waiting {
        let on_screen = resolved.agent.as_ref().and_then(|a| {
            pane.as_deref()
                .and_then(|screen| crate::agents::retrying(a.kind, screen))
        });
        // Else what the agent records beside its log, since the turn's deciding prompt.
        let aside = || {
            let a = resolved.agent.as_ref()?;
            crate::agents::of(a.kind).retrying_aside(a.pid, a.root.as_deref()?, status.at?)
        };
        if let Some(retry) = on_screen {
            retry.mark(&mut status, now);
            source = Source::Pane;
        } else if let Some(retry) = aside() {
            retry.mark(&mut status, now);
            source = Source::Transcript;
        }
    }
    if let Some(agent) = resolved.agent.as_ref().map(|a| crate::agents::of(a.kind)) {
        // The title (from the scan's one `list-panes`) and, when it asks, the screen.
        let id = resolved.pane.pane_id.as_str();
        (status, source) = agent.refine(
            status,
            source,
            Some(resolved.pane.title.as_str()),
            &mut || pane.clone().or_else(|| capture(tmux, id)),
            now,
            &Windows::default(),
        );
    }
    if source == Source::None {
        if let Some(text) = pane.as_deref() {
            // No log to read: the screen is all there is (marked `source: pane`).
            let retry = resolved
                .agent
                .as_ref()
                .and_then(|a| crate::agents::retrying(a.kind, text));
            if let Some(retry) = retry {
                // A retry loop (its footer says busy too): the failure is what matters,
                // with where the retries stand, as when a log is read.
                retry.mark(&mut status, now);
                status.turn_open = true;
            } else if busy_footer(text) {
                status.state = crate::state::State::Working;
                status.turn_open = true;
            }
            source = Source::Pane;
        }
    }
    if status.state == crate::state::State::Waiting {
        status.request = resolved.agent.as_ref().and_then(|a| {
            // An agent whose wait was read from its title has not had its screen looked at.
            let screen = pane
                .clone()
                .or_else(|| capture(tmux, &resolved.pane.pane_id));
            crate::agents::request_of(a.kind, resolved.transcript.as_deref(), screen.as_deref())
        });
    }
    // Stopped by Ctrl-Z: whatever its log says, it does nothing and takes no input until the
    // person brings it back (docs/design.md#delivery).
    if resolved
        .agent
        .as_ref()
        .and_then(|a| crate::proctree::procfs::stat(a.pid))
        .is_some_and(|s| s.stopped())
    {
        status.reason = Some(SUSPENDED.to_string());
    }
    PaneReport {
        resolved,
        status,
        source,
        usage,
    }
}

/// The reason shown for an agent stopped by Ctrl-Z.
pub const SUSPENDED: &str = "suspended (Ctrl-Z)";

/// The visible part of a pane, or `None` when it vanished.
fn capture(tmux: &Tmux, pane_id: &str) -> Option<String> {
    tmux.cmd(&["capture-pane", "-p", "-J", "-t", pane_id]).ok()
}

/// Claude Code, Codex and opencode show "esc (to) interrupt" while a turn runs.
fn busy_footer(text: &str) -> bool {
    let clean = strip_ansi_escapes::strip_str(text);
    clean
        .lines()
        .rev()
        .filter(|l| !l.trim().is_empty())
        .take(8)
        .any(|l| {
            let l = l.to_ascii_lowercase();
            // opencode 1.18 writes "esc interrupt" (then "esc again to interrupt").
            l.contains("esc to interrupt") || l.contains("esc interrupt")
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::testkit;
    use crate::state::{State, Status};

    #[test]
    fn a_retry_read_from_the_screen_alone_says_where_the_retries_stand() {
        // Claude Code 2.1.197 retrying a prompt whose transcript is not written yet: the
        // screen is all there is, and it holds the attempt, the limit and the countdown.
        let screen = include_str!("../../fixtures/real-clients/claude-2.1.197/retry-screen.txt");
        let mut report = testkit::report(1, 1, State::Idle, 0);
        std::sync::Arc::make_mut(&mut report.resolved).transcript = None;
        report.status = Status::idle();
        report.source = Source::None;
        let gathered = Gathered {
            report,
            hook: None,
            record: None,
            wants_screen: true,
            quiet_turn: false,
        };
        // Never asked: the screen is given.
        let tmux = Tmux::new(crate::tmux::Socket::Path("/nonexistent/agentpane".into()));
        let now = testkit::t(0);
        let r = settle(gathered, Some(screen.to_string()), &tmux, now);
        assert_eq!((r.status.state, r.source), (State::Attention, Source::Pane));
        assert!(r.status.turn_open);
        let retry = r.status.retry.expect("where the retries stand");
        assert_eq!((retry.attempt, retry.limit), (Some(6), Some(10)));
        assert_eq!(
            r.status.resets_at,
            Some(now + chrono::Duration::seconds(16))
        );
        assert_eq!(retry.next_at, r.status.resets_at);
    }
}
