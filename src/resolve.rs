//! The resolution chain for one pane: pane → agent process → session record → transcript.
//!
//! A [`Resolver`] holds what one scan shares: the process snapshot, the agent matcher and the
//! cached sessionId → transcript locations. Every failure along the chain (a pane or process
//! vanishing, `/proc` unreadable, a corrupt record) ends that pane's chain with a step saying
//! why, never an error.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde::Serialize;

pub use crate::agents::locate::{Target, TranscriptCache, Via};
use crate::agents::record::SessionRecord;
use crate::agents::{self, Lookup, Shared};
use crate::events::{AgentKind, Time};
use crate::paths;
use crate::proctree::{procfs, Matcher, ProcTable, Skeleton};
use crate::tmux::Pane;

/// The agent process found under a pane.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AgentProcess {
    pub kind: AgentKind,
    pub pid: u32,
    /// Process start, seconds since the epoch.
    pub started: u64,
    /// The agent's config root (`CLAUDE_CONFIG_DIR` / `CODEX_HOME` or the default).
    pub root: Option<PathBuf>,
    /// The agent's command line, as captured (empty when unreadable).
    pub command: String,
}

/// One resolved pane.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Resolved {
    pub pane: Pane,
    pub agent: Option<AgentProcess>,
    pub transcript: Option<PathBuf>,
    pub via: Via,
    /// The session id from the session record, when one was read.
    pub session_id: Option<String>,
    /// Each link of the chain, in order, and where it broke (for `resolve` output).
    pub steps: Vec<String>,
    /// The live session record (Claude Code), when one was read and belongs to the agent.
    pub record: Option<SessionRecord>,
    /// A session driven by a program, not a person (Codex `exec`, MCP, subagent): not
    /// alarmed by default (docs/design.md#turns-per-agent).
    pub machine_driven: bool,
}

/// Where the agent `kind` running as `pid` keeps its sessions, read from its own environment
/// (`CLAUDE_CONFIG_DIR`, `CODEX_HOME`, its `HOME`, …), and which of those said so. `None` for
/// agents whose transcripts agentpane does not read.
pub fn config_root(kind: AgentKind, pid: u32, home: &Path) -> Option<(PathBuf, &'static str)> {
    agents::of(kind).root(pid, home)
}

/// Resolves panes against one process snapshot.
pub struct Resolver {
    table: ProcTable,
    matcher: Matcher,
    home: PathBuf,
    now: Time,
    cache: TranscriptCache,
    /// What the panes of this scan share, per agent (claims, databases).
    shared: Shared,
}

impl Resolver {
    /// A resolver over a given table (tests pass synthetic ones).
    pub fn new(table: ProcTable, matcher: Matcher, cache: TranscriptCache, now: Time) -> Resolver {
        Resolver {
            table,
            matcher,
            home: paths::home_dir(),
            now,
            cache,
            shared: Shared::default(),
        }
    }

    /// Shares `shared` among the panes (connections a caller keeps between scans,
    /// [`agents::Stores::lend`]).
    pub fn with_shared(mut self, shared: Shared) -> Resolver {
        self.shared = shared;
        self
    }

    /// One snapshot of the system covering `panes`, with the matcher from the environment and
    /// the on-disk cache.
    pub fn for_panes(panes: &[Pane], now: Time) -> Resolver {
        Resolver::from_skeleton(panes, Skeleton::take(), now)
    }

    /// [`Resolver::for_panes`] completing a process skeleton taken earlier (while tmux listed
    /// the panes).
    pub fn from_skeleton(panes: &[Pane], skeleton: Skeleton, now: Time) -> Resolver {
        let roots: Vec<u32> = panes
            .iter()
            .filter(|p| !p.dead)
            .map(|p| p.pane_pid)
            .collect();
        Resolver::new(
            skeleton.finish(&roots),
            Matcher::from_env().with_packages(agents::packages()),
            TranscriptCache::load(),
            now,
        )
    }

