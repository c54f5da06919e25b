//! Which process is droid, and which session log is its own (docs/agents/droid.md).
//!
//! The npm package's `bin/droid` is a node shim that starts the native binary of its platform
//! package (`…/@factory/cli-linux-x64/bin/droid`); npm's postinstall hard-links the binary in
//! its place, so a user's install runs the binary at once. That process (comm `droid`) draws
//! the screen and starts one child, `droid exec --input-format stream-jsonrpc …` (comm `droid`
//! too), which runs the session. Sessions live in `<home>/.factory/sessions/<cwd>/<uuid>.jsonl`
//! (`<home>`: `FACTORY_HOME_OVERRIDE`, else `HOME`; `<cwd>`: its real path, `/` → `-`, with a
//! leading `-`), with `<uuid>.settings.json` beside it (the model, token totals).
//!
//! Nothing ties the file to the process: neither holds it open, no lock, no pid. But droid
//! begins a session's log as soon as it starts (once the folder is trusted), so the order of
//! starts decides, as for pi: the droid processes in a folder are paired with the logs begun
//! there since they started ([`crate::agents::start_order`]); a pane reads
//! `ambiguous` rather than a neighbour's log.

use std::path::{Path, PathBuf};

use crate::agents::locate::{head_values, mtime_secs, Found, Target};
use crate::agents::start_order::{self, in_folder, owner_of, Log, Owned, Words, Writer};
use crate::proctree::{procfs, ProcTable};

/// The process name of the screen process and of its session child.
pub const COMM: &str = "droid";

/// The variable that moves droid's home (the folder `.factory` is in).
pub const HOME_VAR: &str = "FACTORY_HOME_OVERRIDE";

/// droid's folder under its home.
pub const DOT_DIR: &str = ".factory";

/// droid's folder of a process: `<FACTORY_HOME_OVERRIDE or HOME>/.factory`.
pub fn root(pid: u32, fallback_home: &Path) -> (PathBuf, &'static str) {
    let env = procfs::environ(pid);
    match env
        .as_ref()
        .and_then(|e| e.get(HOME_VAR))
        .filter(|d| !d.is_empty())
    {
        Some(home) => (Path::new(home).join(DOT_DIR), HOME_VAR),
        None => crate::agents::locate::agent_root(pid, HOME_VAR, DOT_DIR, fallback_home),
    }
}

/// `/tmp/a b/c/` → `-tmp-a b-c` (0.225.2: trailing and leading `/` dropped, each run of `/`
/// one `-`, a `-` in front).
pub fn encode_cwd(cwd: &str) -> String {
    let trimmed = cwd.trim_end_matches(['/', '\\']).trim_start_matches('/');
    let mut out = String::from("-");
    let mut slash = false;
    for c in trimmed.chars() {
        if c == '/' {
            if !slash {
                out.push('-');
            }
            slash = true;
        } else {
            out.push(c);
            slash = false;
        }
    }
    out
}

/// The folder droid keeps the sessions started in `cwd` in.
pub fn cwd_sessions(root: &Path, cwd: &str) -> PathBuf {
    root.join("sessions").join(encode_cwd(cwd))
}

/// Whether `path` is named like a droid session log: `<uuid>.jsonl` in `sessions/<folder>/`.
pub fn is_session_file(path: &Path) -> bool {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
        return false;
    };
    let in_sessions = path
        .parent()
        .and_then(Path::parent)
        .and_then(Path::file_name)
        .is_some_and(|n| n == "sessions");
    in_sessions && name.strip_suffix(".jsonl").is_some_and(is_uuid)
}

/// Whether `s` is a uuid in its usual form (8-4-4-4-12 hex digits).
pub fn is_uuid(s: &str) -> bool {
    s.len() == 36
        && s.char_indices().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => c == '-',
            _ => c.is_ascii_hexdigit(),
        })
}

/// The session id of a log (its file name).
pub fn session_id(path: &Path) -> Option<String> {
    let stem = path.file_name()?.to_str()?.strip_suffix(".jsonl")?;
    is_uuid(stem).then(|| stem.to_string())
}

