//! The recorded Copilot CLI 1.0.102 logs, cut at each step of their turns, through the state
//! engine: what agentpane would say at that moment (docs/agents/copilot.md#turns).

use chrono::Duration;
use serde_json::Value;

use super::parse::{self, PendingKind};
use super::testkit::lines;
use crate::events::{Event, Time};
use crate::state::{classify, Observation, State, Status, Windows};

/// The log `name` up to and including its `n`-th record of type `ty` (1-based).
fn upto(name: &str, ty: &str, n: usize) -> Vec<Value> {
    let mut seen = 0;
    let mut out = Vec::new();
    for l in lines(name) {
        let v: Value = serde_json::from_str(&l).expect("a JSON line");
        let this = v["type"] == ty;
        out.push(v);
        if this {
            seen += 1;
            if seen == n {
                return out;
            }
        }
    }
    panic!("{name} has fewer than {n} {ty}");
}

/// The state `seconds` after the last record.
fn state_after(records: &[Value], seconds: i64) -> Status {
    let events: Vec<Event> = records.iter().filter_map(parse::parse_value).collect();
    let last: Time = records
        .iter()
        .rev()
        .find_map(|v| crate::agents::fields::time(v.get("timestamp")))
        .unwrap();
    classify(
        &events,
        last + Duration::seconds(seconds),
        &Windows::default(),
        Observation::default(),
    )
}

fn says(s: &Status) -> (State, Option<&str>) {
    (s.state, s.reason.as_deref())
}

#[test]
fn a_plain_answer_is_working_then_your_turn() {
    let s = state_after(&upto("turns.jsonl", "user.message", 1), 1);
    assert_eq!(says(&s), (State::Working, None));
    assert!(s.turn_open);
    let s = state_after(&upto("turns.jsonl", "assistant.turn_start", 1), 1);
    assert_eq!(says(&s), (State::Working, None));
    let s = state_after(&upto("turns.jsonl", "assistant.message", 1), 1);
    assert_eq!(says(&s), (State::YourTurn, None));
    let s = state_after(&upto("turns.jsonl", "assistant.turn_end", 1), 1);
    assert_eq!(says(&s), (State::YourTurn, None));
    assert!(!s.turn_open);
}

#[test]
fn the_end_of_a_model_call_that_ran_a_tool_is_not_the_end_of_the_turn() {
    // `echo hello` ran without asking; turn_end "0" is written before the second model call.
    let s = state_after(&upto("turns.jsonl", "tool.execution_start", 1), 1);
    assert_eq!(says(&s), (State::Working, Some("tool: bash")));
    let s = state_after(&upto("turns.jsonl", "assistant.turn_end", 2), 1);
    assert_eq!(says(&s), (State::Working, None));
    let s = state_after(&upto("turns.jsonl", "assistant.turn_end", 3), 1);
    assert_eq!(says(&s), (State::YourTurn, None));
}

#[test]
fn escape_mid_stream_is_interrupted() {
    let s = state_after(&upto("turns.jsonl", "abort", 1), 1);
    assert_eq!(says(&s), (State::YourTurn, Some("interrupted")));
}

#[test]
fn a_400_and_an_exhausted_429_are_attention() {
    let s = state_after(&upto("turns.jsonl", "session.error", 1), 1);
    assert_eq!(
        says(&s),
        (
            State::Attention,
            Some("api error 400: model stand-in does not exist")
        )
    );
    // While the 429 is retried the log holds only the prompt and the turn start: working.
    let s = state_after(&upto("turns.jsonl", "user.message", 5), 30);
    assert_eq!(says(&s), (State::Working, None));
    let s = state_after(&upto("turns.jsonl", "session.error", 2), 1);
    assert_eq!(says(&s), (State::Attention, Some("quota exceeded")));
    // The routine exit after it changes nothing in the log's reading (the pane's process is
    // gone: that is the pane's `exited`).
    let whole: Vec<Value> = lines("turns.jsonl")
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(whole.last().unwrap()["type"], "session.shutdown");
    assert_eq!(state_after(&whole, 1).state, State::Attention);
}

