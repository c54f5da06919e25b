//! `demo`: a self-contained show on a private tmux server (`-L agentpane-demo-<pid>`,
//! `-f /dev/null`). Simulated agents of every supported kind — this very binary running as
//! `claude`, `codex`, `gemini`, `opencode`, `qwen`, `copilot`, `kilo`, `pi`, `kimi`, `droid` or
//! `cline` through symlinks (see
//! `crate::fake_agent`) —
//! replay real transcripts (`fixtures/demo/`, `fixtures/real/`, `fixtures/real-clients/`) with fresh
//! timestamps into a temporary world (HOME, state folder, agent roots, opencode's data
//! folder); a watcher serves that server; the live status line, window states and alerts are
//! printed as they change, so the show needs no attach, and `panes` closes it. Everything is
//! removed at the end or on Ctrl-C: the private server (kill-server on its own socket only)
//! and the temporary folder.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context as _, Result};

use crate::cli::DemoArgs;
use crate::exit;
use crate::paths;
use crate::tmux::{Socket, Tmux};

/// One simulated agent: window name, agent, embedded fixture, pacing.
struct Actor {
    window: &'static str,
    agent: &'static str,
    fixture: (&'static str, &'static str),
    /// How much of the fixture is replayed: its first N lines.
    lines: usize,
    pace_ms: u64,
    start: &'static str,
    /// A recorded screen the agent paints (file name, content).
    screen: Option<(&'static str, &'static str)>,
}

/// The idle agent (a fake Claude Code with no conversation yet) the first finished answer
/// is routed into: routed text only ever goes into an agent's input box.
const NOTES: &str = "notes";
/// The agent whose answer is routed there once its turn ends.
const ROUTED_FROM: &str = "api";

/// The agent that waits on a permission the whole show: the one to decide.
const INFRA: &str = "infra";

/// How long the watcher of a timed demo outlives it, in seconds (`AGENTPANE_DEMO_GRACE`
/// overrides it, for tests); a `--keep` demo's watcher runs until the demo ends.
const GRACE_ENV: &str = "AGENTPANE_DEMO_GRACE";
const GRACE: f64 = 30.0;

/// The agents the demo runs (symlinks to this binary).
const AGENTS: [&str; 11] = [
    "claude", "codex", "gemini", "opencode", "qwen", "copilot", "kilo", "pi", "kimi", "droid",
    "cline",
];

