//! The last answer from a transcript, read backwards. Claude: the text blocks of the final
//! main-thread assistant message (every line sharing its `message.id`, in order; no thinking,
//! no tool use). Codex: `task_complete.last_agent_message`, else the last final-answer message.

use std::path::Path;

use anyhow::{Context, Result};
use serde_json::Value;

use crate::agents::{self, fields};
use crate::events::AgentKind;
use crate::events::Answer;
use crate::read::reverse::{Line, ReverseLines};
use crate::read::{Budget, MAX_LINE};

/// The clean last answer in `path`, or `None` when the transcript has none (yet).
pub fn last_answer_from_transcript(
    path: &Path,
    agent: Option<AgentKind>,
) -> Result<Option<Answer>> {
    last_answer_within(path, agent, Budget::default())
}

/// [`last_answer_from_transcript`] reading at most `budget` from the end (a table of many
/// panes wants a head quickly, not the answer of an hour-long turn).
pub fn last_answer_within(
    path: &Path,
    agent: Option<AgentKind>,
    budget: Budget,
) -> Result<Option<Answer>> {
    if let Some(session) = agents::opencode::session_of(path, agent)? {
        return agents::opencode::answer::last_answer(&session);
    }
    if agent.map_or_else(|| agents::gemini::is_log(path), |a| a == AgentKind::Gemini) {
        return agents::gemini::last_answer(path, budget);
    }
    let file = crate::read::open_regular(path)?;
    let mut lines = ReverseLines::new(file, MAX_LINE)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let mut agent = agent;
    let mut claude = ClaudeAnswer::default();
    let mut count = 0;
    while let Some(line) = lines.next() {
        let line = line.with_context(|| format!("cannot read {}", path.display()))?;
        count += 1;
        if count > budget.max_lines || lines.bytes_read() > budget.max_bytes {
            break;
        }
        let Line::Full(bytes) = line else { continue };
        let Ok(value) = serde_json::from_slice::<Value>(&bytes) else {
            continue;
        };
        let kind =
            *agent.get_or_insert_with(|| agents::detect_line(&bytes).unwrap_or(AgentKind::Claude));
        if kind == AgentKind::Codex && codex_failed(&value) {
            // The newest turn failed: it has no answer, and an older turn's answer must not
            // stand in for it.
            return Ok(None);
        }
        let found = match kind {
            AgentKind::Codex => codex_answer(&value),
            _ => claude.push(&value),
        };
        if claude.failed {
            // The newest turn failed: it has no answer, and the one before answered
            // another prompt.
            return Ok(None);
        }
        if let Some(mut answer) = found {
            answer.agent = kind;
            return Ok(Some(answer));
        }
    }
    Ok(claude.finish())
}

/// Collects the lines of one assistant message, newest first.
#[derive(Default)]
struct ClaudeAnswer {
    id: Option<String>,
    texts: Vec<String>,
    has_tool_use: bool,
    at: Option<crate::events::Time>,
    /// An API-error line came before any answer (walking backwards).
    failed: bool,
}

