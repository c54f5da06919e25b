//! What a droid session used. Its log names the model of each answer (`modelId`); the token
//! counts are only in the session's `<uuid>.settings.json` beside it, which droid rewrites
//! after every call: `tokenUsage` (the session's totals: `inputTokens`, `outputTokens`,
//! `cacheReadTokens`, …) and `lastCallTokenUsage` (the newest call's).

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::agents::fields::{self, str_of};
use crate::usage::{Reading, Usage};

/// The model of an `assistant` record; `None` for any other record.
pub fn reading(line: &[u8]) -> Option<Reading> {
    let v: Value = serde_json::from_slice(line).ok()?;
    let m = v.get("message")?;
    if str_of(&v, "type") != Some("message") || str_of(m, "role") != Some("assistant") {
        return None;
    }
    Some(Reading {
        key: str_of(&v, "id").map(str::to_string),
        model: str_of(m, "modelId").map(str::to_string),
        at: fields::time(v.get("timestamp")),
        ..Reading::default()
    })
}

/// The settings file beside the log `<uuid>.jsonl`.
pub fn settings_of(transcript: &Path) -> Option<PathBuf> {
    let stem = transcript.file_name()?.to_str()?.strip_suffix(".jsonl")?;
    Some(transcript.with_file_name(format!("{stem}.settings.json")))
}

/// The session's usage from its settings file; `None` for a path that is no droid log.
pub fn session(transcript: &Path) -> Option<anyhow::Result<Usage>> {
    let settings = settings_of(transcript)?;
    Some(read(&settings))
}

fn read(settings: &Path) -> anyhow::Result<Usage> {
    use anyhow::Context;
    let bytes = std::fs::read(settings).with_context(|| format!("read {}", settings.display()))?;
    let v: Value =
        serde_json::from_slice(&bytes).with_context(|| format!("parse {}", settings.display()))?;
    Ok(from_settings(&v))
}

/// The usage a settings document states.
pub fn from_settings(v: &Value) -> Usage {
    let count = |block: &str, key: &str| v.get(block)?.get(key)?.as_u64();
    let total = "tokenUsage";
    let last = "lastCallTokenUsage";
    let input = count(total, "inputTokens").map(|i| {
        i + count(total, "cacheReadTokens").unwrap_or(0)
            + count(total, "cacheCreationTokens").unwrap_or(0)
    });
    let context =
        count(last, "inputTokens").map(|i| i + count(last, "cacheReadTokens").unwrap_or(0));
    Usage {
        model: str_of(v, "model").map(str::to_string),
        context_tokens: context,
        session_input: input,
        session_output: count(total, "outputTokens"),
        ..Usage::default()
    }
}
