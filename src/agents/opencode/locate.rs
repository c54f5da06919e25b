//! Which opencode session a process is in. opencode writes no per-process record: all its
//! processes share one database, and a session row appears only at the first prompt. So the
//! process is matched to a session by what it can show:
//!
//! - its database: the `opencode*.db` it holds open, else `$XDG_DATA_HOME/opencode/opencode.db`
//!   of its own environment;
//! - its arguments: `--session/-s ID` names the session; `--continue/-c` resumes an older one;
//! - its start time: without those arguments a process only ever owns sessions created after
//!   it started.
//!
//! The pane shows the newest session in its folder that this process can own and that no other
//! live opencode process on the same database and folder can own. When the newest session it
//! can own might also be a neighbour's, the answer is `ambiguous`: never a neighbour's session.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::agents::locate::{Found, Target, Via};
use crate::proctree::{procfs, ProcTable};

use super::runlog::{self, RunLog, Started};
use super::store::{self, Databases, SessionRow};
use super::{Flavor, SessionRef};

/// What locating the sessions of several opencode panes in one scan shares: each database,
/// opened once, and the live opencode processes, read from `/proc` once (not once per pane).
#[derive(Debug, Default)]
pub struct Shared {
    pub dbs: Databases,
    /// Per flavor (opencode, Kilo).
    peers: HashMap<&'static str, Vec<Peer>>,
    /// The shared text log beside each database, read so far (kept between scans).
    pub logs: HashMap<PathBuf, RunLog>,
}

/// A live opencode process: how it picks its session, its folder, its database.
#[derive(Debug, Clone)]
struct Peer {
    process: Process,
    cwd: Option<PathBuf>,
    db: Option<PathBuf>,
}

/// The data folder of an opencode process: `<its XDG_DATA_HOME or HOME/.local/share>/opencode`
/// (`kilo` for Kilo: the flavor's name).
pub fn data_root(flavor: &Flavor, pid: u32, fallback_home: &Path) -> (PathBuf, &'static str) {
    let env = procfs::environ(pid);
    let get = |k: &str| {
        env.as_ref()
            .and_then(|e| e.get(k))
            .filter(|v| !v.is_empty())
            .map(str::to_string)
    };
    if let Some(data) = get("XDG_DATA_HOME") {
        return (Path::new(&data).join(flavor.name), "XDG_DATA_HOME");
    }
    match get("HOME") {
        Some(home) => (
            Path::new(&home).join(".local/share").join(flavor.name),
            "agent's HOME",
        ),
        None => (
            fallback_home.join(".local/share").join(flavor.name),
            "default; the agent's environment is unreadable",
        ),
    }
}

/// The database a process uses: the one it holds open, else the default under its data root.
fn database(flavor: &Flavor, pid: u32, root: &Path) -> Option<(PathBuf, Via)> {
    let held = procfs::open_files(pid)
        .into_iter()
        .find(|p| flavor.names_db(p));
    if let Some(db) = held {
        return Some((db, Via::OpenFile));
    }
    let db = root.join(format!("{}.db", flavor.name));
    db.is_file().then_some((db, Via::Cwd))
}

/// How a process picks its session, from its command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Start {
    /// `--session ID` / `-s ID`.
    Session(String),
    /// `--continue` / `-c`: resumes the newest session, which may predate the process.
    Continue,
    /// A new session at the first prompt.
    Fresh,
}

impl Start {
    /// Reads opencode's arguments (argv without the program).
    pub fn from_args(args: &[String]) -> Start {
        let mut it = args.iter();
        let mut start = Start::Fresh;
        while let Some(a) = it.next() {
            match a.as_str() {
                "--session" | "-s" => {
                    if let Some(id) = it.next() {
                        return Start::Session(id.clone());
                    }
                }
                "--continue" | "-c" => start = Start::Continue,
                _ => {
                    if let Some(id) = a.strip_prefix("--session=") {
                        return Start::Session(id.to_string());
                    }
                }
            }
        }
        start
    }
}

/// One live opencode process as the locator sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Process {
    pub pid: u32,
    /// Start, seconds since the epoch (rounded down).
    pub start: u64,
    pub start_mode: Start,
    /// The sessions its run in the shared log created or ran turns in, when the log ties a
    /// run to it (runlog.rs); `None` when it does not.
    pub run: Option<Vec<String>>,
}

impl Process {
    /// Whether this process could be in `s`.
    pub fn can_own(&self, s: &SessionRow) -> bool {
        let started_ms = self.start as i64 * 1000;
        let by_time = match &self.start_mode {
            Start::Session(id) => return *id == s.id,
            Start::Continue => s.updated_ms >= started_ms,
            Start::Fresh => s.created_ms >= started_ms,
        };
        match &self.run {
            // A resumed session may not be in the log before its next turn.
            Some(run) => run.contains(&s.id) || (self.start_mode == Start::Continue && by_time),
            None => by_time,
        }
    }
}

