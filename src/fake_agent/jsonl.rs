//! The fakes of the agents that log to JSONL files: where each real agent puts its log, what it
//! writes first, and how a fixture line is made the fake's own.
//!
//! - claude: `<CLAUDE_CONFIG_DIR or ~/.claude>/sessions/<pid>.json` (`pid, sessionId, cwd,
//!   startedAt, procStart, …`, removed on clean exit) and the transcript
//!   `projects/<encoded cwd>/<sessionId>.jsonl`, opened per write like Claude Code does (held
//!   open with `AGENTPANE_FAKE_HOLD=1`);
//! - codex: `<CODEX_HOME or ~/.codex>/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl`, held open
//!   for the whole run, starting with a `session_meta` line naming its cwd;
//! - gemini: `<GEMINI_CLI_HOME/.gemini or ~/.gemini>/tmp/<project>/chats/session-<UTC
//!   minute>-<first 8 of the id>.jsonl`, appended per write, never held open, starting with
//!   the metadata line; the project is registered the way Gemini CLI 0.61.0 does it
//!   (`projects.json` maps the folder to a short name, a `.project_root` file in
//!   `tmp/<project>` and `history/<project>` names the folder). See docs/agents/gemini.md;
//! - qwen: `<QWEN_HOME or ~/.qwen>/sessions/<pid>.json` (`pid, procStart: "<boot id>:<start
//!   ticks>", sessionId, cwd, startedAt, kind: "tui"`, removed on clean exit) and the chat log
//!   `projects/<encoded cwd>/chats/<sessionId>.jsonl` (empty at start), appended per write, never held open
//!   (docs/agents/qwen.md).
//! - copilot: `<COPILOT_HOME or ~/.copilot>/session-state/<id>/` with `workspace.yaml` (its
//!   cwd), `inuse.<PID>.lock` (the pid) and `inuse.<PID>.hold` held open from the start (both
//!   removed on clean exit), and `events.jsonl`, appended per write, never held open, created
//!   by the first step as Copilot CLI creates it at the first prompt. See
//!   docs/agents/copilot.md.
//! - pi: `<PI_CODING_AGENT_DIR or ~/.pi/agent>/sessions/--<encoded cwd>--/<ISO time>_<id>.jsonl`,
//!   appended per write, never held open, starting with its `session` header, and the record
//!   agentpane's pi extension writes for it (`<state dir>/pi/<pid>.json`, removed on clean
//!   exit). See docs/agents/pi.md.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result};
use chrono::{SecondsFormat, Utc};
use serde_json::{json, Value};

use super::{env_dir, open_append, random_uuid, Sink};
use crate::agents::claude::locate::encode_cwd;
use crate::events::AgentKind;
use crate::paths;

/// Set to `1`: a fake Claude Code asked nothing yet, whose transcript appears with its first
/// step (its session record is there from the start, as the released client's is).
pub const FRESH_ENV: &str = "AGENTPANE_FAKE_FRESH";

/// A JSONL log being written by a fake agent.
pub struct JsonlLog {
    kind: AgentKind,
    session_id: String,
    cwd: String,
    transcript: PathBuf,
    /// Files removed on clean exit (Claude's session record, Copilot's locks).
    cleanup: Vec<PathBuf>,
    /// A file held open for the whole run that is not the log (Copilot's `inuse.<PID>.hold`).
    hold_file: Option<File>,
    /// Held open (always for Codex; for Claude with `AGENTPANE_FAKE_HOLD=1`).
    held: Option<File>,
    /// Fixture lines used up while creating (Codex's `session_meta`, Gemini's metadata).
    consumed: usize,
}

impl Sink for JsonlLog {
    fn target(&self) -> &Path {
        &self.transcript
    }

