//! Gemini CLI's chat log, read backwards: the live message records, newest first.
//!
//! The log (`chats/session-*.jsonl`) is append-only, but records replace earlier ones (see
//! docs/agents/gemini.md):
//! - a message record (`{"id", "type", …}`) with an id seen before replaces that message;
//! - `{"$set": {…}}` updates metadata; with `messages` it replaces the whole list;
//! - `{"$rewindTo": id}` removes that message and every later one.
//!
//! Gemini CLI also re-records its history when it rolls a turn back (Escape on a pending tool
//! call, compression): every message again, with new ids and the current time, then a
//! `$set.messages` naming them. Those restatements are not events. They are told apart by how
//! they are written, which a backward reader sees without the rest of the file: a contiguous
//! run of user records and model-less gemini records (a restated model turn has no `model`;
//! a real reply always has one) directly before a `$set.messages` or the end of the file,
//! that holds a model-less gemini record or the `<session_context>` prompt.

use std::collections::HashSet;
use std::io::{Read, Seek};

use serde_json::Value;

use crate::agents::fields::{self, scan_all, scan_str};
use crate::events::Time;
use crate::read::reverse::{Line, ReverseLines};
use crate::read::{Budget, MAX_LINE};

/// One tool call of a gemini record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    /// `success`, `error`, `cancelled` once complete.
    pub status: String,
}

impl ToolCall {
    /// The call has finished (Gemini CLI records calls only then, but older versions may not).
    pub fn complete(&self) -> bool {
        matches!(self.status.as_str(), "success" | "error" | "cancelled")
    }
}

/// What a message record says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    /// A user record: a prompt, tool results (`functionResponse` parts), or the session context.
    User {
        context: bool,
        results: Vec<String>,
        text: String,
    },
    /// A model turn: its text (thoughts excluded) and tool calls. `text` is `None` when the
    /// record was too large to decode.
    Gemini {
        text: Option<String>,
        tools: Vec<ToolCall>,
        /// Real replies name their model; restatements do not.
        model: bool,
    },
    Info(String),
    Error(String),
    Other,
}

/// One message record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    pub id: String,
    pub at: Option<Time>,
    pub kind: Kind,
}

impl Message {
    /// Part of a restated history run (see the module docs).
    fn restatement_candidate(&self) -> bool {
        matches!(
            self.kind,
            Kind::User { .. } | Kind::Gemini { model: false, .. }
        )
    }

    fn marks_restatement(&self) -> bool {
        matches!(
            self.kind,
            Kind::User { context: true, .. } | Kind::Gemini { model: false, .. }
        )
    }
}

/// One line of the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Record {
    /// The first line (`sessionId`, `projectHash`, `startTime`).
    Metadata,
    /// `$set` with `messages`: the list was replaced.
    SetMessages,
    /// Any other `$set`, or a line that is not a record.
    Meta,
    Rewind(String),
    Message(Message),
}

/// Parses one complete line.
pub fn parse_line(line: &[u8]) -> Record {
    match serde_json::from_slice::<Value>(line) {
        Ok(v) => parse_value(&v),
        Err(_) => Record::Meta,
    }
}

/// Parses a decoded record.
pub fn parse_value(v: &Value) -> Record {
    if let Some(set) = v.get("$set") {
        return if set.get("messages").is_some_and(Value::is_array) {
            Record::SetMessages
        } else {
            Record::Meta
        };
    }
    if let Some(id) = fields::str_of(v, "$rewindTo") {
        return Record::Rewind(id.to_string());
    }
    let Some(id) = fields::str_of(v, "id") else {
        return if v.get("sessionId").is_some() && v.get("projectHash").is_some() {
            Record::Metadata
        } else {
            Record::Meta
        };
    };
    let content = v.get("content").unwrap_or(&Value::Null);
    let kind = match fields::str_of(v, "type") {
        Some("user") => {
            let text = text_of(content);
            Kind::User {
                context: text.trim_start().starts_with("<session_context>"),
                results: parts(content)
                    .filter_map(|p| p.get("functionResponse"))
                    .filter_map(|f| fields::str_of(f, "id"))
                    .map(str::to_string)
                    .collect(),
                text,
            }
        }
        Some("gemini") => Kind::Gemini {
            text: Some(text_of(content)),
            tools: v
                .get("toolCalls")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(|t| ToolCall {
                    id: fields::str_of(t, "id").unwrap_or_default().to_string(),
                    name: fields::str_of(t, "name").unwrap_or("tool").to_string(),
                    status: fields::str_of(t, "status").unwrap_or_default().to_string(),
                })
                .collect(),
            model: v.get("model").is_some_and(|m| !m.is_null()),
        },
        Some("info") => Kind::Info(text_of(content)),
        Some("error") => Kind::Error(text_of(content)),
        _ => Kind::Other,
    };
    Record::Message(Message {
        id: id.to_string(),
        at: fields::time(v.get("timestamp")),
        kind,
    })
}

