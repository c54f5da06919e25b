//! Codex 0.171's shared app-server daemon: one `codex app-server … --managed-daemon` per
//! `CODEX_HOME` serves every TUI started without `--no-daemon`. It creates each TUI's thread
//! (at start-up, before any prompt), holds `thread-writer-locks/<thread id>.lock` for every
//! live thread and the rollout of every thread that has one (rollouts appear at the first
//! prompt). The TUI process itself holds neither, and nothing a TUI shows names its thread.
//!
//! What is observable, and what this module uses to tie a pane to its thread:
//! - the daemon's PID (`app-server-daemon/daemon.pid`, checked against its start ticks) and
//!   its open files: the live thread ids and their rollouts;
//! - each thread's creation time, in its id (a UUIDv7: the first 48 bits are Unix ms);
//! - each TUI's start time, and which TUIs use this `CODEX_HOME` (their environment).
//!
//! A TUI creates its thread after it starts, so a thread belongs to a TUI started before it.
//! Over all TUIs of the daemon, a thread is a pane's only when every way of giving each TUI
//! at most one thread it could have created (as many as possible) gives the pane that one;
//! when several threads fit, the pane is ambiguous — never a neighbour's by guess.
//! See docs/resolver.md.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::proctree::{procfs, ProcTable};

/// A live thread of the daemon.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Thread {
    pub id: String,
    /// Creation time, Unix milliseconds (from the UUIDv7 id).
    pub created_ms: u64,
    /// The rollout the daemon holds for it, once the thread has one.
    pub rollout: Option<PathBuf>,
}

/// The running daemon of one `CODEX_HOME`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Daemon {
    pub pid: u32,
    pub threads: Vec<Thread>,
}

/// The creation time in a UUIDv7 (`01a233b7-ca76-7420-…`): its first 48 bits, in ms.
pub fn uuid7_ms(id: &str) -> Option<u64> {
    let hex: String = id.chars().filter(|c| *c != '-').take(12).collect();
    let version = id.chars().filter(|c| *c != '-').nth(12)?;
    if hex.len() != 12 || version != '7' {
        return None;
    }
    u64::from_str_radix(&hex, 16).ok()
}

/// The daemon named by `<root>/app-server-daemon/daemon.pid`, when that process is alive (its
/// start ticks match the file) and is an app server; with its live threads.
pub fn find(root: &Path) -> Option<Daemon> {
    let raw = std::fs::read(root.join("app-server-daemon/daemon.pid")).ok()?;
    let info: Value = serde_json::from_slice(&raw).ok()?;
    let pid = u32::try_from(info.get("pid")?.as_u64()?).ok()?;
    let ticks = info
        .pointer("/processIdentity/startTicks")
        .and_then(Value::as_u64);
    if ticks.is_some() && procfs::start_ticks(pid) != ticks {
        return None;
    }
    if !cmdline(pid).iter().any(|a| a == "app-server") {
        return None;
    }
    Some(Daemon {
        pid,
        threads: threads_held(root, &procfs::open_files(pid)),
    })
}

/// The live threads among `open` files: a `thread-writer-locks/<id>.lock` each, with the
/// rollout held for the same id.
pub fn threads_held(root: &Path, open: &[PathBuf]) -> Vec<Thread> {
    let locks = root.join("thread-writer-locks");
    let mut threads: Vec<Thread> = open
        .iter()
        .filter(|p| p.parent() == Some(locks.as_path()))
        .filter_map(|p| p.file_name()?.to_str()?.strip_suffix(".lock"))
        .filter_map(|id| {
            Some(Thread {
                id: id.to_string(),
                created_ms: uuid7_ms(id)?,
                rollout: None,
            })
        })
        .collect();
    threads.sort_by(|a, b| (a.created_ms, &a.id).cmp(&(b.created_ms, &b.id)));
    threads.dedup_by(|a, b| a.id == b.id);
    for t in &mut threads {
        t.rollout = open
            .iter()
            .filter(|p| is_rollout(p))
            .find(|p| super::home::session_id_of(p).as_deref() == Some(t.id.as_str()))
            .cloned();
    }
    threads
}

