//! Where a Gemini CLI process keeps its chat log.
//!
//! `<GEMINI_CLI_HOME or HOME>/.gemini/tmp/<project>/chats/session-<UTC minute>-<id8>.jsonl`,
//! where `<project>` is the short name `projects.json` maps the working directory to. The file
//! is not held open, and every process in a folder writes to the same `chats/`, so a process
//! is matched to its session by time: each process writes its first session right after it
//! starts (`startTime` in the first line), and a later one on `/clear`. A `--session-id` or
//! `--resume <id>` on the command line names the session outright. When the times cannot
//! tell two processes' sessions apart the answer is `ambiguous`, never a neighbour's.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::agents::locate::{head_values, str_at, Found, Target, Via};
use crate::proctree::{procfs, ProcTable};

/// Slack between a process's start (whole seconds, from a boot time in whole seconds) and a
/// session's `startTime` (milliseconds).
const SLACK_MS: i64 = 1_500;

/// The `.gemini` folder of a process: `$GEMINI_CLI_HOME/.gemini`, else `<its HOME>/.gemini`.
pub fn gemini_dir(pid: u32, fallback_home: &Path) -> (PathBuf, &'static str) {
    let (root, from) =
        crate::agents::locate::agent_root(pid, "GEMINI_CLI_HOME", ".gemini", fallback_home);
    if from == "GEMINI_CLI_HOME" {
        (root.join(".gemini"), from)
    } else {
        (root, from)
    }
}

/// The project folder under `<root>/tmp` for working directory `cwd`: from `projects.json`,
/// else the folder whose `.project_root` names it.
pub fn project_dir(root: &Path, cwd: &str) -> Option<PathBuf> {
    let tmp = root.join("tmp");
    let registry = std::fs::read(root.join("projects.json"))
        .ok()
        .and_then(|b| serde_json::from_slice::<Value>(&b).ok());
    let cwd = cwd.trim_end_matches('/');
    if let Some(slug) = registry
        .as_ref()
        .and_then(|r| r.get("projects")?.get(cwd)?.as_str())
        .filter(|s| !s.is_empty() && !s.contains('/') && *s != "..")
    {
        return Some(tmp.join(slug));
    }
    std::fs::read_dir(&tmp).ok()?.flatten().find_map(|e| {
        let owner = std::fs::read_to_string(e.path().join(".project_root")).ok()?;
        (owner.trim().trim_end_matches('/') == cwd).then(|| e.path())
    })
}

/// One session log in a project's `chats/`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    pub path: PathBuf,
    /// The full id, or the 8 characters of the file name when the first line is gone.
    pub id: String,
    /// `startTime`, milliseconds since the epoch; for an orphan the start of the minute in
    /// its name.
    pub start_ms: i64,
    /// The file lost its metadata line: another process's startup deleted it as empty and
    /// its owner's next write created it again.
    pub orphan: bool,
}

/// The main sessions in `chats`, oldest first (subagents live in subfolders).
pub fn sessions(chats: &Path) -> Vec<Session> {
    let Ok(dir) = std::fs::read_dir(chats) else {
        return Vec::new();
    };
    let mut out: Vec<Session> = dir
        .flatten()
        .map(|e| e.path())
        .filter_map(|path| {
            let name = path.file_name()?.to_str()?;
            let stem = name.strip_prefix("session-")?.strip_suffix(".jsonl")?;
            // Only regular files: opening a FIFO would block the scan.
            if !std::fs::metadata(&path).is_ok_and(|m| m.is_file()) {
                return None;
            }
            let meta = head_values(&path, 1).into_iter().next()?;
            if let (Some(id), Some(start)) = (
                str_at(&meta, &["sessionId"]),
                str_at(&meta, &["startTime"])
                    .and_then(|s| chrono::DateTime::parse_from_rfc3339(s).ok()),
            ) {
                if str_at(&meta, &["kind"]).is_some_and(|k| k != "main") {
                    return None;
                }
                return Some(Session {
                    id: id.to_string(),
                    start_ms: start.timestamp_millis(),
                    path,
                    orphan: false,
                });
            }
            // `YYYY-MM-DDTHH-MM-<id8>`: the minute (UTC) the session started.
            let (minute, id8) = stem.rsplit_once('-')?;
            let start = chrono::NaiveDateTime::parse_from_str(minute, "%Y-%m-%dT%H-%M").ok()?;
            Some(Session {
                id: id8.to_string(),
                start_ms: start.and_utc().timestamp_millis(),
                path,
                orphan: true,
            })
        })
        .collect();
    out.sort_by(|a, b| (a.start_ms, &a.path).cmp(&(b.start_ms, &b.path)));
    out
}

