//! Notifications (docs/design.md#notifications) from a real watcher for a fake agent's
//! finished turn and permission wait: ntfy and a Slack-shaped webhook posted to HTTP
//! stand-ins on 127.0.0.1 (one answering, one hanging, one answering 500), and the terminal
//! channel's OSC sequence read from the pseudo-terminal of a real attached tmux client.
//! Nothing is sent anywhere but 127.0.0.1.

mod common;
#[allow(dead_code)]
#[path = "real/http.rs"]
mod http;

use std::time::{Duration, Instant};

use common::{wait_until, FakeAgent, TmuxServer, Watch, DEADLINE};
use http::{MockServer, Reply};
use serde_json::json;

/// A fake Codex in a new window of `server`; once its dialog is up when `asking` is a
/// command (a permission wait), else idle.
fn codex(server: &TmuxServer, asking: Option<&str>) -> String {
    let mut rollout = vec![
        json!({"timestamp": "", "type": "turn_context", "payload": {"turn_id": "t1", "cwd": ""}}),
        json!({"timestamp": "", "type": "event_msg", "payload": {"type": "task_started", "turn_id": "t1"}}),
    ];
    if let Some(cmd) = asking {
        rollout.push(
            json!({"timestamp": "", "type": "response_item", "payload": {
            "type": "function_call", "name": "exec_command", "call_id": "call_1",
            "arguments": json!({"cmd": cmd, "justification": "run the tests"}).to_string()}}),
        );
    }
    let path = server
        .path()
        .join(format!("rollout-{}.jsonl", asking.is_some()));
    let text: Vec<String> = rollout.iter().map(|l| l.to_string()).collect();
    std::fs::write(&path, text.join("\n") + "\n").unwrap();
    let mut agent = FakeAgent::codex().env("AGENTPANE_FAKE_AGENT", path.to_str().unwrap());
    if asking.is_some() {
        agent = agent.env("AGENTPANE_FAKE_ASK", "1");
    }
    let pane = server.spawn(&agent);
    if asking.is_some() {
        wait_until(DEADLINE, "the dialog painted", || {
            server
                .tmux(&["capture-pane", "-p", "-t", &pane])
                .contains("3. No, and tell Codex what to do differently (esc)")
        });
    }
    pane
}

/// Sets global options of `server`.
fn options(server: &TmuxServer, opts: &[(&str, &str)]) {
    for (k, v) in opts {
        server.tmux(&["set-option", "-g", k, v]);
    }
}

/// `session:window.pane` and the folder, as a notification names them.
fn place(server: &TmuxServer, pane: &str) -> (String, String) {
    let out = server.tmux(&[
        "display-message",
        "-p",
        "-t",
        pane,
        "#{session_name}:#{window_index}.#{pane_index}\u{1f}#{pane_current_path}",
    ]);
    let (target, folder) = out.split_once('\u{1f}').unwrap();
    let home = server.home().to_string_lossy().into_owned();
    let folder = match folder.strip_prefix(&home) {
        Some(rest) => format!("~{rest}"),
        None => folder.to_string(),
    };
    (target.to_string(), folder)
}

fn watch_log(server: &TmuxServer) -> String {
    std::fs::read_to_string(server.server_dir().join("watch.log")).unwrap_or_default()
}

fn alerts_of(watch: &Watch, state: &str) -> usize {
    watch
        .alerts()
        .iter()
        .filter(|a| a["state"] == state)
        .count()
}

