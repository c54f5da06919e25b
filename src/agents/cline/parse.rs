//! What Cline CLI's two session files mean (3.0.65; fixtures/real-clients/cline-3.0.65).
//!
//! `<id>.json`, the session record, is rewritten at every change of state: the process
//! (`pid`), `started_at`, and a `status` that reads `running` while a turn runs, `pending`
//! while a permission dialog is open, `idle` between turns and `cancelled` once the client
//! exits; its `metadata.usage` holds the session's token totals. `<id>.messages.json` holds
//! the conversation, rewritten whole at the end of each step: a prompt is written with the
//! step that answers it, so while the first step of a turn runs (or its API call is retried)
//! only the record says the turn is open. An API error is an assistant message with
//! `metadata.displayRole: "error"` and the API's message as its text.

use chrono::TimeZone;
use serde_json::Value;

use crate::events::{ApiError, Event, EventKind, Time};

/// The record's `status` while a turn runs.
pub const RUNNING: &str = "running";

/// The record's `status` while a permission dialog is open.
pub const PENDING: &str = "pending";

/// A session record (`<id>.json`), as far as agentpane reads it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Record {
    pub id: String,
    pub pid: Option<u32>,
    pub started_at: Option<Time>,
    pub status: String,
    pub cwd: Option<String>,
    pub model: Option<String>,
    /// `metadata.usage`: input (cache reads and writes included) and output tokens.
    pub tokens: Option<(u64, u64)>,
    /// `metadata.totalCost` as the client priced it.
    pub cost: Option<f64>,
}

/// Reads a session record; `None` when it is not one.
pub fn record(v: &Value) -> Option<Record> {
    let id = v.get("session_id")?.as_str()?.to_string();
    let usage = &v["metadata"]["usage"];
    let n = |k: &str| usage[k].as_u64().unwrap_or(0);
    let tokens = usage.is_object().then(|| {
        (
            n("inputTokens") + n("cacheReadTokens") + n("cacheWriteTokens"),
            n("outputTokens"),
        )
    });
    Some(Record {
        id,
        pid: v["pid"].as_u64().and_then(|p| u32::try_from(p).ok()),
        started_at: v["started_at"]
            .as_str()
            .and_then(|s| chrono::DateTime::parse_from_rfc3339(s).ok())
            .map(|t| t.with_timezone(&chrono::Utc)),
        status: v["status"].as_str().unwrap_or_default().to_string(),
        cwd: v["cwd"].as_str().map(str::to_string),
        model: v["model"].as_str().map(str::to_string),
        tokens,
        cost: v["metadata"]["totalCost"].as_f64(),
    })
}

/// The messages of a `<id>.messages.json`.
pub fn messages(v: &Value) -> &[Value] {
    v["messages"].as_array().map_or(&[], Vec::as_slice)
}

/// A message's time (`ts`, Unix milliseconds).
pub fn time(m: &Value) -> Option<Time> {
    chrono::Utc.timestamp_millis_opt(m["ts"].as_i64()?).single()
}

/// Whether an assistant message is the client's report of a failed API call.
pub fn is_error(m: &Value) -> bool {
    m["metadata"]["displayRole"] == "error"
}

/// The content blocks of `m` of type `kind`.
pub fn blocks<'a>(m: &'a Value, kind: &'a str) -> impl Iterator<Item = &'a Value> + 'a {
    m["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(move |b| b["type"] == kind)
}

/// The text of `m`'s text blocks, joined.
pub fn text(m: &Value) -> String {
    match &m["content"] {
        Value::String(s) => s.clone(),
        _ => blocks(m, "text")
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
    }
}

/// The event one message stands for.
pub fn event_of(m: &Value) -> Option<Event> {
    let kind = match m["role"].as_str()? {
        "user" => {
            let ids: Vec<String> = blocks(m, "tool_result")
                .filter_map(|b| b["tool_use_id"].as_str().map(str::to_string))
                .collect();
            if ids.is_empty() {
                EventKind::UserPrompt
            } else {
                EventKind::ToolResult { ids }
            }
        }
        "assistant" if is_error(m) => EventKind::ApiError(api_error(&text(m))),
        "assistant" => {
            let calls: Vec<&Value> = blocks(m, "tool_use").collect();
            if !calls.is_empty() {
                EventKind::ToolUse {
                    ids: calls.iter().map(|c| str_of(c, "id")).collect(),
                    names: calls.iter().map(|c| str_of(c, "name")).collect(),
                }
            } else if text(m).trim().is_empty() {
                EventKind::AssistantOther
            } else {
                EventKind::AssistantText { closes: None }
            }
        }
        _ => return None,
    };
    Some(Event {
        kind,
        sidechain: false,
        at: time(m),
        key: m["id"].as_str().map(str::to_string),
        message_id: None,
    })
}

fn str_of(v: &Value, key: &str) -> String {
    v[key].as_str().unwrap_or_default().to_string()
}

