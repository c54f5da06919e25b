//! The adapter against what Cline CLI 3.0.65 wrote (fixtures/real-clients/cline-3.0.65: one
//! session copied at each step of a recorded run).

use std::path::PathBuf;

use super::*;
use crate::agents::Agent;
use crate::events::EventKind;
use crate::state::{classify, Observation, State, Windows};

const ID: &str = "1796613871484_5onw0";

/// The conversation file of the session as it stood at `step`.
fn messages(step: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/real-clients/cline-3.0.65")
        .join(step)
        .join("sessions")
        .join(ID)
        .join(format!("{ID}.messages.json"))
}

/// The state at `step`, read `secs` after the step's last message.
fn state_at(step: &str, secs: i64) -> crate::state::Status {
    let s = read_session(&messages(step)).unwrap();
    let last = s.messages.iter().rev().find_map(parse::time).unwrap();
    let now = last + chrono::Duration::seconds(secs);
    // The record's file time is when the copy was made: pin it to the step's own time.
    let events = parse::events(&s.messages, &s.record.status, Some(last));
    classify(&events, now, &Windows::default(), Observation::default())
}

#[test]
fn the_record_names_the_process_its_status_and_usage() {
    let s = read_session(&messages("denied")).unwrap();
    assert_eq!(s.record.id, ID);
    assert_eq!(s.record.pid, Some(29890));
    assert_eq!(s.record.status, "idle");
    assert_eq!(s.record.model.as_deref(), Some("stand-in"));
    let u = usage(&s);
    assert_eq!(u.context_tokens, Some(1200));
    assert_eq!(u.model.as_deref(), Some("stand-in"));
    assert!(u.session_input.is_some_and(|i| i >= 1200), "{u:?}");
    assert!(u.session_output.is_some_and(|o| o >= 34), "{u:?}");
    let via_trait = Cline.session_usage(&messages("denied")).unwrap().unwrap();
    assert_eq!(via_trait, u);
}

#[test]
fn an_answer_closes_the_turn_and_is_the_last_answer() {
    let st = state_at("denied", 1);
    assert_eq!(st.state, State::YourTurn, "{st:?}");
    assert_eq!(st.reason, None);
    let a = Cline
        .last_answer(&messages("denied"), Budget::default())
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(a.text, "Tool done.");
    assert_eq!(a.agent, AgentKind::Cline);
}

#[test]
fn a_pending_record_waits_on_the_call_it_asks_about() {
    let st = state_at("pending", 30);
    assert_eq!(st.state, State::Waiting, "{st:?}");
    assert_eq!(
        st.reason.as_deref(),
        Some("permission: run_commands (rm -rf scratch)")
    );
    let req = Cline.pending_request(&messages("pending")).unwrap();
    assert_eq!(req.tool, "run_commands");
    assert_eq!(req.summary, "rm -rf scratch");
    assert_eq!(req.call_id.as_deref(), Some("call_1"));
    // Once answered, nothing is pending.
    assert!(Cline.pending_request(&messages("denied")).is_none());
}

#[test]
fn the_dialog_on_screen_is_the_logged_request_with_its_keys() {
    let screen = std::fs::read_to_string(
        messages("pending")
            .ancestors()
            .nth(3)
            .unwrap()
            .join("screen.txt"),
    )
    .unwrap();
    let shown = Cline.on_screen(&screen).expect("the dialog");
    assert_eq!(shown.request.tool, "run_commands");
    assert_eq!(shown.options, vec!["Approve", "Deny"]);
    assert_eq!(shown.choices.allow, Some(vec!["y".to_string()]));
    assert_eq!(shown.choices.deny, Some(vec!["n".to_string()]));
    let logged = Cline.pending_request(&messages("pending")).unwrap();
    assert!(
        logged.shown_in(&shown.request),
        "{logged:?} vs {:?}",
        shown.request
    );
    // After the answer the screen shows no dialog.
    let after = std::fs::read_to_string(
        messages("interrupted")
            .ancestors()
            .nth(3)
            .unwrap()
            .join("screen.txt"),
    )
    .unwrap();
    assert!(Cline.on_screen(&after).is_none());
}

