//! Normalised transcript events (docs/design.md#events): what every agent adapter produces and the
//! state engine consumes. Small, agent-neutral, ordered by position in the file. Also the clean
//! last [`Answer`] an adapter reads for extraction.

use chrono::{DateTime, Utc};
use serde::Serialize;

/// Semantic time: the record's own timestamp, never a file mtime.
pub type Time = DateTime<Utc>;

/// Which agent wrote a transcript or runs in a pane.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AgentKind {
    Claude,
    Codex,
    Gemini,
    Opencode,
    Qwen,
    Amp,
    Aider,
    Copilot,
    Kilo,
    Pi,
    Kimi,
    Droid,
    Cline,
}

impl AgentKind {
    /// Every kind, in matching order.
    pub const ALL: [AgentKind; 13] = [
        AgentKind::Claude,
        AgentKind::Codex,
        AgentKind::Gemini,
        AgentKind::Opencode,
        AgentKind::Qwen,
        AgentKind::Amp,
        AgentKind::Aider,
        AgentKind::Copilot,
        AgentKind::Kilo,
        AgentKind::Pi,
        AgentKind::Kimi,
        AgentKind::Droid,
        AgentKind::Cline,
    ];

    /// The executable name that identifies the agent.
    pub fn name(self) -> &'static str {
        match self {
            AgentKind::Claude => "claude",
            AgentKind::Codex => "codex",
            AgentKind::Gemini => "gemini",
            AgentKind::Opencode => "opencode",
            AgentKind::Qwen => "qwen",
            AgentKind::Amp => "amp",
            AgentKind::Aider => "aider",
            AgentKind::Copilot => "copilot",
            AgentKind::Kilo => "kilo",
            AgentKind::Pi => "pi",
            AgentKind::Kimi => "kimi",
            AgentKind::Droid => "droid",
            AgentKind::Cline => "cline",
        }
    }

    /// Parses an executable basename.
    pub fn from_name(name: &str) -> Option<AgentKind> {
        AgentKind::ALL.into_iter().find(|k| k.name() == name)
    }
}

impl std::fmt::Display for AgentKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Kinds of API failure an agent reports in its transcript.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ApiError {
    /// `rate_limit`, `authentication_failed`, `billing_error`, `server_error`, … or `error`.
    pub kind: String,
    /// The human-readable text, bounded.
    pub text: String,
    /// When a rate limit resets, if the text says.
    pub resets_at: Option<Time>,
}

/// What one transcript line means.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EventKind {
    /// A turn starts without a human prompt of its own (Codex `task_started`).
    TurnStart,
    /// A human prompt: a new turn.
    UserPrompt,
    /// Assistant text. `closes` is true when the stop reason ends the turn; `None` means the
    /// record carries no stop reason (settle rules apply).
    AssistantText { closes: Option<bool> },
    /// Assistant thinking/reasoning or any other non-text, non-tool block: proof of life.
    AssistantOther,
    /// Tool calls started by the assistant: ids and tool names, in the same order.
    ToolUse {
        ids: Vec<String>,
        names: Vec<String>,
    },
    /// Tool results for these ids.
    ToolResult { ids: Vec<String> },
    /// The turn is blocked on the human, in the log itself (an approval asked, a question
    /// put), until every one of `ids` has its [`EventKind::ToolResult`] (the human's answer).
    /// `reason` says what is asked: `permission: bash (touch hello.txt)`, `question`.
    AwaitingHuman { ids: Vec<String>, reason: String },
    /// The result of a tool call that started a subagent in the background (Claude Code's
    /// async `Agent` call): the call is answered at once, but the session is not done until
    /// the subagent reports back.
    BackgroundStart {
        ids: Vec<String>,
        agent: String,
        description: String,
    },
    /// A background subagent reported back (Claude Code's `<task-notification>` user
    /// message): a machine-made prompt that starts a turn, not the human coming back.
    /// `agent` when the note names it.
    BackgroundDone { agent: Option<String> },
    /// The turn is over (stop hook summary, turn duration, Codex task_complete).
    TurnEnd,
    /// The human interrupted: control is back with them.
    Interrupted,
    /// The API failed.
    ApiError(ApiError),
    /// The model refused.
    Refusal,
    /// A recovery path inside a turn (max_tokens, context window, pause_turn): still working.
    Recovering,
    /// Context compaction in progress.
    Compaction,
    /// Hook/bash/agent progress: proof of life for an open turn.
    Progress,
    /// A local command run by the human between turns (slash command, its output).
    LocalCommand,
    /// Bookkeeping: never changes turn identity or semantic time.
    Meta,
}

/// One normalised event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    pub kind: EventKind,
    /// Written by a subagent (Claude `isSidechain`): never opens or closes the main turn.
    pub sidechain: bool,
    /// The record's own timestamp.
    pub at: Option<Time>,
    /// Record uuid, else message id, else Codex turn id.
    pub key: Option<String>,
    /// The API message this line belongs to (Claude streams one message over several lines).
    pub message_id: Option<String>,
}

impl Event {
    /// An event with no identity or time (tests and adapters fill in the rest).
    pub fn new(kind: EventKind) -> Event {
        Event {
            kind,
            sidechain: false,
            at: None,
            key: None,
            message_id: None,
        }
    }

    /// Builder: set the semantic time.
    pub fn at(mut self, at: Time) -> Event {
        self.at = Some(at);
        self
    }

    /// Builder: set the turn key.
    pub fn key(mut self, key: impl Into<String>) -> Event {
        self.key = Some(key.into());
        self
    }

    /// Builder: mark as sidechain.
    pub fn sidechain(mut self) -> Event {
        self.sidechain = true;
        self
    }

    /// Builder: set the message id.
    pub fn message(mut self, id: impl Into<String>) -> Event {
        self.message_id = Some(id.into());
        self
    }
}

/// A clean final answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Answer {
    pub text: String,
    pub agent: AgentKind,
    pub at: Option<Time>,
    /// The message id / turn id it came from.
    pub key: Option<String>,
}

impl Answer {
    /// The first non-blank line, at most `max` characters (for tables and menus).
    pub fn head(&self, max: usize) -> String {
        let line = self
            .text
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .unwrap_or("");
        crate::text::chars(line, max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(text: &str) -> Answer {
        Answer {
            text: text.into(),
            agent: AgentKind::Claude,
            at: None,
            key: None,
        }
    }

    #[test]
    fn head_is_the_first_non_blank_line_bounded() {
        assert_eq!(answer("\n\n  Done.\nmore").head(60), "Done.");
        assert_eq!(answer("abcdef").head(4), "abc…");
        assert_eq!(answer("héllo").head(5), "héllo");
    }
}