/// The events of a session: its messages, then what the record's `status` adds. `written`:
/// when the record was last written (its file's time; the record carries no time of its
/// own), the time of a turn the messages do not show yet.
pub fn events(messages: &[Value], status: &str, written: Option<Time>) -> Vec<Event> {
    let mut events: Vec<Event> = messages.iter().filter_map(event_of).collect();
    let last = events.iter().rposition(crate::state::is_decisive);
    let last_key = last.and_then(|i| events[i].key.clone()).unwrap_or_default();
    match status {
        RUNNING => {
            // The prompt of a turn's first step is written with its answer.
            let open = last.is_some_and(|i| {
                matches!(
                    events[i].kind,
                    EventKind::UserPrompt
                        | EventKind::ToolUse { .. }
                        | EventKind::ToolResult { .. }
                )
            });
            if !open {
                let ev = Event::new(EventKind::TurnStart).key(format!("{last_key}+running"));
                events.push(Event { at: written, ..ev });
            }
        }
        PENDING => {
            let (ids, reason) = pending_call(messages)
                .map(|c| (vec![c.id.clone()], c.reason()))
                .unwrap_or_else(|| (Vec::new(), "permission".to_string()));
            // Keyed by the call it asks about: one request, one alert, however often the
            // record is written meanwhile.
            let key = format!("{last_key}+{}", ids.join(","));
            let ev = Event::new(EventKind::AwaitingHuman { ids, reason }).key(key);
            events.push(Event { at: written, ..ev });
        }
        _ => match last.map(|i| &mut events[i]) {
            // Not running: the answer closed the turn.
            Some(Event {
                kind: EventKind::AssistantText { closes },
                ..
            }) => *closes = Some(true),
            // A turn stopped before its answer: Escape.
            Some(Event {
                kind:
                    EventKind::UserPrompt | EventKind::ToolUse { .. } | EventKind::ToolResult { .. },
                at,
                ..
            }) => {
                let ev = Event::new(EventKind::Interrupted).key(format!("{last_key}+stopped"));
                let at = *at;
                events.push(Event {
                    at: written.or(at),
                    ..ev
                });
            }
            _ => {}
        },
    }
    events
}

/// A tool call the newest assistant message made that has no result yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    pub id: String,
    pub name: String,
    /// What it runs or touches, one line a part (`run_commands`' commands, a file's path).
    pub detail: String,
}

impl Call {
    /// The state's reason while it waits for approval.
    pub fn reason(&self) -> String {
        match self.detail.lines().next() {
            Some(first) => format!(
                "permission: {} ({})",
                self.name,
                crate::text::chars(first, 60)
            ),
            None => format!("permission: {}", self.name),
        }
    }
}

/// The newest tool call without a result (the one a `pending` record asks about).
pub fn pending_call(messages: &[Value]) -> Option<Call> {
    let m = messages.iter().rev().find(|m| m["role"] == "assistant")?;
    let answered: Vec<&str> = messages
        .iter()
        .flat_map(|m| blocks(m, "tool_result"))
        .filter_map(|b| b["tool_use_id"].as_str())
        .collect();
    let call =
        blocks(m, "tool_use").find(|c| !answered.contains(&c["id"].as_str().unwrap_or("")))?;
    Some(Call {
        id: str_of(call, "id"),
        name: str_of(call, "name"),
        detail: detail(&call["input"]),
    })
}

/// What a call's input asks for, as its dialog shows it: `run_commands`' commands, one a
/// line; else the paths, URLs or queries it names; else its input as JSON.
fn detail(input: &Value) -> String {
    for key in [
        "commands",
        "paths",
        "path",
        "file_path",
        "urls",
        "url",
        "queries",
        "query",
    ] {
        match &input[key] {
            Value::String(s) => return s.clone(),
            Value::Array(items) => {
                let parts: Vec<String> = items
                    .iter()
                    .map(|i| match i {
                        Value::String(s) => s.clone(),
                        other => other["url"]
                            .as_str()
                            .or(other["path"].as_str())
                            .map_or_else(|| other.to_string(), str::to_string),
                    })
                    .collect();
                if !parts.is_empty() {
                    return parts.join("\n");
                }
            }
            _ => {}
        }
    }
    if input.is_null() {
        String::new()
    } else {
        input.to_string()
    }
}

/// What a person should read about a failed call, in words, as for the other agents. Cline
/// 3.0.65 records only the API's message, never its status code (an HTTP 400 reads `model
/// stand-in does not exist`, a 429 after its retries `quota exceeded for stand-in`).
pub fn api_error(text: &str) -> ApiError {
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    let lower = line.to_ascii_lowercase();
    let kind = if lower.contains("quota") || lower.contains("insufficient_quota") {
        "quota exceeded".to_string()
    } else if lower.contains("rate limit")
        || lower.contains("too many requests")
        || lower.contains("429")
    {
        "rate limit".to_string()
    } else if lower.contains("api key") || lower.contains("unauthorized") || lower.contains("401") {
        "auth".to_string()
    } else if line.is_empty() {
        "api error".to_string()
    } else {
        format!("api error: {}", crate::text::chars(line, 80))
    };
    ApiError {
        kind,
        text: crate::text::bounded(text.trim(), 500),
        resets_at: None,
    }
}

/// The answer that ended the newest turn: its last assistant text, unless the turn failed or
/// was stopped first (`None`: no answer to hand on).
pub fn last_answer(messages: &[Value]) -> Option<(String, Option<Time>, Option<String>)> {
    for m in messages.iter().rev() {
        match m["role"].as_str() {
            Some("assistant") if is_error(m) => return None,
            Some("assistant") => {
                let t = text(m);
                if !t.trim().is_empty() && blocks(m, "tool_use").next().is_none() {
                    return Some((t, time(m), m["id"].as_str().map(str::to_string)));
                }
                if blocks(m, "tool_use").next().is_none() {
                    continue;
                }
                // A call after the text: the turn went on past it.
                return None;
            }
            Some("user") if blocks(m, "tool_result").next().is_none() => return None,
            _ => {}
        }
    }
    None
}

/// The context in use after the newest step: its prompt's tokens (cache reads and writes
/// included), from the newest assistant message that reports them.
pub fn context_tokens(messages: &[Value]) -> Option<u64> {
    messages.iter().rev().find_map(|m| {
        let metrics = m.get("metrics")?;
        let n = |k: &str| metrics[k].as_u64().unwrap_or(0);
        metrics["inputTokens"]
            .as_u64()
            .map(|i| i + n("cacheReadTokens") + n("cacheWriteTokens"))
    })
}
