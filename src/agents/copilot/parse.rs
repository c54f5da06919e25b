//! Copilot CLI `events.jsonl` line (`{type, data, id, timestamp, parentId, agentId?}`) → event
//! (docs/agents/copilot.md#turns).
//!
//! One human prompt is one *interaction* (`data.interactionId`); inside it the agent loop runs
//! one *turn* per model call (`assistant.turn_start` … `assistant.turn_end`, `turnId` "0", "1",
//! …). So `assistant.turn_end` does not end what agentpane calls a turn: it follows every
//! model call, tool calls included. The interaction is over when a model call answers without
//! tool requests (`assistant.message` with `toolRequests: []`), is aborted (`abort`) or fails
//! (`session.error`, written only after Copilot's own retries).

use serde_json::Value;

use crate::agents::fields::{self, bounded, str_of};
use crate::events::{ApiError, Event, EventKind, Time};

/// Parses one complete line.
pub fn parse_line(line: &[u8]) -> Option<Event> {
    let value: Value = serde_json::from_slice(line).ok()?;
    parse_value(&value)
}

/// Parses an already decoded record.
pub fn parse_value(v: &Value) -> Option<Event> {
    let ty = str_of(v, "type")?;
    let data = v.get("data").unwrap_or(&Value::Null);
    let at = fields::time(v.get("timestamp"));
    let kind = kind_of(ty, data, at);
    let message_id = (ty == "assistant.message")
        .then(|| str_of(data, "messageId").map(str::to_string))
        .flatten();
    Some(Event {
        at: if kind == EventKind::Meta { None } else { at },
        kind,
        sidechain: is_subagent(v),
        key: turn_key(v),
        message_id,
    })
}

/// What a record of type `ty` means.
pub fn kind_of(ty: &str, data: &Value, at: Option<Time>) -> EventKind {
    match ty {
        "user.message" => EventKind::UserPrompt,
        "assistant.turn_start" => EventKind::TurnStart,
        "assistant.message" => assistant_message(data),
        "assistant.reasoning" => EventKind::AssistantOther,
        "tool.execution_complete" => EventKind::ToolResult {
            ids: tool_call_id(data),
        },
        // An approval asked in the log itself: the turn waits on the human until the request
        // is answered (`permission.completed` of the same `requestId`, its result).
        "permission.requested" if data.get("resolvedByHook") != Some(&Value::Bool(true)) => {
            EventKind::AwaitingHuman {
                ids: str_of(data, "requestId")
                    .map(|s| vec![s.to_string()])
                    .unwrap_or_default(),
                reason: permission_reason(data),
            }
        }
        // Cancelled with the whole turn (`Session aborted`): the `abort` decides, and Copilot
        // may write it before this record, which must not reopen the turn.
        "permission.completed" if data["result"]["kind"] == "cancelled" => EventKind::Progress,
        "permission.completed" => EventKind::ToolResult {
            ids: str_of(data, "requestId")
                .map(|s| vec![s.to_string()])
                .unwrap_or_default(),
        },
        // A question put to the human (`ask_user`): answered by its tool result.
        "tool.execution_start" if str_of(data, "toolName") == Some("ask_user") => {
            EventKind::AwaitingHuman {
                ids: tool_call_id(data),
                reason: "question".into(),
            }
        }
        // Proof of life inside an open turn: the model-call boundary (see the module doc),
        // tool starts, answered approvals and questions, hooks, subagents.
        "assistant.turn_end"
        | "tool.execution_start"
        | "permission.requested"
        | "human_response.recorded"
        | "hook.start"
        | "hook.end"
        | "skill.invoked"
        | "session.compaction_complete"
        | "session.usage_record"
        | "subagent.started"
        | "subagent.completed"
        | "subagent.failed" => EventKind::Progress,
        "session.compaction_start" => EventKind::Compaction,
        "abort" => EventKind::Interrupted,
        "session.error" => EventKind::ApiError(api_error(data, at)),
        // A crash is worth a look; a routine exit is the pane's business (the process is gone,
        // and with `--continue` of a live session another process may still be writing).
        "session.shutdown" if str_of(data, "shutdownType") == Some("error") => {
            EventKind::ApiError(ApiError {
                kind: "crashed".into(),
                text: bounded(str_of(data, "errorReason").unwrap_or("error"), 500),
                resets_at: None,
            })
        }
        _ => EventKind::Meta,
    }
}

