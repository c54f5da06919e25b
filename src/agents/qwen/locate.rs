//! Where a Qwen Code process keeps its chat log (docs/agents/qwen.md).
//!
//! The process that owns the session writes `<home>/sessions/<pid>.json` (`{pid, procStart:
//! "<boot_id>:<start ticks>", sessionId, cwd, startedAt, kind: "tui", …}`) while it runs and
//! deletes it on exit; `/clear` patches a new `sessionId` into it. The log is
//! `<runtime root>/projects/<cwd, every non-alphanumeric → '-'>/chats/<sessionId>.jsonl`.
//! `<home>` is `QWEN_HOME`, else `<HOME>/.qwen`; the runtime root is `QWEN_RUNTIME_DIR`, else
//! the user's `advanced.runtimeOutputDir` setting, else `<home>`.
//!
//! The process chain in a pane is `node …/.bin/qwen` (the launcher) → `node --expose-gc
//! …/@qwen-code/qwen-code/cli.js` → the same again with `QWEN_CODE_NO_RELAUNCH=true`: the
//! innermost owns the session and is the pid in the record's name. Every comm is `node`.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::agents::locate::{Found, Target, Via};
use crate::proctree::procfs;

/// The folder under the home holding one record per live session process.
pub const SESSIONS_DIR: &str = "sessions";

/// The home of a qwen process: its `QWEN_HOME`, else `<its HOME>/.qwen`, else
/// `fallback_home/.qwen`. The second value says which.
pub fn qwen_home(pid: u32, fallback_home: &Path) -> (PathBuf, &'static str) {
    crate::agents::locate::agent_root(pid, "QWEN_HOME", ".qwen", fallback_home)
}

/// `$QWEN_HOME/sessions/<pid>.json`, as 0.24.4 writes it (unknown fields ignored).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionRecord {
    pub pid: u32,
    /// `<boot_id>:<start ticks>`; `null` where the client could not read it (not Linux).
    #[serde(default)]
    pub proc_start: Option<String>,
    pub session_id: String,
    pub cwd: String,
    /// Unix milliseconds.
    #[serde(default)]
    pub started_at: Option<u64>,
    #[serde(default)]
    pub kind: Option<String>,
}

/// Parses a session record.
pub fn parse_record(text: &str) -> Option<SessionRecord> {
    serde_json::from_str(text).ok()
}

/// The session record of process `pid` under `home`, if it wrote one.
pub fn read_record(home: &Path, pid: u32) -> Option<SessionRecord> {
    let path = home.join(SESSIONS_DIR).join(format!("{pid}.json"));
    parse_record(&std::fs::read_to_string(path).ok()?)
}

/// The start token Qwen Code writes for a process: `<boot_id>:<field 22 of its stat>`.
pub fn proc_start_token(boot_id: &str, stat: &str) -> Option<String> {
    let ticks = procfs::parse_start_ticks(stat)?;
    Some(format!("{}:{ticks}", boot_id.trim()))
}

/// Whether a record's `procStart` names the process whose `stat` line this is, on the machine
/// whose boot id this is: a record left by an earlier process with a reused pid (or from
/// before a reboot) does not. A record without a token (`null`) is taken, as the client does.
pub fn same_process(record: &SessionRecord, boot_id: &str, stat: &str) -> bool {
    match &record.proc_start {
        None => true,
        Some(token) => proc_start_token(boot_id, stat).as_deref() == Some(token.as_str()),
    }
}

/// The project folder name for a working directory: every character that is not an ASCII
/// letter or digit becomes `-`, one per UTF-16 unit (`Ü` → `-`, an emoji → `--`). 0.24.4's
/// `sanitizeCwd` is Claude Code's rule exactly, so this is that one implementation (to move
/// below the agents when the adapters share a home).
pub fn encode_cwd(cwd: &str) -> String {
    crate::agents::claude::locate::encode_cwd(cwd)
}

/// The chat log of session `session_id` started in `cwd`, under the runtime root.
pub fn chat_path(runtime_root: &Path, cwd: &str, session_id: &str) -> PathBuf {
    runtime_root
        .join("projects")
        .join(encode_cwd(cwd))
        .join("chats")
        .join(format!("{session_id}.jsonl"))
}

/// The folder holding a project's chat logs (to watch).
pub fn chats_dir(runtime_root: &Path, cwd: &str) -> PathBuf {
    runtime_root
        .join("projects")
        .join(encode_cwd(cwd))
        .join("chats")
}