#[test]
fn an_approval_in_the_log_is_waiting_naming_the_tool_and_command() {
    let at_dialog = upto("approval.jsonl", "permission.requested", 1);
    let s = state_after(&at_dialog, 5);
    assert_eq!(
        says(&s),
        (State::Waiting, Some("permission: bash (touch hello.txt)"))
    );
    assert!(s.turn_open);
    // A person may take their time: still waiting ten minutes later.
    let s = state_after(&at_dialog, 600);
    assert_eq!(s.state, State::Waiting);
    let p = parse::pending(&at_dialog).expect("pending");
    assert_eq!(p.kind, PendingKind::Permission);
    assert_eq!(p.reason(), "permission: bash (touch hello.txt)");
    // Approved: the command runs, then the answer closes the turn.
    let approved = upto("approval.jsonl", "permission.completed", 1);
    assert_eq!(parse::pending(&approved), None);
    assert_eq!(says(&state_after(&approved, 1)), (State::Working, None));
    let asking = upto("approval.jsonl", "tool.execution_start", 1);
    assert_eq!(
        says(&state_after(&asking, 1)),
        (State::Working, Some("tool: bash"))
    );
    let ran = upto("approval.jsonl", "tool.execution_complete", 1);
    assert_eq!(says(&state_after(&ran, 1)), (State::Working, None));
    let done = upto("approval.jsonl", "assistant.turn_end", 2);
    assert_eq!(says(&state_after(&done, 1)), (State::YourTurn, None));
    // Escape at the second dialog cancels the whole turn.
    let cancelled = upto("approval.jsonl", "abort", 1);
    assert_eq!(parse::pending(&cancelled), None);
    assert_eq!(
        says(&state_after(&cancelled, 1)),
        (State::YourTurn, Some("interrupted"))
    );
    // Seen in CI: Copilot writes the abort before the cancelled approval's completion and
    // the model call's end. The turn is interrupted all the same, never working again.
    let mut reordered = cancelled.clone();
    let abort = reordered.pop().unwrap();
    let tail: Vec<Value> = reordered
        .iter()
        .rev()
        .take_while(|v| v["type"] != "permission.requested")
        .cloned()
        .collect();
    reordered.truncate(reordered.len() - tail.len());
    reordered.push(abort);
    reordered.extend(tail.into_iter().rev());
    assert_eq!(reordered.last().unwrap()["type"], "permission.completed");
    assert_eq!(parse::pending(&reordered), None);
    assert_eq!(
        says(&state_after(&reordered, 1)),
        (State::YourTurn, Some("interrupted"))
    );
}

#[test]
fn a_question_keeps_the_turn_open_until_answered() {
    let asked = upto("ask-user.jsonl", "tool.execution_start", 1);
    assert_eq!(
        says(&state_after(&asked, 5)),
        (State::Waiting, Some("question"))
    );
    assert_eq!(parse::pending(&asked).unwrap().kind, PendingKind::Question);
    let answered = upto("ask-user.jsonl", "assistant.turn_end", 2);
    assert_eq!(says(&state_after(&answered, 1)), (State::YourTurn, None));
}

#[test]
fn one_process_leaving_a_shared_session_ends_nothing_for_the_other() {
    // Pane 1 answered, pane 2 ran `copilot --continue` ("Resume anyway") and answered, pane 1
    // exited (its `session.shutdown` lands in the middle), pane 2 answered again, then exited.
    let all: Vec<Value> = lines("two-processes.jsonl")
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let types: Vec<&str> = all.iter().filter_map(|v| v["type"].as_str()).collect();
    assert_eq!(
        types.iter().filter(|t| **t == "session.shutdown").count(),
        2
    );
    let first_exit = types.iter().position(|t| *t == "session.shutdown").unwrap();
    let next_prompt = upto("two-processes.jsonl", "user.message", 3);
    assert!(next_prompt.len() > first_exit + 1);
    assert_eq!(says(&state_after(&next_prompt, 1)), (State::Working, None));
    let answered = upto("two-processes.jsonl", "assistant.turn_end", 3);
    let s = state_after(&answered, 1);
    assert_eq!(says(&s), (State::YourTurn, None));
    assert_eq!(
        s.turn_key.as_deref(),
        next_prompt.last().unwrap()["data"]["interactionId"].as_str()
    );
}
