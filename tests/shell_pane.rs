//! A pane without an agent has no answer (docs/design.md#extraction): `last`, `route`, the
//! last-answer key (`prefix + P`) and the route key (`prefix + R`) say what runs there and
//! give nothing; the shell's screen is read only when asked for with `--screen`. On private
//! tmux servers (`tmux -L agentpane-test-…`), the keys through a real attached client.

mod common;
mod live;

use common::{TmuxServer, DEADLINE};
use live::Live;

/// The message every command gives for an interactive bash in `pane`.
fn runs_bash(pane: &str) -> String {
    format!("{pane} runs bash, not a coding agent")
}

/// An interactive bash (no rc files: the prompt is the test's) showing `marker`'s output.
fn bash_showing(server: &TmuxServer, marker: &str) -> String {
    let pane = server.shell_pane("bash --norc -i");
    server.tmux(&["send-keys", "-t", &pane, &format!("echo {marker}"), "Enter"]);
    common::wait_until(DEADLINE, "the marker on the shell's screen", || {
        server
            .tmux(&["capture-pane", "-p", "-t", &pane])
            .lines()
            .any(|l| l == marker)
    });
    pane
}

#[test]
fn last_on_a_shell_pane_refuses_and_screen_reads_it() {
    let server = TmuxServer::start();
    let pane = bash_showing(&server, "shell-output-1234");

    let run = server.agentpane(&["last", &pane]);
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(run.stdout, "", "{run:?}");
    assert!(run.stderr.contains(&runs_bash(&pane)), "{run:?}");
    assert!(run.stderr.contains("last --screen"), "{run:?}");

    // `--json`: one refusal document, same exit code.
    let json = server.agentpane(&["last", &pane, "--json"]);
    assert_eq!(json.code, 1, "{json:?}");
    let v = json.json();
    assert_eq!(v["outcome"], "refused", "{json:?}");
    assert_eq!(v["reason"], "not-an-agent", "{json:?}");
    assert_eq!(v["pane"], pane.as_str(), "{json:?}");
    assert!(v["detail"].as_str().unwrap().contains(&runs_bash(&pane)));

    // Asked for, the screen is given, and said to be the screen.
    let screen = server.agentpane(&["last", &pane, "--screen"]);
    assert_eq!(screen.code, 0, "{screen:?}");
    assert!(
        screen.stdout.lines().any(|l| l == "shell-output-1234"),
        "{screen:?}"
    );
    assert!(screen.stdout.contains("shell$ echo shell-output-1234"));
    assert!(screen.stderr.contains("screen"), "{screen:?}");
    let v = server
        .agentpane(&["last", &pane, "--screen", "--json"])
        .json();
    assert_eq!(v["source"], "screen");
    assert_eq!(v["agent"], serde_json::Value::Null);
}

#[test]
fn route_from_a_shell_pane_is_refused_unless_its_screen_is_asked_for() {
    let server = TmuxServer::start();
    let src = bash_showing(&server, "shell-output-5678");
    let (dst, inbox) = server.inbox_agent("dst");

    let run = server.agentpane(&["route", &src, &dst]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stderr.contains(&runs_bash(&src)), "{run:?}");
    assert!(run.stderr.contains("route --screen"), "{run:?}");
    let json = server.agentpane(&["route", &src, &dst, "--json"]);
    assert_eq!(json.code, 1, "{json:?}");
    assert_eq!(json.json()["outcome"], "refused", "{json:?}");
    // Nothing reached the agent: the one route below is the first line it receives.
    assert_eq!(std::fs::read_to_string(&inbox).unwrap_or_default(), "");

    let sent = server.agentpane(&["route", &src, &dst, "--screen", "--json"]);
    assert_eq!(sent.code, 0, "{sent:?}");
    assert_eq!(sent.json()["source"], "screen", "{sent:?}");
    common::wait_until(DEADLINE, "the shell's screen in the agent", || {
        std::fs::read_to_string(&inbox)
            .unwrap_or_default()
            .contains("shell-output-5678")
    });
}

#[test]
fn last_answer_and_route_keys_on_a_shell_pane_say_it_runs_no_agent() {
    let live = Live::start(&[]);
    // An agent elsewhere, so the route key has somewhere to route to.
    let (_agent, _) = live.server.inbox_agent("elsewhere");
    let shell = bash_showing(&live.server, "shell-output-90");
    live.focus(&shell);

    live.press("P");
    live.wait_screen("the last-answer key's message", |s| {
        s.lines()
            .last()
            .is_some_and(|l| l.contains(&format!("agentpane: {}", runs_bash(&shell))))
    });
    assert!(!live.screen().contains("last answer"), "{}", live.screen());
    live.assert_clean();

    live.press("R");
    live.wait_screen("the route key's message", |s| {
        s.lines().last().is_some_and(|l| {
            l.contains(&format!(
                "agentpane: {}: nothing to route",
                runs_bash(&shell)
            ))
        })
    });
    live.assert_clean();
}
