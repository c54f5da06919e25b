//! Where a claude process keeps its transcript (docs/design.md#resolving-a-pane).
//!
//! 1. `<root>/sessions/<PID>.json` (the live registry) → `sessionId`, guarded against PID
//!    reuse by the record's start times;
//! 2. `sessionId` → `<root>/projects/<encoded cwd>/<sessionId>.jsonl`, else any project
//!    folder (cached: scanning every folder is the expensive step); no such file yet means
//!    no conversation yet, and the search ends there (a folder's other transcripts belong to
//!    its other sessions).
//!
//! Only without a usable record:
//! 3. a `.jsonl` under `<root>/projects` the process holds open;
//! 4. the newest transcript in the encoded-cwd folder written since the process started whose
//!    `cwd` field matches and that no other live session owns.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use crate::agents::locate::{
    cwd_matches, head_values, mtime_secs, str_at, Found, Target, TranscriptCache, Via,
};
use crate::agents::record::SessionRecord;
use crate::proctree::procfs;

/// Claude Code's project folder name for a cwd: every character that is not an ASCII letter
/// or digit becomes `-` (per UTF-16 unit, as JavaScript's replace does).
pub fn encode_cwd(cwd: &str) -> String {
    let mut out = String::with_capacity(cwd.len());
    for c in cwd.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c);
        } else {
            for _ in 0..c.len_utf16() {
                out.push('-');
            }
        }
    }
    out
}

/// The config root of a claude process: its `CLAUDE_CONFIG_DIR`, else `<its HOME>/.claude`,
/// else `fallback_home/.claude`. The second value says which.
pub fn config_root(pid: u32, fallback_home: &Path) -> (PathBuf, &'static str) {
    crate::agents::locate::agent_root(pid, "CLAUDE_CONFIG_DIR", ".claude", fallback_home)
}

/// Reads the session record of `pid` under `root` (any problem → `None`, explained in `steps`).
pub fn read_record(t: &Target, steps: &mut Vec<String>) -> Option<SessionRecord> {
    let path = t.root.join("sessions").join(format!("{}.json", t.pid));
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            steps.push(format!("session record: none at {}", path.display()));
            return None;
        }
        Err(e) => {
            steps.push(format!(
                "session record: cannot read {}: {e}",
                path.display()
            ));
            return None;
        }
    };
    let Some(record) = SessionRecord::parse(&bytes) else {
        steps.push(format!(
            "session record: {} is not a JSON object (ignored)",
            path.display()
        ));
        return None;
    };
    if let Err(why) = record.check_owner(t.pid, t.start, procfs::start_ticks(t.pid)) {
        steps.push(format!(
            "session record: {} belongs to an earlier process with this PID ({why}); ignored",
            path.display()
        ));
        return None;
    }
    match &record.session_id {
        Some(id) => steps.push(format!(
            "session record: {} → sessionId {id}",
            path.display()
        )),
        None => steps.push(format!(
            "session record: {} has no usable sessionId",
            path.display()
        )),
    }
    Some(record)
}

/// Per config root: (pid, session id) of every live session record, read once per resolution
/// and shared by its Claude Code panes.
#[derive(Debug, Default)]
pub struct Claims(pub std::collections::HashMap<PathBuf, Vec<(u32, String)>>);

/// The session ids named by the live records of other processes under `root` (their
/// transcripts are never ours). `alive` tells whether a PID is running.
pub fn claimed_sessions(root: &Path, alive: &dyn Fn(u32) -> bool) -> Vec<(u32, String)> {
    let Ok(dir) = std::fs::read_dir(root.join("sessions")) else {
        return Vec::new();
    };
    dir.filter_map(|e| {
        let path = e.ok()?.path();
        let pid: u32 = path.file_stem()?.to_str()?.parse().ok()?;
        if path.extension()? != "json" || !alive(pid) {
            return None;
        }
        let rec = SessionRecord::parse(&std::fs::read(&path).ok()?)?;
        Some((pid, rec.session_id?))
    })
    .collect()
}

