//! Deciding from outside the pane: a pending Bash call is shown with its command, `answer
//! allow` runs it (the stand-in receives its result), `answer deny` refuses it and the turn
//! ends as Claude Code ends it, and an answer racing the person who already answered in the
//! pane is refused with nothing typed — also when the person's key came through their
//! terminal a moment before and Claude Code has not drawn it yet.

use std::time::Duration;

use crate::common::Watch;
use crate::real::anthropic::TOOL_COMMAND;
use crate::real::{Client, STEP};
use crate::rig::{each_client, Rig};

/// How long a person reads the dialog before pressing its key. Claude Code 2.1.332 drops a key
/// that comes within its dialog's input grace — measured: keys 0–130 ms after the dialog is on
/// screen were dropped, from 160 ms on taken; 2.1.197 takes them at once — so a key the test
/// presses the moment it sees the dialog may never answer it.
pub const READ: Duration = Duration::from_millis(500);

#[test]
#[cfg_attr(skip_real, ignore = "AGENTPANE_SKIP_REAL: real clients not run")]
fn a_pending_command_is_shown_and_answered_from_outside() {
    each_client(answer_from_outside);
}

/// Asks for the tool and waits for its dialog; the request `panes --json` shows.
pub fn pending(rig: &Rig, pane: &str) -> serde_json::Value {
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

/// The calls the stand-in saw run (a tool result that is no error), among the results after
/// its first `before`.
pub fn ran_since(rig: &Rig, before: usize) -> Vec<String> {
    let results = rig.api.tool_results();
    results
        .into_iter()
        .skip(before)
        .filter(|(_, error)| !error)
        .map(|(id, _)| id)
        .collect()
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
    // While the log has not recorded the call, a fingerprint that is not the dialog's may be
    // one the log showed and no longer does: `already-answered`.
    let refusal = stale.json()["refusal"].clone();
    assert!(
        refusal == "dialog-changed" || (req["from"] == "screen" && refusal == "already-answered"),
        "{label}: {stale:?}"
    );
    assert!(rig.screen(&a).contains("Do you want to proceed?"));

    // Allow once: the stand-in receives the tool's result.
    let before = rig.api.tool_results().len();
    let run = rig.agentpane(&["answer", &a, "allow", "--request", &fp, "--json"]);
    assert_eq!(run.code, 0, "{label}: {run:?}");
    let out = run.json();
    assert_eq!(out["outcome"], "answered", "{label}: {out}");
    assert_eq!(out["keys"], serde_json::json!(["1"]), "{label}: {out}");
    crate::real::wait_for(STEP, &rig.what("the tool's result"), || {
        (ran_since(&rig, before).len() == 1).then_some(())
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
    let before = rig.api.tool_results().len();
    let run = rig.agentpane(&["answer", &a, "deny", "--request", &fp]);
    assert_eq!(run.code, 0, "{label}: {run:?}");
    assert!(run.stdout.contains("denied"), "{label}: {run:?}");
    rig.wait_state(&a, "your-turn", Some("interrupted"));
    assert_eq!(
        rig.api.tool_results().len(),
        before,
        "{label}: a denied call's result reached the API before the next prompt"
    );

    // The person answers in the pane first: once the pane has taken the key, the late answer
    // is refused, never typed. (A key the agent has not drawn yet is not seen: under load that
    // can take longer than answer's second look, docs/design.md#deciding-from-anywhere.)
    let req = pending(&rig, &a);
    let fp = req["fingerprint"].as_str().unwrap().to_string();
    std::thread::sleep(READ);
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

    // The person, at the pane in their own terminal, presses the dialog's key, and an answer
    // from elsewhere follows at once — before Claude Code may have drawn or logged the key:
    // refused, someone is typing there. The stand-in sees one decision, the person's.
    let person = crate::live::Person::at(&rig.tmux, &a);
    let req = pending(&rig, &a);
    let fp = req["fingerprint"].as_str().unwrap().to_string();
    let before = rig.api.tool_results().len();
    std::thread::sleep(READ);
    person.keys(&["1"]);
    let late = rig.agentpane(&["answer", &a, "deny", "--request", &fp, "--json"]);
    assert_eq!(late.code, 1, "{label}: {late:?}");
    assert_eq!(late.json()["refusal"], "person-typing", "{label}: {late:?}");
    assert_eq!(
        late.json()["keys"],
        serde_json::json!([]),
        "{label}: {late:?}"
    );
    crate::real::wait_for(STEP, &rig.what("the person's allow"), || {
        (!ran_since(&rig, before).is_empty()).then_some(())
    });
    rig.wait_state(&a, "your-turn", None);
    let ran = ran_since(&rig, before);
    assert_eq!(
        ran.len(),
        1,
        "{label}: the person allowed one call: {ran:?}"
    );
    let screen = rig.screen(&a);
    assert!(
        !screen.lines().any(|l| l.trim_start().starts_with("❯ 3")),
        "{label}: the late answer was typed: {screen}"
    );
}

#[test]
#[cfg_attr(skip_real, ignore = "AGENTPANE_SKIP_REAL: real clients not run")]
fn allow_always_is_kept_by_the_client() {
    each_client(allow_always);
}

/// The Claude Code versions whose "always allow access to …" option also stops the same
/// command from asking again (observed; see [`allow_always`]).
const KEEPS_THE_GRANT: [&str; 1] = ["2.1.197"];

/// `answer allow --always` chooses the dialog's option that stops asking (on both pinned
/// versions, for this `touch` in the project: "Yes, and always allow access to <folder> from
/// this project"): the call runs; what the client then does with the same command is its own
/// and is checked as observed.
fn allow_always(client: &Client) {
    let rig = Rig::new(client);
    let a = rig.start("proj");
    let label = client.label();
    let req = pending(&rig, &a);
    let dialog = rig.screen(&a);
    let fp = req["fingerprint"].as_str().unwrap().to_string();
    let run = crate::real::answer_always(&rig.tmux, &a, &fp);
    assert_eq!(run.code, 0, "{label}: {run:?}");
    let out = run.json();
    assert_eq!(out["outcome"], "answered", "{label}: {out}");
    assert_eq!(out["always"], true, "{label}: {out}");
    // The key of the option that stops asking, as the dialog numbers it.
    let key = out["keys"][0].as_str().unwrap().to_string();
    let option = dialog
        .lines()
        .map(str::trim)
        .map(|l| l.trim_start_matches("❯ "))
        .find(|l| l.starts_with(&format!("{key}. ")))
        .unwrap_or_else(|| panic!("{label}: no option {key} in\n{dialog}"));
    assert!(
        option.contains("don't ask again")
            || option.contains("don\u{2019}t ask again")
            || option.contains("always allow"),
        "{label}: {option}"
    );
    crate::real::wait_for(STEP, &rig.what("the tool's result"), || {
        (ran_since(&rig, 0).len() == 1).then_some(())
    });
    rig.wait_state(&a, "your-turn", None);

    // The same command asked again. Claude Code 2.1.197 runs it without a dialog: the grant
    // holds for the session (no settings file is written). 2.1.332 offers the same option —
    // access to the folder — but asks for the command again, offering it again.
    let before = rig.api.tool_results().len();
    rig.ask(&a, "Please run the TOOL now");
    let asked = crate::real::wait_for(STEP, &rig.what("the second call"), || {
        if rig.screen(&a).contains("Do you want to proceed?") {
            return Some(true);
        }
        (!ran_since(&rig, before).is_empty()).then_some(false)
    });
    assert_eq!(
        asked,
        !KEEPS_THE_GRANT.contains(&client.version.as_str()),
        "{label}: {}",
        rig.screen(&a)
    );
    if asked {
        let again = rig.wait_screen(&a, "the dialog drawn", |s| s.contains(option));
        assert!(again.contains(option), "{label}: {again}");
        let req = rig.wait_report(&a, "the request", |r| r["state"] == "waiting");
        let fp = req["request"]["fingerprint"].as_str().unwrap().to_string();
        let run = rig.agentpane(&["answer", &a, "allow", "--request", &fp, "--json"]);
        assert_eq!(run.code, 0, "{label}: {run:?}");
        crate::real::wait_for(STEP, &rig.what("the second call to run"), || {
            (!ran_since(&rig, before).is_empty()).then_some(())
        });
    }
    rig.wait_state(&a, "your-turn", None);
    assert_eq!(ran_since(&rig, before).len(), 1, "{label}");
}

#[test]
#[cfg_attr(skip_real, ignore = "AGENTPANE_SKIP_REAL: real clients not run")]
fn the_picker_decides_from_a_popup_over_the_pane() {
    each_client(picker_over_the_pane);
}

/// The person sits at the waiting pane and opens the picker over it (as the plugin's answer
/// key does): their `y` goes to the picker, through the client that shows the pane, and the
/// picker's answer is not refused as someone typing there — it passes its own client.
fn picker_over_the_pane(client: &Client) {
    let rig = Rig::new(client);
    let a = rig.start("proj");
    let label = client.label();
    let person = crate::live::Person::at(&rig.tmux, &a);
    let me = person.client().expect("the person's client");
    pending(&rig, &a);
    let mut popup = rig
        .tmux
        .agentpane_command(&["pick", "--popup", "--client", &me, "--decide"])
        .spawn()
        .expect("open the picker");
    person.wait_screen(STEP, &rig.what("the request in the popup"), |s| {
        s.contains("y allow once") && s.contains(TOOL_COMMAND)
    });
    let before = rig.api.tool_results().len();
    person.keys(&["y"]);
    let said = person.wait_screen(STEP, &rig.what("the picker's answer"), |s| {
        s.contains("allowed once") || s.contains("refused")
    });
    assert!(said.contains("allowed once"), "{label}: {said}");
    crate::real::wait_for(STEP, &rig.what("the tool's result"), || {
        (ran_since(&rig, before).len() == 1).then_some(())
    });
    person.keys(&["q"]);
    let _ = popup.wait();
    rig.wait_state(&a, "your-turn", None);
}
