//! A fake coding agent, for integration tests and `agentpane demo`.
//!
//! When the agentpane binary runs under the name `claude` or `codex` (a symlink or copy) with
//! `AGENTPANE_FAKE_AGENT` set, [`crate::run`] calls [`run`] instead of the CLI. The fake then
//! leaves the same traces on disk as the real agent, so the resolver finds it the real way:
//!
//! - claude: `<CLAUDE_CONFIG_DIR or ~/.claude>/sessions/<pid>.json` (`pid, sessionId, cwd,
//!   startedAt, procStart, …`, removed on clean exit) and the transcript
//!   `projects/<encoded cwd>/<sessionId>.jsonl`, appended line by line (opened per write like
//!   Claude Code does, or held open with `AGENTPANE_FAKE_HOLD=1`);
//! - codex: `<CODEX_HOME or ~/.codex>/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl`, held open
//!   for the whole run, starting with a `session_meta` line naming its cwd.
//!
//! Lines come from a fixture (the JSONL file named by `AGENTPANE_FAKE_AGENT`; `none` or empty
//! for no fixture). Each line is rewritten as it is written: top-level `timestamp` (and Codex
//! `payload.timestamp`) become now, `sessionId`/`cwd` become the fake's own. Pacing:
//!
//! - `AGENTPANE_FAKE_START=N|all`: lines written at start (default `all`, or `0` with a pace);
//! - `AGENTPANE_FAKE_PACE_MS=MS`: then one more line every MS milliseconds;
//! - stdin commands, one per line: `step [N]` (next N lines, default 1), `all`, `line JSON`
//!   (append this line, rewritten), `quit`.
//!
//! - `AGENTPANE_FAKE_SCREEN=FILE`: printed to the terminal after the start lines, so the pane
//!   shows what the real agent would (a permission dialog, a busy footer).
//!
//! The fake stays alive until `quit`, stdin EOF, or a signal.

use std::ffi::OsStr;
use std::fs::{File, OpenOptions};
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result};
use chrono::{SecondsFormat, Utc};
use serde_json::{json, Value};

use crate::agents::claude::locate::encode_cwd;
use crate::events::AgentKind;
use crate::paths;

/// The variable that turns the binary into a fake agent (its value: the fixture path).
pub const ENV: &str = "AGENTPANE_FAKE_AGENT";

/// A file whose bytes the fake prints after its start lines (a recorded screen).
pub const SCREEN_ENV: &str = "AGENTPANE_FAKE_SCREEN";

/// Which fake to run when the binary was started as `claude`/`codex` with [`ENV`] set.
pub fn requested(argv0: &OsStr) -> Option<AgentKind> {
    std::env::var_os(ENV)?;
    let name = Path::new(argv0).file_name()?.to_str()?;
    match name {
        "claude" => Some(AgentKind::Claude),
        "codex" => Some(AgentKind::Codex),
        _ => None,
    }
}

/// Runs the fake agent to the end; returns the exit code.
pub fn run(kind: AgentKind) -> i32 {
    match run_inner(kind) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("fake {kind}: {e:#}");
            2
        }
    }
}

/// One stdin command.
#[derive(Debug, PartialEq, Eq)]
enum Command {
    Step(usize),
    All,
    Line(String),
    Quit,
}

fn parse_command(line: &str) -> Option<Command> {
    let line = line.trim();
    let (word, rest) = line.split_once(' ').unwrap_or((line, ""));
    match word {
        "step" if rest.trim().is_empty() => Some(Command::Step(1)),
        "step" => rest.trim().parse().ok().map(Command::Step),
        "all" => Some(Command::All),
        "line" if !rest.trim().is_empty() => Some(Command::Line(rest.trim().to_string())),
        "quit" | "exit" => Some(Command::Quit),
        _ => None,
    }
}

