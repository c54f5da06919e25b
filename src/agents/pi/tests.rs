//! The adapter read against what the released pi 0.73.1 wrote and drew
//! (fixtures/real-clients/pi-0.73.1; docs/design.md#turns-per-agent): every prefix of its
//! session log is a real past state of that file.

use std::io::Cursor;

use chrono::{DateTime, Utc};

use super::*;
use crate::agents::{testkit, Agent};
use crate::events::EventKind;
use crate::read::Budget;
use crate::state::{classify, Observation, State, Status, Windows};

const SESSION: &str = include_str!("../../../fixtures/real-clients/pi-0.73.1/session.jsonl");

fn screen(name: &str) -> String {
    testkit::recorded("pi-0.73.1", name)
}

/// The session log's first `n` lines.
fn prefix(n: usize) -> String {
    testkit::first_lines(SESSION, n)
}

fn time_of(line: usize) -> DateTime<Utc> {
    let v: serde_json::Value =
        serde_json::from_str(SESSION.lines().nth(line - 1).unwrap()).unwrap();
    crate::agents::fields::time(v.get("timestamp")).unwrap()
}

/// The state of the log's first `n` lines, `secs` after its last line was written.
fn state_after(n: usize, secs: i64) -> Status {
    let events = read::tail_events(Cursor::new(prefix(n)), Budget::default()).unwrap();
    let now = time_of(n) + chrono::Duration::seconds(secs);
    classify(&events, now, &Windows::default(), Observation::default())
}

/// The line number (1-based) of the first record whose text holds `needle`.
fn line_of(needle: &str) -> usize {
    testkit::line_of(SESSION, needle)
}

