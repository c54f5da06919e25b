//! Where a Cline CLI process's session is (docs/agents/cline.md).
//!
//! Cline 3.0.65 keeps each session in `<data>/sessions/<id>/`: the record `<id>.json` and the
//! conversation `<id>.messages.json`, both written at the first prompt (nothing before it).
//! `<data>` is `CLINE_DATA_DIR`, else `<CLINE_DIR>/data`, `CLINE_DIR` defaulting to `~/.cline`.
//! The record names the process that runs the session (`pid`): the native program, which the
//! npm package's `node` wrapper starts (`…/@cline/cli-linux-x64/bin/cline`, or `bin/.cline`
//! where the package's postinstall copied it), so a record naming the matched process or one
//! of its children is its own. A new task in the same process (`/clear`) starts a new
//! session under the same pid: the newest is the pane's. The hub daemon the client leaves
//! running (`cline --cline-hub-daemon`) writes no session of its own.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::agents::locate::{mtime_secs, Found, Target, Via};
use crate::proctree::{procfs, ProcTable};

/// The argument that makes the program the hub daemon.
pub const HUB_DAEMON: &str = "--cline-hub-daemon";

/// How much earlier than its process a session's record may have been written and still be
/// that process's (a resumed session's record is rewritten when it resumes).
const SLACK_SECS: u64 = 5;

/// The data dir of a Cline process, from its environment, and which setting said so.
pub fn data_dir(pid: u32, fallback_home: &Path) -> (PathBuf, &'static str) {
    if let Some(dir) = procfs::environ(pid)
        .and_then(|e| e.get("CLINE_DATA_DIR").map(str::to_string))
        .filter(|d| !d.is_empty())
    {
        return (PathBuf::from(dir), "CLINE_DATA_DIR");
    }
    let (root, why) = crate::agents::locate::agent_root(pid, "CLINE_DIR", ".cline", fallback_home);
    (root.join("data"), why)
}

/// The folder every session's folder is in.
pub fn sessions(data: &Path) -> PathBuf {
    data.join("sessions")
}

/// The record of the session whose conversation is `messages` (`<id>.messages.json` →
/// `<id>.json`).
pub fn record_of(messages: &Path) -> Option<PathBuf> {
    let name = messages.file_name()?.to_str()?;
    let id = name.strip_suffix(".messages.json")?;
    Some(messages.with_file_name(format!("{id}.json")))
}

/// Whether `path` is a session's conversation: `…/sessions/<id>/<id>.messages.json`.
pub fn is_messages(path: &Path) -> bool {
    let id = path
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.strip_suffix(".messages.json"));
    let dir = path.parent();
    let folder = dir.and_then(Path::file_name).and_then(|n| n.to_str());
    let sessions = dir
        .and_then(Path::parent)
        .and_then(Path::file_name)
        .and_then(|n| n.to_str());
    matches!((id, folder, sessions), (Some(i), Some(f), Some("sessions")) if !i.is_empty() && i == f)
}

/// Reads a JSON file of at most `max` bytes.
pub fn read_json(path: &Path, max: u64) -> anyhow::Result<Value> {
    use std::io::Read;
    let file = crate::read::open_regular(path)?;
    let len = file.metadata()?.len();
    anyhow::ensure!(
        len <= max,
        "{} is {len} bytes, more than the {max} read",
        path.display()
    );
    let mut buf = Vec::with_capacity(len as usize);
    file.take(max).read_to_end(&mut buf)?;
    Ok(serde_json::from_slice(&buf)?)
}

/// The session of the process `t` describes: the newest record under `<data>/sessions`
/// written since it started that names it (or a child of it) as its `pid`.
pub fn locate(t: &Target, table: &ProcTable, steps: &mut Vec<String>) -> Found {
    let dir = sessions(t.root);
    // The wrapper's native child, never the hub daemon the first client starts as its own
    // child (it runs later clients' sessions).
    let pids: Vec<u32> = std::iter::once(t.pid)
        .chain(
            table
                .children(t.pid)
                .filter(|c| !c.argv.iter().any(|a| a == HUB_DAEMON))
                .map(|c| c.pid),
        )
        .collect();
    let Ok(entries) = std::fs::read_dir(&dir) else {
        steps.push(format!("no session folder {} yet", dir.display()));
        return Found::default();
    };
    let started = started_by(t.root, &pids, t.start);
    let mut best: Option<(u64, super::parse::Record, PathBuf)> = None;
    for entry in entries.flatten() {
        let Some(id) = entry.file_name().to_str().map(str::to_string) else {
            continue;
        };
        let record = entry.path().join(format!("{id}.json"));
        let Some(written) = mtime_secs(&record) else {
            continue;
        };
        if written + SLACK_SECS < t.start {
            continue;
        }
        let Some(r) = read_json(&record, 1 << 20)
            .ok()
            .as_ref()
            .and_then(super::parse::record)
        else {
            continue;
        };
        let named = r.pid.is_some_and(|p| pids.contains(&p)) || started.contains(&id);
        if r.id != id || !named {
            continue;
        }
        let newer = !best
            .as_ref()
            .is_some_and(|(w, b, _)| (r.started_at, written) <= (b.started_at, *w));
        if newer {
            best = Some((written, r, entry.path().join(format!("{id}.messages.json"))));
        }
    }
    match best {
        Some((_, r, messages)) => {
            steps.push(format!(
                "session record {} names pid {}",
                r.id,
                r.pid.unwrap_or(0)
            ));
            Found {
                transcript: Some(messages),
                via: Via::SessionRecord,
                session_id: Some(r.id),
                record: None,
            }
        }
        None => {
            steps.push(format!(
                "no session record in {} names pid {} (none before the first prompt)",
                dir.display(),
                t.pid
            ));
            Found::default()
        }
    }
}

/// How much of the end of the shared log is read for the sessions a process started.
const LOG_TAIL: u64 = 8 * 1024 * 1024;

/// The sessions the shared log `<data>/logs/cline.log` says one of `pids` started since
/// `start` (seconds since the epoch): its `session.started` lines, read back from the end.
pub fn started_by(data: &Path, pids: &[u32], start: u64) -> Vec<String> {
    let Ok(file) = crate::read::open_regular(&data.join("logs").join("cline.log")) else {
        return Vec::new();
    };
    started_in(file, pids, start).unwrap_or_default()
}

/// [`started_by`] over any seekable source.
pub fn started_in<R: std::io::Read + std::io::Seek>(
    src: R,
    pids: &[u32],
    start: u64,
) -> std::io::Result<Vec<String>> {
    use crate::read::reverse::{Line, ReverseLines};
    let mut lines = ReverseLines::from_reader(src, crate::read::MAX_LINE)?;
    let mut out = Vec::new();
    let since = i64::try_from(start)
        .unwrap_or(i64::MAX)
        .saturating_sub(SLACK_SECS as i64);
    while let Some(line) = lines.next() {
        if lines.bytes_read() > LOG_TAIL {
            break;
        }
        let Line::Full(bytes) = line? else {
            continue;
        };
        let Ok(v) = serde_json::from_slice::<Value>(&bytes) else {
            continue;
        };
        let at = v["time"]
            .as_str()
            .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
            .map(|t| t.timestamp());
        if at.is_some_and(|at| at < since) {
            break;
        }
        let mine = v["pid"]
            .as_u64()
            .is_some_and(|p| pids.iter().any(|&q| u64::from(q) == p));
        if mine && v["event"] == "session.started" {
            if let Some(id) = v["properties"]["sessionId"].as_str() {
                out.push(id.to_string());
            }
        }
    }
    Ok(out)
}
