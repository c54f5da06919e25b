//! One scan: one `list-panes`, one process snapshot, each agent pane resolved and classified.
//! Everything the outputs (segment, pane-status, watcher, routing) read comes from here.

use serde::Serialize;

use crate::events::Time;
use crate::resolve::Resolved;
use crate::state::Status;
use crate::tmux::{Tmux, TmuxError};

/// Which evidence decided a pane's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Source {
    Hook,
    SessionRecord,
    Transcript,
    Pane,
    None,
}

/// One agent pane with its state.
#[derive(Debug, Clone, Serialize)]
pub struct PaneReport {
    pub resolved: Resolved,
    pub status: Status,
    pub source: Source,
}

/// Scans the server: every pane that runs an agent, resolved and classified at `now`.
pub fn scan(tmux: &Tmux, now: Time) -> Result<Vec<PaneReport>, TmuxError> {
    let _ = (tmux, now);
    Ok(Vec::new())
}
