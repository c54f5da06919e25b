//! Kimi Code adapter (`@moonshot-ai/kimi-code`, verified against 2.1.0). A Node program
//! (Node ≥ 22.19) that renames its process `kimi-code`; each session is a folder
//! `<KIMI_CODE_HOME or ~/.kimi-code>/sessions/wd_<folder>_<hash>/session_<uuid>/` with the
//! main agent's append-only `agents/main/wire.jsonl`. See docs/agents/kimi.md.
//!
//! - [`locate`]: the process → its session folder and log (by time: nothing names the pid).
//! - [`parse`]: one `wire.jsonl` line → [`crate::events::Event`], and its usage.
//! - [`answer`]: the last answer of the newest turn.
//! - [`screen`]: the approval dialog on screen.

pub mod answer;
pub mod locate;
pub mod parse;
pub mod screen;

#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};

use crate::agents::locate::{Found, Target};
use crate::agents::retry::{marked, may_still_retry};
use crate::agents::screen::without_log;
use crate::agents::{AnswerReader, Lookup};
use crate::events::{AgentKind, Event, Time};
use crate::state::{Source, Status, Windows};

/// Kimi Code.
#[derive(Debug)]
pub struct Kimi;

impl crate::agents::Agent for Kimi {
    fn kind(&self) -> AgentKind {
        AgentKind::Kimi
    }

    fn packages(&self) -> &'static [&'static str] {
        // `node …/@moonshot-ai/kimi-code/dist/main.mjs` until it retitles itself `kimi-code`
        // (its whole command line then), whichever node runs it.
        &["@moonshot-ai/kimi-code/", locate::TITLE]
    }

    fn root(&self, pid: u32, home: &Path) -> Option<(PathBuf, &'static str)> {
        Some(locate::root(pid, home))
    }

    fn locate(&self, t: &Target, cx: &mut Lookup, steps: &mut Vec<String>) -> Found {
        locate::locate(t, cx.table, steps)
    }

    fn awaits_transcript(&self) -> bool {
        // The session folder and its log are made at the first prompt.
        true
    }

    fn folders(&self, root: &Path, _cwd: &str) -> Vec<PathBuf> {
        // A new session's folder appears under `sessions/wd_<folder>_<hash>/`, which itself
        // appears with the folder's first session.
        let sessions = root.join(locate::SESSIONS);
        let mut out = vec![sessions.clone()];
        if let Ok(entries) = std::fs::read_dir(&sessions) {
            out.extend(entries.flatten().map(|e| e.path()).filter(|p| {
                p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("wd_"))
            }));
        }
        out
    }

    fn owns_path(&self, path: &Path) -> bool {
        locate::is_wire(path)
    }

    fn owns_record(&self, record: &serde_json::Map<String, serde_json::Value>) -> bool {
        parse::owns(record)
    }

    fn owns_fragment(&self, head: &[u8]) -> bool {
        head.starts_with(br#"{"type":""#)
            && crate::agents::fields::scan_str(head, "agentId").is_some()
            && crate::agents::fields::scan_str(head, "type").is_some_and(|t| t.contains('.'))
    }

    fn reads_log(&self) -> bool {
        true
    }

    fn parse_line(&self, line: &[u8]) -> Option<Event> {
        parse::parse_line(line)
    }

    fn parse_fragments(&self, head: &[u8], tail: &[u8]) -> Option<Event> {
        parse::parse_fragments(head, tail)
    }

    fn answer_reader(&self) -> Option<Box<dyn AnswerReader>> {
        Some(Box::<answer::Reader>::default())
    }

    fn usage(&self, line: &[u8]) -> Option<crate::usage::Reading> {
        parse::usage(line)
    }

    fn shows_retries(&self) -> bool {
        true
    }

    fn retrying(&self, screen: &str) -> Option<crate::agents::retry::Retrying> {
        screen::retrying(screen)
    }

    fn wants_screen(&self, status: &Status, _title: &str, now: Time) -> bool {
        retry_pending(status, now)
    }

    fn refine(
        &self,
        status: Status,
        source: Source,
        _title: Option<&str>,
        screen: &mut dyn FnMut() -> Option<String>,
        now: Time,
        _windows: &Windows,
    ) -> (Status, Source) {
        if source != Source::None {
            if !retry_pending(&status, now) {
                return (status, source);
            }
            // The retried call's error is the log's last word; the screen says where its
            // retries stand.
            return marked(
                screen().as_deref().and_then(screen::retrying),
                status,
                source,
                now,
            );
        }
        // No log known (before the first prompt, or beside a neighbour in the same folder
        // whose session cannot be told from this one's): what the screen shows.
        let waiting_on = |shown: &str| self.on_screen(shown).map(|on| screen::reason(&on.request));
        without_log(status, source, screen(), waiting_on, screen::working)
    }

    fn dialogs(&self) -> &'static [crate::read::dialog::Dialog] {
        screen::DIALOGS
    }
}

/// How long after a retried error the screen is still asked whether it retries (its waits
/// grow to about a minute over its 10 attempts).
const RETRY_WATCH: std::time::Duration = std::time::Duration::from_secs(10 * 60);

/// An error of a call it retries (a rate limit), recent enough that it may still be at it.
fn retry_pending(status: &Status, now: Time) -> bool {
    may_still_retry(status, now, RETRY_WATCH, |reason| reason == "rate limit")
}

#[cfg(test)]
pub(crate) mod testkit {
    //! The recorded real-client fixtures (fixtures/real-clients/kimi-2.1.0).

    /// The text of a fixture file.
    pub fn fixture(name: &str) -> String {
        crate::agents::testkit::recorded("kimi-2.1.0", name)
    }
}
