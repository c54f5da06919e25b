//! Folding the evidence sources onto one state (docs/design.md#evidence-order), as a pure function.
//!
//! Rules, in order:
//! 1. The pane says the agent exited → `idle` (`exited`).
//! 2. Hook evidence and the live session record count only when they are newer than the
//!    transcript's deciding event (its `at`/`last_activity`): older evidence yields. Between
//!    the two, the newer wins; a tie goes to the hook (stronger source).
//! 3. A close (Stop hook, record `idle`) never hides `attention`, confirms rather than
//!    replaces a transcript that already reads `your-turn` (same turn key, same time: an
//!    `idle_prompt` 60 s later is not a new completion — it is not decisive at all),
//!    never turns a completion that aged to `idle` back into `your-turn`, and waits the
//!    settle window over a log that has no answer yet (the log may be behind the close).
//! 4. The pane refines: a known approval dialog turns a pending tool call into `waiting`;
//!    a pane showing no dialog ends a hook/record permission wait older than the settle window.

use super::hook::{HookEvidence, HookKind, HookRecord};
use super::pane::{PaneEvidence, PromptKind};
use super::record::{RecordState, RecordStatus};
use crate::events::Time;
use crate::state::{age, max_time, Source, State, Status, Windows};

/// One source's opinion about the turn.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Verdict {
    /// Blocked on the human, with the reason.
    Waiting(String),
    /// A turn is running; reason such as `tool: Bash`; `new_turn` when a prompt started it.
    Working {
        reason: Option<String>,
        new_turn: bool,
    },
    /// The turn closed.
    Closed,
    /// The session ended.
    Ended,
}

/// Decides the state of one session from all evidence at `now`. Pure: callers read the
/// files and the pane; this only compares.
pub fn reconcile(
    transcript: &Status,
    hook: Option<&HookEvidence>,
    record: Option<&RecordStatus>,
    pane: Option<&PaneEvidence>,
    now: Time,
    windows: &Windows,
) -> (Status, Source) {
    if pane == Some(&PaneEvidence::Exited) {
        let mut s = transcript.clone();
        s.state = State::Idle;
        s.reason = Some("exited".into());
        s.turn_open = false;
        s.resets_at = None;
        return (s, Source::Pane);
    }

    let deciding = max_time(transcript.at, transcript.last_activity);
    let newer = |t: Time| deciding.map_or(true, |d| t > d);

    let hook_verdict = hook
        .and_then(HookEvidence::latest_decisive)
        .filter(|h| newer(h.at))
        .map(|h| (h.at, hook_verdict(h, transcript)));
    let record_verdict = record
        // Before the first prompt, the record's `waiting` is a start-up dialog (an offer
        // Claude Code 2.1.332 shows once, `waitingFor: "dialog open"`) in front of a user who
        // just opened the session, and its `idle` closes nothing: the session is idle.
        .filter(|r| !no_turn_yet(transcript) || r.state == RecordState::Busy)
        .and_then(|r| Some((r.updated_at?, r)))
        .filter(|(at, _)| newer(*at) && age(now, Some(*at)) <= windows.open_turn)
        .and_then(|(at, r)| Some((at, record_verdict(r, transcript)?)));

    let chosen = match (hook_verdict, record_verdict) {
        (Some(h), Some(r)) if r.0 > h.0 => Some((r, Source::SessionRecord)),
        (Some(h), _) => Some((h, Source::Hook)),
        (None, Some(r)) => Some((r, Source::SessionRecord)),
        (None, None) => None,
    };

    let base_source = if transcript.at.is_some() || transcript.turn_key.is_some() {
        Source::Transcript
    } else {
        Source::None
    };
    let (status, source) = match chosen {
        Some(((at, verdict), source)) => match apply(transcript, verdict, at, now, windows) {
            Some(s) => (s, source),
            None => (transcript.clone(), base_source),
        },
        None => (transcript.clone(), base_source),
    };
    refine_with_pane(status, source, transcript, pane, now, windows)
}

fn hook_verdict(h: &HookRecord, transcript: &Status) -> Verdict {
    match h.kind {
        HookKind::PermissionPrompt => {
            let tool = h
                .tool
                .clone()
                .or_else(|| h.message.as_deref().and_then(tool_from_message));
            Verdict::Waiting(permission_reason(tool, transcript))
        }
        HookKind::Elicitation => Verdict::Waiting("question".into()),
        HookKind::Stop => Verdict::Closed,
        HookKind::SessionEnd => Verdict::Ended,
        HookKind::UserPromptSubmit => Verdict::Working {
            reason: None,
            new_turn: true,
        },
        HookKind::PreToolUse => Verdict::Working {
            reason: h.tool.as_ref().map(|t| format!("tool: {t}")),
            new_turn: false,
        },
        // A finished tool: the turn goes on (the model reads the result).
        HookKind::PostToolUse
        | HookKind::SessionStart
        | HookKind::IdlePrompt
        | HookKind::OtherNotification => Verdict::Working {
            reason: None,
            new_turn: false,
        },
    }
}

