//! Claude adapter.

pub mod answer;
pub mod dialogs;
pub mod locate;
pub mod parse;
pub mod request;
pub mod screen;
pub mod settings;
pub mod statusline;
pub mod usage;

use std::path::Path;

use crate::events::Time;

/// When the session of `transcript` last wrote to one of its subagent transcripts
/// (`<session id>/subagents/agent-<id>.jsonl` beside `<session id>.jsonl`): a background
/// agent at work, while the main transcript stays quiet. `None` when it has none.
pub fn subagent_life(transcript: &Path) -> Option<Time> {
    let dir = transcript.with_extension("").join("subagents");
    std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "jsonl"))
        .filter_map(|e| e.metadata().ok()?.modified().ok())
        .max()
        .map(Time::from)
}

/// Claude Code.
#[derive(Debug)]
pub struct Claude;

impl crate::agents::Agent for Claude {
    fn kind(&self) -> crate::events::AgentKind {
        crate::events::AgentKind::Claude
    }

    fn packages(&self) -> &'static [&'static str] {
        &["@anthropic-ai/claude-code/"]
    }

    fn status_line(&self, input: &[u8], now: Time) -> Option<crate::limits::StatusLine> {
        Some(statusline::read(input, now))
    }

    fn root(&self, pid: u32, home: &Path) -> Option<(std::path::PathBuf, &'static str)> {
        Some(locate::config_root(pid, home))
    }

    fn locate(
        &self,
        t: &crate::agents::locate::Target,
        cx: &mut crate::agents::Lookup,
        steps: &mut Vec<String>,
    ) -> crate::agents::locate::Found {
        // Sessions other live Claude Code processes of this root hold are never ours.
        let table = cx.table;
        let claimed: std::collections::HashSet<String> = cx
            .shared
            .of::<locate::Claims>()
            .0
            .entry(t.root.to_path_buf())
            .or_insert_with(|| locate::claimed_sessions(t.root, &|pid| table.get(pid).is_some()))
            .iter()
            .filter(|(pid, _)| *pid != t.pid)
            .map(|(_, id)| id.clone())
            .collect();
        let t = crate::agents::locate::Target {
            claimed: &claimed,
            ..*t
        };
        locate::locate(&t, cx.cache, steps)
    }

    fn awaits_transcript(&self) -> bool {
        // Claude Code writes its transcript at the first prompt, in a project folder no watch
        // may see yet, and 2.1.197 can set its record to `waiting` just before.
        true
    }

    fn folders(&self, root: &Path, _cwd: &str) -> Vec<std::path::PathBuf> {
        // A new session announces itself in `sessions/` before any transcript.
        vec![root.join("sessions")]
    }

    fn announced_in(&self, home: &Path) -> Vec<std::path::PathBuf> {
        // The watcher's own default root: a new agent is noticed at once.
        let root = std::env::var_os("CLAUDE_CONFIG_DIR")
            .filter(|v| !v.is_empty())
            .map(std::path::PathBuf::from)
            .unwrap_or_else(|| home.join(".claude"));
        vec![root.join("sessions")]
    }

    fn owns_record(&self, record: &serde_json::Map<String, serde_json::Value>) -> bool {
        // The loosest format: any typed record the agents before it in the registry did not
        // claim.
        record.get("type").is_some_and(serde_json::Value::is_string)
    }

    fn owns_fragment(&self, head: &[u8]) -> bool {
        crate::agents::fields::scan_str(head, "type").is_some()
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

    fn look_back(&self) -> crate::agents::LookBack {
        crate::agents::LookBack {
            written_early: true,
            background_agents: true,
        }
    }

    fn side_life(&self, transcript: &Path) -> Option<Time> {
        subagent_life(transcript)
    }

    fn usage(&self, line: &[u8]) -> Option<crate::usage::Reading> {
        usage::usage(line)
    }

    fn context_window(&self, model: &str, pid: Option<u32>, home: &Path) -> Option<u64> {
        usage::context_window(model, pid, home)
    }

    fn answer_reader(&self) -> Option<Box<dyn crate::agents::AnswerReader>> {
        Some(Box::<answer::Reader>::default())
    }

    fn dialogs(&self) -> &'static [crate::read::dialog::Dialog] {
        dialogs::DIALOGS
    }

    fn question(&self, lines: &[&str]) -> Option<crate::read::dialog::Prompt> {
        dialogs::question(lines)
    }

    fn logs_requests(&self) -> bool {
        true
    }

    fn pending_request(&self, transcript: &Path) -> Option<crate::read::request::Request> {
        request::pending(transcript)
    }

    fn shows_retries(&self) -> bool {
        true
    }

    fn retrying(&self, screen: &str) -> Option<crate::agents::retry::Retrying> {
        screen::retrying(screen)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, SystemTime};

    #[test]
    fn subagent_life_is_the_newest_subagent_write() {
        let root = tempfile::tempdir().expect("tempdir");
        let transcript = root.path().join("abc.jsonl");
        std::fs::write(&transcript, "{}\n").expect("write");
        assert_eq!(subagent_life(&transcript), None, "no subagents folder");
        let subagents = root.path().join("abc").join("subagents");
        std::fs::create_dir_all(&subagents).expect("mkdir");
        let at = |name: &str, ago: u64| {
            let f = std::fs::File::create(subagents.join(name)).expect("create");
            let t = SystemTime::now() - Duration::from_secs(ago);
            f.set_modified(t).expect("set mtime");
            Time::from(t)
        };
        at("agent-a1.jsonl", 600);
        let newest = at("agent-a2.jsonl", 30);
        at("notes.txt", 0);
        assert_eq!(subagent_life(&transcript), Some(newest));
    }
}
