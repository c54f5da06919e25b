//! Notifications (docs/design.md#notifications) from a real watcher for a fake agent's
//! finished turn and permission wait: ntfy and a Slack-shaped webhook posted to HTTP
//! stand-ins on 127.0.0.1 (one answering, one hanging, one answering 500), and the terminal
//! channel's OSC sequence read from the pseudo-terminal of a real attached tmux client.
//! Nothing is sent anywhere but 127.0.0.1.

mod common;
#[allow(dead_code)]
#[path = "real/http.rs"]
mod http;

use std::process::Command;
use std::time::{Duration, Instant};

use common::notify::{options, place, watch_log, PtyClient};
use common::sshd::Sshd;
use common::{wait_until, wait_until_else, FakeAgent, TmuxServer, Watch, DEADLINE};
use http::{MockServer, Reply};
use serde_json::json;

/// A fake Codex in a new window of `server`; once its dialog is up when `asking` is a
/// command (a permission wait), else idle.
fn codex(server: &TmuxServer, asking: Option<&str>) -> String {
    codex_in(server, asking, false)
}

/// [`codex`], in a window made current at once when `shown`.
fn codex_in(server: &TmuxServer, asking: Option<&str>, shown: bool) -> String {
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
        .join(format!("rollout-{}-{shown}.jsonl", asking.is_some()));
    let text: Vec<String> = rollout.iter().map(|l| l.to_string()).collect();
    std::fs::write(&path, text.join("\n") + "\n").unwrap();
    let mut agent = FakeAgent::codex().env("AGENTPANE_FAKE_AGENT", path.to_str().unwrap());
    if asking.is_some() {
        agent = agent.env("AGENTPANE_FAKE_ASK", "1");
    }
    let pane = if shown {
        server.spawn_shown(&agent)
    } else {
        server.spawn(&agent)
    };
    if asking.is_some() {
        wait_until(DEADLINE, "the dialog painted", || {
            server
                .tmux(&["capture-pane", "-p", "-t", &pane])
                .contains("3. No, and tell Codex what to do differently (esc)")
        });
    }
    pane
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

    // Each alert once: as many posts per endpoint as the watcher had alerts (its alert
    // command runs on a thread of its own), and no second post a moment later.
    wait_until(DEADLINE, "both alerts", || watch.alerts().len() == 2);
    std::thread::sleep(Duration::from_millis(1500));
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

#[test]
fn the_terminal_of_an_attached_client_shows_each_turn_and_wait_once_but_not_the_pane_it_shows() {
    let server = TmuxServer::start();
    options(&server, &[("@agentpane-notify", "terminal")]);
    let client = PtyClient::attach(&server, "xterm-256color");
    let watch = Watch::start(&server, &[]);

    let done = codex(&server, None);
    server.codex_completes(&done, "t1", "All tests pass.");
    let (target, folder) = place(&server, &done);
    let name = folder.rsplit('/').next().unwrap().to_string();
    let turn_777 = format!("\x1b]777;notify;codex: your turn in {name};finished its turn · ");
    let turn_9 = format!("\x1b]9;codex: your turn in {name}: finished its turn · ");
    wait_until_else(
        DEADLINE,
        "the turn's OSC 777 and 9",
        || client.count(&turn_777) == 1 && client.count(&turn_9) == 1,
        || client.told(&server),
    );
    assert_eq!(client.count(&format!(" {target} ")), 2);

    let _asking = codex(&server, Some("make check"));
    let wait_777 = format!("\x1b]777;notify;codex: waiting in {name};");
    wait_until_else(
        DEADLINE,
        "the wait's OSC 777",
        || client.count(&wait_777) == 1,
        || client.told(&server),
    );
    assert_eq!(
        client.count(&format!("\x1b]9;codex: waiting in {name}: ")),
        1
    );

    // A wait in the pane the client shows: the person sees it already, nothing is sent.
    let shown = codex_in(&server, Some("make install"), true);
    assert_eq!(
        server.tmux(&["list-clients", "-F", "#{pane_id}"]),
        shown,
        "the client shows the new pane"
    );
    let (shown_target, _) = place(&server, &shown);
    wait_until(DEADLINE, "the shown pane's wait published", || {
        server.tmux(&[
            "show-option",
            "-pqv",
            "-t",
            &shown,
            "@agentpane_pane_status",
        ]) == "waiting"
    });
    // Longer than the alert delay (1 s): a late notification would have come by now.
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(alerts_of(&watch, "waiting"), 1);
    assert_eq!(client.count(&wait_777), 1, "{}", client.told(&server));
    assert_eq!(client.count(&format!(" {shown_target} ")), 0);
    assert_eq!(client.count(&turn_777), 1);
}

#[test]
fn notify_test_sends_one_sample_per_channel_and_fails_with_the_reason() {
    let server = TmuxServer::start();
    let ok = MockServer::start(|_| Reply::json(200, json!({})));
    let down = MockServer::start(|_| Reply::json(500, json!({})));
    let none = server.agentpane(&["notify", "test"]);
    assert_eq!(none.code, 2, "{none:?}");
    assert!(
        none.stderr.contains("no notification channel is on"),
        "{none:?}"
    );

    options(
        &server,
        &[
            ("@agentpane-notify", "ntfy webhook"),
            ("@agentpane-ntfy-url", &format!("{}/phone", ok.url())),
            ("@agentpane-webhook-url", &format!("{}/hook", down.url())),
        ],
    );
    let run = server.agentpane(&["notify", "test"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stdout
            .contains(&format!("✓ ntfy: posted to {}/phone", ok.url())),
        "{run:?}"
    );
    assert!(run.stdout.contains("✗ webhook: "), "{run:?}");
    assert!(run.stdout.contains("answered 500"), "{run:?}");
    // One attempt each: a test says at once what is wrong.
    assert_eq!((ok.requests().len(), down.requests().len()), (1, 1));
    let sample = &ok.requests()[0];
    assert!(sample
        .header("title")
        .unwrap()
        .starts_with("agent: waiting"));
    assert!(String::from_utf8_lossy(&sample.body).contains("a test notification from agentpane"));

    // One channel named: only it.
    let run = server.agentpane(&["notify", "test", "ntfy"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!((ok.requests().len(), down.requests().len()), (2, 1));

    // The terminal: no client attached is a failure with its reason; an attached one gets it.
    let run = server.agentpane(&["notify", "test", "terminal"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stdout.contains("no tmux client"), "{run:?}");
    let client = PtyClient::attach(&server, "xterm-256color");
    options(&server, &[("@agentpane-terminal-osc", "99")]);
    let run = server.agentpane(&["notify", "test", "terminal"]);
    assert_eq!(run.code, 0, "{run:?}");
    wait_until_else(
        DEADLINE,
        "the OSC 99 asked for",
        || client.count("\x1b]99;i=agentpane:d=0:p=title;agent: waiting") == 1,
        || client.told(&server),
    );
    assert_eq!(client.count("\x1b]777;"), 0);

    let bad = server.agentpane(&["notify", "test", "pager"]);
    assert_eq!(bad.code, 2, "{bad:?}");
}

#[test]
fn doctor_checks_each_channel_turned_on() {
    let server = TmuxServer::start();
    options(
        &server,
        &[
            ("@agentpane-notify", "ntfy webhook"),
            ("@agentpane-ntfy-url", "https://ntfy.example/topic"),
            ("@agentpane-webhook-url", "file:///etc/passwd"),
            ("@agentpane-webhook-format", "teams"),
        ],
    );
    let run = server.agentpane(&["doctor"]);
    assert!(
        run.stdout
            .contains("✓ ntfy: posts to https://ntfy.example/topic"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("✗ webhook: \"file:///etc/passwd\" is not an http:// or https:// address"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("@agentpane-webhook-format: \"teams\""),
        "{}",
        run.stdout
    );
    assert_eq!(run.code, 1, "{run:?}");
}

#[test]
fn the_terminal_notification_crosses_ssh_to_the_client_at_the_other_end() {
    // The agents and the watcher on a host reached through a real sshd; the person's tmux
    // client runs there through `ssh -t`, in this test's terminal.
    let host = TmuxServer::start();
    options(&host, &[("@agentpane-notify", "terminal")]);
    let sshd = Sshd::new(&host);
    let mut ssh = Command::new("ssh");
    for (k, v) in host.env() {
        ssh.env(k, v);
    }
    ssh.env("TERM", "xterm-256color")
        .arg("-F")
        .arg(sshd.config())
        .args(["-tt", "devbox", "tmux", "attach", "-t", "main"]);
    let client = PtyClient::run(&host, ssh);
    let watch = Watch::start(&host, &[]);

    let done = codex(&host, None);
    host.codex_completes(&done, "t1", "All tests pass.");
    let (target, folder) = place(&host, &done);
    let name = folder.rsplit('/').next().unwrap().to_string();
    let turn_777 = format!("\x1b]777;notify;codex: your turn in {name};finished its turn · ");
    wait_until_else(
        DEADLINE,
        "the turn's OSC 777 through ssh",
        || client.count(&turn_777) == 1,
        || client.told(&host),
    );
    assert_eq!(client.count(&format!(" {target} ")), 2);
    let _asking = codex(&host, Some("make check"));
    wait_until_else(
        DEADLINE,
        "the wait's OSC 777 through ssh",
        || client.count(&format!("\x1b]777;notify;codex: waiting in {name};")) == 1,
        || client.told(&host),
    );
    assert_eq!(client.count(&turn_777), 1);
    // The alert command runs on a thread of its own: it may come a little after.
    wait_until(DEADLINE, "both alerts", || watch.alerts().len() == 2);
    drop(client);
    drop(sshd);
}
