//! Kimi Code `wire.jsonl` line (`{type, agentId, …, time}`, `time` in epoch milliseconds) →
//! event (docs/agents/kimi.md#turns).
//!
//! A human prompt is `turn.prompt` (`origin.kind` `user`); the agent loop runs one *step* per
//! model call (`context.append_loop_event` with `event.type` `step.begin` … `step.end`), tool
//! calls inside them (`tool.call`, `tool.result`). A permission request is
//! `interaction.request` (its `id`), answered by `interaction.resolved` of the same id. The
//! turn ends with `turn.ended`: `reason` `completed`, `cancelled` (Escape) or `failed` (an API
//! error it does not retry, its `error` beside it). A call it retries (a 429 rate limit) is
//! `turn.step.retrying`
//! before each wait. The `agent.*` records (`"kind":"event"`) repeat
//! what the others say and are bookkeeping here.

use serde_json::Value;

use crate::agents::fields::{bounded, str_of};
use crate::events::{ApiError, Event, EventKind, Time};

/// Parses one complete line.
pub fn parse_line(line: &[u8]) -> Option<Event> {
    let value: Value = serde_json::from_slice(line).ok()?;
    parse_value(&value)
}

/// Parses an already decoded record.
pub fn parse_value(v: &Value) -> Option<Event> {
    let ty = str_of(v, "type")?;
    let kind = kind_of(ty, v);
    let at = if kind == EventKind::Meta {
        None
    } else {
        time(v)
    };
    Some(Event {
        kind,
        sidechain: is_subagent(v),
        at,
        key: turn_key(v),
        message_id: None,
    })
}

/// The record's own time (`time`, epoch milliseconds).
pub fn time(v: &Value) -> Option<Time> {
    chrono::DateTime::from_timestamp_millis(v.get("time")?.as_i64()?)
}

/// Written by a subagent (its own `agentId`; the main agent's is `main`).
fn is_subagent(v: &Value) -> bool {
    str_of(v, "agentId").is_some_and(|a| a != "main")
}

/// The turn a record belongs to (`turnId`, a number on the wire records, a string inside loop
/// events).
fn turn_key(v: &Value) -> Option<String> {
    let id = v
        .get("turnId")
        .or_else(|| v.get("event").and_then(|e| e.get("turnId")))?;
    match id {
        Value::Number(n) => Some(n.to_string()),
        Value::String(s) => Some(s.clone()),
        _ => None,
    }
}

/// What a record of type `ty` means.
pub fn kind_of(ty: &str, v: &Value) -> EventKind {
    match ty {
        "turn.prompt" if v["origin"]["kind"] == "user" => EventKind::UserPrompt,
        "turn.prompt" => EventKind::TurnStart,
        "context.append_loop_event" => loop_event(&v["event"]),
        "interaction.request" => EventKind::AwaitingHuman {
            ids: str_of(v, "id")
                .map(|s| vec![s.to_string()])
                .unwrap_or_default(),
            reason: reason(&v["request"]),
        },
        "interaction.resolved" => EventKind::ToolResult {
            ids: str_of(v, "id")
                .map(|s| vec![s.to_string()])
                .unwrap_or_default(),
        },
        "turn.cancel" => EventKind::Interrupted,
        "turn.ended" => match str_of(v, "reason") {
            Some("cancelled") => EventKind::Interrupted,
            Some("failed") => EventKind::ApiError(api_error(v)),
            _ => EventKind::TurnEnd,
        },
        // A failed model call it retries (a 429 `rate_limit_exceeded`, up to 10 attempts,
        // growing waits): the error stands until what the next attempt brings.
        "turn.step.retrying" => EventKind::ApiError(retry_error(v)),
        "usage.record" | "turn.step.interrupted" => EventKind::Progress,
        "context.compaction.begin" | "compaction.begin" => EventKind::Compaction,
        _ => EventKind::Meta,
    }
}

/// One event of the agent loop.
fn loop_event(e: &Value) -> EventKind {
    match str_of(e, "type").unwrap_or_default() {
        // A model call starting (`llm.request` with it) says nothing a prompt or a tool
        // result has not: after a retried error, the error stands while it runs.
        "step.begin" => EventKind::Meta,
        "step.end" if str_of(e, "finishReason") == Some("error") => EventKind::Meta,
        // A step that answered without tool calls: the answer, and the turn ends with it.
        "step.end" if str_of(e, "finishReason") == Some("end_turn") => {
            EventKind::AssistantText { closes: Some(true) }
        }
        "step.end" => EventKind::Progress,
        "content.part" if e["part"]["type"] == "text" => EventKind::AssistantText { closes: None },
        "content.part" => EventKind::AssistantOther,
        "tool.call" => EventKind::ToolUse {
            ids: str_of(e, "toolCallId")
                .map(|s| vec![s.to_string()])
                .unwrap_or_default(),
            names: str_of(e, "name")
                .map(|s| vec![s.to_string()])
                .unwrap_or_default(),
        },
        "tool.result" => EventKind::ToolResult {
            ids: str_of(e, "toolCallId")
                .map(|s| vec![s.to_string()])
                .unwrap_or_default(),
        },
        _ => EventKind::Progress,
    }
}

