//! Agent adapters: one folder per agent with `parse` (transcript line → [`Event`]) and `locate`
//! (agent process → transcript file).

pub mod claude;
pub mod codex;
pub mod fields;
pub mod gemini;
pub mod locate;
pub mod opencode;
pub mod record;
pub mod retry;

use std::path::{Path, PathBuf};

use crate::events::{AgentKind, Event};

/// Whether agentpane reads this agent's own session log; without one, a pane of it is read
/// from its screen alone.
pub fn reads_log(kind: AgentKind) -> bool {
    match kind {
        AgentKind::Claude | AgentKind::Codex | AgentKind::Gemini | AgentKind::Opencode => true,
        AgentKind::Amp | AgentKind::Aider => false,
    }
}

/// Whether a pane of this agent is read from its terminal title too (Gemini CLI keeps its
/// status there), so reading its log again needs a fresh `list-panes`.
pub fn reads_title(kind: AgentKind) -> bool {
    match kind {
        AgentKind::Gemini => true,
        AgentKind::Claude
        | AgentKind::Codex
        | AgentKind::Opencode
        | AgentKind::Amp
        | AgentKind::Aider => false,
    }
}

/// The folders a file watch should see for an agent (`root`: its config or data root) in
/// folder `cwd`, besides its log's own folder: where a new session shows up before its log
/// does.
pub fn folders(kind: AgentKind, root: Option<&Path>, cwd: &str) -> Vec<PathBuf> {
    let Some(root) = root else {
        return Vec::new();
    };
    match kind {
        // Session records (Claude Code) and rollouts (Codex) appear under `sessions/`.
        AgentKind::Claude | AgentKind::Codex => vec![root.join("sessions")],
        // The database folder: the first prompt creates the session there.
        AgentKind::Opencode => vec![root.to_path_buf()],
        // No session records: the first log appears in the project's `chats/`.
        AgentKind::Gemini => gemini::locate::project_dir(root, cwd)
            .map(|p| vec![p.join("chats")])
            .unwrap_or_default(),
        AgentKind::Amp | AgentKind::Aider => Vec::new(),
    }
}

/// True for a file whose changes never mean that any agent's session changed, though it
/// sits in a folder the watch sees (opencode's SQLite `-shm`, written by every reader).
pub fn never_news(path: &Path) -> bool {
    opencode::never_news(path)
}

/// Maps one transcript line to an event with the adapter for `agent`. `None` for lines that
/// are not JSON objects or carry nothing the state engine uses.
pub fn parse_line(agent: AgentKind, line: &[u8]) -> Option<Event> {
    match agent {
        AgentKind::Codex => codex::parse::parse_line(line),
        _ => claude::parse::parse_line(line),
    }
}

/// Guesses which agent wrote a line: Codex rollouts wrap everything in `{timestamp, type,
/// payload}` with Codex record types.
pub fn detect_line(line: &[u8]) -> Option<AgentKind> {
    let value: serde_json::Value = serde_json::from_slice(line).ok()?;
    let obj = value.as_object()?;
    if gemini::is_record(obj) {
        return Some(AgentKind::Gemini);
    }
    let ty = obj.get("type")?.as_str()?;
    let codex_types = [
        "session_meta",
        "event_msg",
        "response_item",
        "turn_context",
        "compacted",
    ];
    if obj.contains_key("payload") && codex_types.contains(&ty) {
        Some(AgentKind::Codex)
    } else {
        Some(AgentKind::Claude)
    }
}

/// Whether `agent` shows a retry loop on its screen that [`retrying`] reads (a quiet open turn
/// of any other agent is not worth a capture).
pub fn shows_retries(agent: AgentKind) -> bool {
    matches!(
        agent,
        AgentKind::Claude | AgentKind::Codex | AgentKind::Opencode
    )
}

/// The retry loop `agent`'s screen shows, if it is waiting to retry a failed API call; `None`
/// for agents that show none.
pub fn retrying(agent: AgentKind, screen: &str) -> Option<retry::Retrying> {
    match agent {
        AgentKind::Claude => claude::screen::retrying(screen),
        AgentKind::Codex => codex::screen::retrying(screen),
        AgentKind::Opencode => opencode::retrying(screen),
        _ => None,
    }
}

/// A rate-limit reset time in an API-error text, read relative to the record's own time.
pub fn reset_time(text: &str, at: Option<crate::events::Time>) -> Option<crate::events::Time> {
    let at = at?;
    crate::read::ratelimit::parse_reset(text, at, crate::read::ratelimit::local_offset(at))
}

/// Maps a line too large to decode (head and tail fragments only) to an event.
pub fn parse_fragments(agent: AgentKind, head: &[u8], tail: &[u8]) -> Option<Event> {
    match agent {
        AgentKind::Codex => codex::parse::parse_fragments(head, tail),
        _ => claude::parse::parse_fragments(head, tail),
    }
}