/// Finds the transcript of the claude process `t`.
pub fn locate(t: &Target, cache: &mut TranscriptCache, steps: &mut Vec<String>) -> Found {
    let record = read_record(t, steps);
    let mut cwds: Vec<String> = t.cwds.to_vec();
    if let Some(c) = record.as_ref().and_then(|r| r.cwd.clone()) {
        if !cwds.contains(&c) {
            cwds.insert(0, c);
        }
    }
    let session_id = record.as_ref().and_then(|r| r.session_id.clone());
    let mut found = Found {
        record,
        ..Found::default()
    };
    if let Some(id) = &session_id {
        found.session_id = Some(id.clone());
        match find_by_session_id(t.root, id, &cwds, cache) {
            Some(path) => {
                found.transcript = Some(path);
                found.via = Via::SessionRecord;
            }
            // Claude Code writes the record at start (and moves it to the new id at once on
            // `/clear`) but the transcript only at the first prompt: this session has no
            // conversation yet. Any transcript found by folder would be a neighbour's.
            None => steps.push(format!(
                "transcript: none yet for session {id} (no {}/projects/*/{id}.jsonl: nothing asked since it started)",
                t.root.display()
            )),
        }
        return found;
    }
    if let Some(path) = held_open(t) {
        found.session_id = session_id_of(&path);
        found.transcript = Some(path);
        found.via = Via::OpenFile;
        return found;
    }
    steps.push("open files: no transcript held open".to_string());
    // The transcript must begin after the process: to the millisecond where /proc tells
    // (a neighbour can answer and `/clear` within the second before this one starts).
    let began_after = match procfs::start_ms(t.pid) {
        Some(ms) => i64::try_from(ms).unwrap_or(i64::MAX) - PRECISE_SLACK_MS,
        None => i64::try_from(t.start.saturating_mul(1000)).unwrap_or(i64::MAX) - COARSE_SLACK_MS,
    };
    match newest_for_cwd(t.root, &cwds, t.start, began_after, t.claimed) {
        Some(path) => {
            found.session_id = session_id_of(&path);
            found.transcript = Some(path);
            found.via = Via::Cwd;
        }
        None => steps.push(format!(
            "cwd: no transcript in {}/projects/{} written since the agent started",
            t.root.display(),
            cwds.first().map(|c| encode_cwd(c)).unwrap_or_default()
        )),
    }
    found
}

fn session_id_of(path: &Path) -> Option<String> {
    path.file_stem()
        .and_then(|s| s.to_str())
        .map(str::to_string)
}

/// `projects/<encoded cwd>/<id>.jsonl`, else the cached location, else a scan of every
/// project folder (whose result is cached).
fn find_by_session_id(
    root: &Path,
    id: &str,
    cwds: &[String],
    cache: &mut TranscriptCache,
) -> Option<PathBuf> {
    let projects = root.join("projects");
    let file = format!("{id}.jsonl");
    for cwd in cwds {
        let p = projects.join(encode_cwd(cwd)).join(&file);
        if p.is_file() {
            return Some(p);
        }
    }
    let key = format!("claude:{}:{id}", root.display());
    if let Some(p) = cache.get(&key) {
        return Some(p);
    }
    let dir = std::fs::read_dir(&projects).ok()?;
    let path = dir
        .filter_map(|e| Some(e.ok()?.path().join(&file)))
        .find(|p| p.is_file())?;
    cache.put(key, path.clone());
    Some(path)
}

fn is_main_transcript(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "jsonl")
        && !path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("agent-"))
        && !path.components().any(|c| c.as_os_str() == "subagents")
}

/// A main transcript under `<root>/projects` that the process holds open.
fn held_open(t: &Target) -> Option<PathBuf> {
    let projects = t.root.join("projects");
    procfs::open_files(t.pid)
        .into_iter()
        .filter(|p| p.starts_with(&projects) && is_main_transcript(p))
        .max_by_key(|p| mtime_secs(p).unwrap_or(0))
}

/// Slack on a process start read to ~10 ms from /proc (clock ticks, uptime).
const PRECISE_SLACK_MS: i64 = 250;
/// Slack on a start known only to the second.
const COARSE_SLACK_MS: i64 = 2_000;

