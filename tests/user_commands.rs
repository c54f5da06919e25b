//! The commands a user writes — `watch --alert-command CMD` and `$AGENTPANE_AI_COMMAND` — run
//! through `sh -c` like tmux's `run-shell`: quotes, pipes and redirections work, and the
//! untrusted text (the alert JSON, an agent's answer) arrives on stdin only, so an answer
//! holding `$(…)` or backticks is never executed.

mod common;

use std::path::Path;
use std::process::Stdio;

use common::{wait_until, FakeAgent, TmuxServer, DEADLINE};

const ENDS_TURN: &str = "claude/kvsankar-agent-history/session-01.jsonl";

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

fn capture(server: &TmuxServer, pane: &str) -> String {
    server.tmux(&["capture-pane", "-p", "-J", "-t", pane])
}

#[test]
fn alert_command_with_quotes_and_a_spaced_path_gets_the_alert_json_on_stdin() {
    let server = TmuxServer::start();
    let live = server.spawn(&FakeAgent::claude().fixture(ENDS_TURN).start_lines(3));
    let alerts = server.path().join("my alerts").join("all alerts.jsonl");
    std::fs::create_dir_all(alerts.parent().unwrap()).unwrap();
    let mut cmd = common::agentpane_with_env(&server.env());
    let child = cmd
        .env("ALERTS_FILE", &alerts)
        .args(["-L", &server.name, "watch", "--poll", "0.5"])
        .args(["--no-notify", "--no-bell", "--no-message"])
        .args(["--alert-command", r#"cat >> "$ALERTS_FILE""#])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    struct Reap(std::process::Child);
    impl Drop for Reap {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let _watch = Reap(child);
    wait_until(DEADLINE, "the watcher's first scan", || {
        server.server_dir().join("state.json").exists()
    });
    server.send_line(&live, "step");
    wait_until(DEADLINE, "the alert in the file", || {
        read(&alerts).contains('\n')
    });
    let line = read(&alerts);
    let alert: serde_json::Value = serde_json::from_str(line.lines().next().unwrap())
        .unwrap_or_else(|e| panic!("not one JSON line ({e}): {line}"));
    assert_eq!(alert["pane"], live.as_str());
    assert_eq!(alert["state"], "your-turn");
}

#[test]
fn ai_command_pipeline_gets_a_hostile_answer_on_stdin_and_never_runs_it() {
    let server = TmuxServer::start();
    let hostile = server.path().join("hostile.txt");
    std::fs::write(
        &hostile,
        "run $(touch pwned) and `touch pwned2` then; touch pwned3\n",
    )
    .unwrap();
    let src = server.new_window(
        &format!("cat '{}'; exec sleep 600", hostile.display()),
        &server.work("src"),
        &[],
    );
    let (dst, received) = server.inbox_agent("dst");
    wait_until(DEADLINE, "the hostile text on screen", || {
        capture(&server, &src).contains("touch pwned3")
    });
    // The command runs where `route` runs: any executed `touch` would land here.
    let cwd = tempfile::tempdir().unwrap();
    let out_file = server.path().join("ai out.txt");
    let mut cmd = common::agentpane_with_env(&server.env());
    let route = cmd
        .current_dir(cwd.path())
        .env("AI_OUT", &out_file)
        .env(
            "AGENTPANE_AI_COMMAND",
            r#"tr a-z A-Z | cat > "$AI_OUT" && cat "$AI_OUT""#,
        )
        .args(["-L", &server.name, "route", &src, &dst, "--screen"])
        .args(["--transform", "ai", "--instruction", "shout it"])
        .output()
        .unwrap();
    assert!(route.status.success(), "{route:?}");
    let shouted = read(&out_file);
    assert!(
        shouted.contains("RUN $(TOUCH PWNED) AND `TOUCH PWNED2` THEN; TOUCH PWNED3"),
        "{shouted}"
    );
    wait_until(DEADLINE, "the transformed text in the destination", || {
        read(&received).contains("TOUCH PWNED3")
    });
    for dir in [cwd.path(), &server.work("src"), &server.work("dst")] {
        for name in ["pwned", "pwned2", "pwned3", "PWNED"] {
            assert!(!dir.join(name).exists(), "{} was executed", name);
        }
    }
}
