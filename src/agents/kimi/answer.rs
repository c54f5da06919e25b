//! The last answer of a Kimi Code session: the text of the newest assistant message that
//! ended its turn (`agent.message.appended`, `meta.finish.finishReason` `completed`, no tool
//! calls), byte for byte. A newest turn that failed (`turn.ended` `failed`) has no answer; an
//! interrupted one keeps its partial text as a `salvaged` message, which is no answer, so an
//! older one stands.

use serde_json::Value;

use crate::agents::agent::{AnswerReader, AnswerStep};
use crate::agents::fields::str_of;
use crate::events::{AgentKind, Answer};

/// The answer text of a record that ended a turn, `None` for any other record.
pub fn answer_text(record: &Value) -> Option<String> {
    if str_of(record, "type") != Some("agent.message.appended") {
        return None;
    }
    let m = &record["message"]["message"];
    let finish = &record["message"]["meta"]["finish"];
    let no_calls = m["toolCalls"].as_array().map_or(true, Vec::is_empty);
    if str_of(m, "role") != Some("assistant")
        || !matches!(str_of(finish, "finishReason"), Some("completed" | "length"))
        || !no_calls
    {
        return None;
    }
    let text: String = m["content"]
        .as_array()?
        .iter()
        .filter(|p| p["type"] == "text")
        .filter_map(|p| p["text"].as_str())
        .collect();
    (!text.trim().is_empty()).then_some(text)
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
                agent: AgentKind::Kimi,
                at: super::parse::time(record),
                key: str_of(&record["message"]["meta"], "messageId").map(str::to_string),
            });
        }
        match str_of(record, "type") {
            Some("turn.ended")
                if !self.past_prompt && str_of(record, "reason") == Some("failed") =>
            {
                AnswerStep::Failed
            }
            Some("turn.prompt") => {
                self.past_prompt = true;
                AnswerStep::More
            }
            _ => AnswerStep::More,
        }
    }

    fn finish(self: Box<Self>) -> Option<Answer> {
        None
    }
}