/// Whether `p` is a droid screen process: named `droid`, not the session child a droid starts.
pub fn is_screen_process(p: &crate::proctree::ProcInfo, table: &ProcTable) -> bool {
    p.name == COMM
        && !p
            .ppid
            .and_then(|pp| table.get(pp))
            .is_some_and(|parent| parent.name == COMM)
}

/// Finds the session log of the droid process `t`.
pub fn locate(t: &Target, table: &ProcTable, steps: &mut Vec<String>) -> Found {
    let Some(cwd) = t.cwds.first() else {
        return Found::default();
    };
    let dir = cwd_sessions(t.root, cwd);
    let mut writers = vec![writer(t.pid, t.start)];
    for p in table
        .iter()
        .filter(|p| p.pid != t.pid && is_screen_process(p, table))
    {
        if in_folder(p.pid, std::slice::from_ref(cwd)) {
            writers.push(writer(p.pid, p.start));
        }
    }
    let logs = logs_in(&dir, &writers, t);
    let owned = match owner_of(t.pid, &writers, &logs) {
        // Alone in the folder with several logs begun since it started (`/new`): the newest.
        Owned::Ambiguous(_) if writers.len() == 1 => logs
            .iter()
            .filter(|l| l.begun_ms >= writers[0].since_ms)
            .max_by_key(|l| (l.written_ms, l.begun_ms))
            .map_or(Owned::None, |l| Owned::Log(l.path.clone())),
        owned => owned,
    };
    found(owned, writers.len() - 1, &dir, steps)
}

/// How much earlier than its measured start a process may have begun a log (the start is
/// read to ~10 ms).
const START_SLACK_MS: i64 = 100;

/// The droid process `pid` started at `start` (whole seconds) as a writer, from its start to
/// the hundredth of a second where `/proc` tells it: two droids started a second apart, the
/// second after the first began its log, must not both be able to own that log.
fn writer(pid: u32, start: u64) -> Writer {
    match procfs::start_ms(pid).and_then(|ms| i64::try_from(ms).ok()) {
        Some(ms) => Writer {
            pid,
            since_ms: ms - START_SLACK_MS,
        },
        None => Writer::of(pid, start),
    }
}

/// The logs in `dir` begun or written since the first of `writers` started, of no session
/// another process claims, whose header names one of the target's folders.
fn logs_in(dir: &Path, writers: &[Writer], t: &Target) -> Vec<Log> {
    let keep = |p: &Path| session_id(p).is_some_and(|id| !t.claimed.contains(&id));
    let times = |path: &Path| {
        let written_ms = mtime_secs(path)
            .and_then(|s| i64::try_from(s).ok())
            .map(|s| s.saturating_mul(1000))?;
        Some((begun_ms(path).unwrap_or(written_ms), written_ms))
    };
    start_order::logs_in(dir, writers, t.cwds, keep, times, header_cwd)
}

/// When a log was begun (its file's birth time), Unix milliseconds; the name (a random uuid)
/// and the header do not say.
fn begun_ms(path: &Path) -> Option<i64> {
    let born = std::fs::metadata(path).ok()?.created().ok()?;
    let ms = born.duration_since(std::time::UNIX_EPOCH).ok()?.as_millis();
    i64::try_from(ms).ok()
}

/// The folder the header of a log names.
fn header_cwd(path: &Path) -> Option<String> {
    head_values(path, 1)
        .first()
        .and_then(|v| v.get("cwd")?.as_str().map(str::to_string))
}

/// How droid's steps name what the order of starts weighed.
const WORDS: Words = Words {
    processes: "droid process(es) here",
    fresh: "droid begins its log once the folder is trusted",
};

/// What the order of starts found for the pane, with `others` other droid processes here.
fn found(owned: Owned, others: usize, dir: &Path, steps: &mut Vec<String>) -> Found {
    start_order::found(owned, others, dir, &WORDS, session_id, steps)
}