fn record_verdict(r: &RecordStatus, transcript: &Status) -> Option<Verdict> {
    Some(match r.state {
        RecordState::Busy => Verdict::Working {
            reason: None,
            new_turn: false,
        },
        RecordState::Idle => Verdict::Closed,
        RecordState::Waiting => {
            let reason = match r.waiting_for.as_deref() {
                Some(w) if w.to_ascii_lowercase().starts_with("permission") => {
                    let tool = w.split_once(':').map(|(_, t)| t.trim().to_string());
                    permission_reason(tool.filter(|t| !t.is_empty()), transcript)
                }
                Some(w) => w.to_string(),
                None => "waiting".into(),
            };
            Verdict::Waiting(reason)
        }
        RecordState::Other => return None,
    })
}

/// Turns a verdict made at `at` into a status; `None` when it does not change the
/// transcript's reading (expired, or a close that the transcript already shows).
fn apply(
    transcript: &Status,
    verdict: Verdict,
    at: Time,
    now: Time,
    windows: &Windows,
) -> Option<Status> {
    let mut s = transcript.clone();
    s.resets_at = None;
    s.seen = false;
    match verdict {
        Verdict::Waiting(reason) => {
            s.state = State::Waiting;
            s.reason = Some(reason);
            s.at = Some(at);
            s.last_activity = max_time(transcript.last_activity, Some(at));
            s.turn_open = true;
        }
        Verdict::Working { reason, new_turn } => {
            if age(now, Some(at)) > windows.open_turn {
                return None;
            }
            s.state = State::Working;
            // A tool call the transcript already names keeps its name.
            s.reason = reason.or_else(|| {
                (!new_turn && transcript.turn_open)
                    .then(|| transcript.reason.clone())
                    .flatten()
            });
            if new_turn {
                s.turn_key = None;
            }
            s.at = Some(at);
            s.last_activity = Some(at);
            s.turn_open = true;
        }
        Verdict::Closed => {
            // A close confirms a completion the transcript shows, and never resurrects one
            // that has aged to idle (a record's `updatedAt` may move without a new turn).
            let aged_out =
                transcript.state == State::Idle && !transcript.turn_open && transcript.at.is_some();
            if aged_out
                || no_turn_yet(transcript)
                || background_pending(transcript)
                || matches!(transcript.state, State::Attention | State::YourTurn)
            {
                return None;
            }
            // The log is behind the close: Claude Code 2.1.197 can mark its record idle
            // before the answer it just streamed reaches the transcript. Until the settle
            // window passes, the transcript's own reading stands (a close there follows).
            let behind = transcript.state == State::Working
                && transcript.reason.is_none()
                && !transcript.settling;
            if behind && age(now, Some(at)) < windows.settle {
                return None;
            }
            s.state = if age(now, Some(at)) > windows.your_turn {
                State::Idle
            } else {
                State::YourTurn
            };
            // A turn cannot end with a tool call still pending: the session closed because
            // the human refused the tool or pressed Escape (Claude Code may update its record
            // before its transcript shows the interruption).
            let refused_tool = transcript.turn_open
                && transcript
                    .reason
                    .as_deref()
                    .is_some_and(|r| r.starts_with("tool:"));
            s.reason = refused_tool.then(|| "interrupted".to_string());
            // A text answer still settling is the completion itself: keep its time, so the
            // reading does not move when the transcript settles on its own a moment later.
            let settling = transcript.state == State::Working && transcript.reason.is_none();
            s.at = if settling {
                transcript.at.or(Some(at))
            } else {
                Some(at)
            };
            s.last_activity = max_time(transcript.last_activity, Some(at));
            s.turn_open = false;
        }
        Verdict::Ended => {
            s.state = State::Idle;
            s.reason = Some("ended".into());
            s.at = Some(at);
            s.turn_open = false;
        }
    }
    Some(s)
}

/// The transcript's turn ended but a subagent it started in the background has not reported
/// back. A close then is the foreground's: Claude Code 2.1.197 sets its record `idle` for a
/// moment between the subagent's end and the `<task-notification>` turn that answers, and
/// that turn's answer is still to come.
fn background_pending(transcript: &Status) -> bool {
    transcript.turn_open
        && transcript
            .reason
            .as_deref()
            .is_some_and(|r| r.starts_with("background agent:"))
}

