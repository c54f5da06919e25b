//! Claude Code hook events as evidence (docs/design.md#evidence-order, source 1).
//!
//! `agentpane hook` runs inside the agent's hook path: it reads one event, folds it into
//! `<state>/evidence/<session_id>.json` (the latest event of each kind, bounded) and touches
//! `<state>/nudge` so a running watcher wakes up. Everything here is fast and lenient: a bad
//! event is skipped, never an error the agent would see.

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::bounded;
use crate::events::Time;
use crate::paths;

/// Longest hook message kept, in bytes.
pub const MAX_MESSAGE: usize = 512;
/// Longest tool name kept, in bytes.
pub const MAX_TOOL: usize = 128;
/// Format version of the evidence file.
pub const FORMAT_VERSION: u32 = 1;
/// Evidence files of sessions untouched this long are pruned when a session starts.
pub const PRUNE_AFTER: Duration = Duration::from_secs(7 * 24 * 3600);

/// The kinds of hook event agentpane keeps (one latest record per kind).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "kebab-case")]
pub enum HookKind {
    SessionStart,
    UserPromptSubmit,
    PreToolUse,
    PostToolUse,
    /// `Notification` with `permission_prompt` (or a `PermissionRequest` event).
    PermissionPrompt,
    /// `Notification` with `elicitation_dialog`: the agent asks a question.
    Elicitation,
    /// `Notification` with `idle_prompt`: fires after 60 s of idleness; never a completion.
    IdlePrompt,
    /// Any other notification (`auth_success`, unknown types).
    OtherNotification,
    Stop,
    SessionEnd,
}

impl HookKind {
    /// True when this kind says something about the turn (idle prompts and other
    /// notifications only repeat what is known; a session start is not a turn event).
    pub fn is_decisive(self) -> bool {
        !matches!(
            self,
            HookKind::IdlePrompt | HookKind::OtherNotification | HookKind::SessionStart
        )
    }
}

/// One hook event, as agentpane keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HookRecord {
    pub kind: HookKind,
    /// When `agentpane hook` received it (hooks carry no timestamp of their own).
    pub at: Time,
    /// `message` of a notification, bounded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// `tool_name` of tool and permission events, bounded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// `notification_type` as sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notification_type: Option<String>,
}

/// The evidence file of one session: `<state>/evidence/<session_id>.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HookEvidence {
    pub version: u32,
    pub session_id: String,
    #[serde(default)]
    pub transcript_path: Option<PathBuf>,
    #[serde(default)]
    pub cwd: Option<String>,
    /// `$TMUX_PANE` of the hook process (the agent's pane), when it ran inside tmux.
    #[serde(default)]
    pub pane: Option<String>,
    /// Time of the newest event.
    pub updated_at: Time,
    /// The latest event of each kind, oldest first; at most one per kind.
    #[serde(default)]
    pub events: Vec<HookRecord>,
}

impl HookEvidence {
    /// Evidence with no events yet.
    pub fn new(session_id: impl Into<String>, at: Time) -> HookEvidence {
        HookEvidence {
            version: FORMAT_VERSION,
            session_id: session_id.into(),
            transcript_path: None,
            cwd: None,
            pane: None,
            updated_at: at,
            events: Vec::new(),
        }
    }

    /// Folds one event in: it replaces the earlier event of its kind.
    pub fn push(&mut self, record: HookRecord) {
        self.events.retain(|r| r.kind != record.kind);
        self.updated_at = self.updated_at.max(record.at);
        self.events.push(record);
        self.events.sort_by_key(|r| (r.at, r.kind));
    }

    /// The latest record of `kind`.
    pub fn get(&self, kind: HookKind) -> Option<&HookRecord> {
        self.events.iter().find(|r| r.kind == kind)
    }

    /// The newest event that says something about the turn. A `SessionEnd` followed by a
    /// newer `SessionStart` (the session was resumed) no longer counts.
    pub fn latest_decisive(&self) -> Option<&HookRecord> {
        let latest = self
            .events
            .iter()
            .filter(|r| r.kind.is_decisive())
            .max_by_key(|r| r.at)?;
        if latest.kind == HookKind::SessionEnd {
            if let Some(start) = self.get(HookKind::SessionStart) {
                if start.at > latest.at {
                    return None;
                }
            }
        }
        Some(latest)
    }
}

/// The fields of a hook event agentpane reads, extracted leniently from any JSON shape.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HookInput {
    pub session_id: Option<String>,
    pub transcript_path: Option<String>,
    pub cwd: Option<String>,
    pub hook_event_name: Option<String>,
    pub notification_type: Option<String>,
    pub message: Option<String>,
    pub tool_name: Option<String>,
}