/// Whether a process holds its own threads (a TUI with `--no-daemon`, an older Codex).
pub fn holds_threads(root: &Path, open: &[PathBuf]) -> bool {
    let locks = root.join("thread-writer-locks");
    open.iter()
        .any(|p| p.parent() == Some(locks.as_path()) || is_rollout(p))
}

fn is_rollout(p: &Path) -> bool {
    p.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with("rollout-") && n.ends_with(".jsonl"))
}

/// The process's command line (empty when unreadable).
pub fn cmdline(pid: u32) -> Vec<String> {
    procfs::cmdline(pid).unwrap_or_default()
}

/// Start times (ms) of the other Codex TUIs served by the daemon of `root`: processes
/// named `codex` that are no app server, whose `CODEX_HOME` is `root`, and that hold no
/// threads of their own.
pub fn client_starts(root: &Path, table: &ProcTable, me: u32, fallback_home: &Path) -> Vec<u64> {
    table
        .iter()
        .filter(|p| p.pid != me && p.name == "codex")
        .filter(|p| !cmdline(p.pid).iter().any(|a| a == "app-server"))
        .filter(|p| super::home::codex_home(p.pid, fallback_home).0 == root)
        .filter(|p| !holds_threads(root, &procfs::open_files(p.pid)))
        .map(|p| procfs::start_ms(p.pid).unwrap_or(p.start.saturating_mul(1000)))
        .collect()
}

/// How far a start time read from `/proc` may be off the wall clock a thread id was made
/// with (tick and uptime rounding).
pub const CLOCK_SLACK_MS: u64 = 30;

/// Which thread is the pane's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pick {
    /// The only thread the pane can have: its index in the thread list.
    Mine(usize),
    /// Several threads fit; their indexes.
    Ambiguous(Vec<usize>),
    /// No thread fits (the TUI is still starting, or its thread is gone).
    NoThread,
}

/// Picks the thread of client `me` among `starts` (client start times, ms), given the
/// threads' creation times (ms). A thread can be a client's when it was created after the
/// client started (less [`CLOCK_SLACK_MS`]); each client has at most one. The pane's thread is the one it
/// gets in every assignment that gives threads to as many clients as possible.
pub fn pick(me: usize, starts: &[u64], created_ms: &[u64]) -> Pick {
    let fits = |c: usize, t: usize| created_ms[t] + CLOCK_SLACK_MS >= starts[c];
    let (clients, threads) = (starts.len(), created_ms.len());
    let best = max_matching(clients, threads, &fits, Skip::None);
    let possible: Vec<usize> = (0..threads)
        .filter(|&t| fits(me, t))
        .filter(|&t| 1 + max_matching(clients, threads, &fits, Skip::Pair(me, t)) == best)
        .collect();
    // Could `me` be left without a thread while the others still get as many?
    let maybe_none = max_matching(clients, threads, &fits, Skip::Client(me)) == best;
    match possible.as_slice() {
        [] => Pick::NoThread,
        [one] if !maybe_none => Pick::Mine(*one),
        _ => Pick::Ambiguous(possible),
    }
}

/// What a matching leaves out.
#[derive(Debug, Clone, Copy)]
enum Skip {
    None,
    Client(usize),
    /// A client and a thread.
    Pair(usize, usize),
}

impl Skip {
    fn client(self, c: usize) -> bool {
        matches!(self, Skip::Client(x) | Skip::Pair(x, _) if x == c)
    }
    fn thread(self, t: usize) -> bool {
        matches!(self, Skip::Pair(_, x) if x == t)
    }
}

/// Size of a maximum matching of clients to threads under `fits`, leaving out what `skip`
/// names (Kuhn's augmenting paths; a handful of panes).
fn max_matching(
    clients: usize,
    threads: usize,
    fits: &dyn Fn(usize, usize) -> bool,
    skip: Skip,
) -> usize {
    let mut owner: Vec<Option<usize>> = vec![None; threads];
    let mut size = 0;
    for c in 0..clients {
        if skip.client(c) {
            continue;
        }
        let mut seen = vec![false; threads];
        if augment(c, fits, skip, &mut owner, &mut seen) {
            size += 1;
        }
    }
    size
}