/// Picks the session of `me` among `sessions` (its folder's), given the other live opencode
/// processes in the same folder and database. `Err` names the sessions it cannot tell apart.
pub fn pick<'a>(
    me: &Process,
    others: &[Process],
    sessions: &'a [SessionRow],
) -> Result<Option<&'a SessionRow>, Vec<&'a SessionRow>> {
    // A session another process names on its command line, or its run in the shared log
    // created, is that process's.
    let named_elsewhere = |s: &SessionRow| {
        others.iter().any(|o| {
            o.start_mode == Start::Session(s.id.clone())
                || o.run.as_ref().is_some_and(|r| r.contains(&s.id))
        })
    };
    let mut mine: Vec<&SessionRow> = sessions
        .iter()
        .filter(|s| me.can_own(s) && !named_elsewhere(s))
        .collect();
    mine.sort_by_key(|s| std::cmp::Reverse(s.updated_ms));
    let Some(newest) = mine.first() else {
        return Ok(None);
    };
    if matches!(me.start_mode, Start::Session(_)) {
        return Ok(Some(newest));
    }
    let shared = |s: &SessionRow| others.iter().any(|o| o.can_own(s));
    if !shared(newest) {
        return Ok(Some(newest));
    }
    // The newest session this process can own may be a neighbour's (and an older one that is
    // surely its own may no longer be its current one): that cannot be told, so say so.
    Err(mine.into_iter().filter(|s| shared(s)).collect())
}

/// Every live process of `flavor` in `table`.
fn peers(flavor: &Flavor, table: &ProcTable) -> Vec<Peer> {
    table
        .iter()
        .filter(|p| flavor.comms.contains(&p.name.as_str()))
        .map(|p| {
            // The snapshot holds the command line of a pane's processes already.
            let args = if p.argv.is_empty() {
                procfs::cmdline(p.pid).unwrap_or_default()
            } else {
                p.argv.clone()
            };
            Peer {
                process: Process {
                    pid: p.pid,
                    start: p.start,
                    start_mode: Start::from_args(args.get(1..).unwrap_or_default()),
                    run: None,
                },
                cwd: procfs::cwd(p.pid),
                db: database(flavor, p.pid, Path::new("/nonexistent")).map(|(db, _)| db),
            }
        })
        .collect()
}

/// Whether `a` and `b` are one process or one runs the other: Kilo's npm launcher (`comm`
/// `kilo`) and the `bin/.kilo` its postinstall left (`comm` `.kilo`) are one agent, not two
/// neighbours in a folder.
fn one_chain(table: &ProcTable, a: u32, b: u32) -> bool {
    let runs = |outer: u32, inner: u32| {
        let mut at = inner;
        // A bounded walk: a table read while processes come and go may hold a loop.
        for _ in 0..64 {
            match table.get(at).and_then(|p| p.ppid) {
                Some(up) if up == outer => return true,
                Some(up) if up != at => at = up,
                _ => return false,
            }
        }
        false
    };
    a == b || runs(a, b) || runs(b, a)
}

