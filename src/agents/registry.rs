//! The registry: the one list of every agent agentpane knows and the lookups the pipeline asks
//! through it. It sits above every agent: no agent and no helper the agents share names it
//! (an agent that needs another's adapter names that agent's module).

use std::path::{Path, PathBuf};

use super::{
    aider, amp, claude, cline, codex, copilot, droid, gemini, kilo, kimi, opencode, pi, qwen,
};
use super::{retry, Agent};
use crate::events::{AgentKind, Event};

pub mod stores;

/// Every agent agentpane knows, one line each. A record of a log given without `--agent` is
/// claimed by the first agent here whose format it fits, so the loosest formats come last.
const REGISTRY: [&dyn Agent; AgentKind::ALL.len()] = [
    &codex::Codex,
    &copilot::Copilot,
    &gemini::Gemini,
    &opencode::Opencode,
    &qwen::Qwen,
    &kilo::Kilo,
    &droid::Droid,
    &pi::Pi,
    &kimi::Kimi,
    &cline::Cline,
    &claude::Claude,
    &amp::Amp,
    &aider::Aider,
];

/// The agent a JSONL log given without `--agent` is reported as when no line of it says whose
/// it is (an empty file). Nothing is parsed as its: a line no agent claims is skipped.
pub const UNTOLD: AgentKind = AgentKind::Claude;

/// The adapter of `kind`.
pub fn of(kind: AgentKind) -> &'static dyn Agent {
    REGISTRY
        .iter()
        .copied()
        .find(|a| a.kind() == kind)
        .unwrap_or_else(|| unreachable!("the registry lists every AgentKind ({kind})"))
}

/// Every adapter, in registry order.
pub fn all() -> impl Iterator<Item = &'static dyn Agent> {
    REGISTRY.iter().copied()
}

/// What the `kind` agent waits on the human for: the request its log shows pending (in
/// full), else the dialog on its `screen`.
pub fn request_of(
    kind: AgentKind,
    transcript: Option<&Path>,
    screen: Option<&str>,
) -> Option<crate::read::request::Request> {
    let agent = of(kind);
    transcript
        .filter(|_| agent.logs_requests())
        .and_then(|t| agent.pending_request(t))
        .or_else(|| agent.on_screen(screen?).map(|d| d.request))
}

/// The agent whose own form `path` is in (a session in its database, its chat log), if any.
pub fn owner_of_path(path: &Path) -> Option<&'static dyn Agent> {
    all().find(|a| a.owns_path(path))
}

/// The agent whose own reading of `path` comes first: `agent` when the caller names it, else
/// the one whose own form `path` is in.
pub fn own_reader(path: &Path, agent: Option<AgentKind>) -> Option<&'static dyn Agent> {
    agent.map(of).or_else(|| owner_of_path(path))
}

/// Whether `agent` keeps its sessions in a store of opencode's form: it owns a session in a
/// database named after it.
pub fn keeps_a_store(agent: AgentKind) -> bool {
    // Asked per pane and per log: worked out once per kind.
    static STORES: std::sync::OnceLock<Vec<AgentKind>> = std::sync::OnceLock::new();
    STORES
        .get_or_init(|| {
            AgentKind::ALL
                .into_iter()
                .filter(|k| {
                    let example = format!("/{}.db#ses_0", k.name());
                    of(*k).owns_path(Path::new(&example))
                })
                .collect()
        })
        .contains(&agent)
}

/// Every agent's script package paths (`Agent::packages`), for the process matcher.
pub fn packages() -> Vec<(&'static str, AgentKind)> {
    all()
        .flat_map(|a| a.packages().iter().map(move |p| (*p, a.kind())))
        .collect()
}

/// Whether agentpane reads this agent's own session log; without one, a pane of it is read
/// from its screen alone.
pub fn reads_log(kind: AgentKind) -> bool {
    of(kind).reads_log()
}

/// Whether a pane of this agent is read from its terminal title too, so reading its log
/// again needs a fresh `list-panes`.
pub fn reads_title(kind: AgentKind) -> bool {
    of(kind).reads_title()
}

/// The folders a file watch should see for an agent (`root`: its config or data root) in
/// folder `cwd`, besides its log's own folder: where a new session shows up before its log
/// does.
pub fn folders(kind: AgentKind, root: Option<&Path>, cwd: &str) -> Vec<PathBuf> {
    root.map(|r| of(kind).folders(r, cwd)).unwrap_or_default()
}

/// Every agent's [`Agent::announced_in`] folders under `home`.
pub fn announced_in(home: &Path) -> Vec<PathBuf> {
    all().flat_map(|a| a.announced_in(home)).collect()
}

/// True for a file whose changes never mean that any agent's session changed, though it
/// sits in a folder the watch sees.
pub fn never_news(path: &Path) -> bool {
    all().any(|a| a.never_news(path))
}

