//! Where a Kimi Code process keeps its session (docs/agents/kimi.md#where-the-log-is).
//!
//! `<KIMI_CODE_HOME or ~/.kimi-code>/sessions/wd_<folder name>_<hash>/session_<uuid>/` holds
//! `state.json` (`cwd`, `createdAt` in epoch ms) and `agents/main/wire.jsonl`, both written at
//! the first prompt. Nothing in them names the process and it keeps no file open, so the tie
//! is time: a session of this folder created after this process started and before the next
//! Kimi Code process in the same folder started is this process's. When several fit (an older
//! neighbour's first prompt came after this one started), none is chosen.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::agents::locate::{cwd_matches, Found, Target, Via};
use crate::proctree::{procfs, ProcTable};

/// The sessions folder under the root.
pub const SESSIONS: &str = "sessions";
/// The main agent's log inside a session folder.
pub const WIRE: &str = "agents/main/wire.jsonl";
/// The name the process gives itself (`process.title`), its `comm` too.
pub const TITLE: &str = "kimi-code";

/// Its root: `$KIMI_CODE_HOME`, else `<its HOME>/.kimi-code`.
pub fn root(pid: u32, home: &Path) -> (PathBuf, &'static str) {
    crate::agents::locate::agent_root(pid, "KIMI_CODE_HOME", ".kimi-code", home)
}

/// One session folder: where it is and when it was created (epoch ms).
#[derive(Debug, Clone, PartialEq)]
pub struct Session {
    pub dir: PathBuf,
    pub created_ms: u64,
}

/// How far a process's start read from `/proc` (to ~10 ms) may lie after the session it
/// made at once.
const SLACK_MS: u64 = 100;

/// What [`pick`] decided.
#[derive(Debug, PartialEq)]
pub enum Pick<'a> {
    One(&'a Session),
    None,
    Several(usize),
}

/// The session of the process started at `start_ms`, beside the Kimi Code processes of the
/// same folder started at `starts` (epoch ms; its own may be among them): the one created
/// between its start and the next one's. An older neighbour with no session of its own yet
/// may have made any of them (its first prompt came later): then none is surely this one's.
pub fn pick<'a>(sessions: &'a [Session], starts: &[u64], start_ms: u64) -> Pick<'a> {
    let mut starts = starts.to_vec();
    starts.push(start_ms);
    let window = |from: u64| -> Vec<&'a Session> {
        let next = starts.iter().copied().filter(|s| *s > from).min();
        sessions
            .iter()
            .filter(|s| s.created_ms + SLACK_MS >= from && next.map_or(true, |n| s.created_ms < n))
            .collect()
    };
    let fits = window(start_ms);
    let unsure = starts
        .iter()
        .any(|o| *o < start_ms && window(*o).is_empty());
    match fits.as_slice() {
        [] => Pick::None,
        [one] if !unsure => Pick::One(one),
        many => Pick::Several(many.len()),
    }
}

/// Every session of the folders `cwds` under `root` (its `state.json` says which).
pub fn sessions(root: &Path, cwds: &[String]) -> Vec<Session> {
    let mut out = Vec::new();
    let Ok(folders) = std::fs::read_dir(root.join(SESSIONS)) else {
        return out;
    };
    for folder in folders.flatten() {
        if !folder.file_name().to_string_lossy().starts_with("wd_") {
            continue;
        }
        let Ok(entries) = std::fs::read_dir(folder.path()) else {
            continue;
        };
        for entry in entries.flatten() {
            let dir = entry.path();
            if let Some(s) = session_of(&dir).filter(|(cwd, _)| cwd_matches(cwd, cwds)) {
                out.push(Session {
                    dir,
                    created_ms: s.1,
                });
            }
        }
    }
    out
}

/// A session folder's `cwd` and `createdAt`, from its `state.json`.
fn session_of(dir: &Path) -> Option<(String, u64)> {
    let text = std::fs::read_to_string(dir.join("state.json")).ok()?;
    let v: Value = serde_json::from_str(&text).ok()?;
    Some((
        v.get("cwd")?.as_str()?.to_string(),
        v.get("createdAt")?.as_u64()?,
    ))
}

/// When the other Kimi Code processes in the same folder as `pid` started (epoch ms).
fn neighbour_starts(table: &ProcTable, pid: u32, cwds: &[String]) -> Vec<u64> {
    table
        .all()
        // The real client by its title, a fake one (tests, the demo) by its name.
        .filter(|p| {
            p.pid != pid && (p.name == TITLE || p.name == crate::events::AgentKind::Kimi.name())
        })
        .filter(|p| {
            procfs::cwd(p.pid)
                .and_then(|c| c.to_str().map(|c| cwd_matches(c, cwds)))
                .unwrap_or(false)
        })
        .filter_map(|p| procfs::start_ms(p.pid))
        .collect()
}

/// Finds this process's session and log.
pub fn locate(t: &Target, table: &ProcTable, steps: &mut Vec<String>) -> Found {
    let mut found = Found::default();
    let start_ms = procfs::start_ms(t.pid).unwrap_or(t.start * 1000);
    let all = sessions(t.root, t.cwds);
    let starts = neighbour_starts(table, t.pid, t.cwds);
    match pick(&all, &starts, start_ms) {
        Pick::One(s) => {
            found.via = Via::Cwd;
            found.session_id = s.dir.file_name().map(|n| n.to_string_lossy().into_owned());
            let wire = s.dir.join(WIRE);
            if wire.is_file() {
                found.transcript = Some(wire);
            } else {
                steps.push(format!("session {}: no {WIRE} yet", s.dir.display()));
            }
        }
        Pick::None => steps.push(format!(
            "session: none in {}/{SESSIONS} for this folder created since the process started \
             (it is made at the first prompt)",
            t.root.display()
        )),
        Pick::Several(n) => {
            found.via = Via::Ambiguous;
            steps.push(format!(
                "session: {n} session(s) of this folder created since this process started, \
                 beside an older Kimi Code process there without one; none is surely this one's"
            ));
        }
    }
    found
}

/// Whether `path` is a Kimi Code session log (`…/session_<uuid>/agents/main/wire.jsonl`).
pub fn is_wire(path: &Path) -> bool {
    path.ends_with(WIRE)
        && path
            .ancestors()
            .nth(3)
            .and_then(Path::file_name)
            .is_some_and(|n| n.to_string_lossy().starts_with("session_"))
}
