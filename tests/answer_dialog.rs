//! `agentpane answer` on a Codex dialog whose command holds lines that read like options: the
//! keys pressed are those of the options Codex draws, never a line of the command.
//!
//! The fake Codex (`AGENTPANE_FAKE_ASK=1`) logs the call as Codex 0.171 writes it to its
//! rollout (a `function_call` of `exec_command` with its `cmd` and `justification`, no output
//! yet) and draws the dialog as the released client's approval overlay renders it
//! (`agents::codex::dialogs::drawn_run`: the title, `Environment:` and `Reason:`, the command
//! with `$ ` before its first line and each further line on its own screen line, then
//! `› 1. Yes, proceed (y)` / `2. Yes, and don't ask again …` / `3. No, and tell Codex what to
//! do differently (esc)`). Keys reach the fake's terminal and stay there; `--json` says which
//! were pressed.

mod common;

use common::{FakeAgent, TmuxServer};
use serde_json::json;

/// A fake Codex in a new window of `server`, asking to run `command`, once its dialog is up.
fn codex_asking(server: &TmuxServer, command: &str) -> String {
    let call = json!({"timestamp": "", "type": "response_item", "payload": {
        "type": "function_call", "name": "exec_command", "call_id": "call_1",
        "arguments": json!({"cmd": command, "justification": "write the notes"}).to_string()}});
    let rollout = [
        json!({"timestamp": "", "type": "turn_context", "payload": {"turn_id": "t1", "cwd": ""}}),
        json!({"timestamp": "", "type": "event_msg", "payload": {"type": "task_started", "turn_id": "t1"}}),
        call,
    ]
    .map(|l| l.to_string())
    .join("\n");
    let path = server.path().join("asks.jsonl");
    std::fs::write(&path, rollout + "\n").unwrap();
    let agent = FakeAgent::codex()
        .env("AGENTPANE_FAKE_AGENT", path.to_str().unwrap())
        .env("AGENTPANE_FAKE_ASK", "1");
    let pane = server.spawn(&agent);
    common::wait_until(common::DEADLINE, "the dialog painted", || {
        server
            .tmux(&["capture-pane", "-p", "-t", &pane])
            .contains("3. No, and tell Codex what to do differently (esc)")
    });
    pane
}

/// `agentpane answer PANE CHOICE --json` in `server`; its output, once it answered.
fn answer(server: &TmuxServer, pane: &str, choice: &str) -> serde_json::Value {
    let run = server.agentpane(&["answer", pane, choice, "--json"]);
    assert_eq!(run.code, 0, "{run:?}");
    let out = run.json();
    assert_eq!(out["outcome"], "answered", "{out:#}");
    out
}

#[test]
fn deny_presses_codex_s_no_key_when_the_command_holds_a_numbered_list() {
    let server = TmuxServer::start();
    // The first line is long enough to tell the call apart on its own, as in the report:
    // `1. Normalise …` was read as an option whose label starts with "no".
    let command = "python3 scripts/normalise.py --input data/raw --output data/clean <<'EOF'\n\
                   1. Normalise the paths before comparing them\n\
                   2. Yes, keep the symlinks\n\
                   EOF";
    let pane = codex_asking(&server, command);
    let out = answer(&server, &pane, "deny");
    assert_eq!(out["keys"], json!(["3"]), "{out:#}");
}

#[test]
fn allow_answers_a_command_of_several_lines_whose_first_line_is_short() {
    let server = TmuxServer::start();
    let pane = codex_asking(&server, "cat > notes.md <<'EOF'\nhello\nEOF");
    let out = answer(&server, &pane, "allow");
    assert_eq!(out["keys"], json!(["1"]), "{out:#}");
    assert_eq!(
        out["request"]["summary"], "$ cat > notes.md <<'EOF'",
        "{out:#}"
    );
}

/// Two hands answer one dialog at the same moment (the page's Allow and a notification's
/// Deny, say): the first types its key, the second looks only once the first is done, finds
/// the dialog answered and types nothing.
#[test]
fn two_answers_at_once_type_into_one_dialog_once() {
    let server = TmuxServer::start();
    let pane = server.spawn(&FakeAgent::asking());
    common::wait_until(common::DEADLINE, "the dialog painted", || {
        server
            .tmux(&["capture-pane", "-p", "-t", &pane])
            .contains("Do you want to proceed?")
    });
    let started: Vec<_> = ["allow", "deny"]
        .iter()
        .map(|choice| {
            server
                .agentpane_command(&["answer", &pane, choice, "--json"])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("start agentpane answer")
        })
        .collect();
    let outs: Vec<serde_json::Value> = started
        .into_iter()
        .map(|child| {
            let out = child.wait_with_output().expect("agentpane answer ran");
            serde_json::from_slice(&out.stdout)
                .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)))
        })
        .collect();
    let typed: Vec<_> = outs
        .iter()
        .filter(|o| o["keys"].as_array().is_some_and(|k| !k.is_empty()))
        .collect();
    assert_eq!(typed.len(), 1, "exactly one answer types: {outs:#?}");
    let refused: Vec<_> = outs.iter().filter(|o| o["outcome"] == "refused").collect();
    assert_eq!(refused.len(), 1, "the other is refused: {outs:#?}");
}