impl HookInput {
    /// Reads the event from stdin bytes. When the JSON is cut (the stdin cap was hit) or
    /// broken, the string fields are still recovered from the prefix: Claude Code sends the
    /// small identifying fields before the large `tool_input`/`tool_response`.
    pub fn parse(bytes: &[u8]) -> Option<HookInput> {
        if let Ok(value) = serde_json::from_slice::<Value>(bytes) {
            let field = |k: &str| value.get(k).and_then(Value::as_str).map(str::to_string);
            return Some(HookInput {
                session_id: field("session_id"),
                transcript_path: field("transcript_path"),
                cwd: field("cwd"),
                hook_event_name: field("hook_event_name"),
                notification_type: field("notification_type"),
                message: field("message"),
                tool_name: field("tool_name"),
            })
            .filter(|i| i.hook_event_name.is_some());
        }
        let text = String::from_utf8_lossy(bytes);
        let field = |k: &str| prefix_string_field(&text, k);
        let input = HookInput {
            session_id: field("session_id"),
            transcript_path: field("transcript_path"),
            cwd: field("cwd"),
            hook_event_name: field("hook_event_name"),
            notification_type: field("notification_type"),
            message: field("message"),
            tool_name: field("tool_name"),
        };
        input.hook_event_name.is_some().then_some(input)
    }

    /// Which kind of evidence this event is; `None` for events agentpane ignores.
    pub fn kind(&self) -> Option<HookKind> {
        let kind = match self.hook_event_name.as_deref()? {
            "SessionStart" => HookKind::SessionStart,
            "UserPromptSubmit" => HookKind::UserPromptSubmit,
            "PreToolUse" => HookKind::PreToolUse,
            "PostToolUse" | "PostToolUseFailure" => HookKind::PostToolUse,
            "PermissionRequest" => HookKind::PermissionPrompt,
            "Stop" => HookKind::Stop,
            "SessionEnd" => HookKind::SessionEnd,
            "Notification" => match self.notification_type.as_deref() {
                Some("permission_prompt") => HookKind::PermissionPrompt,
                Some("elicitation_dialog") => HookKind::Elicitation,
                Some("idle_prompt") => HookKind::IdlePrompt,
                Some(_) => HookKind::OtherNotification,
                // Versions before `notification_type` existed: read the message.
                None => notification_kind_from_message(self.message.as_deref().unwrap_or("")),
            },
            _ => return None,
        };
        Some(kind)
    }

    /// The record to keep, received at `at`.
    pub fn record(&self, at: Time) -> Option<HookRecord> {
        Some(HookRecord {
            kind: self.kind()?,
            at,
            message: self.message.as_deref().map(|m| bounded(m, MAX_MESSAGE)),
            tool: self.tool_name.as_deref().map(|t| bounded(t, MAX_TOOL)),
            notification_type: self
                .notification_type
                .as_deref()
                .map(|t| bounded(t, MAX_TOOL)),
        })
    }
}

fn notification_kind_from_message(message: &str) -> HookKind {
    let m = message.to_ascii_lowercase();
    if m.contains("needs your permission") || m.contains("permission to use") {
        HookKind::PermissionPrompt
    } else if m.contains("waiting for your input") {
        HookKind::IdlePrompt
    } else {
        HookKind::OtherNotification
    }
}

/// Finds `"key": "value"` in possibly truncated JSON text and decodes the string.
fn prefix_string_field(text: &str, key: &str) -> Option<String> {
    let needle = format!("\"{key}\"");
    let mut from = 0;
    while let Some(pos) = text[from..].find(&needle) {
        let after = from + pos + needle.len();
        from = after;
        let rest = text[after..].trim_start();
        let Some(rest) = rest.strip_prefix(':') else {
            continue;
        };
        let rest = rest.trim_start();
        if !rest.starts_with('"') {
            continue;
        }
        let bytes = rest.as_bytes();
        let mut i = 1;
        while i < bytes.len() {
            match bytes[i] {
                b'\\' => i += 2,
                b'"' => return serde_json::from_str::<String>(&rest[..=i]).ok(),
                _ => i += 1,
            }
        }
        return None;
    }
    None
}

/// A session id safe to use as a file name (Claude's are UUIDs).
pub fn valid_session_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 128
        && !id.starts_with('.')
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

/// `<state>/evidence`.
pub fn evidence_dir(state_dir: &Path) -> PathBuf {
    state_dir.join("evidence")
}

/// `<state>/evidence/<session_id>.json`, or `None` for an unsafe id.
pub fn evidence_path(state_dir: &Path, session_id: &str) -> Option<PathBuf> {
    valid_session_id(session_id).then(|| evidence_dir(state_dir).join(format!("{session_id}.json")))
}

/// `<state>/nudge`: rewritten after every recorded event (see docs/hooks.md).
pub fn nudge_path(state_dir: &Path) -> PathBuf {
    state_dir.join("nudge")
}

