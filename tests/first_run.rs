//! A new user's first run: the plugin cloned where TPM puts it (a `git clone` of this
//! repository), loaded in a tmux server whose PATH has no `agentpane`. The status segment
//! says so until it is fixed, an attaching client is told how (and keeps it in
//! `show-messages`); with `cargo` on PATH the plugin builds its own checkout in the
//! background and the status line works afterwards without a tmux restart; after an update
//! it rebuilds and the new binary's watcher takes over.
//!
//! `cargo` here is a fake: a script that records its call, waits for the test's go (so the
//! "building" state is seen for sure), and "builds" by copying the binary under test into
//! the checkout's `target/release/agentpane`.

mod common;
mod live;

use std::path::{Path, PathBuf};

use common::install::{assert_bare_system_path, cargo_calls, clone_to, fake_cargo, SYSTEM_PATH};
use common::{agentpane_bin, wait_until, FakeAgent, TmuxServer, CLAUDE_ANSWER, DEADLINE};
use live::Live;

/// A server whose PATH is `<own bin>:SYSTEM_PATH`, set up as the README says, with a fake
/// Claude Code that has answered (segment `●1`); the plugin is not loaded yet.
fn server_without_agentpane(tools: &Path) -> TmuxServer {
    assert_bare_system_path();
    let path = format!("{}:{SYSTEM_PATH}", tools.display());
    let server = TmuxServer::start_with(&[("PATH", &path)]);
    for (k, v) in [
        ("status-right", "#{agentpane_status} %H:%M"),
        ("window-status-format", "#I:#W#{agentpane_window_status}"),
        (
            "window-status-current-format",
            "#I:#W#{agentpane_window_status}",
        ),
        ("@agentpane-notify", "off"),
    ] {
        server.tmux(&["set", "-g", k, v]);
    }
    server.spawn(&FakeAgent::claude().fixture(CLAUDE_ANSWER));
    server
}

/// A temporary world: a bin folder for the server's PATH and a fresh clone; (world, bin,
/// clone).
fn world() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let tools = tmp.path().join("bin");
    std::fs::create_dir_all(&tools).unwrap();
    let clone = clone_to(&tmp.path().join("plugins/agentpane"));
    (tmp, tools, clone)
}

fn option(server: &TmuxServer, name: &str) -> String {
    server.tmux(&["show", "-gqv", name])
}

/// What the status line's right side renders now.
fn status_right(server: &TmuxServer) -> String {
    server.tmux(&["display-message", "-p", "#{E:status-right}"])
}

/// The plugin as TPM runs it: the `*.tmux` file at the clone's top.
fn run_plugin(server: &TmuxServer, clone: &Path) {
    server.tmux(&["run-shell", clone.join("agentpane.tmux").to_str().unwrap()]);
}

#[test]
fn a_fresh_clone_builds_itself_and_the_status_line_works_without_a_restart() {
    let (_world, tools, clone) = world();
    fake_cargo(&tools);
    let server = server_without_agentpane(&tools);

    // Loaded while no client is attached, as at tmux's start.
    run_plugin(&server, &clone);
    assert_eq!(
        option(&server, "status-right"),
        "#{@agentpane_status} %H:%M"
    );
    assert!(
        status_right(&server).starts_with("agentpane: building… "),
        "{}",
        status_right(&server)
    );
    wait_until(DEADLINE, "the plugin to call cargo", || {
        !cargo_calls(&tools).is_empty()
    });
    assert_eq!(
        cargo_calls(&tools),
        [format!("{} build --release", clone.display())]
    );

    // The person attaches: the status line and a message say what is going on.
    let live = Live::attach_until(server, "the message on attach", |s| {
        s.contains("agentpane: no binary yet; building it with cargo in the background")
    });
    let client = live.client().unwrap();
    let messages = live.server.tmux(&["show-messages", "-t", &client]);
    assert!(messages.contains("building"), "{messages}");
    // A key press ends the message (and goes to the shell): the status line shows the hint.
    live.keys(&["Escape"]);
    live.wait_screen("the building hint in the status line", |s| {
        s.lines()
            .last()
            .is_some_and(|l| l.contains("agentpane: building…"))
    });

    // The build ends: the plugin runs again, the watcher starts, the segment shows.
    std::fs::write(tools.join("go"), b"").unwrap();
    live.wait_screen("the agentpane segment", |s| {
        s.lines()
            .last()
            .is_some_and(|l| l.contains("●1") && !l.contains("agentpane:"))
    });
    let built = clone.join("target/release/agentpane");
    assert_eq!(
        option(&live.server, "@agentpane_bin"),
        built.to_str().unwrap()
    );
    assert_eq!(option(&live.server, "@agentpane_build"), "");
    let log = std::fs::read_to_string(live.server.state_dir().join("build.log")).unwrap();
    assert!(
        log.contains("(fake cargo)") && log.contains("built"),
        "{log}"
    );
    let first_watcher = live.server.watcher_pid().expect("a watcher");
    assert!(
        !live
            .server
            .tmux(&["show-hooks", "-g"])
            .contains("client-session-changed[4243]"),
        "the attach message is gone once fixed"
    );
    // And the person is told the build is done, and where the binary is (once the plugin
    // that started the watcher is done).
    let done = format!(
        "message: agentpane: built {}; prefix + H checks the setup",
        built.display()
    );
    wait_until(DEADLINE, &done, || {
        live.server
            .tmux(&["show-messages", "-t", &client])
            .contains(&done)
    });

    // Run again with nothing changed (prefix + I): no build.
    // (Without the go, a build started by mistake would stay `building`.)
    std::fs::remove_file(tools.join("go")).unwrap();
    run_plugin(&live.server, &clone);
    assert_eq!(
        option(&live.server, "@agentpane_build"),
        "",
        "no build started"
    );
    assert_eq!(cargo_calls(&tools).len(), 1);
    std::fs::write(tools.join("go"), b"").unwrap();

    // An update (sources newer than the binary; here, a binary dated an hour back): a
    // rebuild, and the new binary's watcher takes over from the old one's.
    let earlier = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    std::fs::File::open(&built)
        .unwrap()
        .set_modified(earlier)
        .unwrap();
    run_plugin(&live.server, &clone);
    wait_until(DEADLINE, "the rebuild", || cargo_calls(&tools).len() == 2);
    wait_until(DEADLINE, "the new binary's watcher", || {
        live.server
            .watcher_pid()
            .is_some_and(|pid| pid != first_watcher)
    });
    wait_until(DEADLINE, "the segment again", || {
        option(&live.server, "@agentpane_status") == "●1"
    });
    live.assert_clean();
}

