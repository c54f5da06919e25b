//! pi session-log line → event (docs/agents/pi.md). A log is JSONL, append-only: a header
//! `{"type":"session","version","id","timestamp","cwd"}`, then entries `{type, id, parentId,
//! timestamp, …}` forming a tree by `parentId`. Conversation entries are `type: "message"`
//! around `message: {role, content, stopReason, errorMessage, …}`; the rest (`model_change`,
//! `thinking_level_change`, `label`, `session_info`, `custom`, `compaction`, `branch_summary`)
//! is bookkeeping.
//!
//! What 0.73.1 writes, read from fixtures/real-clients/pi-0.73.1 and its
//! `core/session-manager.js`:
//! - a prompt is a `user` message; an answer one `assistant` message written whole when its
//!   stream ends, `stopReason` `stop` (or `length`);
//! - a tool call is an `assistant` message with `toolCall` parts, `stopReason: "toolUse"`,
//!   each answered by a `toolResult` message (`toolCallId`); a call an extension blocked
//!   (the user said No) is a `toolResult` with `isError` and the turn goes on;
//! - a failed API call is an `assistant` message with `stopReason: "error"` and
//!   `errorMessage` (`400 model stand-in does not exist`); pi retries a retryable one
//!   (429, 5xx, overloaded, network) up to 3 times, one such record per attempt;
//! - Escape is an `assistant` message with `stopReason: "aborted"` (the text streamed so far).

use serde_json::Value;

use crate::agents::fields::{self, bounded, str_of};
use crate::events::{ApiError, Event, EventKind};

/// Parses one complete line.
pub fn parse_line(line: &[u8]) -> Option<Event> {
    let value: Value = serde_json::from_slice(line).ok()?;
    parse_value(&value)
}

/// Whether a record is of pi's session-log format.
pub fn owns(record: &serde_json::Map<String, Value>) -> bool {
    let ty = record.get("type").and_then(Value::as_str);
    match ty {
        Some("message") => record
            .get("message")
            .and_then(|m| m.get("role"))
            .is_some_and(Value::is_string),
        Some("session") => record.contains_key("version") && record.contains_key("cwd"),
        Some("model_change" | "thinking_level_change") => record.contains_key("parentId"),
        _ => false,
    }
}

/// Parses an already decoded record.
pub fn parse_value(v: &Value) -> Option<Event> {
    let obj = v.as_object()?;
    let ty = obj.get("type")?.as_str()?;
    let kind = match ty {
        "message" => message_kind(v.get("message")?),
        _ => EventKind::Meta,
    };
    let at = match kind {
        EventKind::Meta => None,
        _ => fields::time(obj.get("timestamp")),
    };
    let id = str_of(v, "id").map(str::to_string);
    let message_id = matches!(kind, EventKind::ToolUse { .. })
        .then(|| id.clone())
        .flatten();
    Some(Event {
        kind,
        sidechain: false,
        at,
        key: id,
        message_id,
    })
}

/// A line too large to decode (a huge tool output or pasted prompt): its kind from the head,
/// its time from the envelope, which comes first.
pub fn parse_fragments(head: &[u8], _tail: &[u8]) -> Option<Event> {
    let ty = fields::scan_str(head, "type")?;
    let kind = match (ty, fields::scan_str(head, "role")) {
        ("message", Some("user")) => EventKind::UserPrompt,
        ("message", Some("toolResult")) => EventKind::ToolResult {
            ids: fields::scan_str(head, "toolCallId")
                .map(str::to_string)
                .into_iter()
                .collect(),
        },
        ("message", Some("assistant")) => EventKind::AssistantOther,
        _ => EventKind::Meta,
    };
    let at = match kind {
        EventKind::Meta => None,
        _ => fields::scan_time(head, "timestamp"),
    };
    Some(Event {
        kind,
        sidechain: false,
        at,
        key: fields::scan_str(head, "id").map(str::to_string),
        message_id: None,
    })
}

fn message_kind(m: &Value) -> EventKind {
    match str_of(m, "role") {
        Some("user") => {
            if text_of(m).trim().is_empty() && !has_image(m) {
                EventKind::Meta
            } else {
                EventKind::UserPrompt
            }
        }
        Some("toolResult") => EventKind::ToolResult {
            ids: str_of(m, "toolCallId")
                .map(str::to_string)
                .into_iter()
                .collect(),
        },
        Some("assistant") => assistant_kind(m),
        // A shell command the person ran with `!` (its output is kept for the model).
        Some("bashExecution") => EventKind::LocalCommand,
        // Extension messages, branch and compaction summaries.
        _ => EventKind::Meta,
    }
}

