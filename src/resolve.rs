//! The chain of SPEC §3.3 for one pane: pane → agent process → session record → transcript.

use std::path::PathBuf;

use serde::Serialize;

use crate::events::AgentKind;
use crate::tmux::Pane;

/// How the transcript was found (SPEC §12).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Via {
    SessionRecord,
    OpenFile,
    Cwd,
    None,
}

/// The agent process found under a pane.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AgentProcess {
    pub kind: AgentKind,
    pub pid: u32,
    /// Process start, seconds since the epoch.
    pub started: u64,
    /// The agent's config root (`CLAUDE_CONFIG_DIR` / `CODEX_HOME` or the default).
    pub root: Option<PathBuf>,
}

/// One resolved pane.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Resolved {
    pub pane: Pane,
    pub agent: Option<AgentProcess>,
    pub transcript: Option<PathBuf>,
    pub via: Via,
    /// The session id from the session record, when one was read.
    pub session_id: Option<String>,
    /// Each link of the chain, in order, and where it broke (for `resolve` output).
    pub steps: Vec<String>,
}
