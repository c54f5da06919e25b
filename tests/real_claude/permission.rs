//! A tool waiting for permission is `waiting` (named, alerted, not a route target); Escape at
//! that prompt or during a streamed answer hands the turn back as `interrupted`, unalerted.

use std::time::Duration;

use crate::common::Watch;
use crate::real::{Client, STEP};
use crate::rig::{alerts_stay, each_client, Rig};

#[test]
#[cfg_attr(skip_real, ignore = "AGENTPANE_SKIP_REAL: real clients not run")]
fn permission_wait_is_alerted_and_escape_interrupts_without_an_alert() {
    each_client(permission_then_interrupts);
}

fn permission_then_interrupts(client: &Client) {
    let rig = Rig::new(client);
    // A neighbour with an answer to route (a fake agent replaying a real transcript).
    let src = rig.answered_neighbour();
    let a = rig.start("proj");
    let watch = Watch::start(&rig.tmux, &[]);
    let label = client.label();
    let alerts_of = |pane: &str| -> Vec<serde_json::Value> {
        watch
            .alerts()
            .into_iter()
            .filter(|al| al["pane"] == pane)
            .collect()
    };

    rig.ask(&a, "Please run the TOOL now");
    rig.wait_screen(&a, "the permission prompt", |s| {
        s.contains("Do you want to proceed?")
    });
    let row = rig.wait_state(&a, "waiting", Some("Bash"));
    rig.dump("permission");
    crate::real::wait_for(STEP, &rig.what("the waiting alert"), || {
        (!alerts_of(&a).is_empty()).then_some(())
    });
    let alert = &alerts_of(&a)[0];
    assert_eq!(alert["state"], "waiting", "{label}: {alert} (row {row})");
    let route = rig.agentpane(&["route", &src, &a, "--json"]);
    assert_ne!(
        route.code, 0,
        "{label}: routed into a waiting pane: {route:?}"
    );
    assert_eq!(route.json()["outcome"], "refused", "{label}: {route:?}");

    // Escape at the permission prompt.
    rig.press(&a, "Escape");
    rig.wait_state(&a, "your-turn", Some("interrupted"));
    rig.dump("permission-escaped");
    alerts_stay(
        Duration::from_secs(3),
        "no alert for an interrupt",
        1,
        || alerts_of(&a),
    );

    // Escape while the answer streams.
    rig.ask(&a, "Please answer SLOW");
    crate::real::wait_for(STEP, &rig.what("the slow request"), || {
        rig.api
            .prompts()
            .iter()
            .any(|p| p.contains("SLOW"))
            .then_some(())
    });
    rig.wait_state(&a, "working", None);
    std::thread::sleep(Duration::from_secs(2));
    rig.press(&a, "Escape");
    rig.wait_state(&a, "your-turn", Some("interrupted"));
    rig.dump("slow-escaped");
    alerts_stay(
        Duration::from_secs(3),
        "no alert for an interrupt",
        1,
        || alerts_of(&a),
    );
}
