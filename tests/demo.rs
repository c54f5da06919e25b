//! `agentpane demo` end to end: a timed show, and a `--keep` one driven from outside as a
//! newcomer would (its waiting pane decided by `answer`, the picker and the answer key's
//! command; its watcher alive until it ends; every agent kind that finishes a turn alerts).

mod common;

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{agentpane_bin, wait_until, wait_until_else};

/// Long enough for every demo agent's replay (the slowest ends about 20 s in) on a loaded
/// machine.
const SHOW: Duration = Duration::from_secs(90);

/// Runs `agentpane demo --seconds N` in a private temporary folder; its stdout.
fn run_demo(seconds: &str) -> (String, tempfile::TempDir) {
    let tmp = tempfile::tempdir().unwrap();
    let world = tempfile::tempdir().unwrap();
    let out = common::agentpane_in(world.path())
        .env("TMPDIR", tmp.path())
        .args(["demo", "--seconds", seconds])
        .stdin(Stdio::null())
        .output()
        .expect("run demo");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (stdout, tmp)
}

#[test]
fn demo_runs_one_pane_of_every_agent_kind_and_lists_them() {
    let (stdout, tmp) = run_demo("3");
    assert!(
        stdout.contains(
            "(claude, codex, gemini, opencode, qwen, copilot, kilo, pi, kimi, droid, cline)"
        ),
        "{stdout}"
    );
    // The closing `panes` table: one row per agent pane, each with its own agent.
    let table: Vec<&str> = stdout
        .split("what `agentpane panes` shows now:")
        .nth(1)
        .expect("the closing panes table")
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("demo:"))
        .collect();
    let row = |agent: &str| -> Vec<&str> {
        table
            .iter()
            .find(|l| l.split_whitespace().nth(1) == Some(agent))
            .unwrap_or_else(|| panic!("no {agent} row: {stdout}"))
            .split_whitespace()
            .collect()
    };
    for agent in [
        "claude", "codex", "gemini", "opencode", "qwen", "copilot", "kilo", "pi", "kimi", "droid",
    ] {
        row(agent);
    }
    // Every pane shows real words: no replayed redaction marker reaches a newcomer.
    assert!(!stdout.contains("REDACTED"), "{stdout}");
    // Qwen Code replays a first answered turn at start, then a tool turn.
    let r = row("qwen");
    assert!(["working", "your-turn"].contains(&r[2]), "qwen: {stdout}");
    assert!(
        r.join(" ").contains("retry_upload"),
        "qwen's own answer: {stdout}"
    );
    // Gemini, opencode and Kilo replay a first answered turn at start, then a tool turn:
    // whichever the moment, the recorded first answer (or the tool turn's) is their last one.
    // pi, Kimi Code and droid replay their first answered turn.
    for (agent, answers) in [
        ("gemini", &["The index is rebuilt by"][..]),
        (
            "opencode",
            &["The release profile sets", "Benchmark rerun:"][..],
        ),
        (
            "kilo",
            &["The release profile sets", "Benchmark rerun:"][..],
        ),
        ("pi", &["The flaky test waits on"][..]),
        ("kimi", &["The nightly job spends"][..]),
        ("droid", &["Here is the answer."][..]),
    ] {
        let r = row(agent);
        assert!(
            ["working", "your-turn"].contains(&r[2]),
            "{agent}: {stdout}"
        );
        let line = r.join(" ");
        assert!(
            answers.iter().any(|a| line.contains(a)),
            "{agent}'s own answer: {stdout}"
        );
    }
    assert_eq!(
        std::fs::read_dir(tmp.path()).unwrap().count(),
        0,
        "temp folder removed"
    );
}

#[test]
fn demo_shows_states_and_an_alert_then_cleans_up() {
    let (stdout, tmp) = run_demo("16");
    assert!(stdout.contains("attach -t demo"), "{stdout}");
    assert!(stdout.contains('⚡') && stdout.contains('●'), "{stdout}");
    assert!(
        stdout.contains("alert: claude in demo:1.0 is your-turn"),
        "{stdout}"
    );
    assert!(stdout.contains('⏸'), "the permission wait shows: {stdout}");
    assert!(
        stdout.contains("routed api's answer into notes (review template): delivered"),
        "{stdout}"
    );
    assert!(
        stdout.contains("notes now reads: Review the answer below from claude"),
        "{stdout}"
    );
    assert!(
        stdout.contains("avatar_url()") && !stdout.contains("REDACTED"),
        "the routed answer is the session's own words: {stdout}"
    );
    let socket = stdout
        .split_whitespace()
        .find(|w| w.starts_with("agentpane-demo-"))
        .expect("socket name");
    // tmux leaves a killed server's socket file behind: the demo removes its own.
    let dir = std::env::var("TMUX_TMPDIR").unwrap_or_else(|_| "/tmp".into());
    // SAFETY: getuid has no preconditions.
    let file = format!("{dir}/tmux-{}/{socket}", unsafe { libc::getuid() });
    assert!(
        !std::path::Path::new(&file).exists(),
        "{file} is left behind"
    );
    let gone = Command::new("tmux")
        .args(["-L", socket, "list-sessions"])
        .output()
        .unwrap();
    assert!(!gone.status.success(), "the demo server was killed");
    assert_eq!(
        std::fs::read_dir(tmp.path()).unwrap().count(),
        0,
        "temp folder removed"
    );
}

