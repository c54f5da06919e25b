//! A session's usage as its log grows (docs/design.md#usage): a log is read forward once,
//! then only what is appended ([`super::follow::Follower`]); each line goes through the
//! agent's own [`crate::agents::Agent::usage`] into a [`Tally`]. A log rewritten or replaced
//! is read again from its start. A session whose log is not an append-only JSONL file (a
//! database, a chat log rewritten in place) is read by the agent's
//! [`crate::agents::Agent::session_usage`].
//!
//! A long-running caller's [`Meters`] read a big log's first pass on a worker thread
//! ([`FirstReads`]), one log at a time, so a scan never waits for it.

use std::collections::{HashMap, HashSet};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Sender};
use std::sync::{Arc, Mutex};

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

/// A log longer than this is read forward the first time on the worker thread (when the
/// caller has one, [`Meters::read_big_logs_aside`]); a shorter one at once.
pub const FIRST_READ_INLINE: u64 = 4 * 1024 * 1024;

/// Told the transcript whose first read just finished on the worker thread: the caller
/// reports its pane again to pick the totals up.
pub type ReadDone = Arc<dyn Fn(&Path) + Send + Sync>;

/// What the worker thread read: each log's meter (or why not), until picked up.
type Finished = Arc<Mutex<HashMap<PathBuf, io::Result<Meter>>>>;

/// The worker thread that reads big logs forward for the first time, one after another.
struct FirstReads {
    jobs: Sender<(PathBuf, AgentKind)>,
    finished: Finished,
    /// Sent to the worker and not picked up yet.
    queued: HashSet<PathBuf>,
}

impl std::fmt::Debug for FirstReads {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FirstReads")
            .field("queued", &self.queued)
            .finish_non_exhaustive()
    }
}

impl FirstReads {
    /// Starts the worker; it ends when the `FirstReads` is dropped.
    fn start(done: ReadDone) -> FirstReads {
        let (jobs, rx) = mpsc::channel::<(PathBuf, AgentKind)>();
        let finished = Finished::default();
        let out = Arc::clone(&finished);
        std::thread::spawn(move || {
            for (path, kind) in rx {
                let meter = Meter::open(&path, kind);
                out.lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .insert(path.clone(), meter);
                done(&path);
            }
        });
        FirstReads {
            jobs,
            finished,
            queued: HashSet::new(),
        }
    }

    /// The meter read for `path`, when its read finished (`None` while it runs or when none
    /// was asked for).
    fn take(&mut self, path: &Path) -> Option<io::Result<Meter>> {
        let got = self
            .finished
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(path)?;
        self.queued.remove(path);
        Some(got)
    }

    fn retain(&mut self, live: &HashSet<&Path>) {
        self.queued.retain(|p| live.contains(p.as_path()));
        self.finished
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|p, _| live.contains(p.as_path()));
    }
}

/// The meters of the sessions a long-running caller follows, by transcript.
#[derive(Debug, Default)]
pub struct Meters {
    logs: HashMap<PathBuf, Meter>,
    /// Set when big logs are read on the worker thread.
    aside: Option<FirstReads>,
}

impl Meters {
    /// From now on a log longer than [`FIRST_READ_INLINE`] is read forward the first time on
    /// a worker thread, one at a time; `done` is told each one that finished. Until then
    /// [`Meters::measure`] has no usage for it ([`Meters::pending`]).
    pub fn read_big_logs_aside(&mut self, done: ReadDone) {
        self.aside = Some(FirstReads::start(done));
    }

    /// True while the first read of `path` runs (or waits its turn) on the worker thread.
    pub fn pending(&self, path: &Path) -> bool {
        self.aside.as_ref().is_some_and(|a| a.queued.contains(path))
    }

    /// The usage of the session at `path` of agent `kind`, its log read on from where it was
    /// left; `None` when the agent's log says nothing about usage or cannot be read, or while
    /// its first read runs on the worker thread.
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
            let meter = self.first_read(path, kind)?;
            self.logs.insert(path.to_path_buf(), meter);
        }
        self.logs.get_mut(path).map(|m| m.metered(pid, home))
    }

    /// A meter of `path` read forward from its start: at once, or picked up from the worker
    /// thread (then followed on over what was appended since) once its read there finished;
    /// `None` while it runs or when the log cannot be read.
    fn first_read(&mut self, path: &Path, kind: AgentKind) -> Option<Meter> {
        let Some(aside) = self.aside.as_mut() else {
            return Meter::open(path, kind).ok();
        };
        if aside.queued.contains(path) {
            let mut meter = aside.take(path)?.ok().filter(|m| m.kind == kind)?;
            return match meter.follow() {
                Ok(true) => Some(meter),
                // Rewritten meanwhile: read again from its start.
                Ok(false) => self.first_read(path, kind),
                Err(_) => None,
            };
        }
        let len = std::fs::metadata(path).ok()?.len();
        if len <= FIRST_READ_INLINE {
            return Meter::open(path, kind).ok();
        }
        if aside.jobs.send((path.to_path_buf(), kind)).is_ok() {
            aside.queued.insert(path.to_path_buf());
        }
        None
    }

    /// Forgets every session but `live`.
    pub fn retain(&mut self, live: &HashSet<&Path>) {
        self.logs.retain(|p, _| live.contains(p.as_path()));
        if let Some(a) = &mut self.aside {
            a.retain(live);
        }
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
