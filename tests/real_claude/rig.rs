//! One released Claude Code in a private tmux server, pointed at the Anthropic stand-in
//! (started offline by `tests/real/start.rs`), and the agentpane views the scenarios check.

use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::{FakeAgent, Run, TmuxServer};
use crate::real::anthropic::Anthropic;
use crate::real::{self, start, Client, STEP};

/// Folders under `work/` that the client trusts (written before it starts: Claude Code
/// rewrites its `.claude.json` while it runs).
pub const FOLDERS: [&str; 3] = ["proj", "other", "src"];

/// A private tmux server, the stand-in, and one pinned client.
pub struct Rig {
    pub tmux: TmuxServer,
    pub api: Anthropic,
    pub client: Client,
}

impl Rig {
    pub fn new(client: &Client) -> Rig {
        let tmux = TmuxServer::start();
        let api = Anthropic::start();
        start::claude_config(&tmux, &FOLDERS);
        Rig {
            tmux,
            api,
            client: client.clone(),
        }
    }

    /// [`Rig::new`] with a stand-in that reports plan windows
    /// ([`Anthropic::start_with_plan`]).
    pub fn with_plan(client: &Client, windows: &[(&str, f64, i64)]) -> Rig {
        let tmux = TmuxServer::start();
        let api = Anthropic::start_with_plan(windows);
        start::claude_config(&tmux, &FOLDERS);
        Rig {
            tmux,
            api,
            client: client.clone(),
        }
    }

    /// Starts the client in a new window in `work/<folder>`, answers the start-up offers,
    /// and waits for its empty prompt; the pane id.
    pub fn start(&self, folder: &str) -> String {
        start::claude(&self.tmux, &self.client, &self.api, folder)
    }

    /// A fake Claude Code in `work/src` replaying a real transcript: a neighbour with an
    /// answer to route from, or a destination to route to; its pane id.
    pub fn answered_neighbour(&self) -> String {
        self.tmux.spawn(
            &FakeAgent::claude()
                .fixture("claude/marot-spotter/short.jsonl")
                .start_lines(10_000)
                .in_dir("src"),
        )
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
    /// transcripts) and agentpane's state folder (the watcher's snapshot and log) to
    /// `DIR/<version>/<label>/`, to record fixtures from.
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
            .arg(self.tmux.state_dir())
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
