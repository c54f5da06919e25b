//! One released Claude Code in a private tmux server, pointed at the Anthropic stand-in: the
//! temporary config it needs to start offline (onboarding done, folders trusted, tools that
//! ask), start-up offers answered by keys, and the agentpane views the scenarios check.

use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::anthropic::Anthropic;
use crate::common::{Run, TmuxServer};
use crate::real::{self, Client, STEP};

/// Folders under `work/` that the client trusts (written before it starts: Claude Code
/// rewrites its `.claude.json` while it runs).
pub const FOLDERS: [&str; 3] = ["proj", "other", "src"];

/// A private tmux server, the stand-in, and one pinned client.
pub struct Rig {
    pub tmux: TmuxServer,
    pub api: Anthropic,
    pub client: Client,
    bin: PathBuf,
}

impl Rig {
    pub fn new(client: &Client) -> Rig {
        let tmux = TmuxServer::start();
        let api = Anthropic::start();
        let bin = client.bin_dir(tmux.path());
        let projects: serde_json::Map<String, Value> = FOLDERS
            .iter()
            .map(|f| {
                let dir = tmux.work(f).to_string_lossy().into_owned();
                (dir, json!({"hasTrustDialogAccepted": true}))
            })
            .collect();
        let config = json!({"hasCompletedOnboarding": true, "projects": projects});
        let claude = tmux.claude_dir();
        std::fs::write(claude.join(".claude.json"), config.to_string()).expect("write config");
        std::fs::write(
            claude.join("settings.json"),
            r#"{"permissions":{"defaultMode":"default"}}"#,
        )
        .expect("write settings");
        Rig {
            tmux,
            api,
            client: client.clone(),
            bin,
        }
    }

    /// Starts the client in a new window in `work/<folder>`, answers the start-up offers,
    /// and waits for its empty prompt; the pane id.
    pub fn start(&self, folder: &str) -> String {
        let mut env = self.api.client_env();
        env.push((
            "PATH".into(),
            format!("{}:/usr/local/bin:/usr/bin:/bin", self.bin.display()),
        ));
        let program = self.bin.join("claude");
        let pane = self.tmux.new_window(
            program.to_str().expect("utf-8 path"),
            &self.tmux.work(folder),
            &env,
        );
        self.wait_ready(&pane);
        pane
    }

    /// Waits until the pane shows Claude Code's input box, answering one-time offers
    /// (auto mode, fullscreen renderer) with "no" on the way.
    pub fn wait_ready(&self, pane: &str) {
        let end = Instant::now() + STEP;
        loop {
            let s = real::screen(&self.tmux, pane);
            if s.contains("Make auto mode your default") || s.contains("fullscreen") {
                // The last option is always the "keep things as they are" answer.
                for _ in 0..3 {
                    real::press(&self.tmux, pane, "Down");
                }
                std::thread::sleep(Duration::from_millis(300));
                real::press(&self.tmux, pane, "Enter");
                std::thread::sleep(Duration::from_millis(800));
                continue;
            }
            if s.contains("? for shortcuts") {
                return;
            }
            assert!(
                Instant::now() < end,
                "{}: no input box after {STEP:?}; the screen:\n{s}",
                self.client.label()
            );
            std::thread::sleep(Duration::from_millis(300));
        }
    }

    /// Types a prompt as a person does.
    pub fn ask(&self, pane: &str, prompt: &str) {
        real::type_prompt(&self.tmux, pane, prompt);
    }

    pub fn press(&self, pane: &str, key: &str) {
        real::press(&self.tmux, pane, key);
    }

    pub fn screen(&self, pane: &str) -> String {
        real::screen(&self.tmux, pane)
    }

    /// Waits for the screen to satisfy `pred`.
    pub fn wait_screen(&self, pane: &str, what: &str, pred: impl Fn(&str) -> bool) -> String {
        real::wait_screen(&self.tmux, pane, STEP, &self.what(what), pred)
    }

    /// `agentpane ARGS` against this server.
    pub fn agentpane(&self, args: &[&str]) -> Run {
        self.tmux.agentpane(args)
    }

    /// This pane's row of `panes --json`.
    pub fn report(&self, pane: &str) -> Value {
        let run = self.agentpane(&["panes", "--json"]);
        assert_eq!(
            run.code,
            0,
            "{}: panes --json: {run:?}",
            self.client.label()
        );
        run.json()
            .as_array()
            .into_iter()
            .flatten()
            .find(|r| r["pane_id"] == pane)
            .cloned()
            .unwrap_or(Value::Null)
    }

    /// Polls `panes --json` until this pane's row satisfies `pred`; the row.
    pub fn wait_report(&self, pane: &str, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
        let end = Instant::now() + STEP;
        loop {
            let row = self.report(pane);
            if pred(&row) {
                return row;
            }
            assert!(
                Instant::now() < end,
                "{}: timed out waiting for {what}; the row: {row}\nthe screen:\n{}",
                self.client.label(),
                self.screen(pane)
            );
            std::thread::sleep(Duration::from_millis(300));
        }
    }

    /// Waits until the pane reads `state` (and, when given, a reason containing `reason`).
    pub fn wait_state(&self, pane: &str, state: &str, reason: Option<&str>) -> Value {
        let what = format!("{pane} to read {state} {reason:?}");
        self.wait_report(pane, &what, |r| {
            r["state"] == state
                && match reason {
                    Some(want) => r["reason"].as_str().is_some_and(|g| g.contains(want)),
                    None => true,
                }
        })
    }

    /// With `AGENTPANE_REAL_DUMP=DIR`, copies what the client wrote so far (session records,
    /// transcripts) to `DIR/<version>/<label>/`, to record fixtures from.
    pub fn dump(&self, label: &str) {
        let Some(dir) = std::env::var_os("AGENTPANE_REAL_DUMP") else {
            return;
        };
        let dest = PathBuf::from(dir).join(&self.client.version).join(label);
        std::fs::create_dir_all(&dest).expect("create dump dir");
        let claude = self.tmux.claude_dir();
        let _ = std::process::Command::new("cp")
            .args(["-r", "--"])
            .arg(claude.join("sessions"))
            .arg(claude.join("projects"))
            .arg(&dest)
            .status();
    }

    /// `what`, prefixed with the client.
    pub fn what(&self, what: &str) -> String {
        format!("{}: {what}", self.client.label())
    }
}

/// Runs `scenario` for every pinned Claude Code, each version in its own thread (the clients
/// mostly wait on each other's I/O), and fails naming every version that failed. Scenarios
/// run one at a time: a handful of real clients is what a loaded 2-core machine takes.
pub fn each_client(scenario: fn(&Client)) {
    static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let threads: Vec<_> = real::clients("claude")
        .into_iter()
        .map(|client| {
            let label = client.label();
            let thread = std::thread::Builder::new()
                .name(label.clone())
                .spawn(move || scenario(&client))
                .expect("spawn scenario thread");
            (label, thread)
        })
        .collect();
    let failed: Vec<String> = threads
        .into_iter()
        .filter_map(|(label, t)| t.join().is_err().then_some(label))
        .collect();
    assert!(failed.is_empty(), "failed for {failed:?} (see above)");
}

/// Keeps checking for `period` that the alerts (as `alerts` reads them) number `n`.
pub fn alerts_stay(
    period: Duration,
    what: &str,
    n: usize,
    alerts: impl Fn() -> Vec<serde_json::Value>,
) {
    let end = Instant::now() + period;
    while Instant::now() < end {
        let now = alerts();
        assert_eq!(now.len(), n, "{what}: {now:?}");
        std::thread::sleep(Duration::from_millis(250));
    }
}
