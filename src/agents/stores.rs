//! Sessions kept in an agent's own database rather than in a log file (opencode's SQLite
//! store), read through connections kept between scans by a long-running caller: a session is
//! read again only once its rows changed ([`super::opencode::reader`]).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use anyhow::Result;

pub use super::opencode::reader::Depth;
use super::opencode::{self, SessionRef};
use crate::events::{AgentKind, Event};

/// What the panes of one resolution share, per agent: the database connections (kept between
/// resolutions by [`Stores`]) and what one snapshot of the system says once for all panes.
#[derive(Debug, Default)]
pub struct Shared {
    /// Per Claude Code config root: (pid, session id) of every live session record.
    pub(crate) claude_claims: HashMap<PathBuf, Vec<(u32, String)>>,
    /// opencode's databases and the other opencode processes.
    pub(crate) opencode: opencode::locate::Shared,
}

/// The database-backed sessions read so far, and the connections they are read through.
#[derive(Debug, Default)]
pub struct Stores {
    opencode: opencode::reader::Reader,
    /// opencode's shared text logs, read so far (which run is which process's).
    logs: HashMap<PathBuf, opencode::runlog::RunLog>,
}

impl Stores {
    /// Sessions read from their databases so far (not taken from what was kept).
    pub fn reads(&self) -> u64 {
        self.opencode.reads
    }

    /// What a resolution shares, with the kept connections lent to it; hand it back with
    /// [`Stores::give_back`].
    pub fn lend(&mut self) -> Shared {
        let mut shared = Shared::default();
        shared.opencode.dbs = std::mem::take(self.opencode.databases());
        shared.opencode.logs = std::mem::take(&mut self.logs);
        shared
    }

    /// Keeps the connections a resolution used.
    pub fn give_back(&mut self, shared: Shared) {
        *self.opencode.databases() = shared.opencode.dbs;
        self.logs = shared.opencode.logs;
    }

    /// Brings the database sessions among `transcripts` up to date in one pass per database,
    /// looking for changes to `depth`.
    pub fn prepare<'a>(&mut self, transcripts: impl IntoIterator<Item = &'a Path>, depth: Depth) {
        let sessions: Vec<SessionRef> = transcripts
            .into_iter()
            .filter_map(SessionRef::parse)
            .collect();
        if !sessions.is_empty() {
            self.opencode.refresh(&sessions, depth);
        }
    }

    /// True when `path` names a session in a database (not a log file).
    pub fn holds(path: &Path) -> bool {
        SessionRef::parse(path).is_some()
    }

    /// The events of the database session `path` names, read now if no refresh covered it;
    /// `Ok(None)` when `path` names no database session (a log file). An error when the
    /// caller said the agent keeps its sessions in a database and `path` names none.
    pub fn events(
        &mut self,
        path: &Path,
        agent: Option<AgentKind>,
    ) -> Result<Option<(AgentKind, &[Event])>> {
        let Some(session) = opencode::session_of(path, agent)? else {
            return Ok(None);
        };
        if self.opencode.events(&session).is_none() {
            self.opencode
                .refresh(std::slice::from_ref(&session), Depth::Window);
        }
        let events = self
            .opencode
            .events(&session)
            .unwrap_or_else(|| Err(anyhow::anyhow!("{} was not read", path.display())))?;
        Ok(Some((kind_of(path, agent), events)))
    }

    /// For the database session `path` names, a mark that moves each time its events are
    /// read afresh ([`opencode::reader::Reader::read_mark`]); `None` for a log file or a
    /// session not read yet.
    pub fn read_mark(&self, path: &Path) -> Option<u64> {
        self.opencode.read_mark(&SessionRef::parse(path)?)
    }

    /// Forgets every session but those `live` names.
    pub fn retain(&mut self, live: &HashSet<&Path>) {
        self.opencode.retain(|s| {
            live.iter()
                .any(|p| SessionRef::parse(p).as_ref() == Some(s))
        });
    }
}

/// The agent whose store `path` (a session in a database) is in: the caller's word, else the
/// agent that owns the path.
fn kind_of(path: &Path, agent: Option<AgentKind>) -> AgentKind {
    agent
        .or_else(|| crate::agents::owner_of_path(path).map(|a| a.kind()))
        .unwrap_or(AgentKind::Opencode)
}

/// The state of the database session `path` names, read afresh (a one-shot command);
/// `Ok(None)` when `path` names no database session.
pub fn classify(
    path: &Path,
    agent: Option<AgentKind>,
    now: crate::events::Time,
    windows: &crate::state::Windows,
    obs: crate::state::Observation,
) -> Result<Option<(AgentKind, crate::state::Status)>> {
    match opencode::session_of(path, agent)? {
        Some(session) => Ok(Some((
            kind_of(path, agent),
            opencode::classify(&session, now, windows, obs)?,
        ))),
        None => Ok(None),
    }
}