    fn consumed(&self) -> usize {
        self.consumed
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

    fn finish(self: Box<Self>) {
        for file in &self.cleanup {
            let _ = std::fs::remove_file(file);
        }
    }
}

impl JsonlLog {
    /// Creates the agent's files in its own places; `fixture` is what it will replay.
    pub fn create(kind: AgentKind, fixture: &[String], hold: bool) -> Result<JsonlLog> {
        let cwd = std::env::current_dir()
            .context("cannot read the working directory")?
            .to_string_lossy()
            .into_owned();
        let home = std::env::var_os("HOME")
            .map(PathBuf::from)
            .unwrap_or_else(paths::home_dir);
        let mut log = JsonlLog {
            kind,
            session_id: random_uuid(),
            cwd,
            transcript: PathBuf::new(),
            cleanup: Vec::new(),
            hold_file: None,
            held: None,
            consumed: 0,
        };
        match kind {
            AgentKind::Codex => log.create_codex(&home, fixture)?,
            AgentKind::Gemini => log.create_gemini(&home, fixture)?,
            AgentKind::Qwen => log.create_qwen(&home)?,
            AgentKind::Copilot => log.create_copilot(&home)?,
            AgentKind::Pi => log.create_pi(&home, fixture)?,
            _ => log.create_claude(&home, hold)?,
        }
        Ok(log)
    }

    fn create_codex(&mut self, home: &Path, fixture: &[String]) -> Result<()> {
        let now = Utc::now();
        let root = env_dir("CODEX_HOME").unwrap_or_else(|| home.join(".codex"));
        let dir = root
            .join("sessions")
            .join(now.format("%Y/%m/%d").to_string());
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
        let name = format!(
            "rollout-{}-{}.jsonl",
            now.format("%Y-%m-%dT%H-%M-%S"),
            self.session_id
        );
        self.transcript = dir.join(name);
        self.held = Some(open_append(&self.transcript)?);
        let first_is_meta = fixture
            .first()
            .is_some_and(|l| json_of(l).is_some_and(|v| v["type"] == "session_meta"));
        if first_is_meta {
            self.append(&fixture[0])?;
            self.consumed = 1;
        } else {
            let meta = json!({"timestamp": "", "type": "session_meta", "payload": {
                "id": "", "timestamp": "", "cwd": "", "originator": "agentpane_fake",
                "cli_version": "0.0.0", "source": "cli"}});
            self.append(&meta.to_string())?;
        }
        Ok(())
    }

    fn create_claude(&mut self, home: &Path, hold: bool) -> Result<()> {
        let root = env_dir("CLAUDE_CONFIG_DIR").unwrap_or_else(|| home.join(".claude"));
        let project = root.join("projects").join(encode_cwd(&self.cwd));
        std::fs::create_dir_all(&project)
            .with_context(|| format!("cannot create {}", project.display()))?;
        self.transcript = project.join(format!("{}.jsonl", self.session_id));
        // The released client writes its transcript at the first prompt; a fresh fake
        // (`AGENTPANE_FAKE_FRESH=1`) does too, with its first step.
        let fresh = std::env::var(FRESH_ENV).is_ok_and(|v| v == "1");
        let file = if fresh && !hold {
            None
        } else {
            Some(open_append(&self.transcript)?)
        };
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
        // The client version the record claims (`agentpane doctor` compares it with the
        // verified ones).
        let version = std::env::var("AGENTPANE_FAKE_VERSION")
            .unwrap_or_else(|_| "0.0.0-agentpane-fake".to_string());
        let record = json!({
            "pid": pid, "sessionId": self.session_id, "cwd": self.cwd, "startedAt": started_ms,
            "procStart": proc_start, "version": version,
            "kind": "interactive", "entrypoint": "cli", "status": "idle",
        });
        paths::write_atomic(&record_path, record.to_string().as_bytes())?;
        self.cleanup.push(record_path);
        self.held = file.filter(|_| hold);
        Ok(())
    }

