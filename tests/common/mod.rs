//! Shared harness for integration tests: a private tmux server (`-L agentpane-test-…`,
//! `-f /dev/null`, killed on drop) whose panes see temporary `HOME`, state folder,
//! `CLAUDE_CONFIG_DIR` and `CODEX_HOME`; fake `claude`/`codex`/`gemini`/`opencode` agents
//! (symlinks to the agentpane binary, see `src/fake_agent/`); a runner for the agentpane CLI;
//! a poller.
//!
//! ```ignore
//! let server = TmuxServer::start();
//! let pane = server.spawn(&FakeAgent::claude().fixture("claude/marot-spotter/short.jsonl"));
//! let out = server.agentpane(&["resolve", &pane, "--json"]);
//! ```

#![allow(dead_code)]

pub mod cost;
pub mod desktop;
pub mod install;
pub mod notify;
pub mod readme;
pub mod sshd;
pub mod web;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use agentpane::events::AgentKind;

/// The agentpane binary under test.
pub fn agentpane_bin() -> &'static str {
    env!("CARGO_BIN_EXE_agentpane")
}

/// The environment of a temporary world under `root`: its `home`, `state`, `claude` and
/// `codex` folders in place of the user's, and the XDG folders a user may have set (their
/// config, data — opencode's store — and cache) under that `home`.
pub fn world_env(root: &Path) -> Vec<(String, PathBuf)> {
    let home = root.join("home");
    [
        ("HOME", home.clone()),
        ("AGENTPANE_STATE_DIR", root.join("state")),
        ("XDG_STATE_HOME", root.join("state")),
        ("CLAUDE_CONFIG_DIR", root.join("claude")),
        ("CODEX_HOME", root.join("codex")),
        ("XDG_CONFIG_HOME", home.join(".config")),
        ("XDG_DATA_HOME", home.join(".local/share")),
        ("XDG_CACHE_HOME", home.join(".cache")),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

/// The agentpane binary, not started, with `env` (a world's: [`world_env`],
/// [`TmuxServer::env`]) and without the calling tmux client's variables. Every test run of
/// the binary starts here (`tests/isolation.rs` checks).
pub fn agentpane_with_env(env: &[(String, PathBuf)]) -> Command {
    let mut cmd = Command::new(agentpane_bin());
    cmd.env_remove("TMUX").env_remove("TMUX_PANE");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd
}

/// The agentpane binary, not started, in a temporary world of its own under `root` (which
/// must outlive the run).
pub fn agentpane_in(root: &Path) -> Command {
    std::fs::create_dir_all(root.join("home")).expect("create the test HOME");
    agentpane_with_env(&world_env(root))
}

/// A file under `fixtures/real/`.
pub fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/real")
        .join(rel)
}

/// A file under `fixtures/real-clients/` (what a pinned real client wrote).
pub fn real_client_fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/real-clients")
        .join(rel)
}

/// Polls `cond` every 50 ms until it holds; panics naming `what` after `deadline`.
pub fn wait_until(deadline: Duration, what: &str, cond: impl FnMut() -> bool) {
    wait_until_else(deadline, what, cond, String::new);
}

