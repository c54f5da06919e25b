//! A stand-in for the OpenAI Responses API as Codex CLI uses it: `POST /v1/responses`
//! streamed as server-sent events (`response.created`, `response.output_item.added`,
//! `response.output_text.delta`, `response.output_item.done`, `response.completed`).
//!
//! The reply is chosen by the last user input of the request (the prompt typed into the TUI):
//!
//! | prompt contains | reply |
//! |---|---|
//! | `TOOL` | an `exec_command` call with `sandbox_permissions: "require_escalated"` (asks) |
//! | `SLOW` | an answer streamed word by word over [`SLOW_STREAM`] |
//! | `BAD` | HTTP 400 `invalid_request_error` |
//! | `QUOTA` | HTTP 429 `insufficient_quota` (Codex: "Quota exceeded", `usage_limit_exceeded`) |
//! | `RATE429` | HTTP 429 `rate_limit_exceeded` with `retry-after: 5` (Codex retries it) |
//! | `MULTI` | [`MULTI_ANSWER`] |
//! | anything else | [`PLAIN_ANSWER`] |
//!
//! A request whose last input item is a `function_call_output` gets [`TOOL_DONE`]. Side
//! requests without tools (the thread title) get a short title. Other paths are logged on
//! stderr and answered harmlessly (`/v1/models` with an empty list, the rest 404).
//!
//! Every reply carries the plan windows Codex reads from its `x-codex-primary-*` /
//! `x-codex-secondary-*` headers ([`PRIMARY`], [`SECONDARY`]), and every answer the same
//! token usage ([`USAGE`]).
//!
//! Codex 0.171 with an API key (`env_key`) sends request bodies uncompressed; a body with a
//! `content-encoding` is refused with 415 and logged so a client change is seen at once.

#![allow(dead_code)]

use std::time::Duration;

use serde_json::{json, Value};

use super::http::{MockServer, Reply, Request};

pub const PLAIN_ANSWER: &str = "The mock answer is 42.";
pub const MULTI_ANSWER: &str =
    "First line of the answer.\n\nSecond paragraph with `code`.\n- item one\n- item two";
pub const TOOL_DONE: &str = "The command ran; all done.";
/// The command the tool call asks to run (the approval prompt shows it).
pub const TOOL_COMMAND: &str = "touch approved.txt";
/// How long the slow answer streams.
pub const SLOW_STREAM: Duration = Duration::from_secs(12);
pub const BAD_MESSAGE: &str = "Invalid prompt: mock bad request";

/// A plan window the stand-in reports: used percent, window minutes, reset (epoch seconds).
pub type Window = (f64, u64, i64);
/// The five-hour window, as `x-codex-primary-*` headers.
pub const PRIMARY: Window = (42.0, 300, 1_900_000_000);
/// The weekly window, as `x-codex-secondary-*` headers.
pub const SECONDARY: Window = (12.0, 10080, 1_900_500_000);
/// What every answer used: input (of it cached), output, total tokens.
pub const USAGE: (u64, u64, u64, u64) = (1200, 1000, 34, 1234);

/// Starts the stand-in.
pub fn start() -> MockServer {
    MockServer::start(|req| respond(req).with_headers(plan_headers()))
}

/// The rate-limit headers of every reply.
fn plan_headers() -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (which, (used, minutes, reset)) in [("primary", PRIMARY), ("secondary", SECONDARY)] {
        let name = |what: &str| format!("x-codex-{which}-{what}");
        out.push((name("used-percent"), used.to_string()));
        out.push((name("window-minutes"), minutes.to_string()));
        out.push((name("reset-at"), reset.to_string()));
    }
    out
}

/// The text of the last user message of a `/v1/responses` body.
pub fn last_user_text(body: &Value) -> Option<String> {
    let input = body.get("input")?.as_array()?;
    let msg = input.iter().rev().find(|i| {
        i.get("type").and_then(Value::as_str) == Some("message") && i["role"] == "user"
    })?;
    let parts: Vec<&str> = msg
        .get("content")?
        .as_array()?
        .iter()
        .filter_map(|c| c.get("text").and_then(Value::as_str))
        .collect();
    Some(parts.join(""))
}

/// The `/v1/responses` requests that carry tools (real turns, not the title side request).
pub fn turn_requests(server: &MockServer) -> Vec<Value> {
    server
        .requests()
        .iter()
        .filter(|r| r.method == "POST" && r.path.starts_with("/v1/responses"))
        .filter_map(Request::json)
        .filter(has_tools)
        .collect()
}

fn has_tools(body: &Value) -> bool {
    body.get("tools")
        .and_then(Value::as_array)
        .is_some_and(|t| !t.is_empty())
}