fn run_inner(kind: AgentKind) -> Result<()> {
    let fixture = std::env::var(ENV).unwrap_or_default();
    let lines: Vec<String> = if fixture.is_empty() || fixture == "none" || fixture == "1" {
        Vec::new()
    } else {
        std::fs::read_to_string(&fixture)
            .with_context(|| format!("cannot read fixture {fixture}"))?
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(str::to_string)
            .collect()
    };
    let pace = std::env::var("AGENTPANE_FAKE_PACE_MS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .filter(|ms| *ms > 0)
        .map(Duration::from_millis);
    let start = match std::env::var("AGENTPANE_FAKE_START").ok().as_deref() {
        Some("all") => lines.len(),
        Some(n) => n.parse().unwrap_or(0),
        None if pace.is_some() => 0,
        None => lines.len(),
    };
    let hold = std::env::var("AGENTPANE_FAKE_HOLD").is_ok_and(|v| v == "1");
    let mut sink = Sink::create(kind, &lines, hold)?;
    let mut queue = lines.into_iter().skip(sink.consumed);
    let mut write_next = |sink: &mut Sink, n: usize| -> Result<usize> {
        let mut written = 0;
        for line in queue.by_ref().take(n) {
            sink.append(&line)?;
            written += 1;
        }
        Ok(written)
    };
    write_next(&mut sink, start)?;
    println!(
        "fake {kind} pid {} writing {}",
        std::process::id(),
        sink.transcript.display()
    );
    if let Some(screen) = std::env::var_os(SCREEN_ENV) {
        // Paint a recorded screen (e.g. a permission dialog) as the real agent would.
        let text = std::fs::read(&screen)
            .with_context(|| format!("cannot read {}", Path::new(&screen).display()))?;
        let mut out = std::io::stdout().lock();
        out.write_all(&text)?;
        out.flush()?;
    }
    let commands = spawn_stdin_reader();
    loop {
        let got = match pace {
            Some(p) => commands.recv_timeout(p),
            None => commands
                .recv()
                .map_err(|_| mpsc::RecvTimeoutError::Disconnected),
        };
        match got {
            Ok(Command::Step(n)) => {
                write_next(&mut sink, n)?;
            }
            Ok(Command::All) => {
                write_next(&mut sink, usize::MAX)?;
            }
            Ok(Command::Line(l)) => sink.append(&l)?,
            Ok(Command::Quit) | Err(mpsc::RecvTimeoutError::Disconnected) => break,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                write_next(&mut sink, 1)?;
            }
        }
    }
    sink.finish();
    Ok(())
}

/// Reads stdin commands on a thread; the channel closes at EOF or on `quit`.
fn spawn_stdin_reader() -> mpsc::Receiver<Command> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines() {
            let Ok(line) = line else { break };
            match parse_command(&line) {
                Some(Command::Quit) => break,
                Some(cmd) => {
                    if tx.send(cmd).is_err() {
                        break;
                    }
                }
                None if line.trim().is_empty() => {}
                None => eprintln!("fake agent: unknown command `{}`", line.trim()),
            }
        }
    });
    rx
}

/// Where the fake writes, and what it rewrites lines with.
struct Sink {
    kind: AgentKind,
    session_id: String,
    cwd: String,
    transcript: PathBuf,
    /// Claude's session record, removed on clean exit.
    record: Option<PathBuf>,
    /// Held open (always for Codex; for Claude with `AGENTPANE_FAKE_HOLD=1`).
    held: Option<File>,
    /// Fixture lines used up while creating (Codex's own `session_meta`).
    consumed: usize,
}

