//! A background subagent: the pane reads `working` until the subagent and the turn its
//! `<task-notification>` starts are done, then one alert.

use std::time::{Duration, Instant};

use crate::common::Watch;
use crate::real::{Client, STEP};
use crate::rig::{alerts_stay, each_client, Rig};

#[test]
#[cfg_attr(skip_real, ignore = "AGENTPANE_SKIP_REAL: real clients not run")]
fn background_agent_is_working_until_done_then_alerted_once() {
    each_client(background_agent);
}

fn background_agent(client: &Client) {
    let rig = Rig::new(client);
    let a = rig.start("proj");
    let watch = Watch::start(&rig.tmux, &[]);
    let label = client.label();

    rig.ask(&a, "Please start an AGENT");
    let end = Instant::now() + STEP * 2;
    let mut seen: Vec<String> = Vec::new();
    // Where agentpane looks for the subagent's own writes (proof of life for a long quiet
    // turn) must be where the client puts them.
    let mut subagent_writes = false;
    loop {
        let row = rig.report(&a);
        let state = row["state"].as_str().unwrap_or_default().to_string();
        let reason = row["reason"].as_str().unwrap_or_default().to_string();
        if reason.starts_with("background agent") {
            let transcript = std::path::Path::new(row["transcript"].as_str().unwrap_or_default());
            subagent_writes |= agentpane::agents::claude::subagent_life(transcript).is_some();
        }
        let reading = format!("{state} ({reason})");
        if seen.last() != Some(&reading) {
            seen.push(reading);
        }
        let done = rig.screen(&a).contains("Main done after the agent.");
        if done && state == "your-turn" {
            break;
        }
        if !done && (state == "your-turn" || !watch.alerts().is_empty()) {
            rig.dump("agent-early");
        }
        if !done {
            assert_ne!(
                state, "your-turn",
                "{label}: your-turn before the agent finished: {seen:?}"
            );
            assert!(
                watch.alerts().is_empty(),
                "{label}: alerted before the agent finished: {:?} {seen:?}",
                watch.alerts()
            );
        }
        assert!(
            Instant::now() < end,
            "{label}: never finished: {seen:?}\n{}",
            rig.screen(&a)
        );
        std::thread::sleep(Duration::from_millis(300));
    }
    rig.dump("agent-done");
    eprintln!("{label}: background agent readings: {seen:?}");
    assert!(
        seen.iter().any(|r| r.starts_with("working")),
        "{label}: {seen:?}"
    );
    assert!(
        subagent_writes,
        "{label}: no subagent transcript beside the session's while its agent ran"
    );
    let last = rig.agentpane(&["last", &a]);
    assert_eq!(
        last.stdout.trim_end(),
        "Main done after the agent.",
        "{label}"
    );
    crate::real::wait_for(STEP, &rig.what("the alert"), || {
        (!watch.alerts().is_empty()).then_some(())
    });
    alerts_stay(Duration::from_secs(3), "exactly one alert", 1, || {
        watch.alerts()
    });
}
