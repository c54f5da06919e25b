//! The last answer of a Copilot CLI session: `data.content` of the newest main-agent
//! `assistant.message` without tool requests, read backwards from the end of `events.jsonl`.
//! The newest interaction decides: when it was aborted, failed, is still running a tool, or
//! has not answered yet, there is no answer — an older interaction's answer is never handed on
//! as if it answered the latest prompt. Text is byte-exact (code blocks included); only the
//! newlines around it are trimmed.

use std::io::{Read, Seek};
use std::path::Path;

use anyhow::{Context, Result};
use serde_json::Value;

use crate::agents::fields::{self, str_of};
use crate::events::Answer;
use crate::events::{AgentKind, Time};
use crate::read::reverse::{Line, ReverseLines};
use crate::read::{Budget, MAX_LINE};

/// An answer, before it is tagged with the agent kind the registry gives Copilot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnAnswer {
    pub text: String,
    pub at: Option<Time>,
    /// The interaction it answers (`data.interactionId`), else the message id.
    pub key: Option<String>,
}

impl TurnAnswer {
    /// The shared [`Answer`] the outputs take.
    pub fn into_answer(self, agent: AgentKind) -> Answer {
        Answer {
            text: self.text,
            agent,
            at: self.at,
            key: self.key,
        }
    }
}

/// What one record, read newest first, says about the last answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// This is the answer.
    Answer(TurnAnswer),
    /// The newest interaction has no answer: stop.
    None,
    /// Says nothing; read on.
    Continue,
}

/// One record, read newest first.
pub fn step(v: &Value) -> Step {
    if str_of(v, "agentId").is_some() {
        return Step::Continue;
    }
    let data = v.get("data").unwrap_or(&Value::Null);
    match str_of(v, "type").unwrap_or_default() {
        // The interaction was cut short or failed, or a prompt with no answer yet.
        "abort" | "session.error" | "user.message" => Step::None,
        "assistant.message" => {
            let requests = data
                .get("toolRequests")
                .and_then(Value::as_array)
                .is_some_and(|a| !a.is_empty());
            if requests {
                // A tool call after the last answer: the interaction is still running.
                return Step::None;
            }
            let text = str_of(data, "content")
                .unwrap_or_default()
                .trim_matches(|c| c == '\n' || c == '\r');
            if text.trim().is_empty() {
                return Step::Continue;
            }
            Step::Answer(TurnAnswer {
                text: text.to_string(),
                at: fields::time(v.get("timestamp")),
                key: str_of(data, "interactionId")
                    .or_else(|| str_of(data, "messageId"))
                    .map(str::to_string),
            })
        }
        _ => Step::Continue,
    }
}

/// The last answer in `path`, or `None` when the newest interaction has none (yet).
pub fn last_answer(path: &Path, budget: Budget) -> Result<Option<TurnAnswer>> {
    let file = crate::read::open_regular(path)?;
    last_answer_from(file, budget).with_context(|| format!("cannot read {}", path.display()))
}