impl ClaudeAnswer {
    /// Feeds one record (walking backwards); returns the answer once a complete final
    /// message has been seen.
    fn push(&mut self, v: &Value) -> Option<Answer> {
        let main_assistant = fields::str_of(v, "type") == Some("assistant")
            && v.get("isSidechain").and_then(Value::as_bool) != Some(true);
        if main_assistant
            && self.id.is_none()
            && v.get("isApiErrorMessage").and_then(Value::as_bool) == Some(true)
        {
            self.failed = true;
            return None;
        }
        if fields::str_of(v, "type") != Some("assistant")
            || v.get("isSidechain").and_then(Value::as_bool) == Some(true)
            || v.get("isApiErrorMessage").and_then(Value::as_bool) == Some(true)
        {
            return None;
        }
        let message = v.get("message")?;
        if fields::str_of(message, "model") == Some("<synthetic>") {
            return None;
        }
        let id = fields::str_of(message, "id")
            .or_else(|| fields::str_of(v, "uuid"))
            .map(str::to_string);
        let mut done = None;
        if self.id.is_some() && id != self.id {
            // An older message begins: the one collected so far is complete.
            done = self.take();
            if done.is_some() {
                return done;
            }
        }
        if self.id.is_none() {
            self.id = id;
            self.at = fields::time(v.get("timestamp"));
        }
        for block in message
            .get("content")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            match fields::str_of(block, "type") {
                Some("text") => {
                    if let Some(t) = fields::str_of(block, "text") {
                        self.texts.push(t.to_string());
                    }
                }
                Some("tool_use" | "server_tool_use") => self.has_tool_use = true,
                _ => {}
            }
        }
        done.take()
    }

    /// The collected message if it is a final answer (text, no tool use); resets either way.
    fn take(&mut self) -> Option<Answer> {
        let collected = std::mem::take(self);
        if collected.has_tool_use {
            return None;
        }
        let text = join_blocks(collected.texts.iter().rev().map(String::as_str));
        (!text.is_empty()).then_some(Answer {
            text,
            agent: AgentKind::Claude,
            at: collected.at,
            key: collected.id,
        })
    }

    fn finish(mut self) -> Option<Answer> {
        self.take()
    }
}

/// Joins text blocks: blank blocks dropped, each block's leading/trailing newlines trimmed,
/// blocks separated by one blank line. Block interiors (code fences) stay byte-exact.
fn join_blocks<'a>(blocks: impl Iterator<Item = &'a str>) -> String {
    blocks
        .map(|b| b.trim_matches(|c| c == '\n' || c == '\r'))
        .filter(|b| !b.trim().is_empty())
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// A Codex turn that ended on an error (`task_complete` with an `error`, or an `error` event).
fn codex_failed(v: &Value) -> bool {
    let Some(payload) = v.get("payload") else {
        return false;
    };
    if fields::str_of(v, "type") != Some("event_msg") {
        return false;
    }
    match fields::str_of(payload, "type") {
        Some("task_complete" | "turn_complete") => {
            agents::codex::parse::failed_turn(payload).is_some()
        }
        Some("error") => true,
        _ => false,
    }
}

fn codex_answer(v: &Value) -> Option<Answer> {
    let payload = v.get("payload")?;
    let at = fields::time(v.get("timestamp"));
    let key = fields::str_of(payload, "turn_id").map(str::to_string);
    let text = match (fields::str_of(v, "type")?, fields::str_of(payload, "type")?) {
        ("event_msg", "task_complete" | "turn_complete") => {
            fields::str_of(payload, "last_agent_message")?.to_string()
        }
        ("event_msg", "agent_message")
            if fields::str_of(payload, "phase") == Some("final_answer") =>
        {
            fields::str_of(payload, "message")?.to_string()
        }
        ("response_item", "message")
            if fields::str_of(payload, "role") == Some("assistant")
                && fields::str_of(payload, "phase") == Some("final_answer") =>
        {
            join_blocks(
                payload
                    .get("content")?
                    .as_array()?
                    .iter()
                    .filter_map(|b| fields::str_of(b, "text")),
            )
        }
        _ => return None,
    };
    (!text.trim().is_empty()).then_some(Answer {
        text,
        agent: AgentKind::Codex,
        at,
        key,
    })
}

#[cfg(test)]
mod tests {
    use crate::agents::gemini::is_log;
    use crate::agents::gemini::tests::{log, now, ANSWER};
    use crate::events::AgentKind;
    use crate::state::{Observation, State, Windows};

    #[test]
    fn the_log_is_recognised() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        std::fs::write(&path, log()[..6].join("\n") + "\n").unwrap();
        assert!(is_log(&path));
        let (agent, s) = crate::transcript::classify_file(
            &path,
            None,
            now(),
            &Windows::default(),
            Observation::default(),
        )
        .unwrap();
        assert_eq!((agent, s.state), (AgentKind::Gemini, State::YourTurn));
        let a = crate::extract::last_answer_from_transcript(&path, None)
            .unwrap()
            .unwrap();
        assert_eq!((a.agent, a.text.as_str()), (AgentKind::Gemini, ANSWER));
    }
}