/// A line too large to decode: what its head and tail fragments show. The text is lost.
pub fn parse_fragments(head: &[u8], tail: &[u8]) -> Record {
    if head.starts_with(br#"{"$set":{"messages":"#) {
        return Record::SetMessages;
    }
    if head.starts_with(br#"{"$set""#) {
        return Record::Meta;
    }
    let (Some(id), Some(ty)) = (scan_str(head, "id"), scan_str(head, "type")) else {
        return Record::Meta;
    };
    let at = scan_str(head, "timestamp")
        .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
        .map(|t| t.with_timezone(&chrono::Utc));
    let kind = match ty {
        "user" => Kind::User {
            context: false,
            results: Vec::new(),
            text: String::new(),
        },
        "gemini" => {
            let has = |f: &[u8], n: &[u8]| f.windows(n.len()).any(|w| w == n);
            let tools = if has(head, b"\"toolCalls\":[") || has(tail, b"\"status\":\"") {
                scan_all(tail, "status")
                    .into_iter()
                    .map(|s| ToolCall {
                        id: String::new(),
                        name: "tool".into(),
                        status: s.to_string(),
                    })
                    .collect()
            } else {
                Vec::new()
            };
            Kind::Gemini {
                text: None,
                tools,
                model: has(head, b"\"model\":\"") || has(tail, b"\"model\":\""),
            }
        }
        "info" => Kind::Info(String::new()),
        "error" => Kind::Error(scan_str(head, "content").unwrap_or_default().to_string()),
        _ => Kind::Other,
    };
    Record::Message(Message {
        id: id.to_string(),
        at,
        kind,
    })
}

/// The text of a message's `content`: a string, or the `text` of its parts (thoughts left
/// out), joined as written.
pub fn text_of(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        _ => parts(content)
            .filter(|p| p.get("thought").and_then(Value::as_bool) != Some(true))
            .filter_map(|p| fields::str_of(p, "text"))
            .collect(),
    }
}

fn parts(content: &Value) -> impl Iterator<Item = &Value> {
    content.as_array().into_iter().flatten()
}

/// The live message records of a log, newest first: restatements dropped, rewound messages
/// skipped, reading at most a budget's worth from the end.
pub struct Live<R> {
    lines: ReverseLines<R>,
    budget: Budget,
    count: usize,
    /// The restatement run being collected (newest first), and whether it can still be one.
    run: Vec<Message>,
    in_run: bool,
    /// Ready to hand out, newest first.
    ready: std::collections::VecDeque<Message>,
    /// A `$rewindTo` seen: skip until this id.
    rewinding: Option<String>,
    /// Ids removed by a rewind (their older records too).
    removed: HashSet<String>,
    /// The start of the file was reached.
    pub reached_start: bool,
    /// Lines that did not decode.
    pub skipped: usize,
}

impl<R: Read + Seek> Live<R> {
    /// A reader over `src`, newest first.
    pub fn new(src: R, budget: Budget) -> std::io::Result<Live<R>> {
        Ok(Live {
            lines: ReverseLines::from_reader(src, MAX_LINE)?,
            budget,
            count: 0,
            run: Vec::new(),
            in_run: true,
            ready: Default::default(),
            rewinding: None,
            removed: HashSet::new(),
            reached_start: false,
            skipped: 0,
        })
    }

