//! Sessions kept in an agent's own database rather than in a log file (opencode's SQLite
//! store), read through connections kept between scans by a long-running caller: a session is
//! read again only once its rows changed ([`opencode::reader`]). The pipeline's side of those
//! stores, part of the registry (above the agents): it asks the registry whose a store is, and
//! lends the kept connections to a resolution as opencode's state in [`Shared`], which opencode
//! and Kilo share.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use anyhow::Result;

use super::{keeps_a_store, owner_of_path};
pub use crate::agents::opencode::reader::Depth;
use crate::agents::opencode::{self, SessionRef};
use crate::agents::shared::Shared;
use crate::events::{AgentKind, Event};

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
        let mut opencode = opencode::locate::Shared::default();
        opencode.dbs = std::mem::take(self.opencode.databases());
        opencode.logs = std::mem::take(&mut self.logs);
        let mut shared = Shared::default();
        shared.put(opencode);
        shared
    }

    /// Keeps the connections a resolution used.
    pub fn give_back(&mut self, mut shared: Shared) {
        let opencode = shared.of::<opencode::locate::Shared>();
        *self.opencode.databases() = std::mem::take(&mut opencode.dbs);
        self.logs = std::mem::take(&mut opencode.logs);
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
        let Some(session) = opencode::session_of(path, agent.filter(|k| keeps_a_store(*k)))? else {
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
        .or_else(|| owner_of_path(path).map(|a| a.kind()))
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
    match opencode::session_of(path, agent.filter(|k| keeps_a_store(*k)))? {
        Some(session) => Ok(Some((
            kind_of(path, agent),
            opencode::classify(&session, now, windows, obs)?,
        ))),
        None => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plain_path_is_an_error_only_for_an_agent_that_keeps_a_store() {
        let plain = Path::new("/tmp/agentpane-none/session.jsonl");
        let mut stores = Stores::default();
        for kind in [AgentKind::Opencode, AgentKind::Kilo] {
            let err = stores.events(plain, Some(kind)).unwrap_err().to_string();
            assert!(
                err.contains(&format!("a {} transcript is named", kind.name())),
                "{err}"
            );
        }
        for agent in [None, Some(AgentKind::Claude), Some(AgentKind::Cline)] {
            assert!(stores.events(plain, agent).unwrap().is_none(), "{agent:?}");
        }
    }

    /// The connections the locators of one resolution open are the ones the next resolution
    /// and the session reader use: a database is opened once, however many scans read it.
    #[test]
    fn connections_lent_to_a_resolution_are_kept_for_the_next_and_the_reader() {
        use opencode::store::testkit::{db_from, fixture};
        let dir = tempfile::tempdir().unwrap();
        let db = db_from(dir.path(), &fixture("session.sql"));
        let session = PathBuf::from(format!("{}#ses_dcc45fdafffevJwm88T7RhVzyq", db.display()));
        let mut stores = Stores::default();
        for _ in 0..3 {
            let mut shared = stores.lend();
            let locate = shared.of::<opencode::locate::Shared>();
            assert!(locate.dbs.get(&db).is_ok());
            stores.give_back(shared);
            let (kind, events) = stores.events(&session, None).unwrap().unwrap();
            assert_eq!(kind, AgentKind::Opencode);
            assert!(!events.is_empty());
        }
        let mut shared = stores.lend();
        assert_eq!(shared.of::<opencode::locate::Shared>().dbs.opened, 1);
        assert_eq!(stores.reads(), 1);
    }
}