/// [`wait_until`], the panic also telling what `tell` says (what the failure looked like).
pub fn wait_until_else(
    deadline: Duration,
    what: &str,
    mut cond: impl FnMut() -> bool,
    tell: impl FnOnce() -> String,
) {
    let end = Instant::now() + deadline;
    loop {
        if cond() {
            return;
        }
        if Instant::now() > end {
            let told = tell();
            let sep = if told.is_empty() { "" } else { "\n" };
            panic!("timed out after {deadline:?} waiting for {what}{sep}{told}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A real Claude Code transcript that ends with a plain answer.
pub const CLAUDE_ANSWER: &str =
    "claude/d-kimuson-claude-code-viewer/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl";

/// How soon a watcher reads a pane's log that appeared after it resolved the pane: a few
/// safety polls, far short of the minute (`RESOLVE_MAX_AGE`) a resolution is otherwise kept.
pub const WATCHER_FINDS: Duration = Duration::from_secs(20);

/// A generous default deadline for a loaded 2-core machine.
pub const DEADLINE: Duration = Duration::from_secs(20);

/// What a finished agentpane run printed.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    fn from(out: Output) -> Run {
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// Stdout parsed as JSON (panics with the whole run otherwise).
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {self:?}"))
    }
}

/// A fake agent to start in a pane.
#[derive(Debug, Clone)]
pub struct FakeAgent {
    /// The agent's name (`claude`, `codex`, …: [`AgentKind::name`]).
    ///
    /// [`AgentKind::name`]: agentpane::events::AgentKind::name
    pub name: &'static str,
    pub env: Vec<(String, String)>,
    /// Working directory name under the server's `work/` folder.
    pub dir: String,
}

impl FakeAgent {
    /// A fake Claude Code with no fixture (an empty transcript).
    pub fn claude() -> FakeAgent {
        FakeAgent::new("claude")
    }

    /// A fake Claude Code waiting for a decision (a recorded session that ends asking to run
    /// `mix phx.server …`), its dialog on screen, decided by a key (`AGENTPANE_FAKE_DECIDE`).
    pub fn claude_asking() -> FakeAgent {
        let screen = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/fixtures/demo/claude-infra-screen.txt"
        );
        FakeAgent::claude()
            .fixture("claude/marot-spotter/short.jsonl")
            .start_lines(9)
            .env("AGENTPANE_FAKE_DECIDE", "1")
            .env("AGENTPANE_FAKE_SCREEN", screen)
    }

    /// A fake Codex with no fixture (a rollout with only `session_meta`).
    pub fn codex() -> FakeAgent {
        FakeAgent::new("codex")
    }

    /// A fake Gemini CLI with no fixture (a chat log with only its metadata line), under the
    /// temporary `HOME`'s `.gemini`.
    pub fn gemini() -> FakeAgent {
        FakeAgent::new("gemini")
    }

    /// A fake opencode with no fixture (a database without a session), at the temporary
    /// `HOME`'s `.local/share/opencode/opencode.db`.
    pub fn opencode() -> FakeAgent {
        FakeAgent::new("opencode")
    }

    /// A fake of `kind` that has finished a turn and sits idle: a recorded session of the
    /// released client where there is one, else the screen alone (agentpane reads no log of
    /// that agent).
    pub fn idle(kind: AgentKind) -> FakeAgent {
        let fake = FakeAgent::new(kind.name());
        match kind {
            AgentKind::Claude => fake.fixture("claude/marot-spotter/short.jsonl"),
            AgentKind::Codex => fake.fixture("codex/kvsankar-agent-history/session-01.jsonl"),
            AgentKind::Gemini => fake.real_client_fixture("gemini-0.61.0/session.jsonl"),
            // Kilo keeps opencode's store: the fake Kilo replays opencode's recorded rows into
            // its own `kilo/kilo.db`.
            AgentKind::Opencode | AgentKind::Kilo => {
                fake.real_client_fixture("opencode-1.18.33/replay.sql")
            }
            AgentKind::Qwen => {
                fake.real_client_fixture("qwen-0.24.4/states/25-tool-done/chat.jsonl")
            }
            AgentKind::Copilot => fake.real_client_fixture("copilot-1.0.102/demo.jsonl"),
            AgentKind::Pi => fake.real_client_fixture("pi-0.73.1/demo.jsonl"),
            AgentKind::Kimi => fake.real_client_fixture("kimi-2.1.0/demo.jsonl"),
            AgentKind::Droid => fake.real_client_fixture("droid-0.225.1/demo.jsonl"),
            AgentKind::Cline => fake.real_client_fixture("cline-3.0.65/demo.jsonl"),
            AgentKind::Amp | AgentKind::Aider => fake,
        }
    }

    fn new(name: &'static str) -> FakeAgent {
        FakeAgent {
            name,
            env: vec![("AGENTPANE_FAKE_AGENT".into(), "none".into())],
            dir: "proj".into(),
        }
    }

    /// Replays this file of `fixtures/real/`.
    pub fn fixture(self, rel: &str) -> FakeAgent {
        let path = fixture(rel).to_string_lossy().into_owned();
        self.env("AGENTPANE_FAKE_AGENT", &path)
    }

    /// Replays this file of `fixtures/real-clients/` (e.g. `gemini-0.61.0/session.jsonl`).
    pub fn real_client_fixture(self, rel: &str) -> FakeAgent {
        let path = real_client_fixture(rel).to_string_lossy().into_owned();
        self.env("AGENTPANE_FAKE_AGENT", &path)
    }

    /// Lines written at start (`AGENTPANE_FAKE_START`).
    pub fn start_lines(self, n: usize) -> FakeAgent {
        self.env("AGENTPANE_FAKE_START", &n.to_string())
    }

    /// A Claude Code asked nothing yet (`AGENTPANE_FAKE_FRESH=1`, nothing written at start):
    /// its session record only, its transcript with its first step. Start it with
    /// [`TmuxServer::spawn_fresh`].
    pub fn fresh(self) -> FakeAgent {
        self.env("AGENTPANE_FAKE_FRESH", "1").start_lines(0)
    }

    /// Keep the Claude transcript open (`AGENTPANE_FAKE_HOLD=1`).
    pub fn hold(self) -> FakeAgent {
        self.env("AGENTPANE_FAKE_HOLD", "1")
    }

    /// Run in `work/<dir>` instead of `work/proj`.
    pub fn in_dir(mut self, dir: &str) -> FakeAgent {
        self.dir = dir.into();
        self
    }

    /// Any extra environment variable for the agent.
    pub fn env(mut self, key: &str, value: &str) -> FakeAgent {
        self.env.retain(|(k, _)| k != key);
        self.env.push((key.into(), value.into()));
        self
    }
}

/// A private tmux server with its own temporary world.
pub struct TmuxServer {
    pub name: String,
    root: tempfile::TempDir,
    /// Extra environment for the server (and so its panes and `run-shell`) and every run.
    extra: Vec<(String, PathBuf)>,
    /// The server's socket file, removed on drop (tmux leaves it behind after kill-server).
    socket: Option<PathBuf>,
}

impl TmuxServer {
    /// Starts a server with one session `main` (window 0: a plain shell).
    pub fn start() -> TmuxServer {
        TmuxServer::start_with(&[])
    }

    /// [`start`](Self::start) with extra environment, e.g. a `PATH` of the test's choosing.
    pub fn start_with(extra: &[(&str, &str)]) -> TmuxServer {
        let mut server = TmuxServer::unstarted(extra);
        server.new_main_session(&[]);
        server
    }

    /// [`start_with`](Self::start_with), the server loading `conf` as it starts (`tmux -f
    /// CONF new-session`, as a person starts one with their config).
    pub fn start_with_config(extra: &[(&str, &str)], conf: &Path) -> TmuxServer {
        let mut server = TmuxServer::unstarted(extra);
        server.new_main_session(&["-f", conf.to_str().expect("a UTF-8 path")]);
        server
    }

    /// Session `main` (window 0: a plain shell), starting the server with `global` flags.
    fn new_main_session(&mut self, global: &[&str]) {
        let work = self.work("proj");
        let mut args = global.to_vec();
        args.extend([
            "new-session",
            "-d",
            "-s",
            "main",
            "-x",
            "200",
            "-y",
            "50",
            "-c",
            work.to_str().unwrap(),
        ]);
        self.tmux(&args);
        self.learn_socket();
    }

    /// The world of a server (folders, fake agents, its name) with no server yet: for a test
    /// that starts it the way a person does (`tmux -f CONF new-session` in a terminal).
    pub fn unstarted(extra: &[(&str, &str)]) -> TmuxServer {
        static COUNTER: AtomicU32 = AtomicU32::new(0);
        let name = format!(
            "agentpane-test-{}-{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        );
        let root = tempfile::tempdir().expect("temp dir");
        let server = TmuxServer {
            name,
            root,
            extra: extra
                .iter()
                .map(|(k, v)| (k.to_string(), PathBuf::from(v)))
                .collect(),
            socket: None,
        };
        for dir in ["home", "state", "claude", "codex", "bin", "work/proj"] {
            std::fs::create_dir_all(server.root.path().join(dir)).expect("create test dirs");
        }
        for kind in agentpane::events::AgentKind::ALL {
            std::os::unix::fs::symlink(agentpane_bin(), server.bin().join(kind.name()))
                .expect("symlink fake agent");
        }
        server
    }

    /// The pid of the watcher serving this server: the holder of its lock.
    pub fn watcher_pid(&self) -> Option<u32> {
        let socket = self.tmux(&["display-message", "-p", "#{socket_path}"]);
        let lock = agentpane::watch::lock::lock_path(&self.state_root(), &socket);
        agentpane::paths::lock_holder(&lock)
    }

    /// Notes the running server's socket file, which drop removes.
    pub fn learn_socket(&mut self) {
        self.socket = Some(PathBuf::from(self.tmux(&[
            "display-message",
            "-p",
            "#{socket_path}",
        ])));
    }

    /// The environment every tmux client, pane and agentpane run gets.
    pub fn env(&self) -> Vec<(String, PathBuf)> {
        let mut env = world_env(self.path());
        env.push(("SHELL".into(), PathBuf::from("/bin/sh")));
        env.extend(self.extra.iter().cloned());
        env
    }

    pub fn path(&self) -> &Path {
        self.root.path()
    }
    pub fn home(&self) -> PathBuf {
        self.path().join("home")
    }
    pub fn state_dir(&self) -> PathBuf {
        self.path().join("state")
    }

    /// `pane`'s row in the watcher's snapshot (`state.json`), or null.
    pub fn snapshot_row(&self, pane: &str) -> serde_json::Value {
        std::fs::read(self.server_dir().join("state.json"))
            .ok()
            .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
            .and_then(|s| {
                s["panes"]
                    .as_array()?
                    .iter()
                    .find(|p| p["pane_id"] == pane)
                    .cloned()
            })
            .unwrap_or(serde_json::Value::Null)
    }

    pub fn claude_dir(&self) -> PathBuf {
        self.path().join("claude")
    }
    pub fn codex_dir(&self) -> PathBuf {
        self.path().join("codex")
    }
    pub fn bin(&self) -> PathBuf {
        self.path().join("bin")
    }
    /// `work/<name>`, created.
    pub fn work(&self, name: &str) -> PathBuf {
        let dir = self.path().join("work").join(name);
        std::fs::create_dir_all(&dir).expect("create work dir");
        dir
    }

    fn command(&self, program: &str) -> Command {
        let mut cmd = Command::new(program);
        // `CI` is the test runner's, not the panes': a real client that sees it (Gemini CLI)
        // runs non-interactively and exits, which no user's terminal does.
        cmd.env_remove("TMUX")
            .env_remove("TMUX_PANE")
            .env_remove("CI");
        for (k, v) in self.env() {
            cmd.env(k, v);
        }
        cmd
    }

    /// Runs `tmux -L name ARGS`; panics with stderr on failure.
    pub fn tmux(&self, args: &[&str]) -> String {
        let out = self.try_tmux(args);
        assert!(
            out.status.success(),
            "tmux {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim_end().to_string()
    }

    /// Runs `tmux -L name ARGS` and returns whatever happened.
    pub fn try_tmux(&self, args: &[&str]) -> Output {
        self.command("tmux")
            .args(["-L", &self.name, "-f", "/dev/null"])
            .args(args)
            .output()
            .expect("run tmux")
    }

    fn env_flags(env: &[(String, String)]) -> Vec<String> {
        env.iter()
            .flat_map(|(k, v)| ["-e".to_string(), format!("{k}={v}")])
            .collect()
    }

    /// A new window in session `main` running `cmd` in `cwd` with extra `env`; its pane id.
    pub fn new_window(&self, cmd: &str, cwd: &Path, env: &[(String, String)]) -> String {
        self.window(true, cmd, cwd, env)
    }

    fn window(&self, detached: bool, cmd: &str, cwd: &Path, env: &[(String, String)]) -> String {
        let mut args: Vec<String> = ["new-window", "-P", "-F", "#{pane_id}", "-t", "main:"]
            .map(String::from)
            .to_vec();
        if detached {
            args.push("-d".to_string());
        }
        args.extend(["-c".to_string(), cwd.to_string_lossy().into_owned()]);
        args.extend(Self::env_flags(env));
        args.push(cmd.to_string());
        self.tmux(&args.iter().map(String::as_str).collect::<Vec<_>>())
    }

    /// Splits `target`, running `cmd` in `cwd` with extra `env`; the new pane id.
    pub fn split(&self, target: &str, cmd: &str, cwd: &Path, env: &[(String, String)]) -> String {
        let mut args: Vec<String> = ["split-window", "-d", "-P", "-F", "#{pane_id}", "-t", target]
            .map(String::from)
            .to_vec();
        args.extend(["-c".to_string(), cwd.to_string_lossy().into_owned()]);
        args.extend(Self::env_flags(env));
        args.push(cmd.to_string());
        self.tmux(&args.iter().map(String::as_str).collect::<Vec<_>>())
    }

    /// Starts a fake agent in a new window and waits until it has written its files; its
    /// pane id.
    pub fn spawn(&self, agent: &FakeAgent) -> String {
        let pane = self.spawn_drawn(agent);
        self.wait_for_agent(&pane);
        pane
    }

    /// Starts a [`FakeAgent::fresh`] agent in a new window and waits until it is resolved by
    /// its session id alone (no transcript yet); its pane id.
    pub fn spawn_fresh(&self, agent: &FakeAgent) -> String {
        let pane = self.spawn_drawn(agent);
        wait_until(DEADLINE, &format!("a fresh session in {pane}"), || {
            let run = self.agentpane(&["resolve", &pane, "--json"]);
            let doc: serde_json::Value = serde_json::from_str(&run.stdout).unwrap_or_default();
            doc["session_id"].is_string() && doc["transcript"].is_null()
        });
        pane
    }

    /// [`TmuxServer::spawn`] in a window made `main`'s current one at once: a client attached
    /// to `main` shows the agent from its first line.
    pub fn spawn_shown(&self, agent: &FakeAgent) -> String {
        let exe = self.bin().join(agent.name);
        let pane = self.window(
            false,
            exe.to_str().unwrap(),
            &self.work(&agent.dir),
            &agent.env,
        );
        self.wait_for_agent(&pane);
        pane
    }

    /// Starts `agent` in a new window and waits for its first line on the screen only (a fake
    /// with `AGENTPANE_FAKE_LATE` has written no file yet).
    pub fn spawn_drawn(&self, agent: &FakeAgent) -> String {
        let exe = self.bin().join(agent.name);
        let pane = self.new_window(exe.to_str().unwrap(), &self.work(&agent.dir), &agent.env);
        self.wait_drawn(&pane);
        pane
    }

    fn wait_drawn(&self, pane: &str) {
        wait_until(
            DEADLINE,
            &format!("the fake agent in {pane} to start"),
            || {
                self.try_tmux(&["capture-pane", "-p", "-J", "-t", pane])
                    .stdout
                    .windows(b"fake ".len())
                    .any(|w| w == b"fake ")
            },
        );
    }

    /// Waits until the fake agent in `pane` has written its start lines (it says so on its
    /// screen) and is resolvable (its session files exist; for an agent whose log agentpane
    /// does not read, its process).
    pub fn wait_for_agent(&self, pane: &str) {
        self.wait_drawn(pane);
        wait_until(DEADLINE, &format!("an agent transcript in {pane}"), || {
            let run = self.agentpane(&["resolve", pane, "--json"]);
            if run.code != 0 {
                return false;
            }
            let doc = run.json();
            match serde_json::from_value::<AgentKind>(doc["agent"].clone()) {
                Ok(kind) if !agentpane::agents::reads_log(kind) => true,
                Ok(_) => doc["transcript"].is_string(),
                Err(_) => false,
            }
        });
    }

    /// A fake Claude Code in its own folder `work/<name>` whose received lines (what reached
    /// its input box: routed text, one line per Enter in its cooked terminal) land in
    /// `<root>/<name>.txt`; (pane, file). The agent counterpart of a `cat > file` pane.
    pub fn inbox_agent(&self, name: &str) -> (String, PathBuf) {
        let file = self.path().join(format!("{name}.txt"));
        let agent = FakeAgent::claude()
            .in_dir(name)
            .env("AGENTPANE_FAKE_INBOX", file.to_str().unwrap());
        (self.spawn(&agent), file)
    }

    /// A pane running an interactive `shell` command line (e.g. `dash -i`), once its prompt
    /// (`shell$ `) is drawn.
    pub fn shell_pane(&self, shell: &str) -> String {
        let env = [("PS1".to_string(), "shell$ ".to_string())];
        let pane = self.new_window(shell, &self.work("shell"), &env);
        wait_until(DEADLINE, "the shell's prompt", || {
            self.try_tmux(&["capture-pane", "-p", "-t", &pane])
                .stdout
                .windows(b"shell$".len())
                .any(|w| w == b"shell$")
        });
        pane
    }

    /// Starts the fake `agent` with `env` from the interactive shell in `pane`, typed as a
    /// person would (`env K='V' … /path/agent`); waits until it runs there.
    pub fn start_from_shell(&self, pane: &str, agent: &str, env: &[(String, String)]) {
        let exe = self.bin().join(agent);
        let mut line = String::from("env");
        for (k, v) in env {
            line.push_str(&format!(" {k}='{v}'"));
        }
        line.push_str(&format!(" '{}'", exe.display()));
        // A clean screen (tmux's own reset, nothing typed), so the banner seen is the new
        // agent's.
        self.tmux(&["send-keys", "-R", "-t", pane]);
        self.tmux(&["clear-history", "-t", pane]);
        self.send_line(pane, &line);
        self.wait_for_agent(pane);
    }

    /// The agent pid `resolve` finds in `pane`.
    pub fn agent_pid(&self, pane: &str) -> u32 {
        let run = self.agentpane(&["resolve", pane, "--json"]);
        run.json()["agent_pid"].as_u64().expect("an agent") as u32
    }

    /// Ctrl-Z in `pane`; waits until agent `pid` is stopped and out of the foreground.
    pub fn suspend(&self, pane: &str, pid: u32) {
        self.tmux(&["send-keys", "-t", pane, "C-z"]);
        wait_until(DEADLINE, "the agent stopped by Ctrl-Z", || {
            agentpane::proctree::procfs::stat(pid)
                .is_some_and(|s| s.stopped() && !s.in_foreground())
        });
    }

    /// A fake Claude Code in `work/<name>` whose last answer is a command a prompt-injected
    /// page could have put there — `Run this:` / `touch <marker>`; (pane, marker). A route
    /// that lets the answer execute anywhere creates the marker.
    pub fn hostile_claude(&self, name: &str) -> (String, PathBuf) {
        let marker = self.path().join(format!("{name}-ran"));
        let answer = format!("Run this:\ntouch {}\necho done", marker.display());
        (self.claude_answering(name, &answer), marker)
    }

    /// A fake Claude Code in `work/<name>` whose last answer is `answer`; its pane.
    pub fn claude_answering(&self, name: &str, answer: &str) -> String {
        let text = std::fs::read_to_string(fixture(CLAUDE_ANSWER)).expect("fixture");
        let mut lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).expect("fixture line"))
            .collect();
        let last = lines.last_mut().expect("an answer");
        last["message"]["content"][0]["text"] = answer.into();
        let fixture_file = self.path().join(format!("{name}.jsonl"));
        let body: String = lines.iter().map(|l| format!("{l}\n")).collect();
        std::fs::write(&fixture_file, body).expect("write the fixture");
        self.spawn(
            &FakeAgent::claude()
                .in_dir(name)
                .env("AGENTPANE_FAKE_AGENT", fixture_file.to_str().unwrap()),
        )
    }

    /// The recipient a route to `pane` records now: the agent process `resolve` finds there.
    pub fn recipient(&self, pane: &str) -> agentpane::route::Recipient {
        let run = self.agentpane(&["resolve", pane, "--json"]);
        let doc = run.json();
        let pid = doc["agent_pid"].as_u64().expect("an agent pid") as u32;
        let kind = serde_json::from_value(doc["agent"].clone()).expect("an agent kind");
        let stat = agentpane::proctree::procfs::stat(pid).expect("the agent's /proc/PID/stat");
        agentpane::route::Recipient {
            kind,
            pid,
            start_ticks: stat.start_ticks,
            session: None,
        }
    }

    /// The pid of `pane`'s first process.
    pub fn pane_pid(&self, pane: &str) -> u32 {
        self.tmux(&["display-message", "-p", "-t", pane, "#{pane_pid}"])
            .parse()
            .expect("pane pid")
    }

    /// Types `text` and Enter into `pane` (the fake agent's stdin).
    pub fn send_line(&self, pane: &str, text: &str) {
        self.tmux(&["send-keys", "-t", pane, "-l", text]);
        self.tmux(&["send-keys", "-t", pane, "Enter"]);
    }

    /// Makes the fake Codex in `pane` end its turn `turn` with `message` (a `task_complete`
    /// line typed into its stdin).
    pub fn codex_completes(&self, pane: &str, turn: &str, message: &str) {
        let line = serde_json::json!({
            "timestamp": "2026-01-01T00:00:00Z",
            "type": "event_msg",
            "payload": {"type": "task_complete", "turn_id": turn, "last_agent_message": message},
        });
        self.send_line(pane, &format!("line {line}"));
    }

    /// Runs `agentpane -L name ARGS` with the server's environment.
    pub fn agentpane(&self, args: &[&str]) -> Run {
        self.agentpane_env(&[], args)
    }

    /// [`agentpane`](Self::agentpane) with extra environment (e.g. `TMUX_PANE`).
    pub fn agentpane_env(&self, env: &[(&str, &str)], args: &[&str]) -> Run {
        let mut cmd = self.agentpane_command(args);
        for (k, v) in env {
            cmd.env(k, v);
        }
        Run::from(cmd.output().expect("run agentpane"))
    }

    /// `agentpane -L name ARGS` with the server's environment, not started: for a caller that
    /// runs it in the background.
    pub fn agentpane_command(&self, args: &[&str]) -> Command {
        let mut cmd = agentpane_with_env(&self.env());
        cmd.env_remove("CI").args(["-L", &self.name]).args(args);
        cmd
    }
}

impl Drop for TmuxServer {
    fn drop(&mut self) {
        let _ = self.try_tmux(&["kill-server"]);
        if let Some(socket) = &self.socket {
            let _ = std::fs::remove_file(socket);
        }
    }
}

/// Runs agentpane against a server name that has no server, in a temporary world of its
/// own (`HOME`, state folder, agent folders) like every other run.
pub fn agentpane_without_server(args: &[&str]) -> Run {
    TmuxServer::unstarted(&[]).agentpane(args)
}

/// A watcher running in the background against a test server; killed on drop.
pub struct Watch {
    pub child: Child,
    pub alerts: PathBuf,
}

impl Watch {
    pub fn start(server: &TmuxServer, extra: &[&str]) -> Watch {
        Watch::start_notifying(server, extra, None)
    }

    /// [`start`](Self::start) with desktop notifications on, to the desktop whose
    /// environment (`DISPLAY`, `DBUS_SESSION_BUS_ADDRESS`) is given, when one is.
    pub fn start_notifying(
        server: &TmuxServer,
        extra: &[&str],
        desktop: Option<&[(&'static str, String)]>,
    ) -> Watch {
        let alerts = server.path().join("alerts.jsonl");
        let mut cmd = agentpane_with_env(&server.env());
        let alert_cmd = format!("tee -a {}", alerts.display());
        cmd.args(["-L", &server.name, "watch", "--poll", "0.5"]);
        match desktop {
            Some(env) => cmd.envs(env.iter().map(|(k, v)| (k, v))),
            None => cmd.arg("--no-notify"),
        };
        cmd.args(["--alert-command", &alert_cmd])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let child = cmd.spawn().expect("start watcher");
        let w = Watch { child, alerts };
        let snapshot = server.server_dir().join("state.json");
        wait_until(DEADLINE, "the watcher's first scan", || snapshot.exists());
        w
    }

    pub fn alerts(&self) -> Vec<serde_json::Value> {
        std::fs::read_to_string(&self.alerts)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).expect("alert JSON"))
            .collect()
    }

    /// Sends SIGTERM and waits for a clean exit.
    pub fn stop(mut self) -> i32 {
        let pid = self.child.id().to_string();
        let _ = Command::new("kill").args(["-TERM", &pid]).status();
        self.wait_exit()
    }

    pub fn wait_exit(&mut self) -> i32 {
        let end = Instant::now() + DEADLINE;
        loop {
            if let Some(status) = self.child.try_wait().expect("wait watcher") {
                return status.code().unwrap_or(-1);
            }
            assert!(Instant::now() < end, "watcher did not exit");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl TmuxServer {
    /// This server's own folder in the state folder its runs use (an `AGENTPANE_STATE_DIR`
    /// it was started with, else its own): the watcher's snapshot (`state.json`), lock,
    /// `watch.log` and memories ([`agentpane::paths::server_dir`]).
    pub fn server_dir(&self) -> PathBuf {
        let socket = match &self.socket {
            Some(s) => s.to_string_lossy().into_owned(),
            None => self.tmux(&["display-message", "-p", "#{socket_path}"]),
        };
        agentpane::paths::server_dir(&self.state_root(), socket.trim())
    }

    /// The state folder this server's runs use: an `AGENTPANE_STATE_DIR` it was started
    /// with, else its own.
    pub fn state_root(&self) -> PathBuf {
        self.extra
            .iter()
            .rfind(|(k, _)| k == "AGENTPANE_STATE_DIR")
            .map_or_else(|| self.state_dir(), |(_, v)| v.clone())
    }
}

/// Every process below `root` (from `/proc/*/stat`'s ppid).
pub fn descendants(root: u32) -> Vec<u32> {
    let mut parent_of: Vec<(u32, u32)> = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
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