#[test]
fn api_errors_read_as_attention_with_no_answer() {
    let st = state_at("badreq", 1);
    assert_eq!(st.state, State::Attention, "{st:?}");
    assert_eq!(
        st.reason.as_deref(),
        Some("api error: model stand-in does not exist")
    );
    let st = state_at("quota", 1);
    assert_eq!(st.state, State::Attention, "{st:?}");
    assert_eq!(st.reason.as_deref(), Some("quota exceeded"));
    let none = Cline
        .last_answer(&messages("quota"), Budget::default())
        .unwrap()
        .unwrap();
    assert_eq!(none, None);
}

#[test]
fn a_running_record_opens_a_turn_its_messages_do_not_show_yet() {
    // `slow`: the prompt is not written until its first step ends; the record says running.
    let s = read_session(&messages("slow")).unwrap();
    assert_eq!(s.record.status, "running");
    assert!(matches!(
        parse::event_of(s.messages.last().unwrap()).unwrap().kind,
        EventKind::ApiError(_)
    ));
    let st = state_at("slow", 2);
    assert_eq!(st.state, State::Working, "{st:?}");
    assert!(st.turn_open);
}

#[test]
fn a_turn_stopped_before_its_answer_is_interrupted() {
    let st = state_at("interrupted", 1);
    assert_eq!(st.state, State::YourTurn, "{st:?}");
    assert_eq!(st.reason.as_deref(), Some("interrupted"));
    let none = Cline
        .last_answer(&messages("interrupted"), Budget::default())
        .unwrap()
        .unwrap();
    assert_eq!(none, None);
}

#[test]
fn its_conversation_is_known_by_its_path() {
    assert!(Cline.owns_path(&messages("denied")));
    assert!(!Cline.owns_path(&messages("denied").with_file_name(format!("{ID}.json"))));
    assert!(!Cline.owns_path(std::path::Path::new("/tmp/x/other.messages.json")));
    let sources = Cline.sources(&messages("denied")).unwrap();
    assert_eq!(
        sources[1].file_name().unwrap(),
        format!("{ID}.json").as_str()
    );
}

#[test]
fn bad_files_are_errors_not_panics() {
    let dir = tempfile::tempdir().unwrap();
    let m = dir.path().join("x.messages.json");
    std::fs::write(&m, "{not json").unwrap();
    std::fs::write(
        dir.path().join("x.json"),
        r#"{"session_id":"x","status":"idle"}"#,
    )
    .unwrap();
    assert!(Cline.file_events(&m).unwrap().is_err());
    std::fs::write(
        &m,
        r#"{"messages":[{"role":"user","content":7},{"role":42}]}"#,
    )
    .unwrap();
    let events = Cline.file_events(&m).unwrap().unwrap();
    assert_eq!(events.len(), 2, "{events:?}");
    std::fs::write(dir.path().join("x.json"), "[]").unwrap();
    assert!(Cline.file_events(&m).unwrap().is_err());
}

#[test]
fn a_pending_wait_keeps_its_key_however_often_the_record_is_written() {
    let s = read_session(&messages("pending")).unwrap();
    let at = |secs| {
        Some(parse::time(s.messages.last().unwrap()).unwrap() + chrono::Duration::seconds(secs))
    };
    let key = |written| {
        let events = parse::events(&s.messages, &s.record.status, written);
        classify(
            &events,
            at(5).unwrap(),
            &Windows::default(),
            Observation::default(),
        )
        .turn_key
    };
    assert!(key(at(1)).is_some());
    assert_eq!(key(at(1)), key(at(3)));
}

#[test]
fn the_watch_sees_the_first_session_folder_appear() {
    // `sessions` does not exist before a machine's first prompt; the data dir does.
    let root = std::path::Path::new("/data");
    let folders = Cline.folders(root, "/work");
    assert!(folders.contains(&root.to_path_buf()), "{folders:?}");
    assert!(folders.contains(&root.join("sessions")), "{folders:?}");
}

/// A process of the table.
fn proc(pid: u32, ppid: u32, argv0: &str) -> crate::proctree::ProcInfo {
    crate::proctree::ProcInfo {
        pid,
        ppid: Some(ppid),
        name: argv0.rsplit('/').next().unwrap_or(argv0).to_string(),
        argv: vec![argv0.to_string()],
        exe: Some(argv0.into()),
        start: 100,
    }
}

