//! The fake Kimi Code: its session folder
//! `<KIMI_CODE_HOME or ~/.kimi-code>/sessions/wd_<folder name>_<hash>/session_<uuid>/` with
//! `state.json` (its `cwd`, `createdAt`) and `agents/main/wire.jsonl`, appended per write,
//! never held open, as Kimi Code 2.1.0 writes them (docs/agents/kimi.md). Each line's `time`
//! (epoch ms) becomes the time it is written.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result};
use serde_json::{json, Value};

use super::{env_dir, open_append, random_uuid, Sink};
use crate::paths;

/// A fake Kimi Code session.
pub struct KimiLog {
    wire: PathBuf,
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

impl KimiLog {
    /// Makes the session folder, its `state.json` and an empty log.
    pub fn create() -> Result<KimiLog> {
        let cwd = std::env::current_dir()
            .context("cannot read the working directory")?
            .to_string_lossy()
            .into_owned();
        let root = env_dir("KIMI_CODE_HOME").unwrap_or_else(|| {
            env_dir("HOME")
                .unwrap_or_else(paths::home_dir)
                .join(".kimi-code")
        });
        let name = Path::new(&cwd)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let dir = root
            .join("sessions")
            .join(format!("wd_{name}_{:012x}", fnv(&cwd) & 0xffff_ffff_ffff))
            .join(format!("session_{}", random_uuid()));
        let main = dir.join("agents/main");
        std::fs::create_dir_all(&main)
            .with_context(|| format!("cannot create {}", main.display()))?;
        let state = json!({"id": dir.file_name().map(|n| n.to_string_lossy().into_owned()),
            "version": 2, "cwd": cwd, "createdAt": now_ms(), "updatedAt": now_ms()});
        paths::write_atomic(&dir.join("state.json"), state.to_string().as_bytes())?;
        let wire = main.join("wire.jsonl");
        open_append(&wire)?;
        Ok(KimiLog { wire })
    }
}

/// A short stable hash of the folder (the real client's is a SHA-256 prefix; nothing reads it).
fn fnv(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

impl Sink for KimiLog {
    fn target(&self) -> &Path {
        &self.wire
    }

    fn consumed(&self) -> usize {
        0
    }

    fn append(&mut self, line: &str) -> Result<()> {
        let text = match serde_json::from_str::<Value>(line) {
            Ok(mut v) => {
                if let Some(obj) = v.as_object_mut().filter(|o| o.contains_key("time")) {
                    obj.insert("time".into(), json!(now_ms()));
                }
                v.to_string()
            }
            Err(_) => line.to_string(),
        };
        let mut f = open_append(&self.wire)?;
        writeln!(f, "{text}").with_context(|| format!("cannot write {}", self.wire.display()))
    }

    fn finish(self: Box<Self>) {}
}
