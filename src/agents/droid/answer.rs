//! The last answer of a droid session: the text parts of the newest `assistant` message that
//! holds text and no tool call, byte for byte. A newest turn that failed (a `BYOK Error:`
//! record before any answer) has none; one stopped by Escape wrote no text, so an older
//! answer stands.

use serde_json::Value;

use crate::agents::agent::{AnswerReader, AnswerStep};
use crate::agents::fields::{self, str_of};
use crate::events::{AgentKind, Answer};

use super::parse::{parts, text_of, ERROR_PREFIX};

/// The answer text of a record, `None` for any other record.
pub fn answer_text(record: &Value) -> Option<String> {
    let m = message(record, "assistant")?;
    if parts(m)
        .iter()
        .any(|p| str_of(p, "type") == Some("tool_use"))
    {
        return None;
    }
    let text = text_of(m);
    (!text.trim().is_empty()).then_some(text)
}

/// The `message` of a `message` record whose role is `role`.
fn message<'a>(record: &'a Value, role: &str) -> Option<&'a Value> {
    if str_of(record, "type") != Some("message") {
        return None;
    }
    let m = record.get("message")?;
    (str_of(m, "role") == Some(role)).then_some(m)
}

/// Reads a log newest record first.
#[derive(Debug, Default)]
pub struct Reader {
    /// Past the newest turn's prompt: an older turn's failure no longer says anything.
    past_prompt: bool,
}

impl AnswerReader for Reader {
    fn push(&mut self, record: &Value) -> AnswerStep {
        if let Some(text) = answer_text(record) {
            return AnswerStep::Found(Answer {
                text,
                agent: AgentKind::Droid,
                at: fields::time(record.get("timestamp")),
                key: str_of(record, "id").map(str::to_string),
            });
        }
        let Some(user) = message(record, "user") else {
            return AnswerStep::More;
        };
        let text = text_of(user);
        if text.starts_with(ERROR_PREFIX) && !self.past_prompt {
            return AnswerStep::Failed;
        }
        if user.get("userMessageSource").is_some() {
            self.past_prompt = true;
        }
        AnswerStep::More
    }

    fn finish(self: Box<Self>) -> Option<Answer> {
        None
    }
}