/// A Gemini CLI process working in the same project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proc {
    pub pid: u32,
    /// Seconds since the epoch.
    pub start: u64,
    /// The session its command line names (`--session-id X`, `--resume X`).
    pub named: Option<String>,
    /// Started with `--resume`/`-r` without an id (`latest`, an index).
    pub resumed: bool,
}

impl Proc {
    /// Reads what the command line says about the session.
    pub fn from_argv(pid: u32, start: u64, argv: &[String]) -> Proc {
        let mut named = None;
        let mut resumed = false;
        let mut args = argv.iter().skip(1);
        while let Some(a) = args.next() {
            let (flag, inline) = match a.split_once('=') {
                Some((f, v)) => (f, Some(v.to_string())),
                None => (a.as_str(), None),
            };
            match flag {
                "--session-id" | "--resume" | "-r" => {
                    let value = inline.or_else(|| args.next().cloned()).unwrap_or_default();
                    if looks_like_id(&value) {
                        named = Some(value);
                    } else if flag != "--session-id" {
                        resumed = true;
                    }
                }
                _ => {}
            }
        }
        Proc {
            pid,
            start,
            named,
            resumed,
        }
    }
}

fn looks_like_id(v: &str) -> bool {
    v.len() >= 8
        && v.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        && v.chars().any(|c| c.is_ascii_digit())
}

/// What the times say about one process's session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pick {
    Own(PathBuf, String),
    Ambiguous(String),
    None,
}

/// How long a process may take to write its first session (a loaded machine included).
const INIT_MS: i64 = 20_000;
/// A first session later than this after the process started is not taken as its own.
const LATE_MS: i64 = 30_000;

/// The session of process `me` among `procs` (every live Gemini CLI process in the project,
/// `me` included) and the project's `sessions` (sorted by start). Pure.
///
/// A session belongs to the latest process started before it (a process writes its first
/// session right after starting). Doubt makes it `ambiguous`: a later session (`/clear`) that
/// any earlier process could have started, or a first session while the process started
/// before it has none yet and may still be starting.
pub fn pick(me: u32, procs: &[Proc], sessions: &[Session]) -> Pick {
    let mut procs: Vec<&Proc> = procs.iter().collect();
    procs.sort_by_key(|p| (p.start, p.pid));
    let named = |p: &Proc| {
        let id = p.named.as_deref()?;
        sessions
            .iter()
            .filter(|s| s.id == id || (s.orphan && id.starts_with(&s.id)))
            .max_by_key(|s| s.start_ms)
    };
    let Some(me_proc) = procs.iter().find(|p| p.pid == me) else {
        return Pick::None;
    };
    if let Some(s) = named(me_proc) {
        return Pick::Own(s.path.clone(), "the session its command line names".into());
    }
    // Sessions a command line names belong to that process alone.
    let taken: Vec<&Path> = procs
        .iter()
        .filter_map(|p| named(p))
        .map(|s| s.path.as_path())
        .collect();
    let timed: Vec<&Proc> = procs
        .iter()
        .copied()
        .filter(|p| named(p).is_none())
        .collect();
    let pool: Vec<&Session> = sessions
        .iter()
        .filter(|s| !taken.contains(&s.path.as_path()) && !s.orphan)
        .collect();
    let Some(me_at) = timed.iter().position(|p| p.pid == me) else {
        return Pick::None;
    };
    let start_ms = |i: usize| timed[i].start as i64 * 1000 - SLACK_MS;
    if timed[me_at].resumed {
        // A resumed session keeps its old file and start: only a lone process can claim it.
        return match (timed.len(), newest_written_since(&pool, start_ms(me_at))) {
            (1, Some(s)) => Pick::Own(
                s.path.clone(),
                "the session written since it resumed".into(),
            ),
            (1, None) => Pick::None,
            _ => Pick::Ambiguous(
                "another Gemini CLI runs in this folder and this one resumed a session".into(),
            ),
        };
    }
    // Owner of each session: the latest process started before it.
    let owner: Vec<Option<usize>> = pool
        .iter()
        .map(|s| (0..timed.len()).rev().find(|&i| start_ms(i) <= s.start_ms))
        .collect();
    let mut owned: Vec<Vec<usize>> = (0..timed.len())
        .map(|i| (0..pool.len()).filter(|&j| owner[j] == Some(i)).collect())
        .collect();
    // A process's first session long after its start is not its first: that one is gone
    // (removed while empty) and this may be a process's that has exited since.
    let mut late = vec![false; timed.len()];
    for i in 0..timed.len() {
        if owned[i]
            .first()
            .is_some_and(|&j| pool[j].start_ms - start_ms(i) > LATE_MS)
        {
            owned[i].clear();
            late[i] = true;
        }
    }
    let Some(&newest) = owned[me_at].last() else {
        return match orphan_of(me_at, &timed, &pool, sessions, &owned) {
            Pick::None if late[me_at] => Pick::Ambiguous(
                "the only session since this process started came too late to be its first; it \
                 may be another's"
                    .into(),
            ),
            pick => pick,
        };
    };
    let first = owned[me_at].first() == Some(&newest);
    if !first {
        if (0..timed.len()).any(|i| i != me_at && start_ms(i) <= pool[newest].start_ms) {
            return Pick::Ambiguous(
                "a newer session in this folder could be this process's or another's".into(),
            );
        }
    } else if me_at > 0
        && owned[me_at - 1].is_empty()
        && !sessions
            .iter()
            .any(|s| s.orphan && start_ms(me_at - 1) < s.start_ms + 60_000)
        && pool[newest].start_ms - start_ms(me_at - 1) < INIT_MS
    {
        return Pick::Ambiguous(
            "another Gemini CLI in this folder started just before and has no session yet".into(),
        );
    }
    // A later session owned by a process started after me could be mine (a `/clear`).
    let later_rival = (0..pool.len()).any(|j| {
        j > newest && owner[j].is_some_and(|o| o != me_at && owned[o].first() != Some(&j))
    });
    if later_rival {
        return Pick::Ambiguous(
            "a newer session in this folder could be this process's or another's".into(),
        );
    }
    Pick::Own(pool[newest].path.clone(), "the session it started".into())
}

