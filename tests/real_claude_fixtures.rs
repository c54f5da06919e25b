//! What the released Claude Code clients wrote (`fixtures/real-clients/claude-<version>/`,
//! recorded by the real-client suite) reads as a person would read the pane. Each test names
//! a defect the real clients showed.

use std::path::{Path, PathBuf};

use agentpane::events::Time;
use agentpane::extract::last_answer_from_transcript;
use agentpane::state::{Observation, State, Status, Windows};
use agentpane::transcript::classify_file;
use serde_json::Value;

const VERSIONS: [&str; 2] = ["2.1.197", "2.1.332"];

fn fixture(version: &str, name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/real-clients")
        .join(format!("claude-{version}"))
        .join(name)
}

/// The newest record timestamp in a transcript.
fn last_time(path: &Path) -> Time {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|v| v["timestamp"].as_str().map(str::to_string))
        .filter_map(|t| chrono::DateTime::parse_from_rfc3339(&t).ok())
        .map(|t| t.with_timezone(&chrono::Utc))
        .max()
        .expect("a timestamp")
}

fn status_after(path: &Path, secs: i64) -> Status {
    let now = last_time(path) + chrono::Duration::seconds(secs);
    classify_file(path, None, now, &Windows::default(), Observation::default())
        .unwrap()
        .1
}

#[test]
fn a_turn_that_ended_while_its_background_agent_runs_is_still_working() {
    for v in VERSIONS {
        let path = fixture(v, "background-agent-running.jsonl");
        let s = status_after(&path, 5);
        assert_eq!(s.state, State::Working, "{v}: {s:?}");
        assert_eq!(
            s.reason.as_deref(),
            Some("background agent: Sub research"),
            "{v}"
        );
    }
}

#[test]
fn a_background_agent_still_writing_keeps_a_long_quiet_turn_working() {
    for v in VERSIONS {
        let path = fixture(v, "background-agent-running.jsonl");
        let now = last_time(&path) + chrono::Duration::minutes(12);
        let classify = |obs| {
            classify_file(&path, None, now, &Windows::default(), obs)
                .unwrap()
                .1
        };
        // Twelve minutes without a main-thread record: quiet.
        let quiet = classify(Observation::default());
        assert_ne!(quiet.state, State::Working, "{v}: {quiet:?}");
        // Its subagent wrote a minute ago: the turn is alive, still the background agent's.
        let alive = classify(Observation {
            subagent_life: Some(now - chrono::Duration::minutes(1)),
            ..Observation::default()
        });
        assert_eq!(alive.state, State::Working, "{v}: {alive:?}");
        assert_eq!(
            alive.reason.as_deref(),
            Some("background agent: Sub research"),
            "{v}"
        );
        // A subagent quiet for as long proves nothing.
        let stale = classify(Observation {
            subagent_life: Some(now - chrono::Duration::minutes(11)),
            ..Observation::default()
        });
        assert_eq!(stale.state, quiet.state, "{v}: {stale:?}");
    }
}

#[test]
fn the_turn_a_task_notification_starts_is_the_one_that_ends_the_session_s_work() {
    for v in VERSIONS {
        let path = fixture(v, "background-agent-done.jsonl");
        let s = status_after(&path, 5);
        assert_eq!(s.state, State::YourTurn, "{v}: {s:?}");
        assert_eq!(s.reason, None, "{v}");
        // The answer is the notification turn's, keyed by its final message.
        let last_assistant = std::fs::read_to_string(&path)
            .unwrap()
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .rfind(|v| v["type"] == "assistant")
            .unwrap();
        assert_eq!(
            s.turn_key.as_deref(),
            last_assistant["uuid"].as_str(),
            "{v}"
        );
        let answer = last_answer_from_transcript(&path, None).unwrap().unwrap();
        assert_eq!(
            Some(answer.text.as_str()),
            last_assistant["message"]["content"][0]["text"].as_str(),
            "{v}"
        );
    }
}

#[test]
fn a_failed_turn_needs_attention_and_hands_on_no_earlier_answer() {
    for v in VERSIONS {
        let path = fixture(v, "api-error-400.jsonl");
        let s = status_after(&path, 5);
        assert_eq!(s.state, State::Attention, "{v}: {s:?}");
        assert!(
            s.reason
                .as_deref()
                .is_some_and(|r| r.starts_with("api error 400")),
            "{v}: {s:?}"
        );
        // The answer before the failed prompt ("Answer: kiwi.") answered another prompt.
        let answer = last_answer_from_transcript(&path, None).unwrap();
        assert_eq!(answer, None, "{v}");
    }
}

#[test]
fn a_first_reply_written_before_its_prompt_still_closes_the_turn() {
    // The same real first turn of 2.1.197 in file order as written here, and in the order
    // the issue reports 2.1.197 also writes (reply and turn end before the prompt and its
    // attachments): both are a finished turn.
    for name in ["first-turn.jsonl", "first-turn-reply-before-prompt.jsonl"] {
        let path = fixture("2.1.197", name);
        let reply = std::fs::read_to_string(&path)
            .unwrap()
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .find(|v| v["type"] == "assistant")
            .unwrap();
        let s = status_after(&path, 5);
        assert_eq!(s.state, State::YourTurn, "{name}: {s:?}");
        assert_eq!(s.turn_key.as_deref(), reply["uuid"].as_str(), "{name}");
    }
}
