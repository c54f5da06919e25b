//! The adapter against a chat log Gemini CLI 0.61.0 wrote (fixtures/real-clients/
//! gemini-0.61.0/session.jsonl): an answer, a tool call run, one approved, an API error,
//! Escape mid-stream, Escape on a pending approval. Each prefix is the log at one moment.

use super::*;
use crate::state::{Observation, State, Status, Windows};

pub(crate) fn log() -> Vec<String> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/real-clients/gemini-0.61.0/session.jsonl"
    );
    std::fs::read_to_string(path)
        .expect("fixture")
        .lines()
        .map(str::to_string)
        .collect()
}

/// The log up to and including line `last` (0-based).
fn upto(last: usize) -> std::io::Cursor<Vec<u8>> {
    let lines = log();
    let text = lines[..=last].join("\n") + "\n";
    std::io::Cursor::new(text.into_bytes())
}

pub(crate) fn now() -> crate::events::Time {
    chrono::DateTime::parse_from_rfc3339("2026-12-01T22:31:00Z")
        .unwrap()
        .with_timezone(&chrono::Utc)
}

fn status(last: usize) -> Status {
    let events = tail_events_from(upto(last), Budget::default()).unwrap();
    state::classify(&events, now(), &Windows::default(), Observation::default())
}

fn answer(last: usize) -> Option<Answer> {
    last_answer_from(upto(last), Budget::default()).unwrap()
}

pub(crate) const ANSWER: &str =
    "Here is the answer.\n\n```rust\nfn main() {\n    println!(\"hi\");\n}\n```\nDone.";

#[test]
fn a_fresh_session_is_idle() {
    let s = status(1);
    assert_eq!(s.state, State::Idle);
    assert_eq!(s.turn_key, None);
    assert_eq!(answer(1), None);
}

#[test]
fn a_prompt_is_working_and_the_reply_ends_the_turn() {
    assert_eq!(status(3).state, State::Working);
    let s = status(5);
    assert_eq!(s.state, State::YourTurn);
    assert_eq!(s.reason, None);
    let a = answer(5).unwrap();
    assert_eq!(a.text, ANSWER, "code block byte-exact");
    assert_eq!(a.key, s.turn_key);
}

#[test]
fn a_call_out_for_approval_is_a_pending_tool() {
    let s = status(18);
    assert_eq!(s.state, State::Working);
    assert_eq!(s.reason.as_deref(), Some("tool: pending"));
    // Completed calls and their results keep the turn open.
    assert_eq!(status(20).state, State::Working);
    assert_eq!(status(23).state, State::YourTurn);
}

#[test]
fn an_api_error_needs_attention_and_is_no_answer() {
    let s = status(30);
    assert_eq!(s.state, State::Attention);
    assert_eq!(
        s.reason.as_deref(),
        Some("api error 400: Invalid argument from stand-in")
    );
    // The failed turn has no answer; the earlier reply answered another prompt.
    assert_eq!(answer(30), None);
    assert_eq!(answer(26).map(|a| a.text).as_deref(), Some(ANSWER));
}

#[test]
fn escape_mid_stream_is_interrupted() {
    let s = status(35);
    assert_eq!(s.state, State::YourTurn);
    assert_eq!(s.reason.as_deref(), Some("interrupted"));
}

#[test]
fn escape_on_a_pending_approval_is_interrupted_despite_the_restated_history() {
    let lines = log();
    let s = status(lines.len() - 1);
    assert_eq!(s.state, State::YourTurn);
    assert_eq!(s.reason.as_deref(), Some("interrupted"));
    // The restated replies are no answer either: the newest turn with one failed.
    assert_eq!(answer(lines.len() - 1), None);
}

