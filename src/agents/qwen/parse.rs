//! Qwen Code chat-log line → event (docs/agents/qwen.md). Records are Claude-style envelopes
//! (`uuid`, `parentUuid`, `timestamp`, `type` `user` / `assistant` / `tool_result` /
//! `system`) around Gemini-style `message.parts` (`text`, `functionCall`, `functionResponse`).
//!
//! What 0.24.4 writes, read from fixtures/real-clients/qwen-0.24.4:
//! - a prompt is a `user` record; the answer one `assistant` record written whole when the
//!   stream ends, with `usageMetadata` — the turn's end (there is no turn-end record);
//! - a tool call is an `assistant` record with `functionCall` parts (and `usageMetadata` too),
//!   its outcome a `tool_result` record; a call refused at its approval prompt comes back as
//!   a `tool_result` with `toolCallResult.status: cancelled`;
//! - Escape mid-stream leaves an `assistant` record *without* `usageMetadata` (the part
//!   streamed so far) and nothing else;
//! - a failed API call leaves only a `system` `ui_telemetry` record
//!   `qwen-code.api_error` with `status_code` and `error_message`, one per attempt;
//! - a background memory extractor writes `qwen-code.api_response` telemetry after the
//!   answer, marked by `subagent_name` and a `prompt_id` of its own.

use serde_json::Value;

use crate::agents::fields::{self, bounded, str_of};
use crate::events::{ApiError, Event, EventKind};

/// The `prompt_id` separator of the main conversation (`<sessionId>########<n>`); a
/// subagent's reads `<sessionId>#<agent>#<n>`.
const MAIN_PROMPT: &str = "########";

/// Parses one complete line.
pub fn parse_line(line: &[u8]) -> Option<Event> {
    let value: Value = serde_json::from_slice(line).ok()?;
    parse_value(&value)
}

/// Parses an already decoded record.
pub fn parse_value(v: &Value) -> Option<Event> {
    let obj = v.as_object()?;
    let ty = obj.get("type")?.as_str()?;
    let kind = match ty {
        "user" => user_kind(v),
        "assistant" => assistant_kind(v),
        "tool_result" => tool_result_kind(v),
        "system" => system_kind(v),
        _ => EventKind::Meta,
    };
    let at = match kind {
        EventKind::Meta => None,
        _ => fields::time(obj.get("timestamp")),
    };
    // A failed call is keyed by its prompt (`<sessionId>########<n>`), not its record: the
    // client retries a 429 up to 17 times, one record each, and that is one turn to alert.
    let key = match kind {
        EventKind::ApiError(_) => ui_event(v).and_then(|e| str_of(e, "prompt_id")),
        _ => None,
    }
    .or_else(|| str_of(v, "uuid"));
    Some(Event {
        kind,
        sidechain: is_subagent(v),
        at,
        key: key.map(str::to_string),
        message_id: None,
    })
}

/// A line too large to decode (a huge tool output or pasted prompt): its type, ids and time
/// from the head and tail fragments. The envelope (`uuid`, `type`) comes first in every
/// record 0.24.4 writes; the timestamp sits in the head too.
pub fn parse_fragments(head: &[u8], tail: &[u8]) -> Option<Event> {
    let ty = fields::scan_str(head, "type")?;
    let kind = match ty {
        "user" => EventKind::UserPrompt,
        "tool_result" => {
            let ids: Vec<String> = fields::scan_all(head, "id")
                .into_iter()
                .take(1)
                .chain(fields::scan_all(tail, "callId"))
                .map(str::to_string)
                .collect();
            if fields::scan_str(tail, "status") == Some("cancelled") {
                EventKind::Interrupted
            } else {
                EventKind::ToolResult { ids }
            }
        }
        "assistant" => EventKind::AssistantOther,
        _ => EventKind::Meta,
    };
    let time = fields::scan_str(head, "timestamp").or_else(|| fields::scan_str(tail, "timestamp"));
    let at = match kind {
        EventKind::Meta => None,
        _ => time
            .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
            .map(|t| t.with_timezone(&chrono::Utc)),
    };
    Some(Event {
        kind,
        sidechain: false,
        at,
        key: fields::scan_str(head, "uuid").map(str::to_string),
        message_id: None,
    })
}