const ACTORS: [Actor; 14] = [
    Actor {
        window: "api",
        agent: "claude",
        fixture: (
            "claude-end-turn.jsonl",
            include_str!("../../fixtures/demo/claude-api.jsonl"),
        ),
        lines: usize::MAX,
        pace_ms: 2000,
        start: "0",
        screen: None,
    },
    Actor {
        window: "web",
        agent: "codex",
        fixture: (
            "codex-task.jsonl",
            include_str!("../../fixtures/demo/codex-web.jsonl"),
        ),
        lines: usize::MAX,
        pace_ms: 1400,
        start: "0",
        screen: None,
    },
    Actor {
        window: "docs",
        agent: "claude",
        fixture: (
            "claude-init.jsonl",
            include_str!(
                "../../fixtures/real/claude/d-kimuson-claude-code-viewer/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl"
            ),
        ),
        lines: usize::MAX,
        pace_ms: 600,
        start: "0",
        screen: None,
    },
    Actor {
        window: "review",
        agent: "claude",
        fixture: (
            "claude-interrupted.jsonl",
            include_str!("../../fixtures/real/claude/marot-spotter/short.jsonl"),
        ),
        lines: usize::MAX,
        pace_ms: 0,
        start: "all",
        screen: None,
    },
    // Claude Code 2.1.38 asking to run `mix phx.server 2>&1 | head -80`: the recorded lines
    // up to that Bash call, and the dialog as the client draws it for that command — so
    // `answer`, the picker and the answer key decide it. A key in the pane decides it
    // (`AGENTPANE_FAKE_DECIDE`): a deny writes the session's recorded rejection (the Glob
    // call it made next, both calls refused, the interruption); an allow ends the turn.
    Actor {
        window: INFRA,
        agent: "claude",
        fixture: (
            "claude-awaiting-permission.jsonl",
            include_str!("../../fixtures/real/claude/marot-spotter/short.jsonl"),
        ),
        lines: usize::MAX,
        pace_ms: 0,
        start: "9",
        screen: Some((
            "claude-permission-screen.txt",
            include_str!("../../fixtures/demo/claude-infra-screen.txt"),
        )),
    },
    // Gemini CLI 0.61.0: a first answer, then a shell call (logged once done) and the answer
    // after it — the lines before its API-error turn.
    Actor {
        window: "search",
        agent: "gemini",
        fixture: (
            "gemini-session.jsonl",
            include_str!("../../fixtures/demo/gemini-session.jsonl"),
        ),
        lines: 15,
        pace_ms: 1200,
        start: "5",
        screen: None,
    },
    // opencode 1.18.33: a first turn answered, then a bash call in flight, done, answered.
    Actor {
        window: "build",
        agent: "opencode",
        fixture: (
            "opencode-replay.sql",
            include_str!("../../fixtures/demo/opencode-replay.sql"),
        ),
        lines: usize::MAX,
        pace_ms: 1000,
        start: "4",
        screen: None,
    },
    // Qwen Code 0.24.4: an answer, then a shell call and the answer after it (the recorded
    // session with real-looking text, fixtures/real-clients/qwen-0.24.4/README.md).
    Actor {
        window: "net",
        agent: "qwen",
        fixture: (
            "qwen-chat.jsonl",
            include_str!("../../fixtures/real-clients/qwen-0.24.4/demo.jsonl"),
        ),
        lines: usize::MAX,
        pace_ms: 1500,
        start: "6",
        screen: None,
    },
    // Copilot CLI 1.0.102: a question answered, then a test run (a bash call) and its report.
    Actor {
        window: "cli",
        agent: "copilot",
        fixture: (
            "copilot-events.jsonl",
            include_str!("../../fixtures/real-clients/copilot-1.0.102/demo.jsonl"),
        ),
        lines: usize::MAX,
        pace_ms: 800,
        start: "3",
        screen: None,
    },
    // Kilo Code CLI keeps opencode's store (as `kilo/kilo.db`): its first turn answered.
    Actor {
        window: "ship",
        agent: "kilo",
        fixture: (
            "kilo-replay.sql",
            include_str!("../../fixtures/demo/opencode-replay.sql"),
        ),
        lines: usize::MAX,
        pace_ms: 1500,
        start: "3",
        screen: None,
    },
    // pi 0.73.1: its first turn answered (header and settings at start, then the prompt and
    // the answer), with the record agentpane's pi extension writes.
    Actor {
        window: "tests",
        agent: "pi",
        fixture: (
            "pi-session.jsonl",
            include_str!("../../fixtures/demo/pi-session.jsonl"),
        ),
        lines: usize::MAX,
        pace_ms: 1500,
        start: "3",
        screen: None,
    },
    // Kimi Code 2.1.0: its first turn answered (the prompt and the model call at start, then
    // the answer).
    Actor {
        window: "ops",
        agent: "kimi",
        fixture: (
            "kimi-wire.jsonl",
            include_str!("../../fixtures/demo/kimi-wire.jsonl"),
        ),
        lines: usize::MAX,
        pace_ms: 1500,
        start: "15",
        screen: None,
    },
    // Factory Droid 0.225.2: its log begun at start, then the prompt, the answer and the
    // turn's outcome.
    Actor {
        window: "spec",
        agent: "droid",
        fixture: (
            "droid-session.jsonl",
            include_str!("../../fixtures/real-clients/droid-0.225.1/demo.jsonl"),
        ),
        lines: usize::MAX,
        pace_ms: 1500,
        start: "4",
        screen: None,
    },
    // Cline CLI 3.0.65: its first prompt, then the answer (its session record and
    // conversation, rewritten at each step as the client does).
    Actor {
        window: "deps",
        agent: "cline",
        fixture: (
            "cline-messages.jsonl",
            include_str!("../../fixtures/real-clients/cline-3.0.65/demo.jsonl"),
        ),
        lines: usize::MAX,
        pace_ms: 1500,
        start: "1",
        screen: None,
    },
];

pub fn run(args: DemoArgs) -> Result<i32> {
    if !args.seconds.is_finite() || args.seconds <= 0.0 {
        bail!("--seconds must be a positive number, not {}", args.seconds);
    }
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, Arc::clone(&stop)).context("cannot handle signals")?;
    }
    let world = World::create()?;
    let result = show(&world, &args, &stop);
    world.teardown();
    result
}