    /// Copilot CLI makes the session folder, its `workspace.yaml` and its locks at start;
    /// `events.jsonl` comes with the first step.
    fn create_copilot(&mut self, home: &Path) -> Result<()> {
        let root = env_dir("COPILOT_HOME").unwrap_or_else(|| home.join(".copilot"));
        let dir = root.join("session-state").join(&self.session_id);
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
        let now = Utc::now().to_rfc3339_opts(SecondsFormat::Millis, true);
        let workspace = format!(
            "id: {}\ncwd: {}\nclient_name: github/cli\ncreated_at: {now}\nupdated_at: {now}\n",
            self.session_id, self.cwd
        );
        std::fs::write(dir.join("workspace.yaml"), workspace)
            .with_context(|| format!("cannot write {}", dir.display()))?;
        let pid = std::process::id();
        let lock = dir.join(format!("inuse.{pid}.lock"));
        std::fs::write(&lock, pid.to_string())
            .with_context(|| format!("cannot write {}", lock.display()))?;
        let hold = dir.join(format!("inuse.{pid}.hold"));
        self.hold_file = Some(open_append(&hold)?);
        self.cleanup.extend([lock, hold]);
        self.transcript = dir.join("events.jsonl");
        Ok(())
    }

    /// Gemini CLI registers the folder, then starts the log with its metadata line (the
    /// fixture's first line when it is one; its `projectHash`, a digest agentpane never
    /// reads, is kept as recorded).
    fn create_gemini(&mut self, home: &Path, fixture: &[String]) -> Result<()> {
        let root = env_dir("GEMINI_CLI_HOME")
            .map(|h| h.join(".gemini"))
            .unwrap_or_else(|| home.join(".gemini"));
        let project = register_gemini_project(&root, &self.cwd)?;
        let chats = root.join("tmp").join(project).join("chats");
        std::fs::create_dir_all(&chats)
            .with_context(|| format!("cannot create {}", chats.display()))?;
        let name = format!(
            "session-{}-{}.jsonl",
            Utc::now().format("%Y-%m-%dT%H-%M"),
            &self.session_id[..8]
        );
        self.transcript = chats.join(name);
        let first_is_meta = fixture.first().is_some_and(|l| {
            json_of(l).is_some_and(|v| v.get("sessionId").is_some() && v.get("startTime").is_some())
        });
        if first_is_meta {
            self.append(&fixture[0])?;
            self.consumed = 1;
        } else {
            let meta = json!({"sessionId": "", "projectHash": "", "startTime": "",
                "lastUpdated": "", "kind": "main"});
            self.append(&meta.to_string())?;
        }
        Ok(())
    }
}

impl JsonlLog {
    /// Qwen Code's session record names the process (its pid and start token) and the
    /// session. The chat log is created empty at start (the real one's appears at the first
    /// prompt), so a test sees a fake without a turn as resolved.
    fn create_qwen(&mut self, home: &Path) -> Result<()> {
        let root = env_dir("QWEN_HOME").unwrap_or_else(|| home.join(".qwen"));
        self.transcript =
            crate::agents::qwen::locate::chat_path(&root, &self.cwd, &self.session_id);
        let chats = self.transcript.parent().unwrap_or(&root).to_path_buf();
        std::fs::create_dir_all(&chats)
            .with_context(|| format!("cannot create {}", chats.display()))?;
        open_append(&self.transcript)?;
        let sessions = root.join(crate::agents::qwen::locate::SESSIONS_DIR);
        std::fs::create_dir_all(&sessions)
            .with_context(|| format!("cannot create {}", sessions.display()))?;
        let pid = std::process::id();
        let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap_or_default();
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let started_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_millis() as u64)
            .unwrap_or(0);
        let record = json!({
            "schemaVersion": 1, "pid": pid,
            "procStart": crate::agents::qwen::locate::proc_start_token(&boot, &stat),
            "sessionId": self.session_id, "cwd": self.cwd, "startedAt": started_ms,
            "qwenVersion": "0.0.0-agentpane-fake", "kind": "tui",
        });
        let path = sessions.join(format!("{pid}.json"));
        paths::write_atomic(&path, record.to_string().as_bytes())?;
        self.cleanup.push(path);
        Ok(())
    }
}

