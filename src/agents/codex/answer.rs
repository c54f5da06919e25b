//! Codex's last answer: `task_complete.last_agent_message`, else the last final-answer
//! message, read newest record first; a turn that ended on an error has none.

use serde_json::Value;

use crate::agents::agent::{AnswerReader, AnswerStep};
use crate::agents::fields;
use crate::events::AgentKind;
use crate::events::Answer;

/// Reads rollout records newest first.
#[derive(Debug, Default)]
pub struct Reader;

impl AnswerReader for Reader {
    fn push(&mut self, record: &Value) -> AnswerStep {
        if codex_failed(record) {
            // The newest turn failed: it has no answer, and an older turn's answer must not
            // stand in for it.
            return AnswerStep::Failed;
        }
        codex_answer(record).map_or(AnswerStep::More, AnswerStep::Found)
    }

    fn finish(self: Box<Self>) -> Option<Answer> {
        None
    }
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
        Some("task_complete" | "turn_complete") => super::parse::failed_turn(payload).is_some(),
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
            crate::text::join_blocks(
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
