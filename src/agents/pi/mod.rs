//! pi adapter (`@mariozechner/pi-coding-agent`, checked against 0.73.1): where its session
//! log is ([`locate`], with agentpane's own [`extension`]), what each record means
//! ([`parse`], read by [`read`]), the last answer ([`answer`]), and what its screen adds
//! ([`screen`]): an extension's approval dialog and the retry countdown. docs/agents/pi.md
//! describes it as the released client writes it.

pub mod answer;
pub mod extension;
pub mod locate;
pub mod parse;
pub mod read;
pub mod screen;
pub mod usage;

#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};

use crate::agents::retry::{marked, may_still_retry};
use crate::agents::screen::without_log;
use crate::events::{AgentKind, Event, Time};
use crate::state::{Source, Status, Windows};

/// How long after a retryable error the screen is still asked whether pi retries it (its
/// waits are 2, 4 and 8 s by default, `retry.baseDelayMs` doubles them).
const RETRY_WATCH: std::time::Duration = std::time::Duration::from_secs(10 * 60);

/// pi.
#[derive(Debug)]
pub struct Pi;

impl crate::agents::Agent for Pi {
    fn kind(&self) -> AgentKind {
        AgentKind::Pi
    }

    fn packages(&self) -> &'static [&'static str] {
        // It renames itself `pi` at once; before that it is `node …/pi-coding-agent/dist/cli.js`.
        &["@mariozechner/pi-coding-agent/"]
    }

    fn root(&self, pid: u32, home: &Path) -> Option<(PathBuf, &'static str)> {
        Some(locate::agent_dir(pid, home))
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
        // The log appears when the first answer ends; the extension's record names it before.
        true
    }

    fn folders(&self, root: &Path, cwd: &str) -> Vec<PathBuf> {
        vec![locate::cwd_sessions(root, cwd)]
    }

    fn owns_path(&self, path: &Path) -> bool {
        locate::is_session_file(path)
    }

    fn owns_record(&self, record: &serde_json::Map<String, serde_json::Value>) -> bool {
        parse::owns(record)
    }

    fn owns_fragment(&self, head: &[u8]) -> bool {
        crate::agents::fields::scan_str(head, "type") == Some("message")
            && crate::agents::fields::scan_str(head, "parentId").is_some()
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

    fn file_events(&self, path: &Path) -> Option<anyhow::Result<Vec<Event>>> {
        Some(read::file_events(path))
    }

    fn usage(&self, line: &[u8]) -> Option<crate::usage::Reading> {
        usage::reading(line)
    }

    fn context_window(&self, model: &str, pid: Option<u32>, home: &Path) -> Option<u64> {
        let dir = match pid {
            Some(pid) => locate::agent_dir(pid, home).0,
            None => home.join(".pi/agent"),
        };
        usage::window_in(&dir, model)
    }

    fn answer_reader(&self) -> Option<Box<dyn crate::agents::AnswerReader>> {
        Some(Box::<answer::Reader>::default())
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
        if source == Source::None {
            // No log known (a first turn, which pi writes when its answer ends, or a pane
            // whose log cannot be told from a neighbour's): what the screen shows.
            return without_log(status, source, screen(), screen::approval, screen::working);
        }
        if !retry_pending(&status, now) {
            return (status, source);
        }
        let Some(shown) = screen() else {
            return (status, source);
        };
        // The failed attempt's record is the log's last word; the screen says whether pi
        // waits to try again (or is trying), which makes it a retry rather than the end.
        let retry = screen::retrying(&shown).or_else(|| {
            screen::working(&shown).then(|| crate::agents::retry::Retrying {
                error: status.reason.clone().unwrap_or_default(),
                attempt: None,
                limit: None,
                next_in: None,
            })
        });
        marked(retry, status, source, now)
    }

    fn dialogs(&self) -> &'static [crate::read::dialog::Dialog] {
        screen::DIALOGS
    }

    fn question(&self, lines: &[&str]) -> Option<crate::read::dialog::Prompt> {
        screen::selector(lines)
    }

    fn hook_file(
        &self,
        home: &Path,
        var: &dyn Fn(&str) -> Option<String>,
    ) -> Option<crate::agents::HookFile> {
        Some(extension::hook_file(home, var))
    }
}

/// A failed call of a kind pi retries by itself, recent enough that it may still be at it.
fn retry_pending(status: &Status, now: Time) -> bool {
    may_still_retry(status, now, RETRY_WATCH, parse::retryable)
}