/// Where runtime output (projects, chats) goes: `QWEN_RUNTIME_DIR` (from the process's
/// environment), else the `advanced.runtimeOutputDir` setting, else the home. `~` is the
/// user's home; a relative path is taken from `cwd`.
pub fn runtime_root(
    runtime_dir_env: Option<&str>,
    setting: Option<&str>,
    home: &Path,
    user_home: &Path,
    cwd: &Path,
) -> PathBuf {
    let pick = runtime_dir_env
        .filter(|d| !d.is_empty())
        .or(setting.filter(|d| !d.is_empty()));
    let Some(dir) = pick else {
        return home.to_path_buf();
    };
    let expanded = if dir == "~" {
        user_home.to_path_buf()
    } else if let Some(rest) = dir.strip_prefix("~/") {
        user_home.join(rest)
    } else {
        PathBuf::from(dir)
    };
    if expanded.is_absolute() {
        expanded
    } else {
        cwd.join(expanded)
    }
}

/// `advanced.runtimeOutputDir` of a `settings.json`.
pub fn runtime_setting(settings_json: &str) -> Option<String> {
    let v: serde_json::Value = serde_json::from_str(settings_json).ok()?;
    Some(
        v.get("advanced")?
            .get("runtimeOutputDir")?
            .as_str()?
            .to_string(),
    )
}

/// The chat log of the live qwen process `t.pid` under its home `t.root`: its session record,
/// checked against the process (boot id and start ticks), then the log it names. Read afresh
/// at each resolution: `/clear` patches a new `sessionId` into the record. No log yet (a
/// fresh session writes it at the first prompt) is no transcript, never a neighbour's.
pub fn locate(t: &Target, steps: &mut Vec<String>) -> Found {
    let path = t.root.join(SESSIONS_DIR).join(format!("{}.json", t.pid));
    let record = match std::fs::read_to_string(&path) {
        Ok(text) => parse_record(&text),
        Err(e) => {
            steps.push(format!("session record: none at {} ({e})", path.display()));
            return Found::default();
        }
    };
    let Some(record) = record else {
        steps.push(format!(
            "session record: {} is not one (ignored)",
            path.display()
        ));
        return Found::default();
    };
    let boot_id = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap_or_default();
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", t.pid)).unwrap_or_default();
    if record.pid != t.pid || !same_process(&record, &boot_id, &stat) {
        steps.push(format!(
            "session record: {} belongs to an earlier process with this PID; ignored",
            path.display()
        ));
        return Found::default();
    }
    steps.push(format!(
        "session record: {} → sessionId {}",
        path.display(),
        record.session_id
    ));
    let log = chat_path(
        &runtime_root_of(t.pid, t.root, &record.cwd),
        &record.cwd,
        &record.session_id,
    );
    let mut found = Found {
        session_id: Some(record.session_id.clone()),
        ..Found::default()
    };
    if log.is_file() {
        found.transcript = Some(log);
        found.via = Via::SessionRecord;
    } else {
        steps.push(format!(
            "transcript: none yet at {} (nothing asked since it started)",
            log.display()
        ));
    }
    found
}

