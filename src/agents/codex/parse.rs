//! Codex rollout line (`{timestamp, type, payload}`) → event (docs/design.md#turns-per-agent).

use serde_json::Value;

use crate::agents::fields::{self, bounded, str_of};
use crate::events::{ApiError, Event, EventKind};

/// Parses one complete line.
pub fn parse_line(line: &[u8]) -> Option<Event> {
    let value: Value = serde_json::from_slice(line).ok()?;
    parse_value(&value)
}

/// Parses an already decoded record.
pub fn parse_value(v: &Value) -> Option<Event> {
    let ty = str_of(v, "type")?;
    let payload = v.get("payload").unwrap_or(&Value::Null);
    let at = fields::time(v.get("timestamp"));
    let kind = match ty {
        "event_msg" => event_kind(payload, at),
        "response_item" => response_kind(payload),
        "compacted" => EventKind::Compaction,
        _ => EventKind::Meta,
    };
    Some(Event {
        at: if kind == EventKind::Meta { None } else { at },
        kind,
        sidechain: false,
        key: str_of(payload, "turn_id").map(str::to_string),
        message_id: None,
    })
}

/// A line too large to parse: type and call id from the head fragment.
pub fn parse_fragments(head: &[u8], _tail: &[u8]) -> Option<Event> {
    let at = fields::scan_str(head, "timestamp")
        .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
        .map(|t| t.with_timezone(&chrono::Utc));
    let inner: Vec<&str> = fields::scan_all(head, "type");
    let kind = if inner.iter().any(|t| t.ends_with("_output")) {
        EventKind::ToolResult {
            ids: fields::scan_str(head, "call_id")
                .map(|s| vec![s.to_string()])
                .unwrap_or_default(),
        }
    } else {
        EventKind::Progress
    };
    Some(Event {
        kind,
        sidechain: false,
        at,
        key: None,
        message_id: None,
    })
}

fn event_kind(p: &Value, at: Option<crate::events::Time>) -> EventKind {
    match str_of(p, "type").unwrap_or_default() {
        "task_started" | "turn_started" | "turn/started" => EventKind::TurnStart,
        "user_message" => EventKind::UserPrompt,
        // Codex 0.171 writes no `user_message`: a prompt is a `response_item` role user (also
        // used for injected context, so not a prompt by itself) plus this.
        "item_completed"
            if p.pointer("/item/type").and_then(Value::as_str) == Some("UserMessage") =>
        {
            EventKind::UserPrompt
        }
        "agent_message" => EventKind::AssistantOther,
        "task_complete" | "turn_complete" | "turn/completed" => match failed_turn(p) {
            Some(err) => EventKind::ApiError(err),
            None => EventKind::TurnEnd,
        },
        "turn_aborted" => EventKind::Interrupted,
        "error" => EventKind::ApiError(ApiError {
            kind: error_reason(
                str_of(p, "message").unwrap_or_default(),
                str_of(p, "codex_error_info"),
            ),
            text: bounded(str_of(p, "message").unwrap_or_default(), 500),
            resets_at: None,
        }),
        "stream_error" => EventKind::Recovering,
        "exec_command_begin" | "patch_apply_begin" | "mcp_tool_call_begin" => EventKind::ToolUse {
            ids: call_id(p),
            names: vec![tool_name(p).to_string()],
        },
        "exec_approval_request" | "apply_patch_approval_request" => EventKind::ToolUse {
            ids: call_id(p),
            names: vec![tool_name(p).to_string()],
        },
        "exec_command_end" | "patch_apply_end" | "mcp_tool_call_end" => {
            EventKind::ToolResult { ids: call_id(p) }
        }
        "token_count" => rate_limit(p, at).unwrap_or(EventKind::Progress),
        "agent_reasoning" | "agent_reasoning_raw_content" | "agent_reasoning_section_break" => {
            EventKind::Progress
        }
        _ => EventKind::Meta,
    }
}

