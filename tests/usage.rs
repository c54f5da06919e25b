//! What each agent's session used, end to end with fake agents on a private tmux server: the
//! exact numbers of their logs in `panes --json`, `usage --json` and the watcher's snapshot,
//! which follows a log as it grows (docs/design.md#usage).

mod common;

use common::sshd::Sshd;
use common::{wait_until, FakeAgent, TmuxServer, Watch, DEADLINE};
use serde_json::{json, Value};

/// One Claude Code message (three lines): 3 + 11515 + 13835 prompt tokens, 13 out.
const CLAUDE: &str = "claude/marot-spotter/short.jsonl";
/// One Codex turn with its `token_count` and both plan windows.
const CODEX: &str = "codex/kvsankar-agent-history/session-01.jsonl";

fn row<'a>(rows: &'a Value, pane: &str) -> &'a Value {
    rows.as_array()
        .unwrap()
        .iter()
        .find(|r| r["pane_id"] == pane)
        .unwrap_or_else(|| panic!("no row for {pane}: {rows:#}"))
}

/// The fields that do not depend on when the fake wrote its log.
fn limits(v: &Value) -> Vec<Value> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|l| {
            let reset = chrono::DateTime::parse_from_rfc3339(l["resets_at"].as_str().unwrap())
                .unwrap()
                .timestamp();
            json!([
                l["agent"],
                l["name"],
                l["used_percent"],
                l["window_minutes"],
                reset
            ])
        })
        .collect()
}

fn claude_usage() -> Value {
    json!({
        "model": "claude-opus-4-6",
        "context_tokens": 25353,
        "context_window": 200000,
        "context_percent": 25353.0 * 100.0 / 200000.0,
        "session_input": 25353,
        "session_output": 13,
        "cost_usd": null,
    })
}

fn codex_usage(context: u64, input: u64, output: u64) -> Value {
    json!({
        "model": "gpt-5.5",
        "context_tokens": context,
        "context_window": 258400,
        "context_percent": context as f64 * 100.0 / 258400.0,
        "session_input": input,
        "session_output": output,
        "cost_usd": null,
    })
}

fn codex_limits() -> Vec<Value> {
    vec![
        json!(["codex", "5h", 15.0, 300, 1780638395]),
        json!(["codex", "7d", 5.0, 10080, 1781146208]),
    ]
}