/// The temporary world and the private server.
struct World {
    root: PathBuf,
    socket: String,
    tmux: Tmux,
}

impl World {
    fn create() -> Result<World> {
        World::create_in(&std::env::temp_dir())
    }

    /// The world in a new folder under `base` (the system's temporary folder), made fresh
    /// (`mkdtemp`, 0700, a random name): never one that exists already, which another local
    /// user could have made to swap the fake agents or plant a symlink.
    fn create_in(base: &Path) -> Result<World> {
        let pid = std::process::id();
        let root = tempfile::Builder::new()
            .prefix(&format!("agentpane-demo-{pid}-"))
            .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o700))
            .tempdir_in(base)
            .with_context(|| format!("cannot create the demo's folder in {}", base.display()))?
            .keep();
        for dir in [
            "home", "state", "claude", "codex", "data", "bin", "fixtures",
        ] {
            paths::ensure_private_dir(&root.join(dir))?;
        }
        let exe = std::env::current_exe().context("cannot find the agentpane binary")?;
        for agent in AGENTS {
            let link = root.join("bin").join(agent);
            let _ = std::fs::remove_file(&link);
            std::os::unix::fs::symlink(&exe, &link)
                .with_context(|| format!("cannot create {}", link.display()))?;
        }
        for actor in &ACTORS {
            let (name, text) = actor.fixture;
            let replayed: String = text
                .lines()
                .take(actor.lines)
                .flat_map(|l| [l, "\n"])
                .collect();
            std::fs::write(root.join("fixtures").join(name), replayed)
                .with_context(|| format!("cannot write the demo fixture {name}"))?;
            let work = root.join("work").join(actor.window);
            if let Some((name, text)) = actor.screen {
                // The dialog names the folder the agent runs in.
                let text = text.replace("{cwd}", &work.to_string_lossy());
                std::fs::write(root.join("fixtures").join(name), text)
                    .with_context(|| format!("cannot write the demo screen {name}"))?;
            }
            paths::ensure_private_dir(&work)?;
        }
        paths::ensure_private_dir(&root.join("work").join(NOTES))?;
        let socket = format!("agentpane-demo-{pid}");
        let tmux = Tmux::new(Socket::Name(socket.clone()));
        Ok(World { root, socket, tmux })
    }

    /// The demo's private world as `KEY=VALUE`: its HOME, state folder and agent roots (each
    /// named, so no agent root of the user's environment is ever written to).
    fn env(&self) -> Vec<String> {
        let p = |d: &str| self.root.join(d).to_string_lossy().into_owned();
        [
            ("HOME", p("home")),
            ("AGENTPANE_STATE_DIR", p("state")),
            ("XDG_STATE_HOME", p("state")),
            ("CLAUDE_CONFIG_DIR", p("claude")),
            ("CODEX_HOME", p("codex")),
            ("GEMINI_CLI_HOME", p("home")),
            ("QWEN_HOME", p("home/.qwen")),
            ("XDG_DATA_HOME", p("data")),
        ]
        .into_iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect()
    }

    /// `-e KEY=VALUE` flags giving panes (agents, watcher) the demo's private world.
    fn env_flags(&self) -> Vec<String> {
        self.env()
            .into_iter()
            .flat_map(|kv| ["-e".to_string(), kv])
            .collect()
    }

    fn cmd(&self, args: &[String]) -> Result<String> {
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        Ok(self.tmux.cmd(&refs)?)
    }

    /// Starts the server, its watcher (ending by itself `exit_after` seconds from now, if
    /// given) and the agents.
    fn start(&self, exit_after: Option<f64>) -> Result<()> {
        let exe = std::env::current_exe()?.to_string_lossy().into_owned();
        let alerts = self.root.join("alerts.jsonl");
        let mut args: Vec<String> = ["-f", "/dev/null", "new-session", "-d", "-s", "demo"]
            .into_iter()
            .map(String::from)
            .collect();
        args.extend(["-n", "watcher", "-x", "160", "-y", "40"].map(String::from));
        args.extend(self.env_flags());
        args.extend([exe, "-L".into(), self.socket.clone(), "watch".into()]);
        args.extend(["--poll", "1", "--no-notify", "--alert-command"].map(String::from));
        args.push(format!("tee -a {}", alerts.display()));
        if let Some(secs) = exit_after {
            args.extend(["--exit-after".into(), format!("{secs}")]);
        }
        self.cmd(&args)
            .context("cannot start the demo tmux server")?;
        self.cmd(&["set-option", "-g", "status-right", "#{@agentpane_status} "].map(String::from))?;
        self.cmd(
            &[
                "set-option",
                "-g",
                "window-status-format",
                "#I:#W#{?@agentpane_window_status, #{@agentpane_window_status},}",
            ]
            .map(String::from),
        )?;
        self.cmd(
            &[
                "set-option",
                "-g",
                "window-status-current-format",
                "#I:#W*#{?@agentpane_window_status, #{@agentpane_window_status},}",
            ]
            .map(String::from),
        )?;
        for actor in &ACTORS {
            let fixture = self.root.join("fixtures").join(actor.fixture.0);
            let mut args: Vec<String> = ["new-window", "-d", "-t", "demo:", "-n", actor.window]
                .map(String::from)
                .to_vec();
            args.push("-c".into());
            args.push(
                self.root
                    .join("work")
                    .join(actor.window)
                    .to_string_lossy()
                    .into_owned(),
            );
            args.extend(self.env_flags());
            args.push("-e".into());
            args.push(format!("AGENTPANE_FAKE_AGENT={}", fixture.display()));
            args.push("-e".into());
            args.push(format!("AGENTPANE_FAKE_START={}", actor.start));
            if actor.pace_ms > 0 {
                args.push("-e".into());
                args.push(format!("AGENTPANE_FAKE_PACE_MS={}", actor.pace_ms));
            }
            if let Some((name, _)) = actor.screen {
                args.extend(["-e".into(), "AGENTPANE_FAKE_DECIDE=1".into()]);
                args.push("-e".into());
                let screen = self.root.join("fixtures").join(name);
                args.push(format!("AGENTPANE_FAKE_SCREEN={}", screen.display()));
            }
            args.push(
                self.root
                    .join("bin")
                    .join(actor.agent)
                    .to_string_lossy()
                    .into_owned(),
            );
            self.cmd(&args)
                .with_context(|| format!("cannot start the demo agent `{}`", actor.window))?;
        }
        let notes = self.root.join("work").join(NOTES);
        let mut args: Vec<String> = ["new-window", "-d", "-t", "demo:", "-n", NOTES, "-c"]
            .map(String::from)
            .to_vec();
        args.push(notes.to_string_lossy().into_owned());
        args.extend(self.env_flags());
        args.extend(["-e".into(), "AGENTPANE_FAKE_AGENT=none".into()]);
        args.push(
            self.root
                .join("bin")
                .join("claude")
                .to_string_lossy()
                .into_owned(),
        );
        self.cmd(&args)
            .context("cannot start the demo's notes agent")?;
        Ok(())
    }

    /// The first line the notes agent received (what the routed text starts with).
    fn notes_head(&self) -> Option<String> {
        let text = self
            .tmux
            .cmd(&["capture-pane", "-p", "-J", "-t", &format!("demo:{NOTES}")])
            .ok()?;
        // Below the fake agent's own start line.
        let line = text
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty() && !l.starts_with("fake "))?;
        Some(line.chars().take(100).collect())
    }

    /// Runs `agentpane -L <demo socket> ARGS` in the demo's private world and nothing of the
    /// user's (`env -i`).
    fn cli(&self, args: &[&str]) -> Result<crate::exec::Output> {
        let exe = std::env::current_exe().context("cannot find the agentpane binary")?;
        let mut env = self.env();
        env.push(format!(
            "PATH={}",
            std::env::var("PATH").unwrap_or_default()
        ));
        let mut full: Vec<String> = vec!["-i".into()];
        full.extend(env);
        full.push(exe.to_string_lossy().into_owned());
        full.extend(["-L".into(), self.socket.clone()]);
        full.extend(args.iter().map(|a| a.to_string()));
        Ok(crate::exec::run(
            "env",
            &full,
            None,
            Duration::from_secs(15),
        )?)
    }

    /// Routes `ROUTED_FROM`'s answer into the notes pane with the review template, through
    /// the real `route` command (paste, verify, Enter); a one-line account of what happened.
    fn route_answer(&self) -> String {
        let src = format!("demo:{ROUTED_FROM}");
        let dst = format!("demo:{NOTES}");
        let args = ["route", &src, &dst, "--template", "review", "--json"];
        match self.cli(&args) {
            Ok(out) => {
                let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
                format!(
                    "↪ routed {ROUTED_FROM}'s answer into {NOTES} (review template): {}",
                    v["outcome"].as_str().unwrap_or("done")
                )
            }
            Err(e) => format!("↪ routing {ROUTED_FROM} → {NOTES} failed: {e:#}"),
        }
    }

    /// What `agentpane panes` says about the demo's agents now.
    fn panes(&self) -> String {
        match self.cli(&["panes"]) {
            Ok(out) => String::from_utf8_lossy(&out.stdout).into_owned(),
            Err(e) => format!("(`panes` failed: {e:#})\n"),
        }
    }

    /// The status segment and each window's glyph, as the watcher published them.
    fn view(&self) -> Option<String> {
        let status = self
            .tmux
            .show_option("@agentpane_status")
            .ok()?
            .unwrap_or_default();
        let windows = self
            .tmux
            .cmd(&[
                "list-windows",
                "-t",
                "demo",
                "-F",
                "#W:#{?@agentpane_window_status,#{@agentpane_window_status},·}",
            ])
            .ok()?;
        let windows: Vec<&str> = windows
            .lines()
            .filter(|l| !l.starts_with("watcher:"))
            .collect();
        let status = if status.is_empty() {
            "(empty)".into()
        } else {
            status
        };
        Some(format!("{status:<24} {}", windows.join("  ")))
    }

    /// The process id of the watcher (its window's pane).
    fn watcher_pid(&self) -> Option<u32> {
        self.tmux
            .cmd(&["display-message", "-p", "-t", "demo:watcher", "#{pane_pid}"])
            .ok()?
            .trim()
            .parse()
            .ok()
    }

    /// Ends the watcher by its process id (it saves its memory on the way out), kills the
    /// private server, waits (up to 5 s each) for their processes, and only then removes the
    /// temporary folder.
    fn teardown(&self) {
        if let Some(pid) = self
            .watcher_pid()
            .and_then(|p| libc::pid_t::try_from(p).ok())
        {
            // SAFETY: a plain signal to the watcher this demo started.
            unsafe { libc::kill(pid, libc::SIGTERM) };
            wait_gone(&[pid as u32]);
        }
        let pids: Vec<u32> = self
            .tmux
            .cmd(&["list-panes", "-a", "-F", "#{pane_pid}"])
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect();
        let socket = self.tmux.socket_path().ok();
        let _ = self.tmux.cmd(&["kill-server"]);
        wait_gone(&pids);
        // tmux leaves its socket file behind; this one is the demo's own (named after it).
        if let Some(path) = socket.filter(|p| p.ends_with(&format!("/{}", self.socket))) {
            use std::os::unix::fs::FileTypeExt;
            if std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_socket()) {
                let _ = std::fs::remove_file(&path);
            }
        }
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

