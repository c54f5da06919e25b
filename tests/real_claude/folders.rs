//! Several sessions in one folder, one of them after `/clear`, beside a fresh one: each pane
//! shows its own session or none, never a neighbour's.

use crate::real::Client;
use crate::rig::{each_client, Rig};

#[test]
#[cfg_attr(skip_real, ignore = "AGENTPANE_SKIP_REAL: real clients not run")]
fn sessions_in_one_folder_each_show_their_own() {
    each_client(three_in_one_folder);
}

fn three_in_one_folder(client: &Client) {
    let rig = Rig::new(client);
    let label = client.label();
    let b = rig.start("proj");
    rig.ask(&b, "Please say PLAIN banana");
    rig.wait_state(&b, "your-turn", None);
    let old = rig.report(&b)["transcript"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(!old.is_empty(), "{label}");

    rig.ask(&b, "/clear");
    let row = rig.wait_report(&b, "the cleared session", |r| {
        r["transcript"] != old.as_str()
    });
    // The record moves to a new session at once; its transcript, when the client writes one
    // (2.1.197 a moment later), holds only the command.
    rig.dump("cleared");
    assert_eq!(row["state"], "idle", "{label}: after /clear: {row}");
    let not_old = |row: &serde_json::Value| row["transcript"] != old.as_str();

    // Two sessions: the cleared one and a fresh one beside it.
    let c = rig.start("proj");
    rig.dump("cleared-and-fresh");
    // A client just started may still be busy with its start-up for a moment; it must settle
    // to idle and never show the cleared session meanwhile.
    let row = rig.wait_report(
        &c,
        "the fresh session beside a cleared one to read idle",
        |r| {
            assert!(
                not_old(r),
                "{label}: fresh pane shows the cleared session: {r}"
            );
            r["state"] == "idle"
        },
    );
    assert!(row["transcript"].is_null(), "{label}: fresh: {row}");
    let row = rig.report(&b);
    assert!(not_old(&row), "{label}: the cleared pane went back: {row}");
    for pane in [&b, &c] {
        let last = rig.agentpane(&["last", pane]);
        assert_eq!(last.code, 1, "{label}: {pane}: {last:?}");
    }

    // Three: one more that answers.
    let a = rig.start("proj");
    rig.ask(&a, "Please say PLAIN cherry");
    let row = rig.wait_state(&a, "your-turn", None);
    assert_ne!(row["transcript"], old.as_str(), "{label}: {row}");
    let last = rig.agentpane(&["last", &a]);
    assert_eq!(last.stdout.trim_end(), "Answer: cherry.", "{label}");
    let answered = row["transcript"].clone();
    for pane in [&b, &c] {
        let row = rig.report(pane);
        assert_eq!(row["state"], "idle", "{label}: {pane}: {row}");
        assert!(not_old(&row), "{label}: {pane}: {row}");
        assert_ne!(row["transcript"], answered, "{label}: {pane}: {row}");
    }
    assert!(rig.report(&c)["transcript"].is_null(), "{label}");
}