    /// The process snapshot.
    pub fn table(&self) -> &ProcTable {
        &self.table
    }

    /// Every pane's chain, in `panes`' order. With agents of several kinds, the panes of some
    /// kinds resolve on a second thread (a locator mostly waits on `/proc` and the disk, and
    /// the panes of one kind share what they learn, so a kind is never split): the kinds
    /// that keep a store stay on this thread, with the connections lent to it, and the
    /// others go to whichever thread has less to do.
    pub fn resolve_all(&mut self, panes: &[Pane]) -> Vec<Resolved> {
        let kinds: Vec<Option<AgentKind>> = panes.iter().map(|p| self.agent_kind(p)).collect();
        let aside = kinds_aside(&kinds);
        if aside.is_empty() {
            return panes.iter().map(|p| self.resolve(p)).collect();
        }
        let mut fork = Resolver {
            table: self.table.clone(),
            matcher: self.matcher.clone(),
            home: self.home.clone(),
            now: self.now,
            cache: self.cache.fork(),
            shared: Shared::default(),
        };
        let there: Vec<usize> = (0..panes.len())
            .filter(|&i| kinds[i].is_some_and(|k| aside.contains(&k)))
            .collect();
        let (mut out, theirs) = std::thread::scope(|s| {
            let theirs = s.spawn(|| {
                let got: Vec<(usize, Resolved)> = there
                    .iter()
                    .map(|&i| (i, fork.resolve(&panes[i])))
                    .collect();
                (got, fork)
            });
            let here: Vec<(usize, Resolved)> = (0..panes.len())
                .filter(|i| !there.contains(i))
                .map(|i| (i, self.resolve(&panes[i])))
                .collect();
            (here, theirs.join())
        });
        match theirs {
            Ok((got, fork)) => {
                out.extend(got);
                self.cache.absorb(fork.cache);
                self.shared.absorb(fork.shared);
            }
            // A locator that panicked there is asked again here, where its panic is its own.
            Err(_) => out.extend(there.iter().map(|&i| (i, self.resolve(&panes[i])))),
        }
        out.sort_by_key(|(i, _)| *i);
        out.into_iter().map(|(_, r)| r).collect()
    }

    /// The kind of agent running in `pane`, from the process snapshot alone.
    pub fn agent_kind(&self, pane: &Pane) -> Option<AgentKind> {
        if pane.dead {
            return None;
        }
        self.table
            .find_agent(pane.pane_pid, &self.matcher)
            .map(|m| m.kind)
    }

    /// Saves what was learnt (the transcript cache); hands back what the panes shared.
    pub fn finish(mut self) -> Shared {
        self.cache.save();
        self.shared
    }

