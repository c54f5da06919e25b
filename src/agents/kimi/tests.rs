//! The recorded Kimi Code 2.1.0 log (fixtures/real-clients/kimi-2.1.0/wire.jsonl), cut at each
//! step of its turns, through the state engine: what agentpane would say at that moment
//! (docs/agents/kimi.md#turns). The session: a plain answer; `RUNWRITE now` (approved);
//! `RUNWRITE again` (rejected with `3`); a third `RUNWRITE` (the stand-in read an older
//! prompt) rejected by Escape; `SLOW please` and Escape mid-stream; `BADREQ` (HTTP 400); three
//! `QUOTA` prompts the stand-in still answered 400 (Kimi Code merges the prompts of failed
//! turns into one user message), then `QUOTA four` (HTTP 429, not retried); `RUNWRITE once
//! more` (rejected); `SLOW more` and Escape.

use chrono::Duration;
use serde_json::Value;

use super::testkit::fixture;
use super::{answer, locate, parse, screen};
use crate::events::{Event, EventKind, Time};
use crate::state::{classify, Observation, State, Status, Windows};

fn records() -> Vec<Value> {
    crate::agents::testkit::records(&fixture("wire.jsonl"))
}

/// The log up to and including its `n`-th record (1-based) for which `is` holds.
fn upto(is: impl Fn(&Value) -> bool, n: usize) -> Vec<Value> {
    let all = records();
    let at = all
        .iter()
        .enumerate()
        .filter(|(_, v)| is(v))
        .nth(n - 1)
        .map(|(i, _)| i)
        .expect("enough records");
    all[..=at].to_vec()
}

fn of_type(ty: &'static str) -> impl Fn(&Value) -> bool {
    move |v| v["type"] == ty
}

fn loop_event(ty: &'static str) -> impl Fn(&Value) -> bool {
    move |v| v["type"] == "context.append_loop_event" && v["event"]["type"] == ty
}

/// The state `seconds` after the last record.
fn state_after(records: &[Value], seconds: i64) -> Status {
    let events: Vec<Event> = records.iter().filter_map(parse::parse_value).collect();
    let last: Time = records.iter().rev().find_map(parse::time).unwrap();
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
    let s = state_after(&upto(of_type("turn.prompt"), 1), 1);
    assert_eq!(s.state, State::Working);
    assert!(s.turn_open);
    let s = state_after(&upto(loop_event("step.begin"), 1), 1);
    assert_eq!(s.state, State::Working);
    let s = state_after(&upto(loop_event("step.end"), 1), 1);
    assert_eq!(says(&s), (State::YourTurn, None));
    let s = state_after(&upto(of_type("prompt.completed"), 1), 1);
    assert_eq!(says(&s), (State::YourTurn, None));
    assert!(!s.turn_open);
}

#[test]
fn a_permission_request_waits_until_it_is_resolved() {
    let s = state_after(&upto(of_type("interaction.request"), 1), 5);
    assert_eq!(
        says(&s),
        (State::Waiting, Some("permission: Bash (touch hello.txt)"))
    );
    let s = state_after(&upto(of_type("interaction.resolved"), 1), 1);
    assert_eq!(s.state, State::Working);
    let s = state_after(&upto(of_type("turn.ended"), 2), 1);
    assert_eq!(says(&s), (State::YourTurn, None));
}

#[test]
fn escape_mid_stream_is_interrupted() {
    let s = state_after(&upto(of_type("turn.cancel"), 1), 1);
    assert_eq!(says(&s), (State::YourTurn, Some("interrupted")));
    let s = state_after(&upto(of_type("prompt.aborted"), 1), 1);
    assert_eq!(says(&s), (State::YourTurn, Some("interrupted")));
}

