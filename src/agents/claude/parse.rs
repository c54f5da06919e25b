//! Claude Code transcript line → event (docs/design.md#turns-per-agent). Content is the source of
//! truth, not `stop_reason`; one API message may be split over several lines sharing `message.id`.

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
    let obj = v.as_object()?;
    let ty = obj.get("type")?.as_str()?;
    let message = obj.get("message");
    let kind = match ty {
        "user" => user_kind(v, message),
        "assistant" => assistant_kind(v, message?),
        "system" => system_kind(v),
        "progress" => EventKind::Progress,
        _ => EventKind::Meta,
    };
    let at = match kind {
        // Metadata never changes semantic time.
        EventKind::Meta => None,
        _ => fields::time(obj.get("timestamp")),
    };
    Some(Event {
        kind,
        sidechain: obj.get("isSidechain").and_then(Value::as_bool) == Some(true),
        at,
        key: str_of(v, "uuid").map(str::to_string),
        message_id: message.and_then(|m| str_of(m, "id")).map(str::to_string),
    })
}

/// A line too large to parse: its type, ids and time from the head and tail fragments.
pub fn parse_fragments(head: &[u8], tail: &[u8]) -> Option<Event> {
    let ty = fields::scan_str(head, "type")?;
    let kind = match ty {
        "user" => {
            let ids: Vec<String> = fields::scan_all(head, "tool_use_id")
                .into_iter()
                .map(str::to_string)
                .collect();
            if ids.is_empty() {
                EventKind::UserPrompt
            } else {
                EventKind::ToolResult { ids }
            }
        }
        "assistant" => EventKind::AssistantOther,
        "progress" => EventKind::Progress,
        _ => EventKind::Meta,
    };
    let at = match kind {
        EventKind::Meta => None,
        _ => fields::scan_time(tail, "timestamp"),
    };
    Some(Event {
        kind,
        sidechain: fields::scan_true(head, "isSidechain") || fields::scan_true(tail, "isSidechain"),
        at,
        key: fields::scan_str(tail, "uuid").map(str::to_string),
        message_id: None,
    })
}

fn user_kind(v: &Value, message: Option<&Value>) -> EventKind {
    if v.get("isMeta").and_then(Value::as_bool) == Some(true) {
        return EventKind::Meta;
    }
    if v.get("isCompactSummary").and_then(Value::as_bool) == Some(true) {
        return EventKind::Compaction;
    }
    let Some(content) = message.and_then(|m| m.get("content")) else {
        return EventKind::Meta;
    };
    match content {
        Value::String(text) => text_prompt_kind(text),
        Value::Array(blocks) => {
            let mut results = Vec::new();
            let mut texts = Vec::new();
            let mut other = false;
            let mut rejected = false;
            for b in blocks {
                match str_of(b, "type") {
                    Some("tool_result") => {
                        if let Some(id) = str_of(b, "tool_use_id") {
                            results.push(id.to_string());
                        }
                        rejected |= is_rejection(b);
                    }
                    Some("text") => texts.push(str_of(b, "text").unwrap_or_default()),
                    _ => other = true,
                }
            }
            if !results.is_empty() && texts.is_empty() {
                if rejected {
                    // The person said no at the permission prompt (Escape): the turn is back
                    // with them. Claude Code writes `[Request interrupted by user for tool
                    // use]` only after this line, sometimes seconds later.
                    return EventKind::Interrupted;
                }
                if let Some((agent, description)) = background_launch(v) {
                    return EventKind::BackgroundStart {
                        ids: results,
                        agent,
                        description,
                    };
                }
                return EventKind::ToolResult { ids: results };
            }
            if let Some(first) = texts.first() {
                return text_prompt_kind(first);
            }
            if other {
                EventKind::UserPrompt
            } else {
                EventKind::Meta
            }
        }
        _ => EventKind::Meta,
    }
}

