//! Plan windows and session usage an agent hands its status-line command
//! (docs/design.md#plan-windows-from-a-status-line): what `agentpane statusline` keeps of each
//! capture, one file per agent in `<state>/limits/`, and how it is read back. Windows are per
//! account, so the file is not per tmux server; the per-session numbers are keyed by session id.
//!
//! Merging is pure ([`merge`]): of two readings of one window, the later window (later reset)
//! wins, and within one window the higher use, so a session that has not talked to the API for
//! a while never takes back what a busier one reported. Reading applies [`current`]: a window
//! whose reset has passed is not shown as used.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::events::{AgentKind, Time};
use crate::paths;
use crate::usage::{Limit, Usage};

/// How many sessions' usage one agent's file keeps (the most recently seen).
pub const SESSIONS: usize = 32;

/// How long a capture waits for another one writing the same file before it gives up (the
/// status line must not wait).
const LOCK_WAIT: Duration = Duration::from_millis(200);

/// What one status-line input says.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StatusLine {
    /// The session it is about.
    pub session_id: Option<String>,
    /// The plan windows it carries (none for an API-key login or an older client).
    pub limits: Vec<Limit>,
    /// This session's usage as the agent states it there.
    pub usage: Usage,
}

/// One session's usage as last captured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionUsage {
    pub usage: Usage,
    pub seen_at: Time,
}

/// What one agent's file holds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Saved {
    #[serde(default)]
    pub limits: Vec<Limit>,
    #[serde(default)]
    pub sessions: BTreeMap<String, SessionUsage>,
}

/// `<state>/limits`.
pub fn dir(state: &Path) -> PathBuf {
    state.join("limits")
}

/// `<state>/limits/<agent>.json`.
pub fn file(state: &Path, agent: AgentKind) -> PathBuf {
    dir(state).join(format!("{}.json", agent.name()))
}

/// `saved` with one capture taken at `now` added: its windows merged ([`merge`]), its
/// session's usage replaced, the oldest sessions beyond [`SESSIONS`] dropped.
pub fn add(mut saved: Saved, capture: StatusLine, now: Time) -> Saved {
    saved.limits = merge(&saved.limits, &capture.limits);
    if let Some(id) = capture.session_id.filter(|id| !id.is_empty()) {
        saved.sessions.insert(
            id,
            SessionUsage {
                usage: capture.usage,
                seen_at: now,
            },
        );
    }
    while saved.sessions.len() > SESSIONS {
        let oldest = saved
            .sessions
            .iter()
            .min_by_key(|(_, s)| s.seen_at)
            .map(|(id, _)| id.clone());
        match oldest {
            Some(id) => saved.sessions.remove(&id),
            None => break,
        };
    }
    saved
}

/// The windows of `old` updated by `new`, by agent and name: the reading whose window resets
/// later wins; for the same reset, the higher use (a window's use only grows until it resets).
pub fn merge(old: &[Limit], new: &[Limit]) -> Vec<Limit> {
    let mut out: Vec<Limit> = old.to_vec();
    for n in new {
        match out
            .iter_mut()
            .find(|o| o.agent == n.agent && o.name == n.name)
        {
            None => out.push(n.clone()),
            Some(o) => {
                let newer = match (o.resets_at, n.resets_at) {
                    (Some(a), Some(b)) if a != b => b > a,
                    (Some(_), Some(_)) => n.used_percent >= o.used_percent,
                    _ => true,
                };
                if newer {
                    *o = n.clone();
                }
            }
        }
    }
    out
}

/// The windows still in force at `now`: one whose reset has passed is left out (its use
/// started again from zero, and the next reset is not known yet).
pub fn current(limits: &[Limit], now: Time) -> Vec<Limit> {
    limits
        .iter()
        .filter(|l| l.resets_at.map_or(true, |r| r > now))
        .cloned()
        .collect()
}

/// What `agent`'s file holds (nothing when it is missing, not trusted or unreadable).
pub fn load(state: &Path, agent: AgentKind) -> Saved {
    paths::read_trusted(&file(state, agent))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default()
}

/// Every agent's plan windows still in force at `now`.
pub fn all_current(state: &Path, now: Time) -> Vec<Limit> {
    AgentKind::ALL
        .into_iter()
        .flat_map(|k| current(&load(state, k).limits, now))
        .collect()
}

/// Every agent's plan windows for a process that asks at every scan (the watcher): the files
/// are read again only when the folder changed (each capture renames a new file into it), so
/// an unchanged folder costs one `stat`.
#[derive(Debug, Default)]
pub struct Watched {
    stamp: Option<std::time::SystemTime>,
    limits: Vec<Limit>,
}

impl Watched {
    /// The plan windows in force at `now`.
    pub fn current(&mut self, state: &Path, now: Time) -> Vec<Limit> {
        let stamp = std::fs::metadata(dir(state))
            .and_then(|m| m.modified())
            .ok();
        if stamp != self.stamp {
            self.limits = AgentKind::ALL
                .into_iter()
                .flat_map(|k| load(state, k).limits)
                .collect();
            self.stamp = stamp;
        }
        current(&self.limits, now)
    }
}