/// A line too large to parse (a huge tool result or system prompt): its type and call id from
/// the head fragment, its time from the tail (the envelope's `timestamp` comes last).
pub fn parse_fragments(head: &[u8], tail: &[u8]) -> Option<Event> {
    let ty = fields::scan_str(head, "type")?;
    let kind = match ty {
        "tool.execution_complete" => EventKind::ToolResult {
            ids: fields::scan_str(head, "toolCallId")
                .map(|s| vec![s.to_string()])
                .unwrap_or_default(),
        },
        "user.message" => EventKind::UserPrompt,
        // An assistant message this large may carry tool requests or be the answer: only
        // "the turn is alive" is safe to say.
        "assistant.message" | "assistant.reasoning" | "tool.execution_start" => EventKind::Progress,
        _ => EventKind::Meta,
    };
    let at = match kind {
        EventKind::Meta => None,
        _ => fields::scan_time(tail, "timestamp"),
    };
    Some(Event {
        kind,
        sidechain: fields::scan_str(tail, "agentId").is_some(),
        at,
        key: fields::scan_str(head, "interactionId").map(str::to_string),
        message_id: None,
    })
}

/// An answer without tool requests ends the interaction; one with tool requests runs them.
/// A response split at reasoning boundaries (`chunkIndex` of `chunkCount`) ends only with its
/// last chunk.
fn assistant_message(data: &Value) -> EventKind {
    let requests: Vec<&Value> = data
        .get("toolRequests")
        .and_then(Value::as_array)
        .map(|a| a.iter().collect())
        .unwrap_or_default();
    if requests.is_empty() {
        let chunk = data.get("chunkIndex").and_then(Value::as_u64);
        let count = data.get("chunkCount").and_then(Value::as_u64);
        let last = match (chunk, count) {
            (Some(i), Some(n)) => i + 1 >= n,
            _ => true,
        };
        return EventKind::AssistantText { closes: Some(last) };
    }
    let (ids, names) = requests
        .iter()
        .map(|r| {
            (
                str_of(r, "toolCallId").unwrap_or_default().to_string(),
                str_of(r, "name").unwrap_or("tool").to_string(),
            )
        })
        .unzip();
    EventKind::ToolUse { ids, names }
}

fn tool_call_id(data: &Value) -> Vec<String> {
    str_of(data, "toolCallId")
        .map(|s| vec![s.to_string()])
        .unwrap_or_default()
}

/// Records written by a subagent (the `task` tool) carry `agentId`; the main agent's never do.
fn is_subagent(v: &Value) -> bool {
    str_of(v, "agentId").is_some_and(|a| !a.is_empty())
}

/// The interaction a record belongs to: `data.interactionId` (user prompt, turn starts,
/// assistant messages, tool results), else the prompt it answers (`originatingMessageId`, on
/// `session.error`), else the record's own id.
fn turn_key(v: &Value) -> Option<String> {
    let data = v.get("data");
    data.and_then(|d| str_of(d, "interactionId"))
        .or_else(|| data.and_then(|d| str_of(d, "originatingMessageId")))
        .or_else(|| str_of(v, "id"))
        .map(str::to_string)
}

