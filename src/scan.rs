//! One scan: one `list-panes`, one process snapshot, each agent pane resolved and classified.
//! Everything the outputs (segment, pane-status, watcher, routing) read comes from here.

use serde::Serialize;

use crate::events::Time;
use crate::resolve::{Resolved, Resolver};
use crate::state::{Observation, Status, Windows};
use crate::tmux::{Pane, Tmux, TmuxError};

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

impl Source {
    /// The name used in JSON and on screen.
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Hook => "hook",
            Source::SessionRecord => "session-record",
            Source::Transcript => "transcript",
            Source::Pane => "pane",
            Source::None => "none",
        }
    }
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
    Ok(resolve_all(tmux, now)?
        .into_iter()
        .filter(|r| r.agent.is_some())
        .map(|r| report(r, now))
        .collect())
}

/// Every pane on the server resolved (agent or not), with one `list-panes` and one process
/// snapshot.
pub fn resolve_all(tmux: &Tmux, now: Time) -> Result<Vec<Resolved>, TmuxError> {
    let panes = tmux.list_panes()?;
    Ok(resolve_panes(&panes, now))
}

/// Resolves the given panes against one fresh process snapshot.
pub fn resolve_panes(panes: &[Pane], now: Time) -> Vec<Resolved> {
    let mut resolver = Resolver::for_panes(panes, now);
    let out = panes.iter().map(|p| resolver.resolve(p)).collect();
    resolver.finish();
    out
}

/// The pane a tmux target (`%3`, `work:2.1`, `=work:2`) names; `Ok(None)` when the server
/// has no such pane.
pub fn find_pane(tmux: &Tmux, target: &str) -> Result<Option<Pane>, TmuxError> {
    let id = match tmux.cmd(&["display-message", "-p", "-t", target, "#{pane_id}"]) {
        Ok(out) => out.trim().to_string(),
        Err(TmuxError::Command(msg)) if msg.contains("can't find") => return Ok(None),
        Err(e) => return Err(e),
    };
    if id.is_empty() {
        return Ok(None);
    }
    Ok(tmux.list_panes()?.into_iter().find(|p| p.pane_id == id))
}

/// One pane by target, resolved; `Ok(None)` when there is no such pane.
pub fn resolve_target(tmux: &Tmux, target: &str, now: Time) -> Result<Option<Resolved>, TmuxError> {
    let Some(pane) = find_pane(tmux, target)? else {
        return Ok(None);
    };
    Ok(resolve_panes(std::slice::from_ref(&pane), now).pop())
}

/// Classifies a resolved pane's transcript at `now` (no observation memory). Without a
/// transcript, or when it cannot be read (deleted mid-scan), the state is `idle` with
/// source `none`.
pub fn report(resolved: Resolved, now: Time) -> PaneReport {
    let agent = resolved.agent.as_ref().map(|a| a.kind);
    let classified = resolved.transcript.as_deref().and_then(|path| {
        crate::transcript::classify_file(
            path,
            agent,
            now,
            &Windows::default(),
            Observation::default(),
        )
        .ok()
    });
    let (status, source) = match classified {
        Some((_, status)) => (status, Source::Transcript),
        None => (Status::idle(), Source::None),
    };
    PaneReport {
        resolved,
        status,
        source,
    }
}
