//! A real attached tmux client for tests: a nested tmux. The server under test is a private
//! [`TmuxServer`] with the plugin loaded as the README says; an outer private server
//! (`tmux -L agentpane-outer-… -f /dev/null`) runs `tmux attach` to it in its only pane. Keys
//! go into the OUTER pane (so the inner client reads them as a person's typing: the prefix,
//! then the bound key) and the OUTER pane is captured: exactly what the person sees, status
//! line, menus and popups included. Both servers are killed on drop.
//!
//! ```ignore
//! let live = Live::start(&[]);
//! live.keys(&["C-b", "A"]);
//! live.wait_screen("the message", |s| s.contains("no agent needs you"));
//! live.assert_clean();
//! ```

#![allow(dead_code)]

use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use crate::common::{agentpane_bin, wait_until, TmuxServer, DEADLINE};

/// The outer server; killed (and its socket removed) on drop.
struct Outer {
    name: String,
    socket: Option<PathBuf>,
}

impl Outer {
    fn command(&self, server: &TmuxServer) -> Command {
        let mut cmd = Command::new("tmux");
        cmd.env_remove("TMUX").env_remove("TMUX_PANE");
        for (k, v) in server.env() {
            cmd.env(k, v);
        }
        cmd.args(["-u", "-L", &self.name, "-f", "/dev/null"]);
        cmd
    }
}

impl Outer {
    /// The [`Live`] of this terminal, once its client is in `server` and `first` holds.
    fn finish(self, server: TmuxServer, what: &str, first: impl FnMut(&str) -> bool) -> Live {
        let live = Live {
            outer: self,
            server,
        };
        wait_until(DEADLINE, "the client to attach", || live.client().is_some());
        live.wait_screen(what, first);
        live
    }
}

impl Drop for Outer {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.name, "-f", "/dev/null", "kill-server"])
            .output();
        if let Some(socket) = &self.socket {
            let _ = std::fs::remove_file(socket);
        }
    }
}

/// A server under test with a real client attached to it.
pub struct Live {
    // Dropped first: the client goes before its server.
    outer: Outer,
    pub server: TmuxServer,
}

/// The README's setup lines, then `run-shell` of the plugin file (the binary under test named
/// by `@agentpane-bin`, the option the plugin reads).
fn load_plugin(server: &TmuxServer, options: &[(&str, &str)]) {
    for (k, v) in [
        ("status-right", "#{agentpane_status} %H:%M"),
        ("window-status-format", "#I:#W#{agentpane_window_status}"),
        (
            "window-status-current-format",
            "#I:#W#{agentpane_window_status}",
        ),
        ("@agentpane-bin", agentpane_bin()),
        ("@agentpane-notify", "off"),
        // A status-line message stays long enough to be read on a loaded machine.
        ("display-time", "6000"),
    ] {
        server.tmux(&["set", "-g", k, v]);
    }
    for (k, v) in options {
        server.tmux(&["set", "-g", k, v]);
    }
    let plugin = concat!(env!("CARGO_MANIFEST_DIR"), "/agentpane.tmux");
    server.tmux(&["run-shell", plugin]);
}

/// The command line of a client attaching to session `main` of `server`.
fn attach_main(server: &TmuxServer) -> String {
    format!(
        "env -u TMUX -u TMUX_PANE tmux -u -L {} attach -t main",
        server.name
    )
}

impl Live {
    /// A fresh server with the plugin loaded (extra `@agentpane-*` options first) and a
    /// 160×45 client attached to session `main`.
    pub fn start(options: &[(&str, &str)]) -> Live {
        let server = TmuxServer::start();
        load_plugin(&server, options);
        Live::attach(server)
    }

    /// [`start`](Self::start) with a client of `size` (columns, lines).
    pub fn start_sized(options: &[(&str, &str)], size: (u32, u32)) -> Live {
        let server = TmuxServer::start();
        load_plugin(&server, options);
        Live::open_sized(&server, &attach_main(&server), size).finish(
            server,
            "the status line",
            |s| s.contains("0:"),
        )
    }

    /// A 160×45 client attached to session `main` of `server`, set up as the test likes,
    /// once its status line is drawn.
    pub fn attach(server: TmuxServer) -> Live {
        Live::attach_until(server, "the status line", |s| s.contains("0:"))
    }

    /// [`attach`](Self::attach), waiting for the first screen that passes `first` (e.g. a
    /// message shown on attach, which hides the status line while it lasts).
    pub fn attach_until(server: TmuxServer, what: &str, first: impl FnMut(&str) -> bool) -> Live {
        let attach = attach_main(&server);
        Live::open(server, &attach, what, first)
    }

