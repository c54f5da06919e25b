//! Codex adapter.

pub mod answer;
pub mod daemon;
pub mod dialogs;
pub mod home;
pub mod locate;
pub mod parse;
pub mod request;
pub mod screen;
pub mod usage;

use std::path::Path;

/// The types of the records a rollout wraps everything in.
const RECORD_TYPES: [&str; 5] = [
    "session_meta",
    "event_msg",
    "response_item",
    "turn_context",
    "compacted",
];

/// Codex CLI.
#[derive(Debug)]
pub struct Codex;

impl crate::agents::Agent for Codex {
    fn kind(&self) -> crate::events::AgentKind {
        crate::events::AgentKind::Codex
    }

    fn packages(&self) -> &'static [&'static str] {
        &["@openai/codex/"]
    }

    fn root(&self, pid: u32, home: &Path) -> Option<(std::path::PathBuf, &'static str)> {
        Some(home::codex_home(pid, home))
    }

    fn locate(
        &self,
        t: &crate::agents::locate::Target,
        cx: &mut crate::agents::Lookup,
        steps: &mut Vec<String>,
    ) -> crate::agents::locate::Found {
        locate::locate(t, cx.now, cx.table, cx.home, steps)
    }

    fn awaits_transcript(&self) -> bool {
        // Its daemon writes a new session's first rollout in a dated folder under
        // `sessions/` that no watch saw (a minute late with 0.171).
        true
    }

    fn machine_driven(&self, transcript: &Path) -> bool {
        locate::machine_driven(transcript)
    }

    fn usage(&self, line: &[u8]) -> Option<crate::usage::Reading> {
        usage::usage(line)
    }

    fn folders(&self, root: &Path, _cwd: &str) -> Vec<std::path::PathBuf> {
        // Rollouts appear under `sessions/`.
        vec![root.join("sessions")]
    }

    fn owns_record(&self, record: &serde_json::Map<String, serde_json::Value>) -> bool {
        // Everything is wrapped in `{timestamp, type, payload}` with Codex's record types.
        record.contains_key("payload")
            && record
                .get("type")
                .and_then(serde_json::Value::as_str)
                .is_some_and(|t| RECORD_TYPES.contains(&t))
    }

    fn owns_fragment(&self, head: &[u8]) -> bool {
        // The wrapper's `type` comes before its `payload`.
        crate::agents::fields::scan_str(head, "type").is_some_and(|t| RECORD_TYPES.contains(&t))
            && head.windows(10).any(|w| w == b"\"payload\"")
    }

    fn reads_log(&self) -> bool {
        true
    }

    fn parse_line(&self, line: &[u8]) -> Option<crate::events::Event> {
        parse::parse_line(line)
    }

    fn parse_fragments(&self, head: &[u8], tail: &[u8]) -> Option<crate::events::Event> {
        parse::parse_fragments(head, tail)
    }

    fn answer_reader(&self) -> Option<Box<dyn crate::agents::AnswerReader>> {
        Some(Box::new(answer::Reader))
    }

    fn dialogs(&self) -> &'static [crate::read::dialog::Dialog] {
        dialogs::DIALOGS
    }

    fn logs_requests(&self) -> bool {
        true
    }

    fn pending_request(&self, transcript: &Path) -> Option<crate::read::request::Request> {
        // Back to the turn's start: nothing before it is pending.
        let records =
            crate::read::tail_records(transcript, |v| v["type"] == "turn_context").ok()?;
        request::pending(&records)
    }

    fn shows_retries(&self) -> bool {
        true
    }

    fn retrying(&self, screen: &str) -> Option<crate::agents::retry::Retrying> {
        screen::retrying(screen)
    }

    fn tool_line(&self, trimmed: &str, first: char) -> bool {
        // Codex boxes a tool's output in `│ ` lines, indented.
        trimmed.starts_with("│ ") && first == ' '
    }

    fn enter_delay(&self) -> std::time::Duration {
        std::time::Duration::from_millis(250)
    }
}
