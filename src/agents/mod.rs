//! Agent adapters: one folder per agent with `parse` (transcript line → [`Event`]) and `locate`
//! (agent process → transcript file).

pub mod claude;
pub mod codex;
pub mod copilot;
pub mod fields;
pub mod gemini;
pub mod locate;
pub mod opencode;
pub mod retry;

use crate::events::{AgentKind, Event};

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
    crate::evidence::parse_reset(text, at, crate::evidence::ratelimit::local_offset(at))
}

/// Maps a line too large to decode (head and tail fragments only) to an event.
pub fn parse_fragments(agent: AgentKind, head: &[u8], tail: &[u8]) -> Option<Event> {
    match agent {
        AgentKind::Codex => codex::parse::parse_fragments(head, tail),
        _ => claude::parse::parse_fragments(head, tail),
    }
}
