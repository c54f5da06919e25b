//! A client draws before it writes anything: Gemini CLI 0.61 writes its chat log about 2 s
//! after it starts, Claude Code and Codex at the first prompt. A watcher that resolved such a
//! pane before its log existed must still read the log once it appears, soon, not at the
//! resolution it redoes every minute: a Gemini pane read `idle` through its first answer,
//! unalerted, for that minute (real_gemini failed in CI on it), and so did the first opencode
//! or Kilo Code on a machine, whose data folder the watcher could not watch before it existed.
//!
//! Every agent kind whose log agentpane reads gets the check, so a new agent gets it too: a
//! fake of the kind that writes its files only when the test says so, a watcher that has
//! seen the pane without a log, then the log.

mod common;

use agentpane::events::AgentKind;
use common::{wait_until, wait_until_else, FakeAgent, TmuxServer, Watch, DEADLINE, WATCHER_FINDS};

fn first_log_is_read(kind: AgentKind) {
    let server = TmuxServer::start();
    let watch = Watch::start(&server, &[]);
    let pane = server.spawn_drawn(
        &FakeAgent::idle(kind)
            .in_dir(kind.name())
            .env("AGENTPANE_FAKE_LATE", "1"),
    );
    // The watcher resolves the pane while the agent has written nothing.
    wait_until(
        DEADLINE,
        &format!("{kind}: the watcher to see the pane"),
        || {
            let row = server.snapshot_row(&pane);
            row["agent"] == kind.name() && row["transcript"].is_null()
        },
    );
    server.send_line(&pane, "begin");
    let mut log = serde_json::Value::Null;
    wait_until(DEADLINE, &format!("{kind}: its log"), || {
        log = server.agentpane(&["resolve", &pane, "--json"]).json()["transcript"].clone();
        log.is_string()
    });
    wait_until_else(
        WATCHER_FINDS,
        &format!("{kind}: the watcher to read {log}"),
        || server.snapshot_row(&pane)["transcript"] == log,
        || {
            format!(
                "its row: {:#}\nits log:\n{}",
                server.snapshot_row(&pane),
                std::fs::read_to_string(server.server_dir().join("watch.log")).unwrap_or_default()
            )
        },
    );
    drop(watch);
}

#[test]
fn the_watcher_reads_a_log_that_appears_after_it_resolved_the_pane() {
    let kinds: Vec<AgentKind> = AgentKind::ALL
        .into_iter()
        .filter(|k| agentpane::agents::reads_log(*k))
        .collect();
    assert!(kinds.len() >= 8, "{kinds:?}");
    std::thread::scope(|s| {
        let runs: Vec<_> = kinds
            .iter()
            .map(|&kind| (kind, s.spawn(move || first_log_is_read(kind))))
            .collect();
        let failed: Vec<AgentKind> = runs
            .into_iter()
            .filter_map(|(kind, run)| run.join().is_err().then_some(kind))
            .collect();
        assert!(failed.is_empty(), "failed for {failed:?} (see above)");
    });
}
