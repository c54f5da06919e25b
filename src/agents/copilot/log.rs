//! Copilot CLI's per-process log, `<home>/logs/process-<start ms>-<PID>.log`: plain lines
//! `<RFC 3339 time> [LEVEL] message`. Two things in it are nowhere else:
//! - `Registering foreground session: <id>` ties the process to its session even when its
//!   lock files are gone;
//! - `Model provider request failed {… "http_status":429 …}` is written at every failed model
//!   call, while Copilot retries it. The session log says nothing until the retries end (one
//!   `session.error`, ~60 s later for a 429 in 1.0.102) and the screen shows only its usual
//!   `Working` spinner. Each failure is one line, so the log tells how far the retries are.

use crate::agents::retry::Retrying;
use crate::events::Time;

/// The logs folder under the home.
pub const LOGS: &str = "logs";

/// The marker of a failed model call.
const FAILED: &str = "Model provider request failed";

/// The marker of the session a process owns.
const FOREGROUND: &str = "Registering foreground session: ";

/// True when `file_name` is the log of process `pid` (`process-<ms>-<PID>.log`).
pub fn is_log_of(file_name: &str, pid: u32) -> bool {
    file_name
        .strip_prefix("process-")
        .and_then(|r| r.strip_suffix(".log"))
        .and_then(|r| r.rsplit_once('-'))
        .is_some_and(|(ms, p)| ms.bytes().all(|b| b.is_ascii_digit()) && p == pid.to_string())
}

/// How much of the end of a process log is read for its recent failures.
const TAIL: u64 = 256 * 1024;

/// The end of process `pid`'s log under `home` (its last [`TAIL`] bytes, from a line start);
/// `None` when it has none.
pub fn tail_of(home: &std::path::Path, pid: u32) -> Option<String> {
    use std::io::{Read, Seek, SeekFrom};
    let dir = home.join(LOGS);
    let path = std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| is_log_of(n, pid))
        })
        .max()?;
    let mut file = crate::read::open_regular(&path).ok()?;
    let len = file.metadata().ok()?.len();
    file.seek(SeekFrom::Start(len.saturating_sub(TAIL))).ok()?;
    let mut bytes = Vec::new();
    file.take(TAIL).read_to_end(&mut bytes).ok()?;
    let text = String::from_utf8_lossy(&bytes);
    // A cut first line is not a line.
    let start = if len > TAIL {
        text.find('\n').map_or(text.len(), |i| i + 1)
    } else {
        0
    };
    Some(text[start..].to_string())
}

/// The session a process registered last (a `/resume` or `/new` registers another).
pub fn foreground_session(log: &str) -> Option<&str> {
    log.lines()
        .rev()
        .find_map(|l| l.split_once(FOREGROUND).map(|(_, id)| id.trim()))
        .filter(|id| !id.is_empty())
}

/// One failed model call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub at: Time,
    /// The HTTP status, when the failure was an HTTP error.
    pub status: Option<u16>,
}

/// The failed model calls in `log`, oldest first.
pub fn failures(log: &str) -> Vec<Failure> {
    log.lines()
        .filter(|l| l.contains(FAILED))
        .filter_map(|l| {
            let at = chrono::DateTime::parse_from_rfc3339(l.split_whitespace().next()?)
                .ok()?
                .with_timezone(&chrono::Utc);
            let status = crate::agents::retry::number_after(l, "\"http_status\":")
                .and_then(|s| u16::try_from(s).ok());
            Some(Failure { at, status })
        })
        .collect()
}

/// Where Copilot's retries of the open turn stand: the failures logged since `turn_start`
/// (the newest `user.message` or `assistant.turn_start` of an open turn). `None` when no
/// call failed since. The limit is not shown anywhere; 1.0.102 made six calls in all
/// ("retried 5 times").
pub fn retrying(log: &str, turn_start: Time) -> Option<Retrying> {
    let since: Vec<Failure> = failures(log)
        .into_iter()
        .filter(|f| f.at >= turn_start)
        .collect();
    let last = since.last()?;
    let error = match last.status {
        Some(s) => format!("HTTP {s}"),
        None => "model call failed".to_string(),
    };
    Some(Retrying {
        error: if last.status == Some(429) {
            "429 rate limit".to_string()
        } else {
            error
        },
        attempt: u32::try_from(since.len() + 1).ok(),
        limit: None,
        next_in: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agents::copilot::testkit::fixture;

    fn t(s: &str) -> Time {
        chrono::DateTime::parse_from_rfc3339(s)
            .unwrap()
            .with_timezone(&chrono::Utc)
    }

    #[test]
    fn the_log_names_its_process_and_session() {
        assert!(is_log_of("process-1796204243700-23458.log", 23458));
        assert!(!is_log_of("process-1796204243700-23458.log", 2345));
        assert!(!is_log_of("process-x-23458.log", 23458));
        let log = fixture("process-23458.log");
        assert_eq!(
            foreground_session(&log),
            Some("d38a9ca2-0b42-42fe-9b64-bf880971459a")
        );
    }

    #[test]
    fn each_failed_call_of_the_recorded_429_is_counted() {
        let log = fixture("process-23458.log");
        let all = failures(&log);
        // The 400 once, the 429 six times (five retries).
        let statuses: Vec<Option<u16>> = all.iter().map(|f| f.status).collect();
        assert_eq!(statuses[0], Some(400));
        assert_eq!(&statuses[1..], &[Some(429); 6]);
        // The 429 prompt was sent at 09:38:32.942; three failures by 09:38:50.
        let prompt = t("2026-12-02T09:38:32.942Z");
        let upto: String = log
            .lines()
            .filter(|l| l < &"2026-12-02T09:38:50")
            .map(|l| format!("{l}\n"))
            .collect();
        let r = retrying(&upto, prompt).expect("retrying");
        assert_eq!(r.attempt, Some(4));
        assert_eq!(r.reason(), "rate limit — retrying (attempt 4)");
        // Before the prompt: the 400 belongs to the earlier turn.
        assert_eq!(retrying(&log, t("2026-12-02T09:40:00Z")), None);
    }

    /// The watcher's look at a quiet Copilot turn: its process's own log, found by pid in
    /// the home's `logs/`, read from its end.
    #[test]
    fn a_quiet_turn_finds_its_retries_in_its_process_log() {
        use crate::agents::Agent;
        let home = tempfile::tempdir().unwrap();
        let logs = home.path().join(LOGS);
        std::fs::create_dir_all(&logs).unwrap();
        let log = fixture("process-23458.log");
        let upto: String = log
            .lines()
            .filter(|l| l < &"2026-12-02T09:38:50")
            .map(|l| format!("{l}\n"))
            .collect();
        // Another process's log and a huge head that the read from the end skips.
        std::fs::write(logs.join("process-1796000000000-999.log"), &log).unwrap();
        let padding = "2026-12-02T09:00:00.000Z [INFO] padding\n".repeat(10_000);
        std::fs::write(
            logs.join("process-1796000000001-23458.log"),
            format!("{padding}{upto}"),
        )
        .unwrap();
        let prompt = t("2026-12-02T09:38:32.942Z");
        let copilot = super::super::Copilot;
        let r = copilot
            .retrying_aside(23458, home.path(), prompt)
            .expect("the retries of this process");
        assert_eq!(r.attempt, Some(4));
        assert_eq!(
            copilot.retrying_aside(4242, home.path(), prompt),
            None,
            "no log"
        );
        assert_eq!(
            copilot.retrying_aside(23458, &home.path().join("nowhere"), prompt),
            None
        );
    }
}
