//! A tmux server started with the plugin in its configuration (the README's setup) says
//! nothing wrong while it starts: the plugin and its watcher run before the first session
//! exists, and neither the watcher's log nor tmux's message log (`prefix + ~`) gets an
//! error for it.

mod common;
mod live;

use common::{agentpane_bin, wait_until, TmuxServer, DEADLINE};
use live::Live;

#[test]
fn a_server_start_with_the_plugin_logs_no_error() {
    let mut server = TmuxServer::unstarted(&[]);
    let conf = server.path().join("tmux.conf");
    std::fs::write(
        &conf,
        format!(
            "set -g status-right '#{{agentpane_status}} %H:%M'\n\
             set -g @agentpane-bin {}\n\
             set -g @agentpane-notify off\n\
             run-shell {}/agentpane.tmux\n",
            agentpane_bin(),
            env!("CARGO_MANIFEST_DIR")
        ),
    )
    .unwrap();
    // `tmux new-session` reads the configuration before it makes the session.
    let start = std::process::Command::new("tmux")
        .env_remove("TMUX")
        .envs(server.env())
        .args(["-u", "-L", &server.name, "-f"])
        .arg(&conf)
        .args(["new-session", "-d", "-s", "main", "-x", "160", "-y", "45"])
        .output()
        .unwrap();
    assert!(start.status.success(), "{start:?}");
    server.learn_socket();
    // The watcher's first scan with the session there: its snapshot.
    let folder = server.server_dir();
    wait_until(DEADLINE, "the watcher's first snapshot", || {
        folder.join("state.json").exists()
    });
    let log = std::fs::read_to_string(folder.join("watch.log")).unwrap();
    assert!(log.contains("watching tmux server"), "{log}");
    assert!(!log.contains("scan failed"), "{log}");
    // tmux's message log, as prefix + ~ shows it.
    let live = Live::attach(server);
    let client = live.client().unwrap();
    let messages = live.server.tmux(&["show-messages", "-t", &client]);
    assert!(
        !messages.contains(" message: "),
        "an error in prefix + ~:\n{messages}"
    );
    live.assert_clean();
}
