//! The tmux surface end to end, on a private tmux server with fake agents: the status
//! segment, pane-status, the watcher's options and alerts, and its faults.

mod common;

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use common::{agentpane_without_server, wait_until, FakeAgent, TmuxServer, Watch, DEADLINE};

/// A fixture whose single turn ends with `end_turn` (5 lines).
const ENDS_TURN: &str = "claude/kvsankar-agent-history/session-01.jsonl";
/// A prefix with a tool call waiting (working).
const MID_TOOL: &str = "claude/derived-prefix/short.prefix-L1-10.awaiting-permission.jsonl";

fn global(server: &TmuxServer, name: &str) -> String {
    server.tmux(&["show-options", "-gqv", name])
}

fn window_opt(server: &TmuxServer, pane: &str, name: &str) -> String {
    server.tmux(&["show-options", "-wqv", "-t", pane, name])
}

fn pane_opt(server: &TmuxServer, pane: &str, name: &str) -> String {
    server.tmux(&["show-options", "-pqv", "-t", pane, name])
}

fn status(server: &TmuxServer) -> String {
    let run = server.agentpane(&["status"]);
    assert_eq!(run.code, 0, "{run:?}");
    run.stdout.trim_end_matches('\n').to_string()
}

#[test]
fn status_without_a_server_prints_nothing_and_succeeds() {
    let run = agentpane_without_server(&["status"]);
    assert_eq!((run.code, run.stdout.as_str()), (0, ""), "{run:?}");
    let run = agentpane_without_server(&["pane-status", "--window", "@1"]);
    assert_eq!((run.code, run.stdout.as_str()), (0, ""), "{run:?}");
}

#[test]
fn status_is_empty_without_agents() {
    let server = TmuxServer::start();
    assert_eq!(status(&server), "");
}

#[test]
fn status_and_pane_status_show_each_agent_state() {
    let server = TmuxServer::start();
    let done = server.spawn(&FakeAgent::claude().fixture(ENDS_TURN).in_dir("done"));
    let busy = server.spawn(&FakeAgent::claude().fixture(MID_TOOL).in_dir("busy"));
    wait_until(DEADLINE, "the segment", || status(&server) == "⚡1 ●1");

    let run = server.agentpane(&["pane-status", "--window", &done]);
    assert_eq!(run.stdout, "●\n", "{run:?}");
    let run = server.agentpane(&["pane-status", "--window", &busy]);
    assert_eq!(run.stdout, "⚡\n", "{run:?}");

    let json = server.agentpane(&["pane-status", "--json"]).json();
    let windows = json.as_array().expect("array of windows");
    assert_eq!(windows.len(), 2, "{json}");
    let states: Vec<&str> = windows
        .iter()
        .map(|w| w["state"].as_str().unwrap())
        .collect();
    assert!(
        states.contains(&"your-turn") && states.contains(&"working"),
        "{json}"
    );
    let pane = &windows
        .iter()
        .find(|w| w["pane_id"] == busy.as_str())
        .unwrap()["panes"][0];
    assert_eq!(pane["agent"], "claude");
    assert_eq!(pane["state"], "working");
    assert!(pane["transcript"].is_string());

    let run = server.agentpane(&[
        "status",
        "--format",
        "{working_count}/{total}",
        "--icons",
        "working=W",
    ]);
    assert_eq!(run.stdout, "1/2\n", "{run:?}");
}