/// [`last_answer`] over any seekable source.
pub fn last_answer_from<R: Read + Seek>(
    src: R,
    budget: Budget,
) -> std::io::Result<Option<TurnAnswer>> {
    let mut lines = ReverseLines::from_reader(src, MAX_LINE)?;
    let mut count = 0;
    while let Some(line) = lines.next() {
        let line = line?;
        count += 1;
        if count > budget.max_lines || lines.bytes_read() > budget.max_bytes {
            break;
        }
        let value = match line {
            Line::Full(bytes) => match serde_json::from_slice::<Value>(&bytes) {
                Ok(v) => v,
                Err(_) => continue,
            },
            // An answer too large to hold is not handed on cut; other huge lines (tool
            // output, the system prompt) say nothing.
            Line::Huge { head, .. } => match fields::scan_str(&head, "type") {
                Some("assistant.message") => return Ok(None),
                _ => continue,
            },
        };
        match step(&value) {
            Step::Answer(a) => return Ok(Some(a)),
            Step::None => return Ok(None),
            Step::Continue => {}
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agents::copilot::testkit::{fixture, lines};

    fn answer_of(text: &str) -> Option<String> {
        last_answer_from(std::io::Cursor::new(text.as_bytes()), Budget::default())
            .unwrap()
            .map(|a| a.text)
    }

    /// The log cut just after its `n`-th record of type `ty` (1-based).
    fn upto(name: &str, ty: &str, n: usize) -> String {
        let tag = format!(r#""type":"{ty}""#);
        let mut seen = 0;
        let mut out = String::new();
        for l in lines(name) {
            out.push_str(&l);
            out.push('\n');
            if l.starts_with(&format!("{{{tag}")) {
                seen += 1;
                if seen == n {
                    return out;
                }
            }
        }
        panic!("{name} has fewer than {n} {ty}");
    }

    #[test]
    fn answers_are_byte_exact() {
        let first = upto("turns.jsonl", "assistant.turn_end", 1);
        assert_eq!(
            answer_of(&first).as_deref(),
            Some("Here is the answer.\n\n```sh\necho  \"hi\"\t$x\n```\nDone.")
        );
        // After the tool call's second model call.
        let tool = upto("turns.jsonl", "assistant.turn_end", 3);
        assert_eq!(answer_of(&tool).as_deref(), Some("Tool done."));
        let a = last_answer_from(std::io::Cursor::new(tool.into_bytes()), Budget::default())
            .unwrap()
            .unwrap();
        assert!(a.at.is_some());
        assert_eq!(a.into_answer(AgentKind::Codex).text, "Tool done.");
    }

    #[test]
    fn a_running_aborted_or_failed_interaction_has_no_answer() {
        // The tool call's first model call ended, its result is in, the answer not yet.
        let mid = upto("turns.jsonl", "tool.execution_complete", 1);
        assert_eq!(answer_of(&mid), None);
        // A new prompt, no reply yet.
        let asked = upto("turns.jsonl", "user.message", 3);
        assert_eq!(answer_of(&asked), None);
        // Escape mid-stream, the 400, the 429, and the whole session (ends with the 429).
        assert_eq!(answer_of(&upto("turns.jsonl", "abort", 1)), None);
        assert_eq!(answer_of(&upto("turns.jsonl", "session.error", 1)), None);
        assert_eq!(answer_of(&fixture("turns.jsonl")), None);
        // Escape at the approval dialog, then exit: the shutdown says nothing, the abort does.
        assert_eq!(answer_of(&fixture("approval.jsonl")), None);
        // The question answered, then the reply; the SIGHUP shutdown after it says nothing.
        assert_eq!(
            answer_of(&fixture("ask-user.jsonl")).as_deref(),
            Some("Tool done.")
        );
    }

    #[test]
    fn an_error_after_the_answer_means_the_newest_interaction_failed() {
        let text = format!(
            "{}{}\n",
            upto("turns.jsonl", "assistant.turn_end", 1),
            r#"{"type":"session.error","data":{"errorType":"query","message":"boom"},"id":"e","timestamp":"2026-12-02T09:37:37Z","parentId":null}"#
        );
        assert_eq!(answer_of(&text), None);
    }

    #[test]
    fn a_subagent_s_message_is_not_the_answer() {
        let text = format!(
            "{}{}\n",
            upto("turns.jsonl", "assistant.turn_end", 1),
            r#"{"type":"assistant.message","agentId":"sub","data":{"content":"sub answer","toolRequests":[]},"id":"x","timestamp":"2026-12-02T09:37:37Z","parentId":null}"#
        );
        assert_eq!(
            answer_of(&text).as_deref(),
            Some("Here is the answer.\n\n```sh\necho  \"hi\"\t$x\n```\nDone.")
        );
    }
}
