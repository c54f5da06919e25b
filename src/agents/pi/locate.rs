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
//! which records `{pid, sessionFile}` at every session start. Without its record, the order
//! of starts decides: a log begun before a process started is not its own (unless it resumed
//! it), so the pi processes in a folder without a record are paired with the unclaimed logs
//! there by when each started and each log began ([`owner_of`]); a pane gets the log it has
//! in every such pairing, and reads `ambiguous` when another process could own it as well: a
//! pane shows its own session or none, never a neighbour's.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::agents::locate::{head_values, mtime_secs, Found, Target, Via};
use crate::agents::start_order::{self, in_folder, owner_of, Log, Owned, Words, Writer};
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
    if let Some(dir) = procfs::environ(pid)
        .and_then(|env| crate::paths::state_dir_in(|k| env.get(k).map(PathBuf::from)))
    {
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
    // The pi processes in this folder without a record (this one among them), and the logs
    // the records of the others claim.
    let mut writers = vec![Writer::of(t.pid, t.start)];
    let mut claimed = Vec::new();
    for p in table.iter().filter(|p| p.name == COMM && p.pid != t.pid) {
        if !in_folder(p.pid, std::slice::from_ref(cwd)) {
            continue;
        }
        match record_of(p.pid, p.start) {
            Some((_, r)) => claimed.extend(r.session_file.map(PathBuf::from)),
            None => writers.push(Writer::of(p.pid, p.start)),
        }
    }
    let logs = logs_in(&dir, &writers, &claimed, t.cwds);
    let owned = owner_of(t.pid, &writers, &logs);
    found(owned, writers.len() - 1, &dir, steps)
}

/// The logs in `dir` that one of `writers` may write (begun since the first of them started,
/// or written since), claimed by no record, whose header names one of `cwds` (or none: a
/// log not yet readable).
pub fn logs_in(dir: &Path, writers: &[Writer], claimed: &[PathBuf], cwds: &[String]) -> Vec<Log> {
    let times = |path: &Path| {
        let begun_ms = created_ms(path)?;
        let written_ms = mtime_secs(path)
            .and_then(|s| i64::try_from(s).ok())
            .map_or(begun_ms, |s| s.saturating_mul(1000));
        Some((begun_ms, written_ms))
    };
    start_order::logs_in(
        dir,
        writers,
        cwds,
        |p| !claimed.iter().any(|c| c == p),
        times,
        header_cwd,
    )
}

/// How pi's steps name what the order of starts weighed.
const WORDS: Words = Words {
    processes: "pi process(es) here without a record",
    fresh: "a fresh pi writes its log when the first answer ends",
};

/// What the order of starts found for the pane, with `others` other pi processes here
/// without a record.
fn found(owned: Owned, others: usize, dir: &Path, steps: &mut Vec<String>) -> Found {
    start_order::found(owned, others, dir, &WORDS, session_id, steps)
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
    fn without_a_record_the_logs_here_since_the_first_start_are_weighed() {
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
        let old_time = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000);
        std::fs::File::options()
            .write(true)
            .open(&old)
            .unwrap()
            .set_modified(old_time)
            .unwrap();
        let writers = [Writer {
            pid: 1,
            since_ms: ms("12:10:00"),
        }];
        let cwds = vec!["/w".to_string()];
        // A neighbour's record claims its log; an older log and another folder's are out.
        let logs = logs_in(dir.path(), &writers, std::slice::from_ref(&theirs), &cwds);
        let paths: Vec<_> = logs.iter().map(|l| &l.path).collect();
        assert_eq!(paths, vec![&mine]);
        let mut steps = Vec::new();
        let f = found(owner_of(1, &writers, &logs), 0, dir.path(), &mut steps);
        assert_eq!((f.transcript.as_ref(), f.via), (Some(&mine), Via::Cwd));
        assert_eq!(f.session_id.as_deref(), Some("mine"));
        // Two logs since it started and no one else here (a `/new`): cannot tell.
        let both = logs_in(dir.path(), &writers, &[], &cwds);
        assert_eq!(both.len(), 2);
        let f = found(owner_of(1, &writers, &both), 0, dir.path(), &mut steps);
        assert_eq!(f.via, Via::Ambiguous);
        let f = found(Owned::None, 3, dir.path(), &mut steps);
        assert_eq!((f.transcript, f.via), (None, Via::None));
    }

    /// Unix milliseconds of `hh:mm:ss` on the day of these tests.
    fn ms(hms: &str) -> i64 {
        chrono::DateTime::parse_from_rfc3339(&format!("2026-12-02T{hms}Z"))
            .unwrap()
            .timestamp_millis()
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
