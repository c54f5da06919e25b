//! The live session record, in Claude Code's format (`<root>/sessions/<PID>.json`, the only
//! agent that keeps one today): the fields agentpane uses, read leniently, and the check that
//! the record belongs to this process and not to an earlier one with the same PID
//! (docs/design.md#resolving-a-pane). It sits beside the shared locator types because
//! [`Found`](super::locate::Found) carries it. Finding the file is Claude's locator's job
//! (`claude/locate.rs`); what its `status` means is evidence (`evidence/record.rs`).

use chrono::{Local, NaiveDateTime, TimeZone, Utc};
use serde::Serialize;
use serde_json::Value;

/// The fields of a live session record that agentpane uses; everything is optional and
/// extra fields are ignored, so records of any Claude Code version parse.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SessionRecord {
    pub pid: Option<u32>,
    pub session_id: Option<String>,
    pub cwd: Option<String>,
    /// Milliseconds since the epoch.
    pub started_at: Option<i64>,
    /// As written: clock ticks since boot, epoch seconds/milliseconds, or a ctime string.
    pub proc_start: Option<String>,
    /// `busy`, `idle`, `shell`, `waiting`.
    pub status: Option<String>,
    pub waiting_for: Option<String>,
    /// Milliseconds since the epoch.
    pub status_updated_at: Option<i64>,
    /// Milliseconds since the epoch.
    pub updated_at: Option<i64>,
    pub version: Option<String>,
    pub name: Option<String>,
}

impl SessionRecord {
    /// Parses a record; `None` when it is not a JSON object.
    pub fn parse(bytes: &[u8]) -> Option<SessionRecord> {
        let v: Value = serde_json::from_slice(bytes).ok()?;
        let o = v.as_object()?;
        let s = |k: &str| match o.get(k)? {
            Value::String(s) => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        };
        let n = |k: &str| match o.get(k)? {
            Value::Number(n) => n.as_i64().or_else(|| n.as_f64().map(|f| f as i64)),
            Value::String(s) => s.parse().ok(),
            _ => None,
        };
        Some(SessionRecord {
            pid: n("pid").and_then(|p| u32::try_from(p).ok()),
            session_id: s("sessionId").filter(|id| valid_session_id(id)),
            cwd: s("cwd"),
            started_at: n("startedAt"),
            proc_start: s("procStart"),
            status: s("status"),
            waiting_for: s("waitingFor"),
            status_updated_at: n("statusUpdatedAt"),
            updated_at: n("updatedAt"),
            version: s("version"),
            name: s("name"),
        })
    }

    /// Whether this record was written by the process with this PID that started at `start`
    /// (epoch seconds; `ticks` = its start in clock ticks since boot, when known). `Err`
    /// explains why not: the PID was reused by a newer process.
    pub fn check_owner(&self, pid: u32, start: u64, ticks: Option<u64>) -> Result<(), String> {
        if let Some(rec_pid) = self.pid.filter(|p| *p != pid) {
            return Err(format!("it names PID {rec_pid}"));
        }
        if let Some(ps) = self.proc_start.as_deref() {
            if proc_start_matches(ps, start, ticks) == Some(false) {
                return Err(format!("its procStart `{ps}` is not this process's start"));
            }
        }
        if let Some(ms) = self.started_at {
            // The record is written after the process starts, never before it.
            if start > 0 && ms / 1000 + 2 < start as i64 {
                return Err(format!(
                    "it was written at {} before this process started at {}",
                    fmt_secs(ms / 1000),
                    fmt_secs(start as i64)
                ));
            }
        }
        Ok(())
    }
}

