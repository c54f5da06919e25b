//! The last answer of a pi session: the text parts of the newest `assistant` message that
//! ended its turn (`stopReason` `stop` or `length`) on the active branch, byte for byte.
//!
//! The log is a tree by `parentId`; `/tree` moves the leaf back to an older entry and the
//! abandoned entries stay in the file. Following the parents from the last entry skips them.
//! A newest turn that failed (`stopReason: "error"`) has no answer; an interrupted one
//! (`aborted`) keeps its partial text, which is no answer either, so an older one stands.

use serde_json::Value;

use crate::agents::agent::{AnswerReader, AnswerStep};
use crate::agents::fields::{self, str_of};
use crate::events::{AgentKind, Answer};

/// The answer text of an entry that ended a turn, `None` for any other entry.
pub fn answer_text(record: &Value) -> Option<String> {
    if str_of(record, "type") != Some("message") {
        return None;
    }
    let m = record.get("message")?;
    if str_of(m, "role") != Some("assistant")
        || !matches!(str_of(m, "stopReason"), Some("stop" | "length"))
    {
        return None;
    }
    let text = super::parse::text_of(m);
    (!text.trim().is_empty()).then_some(text)
}

/// Walks a log newest entry first along the `parentId` chain of the last entry.
#[derive(Debug, Default)]
pub struct Reader {
    /// The entry the chain leads to next; `None` before the first entry.
    next: Option<String>,
    started: bool,
    /// Past the newest turn's prompt: an older turn's failure no longer says anything.
    past_prompt: bool,
}

impl AnswerReader for Reader {
    fn push(&mut self, record: &Value) -> AnswerStep {
        let Some(id) = str_of(record, "id") else {
            return AnswerStep::More; // the header
        };
        if self.started && self.next.as_deref() != Some(id) {
            return AnswerStep::More; // not on the branch that ends at the last entry
        }
        self.started = true;
        if let Some(text) = answer_text(record) {
            return AnswerStep::Found(Answer {
                text,
                agent: AgentKind::Pi,
                at: fields::time(record.get("timestamp")),
                key: Some(id.to_string()),
            });
        }
        let role = record
            .get("message")
            .and_then(|m| Some((str_of(m, "role")?, str_of(m, "stopReason"))));
        match role {
            Some(("assistant", Some("error"))) if !self.past_prompt => return AnswerStep::Failed,
            Some(("user", _)) => self.past_prompt = true,
            _ => {}
        }
        // At the root (no parent) nothing older is on this branch: every older entry is skipped.
        self.next = str_of(record, "parentId").map(str::to_string);
        AnswerStep::More
    }

    fn finish(self: Box<Self>) -> Option<Answer> {
        None
    }
}
