//! `agentpane hooks install`: the real client's hook events reach `agentpane hook` and
//! decide the pane (`source: hook`).

use crate::real::Client;
use crate::rig::{each_client, Rig};

#[test]
#[cfg_attr(skip_real, ignore = "AGENTPANE_SKIP_REAL: real clients not run")]
fn installed_hooks_reach_agentpane_from_the_real_client() {
    each_client(hooks);
}

fn hooks(client: &Client) {
    let rig = Rig::new(client);
    let label = client.label();
    let install = rig.agentpane(&["hooks", "install"]);
    assert_eq!(install.code, 0, "{label}: {install:?}");
    let a = rig.start("proj");
    rig.ask(&a, "Please run the TOOL now");
    let row = rig.wait_report(&a, "a hook-decided wait", |r| {
        r["source"] == "hook" && r["state"] == "waiting"
    });
    assert!(
        row["reason"].as_str().is_some_and(|r| r.contains("Bash")),
        "{label}: {row}"
    );
    let evidence = rig.tmux.state_dir().join("evidence");
    let files = std::fs::read_dir(&evidence).map(|d| d.count()).unwrap_or(0);
    assert!(
        files > 0,
        "{label}: no hook evidence in {}",
        evidence.display()
    );
    rig.press(&a, "Escape");
    rig.wait_state(&a, "your-turn", Some("interrupted"));
}
