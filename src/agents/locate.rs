//! What the per-agent locators (`claude/locate.rs`, `codex/locate.rs`) share: the target they
//! look for, what they found and how, the sessionId → transcript cache, and small file
//! helpers (docs/design.md#resolving-a-pane). `resolve.rs` drives the locators; they never
//! reach back into it.

use std::collections::{HashMap, HashSet};
use std::io::Read;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use crate::agents::record::SessionRecord;
use crate::paths;
use crate::proctree::procfs;

/// How the transcript was found (docs/design.md#cli-contract).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Via {
    SessionRecord,
    OpenFile,
    Cwd,
    /// Several transcripts fit and the evidence cannot tell which is this pane's: none is
    /// shown rather than a neighbour's.
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

/// What [`agent_root`] says when the root came from the agent's own `HOME`.
pub const FROM_AGENT_HOME: &str = "agent's HOME";

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
        Some(home) => (Path::new(home).join(dot_dir), FROM_AGENT_HOME),
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
        let map = paths::read_trusted(&file)
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

    /// A copy for another thread of the same resolution: the same locations, never saved
    /// itself ([`TranscriptCache::absorb`] takes back what it learnt).
    pub fn fork(&self) -> TranscriptCache {
        TranscriptCache {
            file: None,
            map: self.map.clone(),
            dirty: false,
        }
    }

    /// Takes in the locations a [`TranscriptCache::fork`] learnt.
    pub fn absorb(&mut self, fork: TranscriptCache) {
        if !fork.dirty {
            return;
        }
        for (key, path) in fork.map {
            if self.map.get(&key) != Some(&path) {
                self.put(key, path);
            }
        }
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