/// A tool result saying the person refused the tool at its permission prompt and nothing
/// more (with feedback — "the user said: …" — the model goes on, so that is no rejection).
fn is_rejection(block: &Value) -> bool {
    if block.get("is_error").and_then(Value::as_bool) != Some(true) {
        return false;
    }
    let text = match block.get("content") {
        Some(Value::String(t)) => t.as_str(),
        Some(Value::Array(parts)) => parts
            .iter()
            .find_map(|p| str_of(p, "text"))
            .unwrap_or_default(),
        _ => "",
    };
    text.starts_with("The user doesn't want to proceed with this tool use.")
        && text.contains("STOP what you are doing and wait for the user to tell you how to proceed")
        && !text.contains("the user said")
}

/// The subagent an async `Agent` call started, from its result's `toolUseResult`
/// (`status: async_launched`, `agentId`, `description`), as 2.1.197 and 2.1.332 write it.
fn background_launch(v: &Value) -> Option<(String, String)> {
    let result = v.get("toolUseResult")?;
    let launched = str_of(result, "status") == Some("async_launched")
        || result.get("isAsync").and_then(Value::as_bool) == Some(true);
    if !launched {
        return None;
    }
    let agent = str_of(result, "agentId").unwrap_or_default();
    let description = str_of(result, "description").unwrap_or("subagent");
    Some((bounded(agent, 128), bounded(description, 120)))
}

/// A human-typed text: a prompt, an interruption marker, or a local command.
fn text_prompt_kind(text: &str) -> EventKind {
    let t = text.trim_start();
    if t.starts_with("<task-notification>") {
        let agent = between(t, "<task-id>", "</task-id>")
            .or_else(|| between(t, "<agent-id>", "</agent-id>"))
            .map(|id| bounded(id.trim(), 128));
        return EventKind::BackgroundDone { agent };
    }
    if t.starts_with("[Request interrupted by user") {
        return EventKind::Interrupted;
    }
    const LOCAL: [&str; 6] = [
        "<local-command-stdout>",
        "<local-command-stderr>",
        "<local-command-caveat>",
        "<bash-input>",
        "<bash-stdout>",
        "<bash-stderr>",
    ];
    if LOCAL.iter().any(|p| t.starts_with(p)) {
        return EventKind::LocalCommand;
    }
    if t.contains("<command-name>") {
        // Prompt-type slash commands (/init, custom commands) start a turn; built-ins such
        // as /model or /mcp with no arguments run locally.
        let has_args =
            between(t, "<command-args>", "</command-args>").is_some_and(|a| !a.trim().is_empty());
        let running = between(t, "<command-message>", "</command-message>")
            .is_some_and(|m| m.trim_end().ends_with('…') || m.trim_end().ends_with("..."));
        return if has_args || running {
            EventKind::UserPrompt
        } else {
            EventKind::LocalCommand
        };
    }
    EventKind::UserPrompt
}

fn between<'a>(text: &'a str, open: &str, close: &str) -> Option<&'a str> {
    let start = text.find(open)? + open.len();
    let end = text[start..].find(close)? + start;
    Some(&text[start..end])
}