    /// Bytes read so far.
    pub fn bytes_read(&self) -> u64 {
        self.lines.bytes_read()
    }

    /// The next older live message.
    pub fn next_message(&mut self) -> std::io::Result<Option<Message>> {
        loop {
            if let Some(m) = self.ready.pop_front() {
                return Ok(Some(m));
            }
            let over = self.count >= self.budget.max_lines
                || self.lines.bytes_read() >= self.budget.max_bytes;
            let line = if over { None } else { self.lines.next() };
            let Some(line) = line else {
                self.end_run();
                if self.ready.is_empty() {
                    self.reached_start = !over;
                    return Ok(None);
                }
                continue;
            };
            self.count += 1;
            let record = match line? {
                Line::Full(bytes) => parse_line(&bytes),
                Line::Huge { head, tail, .. } => parse_fragments(&head, &tail),
            };
            match record {
                Record::Meta => {}
                Record::Metadata => {
                    self.end_run();
                }
                Record::SetMessages => {
                    self.end_run();
                    self.in_run = true;
                }
                Record::Rewind(id) => {
                    self.end_run();
                    self.removed.insert(id.clone());
                    self.rewinding = Some(id);
                }
                Record::Message(m) => {
                    if self.in_run && m.restatement_candidate() {
                        self.run.push(m);
                    } else {
                        self.end_run();
                        self.admit(m);
                    }
                }
            }
        }
    }

    /// Closes the current run: a restatement is dropped, anything else handed out.
    fn end_run(&mut self) {
        self.in_run = false;
        let run = std::mem::take(&mut self.run);
        let restated = run.iter().any(Message::marks_restatement);
        for m in run {
            if restated {
                // Still seen by a rewind looking for its target.
                self.rewound(&m);
            } else {
                self.admit(m);
            }
        }
    }

    /// True (and remembered) when a rewind removed `m`.
    fn rewound(&mut self, m: &Message) -> bool {
        if self.removed.contains(&m.id) {
            if self.rewinding.as_deref() == Some(m.id.as_str()) {
                self.rewinding = None;
            }
            return true;
        }
        if self.rewinding.is_some() {
            self.removed.insert(m.id.clone());
            return true;
        }
        false
    }

