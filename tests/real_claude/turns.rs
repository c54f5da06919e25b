//! A session from its first screen to a routed answer: fresh → idle, nothing to hand on; a
//! plain answer → your-turn, alerted once; that answer routed (plain, then in a multi-line
//! template) reaches the API as the other session's next prompt, byte-exact.

use std::time::Duration;

use crate::common::Watch;
use crate::real::{Client, STEP};
use crate::rig::{alerts_stay, each_client, Rig};

#[test]
#[cfg_attr(skip_real, ignore = "AGENTPANE_SKIP_REAL: real clients not run")]
fn fresh_session_is_idle_then_an_answer_is_alerted_once_and_routes_byte_exact() {
    each_client(fresh_then_answer_then_route);
}

fn fresh_then_answer_then_route(client: &Client) {
    let rig = Rig::new(client);
    let watch = Watch::start(&rig.tmux, &[]);
    let a = rig.start("proj");
    let b = rig.start("other");

    rig.dump("fresh");
    // A session the user just opened: nothing answered, nothing to alert or hand on.
    for pane in [&a, &b] {
        let row = rig.wait_report(pane, "a fresh session to be listed", |r| !r.is_null());
        assert_eq!(
            row["state"],
            "idle",
            "{}: fresh session {row}",
            client.label()
        );
        assert!(row["transcript"].is_null(), "{}: {row}", client.label());
    }
    let last = rig.agentpane(&["last", &a]);
    assert_eq!(
        last.code,
        1,
        "{}: last of a fresh pane: {last:?}",
        client.label()
    );
    let route = rig.agentpane(&["route", &a, &b, "--json"]);
    assert_ne!(route.code, 0, "{}: {route:?}", client.label());
    let refusal = route.json();
    assert_eq!(
        refusal["outcome"],
        "refused",
        "{}: {refusal}",
        client.label()
    );
    alerts_stay(
        Duration::from_secs(3),
        "no alert for fresh sessions",
        0,
        || watch.alerts(),
    );

    // A plain answer: your-turn, `last` is that answer, one alert.
    rig.ask(&a, "Please say PLAIN apple");
    let row = rig.wait_state(&a, "your-turn", None);
    rig.dump("plain");
    assert!(row["reason"].is_null(), "{}: {row}", client.label());
    let last = rig.agentpane(&["last", &a]);
    assert_eq!(last.code, 0, "{}: {last:?}", client.label());
    assert_eq!(
        last.stdout.trim_end(),
        "Answer: apple.",
        "{}",
        client.label()
    );
    crate::real::wait_for(STEP, &rig.what("the alert"), || {
        (!watch.alerts().is_empty()).then_some(())
    });
    alerts_stay(Duration::from_secs(3), "exactly one alert", 1, || {
        watch.alerts()
    });
    let alert = &watch.alerts()[0];
    assert_eq!(alert["pane"], a.as_str(), "{}: {alert}", client.label());
    assert_eq!(alert["state"], "your-turn", "{}: {alert}", client.label());
    assert!(alert["turn_key"].is_string(), "{}: {alert}", client.label());
    assert_eq!(rig.report(&b)["state"], "idle", "{}", client.label());

    // Routed as is: the next prompt of B, byte for byte.
    let route = rig.agentpane(&["route", &a, &b]);
    assert_eq!(
        route.code,
        0,
        "{}: {route:?}\nB's screen:\n{}",
        client.label(),
        rig.screen(&b)
    );
    let arrived = wait_prompt(&rig, 2);
    assert_eq!(arrived, "Answer: apple.", "{}", client.label());
    rig.wait_state(&b, "your-turn", None);

    // In a multi-line template with a control character (stripped on the way). No tab: Claude
    // Code itself turns a pasted tab into four spaces.
    let template = rig.tmux.path().join("template.txt");
    std::fs::write(
        &template,
        "Context from {source}:\n\n{answer}\n\n  Check it\u{7} please.\nThanks.",
    )
    .expect("write template");
    let target = rig.report(&a)["target"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let route = rig.agentpane(&["route", &a, &b, "--template", template.to_str().unwrap()]);
    assert_eq!(
        route.code,
        0,
        "{}: {route:?}\nB's screen:\n{}",
        client.label(),
        rig.screen(&b)
    );
    let arrived = wait_prompt(&rig, 3);
    let want = format!(
        "Context from claude in {a} ({target}):\n\nAnswer: apple.\n\n  Check it please.\nThanks."
    );
    assert_eq!(arrived, want, "{}", client.label());
    drop(watch);
}

/// The `n`th user prompt the stand-in received (1-based), once it has arrived.
fn wait_prompt(rig: &Rig, n: usize) -> String {
    crate::real::wait_for(STEP, &rig.what(&format!("prompt {n} at the API")), || {
        rig.api.prompts().get(n - 1).cloned()
    })
}
