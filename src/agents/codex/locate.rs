//! Where a codex process keeps its transcript (docs/design.md#resolving-a-pane,
//! docs/resolver.md): the rollout file it holds open; else, when a shared app-server daemon
//! serves this `CODEX_HOME` (Codex 0.171), the thread the daemon holds for this TUI
//! ([`super::daemon`]), or `ambiguous` when that cannot be told; else the newest
//! `<CODEX_HOME>/sessions/YYYY/MM/DD/rollout-*.jsonl` whose `session_meta` names the same
//! cwd, which started after the process and which no other live process holds.

use std::path::{Path, PathBuf};

use chrono::{DateTime, Datelike, Duration, Utc};

use super::daemon::{self, Pick};
use super::home::session_id_of;
use crate::agents::locate::{cwd_matches, head_values, mtime_secs, str_at, Found, Target, Via};
use crate::proctree::{procfs, ProcTable};

fn is_rollout(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with("rollout-") && n.ends_with(".jsonl"))
}

/// True when the rollout's `session_meta.source` says a program drives the session (`exec`,
/// `mcp`, a subagent) rather than a person at the TUI. Reads only the head of the first line.
pub fn machine_driven(path: &Path) -> bool {
    use std::io::Read;
    let mut head = vec![0u8; 64 * 1024];
    let n = match std::fs::File::open(path).and_then(|mut f| f.read(&mut head)) {
        Ok(n) => n,
        Err(_) => return false,
    };
    let head = &head[..n];
    let first = head.split(|&b| b == b'\n').next().unwrap_or(head);
    if crate::agents::fields::scan_str(first, "type") != Some("session_meta") {
        return false;
    }
    let subagent = first
        .windows(br#""source":{"subagent""#.len())
        .any(|w| w == br#""source":{"subagent""#);
    subagent
        || matches!(
            crate::agents::fields::scan_str(first, "source"),
            Some("exec" | "mcp" | "subagent")
        )
}

/// Finds the rollout of the codex process `t`; `now` bounds the day folders searched; `table`
/// shows the other Codex clients, whose `CODEX_HOME` defaults under `home`.
pub fn locate(
    t: &Target,
    now: DateTime<Utc>,
    table: &ProcTable,
    home: &Path,
    steps: &mut Vec<String>,
) -> Found {
    let mut found = Found::default();
    let open = procfs::open_files(t.pid)
        .into_iter()
        .filter(|p| is_rollout(p))
        // A rollout under the agent's own home first (the newest), then any other.
        .max_by_key(|p| (p.starts_with(t.root), mtime_secs(p).unwrap_or(0)));
    if let Some(path) = open {
        found.session_id = session_id_of(&path);
        found.transcript = Some(path);
        found.via = Via::OpenFile;
        return found;
    }
    steps.push("open files: no rollout held open".to_string());
    if let Some(d) = daemon::find(t.root) {
        return from_daemon(t, now, &d, table, home, steps);
    }
    let held: Vec<PathBuf> = table
        .iter()
        .filter(|p| p.pid != t.pid && p.name == "codex")
        .flat_map(|p| procfs::open_files(p.pid))
        .filter(|p| is_rollout(p))
        .collect();
    match newest_for_cwd(t, now, &held) {
        Some(path) => {
            found.session_id = session_id_of(&path);
            found.transcript = Some(path);
            found.via = Via::Cwd;
        }
        None => steps.push(format!(
            "cwd: no rollout under {}/sessions for this cwd started after the agent",
            t.root.display()
        )),
    }
    found
}

/// The day folders a rollout of a process started at `start` can be in (names are local
/// time, so one day of slack each side), newest first, at most 400.
fn day_folders(root: &Path, start: u64, now: DateTime<Utc>) -> Vec<PathBuf> {
    let first = DateTime::<Utc>::from_timestamp(start as i64, 0).unwrap_or(now) - Duration::days(1);
    let mut day = now + Duration::days(1);
    let mut out = Vec::new();
    while day.date_naive() >= first.date_naive() && out.len() < 400 {
        out.push(root.join("sessions").join(format!(
            "{:04}/{:02}/{:02}",
            day.year(),
            day.month(),
            day.day()
        )));
        day -= Duration::days(1);
    }
    out
}

/// The pane's thread among the daemon's live threads (see [`daemon::pick`]).
fn from_daemon(
    t: &Target,
    now: DateTime<Utc>,
    d: &daemon::Daemon,
    table: &ProcTable,
    home: &Path,
    steps: &mut Vec<String>,
) -> Found {
    let mut found = Found::default();
    let mut starts = vec![procfs::start_ms(t.pid).unwrap_or(t.start.saturating_mul(1000))];
    starts.extend(daemon::client_starts(t.root, table, t.pid, home));
    // Subagent threads are the daemon's own work, never a TUI's.
    let threads: Vec<&daemon::Thread> = d
        .threads
        .iter()
        .filter(|th| !th.rollout.as_deref().is_some_and(machine_driven))
        .collect();
    let created: Vec<u64> = threads.iter().map(|th| th.created_ms).collect();
    steps.push(format!(
        "app-server daemon: pid {} holds {} thread(s) for {} Codex client(s) of this CODEX_HOME",
        d.pid,
        threads.len(),
        starts.len()
    ));
    // `codex resume <id>` / `codex fork <id>` name their thread, which is older than the TUI.
    let named = daemon::cmdline(t.pid)
        .iter()
        .find_map(|a| threads.iter().position(|th| th.id == *a));
    let pick = match named {
        Some(i) => {
            steps.push(format!(
                "thread: {} named on the command line",
                threads[i].id
            ));
            Pick::Mine(i)
        }
        None => daemon::pick(0, &starts, &created),
    };
    match pick {
        Pick::Mine(i) => {
            let th = threads[i];
            found.session_id = Some(th.id.clone());
            found.transcript = th
                .rollout
                .clone()
                .or_else(|| rollout_by_id(t.root, t.start, now, &th.id));
            found.via = Via::OpenFile;
            if found.transcript.is_none() {
                steps.push(format!(
                    "thread {}: no rollout yet (Codex writes it at the first prompt)",
                    th.id
                ));
            }
        }
        Pick::Ambiguous(ix) => {
            let ids: Vec<&str> = ix.iter().map(|&i| threads[i].id.as_str()).collect();
            steps.push(format!(
                "thread: ambiguous — {} could be this pane's or another client's (started too \
                 close together to tell)",
                ids.join(", ")
            ));
            found.via = Via::Ambiguous;
        }
        Pick::NoThread => steps.push(
            "thread: none of the daemon's threads was created after this client started"
                .to_string(),
        ),
    }
    found
}

/// The rollout named for thread `id` in the day folders since `start`.
fn rollout_by_id(root: &Path, start: u64, now: DateTime<Utc>, id: &str) -> Option<PathBuf> {
    let suffix = format!("-{id}.jsonl");
    day_folders(root, start, now)
        .into_iter()
        .find_map(|folder| {
            std::fs::read_dir(folder)
                .ok()?
                .flatten()
                .map(|e| e.path())
                .find(|p| is_rollout(p) && p.to_string_lossy().ends_with(&suffix))
        })
}

fn newest_for_cwd(t: &Target, now: DateTime<Utc>, held: &[PathBuf]) -> Option<PathBuf> {
    let mut candidates: Vec<(u64, PathBuf)> = Vec::new();
    for folder in day_folders(t.root, t.start, now) {
        let Ok(dir) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in dir.flatten() {
            let path = entry.path();
            if !is_rollout(&path) || held.contains(&path) {
                continue;
            }
            if let Some(m) = mtime_secs(&path).filter(|m| m + 1 >= t.start) {
                candidates.push((m, path));
            }
        }
    }
    candidates.sort_by(|a, b| b.cmp(a));
    candidates.into_iter().map(|(_, p)| p).find(|p| {
        // The first line is `session_meta`: `{timestamp, type, payload: {id, timestamp, cwd}}`.
        let Some(meta) = head_values(p, 1).into_iter().next() else {
            return false;
        };
        let cwd_ok = str_at(&meta, &["payload", "cwd"]).is_some_and(|c| cwd_matches(c, t.cwds));
        let started = str_at(&meta, &["payload", "timestamp"])
            .or_else(|| str_at(&meta, &["timestamp"]))
            .and_then(|s| DateTime::parse_from_rfc3339(s).ok())
            .map(|d| d.timestamp());
        cwd_ok && started.map_or(true, |s| s + 2 >= t.start as i64)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_id_comes_from_the_rollout_name() {
        let p = Path::new(
            "/h/sessions/2026/06/05/rollout-2026-06-05T04-58-20-019e9625-802f-7e91-840a-cfe88d14117a.jsonl",
        );
        assert_eq!(
            session_id_of(p).as_deref(),
            Some("019e9625-802f-7e91-840a-cfe88d14117a")
        );
        assert_eq!(session_id_of(Path::new("/h/rollout-x.jsonl")), None);
        assert!(is_rollout(p));
        assert!(!is_rollout(Path::new("/h/history.jsonl")));
    }

    #[test]
    fn exec_and_subagent_sessions_are_machine_driven() {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, line: &str| {
            let p = dir.path().join(name);
            std::fs::write(&p, format!("{line}\n{{\"type\":\"event_msg\"}}\n")).unwrap();
            p
        };
        let exec = write(
            "a",
            r#"{"timestamp":"t","type":"session_meta","payload":{"id":"x","cwd":"/w","source":"exec"}}"#,
        );
        let sub = write(
            "b",
            r#"{"type":"session_meta","payload":{"source":{"subagent":"review"}}}"#,
        );
        let cli = write("c", r#"{"type":"session_meta","payload":{"source":"cli"}}"#);
        let other = write("d", r#"{"type":"event_msg","payload":{"source":"exec"}}"#);
        assert!(machine_driven(&exec));
        assert!(machine_driven(&sub));
        assert!(!machine_driven(&cli));
        assert!(!machine_driven(&other));
        assert!(!machine_driven(&dir.path().join("missing")));
    }

    #[test]
    fn day_folders_span_process_start_to_today_with_slack() {
        let now = DateTime::parse_from_rfc3339("2026-06-05T10:00:00Z")
            .unwrap()
            .with_timezone(&Utc);
        let start = (now - Duration::days(2)).timestamp() as u64;
        let days = day_folders(Path::new("/h"), start, now);
        assert_eq!(days.first().unwrap(), Path::new("/h/sessions/2026/06/06"));
        assert_eq!(days.last().unwrap(), Path::new("/h/sessions/2026/06/02"));
        assert_eq!(days.len(), 5);
    }
}
