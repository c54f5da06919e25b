//! Deciding from the phone: a released Claude Code's permission dialog on `agentpane web`'s
//! page in headless Chromium at a phone's size (`tests/common/browser.rs`). The page shows
//! the command; its Allow runs the call exactly once (the stand-in receives one result), its
//! Deny on the next dialog runs nothing and Claude Code hands the turn back.

use crate::answer::{pending, ran_since, READ};
use crate::common::browser::{Browser, Page};
use crate::common::web::WebServer;
use crate::common::Watch;
use crate::real::anthropic::TOOL_COMMAND;
use crate::real::{Client, STEP};
use crate::rig::{each_client, Rig};

#[test]
#[cfg_attr(skip_real, ignore = "AGENTPANE_SKIP_REAL: real clients not run")]
fn a_permission_dialog_is_allowed_once_and_denied_from_the_page() {
    each_client(from_the_page);
}

/// Opens the waiting `pane`'s detail on `page` and waits until it shows the command.
fn shown(page: &Page, pane: &str) {
    page.wait_row(pane, "waiting");
    page.tap_pane(pane);
    page.wait_text("#request", TOOL_COMMAND);
    page.wait_text("#request", "Bash");
}

fn from_the_page(client: &Client) {
    let rig = Rig::new(client);
    let a = rig.start("proj");
    let label = client.label();
    let _watch = Watch::start(&rig.tmux, &[]);
    let web = WebServer::start(&rig.tmux, &[]);
    let browser = Browser::start();
    let page = browser.open(&web.url);

    // Allow: the call runs once.
    pending(&rig, &a);
    shown(&page, &a);
    let before = rig.api.tool_results().len();
    std::thread::sleep(READ);
    page.click("#allow");
    page.wait_text("#result", "Allowed once.");
    crate::real::wait_for(STEP, &rig.what("the tool's result"), || {
        (!ran_since(&rig, before).is_empty()).then_some(())
    });
    rig.wait_state(&a, "your-turn", None);
    let ran = ran_since(&rig, before);
    assert_eq!(ran.len(), 1, "{label}: allowed once: {ran:?}");

    // Deny: Claude Code refuses the call and hands the turn back; nothing ran.
    page.click("#back");
    pending(&rig, &a);
    shown(&page, &a);
    let before = rig.api.tool_results().len();
    std::thread::sleep(READ);
    page.click("#deny");
    page.wait_text("#result", "Denied.");
    rig.wait_state(&a, "your-turn", Some("interrupted"));
    assert_eq!(
        rig.api.tool_results().len(),
        before,
        "{label}: a denied call's result reached the API before the next prompt"
    );
}
