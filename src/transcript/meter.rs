//! A session's usage as its log grows (docs/design.md#usage): a log is read forward once,
//! then only what is appended ([`super::follow::Follower`]); each line goes through the
//! agent's own [`crate::agents::Agent::usage`] into a [`Tally`]. A log rewritten or replaced
//! is read again from its start. A session whose log is not an append-only JSONL file (a
//! database, a chat log rewritten in place) is read by the agent's
//! [`crate::agents::Agent::session_usage`].

use std::collections::{HashMap, HashSet};
use std::io;
use std::path::{Path, PathBuf};

use super::follow::Follower;
use crate::agents;
use crate::events::AgentKind;
use crate::read::MAX_LINE;
use crate::usage::{Metered, Tally};

/// One log followed from its start.
#[derive(Debug)]
pub struct Meter {
    kind: AgentKind,
    follower: Follower,
    tally: Tally,
    /// The window worked out for a model the log does not give one for.
    window: Option<(String, Option<u64>)>,
}

impl Meter {
    /// Reads the log at `path` of agent `kind` from its start.
    pub fn open(path: &Path, kind: AgentKind) -> io::Result<Meter> {
        let mut m = Meter {
            kind,
            follower: Follower::at_start(path, MAX_LINE)?,
            tally: Tally::default(),
            window: None,
        };
        m.follow()?;
        Ok(m)
    }

    /// Reads what was appended; `false` when the log was rewritten or replaced (the meter
    /// must be opened again).
    pub fn follow(&mut self) -> io::Result<bool> {
        let agent = agents::of(self.kind);
        loop {
            let got = self.follower.poll()?;
            if got.reset {
                return Ok(false);
            }
            for line in &got.lines {
                if let Some(r) = agent.usage(line) {
                    self.tally.push(r);
                }
            }
            if !got.more {
                return Ok(true);
            }
        }
    }

    /// The usage so far, the window from the agent's config or table when the log does not
    /// state it (`pid`, `home`: the agent's process and the user's home).
    pub fn metered(&mut self, pid: Option<u32>, home: &Path) -> Metered {
        let mut usage = self.tally.usage(None);
        if let (None, Some(model)) = (usage.context_window, usage.model.as_deref()) {
            let known = self.window.as_ref().filter(|(m, _)| m == model);
            let window = match known {
                Some((_, w)) => *w,
                None => {
                    let w = agents::of(self.kind).context_window(model, pid, home);
                    self.window = Some((model.to_string(), w));
                    w
                }
            };
            usage = self.tally.usage(window);
        }
        Metered {
            usage,
            limits: self.tally.limits().to_vec(),
        }
    }
}

/// The meters of the sessions a long-running caller follows, by transcript.
#[derive(Debug, Default)]
pub struct Meters {
    logs: HashMap<PathBuf, Meter>,
}

impl Meters {
    /// The usage of the session at `path` of agent `kind`, its log read on from where it was
    /// left; `None` when the agent's log says nothing about usage or cannot be read.
    pub fn measure(
        &mut self,
        path: &Path,
        kind: AgentKind,
        pid: Option<u32>,
        home: &Path,
    ) -> Option<Metered> {
        let agent = agents::of(kind);
        if let Some(read) = agent.session_usage(path) {
            let usage = read.ok()?;
            return Some(Metered {
                usage,
                limits: Vec::new(),
            });
        }
        // A session in a database is no log to follow: the agent's `session_usage` or nothing.
        if !agent.reads_log() || agent.sources(path).is_some() {
            return None;
        }
        let followed = match self.logs.get_mut(path) {
            Some(m) if m.kind == kind => m.follow().ok(),
            _ => None,
        };
        if followed != Some(true) {
            self.logs.remove(path);
            self.logs
                .insert(path.to_path_buf(), Meter::open(path, kind).ok()?);
        }
        self.logs.get_mut(path).map(|m| m.metered(pid, home))
    }

    /// Forgets every session but `live`.
    pub fn retain(&mut self, live: &HashSet<&Path>) {
        self.logs.retain(|p, _| live.contains(p.as_path()));
    }
}

/// The usage of one session, its log read forward once (a one-shot command).
pub fn measure(path: &Path, kind: AgentKind, pid: Option<u32>, home: &Path) -> Option<Metered> {
    Meters::default().measure(path, kind, pid, home)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    const CODEX: &str = "fixtures/real/codex/kvsankar-agent-history/session-01.jsonl";

    #[test]
    fn a_log_is_followed_not_read_again_and_a_rewrite_starts_over() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rollout.jsonl");
        let fixture =
            std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(CODEX)).unwrap();
        let (head, tail): (Vec<&str>, Vec<&str>) = {
            let all: Vec<&str> = fixture.lines().collect();
            let cut = all.iter().position(|l| l.contains("token_count")).unwrap();
            (all[..cut].to_vec(), all[cut..].to_vec())
        };
        std::fs::write(&path, head.join("\n") + "\n").unwrap();
        let mut meters = Meters::default();
        let home = Path::new("/nonexistent");
        let first = meters.measure(&path, AgentKind::Codex, None, home).unwrap();
        assert_eq!(first.usage.model.as_deref(), Some("gpt-5.5"));
        assert_eq!(first.usage.session_input, None);
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        writeln!(f, "{}", tail.join("\n")).unwrap();
        drop(f);
        let offset = meters.logs[&path].follower.offset();
        let next = meters.measure(&path, AgentKind::Codex, None, home).unwrap();
        assert_eq!(next.usage.session_input, Some(22539));
        assert_eq!(next.limits.len(), 2);
        assert!(meters.logs[&path].follower.offset() > offset, "followed on");
        // Rewritten shorter: read from its start again, not summed onto the old counts.
        std::fs::write(&path, tail[0].to_string() + "\n").unwrap();
        let again = meters.measure(&path, AgentKind::Codex, None, home).unwrap();
        assert_eq!(again.usage.session_input, Some(22539));
        assert_eq!(again.usage.model, None, "the rewritten log names no model");
        meters.retain(&HashSet::new());
        assert!(meters.logs.is_empty());
    }

    #[test]
    fn a_missing_log_is_none_not_a_panic() {
        assert_eq!(
            measure(
                Path::new("/nonexistent/x.jsonl"),
                AgentKind::Codex,
                None,
                Path::new("/")
            ),
            None
        );
    }
}