/// With a watcher serving the server, `status` counts the watcher's view (what the tmux
/// status line shows) instead of scanning: an altered snapshot shows through, `--scan`
/// scans, and a snapshot no live watcher of this server holds is never used.
#[test]
fn status_counts_the_serving_watchers_view() {
    let server = TmuxServer::start();
    server.spawn(&FakeAgent::claude().fixture(ENDS_TURN).in_dir("done"));
    let counts = |extra: &[&str]| {
        let mut args = vec!["status", "--format", "{waiting_count}/{total}"];
        args.extend(extra);
        let run = server.agentpane(&args);
        assert_eq!(run.code, 0, "{run:?}");
        run.stdout.trim_end().to_string()
    };
    let watch = Watch::start(&server, &[]);
    wait_until(DEADLINE, "@agentpane_status", || {
        global(&server, "@agentpane_status") == "●1"
    });
    assert_eq!(counts(&[]), "0/1");
    // The watcher writes its snapshot only when its view changes: two waiting panes stay.
    let path = server.server_dir().join("state.json");
    let mut snap: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let mut waiting = snap["panes"][0].clone();
    waiting["state"] = "waiting".into();
    snap["panes"] = serde_json::json!([waiting.clone(), waiting]);
    std::fs::write(&path, serde_json::to_vec(&snap).unwrap()).unwrap();
    assert_eq!(counts(&[]), "2/2", "the watcher's view");
    assert_eq!(counts(&["--scan"]), "0/1", "a scan");
    assert_eq!(watch.stop(), 0);
    std::fs::write(&path, serde_json::to_vec(&snap).unwrap()).unwrap();
    assert_eq!(counts(&[]), "0/1", "no watcher holds the snapshot");
}

#[test]
fn watcher_publishes_options_and_alerts_once_when_a_turn_ends() {
    let server = TmuxServer::start();
    let history = server.spawn(&FakeAgent::claude().fixture(ENDS_TURN).in_dir("old"));
    let live = server.spawn(
        &FakeAgent::claude()
            .fixture(ENDS_TURN)
            .start_lines(3)
            .in_dir("live"),
    );
    let watch = Watch::start(&server, &[]);

    wait_until(DEADLINE, "@agentpane_status", || {
        global(&server, "@agentpane_status") == "⚡1 ●1"
    });
    assert_eq!(window_opt(&server, &live, "@agentpane_window_status"), "⚡");
    assert_eq!(
        pane_opt(&server, &live, "@agentpane_pane_status"),
        "working"
    );
    assert_eq!(
        pane_opt(&server, &history, "@agentpane_pane_status"),
        "your-turn"
    );

    // The turn ends: the final assistant line arrives.
    server.send_line(&live, "step");
    wait_until(DEADLINE, "one alert", || watch.alerts().len() == 1);
    let alert = &watch.alerts()[0];
    assert_eq!(alert["pane"], live.as_str());
    assert_eq!(alert["state"], "your-turn");
    assert_eq!(alert["agent"], "claude");
    assert!(
        alert["turn_key"].is_string() && alert["at"].is_string(),
        "{alert}"
    );
    wait_until(DEADLINE, "the window flag", || {
        window_opt(&server, &live, "@agentpane_alert") == "1"
    });
    assert_eq!(global(&server, "@agentpane_status"), "●2");
    // The bell: one BEL written to the pane's tty raises tmux's bell flag on its window.
    let bell = server.tmux(&["display-message", "-p", "-t", &live, "#{window_bell_flag}"]);
    assert_eq!(bell, "1");

    // More scans (a nudge, the poll) never repeat it; history never alerted.
    std::fs::write(server.state_dir().join("nudge"), b"x").unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(watch.alerts().len(), 1, "{:?}", watch.alerts());

    // A restarted watcher replays nothing, and a clean stop clears the options.
    let alerts_file = watch.alerts.clone();
    assert_eq!(watch.stop(), 0);
    assert_eq!(global(&server, "@agentpane_status"), "");
    assert_eq!(pane_opt(&server, &live, "@agentpane_pane_status"), "");
    let again = Watch::start(&server, &[]);
    wait_until(DEADLINE, "republished", || {
        global(&server, "@agentpane_status") == "●2"
    });
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(again.alerts.as_path(), alerts_file.as_path());
    assert_eq!(again.alerts().len(), 1);
}

#[test]
fn a_user_reply_retracts_the_window_flag() {
    let server = TmuxServer::start();
    let pane = server.spawn(&FakeAgent::claude().fixture(ENDS_TURN).start_lines(3));
    let watch = Watch::start(&server, &[]);
    server.send_line(&pane, "step");
    wait_until(DEADLINE, "the window flag", || {
        window_opt(&server, &pane, "@agentpane_alert") == "1"
    });
    let prompt = r#"line {"type":"user","message":{"role":"user","content":"thanks, now the tests"},"uuid":"u-next","timestamp":"2026-01-01T00:00:00Z","isSidechain":false}"#;
    server.send_line(&pane, prompt);
    wait_until(DEADLINE, "the flag cleared", || {
        window_opt(&server, &pane, "@agentpane_alert").is_empty()
    });
    assert_eq!(
        pane_opt(&server, &pane, "@agentpane_pane_status"),
        "working"
    );
    assert_eq!(watch.alerts().len(), 1);
}