fn assistant_kind(m: &Value) -> EventKind {
    match str_of(m, "stopReason") {
        Some("toolUse") => {
            let calls: Vec<(String, String)> = parts(m)
                .iter()
                .filter(|p| str_of(p, "type") == Some("toolCall"))
                .map(|p| {
                    (
                        str_of(p, "id").unwrap_or_default().to_string(),
                        str_of(p, "name").unwrap_or("tool").to_string(),
                    )
                })
                .collect();
            if calls.is_empty() {
                return EventKind::AssistantOther;
            }
            let (ids, names) = calls.into_iter().unzip();
            EventKind::ToolUse { ids, names }
        }
        Some("error") => {
            EventKind::ApiError(api_error(str_of(m, "errorMessage").unwrap_or_default(), m))
        }
        Some("aborted") => EventKind::Interrupted,
        // `stop`, `length`: the agent loop ends the turn.
        _ => EventKind::AssistantText { closes: Some(true) },
    }
}

/// The content parts of a message (`content` is a string for some user messages).
pub fn parts(m: &Value) -> &[Value] {
    m.get("content")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// The text of a message: a string `content`, or its `text` parts in order.
pub fn text_of(m: &Value) -> String {
    match m.get("content") {
        Some(Value::String(s)) => s.clone(),
        _ => {
            let texts: Vec<&str> = parts(m)
                .iter()
                .filter(|p| str_of(p, "type") == Some("text"))
                .filter_map(|p| str_of(p, "text"))
                .collect();
            texts.join("\n")
        }
    }
}

fn has_image(m: &Value) -> bool {
    parts(m).iter().any(|p| str_of(p, "type") == Some("image"))
}

/// pi's error text as an API error: the HTTP status it starts with (`429 …`) names the kind.
fn api_error(message: &str, m: &Value) -> ApiError {
    let message = message.trim();
    let (code, detail) = match message.split_once(' ') {
        Some((c, rest)) if c.len() == 3 && c.bytes().all(|b| b.is_ascii_digit()) => {
            (c.parse::<u16>().ok(), rest.trim())
        }
        _ => (None, message),
    };
    let lower = message.to_ascii_lowercase();
    // Without a status, pi's own words for a throttled call still say what it is.
    let kind = if code.is_none()
        && (lower.contains("rate limit") || lower.contains("too many requests"))
    {
        "rate limit".to_string()
    } else {
        crate::agents::retry::api_error_kind(code.map(u64::from), message, detail)
    };
    let text = bounded(message, 500);
    // The message's own `timestamp` is when the request started, in Unix milliseconds.
    let at = m
        .get("timestamp")
        .and_then(Value::as_i64)
        .and_then(chrono::DateTime::from_timestamp_millis);
    ApiError {
        resets_at: crate::agents::fields::reset_time(&text, at),
        kind,
        text,
    }
}

/// Whether pi retries a failed call with this error text by itself (0.73.1
/// `AgentSession._isRetryableError`: overloaded, rate limits, 429/5xx, network and timeout
/// errors). Read from the error text or from the reason agentpane made of it.
pub fn retryable(error: &str) -> bool {
    let l = error.to_ascii_lowercase();
    const PLAIN: [&str; 19] = [
        "overloaded",
        "too many requests",
        "429",
        "500",
        "502",
        "503",
        "504",
        "other side closed",
        "fetch failed",
        "reset before headers",
        "socket hang up",
        "ended without",
        "http2 request did not get a response",
        "timed out",
        "time out",
        "timeout",
        "terminated",
        "quota exceeded",
        "rate limit",
    ];
    // `a.?b` in pi's pattern: the two words with at most one character between them.
    const PAIRS: [(&str, &str); 12] = [
        ("provider", "returned"),
        ("rate", "limit"),
        ("service", "unavailable"),
        ("server", "error"),
        ("internal", "error"),
        ("network", "error"),
        ("connection", "error"),
        ("connection", "refused"),
        ("connection", "lost"),
        ("websocket", "closed"),
        ("websocket", "error"),
        ("retry", "delay"),
    ];
    PLAIN.iter().any(|p| l.contains(p)) || PAIRS.iter().any(|(a, b)| near(&l, a, b))
}

/// `a`, then at most one character, then `b`.
fn near(hay: &str, a: &str, b: &str) -> bool {
    hay.match_indices(a).any(|(i, _)| {
        let rest = &hay[i + a.len()..];
        rest.starts_with(b)
            || rest
                .chars()
                .next()
                .is_some_and(|c| rest[c.len_utf8()..].starts_with(b))
    })
}