fn parts(v: &Value) -> &[Value] {
    v.get("message")
        .and_then(|m| m.get("parts"))
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

fn user_kind(v: &Value) -> EventKind {
    match str_of(v, "subtype") {
        // A plain prompt, or one typed while the turn runs ("Enter to steer").
        None | Some("mid_turn_user_message") => {}
        // Machine-made prompts (background notifications, cron, goals) start a turn too.
        Some("notification" | "cron" | "goal_runtime") => return EventKind::TurnStart,
        Some(_) => return EventKind::Meta,
    }
    let ids = response_ids(parts(v));
    if !ids.is_empty() {
        return EventKind::ToolResult { ids };
    }
    let has_text = parts(v)
        .iter()
        .any(|p| str_of(p, "text").is_some_and(|t| !t.trim().is_empty()));
    if has_text {
        EventKind::UserPrompt
    } else {
        EventKind::Meta
    }
}

fn response_ids(parts: &[Value]) -> Vec<String> {
    parts
        .iter()
        .filter_map(|p| p.get("functionResponse"))
        .map(|r| str_of(r, "id").or(str_of(r, "name")).unwrap_or_default())
        .map(str::to_string)
        .collect()
}

fn assistant_kind(v: &Value) -> EventKind {
    if str_of(v, "subtype").is_some() {
        // `realtime_message` and any later kind: not the main loop's reply.
        return EventKind::Meta;
    }
    let parts = parts(v);
    let (mut ids, mut names) = (Vec::new(), Vec::new());
    for call in parts.iter().filter_map(|p| p.get("functionCall")) {
        let name = str_of(call, "name").unwrap_or("tool");
        ids.push(str_of(call, "id").unwrap_or(name).to_string());
        names.push(name.to_string());
    }
    if !ids.is_empty() {
        return EventKind::ToolUse { ids, names };
    }
    let finished = v.get("usageMetadata").is_some_and(Value::is_object);
    let text = parts.iter().any(|p| {
        p.get("thought").and_then(Value::as_bool) != Some(true)
            && str_of(p, "text").is_some_and(|t| !t.trim().is_empty())
    });
    match (finished, text) {
        (true, true) => EventKind::AssistantText { closes: Some(true) },
        // The part of a reply streamed before Escape (or before the stream broke): 0.24.4
        // writes it without usage and nothing after it.
        (false, _) if !parts.is_empty() => EventKind::Interrupted,
        _ => EventKind::AssistantOther,
    }
}

fn tool_result_kind(v: &Value) -> EventKind {
    let status = v.get("toolCallResult").and_then(|r| str_of(r, "status"));
    if status == Some("cancelled") {
        // Refused at the approval prompt (Escape), or cancelled while it ran: the model is
        // not called again; the turn is back with the person.
        return EventKind::Interrupted;
    }
    let mut ids = response_ids(parts(v));
    if ids.is_empty() {
        if let Some(id) = v.get("toolCallResult").and_then(|r| str_of(r, "callId")) {
            ids.push(id.to_string());
        }
    }
    EventKind::ToolResult { ids }
}

fn system_kind(v: &Value) -> EventKind {
    match str_of(v, "subtype") {
        Some("ui_telemetry") => telemetry_kind(v),
        // Typed by the person at the input box (a built-in command, a rewind to an earlier
        // turn): between turns, control stays with them.
        Some("slash_command" | "rewind") => EventKind::LocalCommand,
        _ => EventKind::Meta,
    }
}

fn ui_event(v: &Value) -> Option<&Value> {
    v.get("systemPayload")?.get("uiEvent")
}

fn telemetry_kind(v: &Value) -> EventKind {
    let Some(event) = ui_event(v) else {
        return EventKind::Meta;
    };
    match str_of(event, "event.name") {
        Some("qwen-code.api_error") => EventKind::ApiError(api_error(v, event)),
        // A model reply arrived: proof of life (the record that carries it follows).
        Some("qwen-code.api_response") => EventKind::Progress,
        _ => EventKind::Meta,
    }
}

/// Telemetry of a subagent (the background memory extractor, a task agent): it never opens or
/// closes the main turn.
fn is_subagent(v: &Value) -> bool {
    let Some(event) = ui_event(v) else {
        return false;
    };
    str_of(event, "subagent_name").is_some_and(|n| !n.is_empty())
        || str_of(event, "prompt_id").is_some_and(|p| p.contains('#') && !p.contains(MAIN_PROMPT))
}

/// What a person should read about an `api_error` record, in the words the other adapters
/// use: `rate limit` / `quota exceeded` (429), `auth` (401, 403), `billing` (402), else
/// `api error <code>: <message>`. 0.24.4's `error_message` starts with the status code
/// (`429 Rate limit reached for mock-model`).
fn api_error(v: &Value, event: &Value) -> ApiError {
    let code = event.get("status_code").and_then(Value::as_u64);
    let message = str_of(event, "error_message").unwrap_or_default().trim();
    let detail = match code {
        Some(c) => message
            .strip_prefix(&c.to_string())
            .unwrap_or(message)
            .trim_start(),
        None => message,
    };
    let kind = crate::agents::retry::api_error_kind(code, message, detail);
    let text = bounded(message, 500);
    let resets_at = crate::agents::fields::reset_time(&text, fields::time(v.get("timestamp")));
    ApiError {
        kind,
        text,
        resets_at,
    }
}
