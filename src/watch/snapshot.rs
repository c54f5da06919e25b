//! `state.json` in the state folder: what the watcher last saw, for other commands and for
//! humans (`jq`). Replaced atomically, and only when its content changes.

use std::path::{Path, PathBuf};

use anyhow::Result;
use serde::Serialize;

use crate::alert::Alert;
use crate::events::Time;
use crate::paths;
use crate::remote::link::HostView;
use crate::segment::PaneDetail;

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
    /// The remote hosts' links and their latest documents (docs/design.md#remote-hosts).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<HostView>,
}

impl Snapshot {
    /// The file in `dir`.
    pub fn path(dir: &Path) -> PathBuf {
        dir.join("state.json")
    }

    /// True when the parts that matter differ (the write time does not).
    pub fn differs(&self, other: &Snapshot) -> bool {
        self.status != other.status
            || self.panes != other.panes
            || self.alerts != other.alerts
            || self.hosts != other.hosts
    }

    /// Replaces the file atomically (not durably: the next scan writes it again).
    pub fn write(&self, dir: &Path) -> Result<()> {
        let data = serde_json::to_vec_pretty(self)?;
        paths::replace(&Snapshot::path(dir), &data)
    }
}
