//! Where a pi process's session log is (docs/agents/pi.md).
//!
//! pi 0.73.1 writes `<sessions>/<ISO time, ':' and '.' → '-'>_<uuidv7>.jsonl`, where
//! `<sessions>` is `--session-dir`, else `PI_CODING_AGENT_SESSION_DIR`, else the `sessionDir`
//! setting (all flat), else `<agent dir>/sessions/--<cwd without its leading '/', every '/',
//! '\' and ':' → '-'>--/`; the agent dir is `PI_CODING_AGENT_DIR`, else `~/.pi/agent`. The
//! file is written lazily: nothing exists until the first assistant message ends.
//!
//! Nothing ties the file to the process: pi holds it open only while appending, takes no
//! lock, and sets `process.title = "pi"`, which erases its arguments (`-c`, `--session`).
//! So the link is agentpane's own extension ([`super::extension`], installed on request),
//! which records `{pid, sessionFile}` at every session start. Without its record, a pane gets
//! a log only when it is surely its own: the one pi in its folder whose other pi processes
//! all have records, and exactly one log there begun since it started and claimed by none of
//! them. Anything else is `ambiguous`: a pane shows its own session or none, never a
//! neighbour's.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::agents::locate::{cwd_matches, head_values, Found, Target, Via};
use crate::proctree::{procfs, ProcTable};

/// The process name pi gives itself.
pub const COMM: &str = "pi";

/// The folder of agentpane's state dir the extension writes its records to.
pub const RECORDS: &str = "pi";

/// The agent dir of a pi process: its `PI_CODING_AGENT_DIR`, else `<its HOME>/.pi/agent`.
pub fn agent_dir(pid: u32, fallback_home: &Path) -> (PathBuf, &'static str) {
    crate::agents::locate::agent_root(pid, "PI_CODING_AGENT_DIR", ".pi/agent", fallback_home)
}

/// The folder pi keeps the sessions started in `cwd` in by default.
pub fn cwd_sessions(agent_dir: &Path, cwd: &str) -> PathBuf {
    agent_dir.join("sessions").join(encode_cwd(cwd))
}

/// `/tmp/a b/c` → `--tmp-a b-c--` (0.73.1 `getDefaultSessionDir`).
pub fn encode_cwd(cwd: &str) -> String {
    let trimmed = cwd.strip_prefix(['/', '\\']).unwrap_or(cwd);
    let safe: String = trimmed
        .chars()
        .map(|c| {
            if matches!(c, '/' | '\\' | ':') {
                '-'
            } else {
                c
            }
        })
        .collect();
    format!("--{safe}--")
}

/// When a session file was begun, Unix milliseconds, from its name.
pub fn created_ms(path: &Path) -> Option<i64> {
    let name = path.file_name()?.to_str()?;
    let (stamp, rest) = name.split_once('_')?;
    if !rest.ends_with(".jsonl") || stamp.len() != 24 || !stamp.is_ascii() {
        return None;
    }
    // 2026-12-02T12-36-41-595Z → 2026-12-02T12:36:41.595Z
    let b = stamp.as_bytes();
    let iso = format!(
        "{}:{}:{}.{}",
        &stamp[..13],
        &stamp[14..16],
        &stamp[17..19],
        &stamp[20..]
    );
    if b[13] != b'-' || b[16] != b'-' || b[19] != b'-' {
        return None;
    }
    chrono::DateTime::parse_from_rfc3339(&iso)
        .ok()
        .map(|t| t.timestamp_millis())
}

/// Whether `path` is named like a pi session file.
pub fn is_session_file(path: &Path) -> bool {
    created_ms(path).is_some()
}

/// What agentpane's extension records for a pi process (unknown fields ignored).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Record {
    pub pid: u32,
    /// `null` for a session kept in memory only (`--no-session`).
    #[serde(default)]
    pub session_file: Option<String>,
    #[serde(default)]
    pub cwd: Option<String>,
    #[serde(default)]
    pub reason: Option<String>,
    /// When it was written (RFC 3339).
    pub time: String,
}

impl Record {
    /// Whether this record was written by the process `pid` that started at `start` (seconds
    /// since the epoch): an earlier process with the same pid wrote it before that.
    pub fn is_of(&self, pid: u32, start: u64) -> bool {
        let Ok(time) = chrono::DateTime::parse_from_rfc3339(&self.time) else {
            return false;
        };
        let start_ms = i64::try_from(start)
            .unwrap_or(i64::MAX)
            .saturating_mul(1000);
        self.pid == pid && time.timestamp_millis() >= start_ms - 1000
    }
}

/// The state folders a pi process's extension may have written to: the one its own
/// environment names, then the reader's own.
fn record_dirs(pid: u32) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    if let Some(dir) = procfs::environ(pid).and_then(|env| crate::paths::state_dir_in(&env)) {
        dirs.push(dir.join(RECORDS));
    }
    let own = crate::paths::state_dir().join(RECORDS);
    if !dirs.contains(&own) {
        dirs.push(own);
    }
    dirs
}

