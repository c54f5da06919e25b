//! The last answer of a Qwen Code session: the text of the newest finished reply (an
//! `assistant` record with `usageMetadata` and text, no tool call) on the active branch.
//!
//! The log is a tree by `parentUuid`. In what 0.24.4 wrote here (prompts, tools, cancels,
//! errors, quitting) every record's parent is the record before it, so file order is the
//! conversation. A rewind (double Escape, `/rewind`) breaks that: the client appends a
//! `system` `rewind` record whose parent is the turn rewound to, and the abandoned turns stay
//! in the file above it. Following the parents from the last record skips them.

use serde_json::Value;

use crate::agents::agent::{AnswerReader, AnswerStep};
use crate::agents::fields::{self, str_of};
use crate::events::Answer;
use crate::events::{AgentKind, EventKind};

/// The answer text of a finished reply record, `None` for any other record.
pub fn answer_text(record: &Value) -> Option<String> {
    if str_of(record, "type") != Some("assistant") || str_of(record, "subtype").is_some() {
        return None;
    }
    if !record.get("usageMetadata").is_some_and(Value::is_object) {
        return None;
    }
    let parts = record.get("message")?.get("parts")?.as_array()?;
    if parts.iter().any(|p| p.get("functionCall").is_some()) {
        return None;
    }
    let text: String = parts
        .iter()
        .filter(|p| p.get("thought").and_then(Value::as_bool) != Some(true))
        .filter_map(|p| str_of(p, "text"))
        .collect();
    let text = text.trim_matches(|c| c == '\n' || c == '\r');
    (!text.trim().is_empty()).then(|| text.to_string())
}

/// What a main-thread record means on the way back: a failed API call, a prompt, neither.
fn main_kind(record: &Value) -> Option<EventKind> {
    super::parse::parse_value(record)
        .filter(|e| !e.sidechain)
        .map(|e| e.kind)
}

/// Walks a log newest record first along the `parentUuid` chain of the last record: records
/// of an abandoned branch (above a rewind) are skipped.
#[derive(Debug, Default)]
pub struct Reader {
    /// The record the chain leads to next; `None` before the first record.
    next: Option<String>,
    started: bool,
    /// Past the newest turn's prompt: an older turn's failure no longer says anything.
    past_prompt: bool,
}

impl AnswerReader for Reader {
    fn push(&mut self, record: &Value) -> AnswerStep {
        let Some(uuid) = str_of(record, "uuid") else {
            return AnswerStep::More;
        };
        if self.started && self.next.as_deref() != Some(uuid) {
            return AnswerStep::More; // not on the branch that ends at the last record
        }
        self.started = true;
        if let Some(text) = answer_text(record) {
            return AnswerStep::Found(Answer {
                text,
                agent: AgentKind::Qwen,
                at: fields::time(record.get("timestamp")),
                key: Some(uuid.to_string()),
            });
        }
        match main_kind(record) {
            // The newest turn failed: it has no answer, and an older reply must not stand in.
            Some(EventKind::ApiError(_)) if !self.past_prompt => return AnswerStep::Failed,
            Some(EventKind::UserPrompt) => self.past_prompt = true,
            _ => {}
        }
        self.next = str_of(record, "parentUuid").map(str::to_string);
        if self.next.is_none() {
            // The first record of the session: nothing older belongs to this branch.
            self.next = Some(String::new());
        }
        AnswerStep::More
    }

    fn finish(self: Box<Self>) -> Option<Answer> {
        None
    }
}

/// The last answer among records in file order: the newest finished reply on the branch
/// that ends at the last record; `None` when that branch's newest turn failed.
pub fn last_answer_in(records: &[Value]) -> Option<Answer> {
    let mut reader = Reader::default();
    for record in records.iter().rev() {
        match reader.push(record) {
            AnswerStep::More => {}
            AnswerStep::Found(a) => return Some(a),
            AnswerStep::Failed => return None,
        }
    }
    None
}