#[test]
fn without_cargo_the_hint_names_the_ways_and_stays_until_fixed() {
    let (_world, tools, clone) = world();
    let server = server_without_agentpane(&tools);
    run_plugin(&server, &clone);
    let hint = "agentpane: no binary — prefix + H";
    assert_eq!(option(&server, "@agentpane_status"), hint);
    assert!(status_right(&server).starts_with(hint));

    // The person attaches: one message, whole on the screen (160 columns), says where to
    // look, and stays in show-messages; a key press ends it and the status line shows the
    // hint.
    let message = "agentpane: no agentpane binary and no cargo on the tmux server's PATH; \
                   prefix + H says what to do";
    let live = Live::attach_until(server, "the message on attach", |s| s.contains(message));
    let client = live.client().unwrap();
    let messages = live.server.tmux(&["show-messages", "-t", &client]);
    assert_eq!(
        messages.matches(" message: agentpane").count(),
        1,
        "{messages}"
    );
    live.keys(&["Escape"]);
    live.wait_screen("the hint in the status line", |s| {
        s.lines().last().is_some_and(|l| l.contains(hint))
    });
    // prefix + H names both ways to get a binary, in full.
    live.keys(&["C-b", "H"]);
    let view = live.wait_screen("the ways in the pane", |s| s.contains("@agentpane-bin"));
    for way in ["https://rustup.rs", "prefix + I", "cargo install --git"] {
        assert!(view.contains(way), "{way} not in:\n{view}");
    }
    live.keys(&["q"]);

    // Sourcing the config again (prefix + I) says it again, and changes nothing.
    run_plugin(&live.server, &clone);
    assert_eq!(option(&live.server, "@agentpane_status"), hint);
    live.wait_screen("the message again", |s| s.contains(message));
    live.keys(&["Escape"]);

    // Fixed: a binary named by @agentpane-bin. The hint goes, the segment comes.
    live.server
        .tmux(&["set", "-g", "@agentpane-bin", agentpane_bin()]);
    run_plugin(&live.server, &clone);
    live.wait_screen("the agentpane segment", |s| {
        s.lines()
            .last()
            .is_some_and(|l| l.contains("●1") && !l.contains("agentpane:"))
    });
    assert_eq!(option(&live.server, "@agentpane_hint"), "");
    live.assert_clean();
}

#[test]
fn at_tmux_start_the_hint_reaches_the_client_that_starts_the_server() {
    // What TPM does: the plugin runs while the server starts, before any client is attached;
    // the terminal that ran `tmux` is told once its session exists.
    let (world, tools, clone) = world();
    let path = format!("{}:{SYSTEM_PATH}", tools.display());
    let server = TmuxServer::unstarted(&[("PATH", &path)]);
    let conf = world.path().join("tmux.conf");
    std::fs::write(
        &conf,
        format!(
            "set -g status-right '#{{agentpane_status}} %H:%M'\nrun-shell {}\n",
            clone.join("agentpane.tmux").display()
        ),
    )
    .unwrap();
    let live = Live::start_by_config(server, &conf, "the message at start", |s| {
        s.contains("no agentpane binary and no cargo")
    });
    live.keys(&["Escape"]);
    live.wait_screen("the hint in the status line", |s| {
        s.lines()
            .last()
            .is_some_and(|l| l.contains("agentpane: no binary — prefix + H"))
    });
    live.assert_clean();
}
