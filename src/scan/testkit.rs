//! Builders for constructed scan reports, shared by the pure tests of the scan and the outputs.

use std::path::PathBuf;

use chrono::TimeZone;

use crate::events::{AgentKind, Time};
use crate::resolve::{AgentProcess, Resolved, Via};
use crate::scan::PaneReport;
use crate::state::Source;
use crate::state::{State, Status};
use crate::tmux::Pane;

/// A fixed clock: 2026-06-12 21:00:00 UTC plus `secs`.
pub fn t(secs: i64) -> Time {
    chrono::Utc.with_ymd_and_hms(2026, 6, 12, 21, 0, 0).unwrap() + chrono::Duration::seconds(secs)
}

/// A Claude pane `%N` in window `@W` of session `s`, in `state`, decided at `t(at)`.
pub fn report(pane: u32, window: u32, state: State, at: i64) -> PaneReport {
    let mut status = Status::idle();
    status.state = state;
    status.at = Some(t(at));
    status.last_activity = Some(t(at));
    status.turn_key = Some(format!("turn-{pane}-{at}"));
    status.turn_open = matches!(state, State::Working | State::Stalled | State::Waiting);
    PaneReport {
        resolved: std::sync::Arc::new(Resolved {
            pane: Pane {
                pane_id: format!("%{pane}"),
                pane_pid: 1000 + pane,
                session: "s".into(),
                window_index: window,
                window_name: format!("w{window}"),
                window_id: format!("@{window}"),
                pane_index: pane,
                cwd: "/tmp".into(),
                pane_active: false,
                window_active: false,
                session_attached: 0,
                dead: false,
                current_command: "claude".into(),
                tty: String::new(),
                activity: None,
                title: String::new(),
            },
            agent: Some(AgentProcess {
                kind: AgentKind::Claude,
                pid: 2000 + pane,
                started: 0,
                root: None,
                command: "claude".into(),
            }),
            transcript: Some(PathBuf::from(format!("/t/{pane}.jsonl"))),
            machine_driven: false,
            via: Via::SessionRecord,
            session_id: None,
            steps: Vec::new(),
            record: None,
        }),
        status,
        source: Source::Transcript,
        usage: None,
    }
}

/// The same report with the pane focused by an attached client.
pub fn focused(mut r: PaneReport) -> PaneReport {
    let pane = &mut std::sync::Arc::make_mut(&mut r.resolved).pane;
    pane.pane_active = true;
    pane.window_active = true;
    pane.session_attached = 1;
    r
}

/// One `list-panes` line for pane `%1` of process `pid`.
pub fn pane_line(pid: u32, command: &str, title: &str) -> String {
    let f = [
        "%1",
        &pid.to_string(),
        "main",
        "0",
        "w",
        "0",
        "/tmp",
        "1",
        "1",
        "0",
        "0",
        "@1",
        command,
        "/dev/pts/0",
        "1796193805",
        title,
    ];
    format!("{}\n", f.join("\u{1f}"))
}