/// The `waiting` reason of a permission request: `permission: Bash (touch hello.txt)`.
pub fn reason(request: &Value) -> String {
    let tool = str_of(request, "toolName").unwrap_or("tool");
    match detail(request) {
        Some(d) => format!("permission: {tool} ({})", bounded(d, 200)),
        None => format!("permission: {tool}"),
    }
}

/// What a permission request is about: the command, else the action it describes.
pub fn detail(request: &Value) -> Option<&str> {
    str_of(&request["display"], "command")
        .or_else(|| str_of(request, "action"))
        .filter(|d| !d.is_empty())
}

/// A failed turn's error (`turn.ended` `error`: `message` `400 model … does not exist`, its
/// status in `details.statusCode`).
fn api_error(v: &Value) -> ApiError {
    let error = &v["error"];
    let message = str_of(error, "message").unwrap_or("error").trim();
    error_of(error["details"]["statusCode"].as_u64(), message, time(v))
}

/// An API error from its status and message (`400 model … does not exist`).
fn error_of(status: Option<u64>, message: &str, at: Option<Time>) -> ApiError {
    let detail = match status {
        Some(c) => message
            .strip_prefix(&c.to_string())
            .unwrap_or(message)
            .trim(),
        None => message,
    };
    let text = bounded(message, 500);
    ApiError {
        kind: crate::agents::retry::api_error_kind(status, message, detail),
        resets_at: crate::agents::fields::reset_time(&text, at),
        text,
    }
}

/// The error of a model call it retries (`turn.step.retrying`: `statusCode`,
/// `errorMessage` `429 rate limited, slow down`).
fn retry_error(v: &Value) -> ApiError {
    let message = str_of(v, "errorMessage").unwrap_or("error").trim();
    let status = v["statusCode"].as_u64();
    error_of(status, message, time(v))
}

/// Whether a record is Kimi Code's: a dotted `type` and a millisecond `time`, plus its
/// `agentId` or its `"kind":"event"` envelope (the first record, `metadata`, names the
/// protocol).
pub fn owns(record: &serde_json::Map<String, Value>) -> bool {
    let ty = record
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if ty == "metadata" {
        return record.contains_key("protocol_version");
    }
    ty.contains('.')
        && record.get("time").is_some_and(Value::is_i64)
        && (record.contains_key("agentId") || record.get("kind").is_some_and(|k| k == "event"))
}

/// A line too large to parse (a tool result, the tools snapshot): what its type says.
pub fn parse_fragments(head: &[u8], tail: &[u8]) -> Option<Event> {
    let ty = crate::agents::fields::scan_str(head, "type")?;
    let kind = match ty {
        "turn.prompt" => EventKind::UserPrompt,
        // A loop event this large (a huge text part or tool result): the turn is alive.
        "context.append_loop_event" => EventKind::Progress,
        _ => EventKind::Meta,
    };
    let at = match kind {
        EventKind::Meta => None,
        _ => scan_millis(tail),
    };
    Some(Event {
        kind,
        sidechain: crate::agents::fields::scan_str(head, "agentId").is_some_and(|a| a != "main"),
        at,
        key: None,
        message_id: None,
    })
}

/// The last `"time":<millis>` in a fragment.
fn scan_millis(fragment: &[u8]) -> Option<Time> {
    let text = std::str::from_utf8(fragment).ok()?;
    let at = text.rfind("\"time\":")? + "\"time\":".len();
    let digits: String = text[at..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    chrono::DateTime::from_timestamp_millis(digits.parse().ok()?)
}

/// The usage one model call reports (`usage.record`: `inputOther`, `inputCacheRead`,
/// `inputCacheCreation`, `output`).
pub fn usage(line: &[u8]) -> Option<crate::usage::Reading> {
    let v: Value = serde_json::from_slice(line).ok()?;
    if str_of(&v, "type") != Some("usage.record") || is_subagent(&v) {
        return None;
    }
    let u = &v["usage"];
    let n = |k: &str| u[k].as_u64().unwrap_or(0);
    let input = n("inputOther") + n("inputCacheRead") + n("inputCacheCreation");
    Some(crate::usage::Reading {
        // `__kimi_env_model__` is its alias for a model named by the environment, no name.
        model: str_of(&v, "model")
            .filter(|m| !m.starts_with("__"))
            .map(str::to_string),
        context_tokens: Some(input),
        input,
        output: n("output"),
        at: time(&v),
        ..Default::default()
    })
}
