//! The adapter read against what the released droid 0.225.2 wrote and drew
//! (fixtures/real-clients/droid-0.225.1): every prefix of its session log is a real past
//! state of that file.

use chrono::{DateTime, Utc};

use super::*;
use crate::agents::{testkit, Agent};
use crate::events::EventKind;
use crate::state::{classify, Observation, State, Status, Windows};

const SESSION: &str = include_str!("../../../fixtures/real-clients/droid-0.225.1/turns.jsonl");
const SECOND: &str = include_str!("../../../fixtures/real-clients/droid-0.225.1/second.jsonl");

fn fixture(name: &str) -> String {
    testkit::recorded("droid-0.225.1", name)
}

/// The session log's first `n` lines.
fn prefix(n: usize) -> String {
    testkit::first_lines(SESSION, n)
}

/// The newest timestamp in the first `n` lines (outcome records carry none).
fn time_of(n: usize) -> DateTime<Utc> {
    SESSION
        .lines()
        .take(n)
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|v| crate::agents::fields::time(v.get("timestamp")))
        .max()
        .unwrap_or_else(|| DateTime::from_timestamp(1_796_000_000, 0).unwrap())
}

/// The state of the log's first `n` lines, `secs` after its last timed line was written.
fn state_after(n: usize, secs: i64) -> Status {
    let events: Vec<crate::events::Event> = prefix(n)
        .lines()
        .filter_map(|l| parse::parse_line(l.as_bytes()))
        .collect();
    // From the newest prompt on, as a tail reader reads back to the turn's decisive record
    // (the recording reused a tool call id across turns when its stand-in restarted).
    let from = events
        .iter()
        .rposition(|e| e.kind == EventKind::UserPrompt)
        .unwrap_or(0);
    let events = &events[from..];
    let now = time_of(n) + chrono::Duration::seconds(secs);
    classify(events, now, &Windows::default(), Observation::default())
}

/// The line number (1-based) of the first record whose text holds `needle`.
fn line_of(needle: &str) -> usize {
    testkit::line_of(SESSION, needle)
}

fn said(s: &Status) -> (State, Option<&str>) {
    (s.state, s.reason.as_deref())
}