    /// The whole chain for one pane.
    pub fn resolve(&mut self, pane: &Pane) -> Resolved {
        let mut out = Resolved {
            pane: pane.clone(),
            agent: None,
            transcript: None,
            via: Via::None,
            session_id: None,
            steps: vec![format!(
                "pane: {} ({}) pid {}, cwd {}",
                pane.pane_id,
                pane.target(),
                pane.pane_pid,
                pane.cwd
            )],
            record: None,
            machine_driven: false,
        };
        if pane.dead {
            out.steps
                .push("agent: none (the pane's process has exited)".to_string());
            return out;
        }
        let Some(shell) = self.table.get(pane.pane_pid) else {
            out.steps.push(format!(
                "agent: none (pane process {} has vanished)",
                pane.pane_pid
            ));
            return out;
        };
        let Some(m) = self.table.find_agent(pane.pane_pid, &self.matcher) else {
            out.steps.push(format!(
                "agent: none (no known agent process under pid {} `{}`)",
                pane.pane_pid, shell.name
            ));
            return out;
        };
        let command = self
            .table
            .get(m.pid)
            .map(|p| crate::text::bounded(&p.argv.join(" "), 200))
            .unwrap_or_default();
        let chain: Vec<String> = m.chain.iter().map(u32::to_string).collect();
        out.steps.push(format!(
            "agent: {} pid {} `{}` (process chain {})",
            m.kind,
            m.pid,
            command,
            chain.join(" → ")
        ));
        let Some((root, root_from)) = config_root(m.kind, m.pid, &self.home) else {
            out.agent = Some(AgentProcess {
                kind: m.kind,
                pid: m.pid,
                started: m.start,
                root: None,
                command,
            });
            out.steps.push(format!(
                "transcript: none (agentpane does not read {} transcripts)",
                m.kind
            ));
            return out;
        };
        out.steps
            .push(format!("config root: {} ({root_from})", root.display()));
        let mut cwds: Vec<String> = Vec::new();
        if let Some(c) = procfs::cwd(m.pid).and_then(|c| c.to_str().map(str::to_string)) {
            cwds.push(c);
        }
        if !pane.cwd.is_empty() && !cwds.contains(&pane.cwd) {
            cwds.push(pane.cwd.clone());
        }
        let claimed = HashSet::new();
        let target = Target {
            pid: m.pid,
            start: m.start,
            root: &root,
            cwds: &cwds,
            claimed: &claimed,
        };
        let agent = agents::of(m.kind);
        let found = agent.locate(
            &target,
            &mut Lookup {
                now: self.now,
                table: &self.table,
                home: &self.home,
                cache: &mut self.cache,
                shared: &mut self.shared,
            },
            &mut out.steps,
        );
        match &found.transcript {
            Some(t) => out.steps.push(format!(
                "transcript: {} (via {})",
                t.display(),
                found.via.as_str()
            )),
            None => out.steps.push(format!(
                "transcript: not found (via {})",
                found.via.as_str()
            )),
        }
        out.agent = Some(AgentProcess {
            kind: m.kind,
            pid: m.pid,
            started: m.start,
            root: Some(root),
            command,
        });
        out.machine_driven = found
            .transcript
            .as_deref()
            .is_some_and(|t| agent.machine_driven(t));
        out.transcript = found.transcript;
        out.via = found.via;
        out.session_id = found.session_id;
        out.record = found.record;
        out
    }
}

/// The agent kinds whose panes resolve on a second thread, given each pane's kind: none
/// when there are too few agent panes to be worth a thread, or a single kind (or only kinds
/// that keep a store). The rest stay: the kinds that keep a store (the reader's connections
/// are lent to this thread) and panes with no agent (nothing to locate).
fn kinds_aside(kinds: &[Option<AgentKind>]) -> Vec<AgentKind> {
    /// Fewer agent panes than this resolve on one thread.
    const MIN_PANES: usize = 8;
    if kinds.iter().flatten().count() < MIN_PANES {
        return Vec::new();
    }
    // What a pane costs to locate, roughly: one read from its screen costs next to nothing,
    // a database the most.
    let weight = |k: AgentKind| {
        if agents::keeps_a_store(k) {
            4
        } else if agents::reads_log(k) {
            2
        } else {
            0
        }
    };
    let mut per_kind: Vec<(AgentKind, usize)> = Vec::new();
    for k in kinds.iter().flatten() {
        match per_kind.iter_mut().find(|(kind, _)| kind == k) {
            Some((_, w)) => *w += weight(*k),
            None => per_kind.push((*k, weight(*k))),
        }
    }
    let (stay, movable): (Vec<_>, Vec<_>) = per_kind
        .into_iter()
        .partition(|(k, w)| agents::keeps_a_store(*k) || *w == 0);
    let mut movable = movable;
    // Heaviest first, each to the lighter side; ties by name, so a scan splits alike.
    movable.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.name().cmp(b.0.name())));
    let mut here: usize = stay.iter().map(|(_, w)| w).sum();
    let mut there = 0;
    let mut aside = Vec::new();
    for (k, w) in movable {
        if there < here {
            there += w;
            aside.push(k);
        } else {
            here += w;
        }
    }
    aside
}

#[cfg(test)]
mod tests;