    fn admit(&mut self, m: Message) {
        if !self.rewound(&m) {
            self.ready.push_back(m);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn live(lines: &[&str]) -> Vec<(String, Kind)> {
        let text = lines.join("\n") + "\n";
        let mut r = Live::new(std::io::Cursor::new(text.into_bytes()), Budget::default()).unwrap();
        let mut out = Vec::new();
        while let Some(m) = r.next_message().unwrap() {
            out.push((m.id, m.kind));
        }
        out
    }

    fn ids(lines: &[&str]) -> Vec<String> {
        live(lines).into_iter().map(|(id, _)| id).collect()
    }

    const META: &str = r#"{"sessionId":"s","projectHash":"h","startTime":"2026-12-01T22:27:59.406Z","kind":"main"}"#;
    const CONTEXT: &str = r#"{"$set":{"messages":[{"id":"c","type":"user","content":[{"text":"<session_context>\nx"}]}]}}"#;

    #[test]
    fn replies_carry_text_and_tool_calls() {
        let lines = [
            META,
            CONTEXT,
            r#"{"id":"u1","timestamp":"2026-12-01T22:28:30.811Z","type":"user","content":[{"text":"hi"}]}"#,
            r#"{"$set":{"lastUpdated":"2026-12-01T22:28:30.812Z"}}"#,
            r#"{"id":"g1","timestamp":"2026-12-01T22:28:31Z","type":"gemini","content":"Hello.","thoughts":[],"model":"m","toolCalls":[{"id":"t1","name":"run_shell_command","status":"success"}]}"#,
        ];
        let got = live(&lines);
        assert_eq!(got.len(), 2);
        match &got[0].1 {
            Kind::Gemini { text, tools, model } => {
                assert_eq!(text.as_deref(), Some("Hello."));
                assert!(*model && tools[0].complete() && tools[0].name == "run_shell_command");
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(&got[1].1, Kind::User { context: false, text, .. } if text == "hi"));
    }

    #[test]
    fn a_restated_history_is_not_read_as_new_messages() {
        // Escape on a pending tool call: the cancel, then the history again with new ids.
        let lines = [
            META,
            r#"{"id":"u1","type":"user","content":[{"text":"go"}]}"#,
            r#"{"id":"g1","type":"gemini","content":"","model":"m"}"#,
            r#"{"id":"i1","type":"info","content":"Request cancelled."}"#,
            r#"{"$set":{"lastUpdated":"x"}}"#,
            r#"{"id":"r1","type":"user","content":[{"text":"<session_context>\nx"}]}"#,
            r#"{"$set":{"lastUpdated":"x"}}"#,
            r#"{"id":"r2","type":"gemini","content":[{"text":"old answer"}],"thoughts":[],"tokens":null}"#,
            r#"{"id":"r3","type":"user","content":[{"text":"old prompt"}]}"#,
            r#"{"id":"r4","type":"gemini","content":[{"text":"older answer"}],"tokens":null}"#,
            r#"{"$set":{"messages":[]}}"#,
        ];
        assert_eq!(ids(&lines), ["i1", "g1", "u1"]);
        // Half written: the `$set.messages` has not arrived yet.
        assert_eq!(ids(&lines[..lines.len() - 1]), ["i1", "g1", "u1"]);
    }

    #[test]
    fn a_prompt_dropped_by_a_list_rewrite_still_counts() {
        // An API error: the list is rewritten without the prompt, then the error is recorded.
        let lines = [
            META,
            r#"{"id":"g0","type":"gemini","content":"A","model":"m"}"#,
            r#"{"id":"u1","type":"user","content":[{"text":"fail please"}]}"#,
            r#"{"$set":{"messages":[]}}"#,
            r#"{"id":"e1","type":"error","content":"[API Error: x]"}"#,
        ];
        assert_eq!(ids(&lines), ["e1", "u1", "g0"]);
    }

    #[test]
    fn rewind_removes_the_target_and_everything_after_it() {
        let lines = [
            META,
            r#"{"id":"u1","type":"user","content":[{"text":"a"}]}"#,
            r#"{"id":"g1","type":"gemini","content":"A","model":"m"}"#,
            r#"{"id":"u2","type":"user","content":[{"text":"b"}]}"#,
            r#"{"id":"g2","type":"gemini","content":"B","model":"m"}"#,
            r#"{"$rewindTo":"u2"}"#,
        ];
        assert_eq!(ids(&lines), ["g1", "u1"]);
        let mut more = lines.to_vec();
        more.push(r#"{"id":"u3","type":"user","content":[{"text":"c"}]}"#);
        assert_eq!(ids(&more), ["u3", "g1", "u1"]);
    }

    #[test]
    fn a_half_written_last_line_is_not_read() {
        let text = format!(
            "{META}\n{}\n{}",
            r#"{"id":"u1","type":"user","content":[{"text":"a"}]}"#,
            r#"{"id":"g1","type":"gemini","content":"A","mo"#
        );
        let mut r = Live::new(std::io::Cursor::new(text.into_bytes()), Budget::default()).unwrap();
        assert_eq!(r.next_message().unwrap().unwrap().id, "u1");
        assert!(r.next_message().unwrap().is_none());
        assert!(r.reached_start);
    }

    #[test]
    fn huge_records_keep_their_identity() {
        let head =
            br#"{"id":"g9","timestamp":"2026-12-01T22:28:31Z","type":"gemini","content":"aaaa"#;
        let tail = br#"aaa","model":"m","toolCalls":[{"id":"t","status":"success"}]}"#;
        match parse_fragments(head, tail) {
            Record::Message(m) => {
                assert_eq!(m.id, "g9");
                assert!(
                    matches!(m.kind, Kind::Gemini { text: None, model: true, ref tools } if tools.len() == 1)
                );
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            parse_fragments(br#"{"$set":{"messages":[{"id""#, b"]}}"),
            Record::SetMessages
        );
    }
}