/// A process with no session of its own: its file lost its first line (another process's
/// startup removed it while it was still empty) and came back without it. Only a process
/// without a session can own such a file.
fn orphan_of(
    me_at: usize,
    timed: &[&Proc],
    pool: &[&Session],
    sessions: &[Session],
    owned: &[Vec<usize>],
) -> Pick {
    let my_start = timed[me_at].start as i64 * 1000 - SLACK_MS;
    // A session another process took could be mine: it came soon after I started, or it is
    // not that process's first.
    let contested = (0..timed.len()).filter(|&i| i != me_at).any(|i| {
        owned[i].iter().enumerate().any(|(n, &j)| {
            pool[j].start_ms >= my_start && (n > 0 || pool[j].start_ms - my_start < INIT_MS)
        })
    });
    if contested {
        return Pick::Ambiguous(
            "another Gemini CLI in this folder started a session this one could have started"
                .into(),
        );
    }
    let sessionless: Vec<usize> = (0..timed.len()).filter(|&i| owned[i].is_empty()).collect();
    let candidates: Vec<&Session> = sessions
        .iter()
        .filter(|s| s.orphan)
        // The name's minute: the session started within it, after the process.
        .filter(|s| my_start < s.start_ms + 60_000)
        .collect();
    match (candidates.as_slice(), sessionless.len()) {
        ([], _) => Pick::None,
        ([only], 1) => Pick::Own(
            only.path.clone(),
            "the session it started (its first line was removed by another process)".into(),
        ),
        _ => Pick::Ambiguous(
            "several Gemini CLI processes in this folder have no session of their own".into(),
        ),
    }
}

fn newest_written_since<'a>(pool: &[&'a Session], since_ms: i64) -> Option<&'a Session> {
    pool.iter()
        .copied()
        .filter_map(|s| {
            let m = std::fs::metadata(&s.path).ok()?.modified().ok()?;
            let ms = m.duration_since(std::time::UNIX_EPOCH).ok()?.as_millis() as i64;
            (ms >= since_ms).then_some((ms, s))
        })
        .max_by_key(|(ms, _)| *ms)
        .map(|(_, s)| s)
}

/// Every live Gemini CLI session owner (`GEMINI_CLI_NO_RELAUNCH=true` in its environment,
/// set on the child the launcher starts) working in `cwd`, `me` included.
fn peers(table: &ProcTable, me: &Target, cwd: &str) -> Vec<Proc> {
    let argv_of = |pid: u32| {
        table
            .get(pid)
            .map(|p| p.argv.clone())
            .filter(|a| !a.is_empty())
            .or_else(|| procfs::cmdline(pid))
            .unwrap_or_default()
    };
    let mut out = vec![Proc::from_argv(me.pid, me.start, &argv_of(me.pid))];
    for p in table.all() {
        if p.pid == me.pid || p.name != "node" {
            continue;
        }
        let owner =
            procfs::environ(p.pid).is_some_and(|e| e.get("GEMINI_CLI_NO_RELAUNCH") == Some("true"));
        let same = procfs::cwd(p.pid).is_some_and(|c| c.to_str() == Some(cwd));
        if owner && same {
            out.push(Proc::from_argv(p.pid, p.start, &argv_of(p.pid)));
        }
    }
    out
}