/// A session that never had a turn: Claude Code writes its record at start, the transcript
/// at the first prompt. There is nothing to close and nothing to wait for yet.
fn no_turn_yet(transcript: &Status) -> bool {
    !transcript.turn_open && transcript.at.is_none() && transcript.turn_key.is_none()
}

fn refine_with_pane(
    status: Status,
    source: Source,
    transcript: &Status,
    pane: Option<&PaneEvidence>,
    now: Time,
    windows: &Windows,
) -> (Status, Source) {
    match pane {
        Some(PaneEvidence::Prompt(prompt)) => {
            // A pending tool call; `quiet` is an open turn whose tool call went silent.
            let pending_tool = status
                .reason
                .as_deref()
                .is_some_and(|r| r.starts_with("tool:") || r == "quiet");
            if !status.turn_open || status.state == State::Waiting || !pending_tool {
                return (status, source);
            }
            let reason = match (prompt.kind, &prompt.tool) {
                (PromptKind::Permission, None) => permission_reason(None, &status),
                _ => prompt.reason(),
            };
            let mut s = status;
            s.state = State::Waiting;
            s.reason = Some(reason);
            (s, Source::Pane)
        }
        Some(PaneEvidence::NoPrompt) => {
            let answered = status.state == State::Waiting
                && matches!(source, Source::Hook | Source::SessionRecord)
                && status
                    .reason
                    .as_deref()
                    .is_some_and(|r| r.starts_with("permission"))
                && age(now, status.at) > windows.settle;
            if !answered {
                return (status, source);
            }
            let mut s = status;
            s.state = State::Working;
            s.reason = transcript
                .turn_open
                .then(|| transcript.reason.clone())
                .flatten();
            s.last_activity = Some(now);
            (s, Source::Pane)
        }
        Some(PaneEvidence::Exited) | None => (status, source),
    }
}

/// `permission: <tool>`, the tool from the event, else the transcript's pending tool call.
fn permission_reason(tool: Option<String>, transcript: &Status) -> String {
    let tool = tool.or_else(|| {
        let pending = transcript.reason.as_deref()?.strip_prefix("tool:")?;
        let first = pending.split(',').next()?.trim();
        (!first.is_empty()).then(|| first.to_string())
    });
    match tool {
        Some(t) => format!("permission: {t}"),
        None => "permission".into(),
    }
}

