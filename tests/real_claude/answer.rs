//! Deciding from outside the pane: a pending Bash call is shown with its command, `answer
//! allow` runs it (the stand-in receives its result), `answer deny` refuses it and the turn
//! ends as Claude Code ends it, and an answer racing the person who already answered in the
//! pane is refused with nothing typed.

use crate::common::Watch;
use crate::real::anthropic::TOOL_COMMAND;
use crate::real::{Client, STEP};
use crate::rig::{each_client, Rig};

#[test]
fn a_pending_command_is_shown_and_answered_from_outside() {
    each_client(answer_from_outside);
}

/// Asks for the tool and waits for its dialog; the request `panes --json` shows.
fn pending(rig: &Rig, pane: &str) -> serde_json::Value {
    rig.ask(pane, "Please run the TOOL now");
    rig.wait_screen(pane, "the permission prompt", |s| {
        s.contains("Do you want to proceed?")
    });
    // Read from the log once it records the call, from the dialog until then: Claude Code
    // 2.1.197 was seen in CI to show the dialog for a minute with the call still unwritten.
    let row = rig.wait_report(pane, "the request", |r| {
        r["state"] == "waiting" && r["request"]["tool"] == "Bash"
    });
    row["request"].clone()
}

fn answer_from_outside(client: &Client) {
    let rig = Rig::new(client);
    let a = rig.start("proj");
    let label = client.label();
    let watch = Watch::start(&rig.tmux, &[]);

    // Shown with its command, in full: in `panes`, and in the alert.
    let req = pending(&rig, &a);
    let alert = crate::real::wait_for(STEP, &rig.what("the waiting alert"), || {
        watch
            .alerts()
            .into_iter()
            .find(|al| al["pane"] == a.as_str() && al["state"] == "waiting")
    });
    assert_eq!(
        alert["request"]["summary"], TOOL_COMMAND,
        "{label}: {alert}"
    );
    drop(watch);
    assert_eq!(req["summary"], TOOL_COMMAND, "{label}: {req}");
    assert!(
        req["from"] == "log" || req["from"] == "screen",
        "{label}: {req}"
    );
    assert!(
        req["text"]
            .as_str()
            .unwrap()
            .contains("Create a marker file"),
        "{label}: {req}"
    );
    let table = rig.agentpane(&["panes"]);
    assert!(table.stdout.contains(TOOL_COMMAND), "{label}: {table:?}");
    let fp = req["fingerprint"].as_str().unwrap().to_string();

    // Held to what was shown: another fingerprint is refused, nothing typed.
    let stale = rig.agentpane(&[
        "answer",
        &a,
        "allow",
        "--request",
        "0123456789abcdef",
        "--json",
    ]);
    assert_eq!(stale.code, 1, "{label}: {stale:?}");
    assert_eq!(
        stale.json()["refusal"],
        "dialog-changed",
        "{label}: {stale:?}"
    );
    assert!(rig.screen(&a).contains("Do you want to proceed?"));

    // Allow once: the stand-in receives the tool's result.
    let run = rig.agentpane(&["answer", &a, "allow", "--request", &fp, "--json"]);
    assert_eq!(run.code, 0, "{label}: {run:?}");
    let out = run.json();
    assert_eq!(out["outcome"], "answered", "{label}: {out}");
    assert_eq!(out["keys"], serde_json::json!(["1"]), "{label}: {out}");
    let id = req["call_id"].as_str().unwrap().to_string();
    crate::real::wait_for(STEP, &rig.what("the tool's result"), || {
        rig.api
            .tool_results()
            .iter()
            .any(|(got, error)| *got == id && !error)
            .then_some(())
    });
    rig.wait_state(&a, "your-turn", None);

    // The same answer again: that request is answered; nothing typed into the input box.
    let again = rig.agentpane(&["answer", &a, "allow", "--request", &fp, "--json"]);
    assert_eq!(again.code, 1, "{label}: {again:?}");
    assert_eq!(
        again.json()["refusal"],
        "already-answered",
        "{label}: {again:?}"
    );

    // Deny: Claude Code refuses the call and hands the turn back.
    let req = pending(&rig, &a);
    let fp = req["fingerprint"].as_str().unwrap().to_string();
    let run = rig.agentpane(&["answer", &a, "deny", "--request", &fp]);
    assert_eq!(run.code, 0, "{label}: {run:?}");
    assert!(run.stdout.contains("denied"), "{label}: {run:?}");
    rig.wait_state(&a, "your-turn", Some("interrupted"));
    let id = req["call_id"].as_str().unwrap().to_string();
    assert!(
        rig.api.tool_results().iter().all(|(got, _)| *got != id),
        "{label}: a denied call's result reached the API before the next prompt"
    );

    // The person answers in the pane first: once the pane has taken the key, the late answer
    // is refused, never typed. (A key the agent has not drawn yet is not seen: under load that
    // can take longer than answer's second look, docs/design.md#deciding-from-anywhere.)
    let req = pending(&rig, &a);
    let fp = req["fingerprint"].as_str().unwrap().to_string();
    rig.press(&a, "1");
    rig.wait_screen(&a, "the pane to take the person's answer", |s| {
        !s.contains("Do you want to proceed?")
    });
    let late = rig.agentpane(&["answer", &a, "deny", "--request", &fp, "--json"]);
    assert_eq!(late.code, 1, "{label}: {late:?}");
    let refusal = late.json()["refusal"].clone();
    assert!(
        refusal == "already-answered" || refusal == "no-dialog",
        "{label}: {late:?}"
    );
    rig.wait_state(&a, "your-turn", None);
    let screen = rig.screen(&a);
    assert!(
        !screen.lines().any(|l| l.trim_start().starts_with("❯ 3")),
        "{label}: the late answer was typed: {screen}"
    );
}