    /// A terminal (160×45) that starts `server` the way a person does: `tmux -f CONF
    /// new-session -s main`, reading the configuration file `conf`.
    pub fn start_by_config(
        mut server: TmuxServer,
        conf: &std::path::Path,
        what: &str,
        first: impl FnMut(&str) -> bool,
    ) -> Live {
        let start = format!(
            "env -u TMUX -u TMUX_PANE tmux -u -L {} -f {} new-session -s main",
            server.name,
            conf.display()
        );
        let live = Live::open_terminal(&server, &start);
        wait_until(DEADLINE, "the server to start", || {
            server
                .try_tmux(&["has-session", "-t", "main"])
                .status
                .success()
        });
        server.learn_socket();
        live.finish(server, what, first)
    }

    /// The outer terminal running `inner`, then the client it runs, once `first` holds.
    fn open(server: TmuxServer, inner: &str, what: &str, first: impl FnMut(&str) -> bool) -> Live {
        Live::open_terminal(&server, inner).finish(server, what, first)
    }

    /// The outer server: one 160×45 terminal running `inner`.
    fn open_terminal(server: &TmuxServer, inner: &str) -> Outer {
        Live::open_sized(server, inner, (160, 45))
    }

    /// The outer server: one terminal of `size` (columns, lines) running `inner`.
    fn open_sized(server: &TmuxServer, inner: &str, size: (u32, u32)) -> Outer {
        static COUNTER: AtomicU32 = AtomicU32::new(0);
        let mut outer = Outer {
            name: format!(
                "agentpane-outer-{}-{}",
                std::process::id(),
                COUNTER.fetch_add(1, Ordering::Relaxed)
            ),
            socket: None,
        };
        let out = outer
            .command(server)
            .args(["new-session", "-d", "-s", "outer"])
            .args(["-x", &size.0.to_string(), "-y", &size.1.to_string()])
            .arg(inner)
            .output()
            .expect("start the outer tmux");
        assert!(
            out.status.success(),
            "outer tmux: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        outer.socket = Some(PathBuf::from(
            String::from_utf8_lossy(
                &outer
                    .command(server)
                    .args(["display-message", "-p", "#{socket_path}"])
                    .output()
                    .expect("outer socket")
                    .stdout,
            )
            .trim(),
        ));
        outer
    }

    fn outer_tmux(&self, args: &[&str]) -> String {
        let out = self
            .outer
            .command(&self.server)
            .args(args)
            .output()
            .expect("run outer tmux");
        assert!(
            out.status.success(),
            "outer tmux {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Types keys into the client, as tmux key names (`C-b`, `Enter`, `Escape`, `j`).
    pub fn keys(&self, keys: &[&str]) {
        for key in keys {
            self.outer_tmux(&["send-keys", "-t", "outer:", key]);
        }
    }

    /// The prefix, then `key`.
    pub fn press(&self, key: &str) {
        self.keys(&["C-b", key]);
    }

    /// What the person sees.
    pub fn screen(&self) -> String {
        self.outer_tmux(&["capture-pane", "-p", "-J", "-t", "outer:"])
    }

    /// Polls the screen until `check` holds; panics with the last screen otherwise.
    pub fn wait_screen(&self, what: &str, mut check: impl FnMut(&str) -> bool) -> String {
        let end = Instant::now() + DEADLINE;
        loop {
            let screen = self.screen();
            if check(&screen) {
                return screen;
            }
            if Instant::now() > end {
                panic!("timed out after {DEADLINE:?} waiting for {what}; the screen:\n{screen}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The inner client's name.
    pub fn client(&self) -> Option<String> {
        self.server
            .tmux(&["list-clients", "-F", "#{client_name}"])
            .lines()
            .next()
            .map(str::to_string)
    }

    /// The pane the client shows.
    pub fn current_pane(&self) -> String {
        let client = self.client().expect("an attached client");
        self.server
            .tmux(&["display-message", "-p", "-c", &client, "#{pane_id}"])
    }

    /// Shows `pane` in the client.
    pub fn focus(&self, pane: &str) {
        self.server.tmux(&["select-window", "-t", pane]);
        self.server.tmux(&["select-pane", "-t", pane]);
        wait_until(DEADLINE, "the client to show the pane", || {
            self.current_pane() == pane
        });
    }

    /// Nothing went wrong on screen: no `'…' returned N` error view, no tmux error, no pane
    /// stuck in copy or view mode.
    pub fn assert_clean(&self) {
        let screen = self.screen();
        for bad in [
            "returned",
            "no pane",
            "command not found",
            "unknown command:",
        ] {
            assert!(!screen.contains(bad), "`{bad}` on screen:\n{screen}");
        }
        let modes = self
            .server
            .tmux(&["list-panes", "-a", "-F", "#{pane_id} #{pane_in_mode}"]);
        assert!(
            modes.lines().all(|l| l.ends_with(" 0")),
            "a pane is in a mode:\n{modes}\n{screen}"
        );
    }

    /// Routing journal outcomes, in order.
    pub fn outcomes(&self) -> Vec<String> {
        std::fs::read_to_string(self.server.state_dir().join("journal.jsonl"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).ok()?;
                Some(v["outcome"].as_str()?.to_string())
            })
            .collect()
    }

    /// The pid of a running `agentpane … pick` on this server that is not the `--popup`
    /// launcher: the picker drawing in the popup.
    pub fn picker_pid(&self) -> Option<u32> {
        let dir = std::fs::read_dir("/proc").ok()?;
        dir.flatten().find_map(|e| {
            let pid: u32 = e.file_name().to_str()?.parse().ok()?;
            let cmdline = std::fs::read(e.path().join("cmdline")).ok()?;
            let args: Vec<String> = cmdline
                .split(|b| *b == 0)
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect();
            let agentpane = args.first()?.ends_with("/agentpane");
            let ours = agentpane && args.iter().any(|a| a.contains(&self.server.name));
            let pick = args.iter().any(|a| a == "pick");
            let popup = args.iter().any(|a| a == "--popup");
            (ours && pick && !popup).then_some(pid)
        })
    }
}

/// A person's terminal on a server the test keeps: a real client attached to the session of
/// one pane and showing it, sized to its window (plus the status line) so nothing is redrawn.
/// Keys typed here reach the pane as a person's do, through the client, and tmux counts them
/// as that client's activity. The terminal is killed on drop.
pub struct Person<'a> {
    outer: Outer,
    server: &'a TmuxServer,
    pane: String,
}

impl<'a> Person<'a> {
    /// A terminal attached to `server`, showing `pane`.
    pub fn at(server: &'a TmuxServer, pane: &str) -> Person<'a> {
        let of = |f: &str| server.tmux(&["display-message", "-p", "-t", pane, f]);
        let session = of("#{session_name}").trim().to_string();
        let columns: u32 = of("#{window_width}").trim().parse().expect("window width");
        let lines: u32 = of("#{window_height}")
            .trim()
            .parse()
            .expect("window height");
        server.tmux(&["select-window", "-t", pane]);
        server.tmux(&["select-pane", "-t", pane]);
        let attach = format!(
            "env -u TMUX -u TMUX_PANE tmux -u -L {} attach -t {session}",
            server.name
        );
        let person = Person {
            outer: Live::open_sized(server, &attach, (columns, lines + 1)),
            server,
            pane: pane.to_string(),
        };
        wait_until(DEADLINE, "the person's client to show the pane", || {
            person.client().is_some()
        });
        person
    }

    /// The client's name, once it shows the pane.
    pub fn client(&self) -> Option<String> {
        self.server
            .tmux(&["list-clients", "-F", "#{client_name} #{pane_id}"])
            .lines()
            .find_map(|l| {
                let (name, pane) = l.rsplit_once(' ')?;
                (pane == self.pane).then(|| name.to_string())
            })
    }

    /// What the person sees, popups included.
    pub fn screen(&self) -> String {
        let out = self
            .outer
            .command(self.server)
            .args(["capture-pane", "-p", "-J", "-t", "outer:"])
            .output()
            .expect("run outer tmux");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Polls the screen until `check` holds; panics with the last screen after `deadline`.
    pub fn wait_screen(
        &self,
        deadline: Duration,
        what: &str,
        mut check: impl FnMut(&str) -> bool,
    ) -> String {
        let end = Instant::now() + deadline;
        loop {
            let screen = self.screen();
            if check(&screen) {
                return screen;
            }
            if Instant::now() > end {
                panic!("timed out after {deadline:?} waiting for {what}; the screen:\n{screen}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Types keys into the terminal, as tmux key names (`1`, `Enter`, `Escape`).
    pub fn keys(&self, keys: &[&str]) {
        for key in keys {
            let out = self
                .outer
                .command(self.server)
                .args(["send-keys", "-t", "outer:", key])
                .output()
                .expect("run outer tmux");
            assert!(out.status.success(), "outer send-keys {key}");
        }
    }
}

/// CPU seconds (user + system) a process and its finished children (its tmux calls) have
/// used so far.
pub fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("process stat");
    // Fields after the `(comm)`, which may contain spaces.
    let rest = &stat[stat.rfind(')').expect("stat format") + 2..];
    let fields: Vec<&str> = rest.split(' ').collect();
    let ticks: f64 = fields[11..15]
        .iter()
        .map(|f| f.parse::<f64>().expect("stat ticks"))
        .sum();
    // SAFETY: sysconf only reads a constant of the running system.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    ticks / hz
}
