//! Remote hosts over a real OpenSSH server (docs/design.md#remote-hosts): `sshd` on 127.0.0.1
//! at a free port with a temporary host key, authorized key and config (no system config, no
//! `~/.ssh`); the "remote host" is a second private tmux server with its own HOME and state
//! folder, reached through a ForceCommand wrapper that gives each ssh session that world.
//! The local watcher keeps a link per host: the status line merges the remote's agents,
//! `panes`, `last` and routes in both directions cover them, an unreachable host shows `✕`
//! without holding up the local segment, a hostile document is refused, and a link dropped
//! by killing sshd comes back once sshd does.

mod common;

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use common::{agentpane_bin, wait_until, FakeAgent, TmuxServer, Watch, DEADLINE};

const CLAUDE_WITH_ANSWER: &str =
    "claude/d-kimuson-claude-code-viewer/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl";

/// A document no agentpane writes: a pane id carrying shell, a target carrying an escape.
const HOSTILE: &str = r#"{"schema":1,"agentpane":"0.1.0","panes":[{"pane_id":"%1; touch /tmp/pwned","target":"\u001b]52;c;aGk=\u0007","agent":"claude","state":"working","seen":false,"reason":null,"at":null,"resets_at":null}]}"#;

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .expect("bind a free port")
        .local_addr()
        .expect("its address")
        .port()
}