/// `session.error` → the reason a person acts on (docs/design.md#states): `rate limit`,
/// `quota exceeded`, `auth`, or `api error 400: <message>`.
pub fn api_error(data: &Value, at: Option<Time>) -> ApiError {
    let message = str_of(data, "message").unwrap_or_default();
    let status = data.get("statusCode").and_then(Value::as_u64);
    let error_type = str_of(data, "errorType").unwrap_or_default();
    let lower = message.to_ascii_lowercase();
    let kind = match error_type {
        "rate_limit" => {
            if lower.contains("quota") {
                "quota exceeded".to_string()
            } else {
                "rate limit".to_string()
            }
        }
        "quota" => "quota exceeded".to_string(),
        "authentication" | "authorization" => "auth".to_string(),
        "context_limit" => "context limit".to_string(),
        _ if status == Some(429) => "rate limit".to_string(),
        _ => {
            // "400 model stand-in does not exist" → "api error 400: model stand-in …".
            let detail = match status {
                Some(s) => message
                    .trim()
                    .strip_prefix(&s.to_string())
                    .unwrap_or(message)
                    .trim(),
                None => message.trim(),
            };
            let detail = bounded(detail.lines().next().unwrap_or_default(), 80);
            match (status, detail.is_empty()) {
                (Some(s), false) => format!("api error {s}: {detail}"),
                (Some(s), true) => format!("api error {s}"),
                (None, false) => format!("api error: {detail}"),
                (None, true) => "api error".to_string(),
            }
        }
    };
    ApiError {
        resets_at: crate::agents::fields::reset_time(message, at),
        kind,
        text: bounded(message, 500),
    }
}

/// What the human is asked to decide, as the log itself shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PendingKind {
    /// `permission.requested` without its `permission.completed`.
    Permission,
    /// An `ask_user` call started and not completed.
    Question,
}

/// A decision the newest turn waits on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pending {
    pub kind: PendingKind,
    /// `bash`, `edit`, `read`, `url`, `mcp`, … (`ask_user` for a question).
    pub tool: String,
    /// The command, file, path or URL asked about; the question's message.
    pub detail: Option<String>,
    /// The tool call waiting on it.
    pub tool_call_id: Option<String>,
    /// When it was asked.
    pub at: Option<Time>,
}

impl Pending {
    /// The `waiting` reason: `permission: bash (touch hello.txt)`, `question`.
    pub fn reason(&self) -> String {
        match (&self.kind, &self.detail) {
            (PendingKind::Permission, Some(d)) => {
                let first = d.lines().next().unwrap_or_default().trim();
                format!(
                    "permission: {} ({})",
                    self.tool,
                    crate::text::chars(first, 60)
                )
            }
            (PendingKind::Permission, None) => format!("permission: {}", self.tool),
            (PendingKind::Question, _) => "question".into(),
        }
    }
}

impl Pending {
    /// As a request: the command, path or URL its dialog shows.
    pub fn request(&self) -> crate::read::request::Request {
        use crate::read::request::{PromptKind, Request, RequestSource};
        let kind = match self.kind {
            PendingKind::Permission => PromptKind::Permission,
            PendingKind::Question => PromptKind::Question,
        };
        let detail = self.detail.as_deref().unwrap_or_default();
        let first = detail.lines().next().unwrap_or_default();
        Request::new(
            kind,
            &self.tool,
            detail,
            detail,
            self.tool_call_id.clone(),
            RequestSource::Log,
        )
        .keyed(first)
    }
}

/// The decision the newest turn waits on, from records in file order (a tail of the log). A
/// later abort, error, shutdown or prompt means nothing is pending any more: Copilot cancels an
/// open approval when the turn is aborted (`permission.completed` `cancelled` is written after
/// the `assistant.turn_end`, then `abort`).
pub fn pending(records: &[Value]) -> Option<Pending> {
    let mut answered: Vec<&str> = Vec::new();
    let mut finished: Vec<&str> = Vec::new();
    for v in records.iter().rev() {
        let data = v.get("data").unwrap_or(&Value::Null);
        match str_of(v, "type").unwrap_or_default() {
            "abort" | "session.error" | "session.shutdown" | "user.message" => return None,
            "assistant.message"
                if !is_subagent(v)
                    && matches!(
                        assistant_message(data),
                        EventKind::AssistantText { closes: Some(true) }
                    ) =>
            {
                return None
            }
            "permission.completed" => answered.extend(str_of(data, "requestId")),
            "tool.execution_complete" => finished.extend(str_of(data, "toolCallId")),
            "permission.requested" => {
                let id = str_of(data, "requestId").unwrap_or_default();
                if answered.contains(&id) || data.get("resolvedByHook") == Some(&Value::Bool(true))
                {
                    continue;
                }
                let request = data.get("permissionRequest").unwrap_or(&Value::Null);
                return Some(Pending {
                    kind: PendingKind::Permission,
                    tool: permission_tool(data),
                    detail: permission_detail(request),
                    tool_call_id: str_of(request, "toolCallId").map(str::to_string),
                    at: fields::time(v.get("timestamp")),
                });
            }
            "tool.execution_start" if str_of(data, "toolName") == Some("ask_user") => {
                let call = str_of(data, "toolCallId").unwrap_or_default();
                if finished.contains(&call) {
                    continue;
                }
                return Some(Pending {
                    kind: PendingKind::Question,
                    tool: "ask_user".into(),
                    detail: data
                        .pointer("/arguments/message")
                        .and_then(Value::as_str)
                        .map(str::to_string),
                    tool_call_id: Some(call.to_string()),
                    at: fields::time(v.get("timestamp")),
                });
            }
            _ => {}
        }
    }
    None
}