fn show(world: &World, args: &DemoArgs, stop: &AtomicBool) -> Result<i32> {
    // A `--keep` demo runs until Enter: its watcher too (ended by its id at teardown).
    world.start((!args.keep).then(|| args.seconds + grace()))?;
    println!(
        "agentpane demo: {} simulated agents ({}) replaying real transcripts",
        ACTORS.len(),
        AGENTS.join(", ")
    );
    println!(
        "watch it live in another terminal:  tmux -L {} attach -t demo",
        world.socket
    );
    println!(
        "{INFRA} waits on a permission: decide it with  agentpane -L {} answer demo:{INFRA} allow",
        world.socket
    );
    if args.keep {
        println!("--keep: the demo runs until you press Enter (or Ctrl-C)");
    }
    println!();
    let enter = Arc::new(AtomicBool::new(false));
    if args.keep {
        let flag = Arc::clone(&enter);
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = std::io::stdin().read_line(&mut line);
            flag.store(true, Ordering::SeqCst);
        });
    }
    let started = Instant::now();
    let until = Duration::from_secs_f64(args.seconds);
    let mut last = String::new();
    let mut alerts_seen = 0usize;
    let mut routed = false;
    let routed_from = world
        .tmux
        .cmd(&[
            "display-message",
            "-p",
            "-t",
            &format!("demo:{ROUTED_FROM}"),
            "#{pane_id}",
        ])
        .ok()
        .map(|s| s.trim().to_string());
    while !stop.load(Ordering::SeqCst) && !enter.load(Ordering::SeqCst) {
        if !args.keep && started.elapsed() >= until {
            break;
        }
        let t = started.elapsed().as_secs_f64();
        if let Some(view) = world.view() {
            if view != last {
                println!("[{t:5.1}s] {view}");
                last = view;
            }
        }
        for (pane, alert) in new_alerts(&world.root.join("alerts.jsonl"), &mut alerts_seen) {
            println!("[{t:5.1}s] 🔔 alert: {alert}");
            if !routed && Some(&pane) == routed_from.as_ref() {
                routed = true;
                println!("[{t:5.1}s] {}", world.route_answer());
                if let Some(first) = world.notes_head() {
                    println!("         {NOTES} now reads: {first}");
                }
            }
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    println!();
    println!("what `agentpane panes` shows now:");
    for line in world.panes().lines() {
        println!("  {line}");
    }
    println!();
    println!(
        "demo over: stopping the private tmux server and removing {}",
        world.root.display()
    );
    Ok(exit::OK)
}

/// Waits up to 5 s for `pids` to end.
fn wait_gone(pids: &[u32]) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while pids.iter().any(|p| alive(*p)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// How long a timed demo's watcher outlives it: [`GRACE_ENV`] when it holds a positive number
/// of seconds, else [`GRACE`].
fn grace() -> f64 {
    std::env::var(GRACE_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s > 0.0)
        .unwrap_or(GRACE)
}

/// A process that exists and is not a zombie.
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            stat.rsplit_once(") ")
                .map(|(_, rest)| !rest.starts_with('Z'))
        })
        .unwrap_or(false)
}

