//! Deciding from the desktop: the watcher's notification for a released Claude Code's
//! permission dialog, shown by dunst (`tests/common/desktop.rs`), says what is asked; Allow
//! picked from it runs the call exactly once (the stand-in receives one result), Deny refuses
//! it and Claude Code hands the turn back.

use crate::answer::{pending, ran_since, READ};
use crate::common::desktop::Desktop;
use crate::common::Watch;
use crate::real::anthropic::TOOL_COMMAND;
use crate::real::{Client, STEP};
use crate::rig::{each_client, Rig};

#[test]
#[cfg_attr(skip_real, ignore = "AGENTPANE_SKIP_REAL: real clients not run")]
fn a_permission_dialog_is_allowed_once_and_denied_from_the_desktop() {
    each_client(from_the_desktop);
}

/// Waits for the watcher's notification of `pane`'s wait newer than `after` (an id); its id.
fn notified(rig: &Rig, desktop: &Desktop, pane: &str, after: u32) -> u32 {
    let at = rig.tmux.tmux(&[
        "display-message",
        "-p",
        "-t",
        pane,
        "#{session_name}:#{window_index}.#{pane_index}",
    ]);
    let shown = desktop.wait_shown_else(
        &rig.what("the wait's notification"),
        |s| s.id > after && s.summary.contains(&at) && s.summary.contains("waiting"),
        || {
            let log = rig.tmux.server_dir().join("watch.log");
            let log = std::fs::read_to_string(log).unwrap_or_default();
            format!("watch.log:\n{log}")
        },
    );
    assert_eq!(shown.body, format!("Bash: {TOOL_COMMAND}"), "{shown:#?}");
    shown.id
}

fn from_the_desktop(client: &Client) {
    let desktop = Desktop::start();
    let rig = Rig::new(client);
    let a = rig.start("proj");
    let label = client.label();
    let _watch = Watch::start_notifying(&rig.tmux, &[], Some(&desktop.env()));

    // Allow: the call runs once.
    pending(&rig, &a);
    let id = notified(&rig, &desktop, &a, 0);
    let before = rig.api.tool_results().len();
    std::thread::sleep(READ);
    desktop.pick(id, "allow");
    crate::real::wait_for(STEP, &rig.what("the tool's result"), || {
        (!ran_since(&rig, before).is_empty()).then_some(())
    });
    rig.wait_state(&a, "your-turn", None);
    let ran = ran_since(&rig, before);
    assert_eq!(ran.len(), 1, "{label}: allowed once: {ran:?}");

    // Deny: Claude Code refuses the call and hands the turn back; nothing ran.
    pending(&rig, &a);
    let id = notified(&rig, &desktop, &a, id);
    let before = rig.api.tool_results().len();
    std::thread::sleep(READ);
    desktop.pick(id, "deny");
    rig.wait_state(&a, "your-turn", Some("interrupted"));
    assert_eq!(
        rig.api.tool_results().len(),
        before,
        "{label}: a denied call's result reached the API before the next prompt"
    );
}