/// A data dir holding one session whose record names `pid`.
fn data_with_session(id: &str, pid: u32) -> tempfile::TempDir {
    let data = tempfile::tempdir().unwrap();
    let dir = data.path().join("sessions").join(id);
    std::fs::create_dir_all(&dir).unwrap();
    let record = serde_json::json!({"session_id": id, "pid": pid, "status": "idle",
        "started_at": "2026-12-07T03:24:31.498Z"});
    std::fs::write(dir.join(format!("{id}.json")), record.to_string()).unwrap();
    std::fs::write(
        dir.join(format!("{id}.messages.json")),
        r#"{"messages":[]}"#,
    )
    .unwrap();
    data
}

fn found_for(
    data: &std::path::Path,
    table: &crate::proctree::ProcTable,
    pid: u32,
) -> crate::agents::locate::Found {
    let claimed = std::collections::HashSet::new();
    let cwds = vec!["/work".to_string()];
    let t = crate::agents::locate::Target {
        pid,
        start: 100,
        root: data,
        cwds: &cwds,
        claimed: &claimed,
    };
    locate::locate(&t, table, &mut Vec::new())
}

#[test]
fn a_record_naming_the_wrappers_child_is_the_wrappers_session() {
    // Installed with its postinstall, the native program is `bin/.cline`, which agentpane
    // does not name: the pane's agent is the node wrapper, the record names its child.
    let table = crate::proctree::ProcTable::from_procs([
        proc(10, 1, "node"),
        proc(11, 10, "/n/cline/bin/.cline"),
        proc(20, 1, "node"),
        proc(21, 20, "/n/cline/bin/.cline"),
    ]);
    let data = data_with_session("1_aaaaa", 11);
    let mine = found_for(data.path(), &table, 10);
    assert_eq!(mine.session_id.as_deref(), Some("1_aaaaa"));
    assert_eq!(mine.via, crate::agents::locate::Via::SessionRecord);
    // Never a neighbour's.
    let other = found_for(data.path(), &table, 20);
    assert_eq!(other.transcript, None);
}

#[test]
fn the_hub_daemon_a_client_started_runs_no_session_of_that_clients() {
    // The first client starts the hub daemon as its child; the daemon runs the sessions of
    // clients started after it, whose records name it: none of them is the first client's.
    let mut daemon = proc(11, 10, "/n/cli-linux-x64/bin/cline");
    daemon.argv.push(locate::HUB_DAEMON.to_string());
    let table =
        crate::proctree::ProcTable::from_procs([proc(10, 1, "/n/cli-linux-x64/bin/cline"), daemon]);
    let data = data_with_session("1_bbbbb", 11);
    assert_eq!(found_for(data.path(), &table, 10).transcript, None);
}

#[test]
fn a_session_the_hub_daemon_runs_is_its_clients_by_the_shared_log() {
    // Three clients in one HOME: the first two ran their sessions themselves (8024, 8026;
    // 8024 started the hub daemon 8221), the third (9382) started later and had the daemon
    // run its session, whose record names 8221.
    let data =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/real-clients/cline-3.0.65/hub");
    let id = "1796616157103_qifpt";
    let record = read_session(
        &data
            .join("sessions")
            .join(id)
            .join(format!("{id}.messages.json")),
    )
    .unwrap();
    assert_eq!(record.record.pid, Some(8221));
    assert_eq!(locate::started_by(&data, &[9382], 0), vec![id.to_string()]);
    assert!(locate::started_by(&data, &[8221], 0).is_empty());
    assert!(locate::started_by(&data, &[8024], 0)
        .iter()
        .all(|s| s != id));
    // A process started after the line was written did not write it (its pid reused).
    let after = chrono::DateTime::parse_from_rfc3339("2026-12-07T04:10:00Z")
        .unwrap()
        .timestamp() as u64;
    assert!(locate::started_by(&data, &[9382], after).is_empty());
    let table =
        crate::proctree::ProcTable::from_procs([proc(9382, 9364, "/n/cli-linux-x64/bin/cline")]);
    // The record was copied now; the process started before.
    let found = found_for(&data, &table, 9382);
    assert_eq!(found.session_id.as_deref(), Some(id));
}