/// Alerts the watcher's `--alert-command` appended since the last call: (pane id, one-line
/// text).
fn new_alerts(path: &Path, seen: &mut usize) -> Vec<(String, String)> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Vec::new();
    };
    // A line still being written (no newline yet) waits for the next call.
    let complete = text.rfind('\n').map_or("", |i| &text[..=i]);
    let lines: Vec<&str> = complete.lines().collect();
    let fresh = lines.iter().skip(*seen).filter_map(|l| {
        let v: serde_json::Value = serde_json::from_str(l).ok()?;
        let agent = v["agent"].as_str().unwrap_or("agent");
        let target = v["target"].as_str().unwrap_or("?");
        let state = v["state"].as_str().unwrap_or("?");
        let pane = v["pane"].as_str().unwrap_or_default().to_string();
        Some((pane, format!("{agent} in {target} is {state}")))
    });
    let out: Vec<(String, String)> = fresh.collect();
    *seen = lines.len();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{MetadataExt, PermissionsExt};

    /// The folder an earlier demo used, planted by another user before this one starts: as
    /// theirs (mode 0777), or as a symlink to a folder of the victim's.
    #[test]
    fn the_demo_never_uses_a_folder_someone_else_made() {
        let base = tempfile::tempdir().unwrap();
        let planted = base
            .path()
            .join(format!("agentpane-demo-{}", std::process::id()));
        let victim = base.path().join("victim");
        std::fs::create_dir(&victim).unwrap();
        for plant in ["theirs", "symlink"] {
            match plant {
                "theirs" => {
                    std::fs::create_dir(&planted).unwrap();
                    std::fs::set_permissions(&planted, std::fs::Permissions::from_mode(0o777))
                        .unwrap();
                    // Tests run as root: nobody (65534) is the other user.
                    std::os::unix::fs::chown(&planted, Some(65534), None).unwrap();
                }
                _ => std::os::unix::fs::symlink(&victim, &planted).unwrap(),
            }
            let world = World::create_in(base.path())
                .unwrap_or_else(|e| panic!("{plant}: the demo refused to start: {e:#}"));
            assert_ne!(world.root, planted, "{plant}");
            let meta = std::fs::symlink_metadata(&world.root).unwrap();
            assert!(meta.is_dir(), "{plant}");
            assert_eq!(meta.uid(), paths::euid(), "{plant}");
            assert_eq!(meta.mode() & 0o7777, 0o700, "{plant}");
            assert!(world.root.join("bin/claude").exists(), "{plant}");
            assert_eq!(std::fs::read_dir(&victim).unwrap().count(), 0, "{plant}");
            std::fs::remove_dir_all(&world.root).unwrap();
            let _ = std::fs::remove_dir(&planted);
            let _ = std::fs::remove_file(&planted);
        }
    }
}
