//! A fake Cline CLI's session: `<data>/sessions/<id>/<id>.json` (its record: its pid and a
//! `status`) and `<id>.messages.json` (the conversation), rewritten whole at each step as the
//! released client does, and written first with the first step (the client writes nothing
//! before the first prompt). A step is one message of the conversation (a line of a JSONL
//! fixture; see fixtures/real-clients/cline-3.0.65/demo.jsonl), given a fresh time; the
//! record's status follows it: `running` after a prompt or a tool's call or result, `idle`
//! after the model's text or an error. A step `{"status": S}` sets the status alone
//! (`pending`: a permission dialog is open).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use chrono::{SecondsFormat, Utc};
use serde_json::{json, Value};

use super::Sink;

pub struct Session {
    id: String,
    cwd: String,
    record: PathBuf,
    messages_path: PathBuf,
    messages: Vec<Value>,
    status: &'static str,
    started: String,
}

impl Session {
    /// Where a process with this environment keeps its sessions; nothing is written yet.
    pub fn create() -> Result<Session> {
        let cwd = std::env::current_dir()
            .context("cannot read the working directory")?
            .to_string_lossy()
            .into_owned();
        let var = super::env_dir;
        let home = var("HOME").unwrap_or_else(crate::paths::home_dir);
        let data = var("CLINE_DATA_DIR").unwrap_or_else(|| {
            var("CLINE_DIR")
                .unwrap_or_else(|| home.join(".cline"))
                .join("data")
        });
        let now = Utc::now();
        let suffix: String = super::random_uuid().chars().take(5).collect();
        let id = format!("{}_{suffix}", now.timestamp_millis());
        let dir = data.join("sessions").join(&id);
        Ok(Session {
            record: dir.join(format!("{id}.json")),
            messages_path: dir.join(format!("{id}.messages.json")),
            id,
            cwd,
            messages: Vec::new(),
            status: "idle",
            started: now.to_rfc3339_opts(SecondsFormat::Millis, true),
        })
    }

    fn write(&self) -> Result<()> {
        let dir = self.record.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        let record = json!({
            "version": 1, "session_id": self.id, "source": "cli",
            "pid": std::process::id(), "started_at": self.started, "exit_code": null,
            "status": self.status, "interactive": true, "provider": "openai-compatible",
            "model": "stand-in", "cwd": self.cwd, "workspace_root": self.cwd,
            "messages_path": self.messages_path,
        });
        let messages = json!({
            "version": 1,
            "updated_at": Utc::now().to_rfc3339_opts(SecondsFormat::Millis, true),
            "agent": "lead", "sessionId": self.id, "messages": self.messages,
        });
        // The conversation first, then the record, each rewritten in place as the client
        // does (no temporary file).
        for (path, value) in [(&self.messages_path, messages), (&self.record, record)] {
            std::fs::write(path, value.to_string())
                .with_context(|| format!("cannot write {}", path.display()))?;
        }
        Ok(())
    }
}

/// The status the client's record shows after `message`.
fn status_after(message: &Value) -> &'static str {
    let has = |kind: &str| {
        message["content"]
            .as_array()
            .is_some_and(|c| c.iter().any(|b| b["type"] == kind))
    };
    match message["role"].as_str() {
        Some("assistant") if has("tool_use") => "running",
        Some("assistant") => "idle",
        _ => "running",
    }
}

impl Sink for Session {
    fn target(&self) -> &Path {
        &self.messages_path
    }

    fn consumed(&self) -> usize {
        0
    }

    fn append(&mut self, step: &str) -> Result<()> {
        let mut v: Value = serde_json::from_str(step).context("a step is one JSON message")?;
        if let Some(status) = v.get("status").and_then(Value::as_str) {
            self.status = match status {
                "pending" => "pending",
                "running" => "running",
                _ => "idle",
            };
            return self.write();
        }
        v["ts"] = json!(Utc::now().timestamp_millis());
        self.status = status_after(&v);
        self.messages.push(v);
        self.write()
    }

    fn finish(self: Box<Self>) {}
}
