//! Gemini CLI adapter: where its chat log is ([`locate`]), what its records mean
//! ([`records`]), its state from the log and its pane title ([`pane`]), and its last answer.
//! docs/agents/gemini.md describes the format as the released client writes it.

pub mod locate;
pub mod pane;
pub mod records;

use std::io::{Read, Seek};
use std::path::Path;

use anyhow::{Context, Result};

use crate::events::{AgentKind, ApiError, Event, EventKind};
use crate::extract::Answer;
use crate::state::{self, Observation, Status, Windows};
use crate::transcript::Budget;
use records::{Kind, Live, Message};

/// The event a live message stands for (`None`: bookkeeping).
pub fn event_of(m: &Message) -> Option<Event> {
    let kind = match &m.kind {
        Kind::User { context: true, .. } | Kind::Other => return None,
        Kind::User { results, .. } if !results.is_empty() => EventKind::ToolResult {
            ids: results.clone(),
        },
        Kind::User { .. } => EventKind::UserPrompt,
        Kind::Gemini { tools, .. } if !tools.is_empty() => {
            let pending: Vec<_> = tools.iter().filter(|t| !t.complete()).collect();
            if pending.is_empty() {
                // Every call finished; the model reads the results next.
                EventKind::ToolResult {
                    ids: tools.iter().map(|t| t.id.clone()).collect(),
                }
            } else {
                EventKind::ToolUse {
                    ids: pending.iter().map(|t| t.id.clone()).collect(),
                    names: pending.iter().map(|t| t.name.clone()).collect(),
                }
            }
        }
        // A reply with neither text nor recorded calls: a function call is out (calls are
        // recorded only when complete), maybe waiting for approval.
        Kind::Gemini { text: Some(t), .. } if t.trim().is_empty() => EventKind::ToolUse {
            ids: vec![m.id.clone()],
            names: vec!["pending".into()],
        },
        // Text: the end of the turn, unless a call follows (the pane title tells; the log
        // does not until the call completes).
        Kind::Gemini { .. } => EventKind::AssistantText { closes: None },
        Kind::Info(text) if text.trim() == "Request cancelled." => EventKind::Interrupted,
        Kind::Info(_) => return None,
        Kind::Error(text) => EventKind::ApiError(api_error(text)),
    };
    Some(Event {
        kind,
        sidechain: false,
        at: m.at,
        key: Some(m.id.clone()),
        message_id: None,
    })
}

/// `[API Error: {"error":{"code":400,"message":…,"status":"INVALID_ARGUMENT"}}]` → a kind
/// named after the failure.
pub fn api_error(text: &str) -> ApiError {
    let json = text.find('{').and_then(|start| {
        serde_json::from_str::<serde_json::Value>(text[start..].trim_end_matches(']')).ok()
    });
    let error = json.as_ref().and_then(|v| v.get("error"));
    let code = error
        .and_then(|e| e.get("code"))
        .and_then(serde_json::Value::as_u64);
    let status = error
        .and_then(|e| e.get("status"))
        .and_then(serde_json::Value::as_str)
        .unwrap_or_default();
    let kind = match (code, status) {
        (Some(429), _) | (_, "RESOURCE_EXHAUSTED") => "rate_limit",
        (Some(401), _) | (_, "UNAUTHENTICATED") => "authentication_failed",
        (Some(403), _) | (_, "PERMISSION_DENIED") => "permission_denied",
        (Some(400), _) | (_, "INVALID_ARGUMENT" | "FAILED_PRECONDITION") => "invalid_request",
        (Some(404), _) | (_, "NOT_FOUND") => "not_found",
        (Some(500..=599), _) | (_, "UNAVAILABLE" | "INTERNAL") => "server_error",
        _ => "api_error",
    };
    let message = error
        .and_then(|e| e.get("message"))
        .and_then(serde_json::Value::as_str)
        .unwrap_or(text);
    ApiError {
        kind: kind.to_string(),
        text: crate::text::bounded(message, 500),
        resets_at: None,
    }
}

/// The events that decide the state, in file order: read back to the latest decisive one.
pub fn tail_events_from<R: Read + Seek>(src: R, budget: Budget) -> std::io::Result<Vec<Event>> {
    let mut live = Live::new(src, budget)?;
    let mut events = Vec::new();
    while let Some(m) = live.next_message()? {
        let Some(ev) = event_of(&m) else { continue };
        let decisive = state::is_decisive(&ev);
        events.push(ev);
        if decisive {
            break;
        }
    }
    events.reverse();
    Ok(events)
}

/// The state of a Gemini CLI chat log at `now`.
pub fn classify_file(
    path: &Path,
    now: crate::events::Time,
    windows: &Windows,
    obs: Observation,
) -> Result<(AgentKind, Status)> {
    let file = crate::transcript::open_regular(path)?;
    let events = tail_events_from(file, Budget::default())
        .with_context(|| format!("cannot read {}", path.display()))?;
    Ok((
        AgentKind::Gemini,
        state::classify(&events, now, windows, obs),
    ))
}

/// The last answer: the text of the newest live reply that made no tool call.
pub fn last_answer(path: &Path, budget: Budget) -> Result<Option<Answer>> {
    let file = crate::transcript::open_regular(path)?;
    last_answer_from(file, budget).with_context(|| format!("cannot read {}", path.display()))
}

/// [`last_answer`] over any seekable source.
pub fn last_answer_from<R: Read + Seek>(src: R, budget: Budget) -> std::io::Result<Option<Answer>> {
    let mut live = Live::new(src, budget)?;
    while let Some(m) = live.next_message()? {
        if let Kind::Gemini {
            text: Some(text),
            tools,
            model: true,
        } = &m.kind
        {
            if tools.is_empty() && !text.trim().is_empty() {
                return Ok(Some(Answer {
                    text: text.trim_matches(|c| c == '\n' || c == '\r').to_string(),
                    agent: AgentKind::Gemini,
                    at: m.at,
                    key: Some(m.id),
                }));
            }
        }
    }
    Ok(None)
}

/// True when the file's first line is a Gemini CLI session's metadata. Only a regular file is
/// read (a FIFO would block).
pub fn is_log(path: &Path) -> bool {
    let Ok(file) = crate::transcript::open_regular(path) else {
        return false;
    };
    let mut head = Vec::new();
    if file.take(64 * 1024).read_to_end(&mut head).is_err() {
        return false;
    }
    let first = head.split(|b| *b == b'\n').next().unwrap_or_default();
    serde_json::from_slice::<serde_json::Value>(first)
        .ok()
        .and_then(|v| v.as_object().cloned())
        .is_some_and(|o| o.contains_key("sessionId") && o.contains_key("projectHash"))
}

/// True when a line looks like a Gemini CLI chat-log record.
pub fn is_record(obj: &serde_json::Map<String, serde_json::Value>) -> bool {
    (obj.contains_key("sessionId") && obj.contains_key("projectHash"))
        || obj.contains_key("$set")
        || obj.contains_key("$rewindTo")
        || (obj.contains_key("id")
            && matches!(
                obj.get("type").and_then(|t| t.as_str()),
                Some("gemini" | "info" | "error")
            ))
}

#[cfg(test)]
mod tests;