#[test]
fn a_failed_turn_is_attention_with_its_error() {
    let failed = |v: &Value| v["type"] == "turn.ended" && v["reason"] == "failed";
    let s = state_after(&upto(failed, 1), 1);
    assert_eq!(
        says(&s),
        (
            State::Attention,
            Some("api error 400: model stand-in does not exist")
        )
    );
    // A 429 is not retried either: the turn ends failed at once.
    let quota = upto(failed, 5);
    let s = state_after(&quota, 1);
    assert_eq!(says(&s), (State::Attention, Some("quota exceeded")));
    match parse::parse_value(quota.last().unwrap()).unwrap().kind {
        EventKind::ApiError(e) => assert_eq!(e.text, "429 quota exceeded for stand-in"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn every_record_is_claimed_as_kimis() {
    for v in records() {
        let obj = v.as_object().unwrap();
        assert!(parse::owns(obj), "{v}");
    }
}

fn last_answer(records: &[Value]) -> Option<String> {
    crate::agents::testkit::last_answer(Box::<answer::Reader>::default(), records.iter())
}

#[test]
fn the_last_answer_is_byte_exact_and_a_failed_turn_has_none() {
    let first = upto(of_type("prompt.completed"), 1);
    assert_eq!(
        last_answer(&first).as_deref(),
        Some("Here is the answer.\n\n```sh\necho  \"hi\"\t$x\n```\nDone.")
    );
    let failed = |v: &Value| v["type"] == "turn.ended" && v["reason"] == "failed";
    assert_eq!(last_answer(&upto(failed, 1)), None);
    // An interrupted turn's partial text is no answer: the one before stands.
    assert_eq!(
        last_answer(&upto(of_type("prompt.aborted"), 1)).as_deref(),
        Some("Tool done.")
    );
}

#[test]
fn usage_is_read_from_usage_records() {
    let line = records()
        .into_iter()
        .find(|v| v["type"] == "usage.record")
        .unwrap()
        .to_string();
    let r = parse::usage(line.as_bytes()).unwrap();
    assert_eq!((r.input, r.output, r.context_tokens), (10, 5, Some(10)));
    assert_eq!(r.model, None, "the env model's alias is no model name");
}

#[test]
fn the_approval_dialog_is_read_from_the_screen() {
    let shown = fixture("approval-screen.txt");
    let lines: Vec<&str> = shown.lines().collect();
    let at = lines
        .iter()
        .position(|l| crate::read::dialog::content(l) == "▶ Run this command?")
        .unwrap();
    let below = &lines[at + 1..];
    let d = &screen::DIALOGS[0];
    assert_eq!(
        (d.options)(below),
        [
            "Approve once",
            "Approve for this session",
            "Reject",
            "Reject with feedback"
        ]
    );
    assert_eq!((d.detail)(&[], below), "touch hello.txt");
    let c = (d.choices)(below);
    assert_eq!(c.allow, Some(vec!["1".to_string()]));
    assert_eq!(c.always, Some(vec!["2".to_string()]));
    assert_eq!(c.deny, Some(vec!["3".to_string()]));
}

fn session(ms: u64) -> locate::Session {
    locate::Session {
        dir: format!("/s/session_{ms}").into(),
        created_ms: ms,
    }
}

#[test]
fn a_session_is_the_one_made_between_this_start_and_the_next() {
    let all = [session(15_000), session(25_000), session(40_000)];
    // Started at 10, 20, 30 s: each made one session in its own window.
    let starts = [10_000, 20_000, 30_000];
    assert_eq!(
        locate::pick(&all, &starts, 20_000),
        locate::Pick::One(&all[1])
    );
    assert_eq!(
        locate::pick(&all, &starts, 30_000),
        locate::Pick::One(&all[2])
    );
    assert_eq!(locate::pick(&all, &[], 45_000), locate::Pick::None);
    // An older neighbour (started at 5 s) with no session yet may have made this one's.
    let one = &all[1..2];
    assert_eq!(
        locate::pick(one, &[5_000], 20_000),
        locate::Pick::Several(1)
    );
    assert_eq!(locate::pick(one, &[20_000], 5_000), locate::Pick::None);
    // Two sessions since it started, no neighbour: a `/new`, none chosen.
    assert_eq!(locate::pick(&all, &[], 20_000), locate::Pick::Several(2));
    // A session made at once may read as made just before the start read from `/proc`.
    assert_eq!(
        locate::pick(&[session(9_990)], &[], 10_000),
        locate::Pick::One(&session(9_990))
    );
}

#[test]
fn a_turn_is_read_from_the_screen_when_no_log_is_known() {
    assert!(screen::working(&fixture("working-screen.txt")));
    assert!(!screen::working(&fixture("aborted-screen.txt")));
    assert!(!screen::working(&fixture("approval-screen.txt")));
}

#[test]
fn a_wire_log_is_told_by_its_path() {
    assert!(locate::is_wire(std::path::Path::new(
        "/h/.kimi-code/sessions/wd_p_1/session_x/agents/main/wire.jsonl"
    )));
    assert!(!locate::is_wire(std::path::Path::new(
        "/h/.kimi-code/sessions/wd_p_1/session_x/agents/sub1/wire.jsonl"
    )));
}

#[test]
fn a_rate_limited_call_it_retries_is_attention_between_the_attempts() {
    // fixtures/real-clients/kimi-2.1.0/rate-limit.jsonl: `RATE now`, HTTP 429
    // `rate_limit_exceeded`, retried (10 attempts, growing waits); cut during its 8th wait.
    let records: Vec<Value> = fixture("rate-limit.jsonl")
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    let retrying = |v: &Value| v["type"] == "turn.step.retrying";
    let at = records.iter().position(retrying).unwrap();
    let s = state_after(&records[..=at], 1);
    assert_eq!(says(&s), (State::Attention, Some("rate limit")));
    // The next attempt starting changes nothing; only what it brings does.
    let next = records[at + 1..].iter().position(retrying).unwrap() + at + 1;
    for cut in at + 1..=next {
        let s = state_after(&records[..=cut], 1);
        assert_eq!(
            says(&s),
            (State::Attention, Some("rate limit")),
            "line {cut}"
        );
    }
    let s = state_after(&records, 1);
    assert_eq!(says(&s), (State::Attention, Some("rate limit")));
}

#[test]
fn the_retry_wait_is_read_from_the_screen() {
    let r = screen::retrying(&fixture("retry-screen.txt")).unwrap();
    assert_eq!(
        r.reason(),
        "rate limit — retrying (attempt 8/10, next in 37 s)"
    );
    assert_eq!(r.error, "429 rate limited, slow down");
    assert!(screen::retrying(&fixture("working-screen.txt")).is_none());
}