/// Finds the session of the opencode process `t`.
pub fn locate(
    flavor: &Flavor,
    t: &Target,
    table: &ProcTable,
    argv: &[String],
    shared: &mut Shared,
    steps: &mut Vec<String>,
) -> Found {
    let mut found = Found::default();
    // Every live process of the flavor is looked at once a scan; this one among them needs
    // its open files read no second time.
    let held = shared
        .peers
        .entry(flavor.name)
        .or_insert_with(|| peers(flavor, table))
        .iter()
        .find(|p| p.process.pid == t.pid)
        .and_then(|p| p.db.clone());
    let located = match held {
        Some(db) => Some((db, Via::OpenFile)),
        None => database(flavor, t.pid, t.root),
    };
    let Some((db, db_via)) = located else {
        steps.push(format!(
            "database: none (no {name}*.db held open, no {}/{name}.db)",
            t.root.display(),
            name = flavor.name
        ));
        return found;
    };
    steps.push(format!(
        "database: {} ({})",
        db.display(),
        if db_via == Via::OpenFile {
            "held open"
        } else {
            "default location"
        }
    ));
    let sessions = match shared
        .dbs
        .get(&db)
        .and_then(|d| store::sessions_in_db(d, t.cwds))
    {
        Ok(s) => s,
        Err(e) => {
            shared.dbs.forget(&db);
            steps.push(format!("sessions: cannot read: {e:#}"));
            return found;
        }
    };
    let mut me = Process {
        pid: t.pid,
        start: t.start,
        start_mode: Start::from_args(argv.get(1..).unwrap_or_default()),
        run: None,
    };
    let mut others: Vec<Process> = shared
        .peers
        .entry(flavor.name)
        .or_insert_with(|| peers(flavor, table))
        .iter()
        .filter(|o| !one_chain(table, o.process.pid, t.pid))
        .filter(|o| {
            let same_dir = o
                .cwd
                .as_ref()
                .and_then(|c| c.to_str())
                .is_some_and(|c| crate::agents::locate::cwd_matches(c, t.cwds));
            same_dir && o.db.as_deref().map_or(true, |d| d == db)
        })
        .map(|o| o.process.clone())
        .collect();
    if !others.is_empty() {
        tie_runs(&db, t.cwds, &mut me, &mut others, &mut shared.logs, steps);
    }
    match pick(&me, &others, &sessions) {
        Ok(Some(s)) => {
            let how = match &me.start_mode {
                Start::Session(_) => "named by --session",
                Start::Continue => "active since the agent started (--continue)",
                Start::Fresh => "created since the agent started",
            };
            steps.push(format!("session: {} \"{}\" ({how})", s.id, s.title));
            let r = SessionRef {
                db,
                session: s.id.clone(),
            };
            found.transcript = Some(r.to_path());
            found.session_id = Some(s.id.clone());
            found.via = match me.start_mode {
                Start::Session(_) => Via::SessionRecord,
                _ => Via::Cwd,
            };
        }
        Ok(None) => steps.push(format!(
            "session: none yet in {} (opencode creates it at the first prompt)",
            t.cwds.first().map(String::as_str).unwrap_or("?")
        )),
        Err(candidates) => {
            let ids: Vec<&str> = candidates.iter().map(|s| s.id.as_str()).collect();
            let pids: Vec<String> = others.iter().map(|o| o.pid.to_string()).collect();
            steps.push(format!(
                "session: ambiguous: {} could also belong to {} pid {}",
                ids.join(", "),
                flavor.kind,
                pids.join(", ")
            ));
            found.via = Via::Ambiguous;
        }
    }
    found
}