#[test]
fn panes_and_usage_show_each_sessions_exact_numbers_and_the_watcher_follows_appends() {
    let server = TmuxServer::start();
    let claude = server.spawn(&FakeAgent::claude().fixture(CLAUDE));
    let codex = server.spawn(&FakeAgent::codex().fixture(CODEX).in_dir("other"));
    server.wait_for_agent(&claude);
    server.wait_for_agent(&codex);

    let panes = server.agentpane(&["panes", "--json"]);
    assert_eq!(panes.code, 0, "{panes:?}");
    let panes = panes.json();
    assert_eq!(row(&panes, &claude)["usage"], claude_usage());
    assert_eq!(row(&panes, &claude)["limits"], json!([]));
    assert_eq!(row(&panes, &codex)["usage"], codex_usage(22549, 22539, 10));
    assert_eq!(limits(&row(&panes, &codex)["limits"]), codex_limits());

    let usage = server.agentpane(&["usage", "--json"]);
    assert_eq!(usage.code, 0, "{usage:?}");
    let usage = usage.json();
    assert_eq!(row(&usage["panes"], &claude)["usage"], claude_usage());
    assert_eq!(
        row(&usage["panes"], &codex)["usage"],
        codex_usage(22549, 22539, 10)
    );
    assert_eq!(limits(&usage["limits"]), codex_limits());
    let text = server.agentpane(&["usage"]);
    assert!(
        text.stdout.contains("25.4k/200.0k 13%") && text.stdout.contains("15% used"),
        "{text:?}"
    );

    // The watcher reads each log once, then only what is appended.
    let _watch = Watch::start(&server, &[]);
    wait_until(DEADLINE, "the codex pane's usage in the snapshot", || {
        server.snapshot_row(&codex)["usage"] == codex_usage(22549, 22539, 10)
    });
    assert_eq!(server.snapshot_row(&claude)["usage"], claude_usage());
    let next = json!({
        "timestamp": "2026-01-01T00:00:00Z",
        "type": "event_msg",
        "payload": {"type": "token_count", "info": {
            "total_token_usage": {"input_tokens": 50000, "output_tokens": 70, "total_tokens": 50070},
            "last_token_usage": {"input_tokens": 27461, "output_tokens": 60, "total_tokens": 27521},
            "model_context_window": 258400},
            "rate_limits": {"primary": {"used_percent": 62.0, "window_minutes": 300, "resets_at": 1780638395}}},
    });
    server.send_line(&codex, &format!("line {next}"));
    wait_until(DEADLINE, "the appended token_count in the snapshot", || {
        server.snapshot_row(&codex)["usage"] == codex_usage(27521, 50000, 70)
    });
    let plan = limits(&server.snapshot_row(&codex)["limits"]);
    assert_eq!(
        plan,
        vec![
            json!(["codex", "7d", 5.0, 10080, 1781146208]),
            json!(["codex", "5h", 62.0, 300, 1780638395]),
        ]
    );
    // Every plan window once in the snapshot, tightest first, for the status line.
    let state = server.server_dir().join("state.json");
    let snap: Value = serde_json::from_slice(&std::fs::read(&state).unwrap()).unwrap();
    assert_eq!(limits(&snap["limits"]), {
        let mut p = plan;
        p.reverse();
        p
    });
    // With the watcher running, one-shot commands take its numbers rather than read the logs
    // again: a snapshot saying otherwise than the log is what `panes` shows. (The watcher
    // writes the snapshot only when what it sees changes, and nothing does now.)
    let mut told = snap.clone();
    for p in told["panes"].as_array_mut().unwrap() {
        if p["pane_id"] == codex.as_str() {
            p["usage"]["session_input"] = json!(7);
        }
    }
    std::fs::write(&state, serde_json::to_vec(&told).unwrap()).unwrap();
    let panes = server.agentpane(&["panes", "--json"]).json();
    assert_eq!(row(&panes, &codex)["usage"]["session_input"], 7);
}

#[test]
fn a_remote_hosts_panes_carry_their_usage_and_plan_windows() {
    let remote = TmuxServer::start();
    let r_codex = remote.spawn(&FakeAgent::codex().fixture(CODEX));
    remote.wait_for_agent(&r_codex);
    let sshd = Sshd::new(&remote);
    let local = sshd.local_server();
    let remote_row = |rows: &Value| -> Value {
        rows.as_array()
            .unwrap()
            .iter()
            .find(|r| r["host"] == "devbox" && r["pane_id"] == r_codex.as_str())
            .cloned()
            .unwrap_or_else(|| panic!("no devbox row: {rows:#}"))
    };
    let usage = local.agentpane(&["--host", "devbox", "usage", "--json"]);
    assert_eq!(usage.code, 0, "{usage:?}");
    let usage = usage.json();
    let row = remote_row(&usage["panes"]);
    assert_eq!(row["usage"], codex_usage(22549, 22539, 10));
    assert_eq!(limits(&row["limits"]), codex_limits());
    assert!(
        usage["limits"]
            .as_array()
            .unwrap()
            .iter()
            .all(|l| l["host"] == "devbox"),
        "{usage:#}"
    );
    assert_eq!(limits(&usage["limits"]), codex_limits());
    let panes = local
        .agentpane(&["--host", "devbox", "panes", "--json"])
        .json();
    assert_eq!(remote_row(&panes)["usage"], codex_usage(22549, 22539, 10));
}
