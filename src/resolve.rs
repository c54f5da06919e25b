//! The chain of SPEC §3.3 for one pane: pane → agent process → session record → transcript.
//!
//! A [`Resolver`] holds what one scan shares: the process snapshot, the agent matcher and the
//! cached sessionId → transcript locations. Every failure along the chain (a pane or process
//! vanishing, `/proc` unreadable, a corrupt record) ends that pane's chain with a step saying
//! why, never an error.

use std::collections::{HashMap, HashSet};
use std::io::Read;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use crate::agents::claude::locate::{self as claude, SessionRecord};
use crate::agents::codex::locate as codex;
use crate::agents::gemini::locate as gemini;
use crate::events::{AgentKind, Time};
use crate::paths;
use crate::proctree::{procfs, Matcher, ProcTable};
use crate::tmux::Pane;

/// How the transcript was found (SPEC §12).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Via {
    SessionRecord,
    OpenFile,
    Cwd,
    /// Several sessions could be this process's: none is shown rather than a neighbour's.
    Ambiguous,
    #[default]
    None,
}

impl Via {
    /// The name used in JSON and on screen.
    pub fn as_str(self) -> &'static str {
        match self {
            Via::SessionRecord => "session-record",
            Via::OpenFile => "open-file",
            Via::Cwd => "cwd",
            Via::Ambiguous => "ambiguous",
            Via::None => "none",
        }
    }
}

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
    /// alarmed by default (SPEC §3.5).
    pub machine_driven: bool,
}

/// An agent's config root from its own environment: `$VAR`, else `<its HOME>/<dot_dir>`, else
/// `<fallback_home>/<dot_dir>`. The second value says which.
pub fn agent_root(
    pid: u32,
    var: &'static str,
    dot_dir: &str,
    fallback_home: &Path,
) -> (PathBuf, &'static str) {
    let env = procfs::environ(pid);
    if let Some(dir) = env
        .as_ref()
        .and_then(|e| e.get(var))
        .filter(|d| !d.is_empty())
    {
        return (PathBuf::from(dir), var);
    }
    match env
        .as_ref()
        .and_then(|e| e.get("HOME"))
        .filter(|h| !h.is_empty())
    {
        Some(home) => (Path::new(home).join(dot_dir), "agent's HOME"),
        None if env.is_none() => (
            fallback_home.join(dot_dir),
            "default; the agent's environment is unreadable",
        ),
        None => (fallback_home.join(dot_dir), "default"),
    }
}

/// What a locator knows about the agent process.
#[derive(Debug, Clone, Copy)]
pub struct Target<'a> {
    pub pid: u32,
    /// Process start, seconds since the epoch.
    pub start: u64,
    pub root: &'a Path,
    /// Working directories the transcript may name: the agent's own, then the pane's.
    pub cwds: &'a [String],
    /// Session ids owned by other live processes of the same agent (never ours).
    pub claimed: &'a HashSet<String>,
}

/// What a locator found.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Found {
    pub transcript: Option<PathBuf>,
    pub via: Via,
    pub session_id: Option<String>,
    pub record: Option<SessionRecord>,
}

/// sessionId → transcript locations found by scanning, kept in a small file in the state
/// folder so the next scan (another process) does not scan again.
#[derive(Debug, Default)]
pub struct TranscriptCache {
    file: Option<PathBuf>,
    map: HashMap<String, PathBuf>,
    dirty: bool,
}

impl TranscriptCache {
    const MAX_ENTRIES: usize = 2000;

    /// A cache that is never saved (tests).
    pub fn in_memory() -> TranscriptCache {
        TranscriptCache::default()
    }

    /// Loads `<state dir>/transcript-paths.json`; a missing or corrupt file is an empty cache.
    pub fn load() -> TranscriptCache {
        let file = paths::state_dir().join("transcript-paths.json");
        let map = std::fs::read(&file)
            .ok()
            .and_then(|b| serde_json::from_slice::<HashMap<String, PathBuf>>(&b).ok())
            .filter(|m| m.len() <= Self::MAX_ENTRIES)
            .unwrap_or_default();
        TranscriptCache {
            file: Some(file),
            map,
            dirty: false,
        }
    }

