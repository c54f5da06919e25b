//! The resolution chain for one pane: pane → agent process → session record → transcript.
//!
//! A [`Resolver`] holds what one scan shares: the process snapshot, the agent matcher and the
//! cached sessionId → transcript locations. Every failure along the chain (a pane or process
//! vanishing, `/proc` unreadable, a corrupt record) ends that pane's chain with a step saying
//! why, never an error.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::agents::claude::locate as claude;
use crate::agents::codex::locate as codex;
use crate::agents::gemini::locate as gemini;
pub use crate::agents::locate::{Target, TranscriptCache, Via};
use crate::agents::opencode::locate as opencode;
use crate::agents::record::SessionRecord;
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
    match kind {
        AgentKind::Claude => Some(claude::config_root(pid, home)),
        AgentKind::Codex => Some(crate::agents::codex::home::codex_home(pid, home)),
        AgentKind::Opencode => Some(opencode::data_root(pid, home)),
        AgentKind::Gemini => Some(gemini::gemini_dir(pid, home)),
        AgentKind::Amp | AgentKind::Aider => None,
    }
}

/// Resolves panes against one process snapshot.
pub struct Resolver {
    table: ProcTable,
    matcher: Matcher,
    home: PathBuf,
    now: Time,
    cache: TranscriptCache,
    /// Per Claude config root: (pid, sessionId) of every live session record.
    claims: HashMap<PathBuf, Vec<(u32, String)>>,
    /// What the opencode panes of this scan share (databases, the other opencode processes).
    opencode: opencode::Shared,
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
            claims: HashMap::new(),
            opencode: opencode::Shared::default(),
        }
    }

    /// Reads opencode's databases through `dbs` (connections a caller keeps between scans).
    pub fn with_databases(mut self, dbs: crate::agents::opencode::store::Databases) -> Resolver {
        self.opencode.dbs = dbs;
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
            Matcher::from_env(),
            TranscriptCache::load(),
            now,
        )
    }

    /// The process snapshot.
    pub fn table(&self) -> &ProcTable {
        &self.table
    }

    /// Saves what was learnt (the transcript cache); hands back the databases it read.
    pub fn finish(mut self) -> crate::agents::opencode::store::Databases {
        self.cache.save();
        self.opencode.dbs
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
        let claimed: HashSet<String> = if m.kind == AgentKind::Claude {
            self.claims_for(&root)
                .iter()
                .filter(|(pid, _)| *pid != m.pid)
                .map(|(_, id)| id.clone())
                .collect()
        } else {
            HashSet::new()
        };
        let target = Target {
            pid: m.pid,
            start: m.start,
            root: &root,
            cwds: &cwds,
            claimed: &claimed,
        };
        let found = match m.kind {
            AgentKind::Codex => {
                codex::locate(&target, self.now, &self.table, &self.home, &mut out.steps)
            }
            AgentKind::Opencode => {
                let argv = self.table.get(m.pid).map_or(&[][..], |p| &p.argv[..]);
                opencode::locate(
                    &target,
                    &self.table,
                    argv,
                    &mut self.opencode,
                    &mut out.steps,
                )
            }
            AgentKind::Gemini => gemini::locate(&target, &self.table, &mut out.steps),
            _ => claude::locate(&target, &mut self.cache, &mut out.steps),
        };
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
        out.machine_driven = m.kind == AgentKind::Codex
            && found
                .transcript
                .as_deref()
                .is_some_and(codex::machine_driven);
        out.transcript = found.transcript;
        out.via = found.via;
        out.session_id = found.session_id;
        out.record = found.record;
        out
    }

    fn claims_for(&mut self, root: &Path) -> &[(u32, String)] {
        let table = &self.table;
        self.claims
            .entry(root.to_path_buf())
            .or_insert_with(|| claude::claimed_sessions(root, &|pid| table.get(pid).is_some()))
    }
}

#[cfg(test)]
mod tests;
