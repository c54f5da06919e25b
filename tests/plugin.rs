//! The TPM plugin (`agentpane.tmux` → `tmux/agentpane.tmux`) on a private server: it rewrites
//! the placeholders into the watcher's options (or `#()` calls without the watcher), starts one
//! watcher, and binds the jump, route and last-answer keys.

mod common;

use common::{wait_until, TmuxServer, DEADLINE};

fn plugin() -> String {
    concat!(env!("CARGO_MANIFEST_DIR"), "/agentpane.tmux").to_string()
}

fn setup(server: &TmuxServer, watch: &str) {
    server.tmux(&["set", "-g", "@agentpane-bin", common::agentpane_bin()]);
    server.tmux(&["set", "-g", "@agentpane-watch", watch]);
    server.tmux(&["set", "-g", "status-right", "#{agentpane_status} %H:%M"]);
    server.tmux(&[
        "set",
        "-g",
        "window-status-format",
        "#I:#W#{agentpane_window_status}",
    ]);
    server.tmux(&["run-shell", &plugin()]);
}

#[test]
fn plugin_interpolates_options_starts_one_watcher_and_binds_keys() {
    let server = TmuxServer::start();
    setup(&server, "on");
    assert_eq!(
        server.tmux(&["show", "-gv", "status-right"]),
        "#{@agentpane_status} %H:%M"
    );
    assert!(server
        .tmux(&["show", "-gv", "window-status-format"])
        .contains("#{@agentpane_window_status}"));
    let folder = server.server_dir();
    wait_until(DEADLINE, "the watcher's lock", || {
        std::fs::read_dir(&folder)
            .map(|d| {
                d.flatten()
                    .any(|e| e.file_name().to_string_lossy().contains("watch"))
            })
            .unwrap_or(false)
    });
    // Sourcing the plugin again starts no second watcher (the lock) and changes nothing.
    server.tmux(&["run-shell", &plugin()]);
    assert_eq!(
        server.tmux(&["show", "-gv", "status-right"]),
        "#{@agentpane_status} %H:%M"
    );
    let keys = server.tmux(&["list-keys", "-T", "prefix"]);
    for (key, what) in [
        (" A ", "jump"),
        (" R ", "route-menu"),
        (" P ", "pick --popup"),
        (" S ", "pick --popup"),
    ] {
        assert!(
            keys.lines().any(|l| l.contains(key) && l.contains(what)),
            "{key} → {what} missing in:\n{keys}"
        );
    }
}

#[test]
fn plugin_without_watcher_uses_status_commands() {
    let server = TmuxServer::start();
    setup(&server, "off");
    let right = server.tmux(&["show", "-gv", "status-right"]);
    assert!(
        right.starts_with("#(") && right.contains(" status"),
        "{right}"
    );
    let window = server.tmux(&["show", "-gv", "window-status-format"]);
    assert!(
        window.contains("pane-status --window #{window_id}"),
        "{window}"
    );
}

#[test]
fn keys_can_be_turned_off() {
    let server = TmuxServer::start();
    server.tmux(&["set", "-g", "@agentpane-route-key", "off"]);
    server.tmux(&["set", "-g", "@agentpane-last-key", "off"]);
    server.tmux(&["set", "-g", "@agentpane-picker-key", "off"]);
    setup(&server, "off");
    let keys = server.tmux(&["list-keys", "-T", "prefix"]);
    assert!(!keys.contains("route-menu"), "{keys}");
    assert!(!keys.contains(" pick "), "{keys}");
    assert!(keys.contains(" jump "), "the jump key stays: {keys}");
}

#[test]
fn the_answer_key_is_off_unless_chosen() {
    let server = TmuxServer::start();
    setup(&server, "off");
    let keys = server.tmux(&["list-keys", "-T", "prefix"]);
    assert!(!keys.contains("--decide"), "{keys}");
    let server = TmuxServer::start();
    server.tmux(&["set", "-g", "@agentpane-answer-key", "Y"]);
    setup(&server, "off");
    let keys = server.tmux(&["list-keys", "-T", "prefix"]);
    let line = keys
        .lines()
        .find(|l| l.contains("--decide"))
        .unwrap_or_else(|| panic!("no answer key: {keys}"));
    assert!(line.contains(" Y "), "{line}");
}

#[test]
fn focus_and_pane_hooks_wake_the_watcher() {
    let server = TmuxServer::start();
    setup(&server, "on");
    // Pane hooks are window options in tmux 3.3 (`-w`).
    let hooks = server.tmux(&["show-hooks", "-g"]) + "\n" + &server.tmux(&["show-hooks", "-gw"]);
    for hook in [
        "after-select-pane[4242]",
        "session-window-changed[4242]",
        "client-session-changed[4242]",
        "client-attached[4242]",
        "client-detached[4242]",
        "after-new-window[4242]",
        "after-split-window[4242]",
        "after-kill-pane[4242]",
        "pane-exited[4242]",
        "window-unlinked[4242]",
        "session-closed[4242]",
    ] {
        assert!(
            hooks
                .lines()
                .any(|l| l.starts_with(hook) && l.contains(" nudge")),
            "{hook} missing in:\n{hooks}"
        );
    }
    // Opening and switching panes runs the hooks, which touch the nudge file the watcher
    // watches.
    let nudge = server.state_dir().join("nudge");
    let _ = std::fs::remove_file(&nudge);
    server.tmux(&["split-window", "-d", "-t", "main:"]);
    wait_until(DEADLINE, "the nudge of a new pane", || nudge.exists());
    std::fs::remove_file(&nudge).unwrap();
    server.tmux(&["select-pane", "-t", "main:0.1"]);
    wait_until(DEADLINE, "the nudge", || nudge.exists());
}

#[test]
fn nudge_touches_the_state_folder_quietly() {
    let server = TmuxServer::start();
    let run = server.agentpane(&["nudge"]);
    assert_eq!((run.code, run.stdout.as_str()), (0, ""));
    assert!(server.state_dir().join("nudge").exists());
}