impl JsonlLog {
    /// pi names its log by its start time and session id and begins it with a `session`
    /// header (the fixture's first line when it is one); agentpane's extension records which
    /// log the process writes.
    fn create_pi(&mut self, home: &Path, fixture: &[String]) -> Result<()> {
        use crate::agents::pi::locate;
        let agent_dir = env_dir("PI_CODING_AGENT_DIR").unwrap_or_else(|| home.join(".pi/agent"));
        let dir = locate::cwd_sessions(&agent_dir, &self.cwd);
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
        let now = Utc::now().to_rfc3339_opts(SecondsFormat::Millis, true);
        let stamp = now.replace([':', '.'], "-");
        self.transcript = dir.join(format!("{stamp}_{}.jsonl", self.session_id));
        let first_is_header = fixture
            .first()
            .is_some_and(|l| json_of(l).is_some_and(|v| v["type"] == "session"));
        if first_is_header {
            self.append(&fixture[0])?;
            self.consumed = 1;
        } else {
            let header = json!({"type": "session", "version": 3, "id": "", "timestamp": "",
                "cwd": ""});
            self.append(&header.to_string())?;
        }
        let records = paths::state_dir().join(locate::RECORDS);
        paths::ensure_private_dir(&records)?;
        let pid = std::process::id();
        let record = json!({"pid": pid, "sessionFile": self.transcript, "cwd": self.cwd,
            "reason": "startup", "time": now});
        let path = records.join(format!("{pid}.json"));
        paths::write_atomic(&path, record.to_string().as_bytes())?;
        self.cleanup.push(path);
        Ok(())
    }
}

fn json_of(line: &str) -> Option<Value> {
    serde_json::from_str(line).ok()
}