impl Sink {
    fn create(kind: AgentKind, fixture: &[String], hold: bool) -> Result<Sink> {
        let cwd = std::env::current_dir()
            .context("cannot read the working directory")?
            .to_string_lossy()
            .into_owned();
        let home = std::env::var_os("HOME")
            .map(PathBuf::from)
            .unwrap_or_else(paths::home_dir);
        let session_id = random_uuid();
        let now = Utc::now();
        match kind {
            AgentKind::Codex => {
                let root = env_dir("CODEX_HOME").unwrap_or_else(|| home.join(".codex"));
                let dir = root
                    .join("sessions")
                    .join(now.format("%Y/%m/%d").to_string());
                std::fs::create_dir_all(&dir)
                    .with_context(|| format!("cannot create {}", dir.display()))?;
                let name = format!(
                    "rollout-{}-{session_id}.jsonl",
                    now.format("%Y-%m-%dT%H-%M-%S")
                );
                let transcript = dir.join(name);
                let file = open_append(&transcript)?;
                let mut sink = Sink {
                    kind,
                    session_id,
                    cwd,
                    transcript,
                    record: None,
                    held: Some(file),
                    consumed: 0,
                };
                let first_is_meta = fixture.first().is_some_and(|l| {
                    serde_json::from_str::<Value>(l)
                        .is_ok_and(|v| v.get("type") == Some(&json!("session_meta")))
                });
                if first_is_meta {
                    sink.append(&fixture[0])?;
                    sink.consumed = 1;
                } else {
                    let meta = json!({"timestamp": "", "type": "session_meta", "payload": {
                        "id": "", "timestamp": "", "cwd": "", "originator": "agentpane_fake",
                        "cli_version": "0.0.0", "source": "cli"}});
                    sink.append(&meta.to_string())?;
                }
                Ok(sink)
            }
            _ => {
                let root = env_dir("CLAUDE_CONFIG_DIR").unwrap_or_else(|| home.join(".claude"));
                let project = root.join("projects").join(encode_cwd(&cwd));
                std::fs::create_dir_all(&project)
                    .with_context(|| format!("cannot create {}", project.display()))?;
                let transcript = project.join(format!("{session_id}.jsonl"));
                let file = open_append(&transcript)?;
                let sessions = root.join("sessions");
                std::fs::create_dir_all(&sessions)
                    .with_context(|| format!("cannot create {}", sessions.display()))?;
                let pid = std::process::id();
                let record_path = sessions.join(format!("{pid}.json"));
                let started_ms = SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .map(|d| d.as_millis() as u64)
                    .unwrap_or(0);
                let proc_start = crate::proctree::procfs::start_ticks(pid)
                    .map(|t| t.to_string())
                    .unwrap_or_default();
                let record = json!({
                    "pid": pid, "sessionId": session_id, "cwd": cwd, "startedAt": started_ms,
                    "procStart": proc_start, "version": "0.0.0-agentpane-fake",
                    "kind": "interactive", "entrypoint": "cli", "status": "idle",
                });
                paths::write_atomic(&record_path, record.to_string().as_bytes())?;
                Ok(Sink {
                    kind,
                    session_id,
                    cwd,
                    transcript,
                    record: Some(record_path),
                    held: hold.then_some(file),
                    consumed: 0,
                })
            }
        }
    }

    /// Appends one line, rewritten; a line that is not JSON is written as it is.
    fn append(&mut self, line: &str) -> Result<()> {
        let now = Utc::now().to_rfc3339_opts(SecondsFormat::Millis, true);
        let text = match serde_json::from_str::<Value>(line) {
            Ok(mut v) => {
                rewrite(&mut v, self.kind, &self.session_id, &self.cwd, &now);
                v.to_string()
            }
            Err(_) => line.to_string(),
        };
        let mut data = text.into_bytes();
        data.push(b'\n');
        let result = match self.held.as_mut() {
            Some(f) => f.write_all(&data),
            None => open_append(&self.transcript)?.write_all(&data),
        };
        result.with_context(|| format!("cannot write {}", self.transcript.display()))
    }

    fn finish(self) {
        if let Some(record) = &self.record {
            let _ = std::fs::remove_file(record);
        }
    }
}

