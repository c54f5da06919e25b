//! Rollout excerpts recorded from the released Codex CLI 0.171.0 (in
//! `fixtures/real-clients/codex-0.171.0/`, lines copied verbatim from the rollouts the
//! real-client suite's stand-in produced): how they classify and what `last` hands on.

use std::io::Cursor;
use std::path::PathBuf;

use agentpane::events::{AgentKind, Time};
use agentpane::extract::last_answer_from_transcript;
use agentpane::read::Budget;
use agentpane::state::{classify, Observation, State, Status, Windows};
use agentpane::transcript::tail_events_from;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/real-clients/codex-0.171.0")
        .join(name)
}

fn lines(name: &str) -> Vec<String> {
    std::fs::read_to_string(fixture(name))
        .expect("fixture")
        .lines()
        .map(str::to_string)
        .collect()
}

/// A moment a few seconds after the last line.
fn soon_after(text: &str) -> Time {
    let last = text
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|v| v["timestamp"].as_str().map(str::to_string))
        .filter_map(|s| chrono::DateTime::parse_from_rfc3339(&s).ok())
        .max()
        .expect("timestamps");
    last.with_timezone(&chrono::Utc) + chrono::Duration::seconds(2)
}

fn status(text: &str) -> Status {
    let tail = tail_events_from(
        Cursor::new(text.as_bytes()),
        Some(AgentKind::Codex),
        Budget::default(),
    )
    .unwrap();
    classify(
        &tail.events,
        soon_after(text),
        &Windows::default(),
        Observation::default(),
    )
}

/// The first `n` lines as a transcript file.
fn prefix_file(dir: &tempfile::TempDir, name: &str, n: usize) -> (PathBuf, String) {
    let text = lines(name)[..n].join("\n") + "\n";
    let path = dir.path().join(format!("{name}.{n}"));
    std::fs::write(&path, &text).unwrap();
    (path, text)
}

#[test]
fn a_failed_turn_is_attention_with_its_message_and_has_no_answer() {
    let dir = tempfile::tempdir().unwrap();
    // Lines 1–9: a tool call approved and answered; 10–13: "QUOTA" → HTTP 429;
    // 14–17: "BAD" → HTTP 400.
    let (answered, text) = prefix_file(&dir, "tool-answer-quota-bad.jsonl", 9);
    assert_eq!(status(&text).state, State::YourTurn);
    let answer = last_answer_from_transcript(&answered, Some(AgentKind::Codex)).unwrap();
    assert_eq!(answer.unwrap().text, "Tool done.");

    for (n, reason) in [
        (13, "Quota exceeded. Check your plan and billing details."),
        (
            17,
            "invalid_request_error: Invalid prompt: mock bad request",
        ),
    ] {
        let (path, text) = prefix_file(&dir, "tool-answer-quota-bad.jsonl", n);
        let s = status(&text);
        assert_eq!(s.state, State::Attention, "{n} lines: {s:?}");
        assert_eq!(s.reason.as_deref(), Some(reason));
        let answer = last_answer_from_transcript(&path, Some(AgentKind::Codex)).unwrap();
        assert_eq!(answer, None, "{n} lines: the failed turn has no answer");
    }
}

#[test]
fn a_prompt_without_task_started_opens_the_turn() {
    // A finished turn, then only the two lines Codex 0.171 writes for a prompt.
    let text = lines("prompt-after-answer.jsonl").join("\n") + "\n";
    assert_eq!(status(&text).state, State::Working);
}

#[test]
fn escape_mid_stream_and_at_the_approval_prompt_is_interrupted() {
    let all = lines("escape-stream-and-approval.jsonl");
    // Line 6 ends the streamed turn (`turn_aborted`); line 13 the one at the approval prompt.
    for n in [6, all.len()] {
        let text = all[..n].join("\n") + "\n";
        let s = status(&text);
        assert_eq!(
            (s.state, s.reason.as_deref()),
            (State::YourTurn, Some("interrupted")),
            "{n}"
        );
    }
    // While the approval prompt is up, the call has no output yet: a tool is pending.
    let text = all[..10].join("\n") + "\n";
    let s = status(&text);
    assert_eq!(s.state, State::Working, "{s:?}");
    assert_eq!(s.reason.as_deref(), Some("tool: exec_command"));
}
