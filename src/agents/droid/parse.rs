//! Factory Droid session-log line → event (docs/agents/droid.md). A log is JSONL, append-only:
//! a header `{"type":"session_start","id","title","cwd",…}` (rewritten in place when the title
//! changes), then records of these types, as 0.225.2 writes them (fixtures/real-clients/droid-0.225.1):
//! - `message` around `message: {role, content: [parts]}` with an `id`, a `parentId` and a
//!   `timestamp`. A prompt is a `user` message with `userMessageSource`; the context droid adds
//!   before it is a `user` message with `visibility: "llm_only"` (id `context-…`); an answer is
//!   an `assistant` message of `text` parts; a tool call an `assistant` message of `tool_use`
//!   parts (`id`, `name`, `input`), answered by a `user` message of `tool_result` parts
//!   (`tool_use_id`). A call the person refused in its dialog is answered
//!   `Tool execution cancelled by user`.
//! - A failed API call is a `user` message too: `BYOK Error: 400 …` (or `429 …`), shown to the
//!   person (`visibility: "user_only"`). Escape is two `llm_only` user messages (`Request
//!   cancelled by user`, `Request interrupted by user`).
//! - `agent_turn_outcome` `{turnId, reason}` ends every turn: `completed`, `cancelled`,
//!   `model_request_rejected`, `model_rate_limited`, … It carries no time.
//!
//! A pending permission is written as nothing but its `tool_use`: the dialog is on the screen.

use serde_json::Value;

use crate::agents::fields::{self, bounded, str_of};
use crate::events::{ApiError, Event, EventKind};

/// The text droid answers a tool call with when the person said no in its dialog.
pub const REFUSED: &str = "Tool execution cancelled by user";

/// What droid writes when Escape stops a turn.
const CANCELLED: [&str; 2] = ["Request cancelled by user", "Request interrupted by user"];

/// The start of a failed API call's record.
pub const ERROR_PREFIX: &str = "BYOK Error:";

/// Parses one complete line.
pub fn parse_line(line: &[u8]) -> Option<Event> {
    let value: Value = serde_json::from_slice(line).ok()?;
    parse_value(&value)
}

/// Whether a record is of droid's session-log format.
pub fn owns(record: &serde_json::Map<String, Value>) -> bool {
    match record.get("type").and_then(Value::as_str) {
        Some("session_start") => record.contains_key("cwd") && record.contains_key("hostId"),
        Some("agent_turn_outcome") => record.contains_key("turnId"),
        Some("message") => {
            record
                .get("message")
                .and_then(|m| m.get("role"))
                .is_some_and(Value::is_string)
                && record
                    .get("id")
                    .and_then(Value::as_str)
                    .is_some_and(droid_id)
        }
        _ => false,
    }
}

/// Whether the head of a line too large to decode is of droid's log format.
pub fn owns_fragment(head: &[u8]) -> bool {
    fields::scan_str(head, "type") == Some("message")
        && fields::scan_str(head, "id").is_some_and(droid_id)
}

/// A record id as droid makes them: a uuid, or `context-<uuid>` for the context it adds
/// (pi's records, in the same envelope, have eight hex digits).
fn droid_id(id: &str) -> bool {
    super::locate::is_uuid(id.strip_prefix("context-").unwrap_or(id))
}

/// Parses an already decoded record.
pub fn parse_value(v: &Value) -> Option<Event> {
    let ty = str_of(v, "type")?;
    let key = str_of(v, "id").map(str::to_string);
    let (kind, key) = match ty {
        "message" => (message_kind(v, v.get("message")?), key),
        "agent_turn_outcome" => (
            outcome_kind(str_of(v, "reason").unwrap_or_default()),
            str_of(v, "turnId").map(str::to_string),
        ),
        _ => (EventKind::Meta, key),
    };
    let at = match kind {
        EventKind::Meta => None,
        _ => fields::time(v.get("timestamp")),
    };
    let message_id = matches!(kind, EventKind::ToolUse { .. })
        .then(|| key.clone())
        .flatten();
    Some(Event {
        kind,
        sidechain: false,
        at,
        key,
        message_id,
    })
}

