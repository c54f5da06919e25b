//! Two tmux servers beside each other with one state folder (docs/design.md#one-folder-per-server):
//! what one server's watcher keeps (its snapshot, alert memory, log) is never read as the
//! other's, though pane ids such as `%1` repeat on both.

mod common;

use std::path::PathBuf;

use common::sshd::free_port;
use common::{wait_until, FakeAgent, TmuxServer, Watch, DEADLINE};

const ENDS_TURN: &str = "claude/kvsankar-agent-history/session-01.jsonl";

/// A server whose runs use the state folder `state` (another server's, or its own when
/// `None`) and an ssh config where `gpu1` and `gpu2` are a port nobody listens on.
fn server_sharing(state: Option<PathBuf>, ssh_config: &std::path::Path) -> TmuxServer {
    let state = state.map(|s| s.to_string_lossy().into_owned());
    let config = ssh_config.to_string_lossy().into_owned();
    let runtime = ssh_config.with_extension("run");
    std::fs::create_dir_all(&runtime).unwrap();
    let runtime = runtime.to_string_lossy().into_owned();
    let mut extra = vec![
        ("AGENTPANE_SSH_CONFIG", config.as_str()),
        ("XDG_RUNTIME_DIR", runtime.as_str()),
    ];
    if let Some(s) = &state {
        extra.push(("AGENTPANE_STATE_DIR", s.as_str()));
        extra.push(("XDG_STATE_HOME", s.as_str()));
    }
    TmuxServer::start_with(&extra)
}

/// An ssh config in `dir` naming `gpu1` and `gpu2`, both refused at once.
fn dead_hosts(dir: &std::path::Path) -> PathBuf {
    let path = dir.join("ssh_config");
    std::fs::write(
        &path,
        format!(
            "Host gpu1 gpu2\n  HostName 127.0.0.1\n  Port {}\n  BatchMode yes\n  \
             StrictHostKeyChecking no\n  UserKnownHostsFile /dev/null\n",
            free_port()
        ),
    )
    .unwrap();
    path
}

fn status(server: &TmuxServer) -> String {
    let run = server.agentpane(&["status"]);
    assert_eq!(run.code, 0, "{run:?}");
    run.stdout.trim().to_string()
}

#[test]
fn each_server_with_a_watcher_shows_its_own_status() {
    let tmp = tempfile::tempdir().unwrap();
    let ssh = dead_hosts(tmp.path());
    let a = server_sharing(None, &ssh);
    let b = server_sharing(Some(a.state_dir()), &ssh);
    // `a` has an agent whose turn ended; `b` none. Each watcher keeps its own host.
    a.spawn(&FakeAgent::claude().fixture(ENDS_TURN));
    let watch_b = Watch::start(&b, &["--host", "gpu2"]);
    wait_until(DEADLINE, "b's host down", || status(&b) == "gpu2 ✕");
    let watch_a = Watch::start(&a, &["--host", "gpu1"]);
    wait_until(DEADLINE, "a's agent and host", || {
        let s = status(&a);
        s.contains("●1") && s.contains("gpu1 ✕")
    });
    // `a`'s watcher wrote last: `b` still shows only its own.
    for _ in 0..5 {
        let (sa, sb) = (status(&a), status(&b));
        assert!(!sa.contains("gpu2"), "a shows b's host: {sa:?}");
        assert_eq!(sb, "gpu2 ✕", "b shows a's agent or host");
    }
    drop((watch_a, watch_b));
}

#[test]
fn a_server_without_a_watcher_never_shows_another_servers_snapshot() {
    let tmp = tempfile::tempdir().unwrap();
    let ssh = dead_hosts(tmp.path());
    let a = server_sharing(None, &ssh);
    let b = server_sharing(Some(a.state_dir()), &ssh);
    a.spawn(&FakeAgent::claude().fixture(ENDS_TURN));
    let _watch = Watch::start(&a, &["--host", "gpu1"]);
    wait_until(DEADLINE, "a's agent and host", || {
        let s = status(&a);
        s.contains("●1") && s.contains("gpu1 ✕")
    });
    assert_eq!(status(&b), "", "b has neither agents nor a watcher");
    // Nor a server that does not exist.
    let out = common::agentpane_with_env(&b.env())
        .args(["-L", &format!("{}-none", a.name), "status"])
        .output()
        .unwrap();
    assert_eq!(
        (out.status.code(), out.stdout.as_slice()),
        (Some(0), &b""[..]),
        "{out:?}"
    );
}

