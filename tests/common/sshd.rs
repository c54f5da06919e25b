//! A private OpenSSH server for the remote-host tests (docs/design.md#remote-hosts): `sshd` on
//! 127.0.0.1 at a free port with a temporary host key, authorized key and configs (no system
//! config, no `~/.ssh`), whose ForceCommand wrapper puts every session into the world of a
//! second private tmux server (its HOME, state folder and tmux socket, agentpane on PATH).
//! Hosts in its client config: `devbox` (that world), `evil` (a hostile agentpane's
//! document), `flood` (documents as fast as the connection takes them), `deadhost` (a port
//! nobody listens on).

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use super::{agentpane_bin, wait_until, TmuxServer, DEADLINE};

/// A document no agentpane writes: a pane id carrying shell, a target carrying an escape,
/// beside two panes whose only oddity is model text (a TAB, an escape) in their reason.
pub const HOSTILE: &str = r#"{"schema":2,"agentpane":"0.1.0","panes":[{"pane_id":"%1; touch /tmp/pwned","target":"\u001b]52;c;aGk=\u0007","agent":"claude","state":"working","seen":false,"reason":null,"at":null,"resets_at":null},{"pane_id":"%1","target":"main:1.0","agent":"claude","state":"working","seen":false,"reason":"background agent:\tfix the\u001b[2J tests","at":null,"resets_at":null},{"pane_id":"%2","target":"main:2.0","agent":"codex","state":"idle","seen":false,"reason":null,"at":null,"resets_at":null}]}"#;

/// Two documents that differ, which host `flood` repeats as fast as it can.
fn flood_docs() -> String {
    let doc = |state: &str| {
        format!(
            r#"{{"schema":2,"agentpane":"0.1.0","panes":[{{"pane_id":"%1","target":"main:1.0","agent":"claude","state":"{state}","seen":false,"reason":null,"at":null,"resets_at":null}}]}}"#
        )
    };
    format!("{}\n{}", doc("working"), doc("idle"))
}

pub fn free_port() -> u16 {
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

pub fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

/// `pane` in the document of `host` that `local`'s watcher last had (its snapshot).
pub fn remote_pane(local: &TmuxServer, host: &str, pane: &str) -> Option<serde_json::Value> {
    let snapshot: serde_json::Value =
        serde_json::from_str(&read(&local.server_dir().join("state.json"))).ok()?;
    snapshot["hosts"]
        .as_array()?
        .iter()
        .find(|h| h["host"] == host)?["doc"]["panes"]
        .as_array()?
        .iter()
        .find(|p| p["pane_id"] == pane)
        .cloned()
}

/// Deliveries into `dst` that `server`'s journal records.
pub fn delivered_to(server: &TmuxServer, dst: &str) -> usize {
    read(&server.state_dir().join("journal.jsonl"))
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|e| e["outcome"] == "delivered" && e["dst"] == dst)
        .count()
}

/// The shell lines that put a session into `world`: its environment, and its tmux socket as
/// the default server of a `$TMUX_TMPDIR` made at `tmp`.
fn world_exports(world: &TmuxServer, tmp: &Path) -> String {
    let mut out = String::new();
    for (k, v) in world.env() {
        out.push_str(&format!("export {k}='{}'\n", v.display()));
    }
    let uid = String::from_utf8(Command::new("id").arg("-u").output().unwrap().stdout)
        .unwrap()
        .trim()
        .to_string();
    let sockets = tmp.join(format!("tmux-{uid}"));
    std::fs::create_dir_all(&sockets).expect("tmux socket dir");
    std::fs::set_permissions(
        &sockets,
        std::os::unix::fs::PermissionsExt::from_mode(0o700),
    )
    .expect("chmod");
    let socket = world.tmux(&["display-message", "-p", "#{socket_path}"]);
    std::os::unix::fs::symlink(socket.trim(), sockets.join("default")).expect("default socket");
    out.push_str(&format!(
        "export TMUX_TMPDIR='{}'\nunset TMUX\n",
        tmp.display()
    ));
    out
}

/// A private sshd and the client config that reaches it.
pub struct Sshd {
    dir: tempfile::TempDir,
    port: u16,
    child: Option<Child>,
}

impl Sshd {
    /// Keys, configs and the wrapper that puts a session into `remote`'s world (host
    /// `devbox`).
    pub fn new(remote: &TmuxServer) -> Sshd {
        Sshd::with_hosts(remote, &[])
    }