#[test]
fn each_recorded_state_reads_right() {
    let answer = line_of(r#""stopReason":"stop","timestamp":1796215009799"#);
    assert_eq!(state_after(answer - 1, 1).state, State::Working, "prompt");
    let s = state_after(answer, 1);
    assert_eq!(
        (s.state, s.reason.as_deref()),
        (State::YourTurn, None),
        "answer"
    );

    let call = line_of(r#""stopReason":"toolUse""#);
    let s = state_after(call, 1);
    assert_eq!(
        (s.state, s.reason.as_deref()),
        (State::Working, Some("tool: bash")),
        "a tool call waiting for the extension's dialog"
    );
    let blocked = line_of("Blocked by user");
    assert_eq!(
        state_after(blocked, 1).state,
        State::Working,
        "denied: goes on"
    );
    assert_eq!(state_after(blocked + 1, 1).state, State::YourTurn);

    let aborted = line_of(r#""stopReason":"aborted""#);
    let s = state_after(aborted, 1);
    assert_eq!(
        (s.state, s.reason.as_deref()),
        (State::YourTurn, Some("interrupted"))
    );

    let bad = line_of("400 model stand-in");
    let s = state_after(bad, 1);
    assert_eq!(
        (s.state, s.reason.as_deref()),
        (
            State::Attention,
            Some("api error 400: model stand-in does not exist")
        )
    );
    assert!(
        !parse::retryable(s.reason.as_deref().unwrap()),
        "pi does not retry a 400"
    );
}

#[test]
fn every_attempt_of_a_retried_429_is_one_turn() {
    let first = line_of("429 quota exceeded");
    let total = SESSION.lines().count();
    assert_eq!(
        total - first + 1,
        4,
        "the first try and pi's 3 retries, one record each"
    );
    let key = state_after(first, 1).turn_key;
    assert!(key.is_some());
    for n in first..=total {
        let s = state_after(n, 1);
        assert_eq!(
            (s.state, s.reason.as_deref()),
            (State::Attention, Some("quota exceeded")),
            "line {n}"
        );
        assert_eq!(s.turn_key, key, "line {n}: one key for every attempt");
        assert!(parse::retryable(s.reason.as_deref().unwrap()));
    }
    // The 400 of the turn before is a turn of its own.
    assert_ne!(state_after(first - 2, 1).turn_key, key);
}

#[test]
fn the_retry_countdown_and_the_end_of_the_retries_are_told_apart() {
    let r = screen::retrying(&screen("retry-screen.txt")).expect("retrying");
    assert_eq!((r.attempt, r.limit, r.next_in), (Some(1), Some(3), Some(1)));
    assert_eq!(
        r.reason(),
        "rate limit — retrying (attempt 1/3, next in 1 s)"
    );
    for name in ["final-screen.txt", "error-screen.txt", "working-screen.txt"] {
        assert_eq!(screen::retrying(&screen(name)), None, "{name}");
    }
    assert!(screen::working(&screen("working-screen.txt")));
    assert!(screen::working(&screen("approval-screen.txt")));
    for name in ["final-screen.txt", "aborted-screen.txt", "retry-screen.txt"] {
        assert!(!screen::working(&screen(name)), "{name}");
    }
}

/// What the pane reads for the log's first `n` lines with `shown` on screen.
fn refined(n: usize, shown: &str) -> (Status, crate::state::Source) {
    let status = state_after(n, 1);
    let now = time_of(n) + chrono::Duration::seconds(1);
    let mut capture = || Some(shown.to_string());
    Pi.refine(
        status,
        crate::state::Source::Transcript,
        Some("π - proj"),
        &mut capture,
        now,
        &Windows::default(),
    )
}

#[test]
fn a_failed_attempt_reads_retrying_while_pi_waits_and_final_once_it_gave_up() {
    let first = line_of("429 quota exceeded");
    let (s, _) = refined(first, &screen("retry-screen.txt"));
    assert_eq!(s.state, State::Attention);
    assert_eq!(
        s.reason.as_deref(),
        Some("rate limit — retrying (attempt 1/3, next in 1 s)")
    );
    assert_eq!(s.retry.as_ref().and_then(|r| r.attempt), Some(1));
    assert_eq!(
        s.turn_key,
        state_after(first, 1).turn_key,
        "the turn's key stays"
    );
    // Trying again: the spinner under the failed attempt.
    let trying = screen("retry-screen.txt")
        .replace("Retrying (1/3) in 1s... (escape to cancel)", "Working...");
    let (s, _) = refined(first + 1, &trying);
    assert_eq!(s.reason.as_deref(), Some("quota exceeded — retrying"));
    let total = SESSION.lines().count();
    let (s, _) = refined(total, &screen("final-screen.txt"));
    assert_eq!(
        (s.state, s.reason.as_deref()),
        (State::Attention, Some("quota exceeded"))
    );
    // A 400 is not retried: its screen is not even asked for.
    let bad = line_of("400 model stand-in");
    let status = state_after(bad, 1);
    assert!(!Pi.wants_screen(&status, "π - proj", time_of(bad)));
}

#[test]
fn the_permission_gate_dialog_is_an_approval_of_bash() {
    use crate::read::dialog::content;
    let shown = screen("approval-screen.txt");
    let lines: Vec<&str> = shown.lines().collect();
    let dialog = &screen::DIALOGS[0];
    let title = lines
        .iter()
        .position(|l| dialog.titles.iter().any(|t| t.matches(content(l))))
        .expect("the title");
    let options = (dialog.options)(&lines[title + 1..]);
    assert_eq!(options, ["Yes", "No"]);
    assert!(options.iter().any(|o| (dialog.approves)(o)));
    assert_eq!(
        (dialog.tool)(&lines[..title], &lines[title + 1..]).as_deref(),
        Some("bash")
    );
    // Any other extension's selector, by pi's chrome around it.
    let other = shown
        .replace("⚠️ Dangerous command:", "Run this for me?")
        .replace(" Allow?", " Sure?");
    let lines: Vec<&str> = other.lines().collect();
    let p = screen::selector(&lines).expect("a selector");
    assert_eq!(p.title, "Run this for me?");
    assert_eq!(p.agent, AgentKind::Pi);
    for name in [
        "working-screen.txt",
        "final-screen.txt",
        "aborted-screen.txt",
    ] {
        let s = screen(name);
        let lines: Vec<&str> = s.lines().collect();
        assert_eq!(screen::selector(&lines), None, "{name}");
    }
}

#[test]
fn the_last_answer_is_exact_and_a_failed_turn_has_none() {
    let answer = line_of(r#""stopReason":"stop","timestamp":1796215009799"#);
    let text = last(answer);
    assert_eq!(
        text.as_deref(),
        Some("Here is the answer.\n\n```sh\necho  \"hi\"\t$x\n```\nDone.")
    );
    assert_eq!(
        last(line_of("Blocked by user") + 1).as_deref(),
        Some("Tool done.")
    );
    // Interrupted: the partial text is no answer; the one before stands.
    assert_eq!(
        last(line_of(r#""stopReason":"aborted""#)).as_deref(),
        Some("Tool done.")
    );
    assert_eq!(last(line_of("400 model stand-in")), None, "failed turn");
    assert_eq!(last(SESSION.lines().count()), None, "failed turn");
}

/// The last answer in the log's first `n` lines.
fn last(n: usize) -> Option<String> {
    let records = testkit::records(&prefix(n));
    testkit::last_answer(Pi.answer_reader().unwrap(), records.iter())
}

#[test]
fn its_records_are_its_own() {
    for line in SESSION.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        assert!(Pi.owns_record(v.as_object().unwrap()), "{line}");
    }
    let p = std::path::Path::new(
        "/h/.pi/agent/sessions/--w--/2026-12-02T12-36-41-595Z_01a236c1-d1fa-72e3-b4ed-eff37164fc8f.jsonl",
    );
    assert!(Pi.owns_path(p));
    let huge = br#"{"type":"message","id":"a1","parentId":"b2","timestamp":"2026-12-02T12:37:13.691Z","message":{"role":"toolResult","toolCallId":"call_1","#;
    assert!(Pi.owns_fragment(huge));
    let ev = Pi.parse_fragments(huge, b"").unwrap();
    assert_eq!(
        ev.kind,
        EventKind::ToolResult {
            ids: vec!["call_1".into()]
        }
    );
}

#[test]
fn a_pane_without_a_known_log_reads_its_screen() {
    let read = |name: &str| {
        let shown = screen(name);
        let mut capture = || Some(shown.clone());
        let (s, source) = Pi.refine(
            Status::idle(),
            crate::state::Source::None,
            Some("π - proj"),
            &mut capture,
            Utc::now(),
            &Windows::default(),
        );
        (s.state, s.reason, source)
    };
    use crate::state::Source;
    assert_eq!(
        read("approval-screen.txt"),
        (
            State::Waiting,
            Some("permission: bash".into()),
            Source::Pane
        )
    );
    assert_eq!(
        read("working-screen.txt"),
        (State::Working, None, Source::Pane)
    );
    assert_eq!(
        read("aborted-screen.txt"),
        (State::Idle, None, Source::None)
    );
}

#[test]
fn the_permission_gate_is_answered_with_its_selector_keys() {
    let shown = screen("approval-screen.txt");
    let d = Pi.on_screen(&shown).expect("the gate's dialog");
    assert_eq!(d.request.tool, "bash");
    assert_eq!(d.request.summary, "rm -rf scratch");
    assert_eq!(d.choices.allow, Some(vec!["Enter".to_string()]));
    assert_eq!(d.choices.deny, Some(vec!["Escape".to_string()]));
    assert_eq!(d.choices.always, None);
    // The person moved the selection to No: Up, then Enter.
    let moved = shown.replace("→ Yes", "  Yes").replace("   No", " → No");
    let d = Pi.on_screen(&moved).expect("the gate's dialog");
    assert_eq!(
        d.choices.allow,
        Some(vec!["Up".to_string(), "Enter".to_string()])
    );
}

#[test]
fn lines_of_the_command_are_never_the_gate_s_options() {
    use crate::read::dialog::with_option_like_lines;
    let shown = with_option_like_lines(&screen("approval-screen.txt"), "rm -rf scratch");
    let d = Pi.on_screen(&shown).expect("the gate's dialog");
    assert_eq!(d.options, ["Yes", "No"]);
    // `→ Yes` is chosen: Enter, whatever `❯ Yes`, `→ No` or `Allow?` the command holds.
    assert_eq!(d.choices.allow, Some(vec!["Enter".to_string()]));
    assert_eq!(d.choices.deny, Some(vec!["Escape".to_string()]));
    assert!(
        d.request.text.contains("→ No\nAllow?"),
        "{}",
        d.request.text
    );
}