/// A turn that ended on an error: Codex 0.171 puts it inside `task_complete`
/// (`last_agent_message: null`, `error: {message, codex_error_info}`).
pub fn failed_turn(p: &Value) -> Option<ApiError> {
    let err = p.get("error").filter(|e| e.is_object())?;
    let message = str_of(err, "message").unwrap_or_default();
    Some(ApiError {
        kind: error_reason(message, str_of(err, "codex_error_info")),
        text: bounded(message, 500),
        resets_at: None,
    })
}

/// Words a person acts on for a turn's error: the message, or for a raw API body (`{"error":
/// {"type", "message"}}`) its type and message; the internal code only when nothing else is
/// there.
fn error_reason(message: &str, info: Option<&str>) -> String {
    let api = serde_json::from_str::<Value>(message)
        .ok()
        .and_then(|v| v.get("error").cloned());
    let text = match api {
        Some(e) => [str_of(&e, "type"), str_of(&e, "message")]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(": "),
        None => message
            .lines()
            .next()
            .unwrap_or_default()
            .trim()
            .to_string(),
    };
    let text = if text.is_empty() {
        info.unwrap_or("error").replace('_', " ")
    } else {
        text
    };
    bounded(&text, 120)
}

fn response_kind(p: &Value) -> EventKind {
    match str_of(p, "type").unwrap_or_default() {
        "message" => match str_of(p, "role") {
            Some("assistant") => EventKind::AssistantOther,
            Some("user") => EventKind::Progress,
            _ => EventKind::Meta,
        },
        "function_call" | "custom_tool_call" | "local_shell_call" => EventKind::ToolUse {
            ids: call_id(p),
            names: vec![str_of(p, "name").unwrap_or("shell").to_string()],
        },
        "function_call_output" | "custom_tool_call_output" => {
            EventKind::ToolResult { ids: call_id(p) }
        }
        "reasoning" => EventKind::Progress,
        _ => EventKind::Meta,
    }
}

fn call_id(p: &Value) -> Vec<String> {
    str_of(p, "call_id")
        .map(|s| vec![s.to_string()])
        .unwrap_or_default()
}

fn tool_name(p: &Value) -> &str {
    match str_of(p, "type") {
        Some(t) if t.starts_with("patch_apply") || t.starts_with("apply_patch") => "apply_patch",
        Some(t) if t.starts_with("mcp") => "mcp",
        _ => "shell",
    }
}