#[test]
fn a_second_watcher_exits_cleanly_and_the_first_exits_with_the_server() {
    let server = TmuxServer::start();
    let mut first = Watch::start(&server, &[]);
    let second = server.agentpane(&["watch"]);
    assert_eq!(second.code, 0, "{second:?}");
    assert!(second.stderr.contains("already running"), "{second:?}");
    server.tmux(&["kill-server"]);
    assert_eq!(first.wait_exit(), 0);
}

#[test]
fn closed_panes_and_deleted_transcripts_are_handled() {
    let server = TmuxServer::start();
    let a = server.spawn(&FakeAgent::claude().fixture(MID_TOOL).in_dir("a"));
    let b = server.spawn(&FakeAgent::claude().fixture(ENDS_TURN).in_dir("b"));
    let mut watch = Watch::start(&server, &[]);
    wait_until(DEADLINE, "two agents", || {
        global(&server, "@agentpane_status") == "⚡1 ●1"
    });

    server.tmux(&["kill-pane", "-t", &a]);
    wait_until(DEADLINE, "the closed pane gone", || {
        global(&server, "@agentpane_status") == "●1"
    });

    let transcript = server.agentpane(&["resolve", &b, "--json"]).json()["transcript"]
        .as_str()
        .map(PathBuf::from)
        .expect("transcript");
    std::fs::write(&transcript, b"").unwrap();
    wait_until(DEADLINE, "the truncated transcript read as idle", || {
        pane_opt(&server, &b, "@agentpane_pane_status") == "idle"
    });
    std::fs::remove_file(&transcript).unwrap();
    std::thread::sleep(Duration::from_millis(1200));
    assert!(
        watch.child.try_wait().unwrap().is_none(),
        "the watcher survives"
    );
    assert_eq!(global(&server, "@agentpane_status"), "");
    assert_eq!(watch.stop(), 0);
}

