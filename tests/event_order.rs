//! Event-order tests (docs/design.md#testing): each named after the sequence it protects. Lines go
//! through the real adapters, then the pure classifier, with an explicit clock.

use agentpane::agents;
use agentpane::events::{AgentKind, Event, Time};
use agentpane::state::{classify, Observation, State, Status, Windows};
use serde_json::{json, Value};

const T0: &str = "2026-02-10T21:00:00Z";

fn t(secs: i64) -> Time {
    chrono::DateTime::parse_from_rfc3339(T0)
        .unwrap()
        .with_timezone(&chrono::Utc)
        + chrono::Duration::seconds(secs)
}

fn ts(secs: i64) -> String {
    t(secs).to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

fn events(agent: AgentKind, lines: &[Value]) -> Vec<Event> {
    lines
        .iter()
        .map(|l| agents::parse_line(agent, l.to_string().as_bytes()).expect("line parses"))
        .collect()
}

fn at(lines: &[Value], now: i64) -> Status {
    classify(
        &events(AgentKind::Claude, lines),
        t(now),
        &Windows::default(),
        Observation::default(),
    )
}

fn codex_at(lines: &[Value], now: i64) -> Status {
    classify(
        &events(AgentKind::Codex, lines),
        t(now),
        &Windows::default(),
        Observation::default(),
    )
}

// --- Claude record builders -----------------------------------------------------------------

fn prompt(secs: i64, text: &str) -> Value {
    json!({"type":"user","isSidechain":false,"uuid":format!("u{secs}"),"timestamp":ts(secs),
           "message":{"role":"user","content":text}})
}

fn text(secs: i64, msg: &str, stop: Option<&str>) -> Value {
    json!({"type":"assistant","isSidechain":false,"uuid":format!("a{secs}"),"timestamp":ts(secs),
           "message":{"id":msg,"role":"assistant","stop_reason":stop,
                      "content":[{"type":"text","text":"All done."}]}})
}

fn tool_use(secs: i64, msg: &str, id: &str, name: &str) -> Value {
    json!({"type":"assistant","isSidechain":false,"uuid":format!("a{secs}"),"timestamp":ts(secs),
           "message":{"id":msg,"role":"assistant","stop_reason":null,
                      "content":[{"type":"tool_use","id":id,"name":name,"input":{}}]}})
}

fn tool_result(secs: i64, id: &str) -> Value {
    json!({"type":"user","isSidechain":false,"uuid":format!("r{secs}"),"timestamp":ts(secs),
           "message":{"role":"user","content":[{"type":"tool_result","tool_use_id":id,"content":"ok"}]}})
}

fn sidechain(mut v: Value) -> Value {
    v["isSidechain"] = json!(true);
    v
}

fn snapshot(secs: i64) -> Value {
    json!({"type":"file-history-snapshot","messageId":"m","snapshot":{"timestamp":ts(secs)},"timestamp":ts(secs)})
}

fn progress(secs: i64) -> Value {
    json!({"type":"progress","isSidechain":false,"uuid":format!("p{secs}"),"timestamp":ts(secs),
           "data":{"type":"bash_progress"}})
}

fn turn_duration(secs: i64) -> Value {
    json!({"type":"system","subtype":"turn_duration","isSidechain":false,"uuid":format!("s{secs}"),
           "timestamp":ts(secs),"durationMs":1000})
}

fn local_command(secs: i64) -> Value {
    json!({"type":"system","subtype":"local_command","isSidechain":false,"uuid":format!("l{secs}"),
           "timestamp":ts(secs),"content":"<command-name>/model</command-name>"})
}

// --- Claude sequences -----------------------------------------------------------------------

#[test]
fn assistant_completion_then_user_reply_is_working() {
    let lines = [
        prompt(0, "fix it"),
        text(10, "m1", Some("end_turn")),
        prompt(40, "and now tests"),
    ];
    assert_eq!(at(&lines[..2], 12).state, State::YourTurn);
    assert_eq!(at(&lines, 41).state, State::Working);
}

#[test]
fn short_bookkeeping_write_after_completion_keeps_your_turn() {
    let lines = [
        prompt(0, "fix it"),
        text(10, "m1", Some("end_turn")),
        snapshot(20),
    ];
    let s = at(&lines, 21);
    assert_eq!(s.state, State::YourTurn);
    assert_eq!(s.at, Some(t(10)), "metadata never moves the semantic time");
    assert!(!s.seen);
}

#[test]
fn real_later_activity_after_completion_means_the_user_came_back() {
    let lines = [
        prompt(0, "fix it"),
        text(10, "m1", Some("end_turn")),
        local_command(10 + 120),
    ];
    let s = at(&lines, 140);
    assert_eq!(s.state, State::YourTurn);
    assert!(
        s.seen,
        "local commands long after the completion acknowledge it"
    );
    let within_grace = [
        prompt(0, "fix it"),
        text(10, "m1", Some("end_turn")),
        local_command(20),
    ];
    assert!(!at(&within_grace, 30).seen);
}

#[test]
fn sidechain_completion_during_unfinished_main_turn_stays_working() {
    let lines = [
        prompt(0, "research"),
        tool_use(5, "m1", "task1", "Task"),
        sidechain(prompt(6, "subagent prompt")),
        sidechain(text(30, "s1", Some("end_turn"))),
    ];
    let s = at(&lines, 31);
    assert_eq!(s.state, State::Working);
    assert_eq!(s.reason.as_deref(), Some("tool: Task"));
    assert_eq!(
        s.last_activity,
        Some(t(30)),
        "subagent traffic is proof of life"
    );
}

#[test]
fn sidechain_traffic_after_main_completion_does_not_hide_it() {
    let lines = [
        prompt(0, "fix it"),
        text(10, "m1", Some("end_turn")),
        sidechain(tool_use(11, "s1", "x", "Read")),
        sidechain(text(12, "s2", None)),
    ];
    let s = at(&lines, 13);
    assert_eq!(s.state, State::YourTurn);
    assert_eq!(s.turn_key.as_deref(), Some("a10"));
}

#[test]
fn api_error_assistant_line_with_a_stop_reason_is_attention() {
    let err = json!({"type":"assistant","isSidechain":false,"uuid":"e1","timestamp":ts(10),
        "isApiErrorMessage":true,"error":"authentication_failed",
        "message":{"id":"m","model":"<synthetic>","role":"assistant","stop_reason":"stop_sequence",
                   "content":[{"type":"text","text":"Invalid API key · Please run /login"}]}});
    let s = at(&[prompt(0, "go"), err.clone()], 15);
    assert_eq!(s.state, State::Attention);
    assert_eq!(s.reason.as_deref(), Some("auth"));
    assert_eq!(
        at(&[prompt(0, "go"), err], 10 + 31 * 60).state,
        State::Idle,
        "attention expires"
    );
}

#[test]
fn old_semantic_activity_with_a_freshly_modified_file_is_idle() {
    // A week-old completion in a file touched just now: file mtime is never state.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.jsonl");
    let body: String = [prompt(0, "fix it"), text(10, "m1", Some("end_turn"))]
        .iter()
        .map(|v| format!("{v}\n"))
        .collect();
    std::fs::write(&path, body).unwrap();
    let (_, s) = agentpane::transcript::classify_file(
        &path,
        None,
        t(7 * 24 * 3600),
        &Windows::default(),
        Observation::default(),
    )
    .unwrap();
    assert_eq!(s.state, State::Idle);
}

#[test]
fn streamed_message_split_over_lines_is_one_message() {
    // One API message: text line then tool_use line, both stop_reason null.
    let lines = [
        prompt(0, "go"),
        text(5, "m1", None),
        tool_use(6, "m1", "t1", "Bash"),
    ];
    let s = at(&lines, 60);
    assert_eq!(
        s.state,
        State::Working,
        "the trailing tool_use decides, not the text"
    );
    assert_eq!(s.reason.as_deref(), Some("tool: Bash"));
}

#[test]
fn text_only_message_without_stop_reason_closes_after_settle() {
    let lines = [prompt(0, "go"), text(5, "m1", None)];
    assert_eq!(
        at(&lines, 6).state,
        State::Working,
        "still streaming within the settle"
    );
    assert_eq!(at(&lines, 9).state, State::YourTurn);
}

#[test]
fn turn_duration_record_closes_at_once() {
    let lines = [prompt(0, "go"), text(5, "m1", None), turn_duration(5)];
    let s = at(&lines, 5);
    assert_eq!(s.state, State::YourTurn);
    assert_eq!(
        s.turn_key.as_deref(),
        Some("a5"),
        "the turn keeps the assistant's key"
    );
}

#[test]
fn tool_use_without_result_is_working_then_result_then_answer() {
    let mut lines = vec![prompt(0, "go"), tool_use(5, "m1", "t1", "Bash")];
    assert_eq!(at(&lines, 100).reason.as_deref(), Some("tool: Bash"));
    lines.push(tool_result(200, "t1"));
    let s = at(&lines, 201);
    assert_eq!((s.state, s.reason.as_deref()), (State::Working, None));
    lines.push(text(210, "m2", Some("end_turn")));
    assert_eq!(at(&lines, 211).state, State::YourTurn);
}

#[test]
fn progress_keeps_an_open_turn_alive_but_never_reopens_a_closed_one() {
    let open = [
        prompt(0, "go"),
        tool_use(5, "m1", "t1", "Bash"),
        progress(400),
    ];
    assert_eq!(
        at(&open, 500).state,
        State::Working,
        "bash progress 100 s ago"
    );
    let quiet = [prompt(0, "go"), tool_use(5, "m1", "t1", "Bash")];
    assert_eq!(
        at(&quiet, 500).state,
        State::Idle,
        "quiet open turn, never seen working"
    );
    let closed = [
        prompt(0, "go"),
        text(5, "m1", Some("end_turn")),
        progress(10),
    ];
    assert_eq!(at(&closed, 11).state, State::YourTurn);
}

#[test]
fn quiet_open_turn_seen_working_is_stalled_then_idle() {
    let lines = events(
        AgentKind::Claude,
        &[prompt(0, "go"), tool_use(5, "m1", "t1", "Bash")],
    );
    let seen = Observation {
        seen_working: true,
        ..Observation::default()
    };
    let w = Windows::default();
    assert_eq!(classify(&lines, t(6 * 60), &w, seen).state, State::Stalled);
    assert_eq!(classify(&lines, t(16 * 60), &w, seen).state, State::Idle);
}

#[test]
fn interruption_is_your_turn_with_reason() {
    let lines = [
        prompt(0, "go"),
        tool_use(5, "m1", "t1", "Bash"),
        tool_result(8, "t1"),
        prompt(8, "[Request interrupted by user for tool use]"),
    ];
    let s = at(&lines, 9);
    assert_eq!(s.state, State::YourTurn);
    assert_eq!(s.reason.as_deref(), Some("interrupted"));
}

#[test]
fn your_turn_expires_to_idle() {
    let lines = [prompt(0, "go"), text(5, "m1", Some("end_turn"))];
    assert_eq!(at(&lines, 5 + 19 * 60).state, State::YourTurn);
    assert_eq!(at(&lines, 5 + 21 * 60).state, State::Idle);
}

#[test]
fn refusal_is_attention() {
    let refusal = json!({"type":"assistant","uuid":"x","timestamp":ts(3),
        "message":{"id":"m","stop_reason":"refusal","content":[]}});
    assert_eq!(
        at(&[prompt(0, "go"), refusal], 4).reason.as_deref(),
        Some("refused")
    );
}

#[test]
fn empty_transcript_is_idle() {
    assert_eq!(at(&[], 0).state, State::Idle);
}

// --- Codex sequences ------------------------------------------------------------------------

fn cx(secs: i64, ty: &str, payload: Value) -> Value {
    json!({"timestamp": ts(secs), "type": ty, "payload": payload})
}

fn task_started(secs: i64, turn: &str) -> Value {
    cx(
        secs,
        "event_msg",
        json!({"type":"task_started","turn_id":turn}),
    )
}

fn user_message(secs: i64) -> Value {
    cx(
        secs,
        "event_msg",
        json!({"type":"user_message","message":"go"}),
    )
}

fn task_complete(secs: i64, turn: &str) -> Value {
    cx(
        secs,
        "event_msg",
        json!({"type":"task_complete","turn_id":turn,"last_agent_message":"done"}),
    )
}

#[test]
fn codex_task_complete_then_user_message_is_working() {
    let mut lines = vec![
        task_started(0, "t1"),
        user_message(0),
        task_complete(10, "t1"),
    ];
    let s = codex_at(&lines, 11);
    assert_eq!(s.state, State::YourTurn);
    assert_eq!(s.turn_key.as_deref(), Some("t1"));
    lines.push(user_message(30));
    assert_eq!(codex_at(&lines, 31).state, State::Working);
}

#[test]
fn codex_task_started_after_task_complete_is_working() {
    let lines = [
        task_started(0, "t1"),
        task_complete(10, "t1"),
        task_started(20, "t2"),
    ];
    let s = codex_at(&lines, 21);
    assert_eq!(s.state, State::Working);
    assert_eq!(s.turn_key.as_deref(), Some("t2"));
}

#[test]
fn codex_turn_aborted_is_interrupted() {
    let lines = [
        task_started(0, "t1"),
        user_message(0),
        cx(
            5,
            "event_msg",
            json!({"type":"turn_aborted","reason":"interrupted"}),
        ),
    ];
    let s = codex_at(&lines, 6);
    assert_eq!(
        (s.state, s.reason.as_deref()),
        (State::YourTurn, Some("interrupted"))
    );
}

#[test]
fn codex_function_call_without_output_is_a_pending_tool() {
    let lines = [
        task_started(0, "t1"),
        user_message(0),
        cx(
            2,
            "response_item",
            json!({"type":"function_call","name":"shell","call_id":"c1","arguments":"{}"}),
        ),
    ];
    assert_eq!(codex_at(&lines, 30).reason.as_deref(), Some("tool: shell"));
}

#[test]
fn codex_error_is_attention() {
    let lines = [
        task_started(0, "t1"),
        cx(
            3,
            "event_msg",
            json!({"type":"error","message":"stream disconnected"}),
        ),
    ];
    assert_eq!(codex_at(&lines, 4).state, State::Attention);
}

#[test]
fn codex_token_count_after_completion_does_not_reopen() {
    let lines = [
        task_started(0, "t1"),
        task_complete(10, "t1"),
        cx(
            11,
            "event_msg",
            json!({"type":"token_count","info":null,"rate_limits":{"rate_limit_reached_type":null}}),
        ),
    ];
    assert_eq!(codex_at(&lines, 12).state, State::YourTurn);
}

#[test]
fn a_result_between_the_lines_of_one_message_finishes_that_tool() {
    // Parallel tool calls: Read's result lands before the message's WebFetch line is written.
    let lines = [
        prompt(0, "go"),
        tool_use(5, "m1", "t1", "Read"),
        tool_result(6, "t1"),
        tool_use(7, "m1", "t2", "WebFetch"),
    ];
    let s = at(&lines, 8);
    assert_eq!(s.reason.as_deref(), Some("tool: WebFetch"), "Read is done");
    // Through the backward reader too.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.jsonl");
    let body: String = lines.iter().map(|v| format!("{v}\n")).collect();
    std::fs::write(&path, body).unwrap();
    let (_, s) = agentpane::transcript::classify_file(
        &path,
        None,
        t(8),
        &Windows::default(),
        Observation::default(),
    )
    .unwrap();
    assert_eq!(s.reason.as_deref(), Some("tool: WebFetch"));
}