/// The `error` records of fixtures/real-clients/gemini-0.61.0/errors.jsonl: a spent quota
/// (429, "limit: 0"; Gemini CLI asks "Keep trying / Stop", Stop records it), a 403, a 400.
fn recorded_errors() -> Vec<String> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/real-clients/gemini-0.61.0/errors.jsonl"
    );
    std::fs::read_to_string(path)
        .expect("fixture")
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["type"] == "error")
        .map(|v| v["content"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn api_errors_are_named_in_words() {
    let kinds: Vec<String> = recorded_errors()
        .iter()
        .map(|t| api_error(t).kind)
        .collect();
    assert_eq!(
        kinds,
        [
            "quota exceeded",
            "auth",
            "api error 400: Invalid argument from stand-in"
        ]
    );
    assert_eq!(
        api_error(&recorded_errors()[2]).text,
        "Invalid argument from stand-in"
    );
    assert_eq!(status(30).reason.as_deref(), Some(kinds[2].as_str()));
    // The other shapes Gemini CLI writes: a message with its status, a bare message, the
    // rate-limit advice without the word quota, and errors that are not the API's.
    let cases = [
        (
            "[API Error: Too many requests (Status: RESOURCE_EXHAUSTED)]",
            "rate limit",
        ),
        (
            r#"[API Error: {"error":{"code":401,"message":"Request had invalid authentication credentials.","status":"UNAUTHENTICATED"}}]"#,
            "auth",
        ),
        (
            r#"[API Error: {"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT"}}]"#,
            "auth",
        ),
        (
            "[API Error: model overloaded]\nPossible quota limitations in place or slow response times detected. Switching to the gemini-2.5-flash model for the rest of this session.",
            "rate limit",
        ),
        (
            r#"[API Error: {"error":{"code":500,"message":"","status":"INTERNAL"}}]"#,
            "api error 500: INTERNAL",
        ),
        ("[API Error: fetch failed]", "api error: fetch failed"),
        ("[API Error: An unknown error occurred.]", "api error: An unknown error occurred."),
        ("Configuration is not available.", "error: Configuration is not available."),
    ];
    for (text, kind) in cases {
        assert_eq!(api_error(text).kind, kind, "{text}");
    }
}

#[test]
fn a_failed_turn_has_no_answer_until_the_next_reply() {
    let lines = [
        r#"{"sessionId":"s","projectHash":"h","startTime":"2026-12-01T22:27:59.406Z","kind":"main"}"#,
        r#"{"id":"u1","type":"user","content":[{"text":"a"}]}"#,
        r#"{"id":"g1","type":"gemini","content":"A","model":"m"}"#,
        r#"{"id":"u2","type":"user","content":[{"text":"b"}]}"#,
        r#"{"id":"e2","type":"error","content":"[API Error: x]"}"#,
        r#"{"id":"u3","type":"user","content":[{"text":"c"}]}"#,
        r#"{"id":"g3","type":"gemini","content":"C","model":"m"}"#,
    ];
    let read = |n: usize| {
        let text = lines[..n].join("\n") + "\n";
        last_answer_from(std::io::Cursor::new(text.into_bytes()), Budget::default())
            .unwrap()
            .map(|a| a.text)
    };
    assert_eq!(read(3).as_deref(), Some("A"));
    assert_eq!(read(5), None);
    assert_eq!(
        read(6),
        None,
        "a new prompt still waiting: nothing answered it yet"
    );
    assert_eq!(read(7).as_deref(), Some("C"));
}

#[test]
fn rewind_returns_to_the_earlier_answer_without_a_new_turn() {
    // `/rewind` to the second prompt: `$rewindTo` its id, then the shortened list.
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/real-clients/gemini-0.61.0/rewind.jsonl"
    );
    let bytes = std::fs::read(path).expect("fixture");
    let events = tail_events_from(std::io::Cursor::new(bytes.clone()), Budget::default()).unwrap();
    let later = now() + chrono::Duration::minutes(40);
    let s = state::classify(&events, later, &Windows::default(), Observation::default());
    assert_eq!(s.state, State::YourTurn);
    let key = s.turn_key.expect("key");
    assert!(key.starts_with("ff6134c8"), "{key}");
    let a = last_answer_from(std::io::Cursor::new(bytes), Budget::default())
        .unwrap()
        .unwrap();
    assert_eq!(a.key.as_deref(), Some(key.as_str()));
}