/// Finds the chat log of the Gemini CLI process `t`.
pub fn locate(t: &Target, table: &ProcTable, steps: &mut Vec<String>) -> Found {
    let mut found = Found::default();
    let Some(cwd) = t.cwds.first() else {
        steps.push("project: the agent's working directory is unknown".into());
        return found;
    };
    let Some(project) = project_dir(t.root, cwd) else {
        steps.push(format!(
            "project: {cwd} is not in {}/projects.json",
            t.root.display()
        ));
        return found;
    };
    let chats = project.join("chats");
    let procs = peers(table, t, cwd);
    steps.push(format!(
        "project: {} ({} Gemini CLI process{} in this folder)",
        chats.display(),
        procs.len(),
        if procs.len() == 1 { "" } else { "es" }
    ));
    match pick(t.pid, &procs, &sessions(&chats)) {
        Pick::Own(path, why) => {
            steps.push(format!("session: {why}"));
            found.session_id = session_id(&path);
            found.transcript = Some(path);
            found.via = Via::Cwd;
        }
        Pick::Ambiguous(why) => {
            steps.push(format!("session: ambiguous ({why})"));
            found.via = Via::Ambiguous;
        }
        Pick::None => steps.push("session: none started since the process did".into()),
    }
    found
}

/// The session id in a log's first line, else the 8 characters its name ends with.
fn session_id(path: &Path) -> Option<String> {
    let meta = head_values(path, 1).into_iter().next();
    if let Some(id) = meta.as_ref().and_then(|m| str_at(m, &["sessionId"])) {
        return Some(id.to_string());
    }
    let stem = path.file_stem()?.to_str()?;
    Some(stem.rsplit_once('-')?.1.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(name: &str, start_ms: i64) -> Session {
        Session {
            path: PathBuf::from(name),
            id: format!("{name}-0000-1111"),
            start_ms,
            orphan: false,
        }
    }

    fn p(pid: u32, start: u64) -> Proc {
        Proc {
            pid,
            start,
            named: None,
            resumed: false,
        }
    }

    fn path_of(pick: Pick) -> Option<String> {
        match pick {
            Pick::Own(p, _) => Some(p.to_string_lossy().into_owned()),
            _ => None,
        }
    }

    #[test]
    fn one_process_takes_its_newest_session() {
        let sessions = [s("old", 1_000), s("a", 100_500), s("cleared", 200_000)];
        assert_eq!(
            path_of(pick(1, &[p(1, 100)], &sessions)).as_deref(),
            Some("cleared")
        );
        assert_eq!(pick(1, &[p(1, 300)], &sessions), Pick::None);
    }

    #[test]
    fn two_processes_started_apart_each_get_their_own() {
        // A starts at 100 s and writes at 113 s; B starts at 120 s and writes at 131 s.
        let sessions = [s("a", 113_000), s("b", 131_000)];
        let procs = [p(1, 100), p(2, 120)];
        assert_eq!(path_of(pick(1, &procs, &sessions)).as_deref(), Some("a"));
        assert_eq!(path_of(pick(2, &procs, &sessions)).as_deref(), Some("b"));
    }

    #[test]
    fn overlapping_starts_are_ambiguous_for_both() {
        // B started before A's session appeared: either session could be either's.
        let sessions = [s("x", 113_000), s("y", 114_000)];
        let procs = [p(1, 100), p(2, 105)];
        assert!(matches!(pick(1, &procs, &sessions), Pick::Ambiguous(_)));
        assert!(matches!(pick(2, &procs, &sessions), Pick::Ambiguous(_)));
    }

    #[test]
    fn a_later_session_any_process_could_have_started_is_ambiguous() {
        let sessions = [s("a", 113_000), s("b", 131_000), s("c", 300_000)];
        let procs = [p(1, 100), p(2, 120)];
        assert!(matches!(pick(1, &procs, &sessions), Pick::Ambiguous(_)));
        assert!(matches!(pick(2, &procs, &sessions), Pick::Ambiguous(_)));
    }

    #[test]
    fn a_process_whose_empty_session_a_later_one_removed_has_none_until_it_writes_again() {
        // B's startup deletes A's still-empty session; A's next write recreates the file
        // without its first line.
        let procs = [p(1, 100), p(2, 130)];
        let sessions = [s("b", 141_000)];
        assert_eq!(pick(1, &procs, &sessions), Pick::None);
        assert_eq!(path_of(pick(2, &procs, &sessions)).as_deref(), Some("b"));
        let mut orphan = s("a", 100_000 - 40_000);
        orphan.orphan = true;
        let sessions = [orphan, s("b", 141_000)];
        assert_eq!(path_of(pick(1, &procs, &sessions)).as_deref(), Some("a"));
        assert_eq!(path_of(pick(2, &procs, &sessions)).as_deref(), Some("b"));
    }

    #[test]
    fn real_chats_with_a_recreated_log_each_go_to_their_own_process() {
        // Gemini CLI 0.61.0: A started 22:47:59, B at 22:48:31; B's startup deleted A's empty
        // log, and A's next prompt wrote it again without its first line.
        let chats = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/real-clients/gemini-0.61.0/orphan-chats");
        let found = sessions(&chats);
        assert_eq!(found.len(), 2, "{found:?}");
        let orphan = found.iter().find(|s| s.orphan).expect("the recreated log");
        assert_eq!(orphan.id, "8a3e6e21");
        let at = |t: &str| chrono::DateTime::parse_from_rfc3339(t).unwrap().timestamp() as u64;
        let procs = [
            p(5898, at("2026-12-01T22:47:59Z")),
            p(7386, at("2026-12-01T22:48:31Z")),
        ];
        let name = |pick: Pick| {
            path_of(pick).map(|p| p.rsplit('-').next().unwrap_or_default().to_string())
        };
        assert_eq!(
            name(pick(5898, &procs, &found)).as_deref(),
            Some("8a3e6e21.jsonl")
        );
        assert_eq!(
            name(pick(7386, &procs, &found)).as_deref(),
            Some("d8713335.jsonl")
        );
    }

    #[test]
    fn a_fifo_in_chats_is_skipped_not_opened() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("session-2026-12-01T22-48-deadbeef.jsonl");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert!(sessions(dir.path()).is_empty());
    }

    #[test]
    fn a_session_long_after_a_process_started_is_not_taken_for_its_first() {
        // A's empty log was removed by B, and B has exited: B's log is not A's.
        let procs = [p(1, 100)];
        let sessions = [s("b", 141_000)];
        assert!(matches!(pick(1, &procs, &sessions), Pick::Ambiguous(_)));
        let mut orphan = s("a", 100_000);
        orphan.orphan = true;
        let with_orphan = [orphan, s("b", 141_000)];
        assert_eq!(path_of(pick(1, &procs, &with_orphan)).as_deref(), Some("a"));
    }

    #[test]
    fn a_session_named_on_the_command_line_wins() {
        let sessions = [s("x", 113_000), s("y", 114_000)];
        let mut a = p(1, 100);
        a.named = Some("y-0000-1111".into());
        let procs = [a, p(2, 105)];
        assert_eq!(path_of(pick(1, &procs, &sessions)).as_deref(), Some("y"));
        assert_eq!(path_of(pick(2, &procs, &sessions)).as_deref(), Some("x"));
    }

    #[test]
    fn command_lines_name_sessions() {
        let argv = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let id = "583b8a73-ebab-412b-ac11-8b561b8135d2";
        let p1 = Proc::from_argv(1, 0, &argv(&["node", "gemini", "--session-id", id]));
        assert_eq!(p1.named.as_deref(), Some(id));
        let p2 = Proc::from_argv(1, 0, &argv(&["node", "gemini", &format!("--resume={id}")]));
        assert_eq!(p2.named.as_deref(), Some(id));
        let p3 = Proc::from_argv(1, 0, &argv(&["node", "gemini", "-r", "latest"]));
        assert!(p3.resumed && p3.named.is_none());
        let p4 = Proc::from_argv(1, 0, &argv(&["node", "gemini", "-r", "5"]));
        assert!(p4.resumed && p4.named.is_none());
    }

    #[test]
    fn project_folder_comes_from_the_registry_or_the_marker() {
        let root = tempfile::tempdir().unwrap();
        std::fs::write(
            root.path().join("projects.json"),
            r#"{"projects":{"/w/proj":"proj-1"}}"#,
        )
        .unwrap();
        assert_eq!(
            project_dir(root.path(), "/w/proj"),
            Some(root.path().join("tmp/proj-1"))
        );
        std::fs::create_dir_all(root.path().join("tmp/other")).unwrap();
        std::fs::write(root.path().join("tmp/other/.project_root"), "/w/other").unwrap();
        assert_eq!(
            project_dir(root.path(), "/w/other"),
            Some(root.path().join("tmp/other"))
        );
        assert_eq!(project_dir(root.path(), "/w/none"), None);
    }
}