fn augment(
    c: usize,
    fits: &dyn Fn(usize, usize) -> bool,
    skip: Skip,
    owner: &mut [Option<usize>],
    seen: &mut [bool],
) -> bool {
    for t in 0..owner.len() {
        if seen[t] || !fits(c, t) || skip.thread(t) {
            continue;
        }
        seen[t] = true;
        let free = match owner[t] {
            None => true,
            Some(other) => augment(other, fits, skip, owner, seen),
        };
        if free {
            owner[t] = Some(c);
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuid7_carries_its_creation_time() {
        // A thread id Codex 0.171 created at 2026-12-01T22:26:52.66Z (its session_meta).
        assert_eq!(
            uuid7_ms("01a233b7-ca76-7420-b2f5-29692c97a85a"),
            Some(1_796_164_012_662)
        );
        assert_eq!(uuid7_ms("019e9625-802f-4e91-840a-cfe88d14117a"), None, "v4");
        assert_eq!(uuid7_ms("nope"), None);
    }

    #[test]
    fn sequential_starts_each_get_their_own_thread() {
        // A at 100 s (thread 100.5 s), B at 102 s (thread 102.4 s), C at 110 s (no thread yet).
        let starts = [100_000, 102_000, 110_000];
        let threads = [100_500, 102_400];
        assert_eq!(pick(0, &starts, &threads), Pick::Mine(0));
        assert_eq!(pick(1, &starts, &threads), Pick::Mine(1));
        assert_eq!(pick(2, &starts, &threads), Pick::NoThread);
    }

    #[test]
    fn a_fresh_pane_never_gets_an_older_neighbours_thread() {
        // The regression: B (started later, nothing typed) used to read A's rollout.
        let starts = [100_000, 105_000];
        assert_eq!(pick(1, &starts, &[100_500]), Pick::NoThread);
        assert_eq!(pick(0, &starts, &[100_500]), Pick::Mine(0));
    }

    #[test]
    fn overlapping_starts_are_ambiguous() {
        // A and B start together; both threads come after: either could be either.
        let starts = [100_000, 100_100];
        let threads = [100_400, 100_700];
        assert_eq!(pick(0, &starts, &threads), Pick::Ambiguous(vec![0, 1]));
        assert_eq!(pick(1, &starts, &threads), Pick::Ambiguous(vec![0, 1]));
    }

    #[test]
    fn an_older_pane_still_starting_makes_the_newer_one_ambiguous() {
        // A started first but its thread is not there yet; B's thread is: it could be A's.
        let starts = [100_000, 101_000];
        assert_eq!(pick(1, &starts, &[101_500]), Pick::Ambiguous(vec![0]));
        assert_eq!(pick(0, &starts, &[101_500]), Pick::Ambiguous(vec![0]));
    }

    #[test]
    fn threads_of_exited_tuis_and_new_threads_stay_apart() {
        // A (100) made a thread, then `/new` (150); B started at 200 and has its thread.
        let starts = [100_000, 200_000];
        let threads = [100_500, 150_000, 200_500];
        assert_eq!(pick(1, &starts, &threads), Pick::Mine(2));
        assert_eq!(pick(0, &starts, &threads), Pick::Ambiguous(vec![0, 1]));
    }

    #[test]
    fn threads_and_rollouts_come_from_the_daemons_open_files() {
        let root = Path::new("/h/.codex");
        let open = vec![
            root.join("state_5.sqlite"),
            root.join("thread-writer-locks/01a233b9-1743-7893-b2bc-586b6457a645.lock"),
            root.join("thread-writer-locks/01a233b7-ca76-7420-b2f5-29692c97a85a.lock"),
            root.join("thread-writer-locks/.coordination.lock"),
            root.join("sessions/2026/12/01/rollout-2026-12-01T22-26-52-01a233b7-ca76-7420-b2f5-29692c97a85a.jsonl"),
        ];
        let threads = threads_held(root, &open);
        let ids: Vec<&str> = threads.iter().map(|t| t.id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "01a233b7-ca76-7420-b2f5-29692c97a85a",
                "01a233b9-1743-7893-b2bc-586b6457a645"
            ]
        );
        assert!(threads[0].rollout.is_some() && threads[1].rollout.is_none());
        assert!(holds_threads(root, &open));
        assert!(!holds_threads(root, &[root.join("state_5.sqlite")]));
    }
}
