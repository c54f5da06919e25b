//! The fake Factory Droid: `<FACTORY_HOME_OVERRIDE or HOME>/.factory/sessions/<encoded
//! cwd>/<uuid>.jsonl`, begun at start with its `session_start` header (as droid 0.225.2 begins
//! it once the folder is trusted), appended per write, never held open, with the
//! `<uuid>.settings.json` droid keeps beside it. See docs/agents/droid.md.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use chrono::{SecondsFormat, Utc};
use serde_json::{json, Value};

use super::{open_append, random_uuid, Sink};
use crate::agents::droid::locate;
use crate::paths;

/// A droid session log being written by a fake.
pub struct Log {
    session_id: String,
    cwd: String,
    transcript: PathBuf,
    consumed: usize,
}

impl Log {
    /// Begins the log; a fixture starting with a header gives it (made the fake's own).
    pub fn create(fixture: &[String]) -> Result<Log> {
        let cwd = std::env::current_dir()
            .context("cannot read the working directory")?
            .to_string_lossy()
            .into_owned();
        let home = super::env_dir(locate::HOME_VAR)
            .or_else(|| std::env::var_os("HOME").map(PathBuf::from))
            .unwrap_or_else(paths::home_dir);
        let dir = locate::cwd_sessions(&home.join(locate::DOT_DIR), &cwd);
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
        let session_id = random_uuid();
        let mut log = Log {
            transcript: dir.join(format!("{session_id}.jsonl")),
            session_id,
            cwd,
            consumed: 0,
        };
        let settings = json!({"model": "custom:Fake-0", "tokenUsage":
            {"inputTokens": 0, "outputTokens": 0}});
        let beside = dir.join(format!("{}.settings.json", log.session_id));
        paths::write_atomic(&beside, settings.to_string().as_bytes())?;
        let header = fixture
            .first()
            .filter(|l| is_header(l))
            .cloned()
            .unwrap_or_else(|| {
                json!({"type": "session_start", "title": "New Session",
                "version": 2, "cwd": "", "hostId": "fake"})
                .to_string()
            });
        log.consumed = usize::from(fixture.first().is_some_and(|l| is_header(l)));
        log.append(&header)?;
        Ok(log)
    }
}

fn is_header(line: &str) -> bool {
    serde_json::from_str::<Value>(line).is_ok_and(|v| v["type"] == "session_start")
}

impl Sink for Log {
    fn target(&self) -> &Path {
        &self.transcript
    }

    fn consumed(&self) -> usize {
        self.consumed
    }

    /// Appends one line with a fresh time (the header: the fake's session and folder); a line
    /// that is not JSON is written as it is.
    fn append(&mut self, line: &str) -> Result<()> {
        let now = Utc::now().to_rfc3339_opts(SecondsFormat::Millis, true);
        let text = match serde_json::from_str::<Value>(line) {
            Ok(mut v) => {
                if let Some(obj) = v.as_object_mut() {
                    if obj.contains_key("timestamp") {
                        obj.insert("timestamp".into(), json!(now));
                    }
                    if obj.get("type").and_then(Value::as_str) == Some("session_start") {
                        obj.insert("id".into(), json!(self.session_id));
                        obj.insert("cwd".into(), json!(self.cwd));
                    }
                }
                v.to_string()
            }
            Err(_) => line.to_string(),
        };
        open_append(&self.transcript)?
            .write_all(format!("{text}\n").as_bytes())
            .with_context(|| format!("cannot write {}", self.transcript.display()))
    }

    fn finish(self: Box<Self>) {}
}
