//! What agentpane remembers between scans and across restarts, in the folder of the tmux
//! server it is about ([`paths::server_dir`]: a pane id names a different pane on another
//! server):
//!
//! - `observed.json`: when each session (thread) was last seen `working`, so an open turn that
//!   went quiet reads `stalled` only when this monitor saw it working (docs/design.md#freshness).
//!   Written by any command that scans (one-shot `status` and the watcher alike); saving merges
//!   with what is on disk, so concurrent writers lose nothing that matters.
//! - `alerts.json`: alert keys (docs/design.md#alerts) delivered, baselined or acknowledged, kept
//!   12 h, so a restarted watcher never replays an old alarm. Written by the watcher only (it holds
//!   the per-server lock); read by one-shot commands to show acknowledged turns as seen.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::events::Time;
use crate::paths;
use crate::scan::PaneReport;
use crate::state::{age, Observation, State, Windows};
use crate::tmux::{Tmux, TmuxError};

/// Observations older than this are dropped.
const OBSERVED_TTL: Duration = Duration::from_secs(24 * 3600);
/// Alert keys are remembered this long (docs/design.md#alerts).
pub const ALERT_TTL: Duration = Duration::from_secs(12 * 3600);

/// The thread a report belongs to: its transcript, else its pane.
pub fn thread_key(r: &PaneReport) -> String {
    match &r.resolved.transcript {
        Some(p) => p.to_string_lossy().into_owned(),
        None => format!("pane:{}", r.resolved.pane.pane_id),
    }
}

/// The once-only key of a report's current state (agent, state, thread, turn): what the alert
/// memory is keyed by, so it lives beside [`thread_key`] and the alert engine imports it.
pub fn alert_key(r: &PaneReport) -> String {
    let agent = r
        .resolved
        .agent
        .as_ref()
        .map(|a| a.kind.name())
        .unwrap_or("-");
    let turn = r
        .status
        .turn_key
        .clone()
        .or_else(|| r.status.at.map(|t| t.to_rfc3339()))
        .unwrap_or_else(|| "-".into());
    format!("{agent}|{}|{}|{turn}", r.status.state, thread_key(r))
}

/// When each thread was last seen working.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Observed {
    #[serde(default)]
    threads: BTreeMap<String, Time>,
}

impl Observed {
    /// The file in `dir`.
    pub fn path(dir: &Path) -> PathBuf {
        dir.join("observed.json")
    }

    /// Loads from `dir`; a missing or unreadable file is an empty memory.
    pub fn load(dir: &Path) -> Observed {
        read_json(&Observed::path(dir)).unwrap_or_default()
    }

    /// What the monitor knows about a thread whose open turn was last active at `last_activity`.
    pub fn observation(&self, thread: &str, last_activity: Option<Time>) -> Observation {
        let seen_working = match (self.threads.get(thread), last_activity) {
            (Some(seen), Some(last)) => *seen >= last,
            _ => false,
        };
        Observation {
            seen_working,
            ..Observation::default()
        }
    }

    /// Records the working threads of a scan at `now`. Returns true when something new was
    /// learned (a working turn with activity newer than the last observation), i.e. when the
    /// file is worth writing.
    pub fn observe(&mut self, reports: &[PaneReport], now: Time) -> bool {
        let mut changed = false;
        for r in reports.iter().filter(|r| r.status.state == State::Working) {
            let thread = thread_key(r);
            let stale = match (self.threads.get(&thread), r.status.last_activity) {
                (None, _) => true,
                (Some(seen), Some(last)) => *seen < last,
                (Some(_), None) => false,
            };
            if stale {
                self.threads.insert(thread, now);
                changed = true;
            }
        }
        changed
    }

    /// Turns the `idle` of an open turn that went quiet into `stalled` when this monitor saw
    /// that turn working and the quiet is within the stalled window.
    pub fn apply(&self, reports: &mut [PaneReport], now: Time, windows: &Windows) {
        for r in reports.iter_mut() {
            let s = &r.status;
            if s.state != State::Idle || !s.turn_open {
                continue;
            }
            let Some(last) = s.last_activity else {
                continue;
            };
            let quiet = (now - last).to_std().unwrap_or(Duration::ZERO);
            if quiet > windows.open_turn
                && quiet <= windows.stalled
                && self.observation(&thread_key(r), Some(last)).seen_working
            {
                r.status.state = State::Stalled;
                r.status.reason = Some("quiet".into());
            }
        }
    }

    /// Drops observations older than a day.
    pub fn prune(&mut self, now: Time) {
        self.threads
            .retain(|_, t| age(now, Some(*t)) <= OBSERVED_TTL);
    }

