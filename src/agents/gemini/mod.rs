//! Gemini CLI adapter: where its chat log is ([`locate`]), what its records mean
//! ([`records`]), its state from the log and its pane title ([`pane`]), and its last answer.
//! docs/agents/gemini.md describes the format as the released client writes it.

pub mod locate;
pub mod pane;
pub mod records;
pub mod screen;
pub mod usage;

use std::io::{Read, Seek};
use std::path::Path;

use anyhow::{Context, Result};

use crate::events::Answer;
use crate::events::{AgentKind, ApiError, Event, EventKind};
use crate::read::Budget;
use crate::state;
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

/// What a person should read about an `error` record, in words, as for the other agents:
/// `quota exceeded` or `rate limit` (429), `auth` (401, 403, a rejected key),
/// `api error 400: <message>`; an error that is no API error (a slash command's) reads
/// `error: <text>`.
///
/// Gemini CLI 0.61 writes `[API Error: <message>]`, the message often the API's JSON body
/// (`{"error":{"code":400,"message":…,"status":"INVALID_ARGUMENT"}}`), or
/// `[API Error: <message> (Status: <status>)]`; after a 429 it appends advice ("Please wait
/// and try again later…"), and a spent quota's record carries only the message, no code
/// (fixtures/real-clients/gemini-0.61.0/errors.jsonl).
pub fn api_error(text: &str) -> ApiError {
    let Some(inner) = text.trim().strip_prefix("[API Error:") else {
        let line = text.lines().map(str::trim).find(|l| !l.is_empty());
        return ApiError {
            kind: line.map_or("error".into(), |l| {
                format!("error: {}", crate::text::chars(l, 80))
            }),
            text: crate::text::bounded(text.trim(), 500),
            resets_at: None,
        };
    };
    // `<message>]` then, after a 429, advice without brackets.
    let (message, advice) = inner.rsplit_once(']').unwrap_or((inner, ""));
    let (code, status, message) = parse_message(message.trim());
    let lower = message.to_ascii_lowercase();
    let kind = if code == Some(429)
        || status == "RESOURCE_EXHAUSTED"
        || advice.contains("try again later")
        || advice.contains("quota limitations")
    {
        if lower.contains("quota") {
            "quota exceeded".to_string()
        } else {
            "rate limit".to_string()
        }
    } else if matches!(code, Some(401 | 403))
        || matches!(status.as_str(), "UNAUTHENTICATED" | "PERMISSION_DENIED")
        || lower.contains("api key not valid")
    {
        "auth".to_string()
    } else {
        let line = message.lines().map(str::trim).find(|l| !l.is_empty());
        let detail = line
            .map(|l| crate::text::chars(l, 80))
            .or_else(|| (!status.is_empty()).then(|| status.clone()));
        match (code, detail) {
            (Some(c), Some(d)) => format!("api error {c}: {d}"),
            (Some(c), None) => format!("api error {c}"),
            (None, Some(d)) => format!("api error: {d}"),
            (None, None) => "api error".to_string(),
        }
    };
    ApiError {
        kind,
        text: crate::text::bounded(if message.is_empty() { text } else { &message }, 500),
        resets_at: None,
    }
}

