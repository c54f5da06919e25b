//! Factory Droid adapter (`@factory/cli`, checked against 0.225.2): which process and log are
//! its ([`locate`]), what each record means ([`parse`]), the last answer ([`answer`]), what
//! its screen adds ([`screen`]: the command approval, which its log shows only as a running
//! tool, and the retry loop) and what its session used ([`usage`]). docs/agents/droid.md
//! describes it as the released client writes it.

pub mod answer;
pub mod locate;
pub mod parse;
pub mod screen;
pub mod usage;

#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};

use crate::agents::screen::without_log;
use crate::events::{AgentKind, Event, Time};
use crate::state::{Source, Status, Windows};

/// Factory Droid.
#[derive(Debug)]
pub struct Droid;

impl crate::agents::Agent for Droid {
    fn kind(&self) -> AgentKind {
        AgentKind::Droid
    }

    fn packages(&self) -> &'static [&'static str] {
        // Without npm's postinstall, `node …/@factory/cli/bin/droid` starts the binary.
        &["@factory/cli/"]
    }

    fn root(&self, pid: u32, home: &Path) -> Option<(PathBuf, &'static str)> {
        Some(locate::root(pid, home))
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
        // The log is begun only once the folder is trusted (a dialog at the first start).
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
        parse::owns_fragment(head)
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

    fn answer_reader(&self) -> Option<Box<dyn crate::agents::AnswerReader>> {
        Some(Box::<answer::Reader>::default())
    }

    fn usage(&self, line: &[u8]) -> Option<crate::usage::Reading> {
        usage::reading(line)
    }

    fn session_usage(&self, path: &Path) -> Option<anyhow::Result<crate::usage::Usage>> {
        usage::session(path)
    }

    fn shows_retries(&self) -> bool {
        true
    }

    fn retrying(&self, screen: &str) -> Option<crate::agents::retry::Retrying> {
        screen::retrying(screen)
    }

    fn refine(
        &self,
        status: Status,
        source: Source,
        _title: Option<&str>,
        screen: &mut dyn FnMut() -> Option<String>,
        _now: Time,
        _windows: &Windows,
    ) -> (Status, Source) {
        if source != Source::None {
            return (status, source);
        }
        // No log known (a folder not trusted yet, or a pane whose log cannot be told from a
        // neighbour's): what the screen shows.
        let waiting_on = |shown: &str| {
            crate::read::dialog::on_screen(screen::DIALOGS, shown)
                .map(|_| format!("permission: {}", screen::SHELL_TOOL))
        };
        without_log(status, source, screen(), waiting_on, screen::working)
    }

    fn dialogs(&self) -> &'static [crate::read::dialog::Dialog] {
        screen::DIALOGS
    }
}
