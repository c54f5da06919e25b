//! Claude Code's last answer: the text blocks of the final main-thread assistant message
//! (every line sharing its `message.id`, in order; no thinking, no tool use), read newest
//! record first.

use serde_json::Value;

use crate::agents::agent::{AnswerReader, AnswerStep};
use crate::agents::fields;
use crate::events::AgentKind;
use crate::events::Answer;

/// Collects the lines of one assistant message, newest first.
#[derive(Default)]
pub struct Reader {
    id: Option<String>,
    texts: Vec<String>,
    has_tool_use: bool,
    at: Option<crate::events::Time>,
    /// An API-error line came before any answer (walking backwards).
    failed: bool,
}

impl Reader {
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
        let text = crate::text::join_blocks(collected.texts.iter().rev().map(String::as_str));
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

impl AnswerReader for Reader {
    fn push(&mut self, record: &Value) -> AnswerStep {
        let found = Reader::push(self, record);
        if self.failed {
            // The newest turn failed: it has no answer, and the one before answered
            // another prompt.
            return AnswerStep::Failed;
        }
        found.map_or(AnswerStep::More, AnswerStep::Found)
    }

    fn finish(self: Box<Self>) -> Option<Answer> {
        Reader::finish(*self)
    }
}