/// Does `procStart` name a process that started at `start`? `None` when it cannot tell.
fn proc_start_matches(ps: &str, start: u64, ticks: Option<u64>) -> Option<bool> {
    let near = |secs: i64| (secs - start as i64).abs() <= 2;
    let ps = ps.trim();
    if let Ok(n) = ps.parse::<u64>() {
        let as_epoch = n > 1_000_000_000 && (near(n as i64) || near((n / 1000) as i64));
        return match ticks {
            Some(t) => Some(n == t || as_epoch),
            None if n > 1_000_000_000 => Some(as_epoch),
            None => None,
        };
    }
    // `ps -o lstart` / ctime form, e.g. `Thu Jul  9 04:18:26 2026`, in the writer's time zone.
    let collapsed = ps.split_whitespace().collect::<Vec<_>>().join(" ");
    let naive = NaiveDateTime::parse_from_str(&collapsed, "%a %b %d %H:%M:%S %Y").ok()?;
    let local = Local
        .from_local_datetime(&naive)
        .earliest()
        .map(|t| t.timestamp());
    let utc = Utc.from_utc_datetime(&naive).timestamp();
    Some(local.is_some_and(near) || near(utc))
}

fn fmt_secs(secs: i64) -> String {
    chrono::DateTime::from_timestamp(secs, 0)
        .map(|t| t.format("%Y-%m-%d %H:%M:%S UTC").to_string())
        .unwrap_or_else(|| secs.to_string())
}

/// Session ids are UUIDs; anything with a path separator is refused.
fn valid_session_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 128
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_parse_leniently() {
        let r = SessionRecord::parse(
            br#"{"pid":4275,"sessionId":"2aa9e79e-1","cwd":"/w","startedAt":1783570707479,
                "procStart":"Thu Jul  9 04:18:26 2026","status":"busy","extra":{"x":1}}"#,
        )
        .unwrap();
        assert_eq!(r.pid, Some(4275));
        assert_eq!(r.session_id.as_deref(), Some("2aa9e79e-1"));
        assert_eq!(r.status.as_deref(), Some("busy"));
        let sparse =
            SessionRecord::parse(br#"{"sessionId":"abc","pid":"12","startedAt":"x"}"#).unwrap();
        assert_eq!((sparse.pid, sparse.started_at), (Some(12), None));
        assert!(SessionRecord::parse(b"{\"sessionId\":").is_none());
        assert!(SessionRecord::parse(b"[1,2]").is_none());
        let evil = SessionRecord::parse(br#"{"sessionId":"../../etc/passwd"}"#).unwrap();
        assert_eq!(evil.session_id, None);
    }

    #[test]
    fn reused_pid_is_detected_from_start_times() {
        let start = 1_790_000_000u64;
        let rec = |started_ms: i64, ps: Option<&str>| SessionRecord {
            pid: Some(7),
            session_id: Some("s".into()),
            started_at: Some(started_ms),
            proc_start: ps.map(str::to_string),
            ..SessionRecord::default()
        };
        let ms = start as i64 * 1000;
        assert!(rec(ms + 1500, None).check_owner(7, start, None).is_ok());
        // Written an hour before this process started: an earlier process with this PID.
        assert!(rec(ms - 3_600_000, None)
            .check_owner(7, start, None)
            .is_err());
        // procStart in clock ticks.
        assert!(rec(ms, Some("98765"))
            .check_owner(7, start, Some(98765))
            .is_ok());
        assert!(rec(ms, Some("12345"))
            .check_owner(7, start, Some(98765))
            .is_err());
        assert!(rec(ms, Some("12345")).check_owner(7, start, None).is_ok());
        // procStart as epoch seconds and as a UTC ctime string.
        let secs = start.to_string();
        assert!(rec(ms, Some(&secs)).check_owner(7, start, None).is_ok());
        let ctime = Utc
            .timestamp_opt(start as i64, 0)
            .unwrap()
            .format("%a %b %e %H:%M:%S %Y")
            .to_string();
        assert!(rec(ms, Some(&ctime)).check_owner(7, start, None).is_ok());
        assert!(rec(ms, Some(&ctime))
            .check_owner(7, start + 100_000, None)
            .is_err());
        assert!(rec(ms, None).check_owner(8, start, None).is_err());
    }
}