/// The files whose change can change what `transcript` reads: the log file itself, or the
/// files of the database a session lives in.
pub fn sources(transcript: &Path) -> Vec<PathBuf> {
    all()
        .find_map(|a| a.sources(transcript))
        .unwrap_or_else(|| vec![transcript.to_path_buf()])
}

/// Maps one transcript line to an event with the adapter for `agent`. `None` for lines that
/// are not JSON objects or carry nothing the state engine uses.
pub fn parse_line(agent: AgentKind, line: &[u8]) -> Option<Event> {
    of(agent).parse_line(line)
}

/// Which agent wrote a line: the first in the registry whose format it fits. `None` for a
/// line that is no JSON object or that no agent claims.
pub fn detect_line(line: &[u8]) -> Option<AgentKind> {
    let value: serde_json::Value = serde_json::from_slice(line).ok()?;
    let obj = value.as_object()?;
    all().find(|a| a.owns_record(obj)).map(|a| a.kind())
}

/// Whether `agent` shows a retry loop on its screen that [`retrying`] reads (a quiet open turn
/// of any other agent is not worth a capture).
pub fn shows_retries(agent: AgentKind) -> bool {
    of(agent).shows_retries()
}

/// The retry loop `agent`'s screen shows, if it is waiting to retry a failed API call; `None`
/// for agents that show none.
pub fn retrying(agent: AgentKind, screen: &str) -> Option<retry::Retrying> {
    of(agent).retrying(screen)
}

/// Maps a line too large to decode (head and tail fragments only) to an event.
pub fn parse_fragments(agent: AgentKind, head: &[u8], tail: &[u8]) -> Option<Event> {
    of(agent).parse_fragments(head, tail)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_registry_lists_every_kind_once() {
        for kind in AgentKind::ALL {
            assert_eq!(of(kind).kind(), kind);
            assert_eq!(all().filter(|a| a.kind() == kind).count(), 1, "{kind}");
        }
    }

    #[test]
    fn a_line_is_claimed_by_the_agent_whose_format_it_fits() {
        let codex = br#"{"timestamp":"t","type":"event_msg","payload":{"type":"task_started"}}"#;
        let gemini = br#"{"sessionId":"s","projectHash":"h","startTime":"t"}"#;
        let claude = br#"{"type":"user","message":{"role":"user","content":"hi"}}"#;
        assert_eq!(detect_line(codex), Some(AgentKind::Codex));
        assert_eq!(detect_line(gemini), Some(AgentKind::Gemini));
        assert_eq!(detect_line(claude), Some(AgentKind::Claude));
        assert_eq!(detect_line(b"not json"), None);
        assert_eq!(detect_line(br#"{"no":"type"}"#), None, "nobody's record");
    }

    /// The lines of a recorded real client's log (fixtures/real-clients/).
    fn recorded(client: &str, name: &str) -> Vec<String> {
        let text = crate::agents::testkit::recorded(client, name);
        text.lines().map(str::to_string).collect()
    }

    #[test]
    fn the_newer_agents_records_are_claimed_as_theirs() {
        for line in recorded("pi-0.73.1", "session.jsonl") {
            assert_eq!(detect_line(line.as_bytes()), Some(AgentKind::Pi), "{line}");
        }
        for line in recorded("kimi-2.1.0", "wire.jsonl") {
            assert_eq!(
                detect_line(line.as_bytes()),
                Some(AgentKind::Kimi),
                "{line}"
            );
        }
        let droid = [
            recorded("droid-0.225.1", "turns.jsonl"),
            recorded("droid-0.225.1", "second.jsonl"),
        ];
        for line in droid.concat() {
            let v: serde_json::Value = serde_json::from_str(&line).unwrap();
            let owner = detect_line(line.as_bytes());
            let telling = matches!(
                v["type"].as_str(),
                Some("session_start" | "agent_turn_outcome" | "message")
            );
            if telling {
                assert_eq!(owner, Some(AgentKind::Droid), "{line}");
            }
            assert!(
                owner.is_none() || owner == Some(AgentKind::Droid),
                "{owner:?}: {line}"
            );
        }
    }

    #[test]
    fn a_path_is_owned_by_the_agent_whose_form_it_is_in() {
        let owner = |p: &str| owner_of_path(Path::new(p)).map(|a| a.kind());
        let kilo = "/h/.local/share/kilo/kilo.db#ses_dcc45fdaf";
        let opencode = "/h/.local/share/opencode/opencode.db#ses_dcc45fdaf";
        assert_eq!(owner(kilo), Some(AgentKind::Kilo));
        assert_eq!(owner(opencode), Some(AgentKind::Opencode));
        let id = "1796613871484_5onw0";
        let cline = format!("/h/.cline/data/sessions/{id}/{id}.messages.json");
        assert_eq!(owner(&cline), Some(AgentKind::Cline));
        assert!(keeps_a_store(AgentKind::Kilo) && keeps_a_store(AgentKind::Opencode));
        assert!(!keeps_a_store(AgentKind::Claude) && !keeps_a_store(AgentKind::Cline));
    }
}