/// Reads a session's hook evidence; missing or unreadable files are `None`.
pub fn load(state_dir: &Path, session_id: &str) -> Option<HookEvidence> {
    let path = evidence_path(state_dir, session_id)?;
    let bytes = paths::read_trusted(&path).ok()?;
    serde_json::from_slice::<HookEvidence>(&bytes)
        .ok()
        .filter(|e| e.version == FORMAT_VERSION && e.session_id == session_id)
}

/// The hook evidence of the session that writes `transcript` (Claude names transcripts
/// `<session_id>.jsonl`). Evidence that names a different transcript is not returned, so a
/// reused or stale session id never lends its hooks to another file.
pub fn load_for_transcript(state_dir: &Path, transcript: &Path) -> Option<HookEvidence> {
    let session_id = transcript.file_stem()?.to_str()?;
    load(state_dir, session_id).filter(|e| {
        e.transcript_path
            .as_deref()
            .map_or(true, |p| p == transcript)
    })
}

/// What the watcher finds in `<state>/nudge`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Nudge {
    pub session_id: String,
    pub kind: HookKind,
    #[serde(default)]
    pub pane: Option<String>,
    pub at: Time,
}

/// Records one hook event received at `now` from the agent in `pane`. Returns the evidence
/// path, or `None` when the event is one agentpane ignores.
pub fn record_event(
    state_dir: &Path,
    input: &HookInput,
    pane: Option<&str>,
    now: Time,
) -> Result<Option<PathBuf>> {
    let Some(record) = input.record(now) else {
        return Ok(None);
    };
    let Some(session_id) = input.session_id.as_deref() else {
        bail!("hook event without session_id");
    };
    let Some(path) = evidence_path(state_dir, session_id) else {
        bail!("unusable session_id {:?}", bounded(session_id, 64));
    };
    let dir = evidence_dir(state_dir);
    paths::ensure_private_dir(state_dir)?;
    paths::ensure_private_dir(&dir)?;
    if record.kind == HookKind::SessionStart {
        prune(&dir, now);
    }

    let kind = record.kind;
    {
        // Hooks may run at once: take turns (one lock for all sessions; the critical section
        // is a read and a small write), but never hold the agent up more than half a second.
        let _lock = paths::FileLock::acquire_within(
            &state_dir.join("evidence.lock"),
            Duration::from_millis(500),
        );
        let mut evidence = paths::read_trusted(&path)
            .ok()
            .and_then(|b| serde_json::from_slice::<HookEvidence>(&b).ok())
            .filter(|e| e.version == FORMAT_VERSION && e.session_id == session_id)
            .unwrap_or_else(|| HookEvidence::new(session_id, now));
        if let Some(t) = &input.transcript_path {
            evidence.transcript_path = Some(PathBuf::from(t));
        }
        if let Some(c) = &input.cwd {
            evidence.cwd = Some(bounded(c, 4096));
        }
        if let Some(p) = pane.filter(|p| !p.is_empty()) {
            evidence.pane = Some(bounded(p, 32));
        }
        evidence.push(record);
        let data = serde_json::to_vec(&evidence).context("cannot encode hook evidence")?;
        replace_quick(&path, &data)?;
    }

    let nudge = Nudge {
        session_id: session_id.to_string(),
        kind,
        pane: pane.filter(|p| !p.is_empty()).map(|p| bounded(p, 32)),
        at: now,
    };
    let data = serde_json::to_vec(&nudge).context("cannot encode nudge")?;
    replace_quick(&nudge_path(state_dir), &data)?;
    Ok(Some(path))
}

/// Atomic replace without fsync: evidence is a hint that is rewritten within seconds, and
/// the hook must not wait on the disk. Readers see the old or the new file, never a mix.
fn replace_quick(path: &Path, data: &[u8]) -> Result<()> {
    let name = path
        .file_name()
        .with_context(|| format!("{} has no file name", path.display()))?;
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let tmp = path.with_file_name(format!(
        ".{}.{}.{nanos}.tmp",
        name.to_string_lossy(),
        std::process::id()
    ));
    let written = (|| -> std::io::Result<()> {
        let mut f = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&tmp)?;
        f.write_all(data)?;
        fs::rename(&tmp, path)
    })();
    if let Err(e) = written {
        let _ = fs::remove_file(&tmp);
        return Err(e).with_context(|| format!("cannot write {}", path.display()));
    }
    Ok(())
}

