//! The live session record's own status (docs/design.md#evidence-order, source 2): Claude Code
//! keeps `<root>/sessions/<PID>.json` with `status` (`busy|idle|shell|waiting`), `waitingFor` and
//! `statusUpdatedAt`/`updatedAt`. Locating the file is the resolver's job; this reads the
//! status part of its content, leniently.

use std::path::Path;

use serde::Serialize;
use serde_json::Value;

use super::bounded;
use crate::agents::record::SessionRecord;
use crate::events::Time;
use crate::read::time::{epoch_time, json_time};

/// What the record says the session is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RecordState {
    /// `busy`: a turn is running.
    Busy,
    /// `idle`: the turn is closed.
    Idle,
    /// `waiting`: blocked on the human (`waitingFor` says on what).
    Waiting,
    /// `shell` or any other value: says nothing about the turn.
    Other,
}

/// The status fields of one session record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RecordStatus {
    pub state: RecordState,
    /// `waitingFor`, bounded.
    pub waiting_for: Option<String>,
    /// `statusUpdatedAt`, else `updatedAt`.
    pub updated_at: Option<Time>,
    /// `sessionId`, for callers that check it against the transcript.
    pub session_id: Option<String>,
}

impl RecordStatus {
    /// Reads the status from a record's JSON text; `None` when it is not a JSON object or
    /// has no `status`.
    pub fn parse(json: &[u8]) -> Option<RecordStatus> {
        let value: Value = serde_json::from_slice(json).ok()?;
        let obj = value.as_object()?;
        let status = obj.get("status")?.as_str()?;
        let state = match status {
            "busy" => RecordState::Busy,
            "idle" => RecordState::Idle,
            "waiting" => RecordState::Waiting,
            _ => RecordState::Other,
        };
        let updated_at = obj
            .get("statusUpdatedAt")
            .and_then(json_time)
            .or_else(|| obj.get("updatedAt").and_then(json_time));
        Some(RecordStatus {
            state,
            waiting_for: obj
                .get("waitingFor")
                .and_then(Value::as_str)
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(|s| bounded(s, 200)),
            updated_at,
            session_id: obj
                .get("sessionId")
                .and_then(Value::as_str)
                .map(|s| bounded(s, 128)),
        })
    }

    /// The status part of a record the resolver already parsed; `None` without `status`.
    pub fn from_session_record(record: &SessionRecord) -> Option<RecordStatus> {
        let state = match record.status.as_deref()? {
            "busy" => RecordState::Busy,
            "idle" => RecordState::Idle,
            "waiting" => RecordState::Waiting,
            _ => RecordState::Other,
        };
        let ms = |v: Option<i64>| v.and_then(|n| epoch_time(n as f64));
        Some(RecordStatus {
            state,
            waiting_for: record
                .waiting_for
                .as_deref()
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(|s| bounded(s, 200)),
            updated_at: ms(record.status_updated_at).or_else(|| ms(record.updated_at)),
            session_id: record.session_id.clone(),
        })
    }

    /// Reads and parses a record file; unreadable files are `None`.
    pub fn read(path: &Path) -> Option<RecordStatus> {
        let bytes = std::fs::read(path).ok()?;
        if bytes.len() > 1 << 20 {
            return None;
        }
        RecordStatus::parse(&bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_waiting_record() {
        let rec = RecordStatus::parse(
            br#"{"pid":4242,"sessionId":"abc","cwd":"/w","startedAt":1764500000000,
                "status":"waiting","waitingFor":"permission: Bash","statusUpdatedAt":1764500060000,
                "updatedAt":1764500000000}"#,
        )
        .unwrap();
        assert_eq!(rec.state, RecordState::Waiting);
        assert_eq!(rec.waiting_for.as_deref(), Some("permission: Bash"));
        assert_eq!(
            rec.updated_at.unwrap().timestamp_millis(),
            1_764_500_060_000
        );
        assert_eq!(rec.session_id.as_deref(), Some("abc"));
    }

    #[test]
    fn falls_back_to_updated_at_and_accepts_strings() {
        let rec = RecordStatus::parse(br#"{"status":"busy","updatedAt":"2026-11-30T10:00:00Z"}"#)
            .unwrap();
        assert_eq!(rec.state, RecordState::Busy);
        assert_eq!(
            rec.updated_at.unwrap().to_rfc3339(),
            "2026-11-30T10:00:00+00:00"
        );
        let shell = RecordStatus::parse(br#"{"status":"shell"}"#).unwrap();
        assert_eq!(shell.state, RecordState::Other);
        assert_eq!(shell.updated_at, None);
    }

    #[test]
    fn agrees_with_the_resolvers_record() {
        let json = br#"{"pid":7,"sessionId":"abc","status":"waiting","waitingFor":"permission",
            "statusUpdatedAt":1764500060000,"updatedAt":1764500000000}"#;
        let parsed = RecordStatus::parse(json).unwrap();
        let via_resolver =
            RecordStatus::from_session_record(&SessionRecord::parse(json).unwrap()).unwrap();
        assert_eq!(parsed, via_resolver);
        assert!(RecordStatus::from_session_record(&SessionRecord::default()).is_none());
    }

    #[test]
    fn rejects_records_without_status() {
        assert!(RecordStatus::parse(br#"{"pid":1}"#).is_none());
        assert!(RecordStatus::parse(b"[1,2]").is_none());
        assert!(RecordStatus::parse(b"{\"status\":").is_none());
    }
}