/// A line too large to decode (a huge tool output or pasted prompt): its kind from the head,
/// its time from the envelope, which comes first.
pub fn parse_fragments(head: &[u8], _tail: &[u8]) -> Option<Event> {
    let ty = fields::scan_str(head, "type")?;
    let role = fields::scan_str(head, "role");
    let kind = match (ty, role) {
        ("message", Some("user")) if fields::scan_str(head, "tool_use_id").is_some() => {
            EventKind::ToolResult {
                ids: fields::scan_all(head, "tool_use_id")
                    .into_iter()
                    .map(str::to_string)
                    .collect(),
            }
        }
        ("message", Some("user")) if fields::scan_str(head, "visibility").is_some() => {
            EventKind::Meta
        }
        ("message", Some("user")) => EventKind::UserPrompt,
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

/// What an `agent_turn_outcome` says: Escape interrupted the turn, anything else ended it (a
/// failed call's own record came before and stays the word on it).
fn outcome_kind(reason: &str) -> EventKind {
    match reason {
        "cancelled" | "interrupted" => EventKind::Interrupted,
        _ => EventKind::TurnEnd,
    }
}

fn message_kind(record: &Value, m: &Value) -> EventKind {
    match str_of(m, "role") {
        Some("user") => user_kind(record, m),
        Some("assistant") => assistant_kind(m),
        _ => EventKind::Meta,
    }
}

fn user_kind(record: &Value, m: &Value) -> EventKind {
    let results: Vec<&Value> = parts(m)
        .iter()
        .filter(|p| str_of(p, "type") == Some("tool_result"))
        .collect();
    if !results.is_empty() {
        let refused = results
            .iter()
            .any(|p| p.get("content").and_then(Value::as_str) == Some(REFUSED));
        if refused {
            return EventKind::Interrupted;
        }
        return EventKind::ToolResult {
            ids: results
                .iter()
                .filter_map(|p| str_of(p, "tool_use_id"))
                .map(str::to_string)
                .collect(),
        };
    }
    let text = text_of(m);
    if let Some(error) = text.strip_prefix(ERROR_PREFIX) {
        return EventKind::ApiError(api_error(error, record));
    }
    match str_of(m, "visibility").or_else(|| str_of(record, "visibility")) {
        Some(_) if CANCELLED.contains(&text.trim()) => EventKind::Interrupted,
        // The context droid adds for the model, or a notice for the person.
        Some(_) => EventKind::Meta,
        None if text.trim().is_empty() && !has_image(m) => EventKind::Meta,
        None => EventKind::UserPrompt,
    }
}

fn assistant_kind(m: &Value) -> EventKind {
    let calls: Vec<(String, String)> = parts(m)
        .iter()
        .filter(|p| str_of(p, "type") == Some("tool_use"))
        .map(|p| {
            (
                str_of(p, "id").unwrap_or_default().to_string(),
                str_of(p, "name").unwrap_or("tool").to_string(),
            )
        })
        .collect();
    if !calls.is_empty() {
        let (ids, names) = calls.into_iter().unzip();
        return EventKind::ToolUse { ids, names };
    }
    if text_of(m).trim().is_empty() {
        return EventKind::AssistantOther;
    }
    // The turn ends with its `agent_turn_outcome`, not with a text: another call may follow.
    EventKind::AssistantText {
        closes: Some(false),
    }
}

/// The content parts of a message (`content` is a string for some messages).
pub fn parts(m: &Value) -> &[Value] {
    m.get("content")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// The text of a message: a string `content`, or its `text` parts joined.
pub fn text_of(m: &Value) -> String {
    match m.get("content") {
        Some(Value::String(s)) => s.clone(),
        _ => parts(m)
            .iter()
            .filter(|p| str_of(p, "type") == Some("text"))
            .filter_map(|p| str_of(p, "text"))
            .collect::<Vec<_>>()
            .join("\n"),
    }
}

fn has_image(m: &Value) -> bool {
    parts(m).iter().any(|p| str_of(p, "type") == Some("image"))
}

/// `BYOK Error: 400 model stand-in does not exist\n\nUpstream error: …` as an API error: the
/// status, then the first line.
fn api_error(error: &str, record: &Value) -> ApiError {
    let first = error.trim().lines().next().unwrap_or_default().trim();
    let (code, detail) = match first.split_once(' ') {
        Some((c, rest)) if c.len() == 3 && c.bytes().all(|b| b.is_ascii_digit()) => {
            (c.parse::<u64>().ok(), rest.trim())
        }
        _ => (None, first),
    };
    let text = bounded(first, 500);
    ApiError {
        resets_at: crate::agents::fields::reset_time(&text, fields::time(record.get("timestamp"))),
        kind: crate::agents::retry::api_error_kind(code, first, detail),
        text,
    }
}