    /// Merges with what is on disk (newest observation wins) and writes atomically.
    pub fn save(&self, dir: &Path, now: Time) -> Result<()> {
        paths::ensure_private_dir(dir)?;
        let mut merged = Observed::load(dir);
        for (k, t) in &self.threads {
            let e = merged.threads.entry(k.clone()).or_insert(*t);
            *e = (*e).max(*t);
        }
        merged.prune(now);
        write_json(&Observed::path(dir), &merged)
    }
}

/// What happened to one alert key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeyRecord {
    /// When the key was first recorded.
    pub at: Time,
    /// An alert was delivered for it (false: baselined history or collapsed in a storm).
    pub delivered: bool,
    /// The user looked at the pane (acknowledged): `your-turn` reads as seen.
    #[serde(default)]
    pub seen: bool,
}

/// Alert keys remembered for 12 h.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AlertMemory {
    #[serde(default)]
    keys: BTreeMap<String, KeyRecord>,
}

impl AlertMemory {
    /// The file in `dir`.
    pub fn path(dir: &Path) -> PathBuf {
        dir.join("alerts.json")
    }

    /// Loads from `dir`; a missing or unreadable file is an empty memory.
    pub fn load(dir: &Path) -> AlertMemory {
        read_json(&AlertMemory::path(dir)).unwrap_or_default()
    }

    /// The record of `key`, if any.
    pub fn get(&self, key: &str) -> Option<&KeyRecord> {
        self.keys.get(key)
    }

    /// Records `key` (first record wins; a later delivery upgrades a baseline).
    pub fn remember(&mut self, key: &str, now: Time, delivered: bool) {
        let rec = self.keys.entry(key.to_string()).or_insert(KeyRecord {
            at: now,
            delivered,
            seen: false,
        });
        rec.delivered |= delivered;
    }

    /// Marks `key` acknowledged.
    pub fn mark_seen(&mut self, key: &str, now: Time) {
        self.remember(key, now, false);
        if let Some(rec) = self.keys.get_mut(key) {
            rec.seen = true;
        }
    }

    /// True when `key` was acknowledged.
    pub fn is_seen(&self, key: &str) -> bool {
        self.keys.get(key).is_some_and(|r| r.seen)
    }

    /// Marks acknowledged `your-turn` reports as seen.
    pub fn apply_seen(&self, reports: &mut [PaneReport]) {
        for r in reports.iter_mut() {
            if r.status.state == State::YourTurn && !r.status.seen && self.is_seen(&alert_key(r)) {
                r.status.seen = true;
            }
        }
    }

    /// Forgets keys older than 12 h.
    pub fn prune(&mut self, now: Time) {
        self.keys.retain(|_, r| age(now, Some(r.at)) <= ALERT_TTL);
    }

    /// Number of keys remembered.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// True when nothing is remembered.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Writes atomically (the watcher is the only writer).
    pub fn save(&self, dir: &Path) -> Result<()> {
        paths::ensure_private_dir(dir)?;
        write_json(&AlertMemory::path(dir), self)
    }
}

/// One scan seen through the memory, for one-shot commands: stalled turns promoted, acknowledged
/// turns marked seen, working turns recorded (written only when something new was learned; a
/// failed write only costs a later `stalled`).
pub fn remembered_scan(
    tmux: &Tmux,
    now: Time,
    windows: &Windows,
) -> Result<Vec<PaneReport>, TmuxError> {
    // Scanned first: its listing tells the socket path, so the folder costs no tmux call.
    let mut reports = crate::scan::scan(tmux, now)?;
    remember_in(&server_dir(tmux)?, &mut reports, now, windows);
    Ok(reports)
}

/// [`remembered_scan`] for a caller that knows the server's folder `dir` already.
pub fn remembered_scan_in(
    dir: &Path,
    tmux: &Tmux,
    now: Time,
    windows: &Windows,
) -> Result<Vec<PaneReport>, TmuxError> {
    let mut reports = crate::scan::scan(tmux, now)?;
    remember_in(dir, &mut reports, now, windows);
    Ok(reports)
}

/// The folder of the server `tmux` talks to, in the state folder (one tmux call).
pub fn server_dir(tmux: &Tmux) -> Result<PathBuf, TmuxError> {
    Ok(paths::server_dir(&paths::state_dir(), &tmux.socket_path()?))
}

/// [`remembered_scan`] for reports a caller scanned itself on `tmux` (the picker reuses
/// resolutions). Without the server's folder, the reports stay as scanned.
pub fn remember(tmux: &Tmux, reports: &mut [PaneReport], now: Time, windows: &Windows) {
    if let Ok(dir) = server_dir(tmux) {
        remember_in(&dir, reports, now, windows);
    }
}