fn respond(req: &Request) -> Reply {
    if req.method == "GET" && req.path.starts_with("/v1/models") {
        return Reply::json(200, json!({"object": "list", "data": [], "models": []}));
    }
    if req.method != "POST" || !req.path.starts_with("/v1/responses") {
        eprintln!(
            "openai stand-in: unknown request {} {}",
            req.method, req.path
        );
        return Reply::json(404, json!({"error": {"message": "not here"}}));
    }
    if let Some(enc) = req.header("content-encoding") {
        eprintln!("openai stand-in: compressed body ({enc}) is not decoded");
        return Reply::json(415, json!({"error": {"message": "compressed body"}}));
    }
    let Some(body) = req.json() else {
        eprintln!("openai stand-in: body is not JSON");
        return Reply::json(400, json!({"error": {"message": "not JSON"}}));
    };
    if !has_tools(&body) {
        return answer("Mock title");
    }
    let after_tool = body
        .get("input")
        .and_then(Value::as_array)
        .and_then(|i| i.last())
        .is_some_and(|i| i["type"] == "function_call_output");
    if after_tool {
        return answer(TOOL_DONE);
    }
    let prompt = last_user_text(&body).unwrap_or_default();
    if prompt.contains("QUOTA") {
        let e = json!({"error": {"type": "insufficient_quota", "code": "insufficient_quota",
            "message": "You exceeded your current quota."}});
        return Reply::json(429, e);
    }
    if prompt.contains("RATE429") {
        let e = json!({"error": {"type": "rate_limit_exceeded", "code": "rate_limit_exceeded",
            "message": "Rate limit reached for requests per min."}});
        return Reply::Body {
            status: 429,
            content_type: "application/json".into(),
            body: e.to_string(),
            headers: vec![("retry-after".into(), "5".into())],
        };
    }
    if prompt.contains("BAD") {
        let e = json!({"error": {"type": "invalid_request_error", "message": BAD_MESSAGE}});
        return Reply::json(400, e);
    }
    if prompt.contains("TOOL") {
        return tool_call();
    }
    if prompt.contains("SLOW") {
        return slow_answer();
    }
    if prompt.contains("MULTI") {
        return answer(MULTI_ANSWER);
    }
    answer(PLAIN_ANSWER)
}

fn event(data: Value) -> (String, String) {
    (
        data["type"].as_str().unwrap_or("").to_string(),
        data.to_string(),
    )
}

fn created() -> (String, String) {
    event(json!({"type": "response.created", "response": {"id": "resp_mock"}}))
}

fn completed() -> (String, String) {
    event(
        json!({"type": "response.completed", "response": {"id": "resp_mock", "usage": {
        "input_tokens": USAGE.0, "input_tokens_details": {"cached_tokens": USAGE.1},
        "output_tokens": USAGE.2, "output_tokens_details": null, "total_tokens": USAGE.3}}}),
    )
}

fn message(text: &str) -> Value {
    json!({"type": "message", "role": "assistant", "id": "msg_mock",
        "content": [{"type": "output_text", "text": text}]})
}

fn delta(text: &str) -> (String, String) {
    event(
        json!({"type": "response.output_text.delta", "item_id": "msg_mock",
        "output_index": 0, "content_index": 0, "delta": text}),
    )
}

fn answer(text: &str) -> Reply {
    let empty = json!({"type": "message", "role": "assistant", "id": "msg_mock", "content": []});
    Reply::sse(vec![
        created(),
        event(json!({"type": "response.output_item.added", "output_index": 0, "item": empty})),
        delta(text),
        event(
            json!({"type": "response.output_item.done", "output_index": 0, "item": message(text)}),
        ),
        completed(),
    ])
}

/// The slow answer: the words arrive one by one; the whole text is `slow_text()`.
pub fn slow_text() -> String {
    (0..SLOW_WORDS).map(|i| format!("word{i} ")).collect()
}

const SLOW_WORDS: u32 = 40;

fn slow_answer() -> Reply {
    let empty = json!({"type": "message", "role": "assistant", "id": "msg_mock", "content": []});
    let mut events = vec![
        created(),
        event(json!({"type": "response.output_item.added", "output_index": 0, "item": empty})),
    ];
    events.extend((0..SLOW_WORDS).map(|i| delta(&format!("word{i} "))));
    events.push(event(
        json!({"type": "response.output_item.done", "output_index": 0, "item": message(&slow_text())}),
    ));
    events.push(completed());
    Reply::sse_paced(events, SLOW_STREAM / SLOW_WORDS)
}

fn tool_call() -> Reply {
    let args = json!({"cmd": TOOL_COMMAND, "sandbox_permissions": "require_escalated",
        "justification": "the mock needs it"});
    let item = json!({"type": "function_call", "id": "fc_mock", "call_id": "call_mock",
        "name": "exec_command", "arguments": args.to_string()});
    Reply::sse(vec![
        created(),
        event(json!({"type": "response.output_item.added", "output_index": 0, "item": item})),
        event(json!({"type": "response.output_item.done", "output_index": 0, "item": item})),
        completed(),
    ])
}