/// The extension's record of process `pid` started at `start`, if it wrote one.
pub fn record_of(pid: u32, start: u64) -> Option<(PathBuf, Record)> {
    record_dirs(pid).into_iter().find_map(|dir| {
        let path = dir.join(format!("{pid}.json"));
        let record: Record =
            serde_json::from_slice(&crate::paths::read_trusted(&path).ok()?).ok()?;
        record.is_of(pid, start).then_some((path, record))
    })
}

/// The folder a pi process keeps the sessions of `cwd` in: its `PI_CODING_AGENT_SESSION_DIR`,
/// else the `sessionDir` of its settings, else the default per-folder one. A `--session-dir`
/// on its command line is gone (see the module's notes).
pub fn sessions_dir(pid: u32, agent_dir: &Path, cwd: &str) -> PathBuf {
    let env = procfs::environ(pid).unwrap_or_default();
    let home = env.get("HOME").map(PathBuf::from);
    let expand = |d: &str| match (d.strip_prefix("~/"), &home) {
        (Some(rest), Some(h)) => h.join(rest),
        _ => PathBuf::from(d),
    };
    if let Some(d) = env
        .get("PI_CODING_AGENT_SESSION_DIR")
        .filter(|d| !d.is_empty())
    {
        return expand(d);
    }
    let setting = std::fs::read(agent_dir.join("settings.json"))
        .ok()
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
        .and_then(|v| v.get("sessionDir")?.as_str().map(str::to_string))
        .filter(|d| !d.is_empty());
    match setting {
        Some(d) => expand(&d),
        None => cwd_sessions(agent_dir, cwd),
    }
}

/// Finds the session log of the pi process `t`.
pub fn locate(t: &Target, table: &ProcTable, steps: &mut Vec<String>) -> Found {
    if let Some((path, record)) = record_of(t.pid, t.start) {
        return from_record(&path, &record, steps);
    }
    steps.push(format!(
        "session record: none from agentpane's pi extension for pid {} (`agentpane hooks \
         install --agent pi` adds it)",
        t.pid
    ));
    let Some(cwd) = t.cwds.first() else {
        return Found::default();
    };
    let dir = sessions_dir(t.pid, t.root, cwd);
    // The other pi processes in this folder, and the logs their records claim.
    let mut unknown = Vec::new();
    let mut claimed = Vec::new();
    for p in table.iter().filter(|p| p.name == COMM && p.pid != t.pid) {
        let same_folder = procfs::cwd(p.pid)
            .is_some_and(|c| cwd_matches(&c.to_string_lossy(), std::slice::from_ref(cwd)));
        if !same_folder {
            continue;
        }
        match record_of(p.pid, p.start).and_then(|(_, r)| r.session_file) {
            Some(file) => claimed.push(PathBuf::from(file)),
            None => unknown.push(p.pid),
        }
    }
    let since = i64::try_from(t.start)
        .unwrap_or(i64::MAX)
        .saturating_mul(1000)
        - 1000;
    let mine = begun_since(&dir, since, &claimed, t.cwds);
    pick(mine, unknown.len(), &dir, steps)
}

/// The logs in `dir` begun at or after `since_ms` (by their name), claimed by no other
/// process's record, whose header names one of `cwds` (or none: a log not yet readable).
pub fn begun_since(
    dir: &Path,
    since_ms: i64,
    claimed: &[PathBuf],
    cwds: &[String],
) -> Vec<PathBuf> {
    let mut mine: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| d.flatten().map(|e| e.path()).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .filter(|p| created_ms(p).is_some_and(|ms| ms >= since_ms))
        .filter(|p| !claimed.contains(p))
        .filter(|p| header_cwd(p).map_or(true, |c| cwd_matches(&c, cwds)))
        .collect();
    mine.sort();
    mine
}

/// The pane's log among the logs begun in `dir` since its process started that no record
/// claims (`mine`), with `unknown` other pi processes in the folder that have no record: only
/// a log that can be no one else's.
pub fn pick(mut mine: Vec<PathBuf>, unknown: usize, dir: &Path, steps: &mut Vec<String>) -> Found {
    match (mine.len(), unknown) {
        (0, _) => {
            steps.push(format!(
                "transcript: none begun in {} since it started (a fresh pi writes its log when \
                 the first answer ends)",
                dir.display()
            ));
            Found::default()
        }
        (1, 0) => {
            steps.push(format!(
                "transcript: the one log begun in {} since it started, no other pi here",
                dir.display()
            ));
            Found {
                session_id: session_id(&mine[0]),
                transcript: mine.pop(),
                via: Via::Cwd,
                record: None,
            }
        }
        (n, _) => {
            steps.push(format!(
                "transcript: {n} logs begun in {} since it started, {unknown} other pi \
                 process(es) here without a record: cannot tell which is this pane's",
                dir.display()
            ));
            Found {
                via: Via::Ambiguous,
                ..Found::default()
            }
        }
    }
}