/// The code, status and message of an API error message: the API's JSON body (its message
/// may itself be one), `<message> (Status: <status>)`, or plain text.
fn parse_message(message: &str) -> (Option<u64>, String, String) {
    let body = serde_json::Deserializer::from_str(message)
        .into_iter::<serde_json::Value>()
        .next()
        .and_then(Result::ok);
    if let Some(error) = body.as_ref().and_then(|v| v.get("error")) {
        let code = error.get("code").and_then(serde_json::Value::as_u64);
        let status = crate::agents::fields::str_of(error, "status").unwrap_or_default();
        let text = crate::agents::fields::str_of(error, "message").unwrap_or_default();
        let (inner_code, inner_status, inner_text) = if text.trim_start().starts_with('{') {
            parse_message(text.trim())
        } else {
            (None, String::new(), text.to_string())
        };
        return (
            code.or(inner_code),
            if status.is_empty() {
                inner_status
            } else {
                status.to_string()
            },
            inner_text,
        );
    }
    if let Some((text, status)) = message
        .strip_suffix(')')
        .and_then(|m| m.rsplit_once(" (Status: "))
    {
        return (None, status.to_string(), text.trim().to_string());
    }
    (None, String::new(), message.to_string())
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

/// The events of a chat log that decide its state (see [`tail_events_from`]).
pub fn state_events(path: &Path) -> Result<Vec<Event>> {
    let file = crate::read::open_regular(path)?;
    tail_events_from(file, Budget::default())
        .with_context(|| format!("cannot read {}", path.display()))
}

/// The last answer: the text of the newest live reply that made no tool call. `None` when
/// an error came after it: the turn that failed has no answer, and the reply before it
/// answered another prompt.
pub fn last_answer(path: &Path, budget: Budget) -> Result<Option<Answer>> {
    let file = crate::read::open_regular(path)?;
    last_answer_from(file, budget).with_context(|| format!("cannot read {}", path.display()))
}

/// [`last_answer`] over any seekable source.
pub fn last_answer_from<R: Read + Seek>(src: R, budget: Budget) -> std::io::Result<Option<Answer>> {
    let mut live = Live::new(src, budget)?;
    while let Some(m) = live.next_message()? {
        if let Kind::Error(_) = m.kind {
            return Ok(None);
        }
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
    let Ok(file) = crate::read::open_regular(path) else {
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

/// Gemini CLI.
#[derive(Debug)]
pub struct Gemini;

impl crate::agents::Agent for Gemini {
    fn on_screen(&self, screen: &str) -> Option<crate::read::dialog::OnScreen> {
        let tool = pane::dialog_tool(screen)?.unwrap_or_default();
        crate::read::dialog::headed(screen, &tool, |l| l.starts_with("? "), pane::is_title)
    }

    fn kind(&self) -> AgentKind {
        AgentKind::Gemini
    }

    fn packages(&self) -> &'static [&'static str] {
        &["@google/gemini-cli/"]
    }

    fn root(&self, pid: u32, home: &Path) -> Option<(std::path::PathBuf, &'static str)> {
        Some(locate::gemini_dir(pid, home))
    }

    fn locate(
        &self,
        t: &crate::agents::locate::Target,
        cx: &mut crate::agents::Lookup,
        steps: &mut Vec<String>,
    ) -> crate::agents::locate::Found {
        locate::locate(t, cx.table, steps)
    }

    fn awaits_transcript(&self) -> bool {
        // The log appears about 2 s after the process starts, under the project folder that
        // `projects.json` names only from then on: a pane resolved before has no folder to
        // watch for it.
        true
    }

    fn folders(&self, root: &Path, cwd: &str) -> Vec<std::path::PathBuf> {
        // No session records: the first log appears in the project's `chats/`.
        locate::project_dir(root, cwd)
            .map(|p| vec![p.join("chats")])
            .unwrap_or_default()
    }

    fn owns_path(&self, path: &Path) -> bool {
        is_log(path)
    }

    fn owns_record(&self, record: &serde_json::Map<String, serde_json::Value>) -> bool {
        is_record(record)
    }

    fn reads_log(&self) -> bool {
        true
    }

    fn file_events(&self, path: &Path) -> Option<Result<Vec<Event>>> {
        Some(state_events(path))
    }

    fn last_answer(&self, path: &Path, budget: Budget) -> Option<Result<Option<Answer>>> {
        Some(last_answer(path, budget))
    }

    fn usage(&self, line: &[u8]) -> Option<crate::usage::Reading> {
        usage::reading(line)
    }

    fn context_window(&self, model: &str, _pid: Option<u32>, _home: &Path) -> Option<u64> {
        usage::window(model)
    }

    fn reads_title(&self) -> bool {
        // Its status is in the terminal title.
        true
    }

    fn wants_screen(
        &self,
        status: &crate::state::Status,
        title: &str,
        now: crate::events::Time,
    ) -> bool {
        pane::wants_screen(status, title, now)
    }

    fn refine(
        &self,
        status: crate::state::Status,
        source: crate::state::Source,
        title: Option<&str>,
        screen: &mut dyn FnMut() -> Option<String>,
        now: crate::events::Time,
        windows: &crate::state::Windows,
    ) -> (crate::state::Status, crate::state::Source) {
        // It logs a tool call only once it is complete: its title says the rest.
        pane::refine(status, source, title, screen, now, windows)
    }

    fn shows_retries(&self) -> bool {
        // Not in so many words: a prompt left unanswered (see `screen`).
        true
    }

    fn retrying(&self, screen: &str) -> Option<crate::agents::retry::Retrying> {
        screen::retrying(screen)
    }

    fn resubmits(&self) -> bool {
        // Its busy event loop takes an Enter within 30 ms of a paste as a newline.
        true
    }

    fn input_pending(&self, screen: &str) -> bool {
        pane::input_pending(screen)
    }
}

#[cfg(test)]
pub(crate) mod tests;