    /// [`Sshd::new`] with more live hosts: each `(name, world)` of `others` is reached on a
    /// port of its own (so ssh keeps it a connection of its own) and gets that world.
    pub fn with_hosts(remote: &TmuxServer, others: &[(&str, &TmuxServer)]) -> Sshd {
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
        // pick that server), agentpane on PATH. Another host's world is chosen by the port
        // the session came in on (the last word of `$SSH_CONNECTION`).
        let bin = d.join("bin");
        std::fs::create_dir_all(&bin).expect("bin dir");
        std::os::unix::fs::symlink(agentpane_bin(), bin.join("agentpane")).expect("symlink");
        let mut script = String::from("#!/bin/sh\n");
        std::fs::write(d.join("flood.jsonl"), flood_docs()).expect("flood documents");
        script.push_str(&format!(
            "case \"$AGENTPANE_TEST_DOC\" in\n\
             hostile) printf '%s\\n' '{HOSTILE}'; exec cat;;\n\
             flood) exec yes \"$(cat '{}/flood.jsonl')\";;\n\
             esac\n",
            d.display()
        ));
        let extra: Vec<(String, u16)> = others
            .iter()
            .map(|(name, _)| (name.to_string(), free_port()))
            .collect();
        script.push_str("case \"${SSH_CONNECTION##* }\" in\n");
        for (i, ((_, world), (_, port))) in others.iter().zip(&extra).enumerate() {
            script.push_str(&format!(
                "{port})\n{};;\n",
                world_exports(world, &d.join(format!("tmux-{}", i + 1)))
            ));
        }
        script.push_str(&format!(
            "*)\n{};;\nesac\n",
            world_exports(remote, &d.join("tmux"))
        ));
        script.push_str(&format!("export PATH='{}':\"$PATH\"\n", bin.display()));
        // Every remote command line as sshd received it, for the tests that check what
        // crosses ([`Sshd::commands`]).
        script.push_str(&format!(
            "printf '%s\\n' \"$SSH_ORIGINAL_COMMAND\" >> '{}/commands.log'\n",
            d.display()
        ));
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
                "Port {port}\n{extra_ports}ListenAddress 127.0.0.1\nHostKey {d}/host_key\n\
                 PidFile {d}/sshd.pid\nAuthorizedKeysFile {d}/authorized_keys\nStrictModes no\n\
                 PasswordAuthentication no\nKbdInteractiveAuthentication no\n\
                 PubkeyAuthentication yes\nUsePAM no\nPermitRootLogin yes\n\
                 AcceptEnv AGENTPANE_TEST_DOC\nForceCommand {d}/remote.sh\nLogLevel ERROR\n\
                 SetEnv SHLVL=1\n",
                d = d.display(),
                extra_ports = extra
                    .iter()
                    .map(|(_, p)| format!("Port {p}\n"))
                    .collect::<String>(),
            ),
        )
        .expect("sshd_config");
        let common = format!(
            "  User {user}\n  IdentityFile {d}/id\n  IdentitiesOnly yes\n\
             \x20 HostKeyAlias agentpane-test-host\n  UserKnownHostsFile {d}/known_hosts\n\
             \x20 GlobalKnownHostsFile /dev/null\n  StrictHostKeyChecking yes\n",
            d = d.display()
        );
        let other_hosts: String = extra
            .iter()
            .map(|(name, p)| format!("\nHost {name}\n  HostName 127.0.0.1\n  Port {p}\n{common}"))
            .collect();
        std::fs::write(
            d.join("ssh_config"),
            format!(
                // Each host name gets a connection of its own (agentpane's control socket is
                // per ssh config and host name), so `evil` and `flood` never share devbox's.
                "Host devbox\n  HostName 127.0.0.1\n  Port {port}\n{common}\n\
                 Host evil\n  HostName localhost\n  Port {port}\n  SetEnv AGENTPANE_TEST_DOC=hostile\n{common}\n\
                 Host flood\n  HostName 127.0.0.1\n  Port {port}\n  SetEnv AGENTPANE_TEST_DOC=flood\n{common}\n\
                 Host deadhost\n  HostName 127.0.0.1\n  Port {closed}\n{common}{other_hosts}"
            ),
        )
        .expect("ssh_config");
        // `SetEnv SHLVL=1`: sshd runs the forced command with the user's login shell, and
        // bash then sources the user's ~/.bashrc unless it is a nested shell. This machine's
        // bashrc runs `pyenv init`, whose rehash lock, left behind by a session `kill` ended,
        // made every later session wait a minute; a test host's shell rc is not the test's.
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

    pub fn start(&mut self) {
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
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let mut pids = super::descendants(child.id());
            pids.push(child.id());
            for pid in pids {
                let _ = Command::new("kill")
                    .args(["-KILL", &pid.to_string()])
                    .status();
            }
            let _ = child.wait();
        }
    }

    /// The local side: a private tmux server whose runs reach the hosts through this sshd's
    /// client config (`$AGENTPANE_SSH_CONFIG`), the shared connections' sockets in a runtime
    /// folder of this sshd's temporary folder.
    pub fn local_server(&self) -> TmuxServer {
        let runtime = self.dir.path().join("run");
        std::fs::create_dir_all(&runtime).expect("runtime dir");
        let config = self.config().to_string_lossy().into_owned();
        TmuxServer::start_with(&[
            ("AGENTPANE_SSH_CONFIG", &config),
            ("XDG_RUNTIME_DIR", runtime.to_str().expect("utf-8 path")),
        ])
    }

    /// Every remote command line sshd received so far, one a line.
    pub fn commands(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("commands.log")).unwrap_or_default()
    }

    pub fn config(&self) -> PathBuf {
        self.dir.path().join("ssh_config")
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        self.kill();
    }
}