#[test]
fn ntfy_and_a_slack_webhook_get_each_turn_and_wait_once_saying_who_where_and_why() {
    let server = TmuxServer::start();
    let stand_in = MockServer::start(|_| Reply::json(200, json!({"ok": true})));
    options(
        &server,
        &[
            ("@agentpane-notify", "ntfy webhook"),
            ("@agentpane-ntfy-url", &format!("{}/agents", stand_in.url())),
            ("@agentpane-notify-click", "https://example.org/agents"),
            (
                "@agentpane-webhook-url",
                &format!("{}/hook", stand_in.url()),
            ),
            ("@agentpane-webhook-format", "slack"),
        ],
    );
    let watch = Watch::start(&server, &[]);
    let host = agentpane::notify::hostname();

    // A finished turn.
    let done = codex(&server, None);
    server.codex_completes(&done, "t1", "All tests pass.");
    wait_until(DEADLINE, "two posts for the turn", || {
        stand_in.requests().len() >= 2
    });
    let (target, folder) = place(&server, &done);
    let name = folder.rsplit('/').next().unwrap().to_string();
    let reqs = stand_in.requests();
    let ntfy = reqs
        .iter()
        .find(|r| r.path == "/agents")
        .expect("the ntfy post");
    assert_eq!(ntfy.method, "POST");
    assert_eq!(
        ntfy.header("title"),
        Some(format!("codex: your turn in {name}").as_str())
    );
    assert_eq!(ntfy.header("priority"), Some("3"));
    assert_eq!(ntfy.header("tags"), Some("white_check_mark,your-turn"));
    assert_eq!(ntfy.header("click"), Some("https://example.org/agents"));
    assert_eq!(
        String::from_utf8_lossy(&ntfy.body),
        format!("finished its turn\n{host} {target} {folder}")
    );
    let hook = reqs
        .iter()
        .find(|r| r.path == "/hook")
        .expect("the webhook post");
    assert_eq!(hook.header("content-type"), Some("application/json"));
    assert_eq!(
        hook.json().unwrap(),
        json!({"text": format!("codex: your turn in {name}\nfinished its turn\n{host} {target} {folder}")})
    );

    // A permission wait: the request itself, its escape sequence gone.
    let asking = codex(&server, Some("cargo test --workspace \u{1b}]0;pwned\u{7}"));
    wait_until(DEADLINE, "two posts for the wait", || {
        stand_in.requests().len() >= 4
    });
    let (target, folder) = place(&server, &asking);
    let reqs = stand_in.requests();
    let ntfy = reqs.iter().rfind(|r| r.path == "/agents").unwrap();
    let body = String::from_utf8_lossy(&ntfy.body).into_owned();
    assert_eq!(ntfy.header("priority"), Some("4"));
    assert_eq!(ntfy.header("tags"), Some("raising_hand,waiting"));
    assert!(
        ntfy.header("title").unwrap().starts_with("codex: waiting"),
        "{ntfy:?}"
    );
    assert!(body.contains("cargo test --workspace"), "{body}");
    assert!(
        body.ends_with(&format!("\n{host} {target} {folder}")),
        "{body}"
    );
    assert!(
        !body.contains('\u{1b}') && !body.contains("pwned"),
        "{body}"
    );

    // Each alert once: as many posts per endpoint as the watcher had alerts.
    std::thread::sleep(Duration::from_secs(2));
    let alerts = watch.alerts().len();
    assert_eq!(
        (alerts_of(&watch, "your-turn"), alerts_of(&watch, "waiting")),
        (1, 1)
    );
    let reqs = stand_in.requests();
    for path in ["/agents", "/hook"] {
        assert_eq!(
            reqs.iter().filter(|r| r.path == path).count(),
            alerts,
            "{path}: {reqs:?}"
        );
    }
}

#[test]
fn a_hanging_and_a_failing_endpoint_never_slow_the_watcher_and_retries_are_bounded() {
    let server = TmuxServer::start();
    let hangs = MockServer::start(|_| {
        std::thread::sleep(Duration::from_secs(60));
        Reply::json(200, json!({}))
    });
    let fails = MockServer::start(|_| Reply::json(500, json!({"error": "down"})));
    options(
        &server,
        &[
            ("@agentpane-notify", "ntfy webhook"),
            ("@agentpane-ntfy-url", &format!("{}/t", hangs.url())),
            ("@agentpane-webhook-url", &format!("{}/h", fails.url())),
        ],
    );
    let watch = Watch::start(&server, &[]);
    let pane = codex(&server, None);
    let status = || server.tmux(&["show-option", "-pqv", "-t", &pane, "@agentpane_pane_status"]);
    server.codex_completes(&pane, "t1", "done");
    wait_until(DEADLINE, "the turn's alert", || watch.alerts().len() == 1);
    wait_until(DEADLINE, "both endpoints reached", || {
        !hangs.requests().is_empty() && !fails.requests().is_empty()
    });

    // While one endpoint hangs and the other fails, a new turn is published as quickly as
    // ever: the watcher never waits on a channel.
    let turn_started = json!({"timestamp": "", "type": "event_msg",
        "payload": {"type": "task_started", "turn_id": "t2"}});
    let before = status();
    let started = Instant::now();
    server.send_line(&pane, &format!("line {turn_started}"));
    wait_until(DEADLINE, "the new turn published", || status() != before);
    let took = started.elapsed();
    eprintln!("status change published {took:?} after the write, endpoints hanging/failing");
    assert!(took < Duration::from_secs(3), "{took:?}");

    // The 500 is tried three times (1 s, then 2 s apart), then given up, all logged.
    wait_until(DEADLINE, "the retries given up", || {
        watch_log(&server).contains("giving up")
    });
    assert_eq!(fails.requests().len(), 3);
    let log = watch_log(&server);
    assert!(log.contains("notify webhook: attempt 1:"), "{log}");
    assert!(log.contains("answered 500; again in 1s"), "{log}");
    assert!(log.contains("notify webhook: attempt 3:"), "{log}");
    // The hanging one times out (5 s an attempt) and is tried again.
    wait_until(DEADLINE, "the hanging endpoint timed out", || {
        watch_log(&server).contains("notify ntfy: attempt 1:")
    });
    assert!(hangs.requests().len() <= 3);
    assert_eq!(watch.stop(), 0);
}