/// Gives `me` and the `others` in its folder the sessions of their runs in the shared log,
/// where the log ties a run to each (docs/agents/opencode.md).
fn tie_runs(
    db: &Path,
    cwds: &[String],
    me: &mut Process,
    others: &mut [Process],
    logs: &mut HashMap<PathBuf, RunLog>,
    steps: &mut Vec<String>,
) {
    let Some(path) = runlog::path_for(db) else {
        return;
    };
    let log = logs.entry(path.clone()).or_default();
    if let Err(e) = log.update(&path) {
        steps.push(format!("run log: cannot read {}: {e}", path.display()));
        return;
    }
    let runs: Vec<&runlog::Run> = log
        .runs()
        .filter(|r| {
            r.directory
                .as_deref()
                .is_some_and(|d| crate::agents::locate::cwd_matches(d, cwds))
        })
        .collect();
    let procs: Vec<Started> = std::iter::once(&*me)
        .chain(others.iter())
        .map(|p| Started {
            pid: p.pid,
            start: p.start,
        })
        .collect();
    let tied = runlog::assign(&procs, &runs);
    let sessions = |pid: u32| {
        let id = tied.get(&pid)?;
        runs.iter()
            .find(|r| r.id == *id)
            .map(|r| r.sessions.clone())
    };
    for o in others.iter_mut() {
        o.run = sessions(o.pid);
    }
    me.run = sessions(me.pid);
    match tied.get(&me.pid) {
        Some(id) => steps.push(format!(
            "run log: run {id} in {} is this process's ({} session(s))",
            path.display(),
            me.run.as_ref().map_or(0, Vec::len)
        )),
        None => steps.push(format!(
            "run log: no run in {} is surely this process's",
            path.display()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(id: &str, created: i64, updated: i64) -> SessionRow {
        SessionRow {
            id: id.into(),
            directory: "/w".into(),
            title: String::new(),
            created_ms: created * 1000,
            updated_ms: updated * 1000,
        }
    }

    fn fresh(pid: u32, start: u64) -> Process {
        Process {
            pid,
            start,
            start_mode: Start::Fresh,
            run: None,
        }
    }

    #[test]
    fn arguments_say_how_a_process_picks_its_session() {
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            Start::from_args(&args(&["-s", "ses_a"])),
            Start::Session("ses_a".into())
        );
        assert_eq!(
            Start::from_args(&args(&["--session=ses_b", "-c"])),
            Start::Session("ses_b".into())
        );
        assert_eq!(Start::from_args(&args(&["--continue"])), Start::Continue);
        assert_eq!(Start::from_args(&args(&["/some/dir"])), Start::Fresh);
    }

    #[test]
    fn alone_in_its_folder_a_process_owns_the_newest_session_since_it_started() {
        let old = session("ses_old", 10, 50);
        let new = session("ses_new", 120, 130);
        let sessions = [old.clone(), new.clone()];
        assert_eq!(pick(&fresh(1, 100), &[], &sessions), Ok(Some(&new)));
        assert_eq!(pick(&fresh(1, 200), &[], &sessions), Ok(None), "none yet");
        let cont = Process {
            start_mode: Start::Continue,
            ..fresh(1, 40)
        };
        assert_eq!(pick(&cont, &[], std::slice::from_ref(&old)), Ok(Some(&old)));
    }

    #[test]
    fn two_processes_in_one_folder_never_get_a_neighbour_s_session() {
        // A started at 100 and prompted at 110; B started at 120 and prompted at 130.
        let s1 = session("ses_1", 110, 115);
        let s2 = session("ses_2", 130, 135);
        let sessions = [s1.clone(), s2.clone()];
        let (a, b) = (fresh(1, 100), fresh(2, 120));
        // B can only be in s2, but A could have started s2 too (`/new`): ambiguous.
        assert!(pick(&b, std::slice::from_ref(&a), &sessions).is_err());
        // A's newest candidate is s2, which B may own: ambiguous as well.
        assert!(pick(&a, std::slice::from_ref(&b), &sessions).is_err());
        // Before B prompts, A's session is its own.
        assert_eq!(
            pick(&a, std::slice::from_ref(&b), std::slice::from_ref(&s1)),
            Ok(Some(&s1))
        );
        assert_eq!(
            pick(&b, std::slice::from_ref(&a), std::slice::from_ref(&s1)),
            Ok(None)
        );
        // A session named on the command line is that process's, whatever the others.
        let named = Process {
            start_mode: Start::Session("ses_2".into()),
            ..fresh(2, 120)
        };
        assert_eq!(
            pick(&named, std::slice::from_ref(&a), &sessions),
            Ok(Some(&s2))
        );
        // ... and no longer a candidate for the other process.
        assert_eq!(pick(&a, &[named], &sessions), Ok(Some(&s1)));
    }

    #[test]
    fn runs_in_the_shared_log_give_each_process_its_own_session() {
        let s1 = session("ses_1", 110, 115);
        let s2 = session("ses_2", 130, 135);
        let sessions = [s1.clone(), s2.clone()];
        let ran = |p: Process, ids: &[&str]| Process {
            run: Some(ids.iter().map(|s| s.to_string()).collect()),
            ..p
        };
        let (a, b) = (
            ran(fresh(1, 100), &["ses_1"]),
            ran(fresh(2, 120), &["ses_2"]),
        );
        assert_eq!(pick(&a, std::slice::from_ref(&b), &sessions), Ok(Some(&s1)));
        assert_eq!(pick(&b, std::slice::from_ref(&a), &sessions), Ok(Some(&s2)));
        // A `/new` in A: its newest session, still never B's.
        let s3 = session("ses_3", 140, 145);
        let a2 = ran(fresh(1, 100), &["ses_1", "ses_3"]);
        let three = [s1.clone(), s2.clone(), s3.clone()];
        assert_eq!(pick(&a2, std::slice::from_ref(&b), &three), Ok(Some(&s3)));
        // B's run is known but A's is not: A may own anything since it started but B's.
        assert_eq!(
            pick(&fresh(1, 100), std::slice::from_ref(&b), &sessions),
            Ok(Some(&s1))
        );
        // A's run is known but B's is not: what A's run holds is A's, the rest may be B's.
        assert_eq!(
            pick(&fresh(2, 120), std::slice::from_ref(&a2), &three),
            Ok(Some(&s2))
        );
        assert_eq!(
            pick(&a, std::slice::from_ref(&fresh(2, 120)), &sessions),
            Ok(Some(&s1))
        );
    }

    #[test]
    fn a_launcher_and_the_program_it_runs_are_one_agent_not_neighbours() {
        let proc = |pid: u32, ppid: u32, name: &str| crate::proctree::ProcInfo {
            pid,
            ppid: Some(ppid),
            name: name.into(),
            argv: Vec::new(),
            exe: None,
            start: 100,
        };
        // shell 10 → launcher `kilo` 11 → `.kilo` 12; a second Kilo 21 under shell 20.
        let table = ProcTable::from_procs([
            proc(10, 1, "bash"),
            proc(11, 10, "kilo"),
            proc(12, 11, ".kilo"),
            proc(20, 1, "bash"),
            proc(21, 20, ".kilo"),
            proc(30, 30, "loop"),
        ]);
        assert!(one_chain(&table, 12, 11));
        assert!(one_chain(&table, 11, 12));
        assert!(one_chain(&table, 12, 12));
        assert!(!one_chain(&table, 12, 21));
        assert!(!one_chain(&table, 11, 21));
        assert!(!one_chain(&table, 30, 12));
    }
}