/// Gemini CLI's short name for a folder: its basename, lower case, every other character a
/// dash.
fn gemini_slug(cwd: &str) -> String {
    let base = Path::new(cwd)
        .file_name()
        .map(|n| n.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    let dashed: String = base
        .chars()
        .map(|c| {
            if c.is_ascii_lowercase() || c.is_ascii_digit() {
                c
            } else {
                '-'
            }
        })
        .collect();
    let slug = dashed
        .split('-')
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join("-");
    if slug.is_empty() {
        "project".into()
    } else {
        slug
    }
}

/// Maps `cwd` to its project name in `<root>/projects.json` (`{"projects": {dir: name}}`,
/// written with two-space indents) and marks `tmp/<name>` and `history/<name>` with a
/// `.project_root` naming the folder, as Gemini CLI does; a name another folder owns gets a
/// `-N` suffix. Returns the name.
fn register_gemini_project(root: &Path, cwd: &str) -> Result<String> {
    std::fs::create_dir_all(root).with_context(|| format!("cannot create {}", root.display()))?;
    let registry = root.join("projects.json");
    let mut data: Value = std::fs::read(&registry)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .filter(|v: &Value| v["projects"].is_object())
        .unwrap_or_else(|| json!({"projects": {}}));
    let owner = |name: &str| {
        ["tmp", "history"].into_iter().find_map(|base| {
            std::fs::read_to_string(root.join(base).join(name).join(".project_root"))
                .ok()
                .map(|s| s.trim().to_string())
        })
    };
    let known = data["projects"][cwd]
        .as_str()
        .filter(|n| owner(n).map_or(true, |o| o == cwd))
        .map(str::to_string);
    let name = match known {
        Some(name) => name,
        None => {
            let slug = gemini_slug(cwd);
            let taken: Vec<&str> = data["projects"]
                .as_object()
                .into_iter()
                .flat_map(|m| m.values().filter_map(Value::as_str))
                .collect();
            (0..)
                .map(|n| {
                    if n == 0 {
                        slug.clone()
                    } else {
                        format!("{slug}-{n}")
                    }
                })
                .find(|c| !taken.contains(&c.as_str()) && owner(c).map_or(true, |o| o == cwd))
                .unwrap_or(slug)
        }
    };
    for base in ["tmp", "history"] {
        let dir = root.join(base).join(&name);
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
        let marker = dir.join(".project_root");
        if !marker.exists() {
            std::fs::write(&marker, cwd)
                .with_context(|| format!("cannot write {}", marker.display()))?;
        }
    }
    data["projects"][cwd] = json!(name);
    let text = serde_json::to_string_pretty(&data)?;
    paths::write_atomic(&registry, text.as_bytes())?;
    Ok(name)
}

/// Makes a fixture line the fake's own: fresh timestamps, its session id and cwd.
pub(super) fn rewrite(v: &mut Value, kind: AgentKind, session_id: &str, cwd: &str, now: &str) {
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
        AgentKind::Copilot => {
            // `session.start` names the session and its folder.
            let Some(data) = obj.get_mut("data").and_then(Value::as_object_mut) else {
                return;
            };
            if data.contains_key("sessionId") {
                data.insert("sessionId".into(), json!(session_id));
            }
            if data.contains_key("startTime") {
                data.insert("startTime".into(), json!(now));
            }
            if let Some(context) = data.get_mut("context").and_then(Value::as_object_mut) {
                context.insert("cwd".into(), json!(cwd));
            }
        }
        AgentKind::Gemini => {
            // The metadata line, and `$set` metadata updates (`lastUpdated` after every
            // message). Messages inside a `$set.messages` keep their recorded times, as a
            // restated history does.
            let meta = obj.contains_key("sessionId") && obj.contains_key("startTime");
            if let Some(set) = obj.get_mut("$set").and_then(Value::as_object_mut) {
                set_gemini_meta(set, session_id, now);
            }
            if meta {
                set_gemini_meta(obj, session_id, now);
                obj.insert("startTime".into(), json!(now));
            }
        }
        AgentKind::Pi => {
            // The `session` header names the session and its folder.
            if obj.get("type").and_then(Value::as_str) == Some("session") {
                obj.insert("id".into(), json!(session_id));
                obj.insert("cwd".into(), json!(cwd));
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

fn set_gemini_meta(obj: &mut serde_json::Map<String, Value>, session_id: &str, now: &str) {
    if obj.contains_key("sessionId") {
        obj.insert("sessionId".into(), json!(session_id));
    }
    if obj.contains_key("lastUpdated") {
        obj.insert("lastUpdated".into(), json!(now));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn gemini_records_get_own_identity_and_time() {
        let real = include_str!("../../fixtures/real-clients/gemini-0.61.0/session.jsonl");
        let line = |n: usize| serde_json::from_str::<Value>(real.lines().nth(n).unwrap()).unwrap();
        let mut meta = line(0);
        rewrite(&mut meta, AgentKind::Gemini, "me", "/new", "NOW");
        assert_eq!(meta["sessionId"], "me");
        assert_eq!(meta["startTime"], "NOW");
        assert_eq!(meta["lastUpdated"], "NOW");
        assert_eq!(meta["kind"], "main");
        let mut prompt = line(2);
        let before = prompt.clone();
        rewrite(&mut prompt, AgentKind::Gemini, "me", "/new", "NOW");
        assert_eq!(prompt["timestamp"], "NOW");
        assert_eq!(prompt["id"], before["id"]);
        assert_eq!(prompt["content"], before["content"]);
        let mut set = line(3);
        rewrite(&mut set, AgentKind::Gemini, "me", "/new", "NOW");
        assert_eq!(set, json!({"$set": {"lastUpdated": "NOW"}}));
        let mut history = line(1);
        let before = history.clone();
        rewrite(&mut history, AgentKind::Gemini, "me", "/new", "NOW");
        assert_eq!(history["$set"]["messages"], before["$set"]["messages"]);
    }

    #[test]
    fn gemini_projects_are_registered_like_gemini_cli_does() {
        let root = tempfile::tempdir().unwrap();
        let gemini = root.path().join(".gemini");
        assert_eq!(gemini_slug("/w/My Proj_1"), "my-proj-1");
        assert_eq!(gemini_slug("/"), "project");
        let a = register_gemini_project(&gemini, "/w/proj").unwrap();
        assert_eq!(a, "proj");
        assert_eq!(register_gemini_project(&gemini, "/w/proj").unwrap(), "proj");
        let b = register_gemini_project(&gemini, "/x/proj").unwrap();
        assert_eq!(b, "proj-1");
        let marker = std::fs::read_to_string(gemini.join("tmp/proj-1/.project_root")).unwrap();
        assert_eq!(marker, "/x/proj");
        assert!(gemini.join("history/proj/.project_root").is_file());
        // The resolver finds the folder the way it finds a real Gemini CLI's.
        assert_eq!(
            crate::agents::gemini::locate::project_dir(&gemini, "/x/proj"),
            Some(gemini.join("tmp/proj-1"))
        );
    }
}