/// One session's usage as its agent's status line last stated it.
pub fn session(state: &Path, agent: AgentKind, session_id: &str) -> Option<SessionUsage> {
    load(state, agent).sessions.remove(session_id)
}

/// Adds one capture to `agent`'s file: under a lock (waiting at most [`LOCK_WAIT`]), written
/// atomically, 0600 in a 0700 folder. `Ok(false)` when another capture held the lock too long
/// (this one is dropped; the next one carries the same numbers).
pub fn record(state: &Path, agent: AgentKind, capture: StatusLine, now: Time) -> Result<bool> {
    let dir = dir(state);
    paths::ensure_private_dir(&dir)?;
    let path = file(state, agent);
    let lock_path = dir.join(format!(".{}.lock", agent.name()));
    let Some(_lock) = paths::FileLock::acquire_within(&lock_path, LOCK_WAIT)? else {
        return Ok(false);
    };
    let saved = add(load(state, agent), capture, now);
    let data = serde_json::to_vec(&saved).context("cannot encode plan windows")?;
    paths::replace(&path, &data)?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn t(secs: i64) -> Time {
        chrono::Utc.timestamp_opt(1_796_612_000 + secs, 0).unwrap()
    }

    fn win(name: &str, used: f64, reset: i64) -> Limit {
        Limit {
            agent: AgentKind::Claude,
            name: name.into(),
            used_percent: used,
            window_minutes: Some(300),
            resets_at: Some(t(reset)),
            seen_at: Some(t(0)),
        }
    }

    #[test]
    fn an_idle_sessions_older_reading_never_takes_back_a_busier_ones() {
        let saved = vec![win("5h", 62.0, 100), win("7d", 21.0, 9000)];
        // The same window, less used: an idle session's stale numbers.
        assert_eq!(merge(&saved, &[win("5h", 40.0, 100)]), saved);
        // The same window, more used.
        assert_eq!(merge(&saved, &[win("5h", 70.0, 100)])[0].used_percent, 70.0);
        // A later window (the old one reset), less used: it wins.
        let next = merge(&saved, &[win("5h", 3.0, 18100)]);
        assert_eq!(next[0], win("5h", 3.0, 18100));
        assert_eq!(next[1], win("7d", 21.0, 9000));
        // A window seen the first time is added.
        let other = Limit {
            agent: AgentKind::Codex,
            ..win("5h", 1.0, 50)
        };
        assert_eq!(merge(&saved, std::slice::from_ref(&other))[2], other);
    }

    #[test]
    fn a_window_whose_reset_passed_is_not_shown_as_used() {
        let limits = vec![win("5h", 62.0, 100), win("7d", 21.0, 9000)];
        assert_eq!(current(&limits, t(99)).len(), 2);
        assert_eq!(current(&limits, t(100)), vec![win("7d", 21.0, 9000)]);
        let no_reset = Limit {
            resets_at: None,
            ..win("5h", 5.0, 0)
        };
        assert_eq!(
            current(std::slice::from_ref(&no_reset), t(1_000_000)),
            vec![no_reset]
        );
    }

    #[test]
    fn sessions_are_kept_by_id_and_the_oldest_dropped() {
        let mut saved = Saved::default();
        for i in 0..(SESSIONS as i64 + 3) {
            let capture = StatusLine {
                session_id: Some(format!("s{i}")),
                usage: Usage {
                    cost_usd: Some(i as f64),
                    ..Usage::default()
                },
                ..StatusLine::default()
            };
            saved = add(saved, capture, t(i));
        }
        assert_eq!(saved.sessions.len(), SESSIONS);
        assert!(!saved.sessions.contains_key("s0"));
        assert!(!saved.sessions.contains_key("s2"));
        assert_eq!(saved.sessions["s34"].usage.cost_usd, Some(34.0));
        assert_eq!(saved.sessions["s34"].seen_at, t(34));
    }

    #[test]
    fn a_record_is_private_and_reads_back() {
        use std::os::unix::fs::PermissionsExt;
        let state = tempfile::tempdir().unwrap();
        let capture = StatusLine {
            session_id: Some("abc".into()),
            limits: vec![win("5h", 62.0, 100)],
            usage: Usage::default(),
        };
        assert!(record(state.path(), AgentKind::Claude, capture, t(1)).unwrap());
        let path = file(state.path(), AgentKind::Claude);
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let dir_mode = std::fs::metadata(dir(state.path()))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(dir_mode & 0o777, 0o700);
        assert_eq!(all_current(state.path(), t(2)), vec![win("5h", 62.0, 100)]);
        assert!(all_current(state.path(), t(100)).is_empty());
        let mut watched = Watched::default();
        assert_eq!(watched.current(state.path(), t(2)).len(), 1);
        let later = StatusLine {
            limits: vec![win("7d", 30.0, 9000)],
            ..StatusLine::default()
        };
        assert!(record(state.path(), AgentKind::Claude, later, t(3)).unwrap());
        assert_eq!(watched.current(state.path(), t(4)).len(), 2);
        assert_eq!(
            session(state.path(), AgentKind::Claude, "abc").map(|s| s.seen_at),
            Some(t(1))
        );
    }
}
