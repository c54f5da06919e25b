//! The scan folds pane evidence onto the transcript (docs/design.md#evidence-order, source 4): a
//! pending tool call with a permission dialog on screen is `waiting`, without one it stays
//! `working`.

mod common;

use common::{FakeAgent, TmuxServer};

fn row_for(server: &TmuxServer, pane: &str) -> serde_json::Value {
    let run = server.agentpane(&["panes", "--json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    run.json()
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["pane_id"] == pane)
        .cloned()
        .unwrap_or_else(|| panic!("no row for {pane}"))
}

#[test]
fn permission_dialog_on_screen_turns_a_pending_tool_into_waiting() {
    let server = TmuxServer::start();
    let screen = common::fixture("../panes/claude/claudeless-2.1.12-permission-bash.txt");
    let agent = FakeAgent::claude()
        .fixture("claude/derived-prefix/short.prefix-L1-10.awaiting-permission.jsonl")
        .env("AGENTPANE_FAKE_SCREEN", screen.to_str().unwrap());
    let pane = server.spawn(&agent);
    common::wait_until(common::DEADLINE, "the dialog painted", || {
        server
            .tmux(&["capture-pane", "-p", "-t", &pane])
            .contains("Do you want to proceed?")
    });
    let row = row_for(&server, &pane);
    assert_eq!(row["state"], "waiting", "{row}");
    assert_eq!(row["reason"], "permission: Bash", "{row}");
    assert_eq!(row["source"], "pane", "{row}");
}

#[test]
fn pending_tool_without_a_dialog_stays_working() {
    let server = TmuxServer::start();
    let agent = FakeAgent::claude()
        .fixture("claude/derived-prefix/short.prefix-L1-10.awaiting-permission.jsonl");
    let pane = server.spawn(&agent);
    let row = row_for(&server, &pane);
    assert_eq!(row["state"], "working", "{row}");
    assert_eq!(row["reason"], "tool: Bash, Glob", "{row}");
    assert_eq!(row["source"], "transcript", "{row}");
}

#[test]
fn panes_rows_carry_the_head_of_the_last_answer() {
    let server = TmuxServer::start();
    let done = server.spawn(
        &FakeAgent::claude()
            .fixture("claude/marot-spotter/258c7280-ae70-4798-800f-63464d01a85d.jsonl"),
    );
    let busy = server.spawn(
        &FakeAgent::claude()
            .in_dir("other")
            .fixture("claude/derived-prefix/short.prefix-L1-10.awaiting-permission.jsonl"),
    );
    // The fake writes its 1863 lines as fast as it can: earlier answers show meanwhile.
    common::wait_until(common::DEADLINE, "the final answer's head", || {
        row_for(&server, &done)["answer_head"] == "Yes — everything is pushed and clean:"
    });
    assert!(row_for(&server, &busy)["answer_head"].is_null());
    let table = server.agentpane(&["panes"]);
    assert!(table.stdout.contains("LAST ANSWER"), "{}", table.stdout);
    assert!(
        table
            .stdout
            .contains("Yes — everything is pushed and clean:"),
        "{}",
        table.stdout
    );
}