fn keygen(path: &Path) {
    let ok = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-f"])
        .arg(path)
        .status()
        .expect("run ssh-keygen")
        .success();
    assert!(ok, "ssh-keygen failed");
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

/// A private sshd and the client config that reaches it.
struct Sshd {
    dir: tempfile::TempDir,
    port: u16,
    child: Option<Child>,
}

impl Sshd {
    /// Keys, configs and the wrapper that puts a session into `remote`'s world.
    fn new(remote: &TmuxServer) -> Sshd {
        let dir = tempfile::tempdir().expect("temp dir");
        let d = dir.path();
        keygen(&d.join("host_key"));
        keygen(&d.join("id"));
        std::fs::copy(d.join("id.pub"), d.join("authorized_keys")).expect("authorized key");
        let host_pub = read(&d.join("host_key.pub"));
        let key = host_pub.split_whitespace().take(2).collect::<Vec<_>>();
        std::fs::write(
            d.join("known_hosts"),
            format!("agentpane-test-host {}\n", key.join(" ")),
        )
        .expect("known_hosts");

        // The remote world: the remote server's environment, its tmux socket as the default
        // server of a `$TMUX_TMPDIR` of its own (so agentpane and a plain `tmux attach` there
        // pick that server), agentpane on PATH.
        let bin = d.join("bin");
        std::fs::create_dir_all(&bin).expect("bin dir");
        std::os::unix::fs::symlink(agentpane_bin(), bin.join("agentpane")).expect("symlink");
        let socket = remote.tmux(&["display-message", "-p", "#{socket_path}"]);
        let mut script = String::from("#!/bin/sh\n");
        script.push_str(&format!(
            "if [ -n \"$AGENTPANE_TEST_HOSTILE\" ]; then printf '%s\\n' '{HOSTILE}'; exec cat; fi\n"
        ));
        for (k, v) in remote.env() {
            script.push_str(&format!("export {k}='{}'\n", v.display()));
        }
        let uid = String::from_utf8(Command::new("id").arg("-u").output().unwrap().stdout)
            .unwrap()
            .trim()
            .to_string();
        let tmp = d.join("tmux");
        let sockets = tmp.join(format!("tmux-{uid}"));
        std::fs::create_dir_all(&sockets).expect("tmux socket dir");
        std::fs::set_permissions(
            &sockets,
            std::os::unix::fs::PermissionsExt::from_mode(0o700),
        )
        .expect("chmod");
        std::os::unix::fs::symlink(&socket, sockets.join("default")).expect("default socket");
        script.push_str(&format!(
            "export TMUX_TMPDIR='{}'\nunset TMUX\n",
            tmp.display()
        ));
        script.push_str(&format!("export PATH='{}':\"$PATH\"\n", bin.display()));
        script.push_str("exec sh -c \"$SSH_ORIGINAL_COMMAND\"\n");
        let wrapper = d.join("remote.sh");
        std::fs::write(&wrapper, script).expect("wrapper");
        std::process::Command::new("chmod")
            .args(["755"])
            .arg(&wrapper)
            .status()
            .expect("chmod");

        let port = free_port();
        let closed = free_port();
        let user = std::env::var("USER").unwrap_or_else(|_| "root".into());
        std::fs::write(
            d.join("sshd_config"),
            format!(
                "Port {port}\nListenAddress 127.0.0.1\nHostKey {d}/host_key\n\
                 PidFile {d}/sshd.pid\nAuthorizedKeysFile {d}/authorized_keys\nStrictModes no\n\
                 PasswordAuthentication no\nKbdInteractiveAuthentication no\n\
                 PubkeyAuthentication yes\nUsePAM no\nPermitRootLogin yes\n\
                 AcceptEnv AGENTPANE_TEST_HOSTILE\nForceCommand {d}/remote.sh\nLogLevel ERROR\n",
                d = d.display()
            ),
        )
        .expect("sshd_config");
        let common = format!(
            "  User {user}\n  IdentityFile {d}/id\n  IdentitiesOnly yes\n\
             \x20 HostKeyAlias agentpane-test-host\n  UserKnownHostsFile {d}/known_hosts\n\
             \x20 GlobalKnownHostsFile /dev/null\n  StrictHostKeyChecking yes\n",
            d = d.display()
        );
        std::fs::write(
            d.join("ssh_config"),
            format!(
                // `evil` names the host another way, so it gets a connection of its own (ssh
                // shares one per resolved host, port and user).
                "Host devbox\n  HostName 127.0.0.1\n  Port {port}\n{common}\n\
                 Host evil\n  HostName localhost\n  Port {port}\n  SetEnv AGENTPANE_TEST_HOSTILE=1\n{common}\n\
                 Host deadhost\n  HostName 127.0.0.1\n  Port {closed}\n{common}"
            ),
        )
        .expect("ssh_config");
        // The privilege separation folder sshd insists on (the package's service makes it).
        let _ = std::fs::create_dir_all("/run/sshd");
        let mut sshd = Sshd {
            dir,
            port,
            child: None,
        };
        sshd.start();
        sshd
    }

    fn start(&mut self) {
        let d = self.dir.path();
        let child = Command::new("/usr/sbin/sshd")
            .args(["-D", "-e", "-f"])
            .arg(d.join("sshd_config"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start /usr/sbin/sshd (apt-get install openssh-server)");
        self.child = Some(child);
        let port = self.port;
        wait_until(DEADLINE, "sshd to listen", || {
            std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
        });
    }

    /// Kills sshd and every session it runs (its descendants, by pid), as a crash would.
    fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let mut pids = descendants(child.id());
            pids.push(child.id());
            for pid in pids {
                let _ = Command::new("kill")
                    .args(["-KILL", &pid.to_string()])
                    .status();
            }
            let _ = child.wait();
        }
    }

    fn config(&self) -> PathBuf {
        self.dir.path().join("ssh_config")
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Every process below `root` (from `/proc/*/stat`'s ppid).
fn descendants(root: u32) -> Vec<u32> {
    let mut parent_of: Vec<(u32, u32)> = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let stat = read(&entry.path().join("stat"));
        let Some(after) = stat.rsplit_once(')').map(|(_, a)| a.to_string()) else {
            continue;
        };
        if let Some(ppid) = after.split_whitespace().nth(1).and_then(|p| p.parse().ok()) {
            parent_of.push((pid, ppid));
        }
    }
    let mut out = vec![];
    let mut frontier = vec![root];
    while let Some(p) = frontier.pop() {
        for (pid, ppid) in &parent_of {
            if *ppid == p && !out.contains(pid) {
                out.push(*pid);
                frontier.push(*pid);
            }
        }
    }
    out
}

fn status(local: &TmuxServer) -> String {
    local.tmux(&["show-option", "-gqv", "@agentpane_status"])
}

fn wait_status(local: &TmuxServer, what: &str, cond: impl Fn(&str) -> bool) {
    let end = std::time::Instant::now() + Duration::from_secs(40);
    loop {
        let last = status(local);
        if cond(&last) {
            return;
        }
        if std::time::Instant::now() > end {
            panic!(
                "timed out waiting for {what}: status {last:?}, snapshot {}",
                read(&local.state_dir().join("state.json"))
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Moves the picker in `pane` down until the selected (reverse video) row holds `text`.
fn select_row(local: &TmuxServer, pane: &str, text: &str) {
    for _ in 0..12 {
        let screen = local.tmux(&["capture-pane", "-p", "-e", "-t", pane]);
        if screen
            .lines()
            .any(|l| l.contains("\x1b[7m") && l.contains(text))
        {
            return;
        }
        local.tmux(&["send-keys", "-t", pane, "j"]);
        std::thread::sleep(Duration::from_millis(300));
    }
    panic!(
        "no row with {text} could be selected: {}",
        local.tmux(&["capture-pane", "-p", "-t", pane])
    );
}

/// The local watcher's view of `host`, from its snapshot.
fn host_view(local: &TmuxServer, host: &str) -> serde_json::Value {
    let snapshot: serde_json::Value =
        serde_json::from_str(&read(&local.state_dir().join("state.json"))).expect("snapshot");
    snapshot["hosts"]
        .as_array()
        .expect("hosts in the snapshot")
        .iter()
        .find(|h| h["host"] == host)
        .unwrap_or_else(|| panic!("no {host} in {snapshot}"))
        .clone()
}

#[test]
fn remote_agents_over_a_real_sshd() {
    let remote = TmuxServer::start();
    let r_claude = remote.spawn(&FakeAgent::claude().fixture(CLAUDE_WITH_ANSWER));
    let (r_inbox, r_inbox_file) = remote.inbox_agent("rinbox");
    let mut sshd = Sshd::new(&remote);

    let runtime = tempfile::tempdir().expect("runtime dir");
    let config = sshd.config().to_string_lossy().into_owned();
    let local = TmuxServer::start_with(&[
        ("AGENTPANE_SSH_CONFIG", &config),
        ("XDG_RUNTIME_DIR", runtime.path().to_str().unwrap()),
    ]);
    let l_claude = local.spawn(&FakeAgent::claude().fixture(CLAUDE_WITH_ANSWER));
    let (l_inbox, l_inbox_file) = local.inbox_agent("linbox");
    wait_until(DEADLINE, "the remote claude's answer", || {
        remote.agentpane(&["last", &r_claude]).code == 0
    });

    // One-shot, before any watcher: `panes --json --host` asks the host over ssh.
    let run = local.agentpane(&["--host", "devbox", "panes", "--json"]);
    assert_eq!(run.code, 0, "{run:?}");
    let rows = run.json();
    let remote_rows: Vec<&serde_json::Value> = rows
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["host"] == "devbox")
        .collect();
    let ids: Vec<&str> = remote_rows
        .iter()
        .map(|r| r["pane_id"].as_str().unwrap())
        .collect();
    assert!(
        ids.contains(&r_claude.as_str()) && ids.contains(&r_inbox.as_str()),
        "{rows}"
    );
    assert!(rows
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r["host"].is_null() && r["pane_id"] == l_claude.as_str()));

    // The watcher: hosts from `@agentpane-hosts` and `--host`.
    local.tmux(&["set-option", "-g", "@agentpane-hosts", "devbox deadhost"]);
    let watch = Watch::start(&local, &["--host", "evil"]);
    // Local ●1 and the remote's ●1 merge; the refused host and the hostile one show ✕.
    wait_status(&local, "the merged segment", |s| {
        s.contains("●2") && s.contains("deadhost ✕") && s.contains("evil ✕")
    });
    // The hostile document was refused with its reason, and the watcher lives on.
    let evil = host_view(&local, "evil");
    assert_eq!(evil["link"], "down", "{evil}");
    assert!(
        evil["reason"].as_str().unwrap().contains("not valid"),
        "{evil}"
    );
    assert!(!Path::new("/tmp/pwned").exists());

    // `panes` reads the watcher's view now: no ssh per call.
    let run = local.agentpane(&["panes"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout.contains("devbox:main:"),
        "remote rows carry their host: {}",
        run.stdout
    );
    assert!(run.stderr.contains("deadhost is unreachable"), "{run:?}");

    // The picker lists the remote panes with their host.
    let picker = local.new_window(
        &format!("{} -L {} pick", agentpane_bin(), local.name),
        &local.work("proj"),
        &[],
    );
    wait_until(DEADLINE, "remote rows in the picker", || {
        let screen = local.tmux(&["capture-pane", "-p", "-t", &picker]);
        screen.contains("devbox:main:") && screen.contains("claude")
    });
    // Enter on a remote row: a new local window attached to that pane's session over ssh.
    select_row(&local, &picker, "devbox:main:");
    local.tmux(&["send-keys", "-t", &picker, "Enter"]);
    wait_until(DEADLINE, "a client attached to the remote server", || {
        !remote.tmux(&["list-clients"]).is_empty()
    });
    let windows = local.tmux(&["list-windows", "-a", "-F", "#{window_name}"]);
    assert!(windows.lines().any(|w| w == "devbox"), "{windows}");
    // Enter again from a new picker, with a person's client on the local server (a terminal
    // of the other server's): that window is reused, not a second one opened.
    remote.new_window(
        &format!("env -u TMUX tmux -L {} attach -t main", local.name),
        &remote.work("proj"),
        &[],
    );
    wait_until(DEADLINE, "a client on the local server", || {
        !local.tmux(&["list-clients"]).is_empty()
    });
    let picker = local.new_window(
        &format!("{} -L {} pick", agentpane_bin(), local.name),
        &local.work("proj"),
        &[],
    );
    select_row(&local, &picker, "devbox:main:");
    local.tmux(&["send-keys", "-t", &picker, "Enter"]);
    wait_until(DEADLINE, "the picker to close", || {
        !local
            .tmux(&["list-panes", "-a", "-F", "#{pane_id}"])
            .lines()
            .any(|p| p == picker)
    });
    let windows = local.tmux(&["list-windows", "-a", "-F", "#{window_name}"]);
    assert_eq!(
        windows.lines().filter(|w| *w == "devbox").count(),
        1,
        "{windows}"
    );

    // `last HOST:PANE` is the remote's own answer.
    let here = local.agentpane(&["last", &format!("devbox:{r_claude}")]);
    let there = remote.agentpane(&["last", &r_claude]);
    assert_eq!(here.code, 0, "{here:?}");
    assert_eq!(here.stdout, there.stdout);

    // Routes both ways: delivered on the destination's host, by its agentpane.
    let run = local.agentpane(&["route", &format!("devbox:{r_claude}"), &l_inbox, "--json"]);
    assert_eq!(run.code, 0, "{run:?}");
    let first_line = there.stdout.lines().next().unwrap().to_string();
    wait_until(DEADLINE, "the remote answer in the local inbox", || {
        read(&l_inbox_file).contains(&first_line)
    });
    let run = local.agentpane(&["route", &l_claude, &format!("devbox:{r_inbox}"), "--json"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.json()["outcome"], "delivered", "{run:?}");
    wait_until(DEADLINE, "the local answer in the remote inbox", || {
        read(&r_inbox_file).contains(&first_line)
    });
    // A remote destination that is a shell is refused there, exit 6, as a local one is.
    let r_shell = remote.shell_pane("dash -i");
    let run = local.agentpane(&["route", &l_claude, &format!("devbox:{r_shell}")]);
    assert_eq!(run.code, 6, "{run:?}");

    // sshd dies mid-stream: the host shows ✕, the local agents still count; it comes back.
    sshd.kill();
    wait_status(&local, "devbox unreachable", |s| {
        s.contains("devbox ✕") && s.contains('●')
    });
    // The one-shot commands read the watcher's view: no ssh, no wait on a dead host.
    let run = local.agentpane(&["panes"]);
    assert!(run.stderr.contains("devbox is unreachable"), "{run:?}");
    sshd.start();
    wait_until(Duration::from_secs(40), "devbox back", || {
        host_view(&local, "devbox")["link"] == "up"
    });
    wait_status(&local, "devbox back", |s| !s.contains("devbox ✕"));
    assert_eq!(watch.stop(), 0);
}