    /// The cached path for `key`, if it still exists.
    pub fn get(&mut self, key: &str) -> Option<PathBuf> {
        let path = self.map.get(key)?;
        if path.is_file() {
            return Some(path.clone());
        }
        self.map.remove(key);
        self.dirty = true;
        None
    }

    /// Remembers a location.
    pub fn put(&mut self, key: String, path: PathBuf) {
        if self.map.len() >= Self::MAX_ENTRIES {
            self.map.clear();
        }
        self.map.insert(key, path);
        self.dirty = true;
    }

    /// Writes the cache back when it changed. Failures are ignored: the cache only saves work.
    pub fn save(&mut self) {
        let Some(file) = &self.file else { return };
        if !self.dirty {
            return;
        }
        let Ok(data) = serde_json::to_vec(&self.map) else {
            return;
        };
        if let Some(dir) = file.parent() {
            if paths::ensure_private_dir(dir).is_ok() && paths::write_atomic(file, &data).is_ok() {
                self.dirty = false;
            }
        }
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
        }
    }

    /// One snapshot of the system covering `panes`, with the matcher from the environment and
    /// the on-disk cache.
    pub fn for_panes(panes: &[Pane], now: Time) -> Resolver {
        let roots: Vec<u32> = panes
            .iter()
            .filter(|p| !p.dead)
            .map(|p| p.pane_pid)
            .collect();
        Resolver::new(
            ProcTable::capture(&roots),
            Matcher::from_env(),
            TranscriptCache::load(),
            now,
        )
    }

    /// The process snapshot.
    pub fn table(&self) -> &ProcTable {
        &self.table
    }

    /// Saves what was learnt (the transcript cache).
    pub fn finish(mut self) {
        self.cache.save();
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
        let (root, root_from) = match m.kind {
            AgentKind::Claude => claude::config_root(m.pid, &self.home),
            AgentKind::Codex => codex::codex_home(m.pid, &self.home),
            AgentKind::Gemini => gemini::gemini_dir(m.pid, &self.home),
            other => {
                out.agent = Some(AgentProcess {
                    kind: other,
                    pid: m.pid,
                    started: m.start,
                    root: None,
                    command,
                });
                out.steps.push(format!(
                    "transcript: none (agentpane does not read {other} transcripts)"
                ));
                return out;
            }
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
            AgentKind::Codex => codex::locate(&target, self.now, &mut out.steps),
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

/// Modification time, seconds since the epoch.
pub fn mtime_secs(path: &Path) -> Option<u64> {
    let modified = std::fs::metadata(path).ok()?.modified().ok()?;
    Some(
        modified
            .duration_since(std::time::UNIX_EPOCH)
            .ok()?
            .as_secs(),
    )
}

/// The first `max_lines` complete JSON lines of a file (at most 256 KiB are read); lines
/// that do not parse are skipped.
pub fn head_values(path: &Path, max_lines: usize) -> Vec<Value> {
    const LIMIT: u64 = 256 * 1024;
    let mut buf = Vec::new();
    let Ok(file) = std::fs::File::open(path) else {
        return Vec::new();
    };
    if file.take(LIMIT).read_to_end(&mut buf).is_err() {
        return Vec::new();
    }
    buf.split(|b| *b == b'\n')
        .take(max_lines)
        .filter_map(|line| serde_json::from_slice::<Value>(line).ok())
        .collect()
}

/// The string at `keys` inside `v`.
pub fn str_at<'a>(v: &'a Value, keys: &[&str]) -> Option<&'a str> {
    keys.iter().try_fold(v, |v, k| v.get(k))?.as_str()
}

/// Whether a transcript's `cwd` names one of `cwds` (trailing slashes ignored).
pub fn cwd_matches(cwd: &str, cwds: &[String]) -> bool {
    let norm = |s: &str| match s.trim_end_matches('/') {
        "" if s.starts_with('/') => "/".to_string(),
        t => t.to_string(),
    };
    let c = norm(cwd);
    !c.is_empty() && cwds.iter().any(|x| norm(x) == c)
}

#[cfg(test)]
mod tests;
