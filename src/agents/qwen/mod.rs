//! Qwen Code adapter (`@qwen-code/qwen-code`, checked against 0.24.4): where its chat log is
//! ([`locate`]), what each log record means ([`parse`]), the last answer ([`answer`]), what
//! its pane title and screen add ([`screen`], [`pane`]). docs/agents/qwen.md describes the
//! format as the released client writes it.

pub mod answer;
pub mod locate;
pub mod pane;
pub mod parse;
pub mod screen;
pub mod usage;

#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};

use crate::events::{AgentKind, Event, Time};
use crate::state::Source;
use crate::state::{Status, Windows};

/// The key (tmux name) that clears Qwen Code's input box before routed text is typed. After
/// Escape cancels a turn the client puts the cancelled prompt back in the box, with the
/// cursor at its end, and typed text would be appended to it.
///
/// `C-u` deletes to the start of the line, and at a line's start joins it to the line above
/// (0.24.4 `kill_line_left`), so [`clear_presses`] of it empty any prompt. The others are
/// unsafe: `C-c` empties the box but also arms "press Ctrl+C again to exit" (a second one
/// quits); Escape on an empty box opens the rewind dialog on the second press. Verified on
/// the real client: fixtures/real-clients/qwen-0.24.4/states/06-interrupted → 07-after-ctrl-u.
pub const CLEAR_INPUT_KEY: &str = "C-u";

/// How many [`CLEAR_INPUT_KEY`] presses empty a box of `lines` lines (two per line: one
/// clears the line, one joins it to the line above; extra presses on an empty box do
/// nothing).
pub fn clear_presses(lines: usize) -> usize {
    2 * lines.max(1)
}

/// Qwen Code.
#[derive(Debug)]
pub struct Qwen;

impl crate::agents::Agent for Qwen {
    fn on_screen(&self, screen: &str) -> Option<crate::read::dialog::OnScreen> {
        // Its dialog is Gemini CLI's, reworded (`Allow execution of: 'echo'?`).
        crate::read::dialog::headed(
            screen,
            "",
            |l| l.starts_with("? "),
            crate::agents::gemini::pane::is_title,
        )
    }

    fn kind(&self) -> AgentKind {
        AgentKind::Qwen
    }

    fn usage(&self, line: &[u8]) -> Option<crate::usage::Reading> {
        usage::reading(line)
    }

    fn context_window(&self, model: &str, _pid: Option<u32>, _home: &Path) -> Option<u64> {
        usage::window(model)
    }

    fn packages(&self) -> &'static [&'static str] {
        // Every process of it is `node`: `…/.bin/qwen` (named like it), then
        // `…/@qwen-code/qwen-code/cli.js` twice; the runner hand-over of the process walk
        // ends at the innermost, which owns the session.
        &["@qwen-code/qwen-code/"]
    }

    fn root(&self, pid: u32, home: &Path) -> Option<(PathBuf, &'static str)> {
        Some(locate::qwen_home(pid, home))
    }

    fn locate(
        &self,
        t: &crate::agents::locate::Target,
        _cx: &mut crate::agents::Lookup,
        steps: &mut Vec<String>,
    ) -> crate::agents::locate::Found {
        locate::locate(t, steps)
    }

    fn awaits_transcript(&self) -> bool {
        // The log appears at the first prompt, in a project folder no watch may see yet.
        true
    }

    fn folders(&self, root: &Path, cwd: &str) -> Vec<PathBuf> {
        // The session record (rewritten by `/clear`), and where the first log appears.
        vec![
            root.join(locate::SESSIONS_DIR),
            locate::chats_dir(root, cwd),
        ]
    }

    fn owns_record(&self, record: &serde_json::Map<String, serde_json::Value>) -> bool {
        // Claude-like envelopes, Gemini-like parts: `message.parts`, `systemPayload`, or a
        // top-level `tool_result` record, none of which Claude Code writes.
        record.get("type").is_some_and(serde_json::Value::is_string)
            && (record
                .get("message")
                .and_then(|m| m.get("parts"))
                .is_some_and(serde_json::Value::is_array)
                || record.contains_key("systemPayload")
                || record.get("type").and_then(serde_json::Value::as_str) == Some("tool_result"))
    }

    fn owns_fragment(&self, head: &[u8]) -> bool {
        // `provenance` comes right after `type` in every record 0.24.4 writes.
        crate::agents::fields::scan_str(head, "type").is_some()
            && crate::agents::fields::scan_str(head, "provenance").is_some()
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

    fn shows_retries(&self) -> bool {
        true
    }

    fn retrying(&self, screen: &str) -> Option<crate::agents::retry::Retrying> {
        screen::retrying(screen)
    }

    fn reads_title(&self) -> bool {
        // `◐︎` working, `✳︎` approval, nothing idle.
        true
    }

    fn wants_screen(&self, status: &Status, title: &str, _now: Time) -> bool {
        pane::wants_screen(status, title)
    }

    fn refine(
        &self,
        status: Status,
        source: Source,
        title: Option<&str>,
        screen: &mut dyn FnMut() -> Option<String>,
        now: Time,
        _windows: &Windows,
    ) -> (Status, Source) {
        pane::refine(status, source, title, screen, now)
    }

    fn clear_input(&self, screen: &str) -> Option<(&'static str, usize)> {
        match pane::held_lines(screen) {
            0 => None,
            n => Some((CLEAR_INPUT_KEY, clear_presses(n))),
        }
    }
}