fn assistant_kind(v: &Value, message: &Value) -> EventKind {
    let stop = str_of(message, "stop_reason");
    let blocks = message.get("content").and_then(Value::as_array);
    let text: Vec<&str> = blocks
        .into_iter()
        .flatten()
        .filter(|b| str_of(b, "type") == Some("text"))
        .filter_map(|b| str_of(b, "text"))
        .collect();
    let synthetic = str_of(message, "model") == Some("<synthetic>");
    if v.get("isApiErrorMessage").and_then(Value::as_bool) == Some(true)
        || (synthetic && v.get("error").is_some())
    {
        let text = bounded(&text.join("\n"), 500);
        let kind = api_error_reason(v, &text);
        let resets_at = crate::agents::fields::reset_time(&text, fields::time(v.get("timestamp")));
        return EventKind::ApiError(ApiError {
            kind,
            text,
            resets_at,
        });
    }
    if synthetic {
        // "No response requested." and similar local placeholders: not the model's work.
        return EventKind::LocalCommand;
    }
    match stop {
        Some("refusal") => return EventKind::Refusal,
        Some("max_tokens" | "model_context_window_exceeded" | "pause_turn") => {
            return EventKind::Recovering
        }
        _ => {}
    }
    let mut ids = Vec::new();
    let mut names = Vec::new();
    for b in blocks.into_iter().flatten() {
        if matches!(str_of(b, "type"), Some("tool_use" | "server_tool_use")) {
            ids.push(str_of(b, "id").unwrap_or_default().to_string());
            names.push(str_of(b, "name").unwrap_or("tool").to_string());
        }
    }
    if !ids.is_empty() {
        return EventKind::ToolUse { ids, names };
    }
    if !text.is_empty() {
        let closes = match stop {
            Some("end_turn" | "stop_sequence" | "stop") => Some(true),
            Some(_) => Some(false),
            None => None,
        };
        return EventKind::AssistantText { closes };
    }
    EventKind::AssistantOther
}

/// What a person should read about a failed API call, in words (`rate limit`, `quota
/// exceeded`, `auth`, `api error 400: invalid_request_error`), never a bare code. The `error`
/// field names the kind when Claude Code knows it (`rate_limit` for a 429, whose text says
/// whether a quota ran out); for an HTTP 400 real 2.1.197 and 2.1.332 files write
/// `error: "unknown"` and put what happened in `apiErrorStatus`, `apiErrorType` (2.1.332)
/// and the text (`API Error: 400 <message>`).
fn api_error_reason(v: &Value, text: &str) -> String {
    let named = match v.get("error") {
        Some(Value::String(s)) => Some(s.as_str()),
        Some(Value::Object(o)) => o.get("type").and_then(Value::as_str),
        _ => None,
    }
    .filter(|k| !k.is_empty() && !matches!(*k, "unknown" | "api_error" | "error"));
    let status = v.get("apiErrorStatus").and_then(Value::as_u64);
    let api_type = str_of(v, "apiErrorType").filter(|t| !t.is_empty());
    let lower = text.to_ascii_lowercase();
    if named == Some("rate_limit") || status == Some(429) || api_type == Some("rate_limit_error") {
        return if lower.contains("quota") {
            "quota exceeded".into()
        } else {
            "rate limit".into()
        };
    }
    match named {
        Some("authentication_failed") => return "auth".into(),
        Some("billing_error") => return "billing".into(),
        Some(kind) => return kind.replace('_', " "),
        None => {}
    }
    // "API Error: 400 messages: …" → "messages: …".
    let message = text
        .trim()
        .strip_prefix("API Error:")
        .map(str::trim_start)
        .map(|t| match status {
            Some(s) => t.strip_prefix(&s.to_string()).unwrap_or(t).trim_start(),
            None => t,
        })
        .unwrap_or(text.trim());
    let detail = api_type
        .map(str::to_string)
        .unwrap_or_else(|| bounded(message, 80));
    match (status, detail.is_empty()) {
        (Some(s), false) => format!("api error {s}: {detail}"),
        (Some(s), true) => format!("api error {s}"),
        (None, false) => format!("api error: {detail}"),
        (None, true) => "api error".into(),
    }
}