#[test]
fn failing_and_hanging_alert_commands_are_logged_and_never_block() {
    for (command, expect) in [
        ("false", "alert command failed"),
        ("sleep 30", "did not finish"),
    ] {
        let server = TmuxServer::start();
        let pane = server.spawn(&FakeAgent::claude().fixture(ENDS_TURN).start_lines(3));
        let mut cmd = common::agentpane_with_env(&server.env());
        let mut child = cmd
            .args([
                "-L",
                &server.name,
                "watch",
                "--poll",
                "0.5",
                "--no-notify",
                "--no-bell",
            ])
            .args(["--alert-command", command, "--alert-timeout", "1"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let log = server.server_dir().join("watch.log");
        wait_until(DEADLINE, "the watcher", || {
            server.server_dir().join("state.json").exists()
        });
        server.send_line(&pane, "step");
        wait_until(DEADLINE, expect, || {
            std::fs::read_to_string(&log)
                .unwrap_or_default()
                .contains(expect)
        });
        // The loop kept going meanwhile: a new prompt still updates the options.
        let prompt = r#"line {"type":"user","message":{"role":"user","content":"go on"},"uuid":"u2","timestamp":"2026-01-01T00:00:00Z","isSidechain":false}"#;
        server.send_line(&pane, prompt);
        wait_until(DEADLINE, "working again", || {
            pane_opt(&server, &pane, "@agentpane_pane_status") == "working"
        });
        let _ = child.kill();
        let _ = child.wait();
    }
}

#[test]
fn focusing_the_pane_acknowledges_the_alert() {
    let server = TmuxServer::start();
    let live = server.spawn(&FakeAgent::claude().fixture(ENDS_TURN).start_lines(3));
    let watch = Watch::start(&server, &[]);
    server.send_line(&live, "step");
    wait_until(DEADLINE, "the window flag", || {
        window_opt(&server, &live, "@agentpane_alert") == "1"
    });

    // A real client attached to `main`, running in a pane of another session of the server.
    let attach = format!(
        "env -u TMUX tmux -L {} -f /dev/null attach -t main",
        server.name
    );
    server.tmux(&["new-session", "-d", "-s", "viewer", &attach]);
    wait_until(DEADLINE, "an attached client", || {
        server.tmux(&["display-message", "-p", "-t", "main", "#{session_attached}"]) != "0"
    });
    server.tmux(&["select-window", "-t", &live]);
    wait_until(DEADLINE, "the acknowledgement", || {
        window_opt(&server, &live, "@agentpane_alert").is_empty()
            && pane_opt(&server, &live, "@agentpane_pane_status") == "seen"
    });
    assert_eq!(global(&server, "@agentpane_status"), "");
    assert_eq!(watch.alerts().len(), 1);
}

#[test]
fn jump_switches_the_client_to_the_pane_that_needs_you() {
    let server = TmuxServer::start();
    let busy = server.spawn(&FakeAgent::claude().fixture(MID_TOOL).in_dir("busy"));
    let done = server.spawn(&FakeAgent::claude().fixture(ENDS_TURN).in_dir("done"));
    wait_until(DEADLINE, "the segment", || status(&server) == "⚡1 ●1");
    let text = server.agentpane(&["pane-status"]).stdout;
    assert_eq!(text.lines().count(), 2, "{text}");
    assert!(text.contains("●\tyour-turn"), "{text}");

    let attach = format!(
        "env -u TMUX tmux -L {} -f /dev/null attach -t main",
        server.name
    );
    server.tmux(&["new-session", "-d", "-s", "viewer", &attach]);
    let mut client = String::new();
    wait_until(DEADLINE, "an attached client", || {
        client = server.tmux(&["list-clients", "-t", "main", "-F", "#{client_name}"]);
        !client.is_empty()
    });
    let run = server.agentpane(&["jump", "--client", &client]);
    assert_eq!(run.code, 0, "{run:?}");
    let current = server.tmux(&["display-message", "-c", &client, "-p", "#{pane_id}"]);
    assert_eq!(current, done);
    assert_ne!(current, busy);
}

#[test]
fn watcher_delivers_a_queued_route_when_the_destination_frees_up() {
    let server = TmuxServer::start();
    let src = server.new_window(
        "sh -c 'printf \"route me please\\n\"; exec sleep 600'",
        &server.work("src"),
        &[],
    );
    wait_until(DEADLINE, "the source text", || {
        server
            .tmux(&["capture-pane", "-p", "-t", &src])
            .contains("route me please")
    });
    let codex = server.spawn(
        &FakeAgent::codex()
            .fixture("codex/derived-prefix/kvsankar-session-01.prefix-L1-7.mid-turn.jsonl"),
    );
    let watch = Watch::start(&server, &[]);
    wait_until(DEADLINE, "codex working", || {
        pane_opt(&server, &codex, "@agentpane_pane_status") == "working"
    });
    let queued = server.agentpane(&[
        "route",
        &src,
        &codex,
        "--transform",
        "full-output",
        "--queue",
        "--json",
    ]);
    assert_eq!(queued.json()["outcome"], "queued", "{queued:?}");
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        !server
            .tmux(&["capture-pane", "-p", "-t", &codex])
            .contains("route me please"),
        "never into a working agent"
    );
    // The turn ends: the watcher sees it and delivers the queued text, once.
    server.send_line(
        &codex,
        r#"line {"timestamp":"2026-01-01T00:00:00Z","type":"event_msg","payload":{"type":"task_complete","turn_id":"t1","last_agent_message":"ok"}}"#,
    );
    wait_until(DEADLINE, "the queued route delivered", || {
        server.agentpane(&["route-queue"]).stdout.is_empty()
            && server
                .tmux(&["capture-pane", "-p", "-t", &codex])
                .contains("route me please")
    });
    let journal = std::fs::read_to_string(server.state_dir().join("journal.jsonl")).unwrap();
    assert_eq!(journal.matches("\"delivered\"").count(), 1, "{journal}");
    assert_eq!(watch.stop(), 0);
}