/// A `--keep` demo running in a private temporary folder, its stdout read as it comes; the
/// watcher of a timed demo would outlive it by 1 s (`AGENTPANE_DEMO_GRACE`).
struct Demo {
    child: Child,
    stdin: Option<ChildStdin>,
    out: Arc<Mutex<String>>,
    tmp: tempfile::TempDir,
    /// The HOME and state the demo command itself runs with (not the user's).
    _world: tempfile::TempDir,
    socket: String,
    root: PathBuf,
    /// When the demo said its socket (its watcher had started by then).
    started: Instant,
}

impl Demo {
    fn start() -> Demo {
        let tmp = tempfile::tempdir().unwrap();
        let world = tempfile::tempdir().unwrap();
        let mut child = common::agentpane_in(world.path())
            .env("TMPDIR", tmp.path())
            .env("AGENTPANE_DEMO_GRACE", "1")
            .args(["demo", "--keep", "--seconds", "1"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start the demo");
        let stdin = child.stdin.take();
        let out = Arc::new(Mutex::new(String::new()));
        let mut stdout = child.stdout.take().unwrap();
        let sink = Arc::clone(&out);
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = stdout.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        let mut demo = Demo {
            child,
            stdin,
            out,
            tmp,
            _world: world,
            socket: String::new(),
            root: PathBuf::new(),
            started: Instant::now(),
        };
        wait_until(common::DEADLINE, "the demo's socket", || {
            demo.socket = demo
                .stdout()
                .split_whitespace()
                .find(|w| w.starts_with("agentpane-demo-"))
                .unwrap_or_default()
                .to_string();
            !demo.socket.is_empty()
        });
        // The socket is printed once the watcher started: its clock starts no later.
        demo.started = Instant::now();
        demo.root = std::fs::read_dir(demo.tmp.path())
            .unwrap()
            .filter_map(Result::ok)
            .map(|e| e.path())
            .find(|p| p.join("state").is_dir())
            .expect("the demo's folder");
        demo
    }

    fn stdout(&self) -> String {
        self.out.lock().unwrap().clone()
    }

    /// The demo's private world (as the demo gives its panes), for commands run in it.
    fn env(&self) -> Vec<(String, PathBuf)> {
        let p = |d: &str| self.root.join(d);
        [
            ("HOME", p("home")),
            ("AGENTPANE_STATE_DIR", p("state")),
            ("XDG_STATE_HOME", p("state")),
            ("CLAUDE_CONFIG_DIR", p("claude")),
            ("CODEX_HOME", p("codex")),
        ]
        .map(|(k, v)| (k.to_string(), v))
        .to_vec()
    }

    fn tmux(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .args(["-L", &self.socket])
            .args(args)
            .output()
            .expect("tmux");
        String::from_utf8_lossy(&out.stdout).trim_end().to_string()
    }

    /// `agentpane -L <demo socket> ARGS` in the demo's world, as a newcomer runs it.
    fn agentpane(&self, args: &[&str]) -> Output {
        common::agentpane_with_env(&[])
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .envs(self.env())
            .args(["-L", &self.socket])
            .args(args)
            .output()
            .expect("run agentpane")
    }

    /// `agentpane ARGS` in a new window `name` of the demo's server.
    fn window(&self, name: &str, args: &[&str]) -> String {
        let mut cmd: Vec<String> = ["new-window", "-d", "-P", "-F", "#{pane_id}", "-t", "demo:"]
            .map(String::from)
            .to_vec();
        cmd.extend(["-n".into(), name.into()]);
        for (k, v) in self.env() {
            cmd.extend(["-e".into(), format!("{k}={}", v.display())]);
        }
        cmd.push(agentpane_bin().into());
        cmd.extend(args.iter().map(|a| a.to_string()));
        let refs: Vec<&str> = cmd.iter().map(String::as_str).collect();
        self.tmux(&refs)
    }

    fn screen(&self, pane: &str) -> String {
        self.tmux(&["capture-pane", "-p", "-t", pane])
    }

    /// Waits until the watcher sees the infra pane in `state`.
    fn wait_infra(&self, state: &str) {
        wait_until_else(
            SHOW,
            &format!("the infra pane {state}"),
            || {
                self.tmux(&[
                    "show-options",
                    "-pqv",
                    "-t",
                    "demo:infra",
                    "@agentpane_pane_status",
                ]) == state
            },
            || self.stdout(),
        );
    }

    /// Presses `key` in the picker in `pick`; checks it says `said` (not refused, the dialog
    /// closed) and the infra pane's turn ended.
    fn decide_in(&self, pick: &str, key: &str, said: &str) {
        self.tmux(&["send-keys", "-t", pick, key]);
        wait_until_else(
            common::DEADLINE,
            "the picker's answer",
            || {
                let s = self.screen(pick);
                s.contains(said) || s.contains("refused")
            },
            || self.screen(pick),
        );
        let screen = self.screen(pick);
        assert!(!screen.contains("refused"), "{screen}");
        assert!(!screen.contains("still on screen"), "{screen}");
        self.wait_infra("your-turn");
    }

    /// The watcher's process id.
    fn watcher_pid(&self) -> u32 {
        let pid = self.tmux(&["display-message", "-p", "-t", "demo:watcher", "#{pane_pid}"]);
        pid.parse()
            .unwrap_or_else(|_| panic!("no watcher pid: {pid:?}"))
    }

    /// Presses Enter in the demo and waits for it to end; its whole stdout.
    fn finish(mut self) -> String {
        let mut stdin = self.stdin.take().unwrap();
        stdin.write_all(b"\n").unwrap();
        drop(stdin);
        let end = Instant::now() + common::DEADLINE;
        while self.child.try_wait().unwrap().is_none() {
            assert!(
                Instant::now() < end,
                "the demo did not end: {}",
                self.stdout()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        // Its stdout closes with it.
        wait_until(common::DEADLINE, "the demo's last line", || {
            self.stdout().contains("demo over")
        });
        self.stdout()
    }
}

impl Drop for Demo {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
            let _ = Command::new("tmux")
                .args(["-L", &self.socket, "kill-server"])
                .output();
        }
    }
}

/// A process that exists and is not a zombie.
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| s.rsplit_once(") ").map(|(_, rest)| !rest.starts_with('Z')))
        .unwrap_or(false)
}

