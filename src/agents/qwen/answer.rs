//! The last answer of a Qwen Code session: the text of the newest finished reply (an
//! `assistant` record with `usageMetadata` and text, no tool call) on the active branch.
//!
//! The log is a tree by `parentUuid`. In what 0.24.4 wrote here (prompts, tools, cancels,
//! errors, quitting) every record's parent is the record before it, so file order is the
//! conversation. A rewind (double Escape, `/rewind`) breaks that: the client appends a
//! `system` `rewind` record whose parent is the turn rewound to, and the abandoned turns stay
//! in the file above it. Following the parents from the last record skips them.

use std::collections::HashMap;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use serde_json::Value;

use crate::agents::fields::{self, str_of};
use crate::events::Time;
use crate::transcript::Budget;

/// A finished reply: what `extract::Answer` needs once `AgentKind` names Qwen Code (the kind
/// is not this module's to add).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    pub text: String,
    /// The reply record's own timestamp.
    pub at: Option<Time>,
    /// The reply record's `uuid`.
    pub key: Option<String>,
}

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

/// The last answer among records in file order: the newest finished reply on the branch
/// that ends at the last record. A record whose parent is not among them (the file was read
/// from the middle) ends the walk.
pub fn last_answer_in(records: &[Value]) -> Option<Answer> {
    let by_id: HashMap<&str, &Value> = records
        .iter()
        .filter_map(|r| Some((str_of(r, "uuid")?, r)))
        .collect();
    let mut at = records.last();
    let mut steps = 0;
    while let Some(record) = at {
        if let Some(text) = answer_text(record) {
            return Some(Answer {
                text,
                at: fields::time(record.get("timestamp")),
                key: str_of(record, "uuid").map(str::to_string),
            });
        }
        steps += 1;
        if steps > records.len() {
            return None; // a cycle: not a log the client wrote
        }
        at = str_of(record, "parentUuid").and_then(|p| by_id.get(p).copied());
    }
    None
}

/// [`last_answer_in`] over the last `budget.max_bytes` of a log (a first line cut by the
/// window is dropped; a last line without its newline is still being written and is not
/// read).
pub fn last_answer<R: Read + Seek>(mut src: R, budget: Budget) -> std::io::Result<Option<Answer>> {
    let len = src.seek(SeekFrom::End(0))?;
    let from = len.saturating_sub(budget.max_bytes);
    src.seek(SeekFrom::Start(from))?;
    let mut bytes = Vec::new();
    src.take(budget.max_bytes).read_to_end(&mut bytes)?;
    let mut lines: Vec<&[u8]> = bytes.split(|b| *b == b'\n').collect();
    lines.pop(); // after the last newline: empty, or a line still being written
    if from > 0 && !lines.is_empty() {
        lines.remove(0);
    }
    let skip = lines.len().saturating_sub(budget.max_lines);
    let records: Vec<Value> = lines[skip..]
        .iter()
        .filter_map(|l| serde_json::from_slice(l).ok())
        .collect();
    Ok(last_answer_in(&records))
}

/// [`last_answer`] of the log at `path`.
pub fn last_answer_at(path: &Path, budget: Budget) -> std::io::Result<Option<Answer>> {
    last_answer(std::fs::File::open(path)?, budget)
}