/// The newest main transcript in the encoded folders of `cwds`, modified at or after `since`
/// (epoch seconds), whose first timestamp is at or after `began_after` (epoch ms), not named
/// in `skip`, whose `cwd` field is one of `cwds`.
fn newest_for_cwd(
    root: &Path,
    cwds: &[String],
    since: u64,
    began_after: i64,
    skip: &HashSet<String>,
) -> Option<PathBuf> {
    let mut candidates: Vec<(u64, PathBuf)> = Vec::new();
    let mut folders: Vec<PathBuf> = cwds
        .iter()
        .map(|c| root.join("projects").join(encode_cwd(c)))
        .collect();
    folders.dedup();
    for folder in folders {
        let Ok(dir) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in dir.flatten() {
            let path = entry.path();
            if !is_main_transcript(&path) {
                continue;
            }
            if session_id_of(&path).is_some_and(|id| skip.contains(&id)) {
                continue;
            }
            let Some(m) = entry
                .metadata()
                .ok()
                .and_then(|m| m.modified().ok())
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map(|d| d.as_secs())
            else {
                continue;
            };
            if m + 1 >= since {
                candidates.push((m, path));
            }
        }
    }
    candidates.sort_by(|a, b| b.cmp(a));
    candidates.into_iter().map(|(_, p)| p).find(|p| {
        let head = head_values(p, 50);
        // A transcript that began before the process started is another session's, however
        // recently it was written to (a neighbour's old session after its `/clear`).
        let began = head
            .iter()
            .find_map(|v| str_at(v, &["timestamp"]))
            .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
            .map(|t| t.timestamp_millis());
        began.map_or(true, |b| b >= began_after)
            && head
                .iter()
                .find_map(|v| str_at(v, &["cwd"]))
                .is_some_and(|c| cwd_matches(c, cwds))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoding_replaces_every_non_alphanumeric_character() {
        assert_eq!(encode_cwd("/home/u/my.repo_x"), "-home-u-my-repo-x");
        assert_eq!(encode_cwd("/tmp/코드"), "-tmp---");
        assert_eq!(encode_cwd("/a/😀"), "-a---");
    }

    #[test]
    fn a_transcript_that_began_before_the_process_is_a_neighbours() {
        let root = tempfile::tempdir().expect("tempdir");
        let cwd = "/w/proj".to_string();
        let cwds = [cwd.clone()];
        let folder = root.path().join("projects").join(encode_cwd(&cwd));
        std::fs::create_dir_all(&folder).expect("mkdir");
        // A neighbour's session: asked at .000, answered, cleared; this process started 1.5 s
        // after its first prompt, within the second its transcript was last written.
        let line = |ts: &str| format!(r#"{{"type":"user","cwd":"{cwd}","timestamp":"{ts}"}}"#);
        std::fs::write(
            folder.join("old.jsonl"),
            line("2026-12-02T02:07:21.000Z") + "\n",
        )
        .expect("write");
        let began = |ts: &str| {
            chrono::DateTime::parse_from_rfc3339(ts)
                .expect("time")
                .timestamp_millis()
        };
        let since = 0; // its modification time is no help: it was written just now
        let none = HashSet::new();
        let started = began("2026-12-02T02:07:22.500Z") - PRECISE_SLACK_MS;
        assert_eq!(
            newest_for_cwd(root.path(), &cwds, since, started, &none),
            None
        );
        // Its own transcript, begun at its first prompt after it started, is found.
        std::fs::write(
            folder.join("new.jsonl"),
            line("2026-12-02T02:07:30.000Z") + "\n",
        )
        .expect("write");
        assert_eq!(
            newest_for_cwd(root.path(), &cwds, since, started, &none),
            Some(folder.join("new.jsonl"))
        );
        // Known only to the second, a start 1.5 s after the old prompt cannot exclude it.
        std::fs::remove_file(folder.join("new.jsonl")).expect("rm");
        let coarse = began("2026-12-02T02:07:22.000Z") - COARSE_SLACK_MS;
        assert_eq!(
            newest_for_cwd(root.path(), &cwds, since, coarse, &none),
            Some(folder.join("old.jsonl"))
        );
    }

    #[test]
    fn subagent_transcripts_are_never_main() {
        assert!(is_main_transcript(Path::new("/r/projects/-w/abc.jsonl")));
        assert!(!is_main_transcript(Path::new(
            "/r/projects/-w/abc/subagents/agent-a1.jsonl"
        )));
        assert!(!is_main_transcript(Path::new(
            "/r/projects/-w/agent-a1.jsonl"
        )));
        assert!(!is_main_transcript(Path::new("/r/projects/-w/abc.json")));
    }
}