/// The `waiting` reason of a `permission.requested` record: `permission: bash (touch a)`.
fn permission_reason(data: &Value) -> String {
    let request = data.get("permissionRequest").unwrap_or(&Value::Null);
    Pending {
        kind: PendingKind::Permission,
        tool: permission_tool(data),
        detail: permission_detail(request),
        tool_call_id: None,
        at: None,
    }
    .reason()
}

/// The tool a permission request is about, in the words of the dialog.
fn permission_tool(data: &Value) -> String {
    let request = data.get("permissionRequest").unwrap_or(&Value::Null);
    match str_of(request, "kind").unwrap_or_default() {
        "shell" => str_of(request, "shellType").unwrap_or("shell").to_string(),
        "write" => "edit".into(),
        "read" => "read".into(),
        "url" => "url".into(),
        "mcp" => "mcp".into(),
        "custom-tool" | "hook" => str_of(request, "toolName").unwrap_or("tool").to_string(),
        "" => "tool".into(),
        other => other.to_string(),
    }
}

/// The command, file, path, URL or MCP tool a permission request names.
fn permission_detail(request: &Value) -> Option<String> {
    let detail = match str_of(request, "kind").unwrap_or_default() {
        "shell" => str_of(request, "fullCommandText").map(str::to_string),
        "write" => str_of(request, "fileName").map(str::to_string),
        "read" => str_of(request, "path").map(str::to_string),
        "url" => str_of(request, "url").map(str::to_string),
        "mcp" => match (str_of(request, "serverName"), str_of(request, "toolName")) {
            (Some(s), Some(t)) => Some(format!("{s}/{t}")),
            (s, t) => s.or(t).map(str::to_string),
        },
        _ => str_of(request, "intention").map(str::to_string),
    };
    detail.filter(|d| !d.trim().is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agents::copilot::testkit::lines;

    fn values(name: &str) -> Vec<Value> {
        lines(name)
            .iter()
            .map(|l| serde_json::from_str(l).expect("a JSON line"))
            .collect()
    }

    fn kinds(name: &str) -> Vec<(String, EventKind)> {
        values(name)
            .iter()
            .map(|v| {
                let ty = str_of(v, "type").unwrap().to_string();
                (ty, parse_value(v).expect("parses").kind)
            })
            .collect()
    }

    fn of_type<'a>(all: &'a [(String, EventKind)], ty: &str) -> Vec<&'a EventKind> {
        all.iter()
            .filter(|(t, _)| t == ty)
            .map(|(_, k)| k)
            .collect()
    }

    #[test]
    fn prompts_answers_and_tool_calls_of_the_real_log() {
        let all = kinds("turns.jsonl");
        assert!(of_type(&all, "user.message")
            .iter()
            .all(|k| **k == EventKind::UserPrompt));
        assert!(of_type(&all, "assistant.turn_start")
            .iter()
            .all(|k| **k == EventKind::TurnStart));
        // The plain answer and the answer after the tool: both end the interaction.
        let messages = of_type(&all, "assistant.message");
        assert_eq!(
            messages,
            vec![
                &EventKind::AssistantText { closes: Some(true) },
                &EventKind::ToolUse {
                    ids: vec!["call_0".into()],
                    names: vec!["bash".into()]
                },
                &EventKind::AssistantText { closes: Some(true) },
            ]
        );
        assert_eq!(
            of_type(&all, "tool.execution_complete"),
            vec![&EventKind::ToolResult {
                ids: vec!["call_0".into()]
            }]
        );
        // A model-call boundary, never the end of the interaction.
        assert!(of_type(&all, "assistant.turn_end")
            .iter()
            .all(|k| **k == EventKind::Progress));
        assert_eq!(of_type(&all, "abort"), vec![&EventKind::Interrupted]);
        for ty in ["session.start", "system.message", "session.shutdown"] {
            assert!(
                of_type(&all, ty).iter().all(|k| **k == EventKind::Meta),
                "{ty}"
            );
        }
    }

    #[test]
    fn errors_read_as_what_a_person_acts_on() {
        let errors: Vec<ApiError> = kinds("turns.jsonl")
            .into_iter()
            .filter_map(|(_, k)| match k {
                EventKind::ApiError(e) => Some(e),
                _ => None,
            })
            .collect();
        assert_eq!(errors.len(), 2, "the 400 and the 429");
        assert_eq!(
            errors[0].kind,
            "api error 400: model stand-in does not exist"
        );
        // The stand-in's 429 says "quota exceeded"; after five retries Copilot writes it.
        assert_eq!(errors[1].kind, "quota exceeded");
        assert!(
            errors[1].text.contains("retried 5 times"),
            "{}",
            errors[1].text
        );
        let plain = api_error(
            &serde_json::json!({"errorType": "rate_limit", "statusCode": 429,
                "message": "Sorry, you have been rate-limited."}),
            None,
        );
        assert_eq!(plain.kind, "rate limit");
        let auth = api_error(
            &serde_json::json!({"errorType": "authentication", "message": "Not logged in"}),
            None,
        );
        assert_eq!(auth.kind, "auth");
    }

    #[test]
    fn the_interaction_is_the_turn_key_and_the_time_is_the_record_s() {
        let v = &values("turns.jsonl");
        let prompt = v
            .iter()
            .find(|v| str_of(v, "type") == Some("user.message"))
            .unwrap();
        let ev = parse_value(prompt).unwrap();
        assert_eq!(
            ev.key.as_deref(),
            prompt
                .pointer("/data/interactionId")
                .and_then(Value::as_str)
        );
        assert_eq!(
            ev.at
                .unwrap()
                .to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            str_of(prompt, "timestamp").unwrap()
        );
        assert!(!ev.sidechain);
        // Metadata carries no semantic time.
        assert_eq!(parse_value(&v[0]).unwrap().at, None);
    }

    #[test]
    fn a_subagent_record_is_a_sidechain() {
        let line = br#"{"type":"assistant.message","agentId":"a1","data":{"messageId":"m","content":"sub","toolRequests":[]},"id":"x","timestamp":"2026-12-02T09:37:36.900Z","parentId":null}"#;
        assert!(parse_line(line).unwrap().sidechain);
    }

    #[test]
    fn a_chunked_response_closes_only_with_its_last_chunk() {
        let chunk = |i: u64| {
            serde_json::json!({"type": "assistant.message", "data": {"messageId": "m",
                "content": "x", "toolRequests": [], "chunkIndex": i, "chunkCount": 2}})
        };
        assert_eq!(
            parse_value(&chunk(0)).unwrap().kind,
            EventKind::AssistantText {
                closes: Some(false)
            }
        );
        assert_eq!(
            parse_value(&chunk(1)).unwrap().kind,
            EventKind::AssistantText { closes: Some(true) }
        );
    }

    #[test]
    fn an_approval_waits_until_answered() {
        let at_dialog = values("approval-pending.jsonl");
        let p = pending(&at_dialog).expect("the dialog's request is pending");
        assert_eq!(p.kind, PendingKind::Permission);
        assert_eq!(p.reason(), "permission: bash (touch hello.txt)");
        assert_eq!(p.tool_call_id.as_deref(), Some("call_0"));
        // The record itself says the turn waits on the human, and for what; its answer is
        // the `permission.completed` of the same request.
        let request = at_dialog.last().unwrap();
        let id = request
            .pointer("/data/requestId")
            .unwrap()
            .as_str()
            .unwrap();
        assert_eq!(
            parse_value(request).unwrap().kind,
            EventKind::AwaitingHuman {
                ids: vec![id.to_string()],
                reason: "permission: bash (touch hello.txt)".into()
            }
        );
        let all = values("approval.jsonl");
        let completed = all
            .iter()
            .find(|v| str_of(v, "type") == Some("permission.completed"))
            .unwrap();
        assert_eq!(
            parse_value(completed).unwrap().kind,
            EventKind::ToolResult {
                ids: vec![id.to_string()]
            }
        );
        // Approved, then the second approval cancelled with Escape (abort user_initiated),
        // then the process exited: nothing pends at any of those points.
        let approved = all
            .iter()
            .position(|v| str_of(v, "type") == Some("permission.completed"))
            .unwrap();
        assert_eq!(pending(&all[..=approved]), None);
        let second = all
            .iter()
            .rposition(|v| str_of(v, "type") == Some("permission.requested"))
            .unwrap();
        assert!(pending(&all[..=second]).is_some());
        assert_eq!(pending(&all), None);
        let abort = all
            .iter()
            .rfind(|v| str_of(v, "type") == Some("abort"))
            .unwrap();
        assert_eq!(
            abort.pointer("/data/reason").and_then(Value::as_str),
            Some("user_initiated")
        );
    }

    #[test]
    fn an_ask_user_call_is_a_pending_question() {
        let asked = values("ask-user-pending.jsonl");
        let p = pending(&asked).expect("the question pends");
        assert_eq!(p.kind, PendingKind::Question);
        assert_eq!(p.detail.as_deref(), Some("Which color?"));
        assert_eq!(p.reason(), "question");
        assert_eq!(pending(&values("ask-user.jsonl")), None);
        assert_eq!(
            parse_value(asked.last().unwrap()).unwrap().kind,
            EventKind::AwaitingHuman {
                ids: vec!["call_0".into()],
                reason: "question".into()
            }
        );
    }

    #[test]
    fn fragments_of_a_huge_line_keep_type_ids_and_time() {
        let line = lines("approval.jsonl")
            .into_iter()
            .find(|l| l.contains(r#""type":"tool.execution_complete""#))
            .unwrap();
        let (head, tail) = (
            &line.as_bytes()[..120],
            &line.as_bytes()[line.len() - 120..],
        );
        let ev = parse_fragments(head, tail).unwrap();
        assert_eq!(
            ev.kind,
            EventKind::ToolResult {
                ids: vec!["call_0".into()]
            }
        );
        assert!(ev.at.is_some());
        let system = lines("turns.jsonl")
            .into_iter()
            .find(|l| l.contains(r#""type":"system.message""#))
            .unwrap();
        let ev = parse_fragments(
            &system.as_bytes()[..200],
            &system.as_bytes()[system.len() - 200..],
        );
        assert_eq!(ev.unwrap().kind, EventKind::Meta);
    }

    #[test]
    fn a_crash_is_attention_a_routine_exit_is_not() {
        let crash = serde_json::json!({"type": "session.shutdown",
            "data": {"shutdownType": "error", "errorReason": "boom"}});
        match parse_value(&crash).unwrap().kind {
            EventKind::ApiError(e) => {
                assert_eq!((e.kind.as_str(), e.text.as_str()), ("crashed", "boom"))
            }
            other => panic!("{other:?}"),
        }
        let routine = serde_json::json!({"type": "session.shutdown",
            "data": {"shutdownType": "routine"}});
        assert_eq!(parse_value(&routine).unwrap().kind, EventKind::Meta);
    }
}