#[test]
fn demo_keep_runs_its_watcher_until_it_ends() {
    let demo = Demo::start();
    wait_until(common::DEADLINE, "the status line", || {
        !demo
            .tmux(&["show-options", "-gqv", "@agentpane_status"])
            .is_empty()
    });
    let watcher = demo.watcher_pid();
    // Past the exit time a timed demo gives its watcher (1 s + the 1 s grace), with margin.
    let past = Duration::from_secs(6);
    std::thread::sleep(past.saturating_sub(demo.started.elapsed()));
    assert!(alive(watcher), "the watcher ended: {}", demo.stdout());
    let status = demo.tmux(&["show-options", "-gqv", "@agentpane_status"]);
    assert!(!status.is_empty(), "the status line went blank");
    let root = demo.root.clone();
    let out = demo.finish();
    assert!(!alive(watcher), "the watcher outlived the demo: {out}");
    assert!(!root.exists(), "the demo's folder was removed");
}

#[test]
fn demo_codex_pane_alerts_when_its_turn_ends() {
    let demo = Demo::start();
    wait_until_else(
        SHOW,
        "the codex pane's alert",
        || {
            demo.stdout()
                .contains("alert: codex in demo:2.0 is your-turn")
        },
        || demo.stdout(),
    );
    demo.finish();
}

#[test]
fn demo_waiting_pane_is_decided_by_answer() {
    let demo = Demo::start();
    demo.wait_infra("waiting");
    let out = demo.agentpane(&["answer", "demo:infra", "allow", "--json"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["outcome"], "answered", "{v:#}");
    assert_eq!(v["keys"], serde_json::json!(["1"]), "{v:#}");
    assert_eq!(v["request"]["tool"], "Bash", "{v:#}");
    assert_eq!(
        v["request"]["summary"], "mix phx.server 2>&1 | head -80",
        "{v:#}"
    );
    // The agent took the key: the dialog closed and its turn ended.
    assert_eq!(v["closed"], true, "{v:#}");
    demo.wait_infra("your-turn");
    // The demo says how, with its own socket.
    let how = format!("agentpane -L {} answer demo:infra allow", demo.socket);
    assert!(demo.stdout().contains(&how), "{}", demo.stdout());
    demo.finish();
}

#[test]
fn demo_waiting_pane_is_decided_by_the_pickers_n() {
    let demo = Demo::start();
    demo.wait_infra("waiting");
    let pick = demo.window("pick", &["pick"]);
    wait_until_else(
        common::DEADLINE,
        "the waiting pane in the picker",
        || demo.screen(&pick).contains("mix phx.server"),
        || demo.screen(&pick),
    );
    // The most urgent row (the waiting one) is selected: n shows what it asks, n denies.
    demo.tmux(&["send-keys", "-t", &pick, "n"]);
    wait_until_else(
        common::DEADLINE,
        "what it asks",
        || demo.screen(&pick).contains("y allow once · n deny"),
        || demo.screen(&pick),
    );
    demo.decide_in(&pick, "n", "denied");
    demo.finish();
}

#[test]
fn demo_waiting_pane_is_decided_by_the_answer_keys_command() {
    let demo = Demo::start();
    demo.wait_infra("waiting");
    // What the plugin's answer key runs (without the popup: no client is attached).
    let pick = demo.window("decide", &["pick", "--decide"]);
    wait_until_else(
        common::DEADLINE,
        "what the waiting pane asks",
        || {
            let s = demo.screen(&pick);
            s.contains("asks (Bash): y allow once") && s.contains("mix phx.server 2>&1 | head -80")
        },
        || demo.screen(&pick),
    );
    demo.decide_in(&pick, "y", "allowed once");
    demo.finish();
}