#[test]
fn each_recorded_state_reads_right() {
    assert_eq!(said(&state_after(1, 1)), (State::Idle, None), "fresh");
    let prompt = line_of(r#""text":"hello there""#);
    assert_eq!(state_after(prompt, 1).state, State::Working, "prompt");
    let answer = line_of("Here is the answer.");
    // The answer alone does not end the turn; its outcome record does.
    assert_eq!(state_after(answer, 1).state, State::Working, "answer");
    assert_eq!(
        said(&state_after(answer + 1, 1)),
        (State::YourTurn, None),
        "completed"
    );

    let slow = line_of(r#""text":"SLOW please""#);
    assert_eq!(state_after(slow, 1).state, State::Working);
    let cancelled = line_of("Request cancelled by user");
    for n in [cancelled, cancelled + 1, cancelled + 2] {
        assert_eq!(
            said(&state_after(n, 1)),
            (State::YourTurn, Some("interrupted")),
            "Escape, line {n}"
        );
    }

    // A command that asks first: its log shows a running tool; the dialog is on screen.
    let call = line_of(r#""riskLevel":"medium"}}],"#);
    assert_eq!(
        said(&state_after(call, 1)),
        (State::Working, Some("tool: Execute")),
        "pending approval"
    );
    assert_eq!(
        state_after(call + 1, 1).state,
        State::Working,
        "allowed, ran"
    );
    // Denied in the dialog (Escape): droid calls the turn completed; the person stopped it.
    let refused = line_of(parse::REFUSED);
    for n in [refused, refused + 1] {
        assert_eq!(
            said(&state_after(n, 1)),
            (State::YourTurn, Some("interrupted")),
            "denied, line {n}"
        );
    }

    let bad = line_of("BYOK Error: 400");
    for n in [bad, bad + 1] {
        assert_eq!(
            said(&state_after(n, 1)),
            (
                State::Attention,
                Some("api error 400: model stand-in does not exist")
            ),
            "400, line {n}"
        );
    }
    let quota = line_of("BYOK Error: 429");
    let s = state_after(quota + 1, 1);
    assert_eq!(said(&s), (State::Attention, Some("quota exceeded")), "429");
}

#[test]
fn the_last_answer_is_exact_and_a_failed_turn_has_none() {
    assert_eq!(
        last(line_of("Here is the answer.") + 1).as_deref(),
        Some("Here is the answer.\n\n```sh\necho  \"hi\"\t$x\n```\nDone.")
    );
    // Interrupted: no text was written; the answer before stands.
    assert_eq!(
        last(line_of("Request interrupted by user") + 1).as_deref(),
        Some("Here is the answer.\n\n```sh\necho  \"hi\"\t$x\n```\nDone.")
    );
    assert_eq!(
        last(line_of("Command completed successfully") + 2).as_deref(),
        Some("Tool done.")
    );
    assert_eq!(last(line_of("BYOK Error: 400")), None, "failed turn");
    assert_eq!(last(SESSION.lines().count()), None, "failed turn");
    assert_eq!(last(1), None, "fresh");
}

/// The last answer in the log's first `n` lines.
fn last(n: usize) -> Option<String> {
    let records = testkit::records(&prefix(n));
    testkit::last_answer(Droid.answer_reader().unwrap(), records.iter())
}

#[test]
fn its_records_are_its_own() {
    // Which agent a line without `--agent` is read as, in registry order: registry.rs.
    for line in SESSION.lines().chain(SECOND.lines()) {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let telling = matches!(
            v["type"].as_str(),
            Some("session_start" | "agent_turn_outcome" | "message")
        );
        assert_eq!(Droid.owns_record(v.as_object().unwrap()), telling, "{line}");
    }
}

#[test]
fn a_huge_line_is_read_from_its_head() {
    let line = SESSION
        .lines()
        .find(|l| l.contains(r#""text":"hello there""#))
        .unwrap();
    let head = &line.as_bytes()[..line.len().min(200)];
    assert!(Droid.owns_fragment(head));
    let e = Droid.parse_fragments(head, &[]).unwrap();
    assert_eq!(e.kind, EventKind::UserPrompt);
    assert!(e.at.is_some());
}

#[test]
fn the_approval_on_screen_is_read_with_its_keys() {
    let screen = fixture("approval-screen.txt");
    let on = Droid.on_screen(&screen).expect("the dialog");
    assert_eq!(on.request.tool, "Execute");
    assert_eq!(on.request.summary, "touch hello.txt");
    assert_eq!(
        on.options,
        [
            "Yes, allow",
            "Yes, and always allow medium impact commands (all commands that are reversible)",
            "No, cancel"
        ]
    );
    let keys = |k: &[&str]| Some(k.iter().map(|s| s.to_string()).collect::<Vec<_>>());
    assert_eq!(on.choices.allow, keys(&["Up", "Up", "Up", "Enter"]));
    assert_eq!(
        on.choices.always,
        keys(&["Up", "Up", "Up", "Down", "Enter"])
    );
    assert_eq!(on.choices.deny, keys(&["Escape"]));
    for other in ["working-screen.txt", "retry-screen.txt"] {
        assert!(Droid.on_screen(&fixture(other)).is_none(), "{other}");
    }
}

#[test]
fn the_screen_says_working_and_retrying() {
    assert!(screen::working(&fixture("working-screen.txt")));
    assert!(!screen::working(&fixture("approval-screen.txt")));
    let r = screen::retrying(&fixture("retry-screen.txt")).expect("retrying");
    assert_eq!(r.attempt, Some(1));
    assert_eq!(r.reason(), "API error — retrying (attempt 1)");
    assert!(screen::retrying(&fixture("working-screen.txt")).is_none());
}

#[test]
fn its_session_folder_and_files() {
    assert_eq!(
        locate::encode_cwd("/tmp/droidrec/work/proj"),
        "-tmp-droidrec-work-proj"
    );
    assert_eq!(locate::encode_cwd("/a b//c/"), "-a b-c");
    let log = std::path::Path::new(
        "/h/.factory/sessions/-tmp-x/bc96f519-8d2b-47f5-83b0-74060585f18a.jsonl",
    );
    assert!(locate::is_session_file(log));
    assert!(!locate::is_session_file(
        &log.with_extension("settings.json")
    ));
    assert!(!locate::is_session_file(std::path::Path::new(
        "/h/.factory/bc96f519-8d2b-47f5-83b0-74060585f18a.jsonl"
    )));
    assert_eq!(
        locate::session_id(log).as_deref(),
        Some("bc96f519-8d2b-47f5-83b0-74060585f18a")
    );
}

#[test]
fn usage_is_read_from_the_settings_beside_the_log() {
    let v: serde_json::Value = serde_json::from_str(&fixture("turns.settings.json")).unwrap();
    let u = usage::from_settings(&v);
    assert_eq!(u.model.as_deref(), Some("custom:Stand-in-0"));
    assert_eq!((u.session_input, u.session_output), (Some(60), Some(30)));
    assert_eq!(u.context_tokens, Some(10));
    let answer = SESSION
        .lines()
        .find(|l| l.contains("Here is the answer."))
        .unwrap();
    let r = Droid.usage(answer.as_bytes()).unwrap();
    assert_eq!(r.model.as_deref(), Some("custom:Stand-in-0"));
    assert_eq!(
        Droid.usage(SESSION.lines().next().unwrap().as_bytes()),
        None
    );
    let path = std::path::Path::new("/x/s/bc96f519-8d2b-47f5-83b0-74060585f18a.jsonl");
    assert_eq!(
        usage::settings_of(path).unwrap(),
        std::path::Path::new("/x/s/bc96f519-8d2b-47f5-83b0-74060585f18a.settings.json")
    );
}