/// Makes a fixture line the fake's own: fresh timestamps, its session id and cwd.
fn rewrite(v: &mut Value, kind: AgentKind, session_id: &str, cwd: &str, now: &str) {
    let Some(obj) = v.as_object_mut() else { return };
    if obj.contains_key("timestamp") {
        obj.insert("timestamp".into(), json!(now));
    }
    match kind {
        AgentKind::Codex => {
            let ty = obj.get("type").and_then(Value::as_str).map(str::to_string);
            let Some(payload) = obj.get_mut("payload").and_then(Value::as_object_mut) else {
                return;
            };
            if payload.contains_key("cwd") {
                payload.insert("cwd".into(), json!(cwd));
            }
            if ty.as_deref() == Some("session_meta") {
                payload.insert("id".into(), json!(session_id));
                payload.insert("timestamp".into(), json!(now));
            }
        }
        _ => {
            if obj.contains_key("sessionId") {
                obj.insert("sessionId".into(), json!(session_id));
            }
            if obj.contains_key("cwd") {
                obj.insert("cwd".into(), json!(cwd));
            }
        }
    }
}

fn env_dir(name: &str) -> Option<PathBuf> {
    std::env::var_os(name)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

fn open_append(path: &Path) -> Result<File> {
    OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .with_context(|| format!("cannot open {}", path.display()))
}

/// A random version-4 UUID (std's randomly keyed hasher is the entropy source).
fn random_uuid() -> String {
    use std::hash::{BuildHasher, Hasher};
    let word = || {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u128(
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0),
        );
        h.write_u32(std::process::id());
        h.finish()
    };
    let (a, b) = (word(), word());
    format!(
        "{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}",
        a >> 32,
        (a >> 16) & 0xffff,
        a & 0xfff,
        0x8000 | (b >> 48) & 0x3fff,
        b & 0xffff_ffff_ffff
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_parse() {
        assert_eq!(parse_command("step"), Some(Command::Step(1)));
        assert_eq!(parse_command(" step 3 "), Some(Command::Step(3)));
        assert_eq!(parse_command("step x"), None);
        assert_eq!(parse_command("all"), Some(Command::All));
        assert_eq!(
            parse_command("line {\"a\":1}"),
            Some(Command::Line("{\"a\":1}".into()))
        );
        assert_eq!(parse_command("quit"), Some(Command::Quit));
        assert_eq!(parse_command("dance"), None);
    }

    #[test]
    fn claude_lines_get_own_identity_and_time() {
        let mut v: Value = serde_json::from_str(
            r#"{"type":"user","cwd":"/old","sessionId":"old","timestamp":"2020-01-01T00:00:00Z","uuid":"u1"}"#,
        )
        .unwrap();
        rewrite(&mut v, AgentKind::Claude, "me", "/new", "NOW");
        assert_eq!(v["cwd"], "/new");
        assert_eq!(v["sessionId"], "me");
        assert_eq!(v["timestamp"], "NOW");
        assert_eq!(v["uuid"], "u1");
        let mut snap: Value = serde_json::from_str(r#"{"type":"file-history-snapshot"}"#).unwrap();
        rewrite(&mut snap, AgentKind::Claude, "me", "/new", "NOW");
        assert!(snap.get("timestamp").is_none(), "no fields are invented");
    }

    #[test]
    fn codex_session_meta_gets_own_identity() {
        let mut v: Value = serde_json::from_str(
            r#"{"timestamp":"t","type":"session_meta","payload":{"id":"x","timestamp":"t","cwd":"/old"}}"#,
        )
        .unwrap();
        rewrite(&mut v, AgentKind::Codex, "me", "/new", "NOW");
        assert_eq!(v["payload"]["id"], "me");
        assert_eq!(v["payload"]["cwd"], "/new");
        assert_eq!(v["payload"]["timestamp"], "NOW");
        assert_eq!(v["timestamp"], "NOW");
    }

    #[test]
    fn uuids_look_like_uuids_and_differ() {
        let (a, b) = (random_uuid(), random_uuid());
        assert_ne!(a, b);
        assert_eq!(a.len(), 36);
        assert_eq!(a.as_bytes()[14], b'4');
        assert!(
            crate::agents::codex::locate::session_id_of(Path::new(&format!(
                "rollout-2026-01-01T00-00-00-{a}.jsonl"
            )))
            .is_some()
        );
    }
}
