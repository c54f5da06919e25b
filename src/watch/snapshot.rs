//! `state.json` in the server's own folder of the state folder (`servers/<name>/`, see
//! [`crate::paths::server_dir`]): what the watcher last saw, for other commands and for
//! humans (`jq`). Replaced atomically, and only when its content changes: at once when what
//! `status` counts changed, else at most once per [`DETAIL_GAP`].

use std::path::{Path, PathBuf};

use anyhow::Result;
use serde::Serialize;

use crate::alert::Alert;
use crate::events::Time;
use crate::paths;
use crate::remote::link::HostView;
use crate::segment::PaneDetail;

/// A change to no more than the panes' detail (a busy agent's time, reason or turn) waits
/// at most this long, so an agent writing its log many times a second does not rewrite the
/// snapshot (and wake every reader of the state folder) as often.
pub const DETAIL_GAP: std::time::Duration = std::time::Duration::from_secs(1);

/// How a snapshot differs from the one written before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// Nothing that is written.
    None,
    /// Only the panes' detail: times, reasons, turn keys, transcripts.
    Detail,
    /// The segment, the panes (which, their states), the alerts or the hosts.
    Counted,
}

/// The snapshot's content.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Snapshot {
    pub pid: u32,
    /// The tmux server this watcher serves.
    pub socket_path: String,
    pub written_at: Time,
    /// The status segment as published in `@agentpane_status`.
    pub status: String,
    pub panes: Vec<PaneDetail>,
    /// Alerts on display.
    pub alerts: Vec<Alert>,
    /// Every plan window the panes' sessions revealed, the newest word on each, tightest
    /// first (docs/design.md#usage).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub limits: Vec<crate::usage::Limit>,
    /// The remote hosts' links and their latest documents (docs/design.md#remote-hosts).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<HostView>,
}

impl Snapshot {
    /// The snapshot's file name.
    pub const FILE: &'static str = "state.json";

    /// The file in the server folder `dir`.
    pub fn path(dir: &Path) -> PathBuf {
        dir.join(Snapshot::FILE)
    }

    /// How `new` differs from this snapshot (the write time does not count).
    pub fn change(&self, new: &Snapshot) -> Change {
        let counted = |a: &PaneDetail, b: &PaneDetail| {
            (&a.pane_id, &a.target, a.agent, a.state, a.seen, a.unread)
                == (&b.pane_id, &b.target, b.agent, b.state, b.seen, b.unread)
        };
        if self.status != new.status
            || self.alerts != new.alerts
            || self.hosts != new.hosts
            || self.panes.len() != new.panes.len()
            || self
                .panes
                .iter()
                .zip(&new.panes)
                .any(|(a, b)| !counted(a, b))
        {
            Change::Counted
        } else if self.panes != new.panes {
            Change::Detail
        } else {
            Change::None
        }
    }

    /// Replaces the file atomically (not durably: the next scan writes it again). Compact: it
    /// is rewritten at every change a busy agent makes, and `jq` reads it either way.
    pub fn write(&self, dir: &Path) -> Result<()> {
        let data = serde_json::to_vec(self)?;
        paths::replace(&Snapshot::path(dir), &data)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::testkit::report;
    use crate::segment::{pane_detail, Icons};
    use crate::state::State;

    fn snap(states: &[(State, i64)]) -> Snapshot {
        let icons = Icons::default();
        Snapshot {
            pid: 1,
            socket_path: "/tmp/s".into(),
            written_at: chrono::Utc::now(),
            status: "●1".into(),
            panes: states
                .iter()
                .enumerate()
                .map(|(i, &(state, at))| pane_detail(&report(i as u32, 1, state, at), &icons))
                .collect(),
            alerts: Vec::new(),
            limits: Vec::new(),
            hosts: Vec::new(),
        }
    }

    #[test]
    fn a_busy_agents_times_are_detail_and_its_states_are_counted() {
        let old = snap(&[(State::Working, 0), (State::Idle, 0)]);
        let mut same = snap(&[(State::Working, 0), (State::Idle, 0)]);
        same.written_at = old.written_at + chrono::Duration::seconds(5);
        assert_eq!(
            old.change(&same),
            Change::None,
            "the write time is not content"
        );
        let later = snap(&[(State::Working, 3), (State::Idle, 0)]);
        assert_eq!(
            old.change(&later),
            Change::Detail,
            "a newer write, same state"
        );
        let done = snap(&[(State::YourTurn, 3), (State::Idle, 0)]);
        assert_eq!(old.change(&done), Change::Counted, "a state changed");
        let gone = snap(&[(State::Working, 0)]);
        assert_eq!(old.change(&gone), Change::Counted, "a pane left");
        let mut segment = snap(&[(State::Working, 0), (State::Idle, 0)]);
        segment.status = "⚡1".into();
        assert_eq!(old.change(&segment), Change::Counted, "the segment changed");
    }
}
