//! Which log is a process's, when nothing but the order of starts tells: an agent that ties
//! no log to its process (no pid in it, no lock, not held open) but begins one in the
//! process's folder soon after it starts. The processes of the agent in a folder are paired
//! with the logs begun there since they started; a pane reads `ambiguous` rather than a
//! neighbour's log. Used by pi (for a process without agentpane's session record) and droid;
//! what differs between them (where the logs are, when one was begun) stays in their folders.

use std::path::{Path, PathBuf};

use super::locate::{cwd_matches, Found, Via};
use crate::proctree::procfs;

/// A process of the agent in the pane's folder that may write a log there: its pid, and when
/// it started (Unix milliseconds; from whole seconds, a second early).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Writer {
    pub pid: u32,
    pub since_ms: i64,
}

impl Writer {
    /// The writer `pid` started at `start` (seconds since the epoch).
    pub fn of(pid: u32, start: u64) -> Writer {
        let ms = i64::try_from(start)
            .unwrap_or(i64::MAX)
            .saturating_mul(1000);
        Writer {
            pid,
            since_ms: ms.saturating_sub(1000),
        }
    }
}

/// A log in the folder that no record claims: when it was begun (by its name) and last
/// written (Unix milliseconds).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Log {
    pub path: PathBuf,
    pub begun_ms: i64,
    pub written_ms: i64,
}

/// Which log a process writes, as far as the order of starts tells.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Owned {
    /// No log it can have written (yet).
    None,
    Log(PathBuf),
    /// Another process may have written each log it may have (`n` of them).
    Ambiguous(usize),
}

/// Whether `w` may write `log`: a log begun before a process started is not its own, unless
/// it resumed it (`pi -c`): written surely after it started (not in the second around its
/// start, when the last pi may have ended), and begun before any of `writers` started (so
/// its first writer is gone). Neither pi nor droid marks a resumed log any other way.
fn may_write(w: &Writer, log: &Log, writers: &[Writer]) -> bool {
    log.begun_ms >= w.since_ms
        || (log.written_ms >= w.since_ms + RESUME_MARGIN_MS
            && writers.iter().all(|o| log.begun_ms < o.since_ms))
}

/// How long after a process's start second (counted from [`Writer::since_ms`]) a write to an
/// older log shows the process resumed it.
const RESUME_MARGIN_MS: i64 = 3000;

/// The log of the process `pid` among `writers` (each writes one log, each log has one
/// writer): the log it has in every largest pairing of writers with logs they may write.
/// pi A's log begun after A started, before pi B started, is A's, and B's is one begun after
/// B started; a log begun after both started is either's, so `Ambiguous`, unless each other
/// process has its own.
pub fn owner_of(pid: u32, writers: &[Writer], logs: &[Log]) -> Owned {
    let Some(me) = writers.iter().position(|w| w.pid == pid) else {
        return Owned::None;
    };
    let edges: Vec<Vec<usize>> = writers
        .iter()
        .map(|w| {
            (0..logs.len())
                .filter(|&l| may_write(w, &logs[l], writers))
                .collect()
        })
        .collect();
    if edges[me].is_empty() {
        return Owned::None;
    }
    let full = largest(&edges, logs.len(), None, None);
    // Another pairing as large that leaves this process without a log: every log it may
    // write may be someone else's.
    if largest(&edges, logs.len(), Some(me), None) == full {
        return Owned::Ambiguous(edges[me].len());
    }
    let fits: Vec<usize> = edges[me]
        .iter()
        .copied()
        .filter(|&l| 1 + largest(&edges, logs.len(), Some(me), Some(l)) == full)
        .collect();
    match fits[..] {
        [l] => Owned::Log(logs[l].path.clone()),
        _ => Owned::Ambiguous(fits.len()),
    }
}