/// Removes evidence files not touched for [`PRUNE_AFTER`].
fn prune(dir: &Path, now: Time) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let now = std::time::SystemTime::from(now);
    for entry in entries.flatten() {
        let path = entry.path();
        let stale = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|m| now.duration_since(m).ok())
            .is_some_and(|age| age > PRUNE_AFTER);
        if stale && path.extension().is_some_and(|e| e == "json") {
            let _ = fs::remove_file(path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn t(s: i64) -> Time {
        chrono::Utc.timestamp_opt(1_750_000_000 + s, 0).unwrap()
    }

    #[test]
    fn parses_notification_kinds() {
        let input = HookInput::parse(
            br#"{"session_id":"abc","hook_event_name":"Notification","notification_type":"permission_prompt","message":"Claude needs your permission to use Bash"}"#,
        )
        .unwrap();
        assert_eq!(input.kind(), Some(HookKind::PermissionPrompt));
        let old = HookInput::parse(
            br#"{"session_id":"abc","hook_event_name":"Notification","message":"Claude is waiting for your input"}"#,
        )
        .unwrap();
        assert_eq!(old.kind(), Some(HookKind::IdlePrompt));
        let ignored = HookInput::parse(br#"{"hook_event_name":"SubagentStop"}"#).unwrap();
        assert_eq!(ignored.kind(), None);
    }

    #[test]
    fn wrong_field_types_are_skipped_not_fatal() {
        let input = HookInput::parse(
            br#"{"session_id":"abc","hook_event_name":"Stop","message":42,"cwd":["x"]}"#,
        )
        .unwrap();
        assert_eq!(input.kind(), Some(HookKind::Stop));
        assert_eq!(input.message, None);
        assert_eq!(input.cwd, None);
    }

    #[test]
    fn truncated_input_keeps_leading_fields() {
        let cut = br#"{"session_id":"s-1","transcript_path":"/t.jsonl","hook_event_name":"PostToolUse","tool_name":"Read","tool_response":{"content":"aaaaaaaa"#;
        let input = HookInput::parse(cut).unwrap();
        assert_eq!(input.session_id.as_deref(), Some("s-1"));
        assert_eq!(input.tool_name.as_deref(), Some("Read"));
        assert_eq!(input.kind(), Some(HookKind::PostToolUse));
        assert!(HookInput::parse(b"\x00\xffgarbage").is_none());
        assert!(HookInput::parse(b"").is_none());
    }

    #[test]
    fn keeps_one_record_per_kind() {
        let mut ev = HookEvidence::new("s", t(0));
        for (i, kind) in [HookKind::PreToolUse, HookKind::Stop, HookKind::PreToolUse]
            .into_iter()
            .enumerate()
        {
            ev.push(HookRecord {
                kind,
                at: t(i as i64),
                message: None,
                tool: None,
                notification_type: None,
            });
        }
        assert_eq!(ev.events.len(), 2);
        assert_eq!(ev.latest_decisive().unwrap().kind, HookKind::PreToolUse);
        assert_eq!(ev.updated_at, t(2));
    }

    #[test]
    fn session_ids_are_file_name_safe() {
        assert!(valid_session_id("0d4b1c3e-1a2b-4c5d-8e9f-0123456789ab"));
        for bad in ["", "../x", "a/b", ".hidden", "a b", &"x".repeat(200)] {
            assert!(!valid_session_id(bad), "{bad}");
        }
    }

    #[test]
    fn evidence_for_a_transcript_must_name_it() {
        let dir = tempfile::tempdir().unwrap();
        let input = HookInput::parse(
            br#"{"session_id":"s2","transcript_path":"/p/s2.jsonl","hook_event_name":"Stop"}"#,
        )
        .unwrap();
        record_event(dir.path(), &input, None, t(1)).unwrap();
        assert!(load_for_transcript(dir.path(), Path::new("/p/s2.jsonl")).is_some());
        assert!(load_for_transcript(dir.path(), Path::new("/other/s2.jsonl")).is_none());
        assert!(load_for_transcript(dir.path(), Path::new("/p/s3.jsonl")).is_none());
    }

    #[test]
    fn records_and_nudges() {
        let dir = tempfile::tempdir().unwrap();
        let input = HookInput::parse(
            br#"{"session_id":"s1","hook_event_name":"PreToolUse","tool_name":"Bash","cwd":"/w"}"#,
        )
        .unwrap();
        let path = record_event(dir.path(), &input, Some("%3"), t(5))
            .unwrap()
            .unwrap();
        assert!(path.ends_with("evidence/s1.json"));
        let ev = load(dir.path(), "s1").unwrap();
        assert_eq!(ev.pane.as_deref(), Some("%3"));
        assert_eq!(
            ev.get(HookKind::PreToolUse).unwrap().tool.as_deref(),
            Some("Bash")
        );
        let nudge: Nudge =
            serde_json::from_slice(&fs::read(nudge_path(dir.path())).unwrap()).unwrap();
        assert_eq!(nudge.session_id, "s1");
        assert_eq!(nudge.kind, HookKind::PreToolUse);
        let leftovers: Vec<_> = fs::read_dir(evidence_dir(dir.path()))
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(leftovers.len(), 1, "{leftovers:?}");
    }
}