fn from_record(path: &Path, record: &Record, steps: &mut Vec<String>) -> Found {
    let Some(file) = record.session_file.as_deref().map(PathBuf::from) else {
        steps.push(format!(
            "session record: {} names no session file (a session kept in memory)",
            path.display()
        ));
        return Found::default();
    };
    steps.push(format!(
        "session record: {} → {} ({})",
        path.display(),
        file.display(),
        record.reason.as_deref().unwrap_or("start")
    ));
    let mut found = Found {
        session_id: session_id(&file),
        ..Found::default()
    };
    if file.is_file() {
        found.transcript = Some(file);
        found.via = Via::SessionRecord;
    } else {
        steps.push(format!(
            "transcript: none yet at {} (pi writes it when the first answer ends)",
            file.display()
        ));
    }
    found
}

/// The session id in a log's name (`…_<uuidv7>.jsonl`).
fn session_id(path: &Path) -> Option<String> {
    let name = path.file_stem()?.to_str()?;
    Some(name.split_once('_')?.1.to_string())
}

/// The `cwd` of a log's header line.
fn header_cwd(path: &Path) -> Option<String> {
    let head = head_values(path, 1);
    let v = head.first()?;
    (v.get("type")?.as_str()? == "session").then(|| v.get("cwd")?.as_str().map(str::to_string))?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cwd_encoding_matches_the_folder_the_client_made() {
        assert_eq!(
            encode_cwd("/tmp/pi-rec/work/proj"),
            "--tmp-pi-rec-work-proj--"
        );
        assert_eq!(encode_cwd("/a b/c:d"), "--a b-c-d--");
    }

    #[test]
    fn a_log_name_says_when_it_was_begun() {
        let p = Path::new("/x/2026-12-02T12-36-41-595Z_01a236c1-d1fa-72e3-b4ed-eff37164fc8f.jsonl");
        let want = chrono::DateTime::parse_from_rfc3339("2026-12-02T12:36:41.595Z")
            .unwrap()
            .timestamp_millis();
        assert_eq!(created_ms(p), Some(want));
        assert_eq!(
            session_id(p).as_deref(),
            Some("01a236c1-d1fa-72e3-b4ed-eff37164fc8f")
        );
        assert_eq!(created_ms(Path::new("/x/notes.jsonl")), None);
        assert_eq!(
            created_ms(Path::new("/x/2026-12-02T12:36:41_a.jsonl")),
            None
        );
    }

    #[test]
    fn without_a_record_only_a_log_no_one_else_can_own_is_taken() {
        let dir = tempfile::tempdir().unwrap();
        let name = |t: &str, id: &str| dir.path().join(format!("2026-12-02T{t}Z_{id}.jsonl"));
        let header =
            |cwd: &str| format!("{{\"type\":\"session\",\"version\":3,\"cwd\":\"{cwd}\"}}\n");
        let old = name("12-00-00-000", "old");
        let mine = name("12-10-02-000", "mine");
        let theirs = name("12-10-03-000", "theirs");
        let elsewhere = name("12-10-04-000", "elsewhere");
        for (p, cwd) in [
            (&old, "/w"),
            (&mine, "/w"),
            (&theirs, "/w"),
            (&elsewhere, "/x"),
        ] {
            std::fs::write(p, header(cwd)).unwrap();
        }
        let since = chrono::DateTime::parse_from_rfc3339("2026-12-02T12:10:00Z")
            .unwrap()
            .timestamp_millis();
        let cwds = vec!["/w".to_string()];
        // A neighbour's record claims its log; an older log and another folder's are out.
        let found = begun_since(dir.path(), since, std::slice::from_ref(&theirs), &cwds);
        assert_eq!(found, vec![mine.clone()]);
        let mut steps = Vec::new();
        let f = pick(found.clone(), 0, dir.path(), &mut steps);
        assert_eq!((f.transcript.as_ref(), f.via), (Some(&mine), Via::Cwd));
        assert_eq!(f.session_id.as_deref(), Some("mine"));
        // Another pi here without a record: it may be its log.
        let f = pick(found, 1, dir.path(), &mut steps);
        assert_eq!((f.transcript, f.via), (None, Via::Ambiguous));
        // Two logs since it started (a `/new`, or a neighbour's): cannot tell.
        let both = begun_since(dir.path(), since, &[], &cwds);
        assert_eq!(both.len(), 2);
        let f = pick(both, 0, dir.path(), &mut steps);
        assert_eq!(f.via, Via::Ambiguous);
        let f = pick(Vec::new(), 3, dir.path(), &mut steps);
        assert_eq!((f.transcript, f.via), (None, Via::None));
    }

    #[test]
    fn a_record_from_an_earlier_process_with_the_pid_is_not_taken() {
        let r: Record = serde_json::from_str(
            r#"{"pid":7,"sessionFile":"/s/a.jsonl","cwd":"/w","reason":"startup","time":"2026-12-02T12:40:34.190Z"}"#,
        )
        .unwrap();
        let start = chrono::DateTime::parse_from_rfc3339("2026-12-02T12:40:32Z")
            .unwrap()
            .timestamp() as u64;
        assert!(r.is_of(7, start));
        assert!(!r.is_of(8, start), "another pid");
        assert!(
            !r.is_of(7, start + 60),
            "a process that started after it was written"
        );
    }
}