/// Where the qwen process `pid` with home `home` writes its projects (see [`runtime_root`]).
pub fn runtime_root_of(pid: u32, home: &Path, cwd: &str) -> PathBuf {
    let env = procfs::environ(pid).unwrap_or_default();
    let user_home = env
        .get("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| home.parent().unwrap_or(home).to_path_buf());
    let setting = std::fs::read_to_string(home.join("settings.json"))
        .ok()
        .and_then(|s| runtime_setting(&s));
    runtime_root(
        env.get("QWEN_RUNTIME_DIR"),
        setting.as_deref(),
        home,
        &user_home,
        Path::new(cwd),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    const FIXTURES: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/real-clients/qwen-0.24.4"
    );

    fn fixture(rel: &str) -> String {
        std::fs::read_to_string(Path::new(FIXTURES).join(rel)).expect(rel)
    }

    fn argv(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn the_cwd_encoding_matches_the_folders_the_client_made() {
        for (cwd, id) in [
            (
                "/tmp/qwenrec/work/demo",
                "9027fcf2-d57d-45b6-b91e-ffb47ca01e86",
            ),
            (
                "/tmp/qwenrec/work/Über proj.v2",
                "f740fdfe-0273-41be-aa4a-ece8b2dd6000",
            ),
        ] {
            let path = chat_path(Path::new(FIXTURES), cwd, id);
            assert!(path.is_file(), "{}", path.display());
        }
        assert_eq!(
            encode_cwd("/tmp/qwenrec/work/Über proj.v2"),
            "-tmp-qwenrec-work--ber-proj-v2"
        );
        // Outside the basic plane a character is two UTF-16 units, so two dashes.
        assert_eq!(encode_cwd("/a/😀b"), "-a---b");
    }

    #[test]
    fn the_recorded_session_record_names_the_log_and_its_process() {
        let r = parse_record(&fixture("process/sessions-2464.json")).expect("record");
        assert_eq!(r.pid, 2464);
        assert_eq!(r.session_id, "f740fdfe-0273-41be-aa4a-ece8b2dd6000");
        assert_eq!(r.cwd, "/tmp/qwenrec/work/Über proj.v2");
        assert_eq!(r.kind.as_deref(), Some("tui"));
        let stat = fixture("process/proc-2464-stat.txt");
        let boot = fixture("process/boot_id.txt");
        assert_eq!(
            proc_start_token(&boot, &stat).as_deref(),
            r.proc_start.as_deref()
        );
        assert!(same_process(&r, &boot, &stat));
        // Another boot, or a later process with the same pid: not this record's.
        assert!(!same_process(
            &r,
            "00000000-0000-0000-0000-000000000000",
            &stat
        ));
        let later = stat.replacen(" 1328270 ", " 1328999 ", 1);
        assert_ne!(later, stat);
        assert!(!same_process(&r, &boot, &later));
    }

    #[test]
    fn a_record_without_a_start_token_is_taken() {
        let mut r = parse_record(&fixture("process/sessions-27728.json")).expect("record");
        r.proc_start = None;
        assert!(same_process(&r, "x", "1 (node) S"));
    }

    #[test]
    fn the_process_walk_hands_over_to_the_innermost_cli_which_owns_the_session() {
        // The recorded chain: bash → node …/.bin/qwen → node cli.js → node cli.js (with
        // QWEN_CODE_NO_RELAUNCH=true, the pid in the session record's name).
        let tree = fixture("process/ps-tree.txt");
        let procs = tree.lines().skip(1).map(|l| {
            let mut w = l.split_whitespace();
            let pid: u32 = w.next().unwrap().parse().unwrap();
            let ppid: u32 = w.next().unwrap().parse().unwrap();
            let cmd = l.split("\\_ ").last().unwrap_or(l);
            let argv: Vec<String> = if cmd.contains("bash") {
                vec!["bash".into()]
            } else {
                argv(cmd)
            };
            crate::proctree::ProcInfo {
                pid,
                ppid: Some(ppid),
                name: "node".into(),
                exe: None,
                argv,
                start: 1,
            }
        });
        let table = crate::proctree::ProcTable::from_procs(procs);
        let packages = crate::agents::Agent::packages(&super::super::Qwen);
        let matcher = crate::proctree::Matcher::default().with_packages(
            packages
                .iter()
                .map(|p| (*p, crate::events::AgentKind::Qwen))
                .collect(),
        );
        let m = table.find_agent(27673, &matcher).expect("an agent");
        assert_eq!((m.kind, m.pid), (crate::events::AgentKind::Qwen, 2464));
        assert_eq!(m.chain, vec![27673, 2272, 2302, 2464]);
        let env: HashMap<String, String> = fixture("process/proc-2464-environ.txt")
            .lines()
            .filter_map(|l| l.split_once('='))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        assert_eq!(
            env.get("QWEN_CODE_NO_RELAUNCH").map(String::as_str),
            Some("true")
        );
        assert_eq!(
            env.get("QWEN_HOME").map(String::as_str),
            Some("/tmp/qwenrec/home/.qwen")
        );
    }

    #[test]
    fn the_runtime_root_follows_env_then_setting_then_home() {
        let (home, user, cwd) = (Path::new("/h/.qwen"), Path::new("/h"), Path::new("/w"));
        assert_eq!(runtime_root(None, None, home, user, cwd), home);
        assert_eq!(
            runtime_root(Some("/r"), Some("/s"), home, user, cwd),
            Path::new("/r")
        );
        assert_eq!(
            runtime_root(None, Some("~/out"), home, user, cwd),
            Path::new("/h/out")
        );
        assert_eq!(
            runtime_root(Some(""), Some(".qwen"), home, user, cwd),
            Path::new("/w/.qwen")
        );
        assert_eq!(
            runtime_setting(r#"{"advanced":{"runtimeOutputDir":"~/o"}}"#).as_deref(),
            Some("~/o")
        );
        assert_eq!(runtime_setting(r#"{"model":{"name":"m"}}"#), None);
    }
}