/// The size of the largest pairing of writers with logs (`edges[w]`: the logs `w` may write),
/// leaving out writer `skip_w` and log `skip_l` (augmenting paths; a handful of each).
fn largest(
    edges: &[Vec<usize>],
    logs: usize,
    skip_w: Option<usize>,
    skip_l: Option<usize>,
) -> usize {
    let mut writer_of = vec![None; logs];
    (0..edges.len())
        .filter(|&w| Some(w) != skip_w)
        .filter(|&w| augment(w, edges, skip_l, &mut writer_of, &mut vec![false; logs]))
        .count()
}

fn augment(
    w: usize,
    edges: &[Vec<usize>],
    skip_l: Option<usize>,
    writer_of: &mut [Option<usize>],
    seen: &mut [bool],
) -> bool {
    for &l in &edges[w] {
        if Some(l) == skip_l || seen[l] {
            continue;
        }
        seen[l] = true;
        if writer_of[l].map_or(true, |o| augment(o, edges, skip_l, writer_of, seen)) {
            writer_of[l] = Some(w);
            return true;
        }
    }
    false
}

/// The logs in `dir` that one of `writers` may write: begun or written since the first of
/// them started (`times`: when a log was begun and last written, Unix milliseconds), of the
/// agent's form and claimed by no other process (`keep`), whose header names one of `cwds`
/// (`header_cwd`; a log without one yet is kept). Sorted by path.
pub fn logs_in(
    dir: &Path,
    writers: &[Writer],
    cwds: &[String],
    keep: impl Fn(&Path) -> bool,
    times: impl Fn(&Path) -> Option<(i64, i64)>,
    header_cwd: impl Fn(&Path) -> Option<String>,
) -> Vec<Log> {
    let Some(first) = writers.iter().map(|w| w.since_ms).min() else {
        return Vec::new();
    };
    let mut logs: Vec<Log> = std::fs::read_dir(dir)
        .map(|d| d.flatten().map(|e| e.path()).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .filter(|p| keep(p))
        .filter_map(|path| {
            let (begun_ms, written_ms) = times(&path)?;
            (begun_ms.max(written_ms) >= first).then_some(Log {
                path,
                begun_ms,
                written_ms,
            })
        })
        .filter(|l| header_cwd(&l.path).map_or(true, |c| cwd_matches(&c, cwds)))
        .collect();
    logs.sort_by(|a, b| a.path.cmp(&b.path));
    logs
}

/// Whether process `pid` runs in one of `cwds`.
pub fn in_folder(pid: u32, cwds: &[String]) -> bool {
    procfs::cwd(pid).is_some_and(|c| cwd_matches(&c.to_string_lossy(), cwds))
}

/// How an agent's steps name what the order of starts weighed.
#[derive(Debug)]
pub struct Words {
    /// Its processes that were weighed: `pi process(es) here without a record`.
    pub processes: &'static str,
    /// Why a process has no log yet: `a fresh pi writes its log when the first answer ends`.
    pub fresh: &'static str,
}

/// What the order of starts found for the pane, with `others` other processes weighed; the
/// session id of a log by `session_id`.
pub fn found(
    owned: Owned,
    others: usize,
    dir: &Path,
    words: &Words,
    session_id: fn(&Path) -> Option<String>,
    steps: &mut Vec<String>,
) -> Found {
    match owned {
        Owned::None => {
            steps.push(format!(
                "transcript: none in {} begun since it started ({})",
                dir.display(),
                words.fresh
            ));
            Found::default()
        }
        Owned::Log(path) => {
            steps.push(format!(
                "transcript: {} in {}, by the order the {} {} started and their logs began",
                path.file_name().unwrap_or_default().to_string_lossy(),
                dir.display(),
                others + 1,
                words.processes
            ));
            Found {
                session_id: session_id(&path),
                transcript: Some(path),
                via: Via::Cwd,
                record: None,
            }
        }
        Owned::Ambiguous(n) => {
            steps.push(format!(
                "transcript: {n} log(s) in {} it may write, and {others} other {} that may \
                 write them: cannot tell which is this pane's",
                dir.display(),
                words.processes
            ));
            Found {
                via: Via::Ambiguous,
                ..Found::default()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Unix milliseconds of `hh:mm:ss` on the day of these tests.
    fn ms(hms: &str) -> i64 {
        chrono::DateTime::parse_from_rfc3339(&format!("2026-12-02T{hms}Z"))
            .unwrap()
            .timestamp_millis()
    }

    fn log(id: &str, begun: &str, written: &str) -> Log {
        Log {
            path: PathBuf::from(format!("/s/{id}.jsonl")),
            begun_ms: ms(begun),
            written_ms: ms(written),
        }
    }

    fn writer(pid: u32, start: &str) -> Writer {
        Writer::of(pid, (ms(start) / 1000) as u64)
    }

    fn of(id: &str) -> Owned {
        Owned::Log(PathBuf::from(format!("/s/{id}.jsonl")))
    }

    #[test]
    fn a_log_begun_before_a_second_pi_started_stays_with_the_first() {
        let a = writer(1, "12:00:00");
        let b = writer(2, "12:05:00");
        let la = log("a", "12:00:09", "12:06:00");
        let logs = [la.clone()];
        assert_eq!(owner_of(1, &[a, b], &logs), of("a"));
        assert_eq!(
            owner_of(2, &[a, b], &logs),
            Owned::None,
            "nothing since b began"
        );
        // b answers: a log begun after b started is b's, as a has its own.
        let logs = [la, log("b", "12:05:30", "12:05:30")];
        assert_eq!(owner_of(1, &[a, b], &logs), of("a"));
        assert_eq!(owner_of(2, &[a, b], &logs), of("b"));
    }

    #[test]
    fn a_log_either_could_have_begun_is_ambiguous() {
        let a = writer(1, "12:00:00");
        let b = writer(2, "12:00:05");
        // Both started, then one log: whose first answer it was, the order cannot say.
        let logs = [log("x", "12:01:00", "12:01:00")];
        assert_eq!(owner_of(1, &[a, b], &logs), Owned::Ambiguous(1));
        assert_eq!(owner_of(2, &[a, b], &logs), Owned::Ambiguous(1));
        // Two logs after both started, and a third pi before the second log: no one's own.
        let c = writer(3, "12:02:00");
        let logs = [
            log("a", "12:00:10", "12:00:10"),
            log("x", "12:03:00", "12:03:00"),
        ];
        assert_eq!(owner_of(1, &[a, b, c], &logs), Owned::Ambiguous(2));
        assert_eq!(owner_of(3, &[a, b, c], &logs), Owned::Ambiguous(1));
        // The first log begun before the second pi started: it is a's; the second b's or c's.
        let a = writer(1, "11:59:00");
        let logs = [
            log("a", "11:59:30", "11:59:30"),
            log("x", "12:03:00", "12:03:00"),
        ];
        assert_eq!(owner_of(1, &[a, b, c], &logs), of("a"));
        assert_eq!(owner_of(2, &[a, b, c], &logs), Owned::Ambiguous(1));
        assert_eq!(owner_of(3, &[a, b, c], &logs), Owned::Ambiguous(1));
        // One pi, two logs since it started (a `/new`): either may be the current one.
        assert_eq!(owner_of(1, &[a], &logs), Owned::Ambiguous(2));
        assert_eq!(owner_of(9, &[a], &logs), Owned::None, "not a writer here");
    }

    #[test]
    fn a_log_written_after_its_first_writer_left_is_the_resuming_pis() {
        let b = writer(2, "12:05:00");
        let old = log("old", "11:00:00", "12:06:00");
        assert_eq!(owner_of(2, &[b], std::slice::from_ref(&old)), of("old"));
        // Written only in the second b started: the last pi's, ended as b started.
        let ended = log("old", "11:00:00", "12:04:59");
        assert_eq!(owner_of(2, &[b], &[ended]), Owned::None);
        // Its first writer still runs: the log is that one's, not b's.
        let a = writer(1, "10:59:00");
        assert_eq!(
            owner_of(2, &[a, b], std::slice::from_ref(&old)),
            Owned::None
        );
        assert_eq!(owner_of(1, &[a, b], &[old]), of("old"));
    }
}