/// `token_count` with `rate_limits.rate_limit_reached_type` set: the account hit a limit.
fn rate_limit(p: &Value, at: Option<crate::events::Time>) -> Option<EventKind> {
    let limits = p
        .get("rate_limits")
        .or_else(|| p.get("info").and_then(|i| i.get("rate_limits")))?;
    let reached = str_of(limits, "rate_limit_reached_type")?;
    let resets_at = ["primary", "secondary"]
        .iter()
        .filter_map(|w| limits.get(*w))
        .filter_map(|w| {
            w.get("resets_at")
                .and_then(Value::as_i64)
                .and_then(|s| chrono::DateTime::from_timestamp(s, 0))
                .or_else(|| {
                    let secs = w.get("resets_in_seconds").and_then(Value::as_i64)?;
                    Some(at? + chrono::Duration::seconds(secs))
                })
        })
        .max();
    Some(EventKind::ApiError(ApiError {
        kind: "rate_limit".into(),
        text: format!("rate limit reached ({reached})"),
        resets_at,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(line: &str) -> EventKind {
        parse_line(line.as_bytes()).expect("parses").kind
    }

    #[test]
    fn lifecycle_events() {
        let ts = r#""timestamp":"2026-06-05T04:58:20.657Z""#;
        assert_eq!(
            kind(&format!(
                r#"{{{ts},"type":"event_msg","payload":{{"type":"task_started","turn_id":"t"}}}}"#
            )),
            EventKind::TurnStart
        );
        assert_eq!(
            kind(&format!(
                r#"{{{ts},"type":"event_msg","payload":{{"type":"task_complete","turn_id":"t","last_agent_message":"x"}}}}"#
            )),
            EventKind::TurnEnd
        );
        assert_eq!(
            kind(&format!(
                r#"{{{ts},"type":"event_msg","payload":{{"type":"turn_aborted","reason":"interrupted"}}}}"#
            )),
            EventKind::Interrupted
        );
        match kind(&format!(
            r#"{{{ts},"type":"event_msg","payload":{{"type":"error","message":"boom","codex_error_info":"other"}}}}"#
        )) {
            EventKind::ApiError(e) => assert_eq!(e.kind, "boom", "the reason is the message"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn function_calls_pair_by_call_id() {
        let call = r#"{"timestamp":"2026-06-05T04:58:20Z","type":"response_item","payload":{"type":"function_call","name":"shell","call_id":"c1","arguments":"{}"}}"#;
        assert_eq!(
            kind(call),
            EventKind::ToolUse {
                ids: vec!["c1".into()],
                names: vec!["shell".into()]
            }
        );
        let out = r#"{"timestamp":"2026-06-05T04:58:21Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":"ok"}}"#;
        assert_eq!(
            kind(out),
            EventKind::ToolResult {
                ids: vec!["c1".into()]
            }
        );
    }

    fn fixture(name: &str) -> Vec<Event> {
        let path = format!(
            "{}/fixtures/real-clients/codex-0.171.0/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        std::fs::read_to_string(path)
            .expect("fixture")
            .lines()
            .filter_map(|l| parse_line(l.as_bytes()))
            .collect()
    }

    /// Codex 0.171 (recorded): HTTP 429 quota and HTTP 400 end the turn with `task_complete`
    /// carrying an `error`; both are attention naming the error, not a closed turn.
    #[test]
    fn task_complete_with_error_is_attention() {
        let errors: Vec<ApiError> = fixture("tool-answer-quota-bad.jsonl")
            .into_iter()
            .filter_map(|e| match e.kind {
                EventKind::ApiError(err) => Some(err),
                _ => None,
            })
            .collect();
        assert_eq!(errors.len(), 2, "{errors:?}");
        assert_eq!(
            errors[0].kind,
            "Quota exceeded. Check your plan and billing details."
        );
        assert_eq!(
            errors[1].kind,
            "invalid_request_error: Invalid prompt: mock bad request"
        );
    }

    /// Codex 0.171 (recorded): a prompt is `response_item` role user + `item_completed`
    /// UserMessage; the latter starts the turn.
    #[test]
    fn item_completed_user_message_is_a_prompt() {
        let kinds: Vec<EventKind> = fixture("prompt-after-answer.jsonl")
            .into_iter()
            .map(|e| e.kind)
            .collect();
        assert_eq!(kinds.last(), Some(&EventKind::UserPrompt), "{kinds:?}");
        assert_eq!(
            kinds
                .iter()
                .filter(|k| **k == EventKind::UserPrompt)
                .count(),
            1
        );
    }

    #[test]
    fn rate_limit_reached_is_attention_with_reset() {
        let line = r#"{"timestamp":"2026-06-05T04:58:20Z","type":"event_msg","payload":{"type":"token_count","info":null,"rate_limits":{"primary":{"used_percent":100.0,"window_minutes":300,"resets_in_seconds":600},"rate_limit_reached_type":"primary"}}}"#;
        match kind(line) {
            EventKind::ApiError(e) => {
                assert_eq!(e.kind, "rate_limit");
                assert_eq!(
                    e.resets_at.unwrap().to_rfc3339(),
                    "2026-06-05T05:08:20+00:00"
                );
            }
            other => panic!("{other:?}"),
        }
        let fine = r#"{"timestamp":"2026-06-05T04:58:20Z","type":"event_msg","payload":{"type":"token_count","rate_limits":{"rate_limit_reached_type":null}}}"#;
        assert_eq!(kind(fine), EventKind::Progress);
    }
}
