//! The page of `agentpane web` (docs/design.md#web-page) in a real browser: Debian's headless
//! Chromium at a phone's size (`tests/common/browser.rs`), against a watcher and fake agents
//! in a private tmux server. Nothing is reached but 127.0.0.1.

mod common;

use common::browser::Browser;
use common::{descendants, wait_until};

/// The harness itself, on a page of the test's own: it reads, types, taps and waits, and the
/// browser (with every helper process it started) ends with the test.
#[test]
fn the_browser_reads_types_taps_and_ends_with_the_test() {
    let dir = tempfile::tempdir().unwrap();
    let page_file = dir.path().join("page.html");
    std::fs::write(
        &page_file,
        "<!doctype html><meta name=viewport content=\"width=device-width\"><textarea id=t></textarea><button id=b>go</button><p id=out></p>\
         <script>document.getElementById('b').onclick = () => setTimeout(() => \
         document.getElementById('out').textContent = 'got ' + \
         document.getElementById('t').value, 100);</script>",
    )
    .unwrap();
    let browser = Browser::start();
    let pid = browser.pid();
    let page = browser.open(&format!("file://{}", page_file.display()));
    assert_eq!(page.eval("innerWidth"), 390, "a phone-sized viewport");
    page.type_into("#t", "<b>hi</b>");
    page.click("#b");
    page.wait_text("#out", "got <b>hi</b>");
    assert_eq!(page.count("#out b"), 0);
    assert_eq!(page.dialogs(), 0);
    page.eval("setTimeout(() => alert('x'), 0)");
    wait_until(common::DEADLINE, "the alert seen", || page.dialogs() == 1);
    page.wait_js("the page runs on after the alert", "true");
    let png = dir.path().join("shot.png");
    page.screenshot(&png);
    assert!(std::fs::read(&png).unwrap().starts_with(b"\x89PNG"));

    let helpers = descendants(pid);
    assert!(!helpers.is_empty(), "Chromium's helper processes");
    drop(page);
    drop(browser);
    wait_until(
        common::DEADLINE,
        "the browser and its helpers ended",
        || {
            std::iter::once(pid)
                .chain(helpers.iter().copied())
                .all(|p| !is_alive(p))
        },
    );
}

/// Whether process `pid` runs (a zombie does not).
fn is_alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            s.rsplit_once(')')
                .map(|(_, rest)| rest.trim().starts_with('Z'))
        })
        .is_some_and(|zombie| !zombie)
}