fn system_kind(v: &Value) -> EventKind {
    match str_of(v, "subtype") {
        Some("stop_hook_summary" | "turn_duration") => EventKind::TurnEnd,
        Some("compact_boundary") => EventKind::Compaction,
        Some("local_command") => EventKind::LocalCommand,
        Some("api_error") => EventKind::Recovering,
        _ => EventKind::Meta,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(line: &str) -> EventKind {
        parse_line(line.as_bytes()).expect("parses").kind
    }

    #[test]
    fn prompts_results_and_interruptions() {
        assert_eq!(
            kind(r#"{"type":"user","message":{"role":"user","content":"fix it"}}"#),
            EventKind::UserPrompt
        );
        assert_eq!(
            kind(
                r#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1"}]}}"#
            ),
            EventKind::ToolResult {
                ids: vec!["t1".into()]
            }
        );
        assert_eq!(
            kind(
                r#"{"type":"user","message":{"content":[{"type":"text","text":"[Request interrupted by user for tool use]"}]}}"#
            ),
            EventKind::Interrupted
        );
        assert_eq!(
            kind(r#"{"type":"user","isMeta":true,"message":{"content":"x"}}"#),
            EventKind::Meta
        );
    }

    /// Escape at a permission prompt: Claude Code writes the refused tool's result first and
    /// `[Request interrupted …]` after it, seconds later under load. The refusal alone already
    /// hands the turn back; refusing with feedback does not (the model goes on).
    #[test]
    fn a_refused_tool_is_an_interruption_unless_the_person_said_more() {
        let refused = "The user doesn't want to proceed with this tool use. The tool use was \
            rejected (eg. if it was a file edit, the new_string was NOT written to the file). \
            STOP what you are doing and wait for the user to tell you how to proceed.";
        let line = |text: &str| {
            serde_json::json!({"type": "user", "message": {"role": "user", "content": [
                {"type": "tool_result", "content": text, "is_error": true, "tool_use_id": "t1"}
            ]}})
            .to_string()
        };
        assert_eq!(kind(&line(refused)), EventKind::Interrupted);
        let feedback = format!("{refused} To tell you how to proceed, the user said:\nuse ls");
        assert_eq!(
            kind(&line(&feedback)),
            EventKind::ToolResult {
                ids: vec!["t1".into()]
            }
        );
        let failed = line("Exit code 1\nls: cannot access 'x'");
        assert_eq!(
            kind(&failed),
            EventKind::ToolResult {
                ids: vec!["t1".into()]
            }
        );
    }

    #[test]
    fn slash_commands_prompt_or_local() {
        let init = r#"{"type":"user","message":{"content":"<command-message>init is analyzing your codebase…</command-message>\n<command-name>/init</command-name>"}}"#;
        assert_eq!(kind(init), EventKind::UserPrompt);
        let model = r#"{"type":"user","message":{"content":"<command-name>/model</command-name>\n<command-message>model</command-message>\n<command-args></command-args>"}}"#;
        assert_eq!(kind(model), EventKind::LocalCommand);
        let out = r#"{"type":"user","message":{"content":"<local-command-stdout>Set model</local-command-stdout>"}}"#;
        assert_eq!(kind(out), EventKind::LocalCommand);
    }

    #[test]
    fn assistant_content_over_stop_reason() {
        let tool = r#"{"type":"assistant","message":{"id":"m","stop_reason":null,"content":[{"type":"tool_use","id":"t1","name":"Bash"}]}}"#;
        assert_eq!(
            kind(tool),
            EventKind::ToolUse {
                ids: vec!["t1".into()],
                names: vec!["Bash".into()]
            }
        );
        let end = r#"{"type":"assistant","message":{"stop_reason":"end_turn","content":[{"type":"text","text":"done"}]}}"#;
        assert_eq!(kind(end), EventKind::AssistantText { closes: Some(true) });
        let null = r#"{"type":"assistant","message":{"stop_reason":null,"content":[{"type":"text","text":"done"}]}}"#;
        assert_eq!(kind(null), EventKind::AssistantText { closes: None });
        let think =
            r#"{"type":"assistant","message":{"content":[{"type":"thinking","thinking":"h"}]}}"#;
        assert_eq!(kind(think), EventKind::AssistantOther);
        let max = r#"{"type":"assistant","message":{"stop_reason":"max_tokens","content":[{"type":"text","text":"x"}]}}"#;
        assert_eq!(kind(max), EventKind::Recovering);
        let refusal = r#"{"type":"assistant","message":{"stop_reason":"refusal","content":[]}}"#;
        assert_eq!(kind(refusal), EventKind::Refusal);
    }

    #[test]
    fn api_error_even_with_a_final_stop_reason() {
        let line = r#"{"type":"assistant","isApiErrorMessage":true,"error":"rate_limit","timestamp":"2026-02-10T21:00:00Z","message":{"model":"<synthetic>","stop_reason":"stop_sequence","content":[{"type":"text","text":"You've hit your session limit · resets 9:50pm"}]}}"#;
        match kind(line) {
            EventKind::ApiError(e) => {
                assert_eq!(e.kind, "rate limit");
                assert!(e.text.contains("session limit"));
            }
            other => panic!("expected api error, got {other:?}"),
        }
    }

    /// The API-error line of a real 400 or 429, as each pinned release wrote it.
    fn real_api_error(version: &str, status: u16) -> ApiError {
        let path = format!(
            "{}/fixtures/real-clients/claude-{version}/api-error-{status}.jsonl",
            env!("CARGO_MANIFEST_DIR")
        );
        let text = std::fs::read_to_string(&path).expect("fixture");
        text.lines()
            .filter_map(|l| parse_line(l.as_bytes()))
            .find_map(|e| match e.kind {
                EventKind::ApiError(err) => Some(err),
                _ => None,
            })
            .expect("an api error line")
    }

    #[test]
    fn real_http_400_names_status_and_type_not_unknown() {
        assert_eq!(
            real_api_error("2.1.332", 400).kind,
            "api error 400: invalid_request_error"
        );
        // 2.1.197 writes no apiErrorType: the message says what was wrong.
        assert_eq!(
            real_api_error("2.1.197", 400).kind,
            "api error 400: messages: text content blocks must be non-empty"
        );
    }

    #[test]
    fn real_quota_429_reads_quota_exceeded_not_rate_limit_code() {
        // Both write `error: "rate_limit"`, `apiErrorStatus: 429` and "Quota exceeded …".
        for v in ["2.1.197", "2.1.332"] {
            assert_eq!(real_api_error(v, 429).kind, "quota exceeded", "{v}");
        }
    }

    #[test]
    fn a_429_reads_as_rate_limit_or_quota() {
        let line = |text: &str| {
            format!(
                r#"{{"type":"assistant","isApiErrorMessage":true,"error":"unknown","apiErrorStatus":429,"message":{{"model":"<synthetic>","content":[{{"type":"text","text":"{text}"}}]}}}}"#
            )
        };
        let reason = |text: &str| match kind(&line(text)) {
            EventKind::ApiError(e) => e.kind,
            other => panic!("expected api error, got {other:?}"),
        };
        assert_eq!(reason("API Error: 429 Quota exceeded"), "quota exceeded");
        assert_eq!(reason("API Error: 429 slow down"), "rate limit");
    }

    #[test]
    fn meta_records_carry_no_time() {
        let ev = parse_line(
            br#"{"type":"file-history-snapshot","timestamp":"2026-02-10T21:11:56.906Z"}"#,
        )
        .unwrap();
        assert_eq!(ev.kind, EventKind::Meta);
        assert_eq!(ev.at, None);
    }

    #[test]
    fn garbage_is_skipped() {
        assert!(parse_line(b"not json").is_none());
        assert!(parse_line(b"[1,2]").is_none());
        assert!(parse_line(&[0xff, 0xfe, b'{']).is_none());
        assert!(parse_line(br#"{"type":"assistant"}"#).is_none());
    }

    #[test]
    fn huge_tool_result_fragments() {
        let head = br#"{"parentUuid":"p","isSidechain":false,"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_1","type":"tool_result","content":"xxxx"#;
        let tail = br#"xxxx"}]},"uuid":"u9","timestamp":"2026-02-10T21:11:56.906Z"}"#;
        let ev = parse_fragments(head, tail).unwrap();
        assert_eq!(
            ev.kind,
            EventKind::ToolResult {
                ids: vec!["toolu_1".into()]
            }
        );
        assert_eq!(ev.key.as_deref(), Some("u9"));
        assert!(ev.at.is_some());
    }
}
