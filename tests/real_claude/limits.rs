//! `agentpane hooks install`'s status line: the real client's `statusLine` input reaches
//! `agentpane statusline`, which keeps the plan windows the stand-in reported (2.1.332; 2.1.197
//! sends none, even for the same headers and token) and the session's context, and the status
//! segment shows the tightest window.

use std::time::{Duration, Instant};

use serde_json::Value;

use crate::real::anthropic::USAGE;
use crate::real::start::USER_STATUS_LINE;
use crate::real::{Client, STEP};
use crate::rig::{each_client, Rig};

#[test]
#[cfg_attr(skip_real, ignore = "AGENTPANE_SKIP_REAL: real clients not run")]
fn the_real_clients_status_line_hands_agentpane_its_plan_windows() {
    each_client(plan_windows);
}

/// Whether this release puts `rate_limits` in its status-line input (seen in the pinned ones).
fn sends_plan_windows(client: &Client) -> bool {
    client.version != "2.1.197"
}

fn plan_windows(client: &Client) {
    let label = client.label();
    let now = chrono::Utc::now().timestamp();
    let rig = Rig::with_plan(
        client,
        &[("5h", 0.62, now + 4250), ("7d", 0.21, now + 3 * 86400)],
    );
    // The user's own status line, which `hooks install` wraps.
    let settings = rig.tmux.claude_dir().join("settings.json");
    let mut v: Value = serde_json::from_slice(&std::fs::read(&settings).unwrap()).unwrap();
    v["statusLine"] = serde_json::json!({
        "type": "command",
        "command": format!("printf '%s' {USER_STATUS_LINE}"),
    });
    std::fs::write(&settings, v.to_string()).unwrap();
    let install = rig.agentpane(&["hooks", "install"]);
    assert_eq!(install.code, 0, "{label}: {install:?}");
    let a = rig.start("proj");
    rig.ask(&a, "Please answer PLAIN kiwi");
    let screen = rig.wait_screen(&a, "the answer", |s| s.contains("Answer: kiwi."));
    assert!(
        screen.contains(USER_STATUS_LINE),
        "{label}: the user's own status line is shown: {screen}"
    );

    // The status line runs after the answer: its input holds the answered request's prompt
    // (input, cache creation and cache read, as the stand-in reported them).
    let prompt = USAGE.0 + USAGE.1 + USAGE.2;
    let file = rig.tmux.state_dir().join("limits/claude.json");
    let read = || -> Value {
        std::fs::read(&file)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or(Value::Null)
    };
    let end = Instant::now() + STEP;
    let saved = loop {
        let v = read();
        let answered = v["sessions"]
            .as_object()
            .is_some_and(|s| s.values().any(|u| u["usage"]["context_tokens"] == prompt));
        let windows = v["limits"].as_array().map_or(0, Vec::len);
        if answered && (windows == 2 || !sends_plan_windows(client)) {
            break v;
        }
        assert!(
            Instant::now() < end,
            "{label}: no answered status line in {}: {v}",
            file.display()
        );
        std::thread::sleep(Duration::from_millis(300));
    };
    let status = rig.agentpane(&["status", "--scan"]);
    if !sends_plan_windows(client) {
        assert_eq!(saved["limits"], Value::Array(vec![]), "{label}: {saved}");
        assert!(!status.stdout.contains("5h"), "{label}: {status:?}");
        return;
    }
    let limits = saved["limits"].as_array().unwrap();
    assert_eq!(limits[0]["name"], "5h", "{label}: {saved}");
    assert_eq!(limits[0]["used_percent"], 62.0, "{label}: {saved}");
    assert_eq!(limits[0]["window_minutes"], 300, "{label}: {saved}");
    let reset = chrono::DateTime::from_timestamp(now + 4250, 0).unwrap();
    assert_eq!(
        limits[0]["resets_at"],
        reset.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        "{label}: {saved}"
    );
    assert_eq!(limits[1]["name"], "7d", "{label}: {saved}");
    assert_eq!(limits[1]["used_percent"], 21.0, "{label}: {saved}");
    assert!(
        status.stdout.contains("5h 62% ↻1h"),
        "{label}: the segment: {status:?}"
    );
}