/// [`remember`] with the memories of the server folder `dir`.
fn remember_in(dir: &Path, reports: &mut [PaneReport], now: Time, windows: &Windows) {
    let mut observed = Observed::load(dir);
    observed.apply(reports, now, windows);
    AlertMemory::load(dir).apply_seen(reports);
    if observed.observe(reports, now) {
        let _ = observed.save(dir, now);
    }
}

fn read_json<T: for<'de> Deserialize<'de>>(path: &Path) -> Option<T> {
    let bytes = paths::read_trusted(path).ok()?;
    serde_json::from_slice(&bytes).ok()
}

fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<()> {
    let data = serde_json::to_vec(value).context("cannot serialise memory")?;
    paths::write_atomic(path, &data)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::testkit::{report, t};

    fn quiet_open_turn(last: i64) -> PaneReport {
        let mut r = report(1, 1, State::Idle, last);
        r.status.turn_open = true;
        r.status.reason = Some("quiet".into());
        r
    }

    #[test]
    fn quiet_turn_seen_working_is_stalled() {
        let mut obs = Observed::default();
        assert!(obs.observe(&[report(1, 1, State::Working, 0)], t(10)));
        let mut r = [quiet_open_turn(0)];
        obs.apply(&mut r, t(6 * 60), &Windows::default());
        assert_eq!(r[0].status.state, State::Stalled);
    }

    #[test]
    fn quiet_turn_never_seen_working_stays_idle() {
        let obs = Observed::default();
        let mut r = [quiet_open_turn(0)];
        obs.apply(&mut r, t(6 * 60), &Windows::default());
        assert_eq!(r[0].status.state, State::Idle);
    }

    #[test]
    fn activity_after_the_observation_is_not_seen() {
        let mut obs = Observed::default();
        obs.observe(&[report(1, 1, State::Working, 0)], t(10));
        let mut r = [quiet_open_turn(100)];
        obs.apply(&mut r, t(100 + 6 * 60), &Windows::default());
        assert_eq!(r[0].status.state, State::Idle);
    }

    #[test]
    fn stalled_expires_after_its_window() {
        let mut obs = Observed::default();
        obs.observe(&[report(1, 1, State::Working, 0)], t(10));
        let mut r = [quiet_open_turn(0)];
        obs.apply(&mut r, t(16 * 60), &Windows::default());
        assert_eq!(r[0].status.state, State::Idle);
    }

    #[test]
    fn observe_writes_only_on_new_activity() {
        let mut obs = Observed::default();
        assert!(obs.observe(&[report(1, 1, State::Working, 0)], t(1)));
        assert!(!obs.observe(&[report(1, 1, State::Working, 0)], t(2)));
        assert!(obs.observe(&[report(1, 1, State::Working, 5)], t(6)));
        assert!(!obs.observe(&[report(2, 1, State::YourTurn, 5)], t(6)));
    }

    #[test]
    fn observed_save_merges_with_disk() {
        let dir = tempfile::tempdir().unwrap();
        let mut a = Observed::default();
        a.observe(&[report(1, 1, State::Working, 0)], t(1));
        a.save(dir.path(), t(2)).unwrap();
        let mut b = Observed::default();
        b.observe(&[report(2, 1, State::Working, 0)], t(3));
        b.save(dir.path(), t(4)).unwrap();
        let back = Observed::load(dir.path());
        assert!(back.observation("/t/1.jsonl", Some(t(0))).seen_working);
        assert!(back.observation("/t/2.jsonl", Some(t(0))).seen_working);
    }

    #[test]
    fn alert_keys_survive_reload_and_expire_after_12h() {
        let dir = tempfile::tempdir().unwrap();
        let mut m = AlertMemory::default();
        m.remember("k", t(0), true);
        m.mark_seen("j", t(0));
        m.save(dir.path()).unwrap();
        let mut back = AlertMemory::load(dir.path());
        assert_eq!(back, m);
        assert!(back.get("k").unwrap().delivered && back.is_seen("j"));
        back.prune(t(12 * 3600 + 1));
        assert!(back.is_empty());
    }

    #[test]
    fn corrupt_memory_is_empty_not_an_error() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(AlertMemory::path(dir.path()), b"{not json").unwrap();
        std::fs::write(Observed::path(dir.path()), b"\xff").unwrap();
        assert!(AlertMemory::load(dir.path()).is_empty());
        assert_eq!(Observed::load(dir.path()), Observed::default());
    }
}