/// The tool in "Claude needs your permission to use Bash" (and similar phrasings).
pub fn tool_from_message(message: &str) -> Option<String> {
    let lower = message.to_ascii_lowercase();
    let marker = "permission to use ";
    let pos = lower.find(marker)? + marker.len();
    let tool: String = message[pos..]
        .chars()
        .take_while(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | ':' | '.'))
        .collect();
    let tool = tool.trim_end_matches(['.', ':']);
    (!tool.is_empty()).then(|| super::bounded(tool, 128))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A record Claude Code 2.1.332 wrote at start, before any prompt (`status: idle`).
    const FRESH_RECORD: &[u8] =
        include_bytes!("../../fixtures/real-clients/claude-2.1.332/fresh-session-record.json");

    /// A session record that went `idle` at `at`.
    fn idle_record(at: Time) -> RecordStatus {
        let json = format!(
            r#"{{"status":"idle","statusUpdatedAt":{}}}"#,
            at.timestamp_millis()
        );
        RecordStatus::parse(json.as_bytes()).unwrap()
    }

    #[test]
    fn a_record_close_over_a_pending_tool_is_an_interruption_not_an_answer() {
        // 2.1.197 asked for Bash; the human pressed Escape; the record said idle before the
        // transcript showed the interruption.
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/fixtures/real-clients/claude-2.1.197/permission-pending.jsonl"
        );
        let tail = crate::transcript::tail_events(
            std::path::Path::new(path),
            None,
            crate::read::Budget::default(),
        )
        .unwrap();
        let asked = tail.events.last().and_then(|e| e.at).unwrap();
        let now = asked + chrono::Duration::seconds(4);
        let windows = Windows::default();
        let transcript = crate::state::classify(&tail.events, now, &windows, Default::default());
        assert_eq!(transcript.reason.as_deref(), Some("tool: Bash"));
        let record = idle_record(now - chrono::Duration::seconds(1));
        let (s, _) = reconcile(&transcript, None, Some(&record), None, now, &windows);
        assert_eq!(s.state, State::YourTurn, "{s:?}");
        assert_eq!(s.reason.as_deref(), Some("interrupted"));
    }

    #[test]
    fn a_record_close_ahead_of_the_answer_in_the_log_waits_for_the_log() {
        // 2.1.197 under load: the record went idle before the streamed answer reached the
        // transcript, which still ended at the prompt. Reading `your-turn` then would alert
        // (and route) before there is an answer.
        let full = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/fixtures/real-clients/claude-2.1.197/first-turn.jsonl"
        ))
        .unwrap();
        let asked: String = full
            .lines()
            .take_while(|l| !l.contains(r#""type":"assistant""#))
            .map(|l| format!("{l}\n"))
            .collect();
        let dir = tempfile::tempdir().unwrap();
        let prompt_at = "2026-12-01T22:56:06.219Z".parse::<Time>().unwrap();
        let closed_at = prompt_at + chrono::Duration::milliseconds(700);
        let record = idle_record(closed_at);
        let windows = Windows::default();
        // The log holding `text`, read at `now` beside the idle record.
        let read_at = |text: &str, now: Time| {
            let path = dir.path().join("session.jsonl");
            std::fs::write(&path, text).unwrap();
            let tail = crate::transcript::tail_events(&path, None, crate::read::Budget::default())
                .unwrap();
            let transcript =
                crate::state::classify(&tail.events, now, &windows, Default::default());
            let (s, source) = reconcile(&transcript, None, Some(&record), None, now, &windows);
            (transcript.state, s.state, source)
        };

        let now = closed_at + chrono::Duration::milliseconds(200);
        assert_eq!(
            read_at(&asked, now),
            (State::Working, State::Working, Source::Transcript)
        );
        // The answer lands: the log closes the turn itself.
        assert_eq!(
            read_at(&full, now),
            (State::YourTurn, State::YourTurn, Source::Transcript)
        );
        // A log that never catches up: the close stands once the settle window passed.
        let later = closed_at + windows.settle + chrono::Duration::milliseconds(100);
        assert_eq!(
            read_at(&asked, later),
            (State::Working, State::YourTurn, Source::SessionRecord)
        );
    }

    #[test]
    fn a_record_close_while_a_background_agent_runs_does_not_end_the_turn() {
        // 2.1.197 ran an `Agent` in the background; its turn ended at once. When the subagent
        // finished, the record went busy → idle → busy within ~100 ms before the
        // `<task-notification>` turn was written: that `idle` is not the answer.
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/fixtures/real-clients/claude-2.1.197/background-agent-running.jsonl"
        );
        let tail = crate::transcript::tail_events(
            std::path::Path::new(path),
            None,
            crate::read::Budget::default(),
        )
        .unwrap();
        let ended = tail.events.iter().filter_map(|e| e.at).max().unwrap();
        let now = ended + chrono::Duration::seconds(9);
        let windows = Windows::default();
        let transcript = crate::state::classify(&tail.events, now, &windows, Default::default());
        assert_eq!(
            transcript.reason.as_deref(),
            Some("background agent: Sub research")
        );
        let record = idle_record(now - chrono::Duration::milliseconds(60));
        let (s, _) = reconcile(&transcript, None, Some(&record), None, now, &windows);
        assert_eq!(s.state, State::Working, "{s:?}");
        assert_eq!(s.reason.as_deref(), Some("background agent: Sub research"));
    }

    #[test]
    fn a_start_up_dialog_before_the_first_prompt_is_not_a_wait() {
        // 2.1.332's record while its one-time auto-mode offer is on screen.
        let mut record: serde_json::Value = serde_json::from_slice(FRESH_RECORD).unwrap();
        record["status"] = "waiting".into();
        record["waitingFor"] = "dialog open".into();
        let record = RecordStatus::parse(record.to_string().as_bytes()).unwrap();
        let now = record.updated_at.unwrap() + chrono::Duration::seconds(2);
        let (s, _) = reconcile(
            &Status::idle(),
            None,
            Some(&record),
            None,
            now,
            &Windows::default(),
        );
        assert_eq!(s.state, State::Idle, "{s:?}");
    }

    #[test]
    fn a_fresh_session_record_without_a_turn_is_idle_not_your_turn() {
        let record = RecordStatus::parse(FRESH_RECORD).expect("record parses");
        let now = record.updated_at.expect("updatedAt") + chrono::Duration::seconds(2);
        let (s, _) = reconcile(
            &Status::idle(),
            None,
            Some(&record),
            None,
            now,
            &Windows::default(),
        );
        assert_eq!(s.state, State::Idle, "{s:?}");
        assert_eq!(s.turn_key, None);
    }

    #[test]
    fn tool_names_from_messages() {
        assert_eq!(
            tool_from_message("Claude needs your permission to use Bash").as_deref(),
            Some("Bash")
        );
        assert_eq!(
            tool_from_message("Claude needs your permission to use mcp__github__create_issue.")
                .as_deref(),
            Some("mcp__github__create_issue")
        );
        assert_eq!(tool_from_message("Claude is waiting for your input"), None);
        assert_eq!(tool_from_message("needs your permission to use "), None);
    }
}
