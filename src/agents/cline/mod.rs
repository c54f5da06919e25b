//! Cline CLI adapter (npm `cline`, checked against 3.0.65): where its session is
//! ([`locate`]), what its session record and conversation mean ([`parse`]), and its approval
//! dialog ([`screen`]). docs/agents/cline.md describes it as the released client writes it.

pub mod locate;
pub mod parse;
pub mod screen;

#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};

use anyhow::Result;
use serde_json::Value;

use crate::events::{AgentKind, Answer, Event, Time};
use crate::read::Budget;

/// The largest conversation read (it is rewritten whole at every step).
const MAX_MESSAGES: u64 = 64 * 1024 * 1024;

/// The largest session record read.
const MAX_RECORD: u64 = 1024 * 1024;

/// Cline CLI.
#[derive(Debug)]
pub struct Cline;

/// A session as read: its record and its messages (none before the first step is written).
struct Session {
    record: parse::Record,
    /// When the record was last written.
    written: Option<Time>,
    messages: Vec<Value>,
}

fn read_session(messages: &Path) -> Result<Session> {
    let record_path = locate::record_of(messages)
        .ok_or_else(|| anyhow::anyhow!("{} is no Cline conversation", messages.display()))?;
    let record = locate::read_json(&record_path, MAX_RECORD)?;
    let record = parse::record(&record)
        .ok_or_else(|| anyhow::anyhow!("{} is no Cline session record", record_path.display()))?;
    let written = std::fs::metadata(&record_path)
        .and_then(|m| m.modified())
        .ok()
        .map(Time::from);
    let messages = match locate::read_json(messages, MAX_MESSAGES) {
        Ok(v) => parse::messages(&v).to_vec(),
        Err(_) if !messages.exists() => Vec::new(),
        Err(e) => return Err(e),
    };
    Ok(Session {
        record,
        written,
        messages,
    })
}

impl crate::agents::Agent for Cline {
    fn kind(&self) -> AgentKind {
        AgentKind::Cline
    }

    fn root(&self, pid: u32, home: &Path) -> Option<(PathBuf, &'static str)> {
        Some(locate::data_dir(pid, home))
    }

    fn locate(
        &self,
        t: &crate::agents::locate::Target,
        cx: &mut crate::agents::Lookup,
        steps: &mut Vec<String>,
    ) -> crate::agents::locate::Found {
        locate::locate(t, cx.table, steps)
    }

    fn awaits_transcript(&self) -> bool {
        // Its session appears at the first prompt, in a folder of its own.
        true
    }

    fn folders(&self, root: &Path, _cwd: &str) -> Vec<PathBuf> {
        // The data dir exists from the client's start (its databases, its logs); `sessions`
        // in it only from the first prompt on a machine, and a folder that does not exist
        // cannot be watched: the data dir sees it appear.
        vec![root.to_path_buf(), locate::sessions(root)]
    }

    fn sources(&self, transcript: &Path) -> Option<Vec<PathBuf>> {
        let record = locate::record_of(transcript)?;
        Some(vec![transcript.to_path_buf(), record])
    }

    fn owns_path(&self, path: &Path) -> bool {
        locate::is_messages(path)
    }

    fn reads_log(&self) -> bool {
        true
    }

    fn file_events(&self, path: &Path) -> Option<Result<Vec<Event>>> {
        Some(read_session(path).map(|s| parse::events(&s.messages, &s.record.status, s.written)))
    }

    fn last_answer(&self, path: &Path, _budget: Budget) -> Option<Result<Option<Answer>>> {
        Some(read_session(path).map(|s| {
            parse::last_answer(&s.messages).map(|(text, at, key)| Answer {
                text,
                agent: AgentKind::Cline,
                at,
                key,
            })
        }))
    }

    fn session_usage(&self, path: &Path) -> Option<Result<crate::usage::Usage>> {
        Some(read_session(path).map(|s| usage(&s)))
    }

    fn dialogs(&self) -> &'static [crate::read::dialog::Dialog] {
        screen::DIALOGS
    }

    fn logs_requests(&self) -> bool {
        true
    }

    fn pending_request(&self, transcript: &Path) -> Option<crate::read::request::Request> {
        use crate::read::request::{PromptKind, Request, RequestSource};
        let s = read_session(transcript).ok()?;
        if s.record.status != parse::PENDING {
            return None;
        }
        let call = parse::pending_call(&s.messages)?;
        let first = call.detail.lines().next().unwrap_or_default().to_string();
        Some(
            Request::new(
                PromptKind::Permission,
                &call.name,
                &call.detail,
                &call.detail,
                Some(call.id),
                RequestSource::Log,
            )
            .keyed(&first),
        )
    }
}

/// The session's usage: its totals from the record, the context from the newest step.
fn usage(s: &Session) -> crate::usage::Usage {
    let (input, output) = s.record.tokens.unzip();
    crate::usage::Usage {
        model: s.record.model.clone(),
        context_tokens: parse::context_tokens(&s.messages),
        context_window: None,
        context_percent: None,
        session_input: input,
        session_output: output,
        cost_usd: s.record.cost,
    }
}