/// The alert memory of server `s`: its keys.
fn alert_keys(s: &TmuxServer) -> serde_json::Map<String, serde_json::Value> {
    let path = s.server_dir().join("alerts.json");
    let data = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let v: serde_json::Value = serde_json::from_slice(&data).unwrap();
    v["keys"].as_object().cloned().unwrap_or_default()
}

#[test]
fn the_same_pane_id_on_two_servers_keeps_separate_alert_memory() {
    let tmp = tempfile::tempdir().unwrap();
    let ssh = dead_hosts(tmp.path());
    let a = server_sharing(None, &ssh);
    let b = server_sharing(Some(a.state_dir()), &ssh);
    let pa = a.spawn(&FakeAgent::claude().fixture(ENDS_TURN).start_lines(3));
    let pb = b.spawn(&FakeAgent::claude().fixture(ENDS_TURN).start_lines(3));
    assert_eq!(pa, pb, "the same pane id on both servers");
    let watch_a = Watch::start(&a, &[]);
    let watch_b = Watch::start(&b, &[]);
    // Each watcher has scanned (published its segment) before the turns end.
    for s in [&a, &b] {
        wait_until(DEADLINE, "the watcher's segment", || {
            !s.tmux(&["show-option", "-gqv", "@agentpane_status"])
                .is_empty()
        });
    }
    a.send_line(&pa, "step");
    b.send_line(&pb, "step");
    wait_until(DEADLINE, "an alert on each server", || {
        [(&a, &pa), (&b, &pb)]
            .iter()
            .all(|(s, p)| s.tmux(&["show-options", "-wqv", "-t", p, "@agentpane_alert"]) == "1")
    });
    // A look at the pane on `a` acknowledges `a`'s turn only.
    let attach = format!("env -u TMUX tmux -L {} -f /dev/null attach -t main", a.name);
    a.tmux(&["new-session", "-d", "-s", "viewer", &attach]);
    a.tmux(&["select-window", "-t", &pa]);
    wait_until(DEADLINE, "a's acknowledgement", || {
        a.tmux(&["show-option", "-pqv", "-t", &pa, "@agentpane_pane_status"]) == "seen"
    });
    wait_until(DEADLINE, "a's memory", || {
        a.server_dir().join("alerts.json").exists()
            && alert_keys(&a).values().any(|r| r["seen"] == true)
    });
    wait_until(DEADLINE, "b's memory", || {
        b.server_dir().join("alerts.json").exists()
    });
    let (ka, kb) = (alert_keys(&a), alert_keys(&b));
    assert!(
        kb.values().all(|r| r["seen"] != true),
        "b's turn was never looked at: {kb:?}"
    );
    assert!(
        ka.keys().all(|k| !kb.contains_key(k)),
        "one memory for two servers: {ka:?} / {kb:?}"
    );
    assert_ne!(
        b.tmux(&["show-option", "-pqv", "-t", &pb, "@agentpane_pane_status"]),
        "seen"
    );
    assert_eq!((watch_a.alerts().len(), watch_b.alerts().len()), (1, 1));
    drop((watch_a, watch_b));
}

#[test]
fn a_watcher_of_an_older_agentpane_still_serves_its_server() {
    let server = TmuxServer::start();
    let socket = server.tmux(&["display-message", "-p", "#{socket_path}"]);
    let old = agentpane::watch::lock::legacy_lock_path(&server.state_dir(), &socket);
    let held = agentpane::paths::FileLock::acquire(&old).unwrap();
    let run = server.agentpane(&["watch", "--exit-after", "5", "--no-notify"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stderr.contains("already running"), "{run:?}");
    assert!(!server.server_dir().join("state.json").exists());
    drop(held);
}
