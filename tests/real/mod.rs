//! Harness for the real-client suite: the released agent clients (pinned in
//! `tests/real/clients.txt`, installed by `scripts/install-clients.sh`) run real turns in a
//! private tmux server against a stand-in for their model API on 127.0.0.1 ([`http`]).
//!
//! A test asks for its clients with [`clients`]: each pinned version, installed into the
//! cache on first use ([`install`]). A client that is missing and cannot be installed (no
//! `npm`, a failed install) fails the test naming what is missing: a test that did not run
//! never reads as passed. The opt-out is explicit: `AGENTPANE_SKIP_REAL=1` builds these tests
//! as ignored (`build.rs`), and cargo counts them so. `AGENTPANE_CLIENTS_FILE` replaces the
//! pin list (the drift check runs the same tests against the newest releases that way).
//!
//! Prompts are typed as a person types: the text, a short pause, then Enter.

#![allow(dead_code)]

pub mod anthropic;
pub mod gemini;
pub mod http;
pub mod install;
pub mod kimi;
pub mod openai;
pub mod openai_chat;
pub mod qwen;
pub mod scenario;
pub mod start;
pub mod usage;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::common::{Run, TmuxServer};

/// One installed release of an agent client.
#[derive(Debug, Clone)]
pub struct Client {
    /// `claude`, `codex`, `gemini`, `opencode`.
    pub agent: String,
    pub version: String,
    /// The npm prefix it was installed into.
    pub dir: PathBuf,
}

impl Client {
    /// `claude 2.1.197`, for messages.
    pub fn label(&self) -> String {
        format!("{} {}", self.agent, self.version)
    }

    /// The program a user runs. Claude Code and opencode: their platform package's native
    /// binary (the one their postinstall copies); the others start from their npm `bin`, as a
    /// user's shell does (Kilo's then runs the `bin/.kilo` its postinstall left).
    pub fn program(&self) -> PathBuf {
        let modules = self.dir.join("node_modules");
        let native = |candidates: &[&str]| {
            candidates
                .iter()
                .map(|rel| modules.join(rel))
                .find(|p| p.is_file())
        };
        let found = match self.agent.as_str() {
            "claude" => native(&[
                "@anthropic-ai/claude-code-linux-x64/claude",
                "@anthropic-ai/claude-code-linux-arm64/claude",
                "@anthropic-ai/claude-code-linux-x64-musl/claude",
                "@anthropic-ai/claude-code-linux-arm64-musl/claude",
            ]),
            "opencode" => native(&[
                "opencode-linux-x64/bin/opencode",
                "opencode-linux-x64-baseline/bin/opencode",
                "opencode-linux-arm64/bin/opencode",
            ]),
            agent => native(&[&format!(".bin/{agent}")]),
        };
        found.unwrap_or_else(|| panic!("{}: no program under {}", self.label(), modules.display()))
    }

    /// A folder holding only this client's program under its own name, to put first on a
    /// pane's `PATH`.
    pub fn bin_dir(&self, scratch: &Path) -> PathBuf {
        let dir = scratch.join(format!("bin-{}-{}", self.agent, self.version));
        if !dir.exists() {
            std::fs::create_dir_all(&dir).expect("create client bin dir");
            std::os::unix::fs::symlink(self.program(), dir.join(&self.agent))
                .expect("link client program");
        }
        dir
    }
}

/// Where `scripts/install-clients.sh` puts the clients.
pub fn clients_root() -> PathBuf {
    match std::env::var_os("AGENTPANE_CLIENTS") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(std::env::var_os("HOME").unwrap_or_default())
            .join(".cache/agentpane-clients"),
    }
}

/// The pin list: `AGENTPANE_CLIENTS_FILE`, else `tests/real/clients.txt`.
pub fn pin_list() -> PathBuf {
    std::env::var_os("AGENTPANE_CLIENTS_FILE")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/real/clients.txt"))
}

/// The pinned `(agent, version)` pairs of the [`pin_list`].
pub fn pinned() -> Vec<(String, String)> {
    let file = pin_list();
    let text = std::fs::read_to_string(&file)
        .unwrap_or_else(|e| panic!("read the client pin list {}: {e}", file.display()));
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .filter_map(|l| {
            let mut words = l.split_whitespace();
            Some((words.next()?.to_string(), words.next()?.to_string()))
        })
        .collect()
}

/// The pinned releases of `agent`, installed (on first use, see [`install`]) and read into
/// the page cache. Panics naming what is missing when they are not there and cannot be.
pub fn clients(agent: &str) -> Vec<Client> {
    let found = installed(agent);
    for client in &found {
        warm(&client.dir);
    }
    found
}

/// [`clients`] without warming them.
pub fn installed(agent: &str) -> Vec<Client> {
    let root = clients_root();
    let pins: Vec<Client> = pinned()
        .into_iter()
        .filter(|(a, _)| a == agent)
        .map(|(agent, version)| Client {
            dir: root.join(format!("{agent}@{version}+scripts")),
            agent,
            version,
        })
        .collect();
    assert!(
        !pins.is_empty(),
        "real-client suite: the pin list {} names no {agent}",
        pin_list().display()
    );
    let there = |c: &Client| c.dir.join(".installed").is_file();
    let missing: Vec<String> = pins
        .iter()
        .filter(|c| !there(c))
        .map(Client::label)
        .collect();
    if missing.is_empty() {
        return pins;
    }
    if let Err(why) = install::ensure(&root, &pin_list()) {
        panic!(
            "real-client suite: {} not installed in {} and cannot be installed: {why}.\n\
             Install node and npm (the suite then installs the pinned clients itself on first \
             use), or run scripts/install-clients.sh; or set AGENTPANE_SKIP_REAL=1 to leave \
             the real-client tests out (cargo then counts them as ignored).",
            missing.join(", "),
            root.display()
        );
    }
    if let Some(client) = pins.iter().find(|c| !there(c)) {
        panic!(
            "real-client suite: scripts/install-clients.sh finished, but {} is not in {}",
            client.label(),
            client.dir.display()
        );
    }
    pins
}

/// Reads every file of a client's install, once per test process, so that the page cache
/// holds it before the client starts. A client cold on a slow disk pages its 200–400 MB
/// program in at random on its first start and can draw nothing for over a minute (seen on
/// a fresh CI machine whose client cache came back from disk); read in order, the same
/// bytes take seconds, and a later start is as quick as the scenarios expect.
fn warm(dir: &Path) {
    static WARMED: Mutex<BTreeSet<PathBuf>> = Mutex::new(BTreeSet::new());
    let mut warmed = WARMED.lock().unwrap_or_else(|e| e.into_inner());
    if !warmed.insert(dir.to_path_buf()) {
        return;
    }
    let started = Instant::now();
    let mut bytes = 0;
    let files = walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file());
    for file in files {
        if let Ok(mut f) = std::fs::File::open(file.path()) {
            bytes += std::io::copy(&mut f, &mut std::io::sink()).unwrap_or(0);
        }
    }
    if started.elapsed() > Duration::from_secs(2) {
        eprintln!(
            "real-client suite: read {} ({} MB) into the page cache in {:.1?}",
            dir.display(),
            bytes >> 20,
            started.elapsed()
        );
    }
}

/// Waits until a client just started in `pane` draws anything at all, for up to
/// [`START`]; how long a process takes to come up is the machine's business, what it then
/// shows is the scenario's.
pub fn wait_drawn(tmux: &TmuxServer, pane: &str, label: &str) {
    wait_screen(
        tmux,
        pane,
        START,
        &format!("{label} to draw its screen"),
        |s| !s.trim().is_empty(),
    );
}

/// Types `text` into `pane` as a person does: the text, a short pause, then Enter.
pub fn type_prompt(tmux: &TmuxServer, pane: &str, text: &str) {
    tmux.tmux(&["send-keys", "-t", pane, "-l", text]);
    std::thread::sleep(Duration::from_millis(400));
    tmux.tmux(&["send-keys", "-t", pane, "Enter"]);
}

/// Presses one key (tmux key name, e.g. `Escape`, `Down`, `1`).
pub fn press(tmux: &TmuxServer, pane: &str, key: &str) {
    tmux.tmux(&["send-keys", "-t", pane, key]);
}

/// The pane's screen as a person sees it (no colours, wrapped lines joined).
pub fn screen(tmux: &TmuxServer, pane: &str) -> String {
    String::from_utf8_lossy(
        &tmux
            .try_tmux(&["capture-pane", "-p", "-J", "-t", pane])
            .stdout,
    )
    .into_owned()
}

/// Waits until the screen satisfies `pred`; panics with the last screen after `deadline`.
pub fn wait_screen(
    tmux: &TmuxServer,
    pane: &str,
    deadline: Duration,
    what: &str,
    pred: impl Fn(&str) -> bool,
) -> String {
    let end = Instant::now() + deadline;
    loop {
        let s = screen(tmux, pane);
        if pred(&s) {
            return s;
        }
        if Instant::now() > end {
            panic!("timed out after {deadline:?} waiting for {what}; the screen:\n{s}");
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Polls `probe` until it returns `Some`; panics naming `what` after `deadline`.
pub fn wait_for<T>(deadline: Duration, what: &str, mut probe: impl FnMut() -> Option<T>) -> T {
    let end = Instant::now() + deadline;
    loop {
        if let Some(v) = probe() {
            return v;
        }
        if Instant::now() > end {
            panic!("timed out after {deadline:?} waiting for {what}");
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// A deadline for a real client's step on a loaded 2-core machine.
pub const STEP: Duration = Duration::from_secs(60);

/// How long a client may take to draw its first screen (see [`wait_drawn`]).
pub const START: Duration = Duration::from_secs(180);

/// The rows of `agentpane panes --json` on `tmux`.
pub fn panes(tmux: &TmuxServer) -> Vec<serde_json::Value> {
    let run = tmux.agentpane(&["panes", "--json"]);
    assert_eq!(run.code, 0, "panes --json: {run:?}");
    run.json().as_array().cloned().unwrap_or_default()
}

/// `answer PANE CHOICE --request FP --json`: the answer held to the request with fingerprint
/// `fp`.
pub fn answer(tmux: &TmuxServer, pane: &str, choice: &str, fp: &str) -> Run {
    tmux.agentpane(&["answer", pane, choice, "--request", fp, "--json"])
}

/// `answer PANE allow --always --request FP --json`: allowed, and not asked again where the
/// dialog offers that.
pub fn answer_always(tmux: &TmuxServer, pane: &str, fp: &str) -> Run {
    tmux.agentpane(&[
        "answer",
        pane,
        "allow",
        "--always",
        "--request",
        fp,
        "--json",
    ])
}

/// `pane`'s row of `panes --json` (`Null` when it is not listed).
pub fn pane_row(tmux: &TmuxServer, pane: &str) -> serde_json::Value {
    panes(tmux)
        .into_iter()
        .find(|r| r["pane_id"] == pane)
        .unwrap_or_default()
}

/// Polls `panes --json` until `pane`'s row satisfies `pred`; the row. Panics with the last
/// row and the screen after [`STEP`].
pub fn wait_row(
    tmux: &TmuxServer,
    pane: &str,
    what: &str,
    pred: impl Fn(&serde_json::Value) -> bool,
) -> serde_json::Value {
    let end = Instant::now() + STEP;
    loop {
        let row = pane_row(tmux, pane);
        if pred(&row) {
            return row;
        }
        if Instant::now() > end {
            panic!(
                "timed out after {STEP:?} waiting for {what}; the row: {row:#}\nthe screen:\n{}",
                screen(tmux, pane)
            );
        }
        std::thread::sleep(Duration::from_millis(300));
    }
}

/// `agentpane resolve PANE --json` on `tmux`.
pub fn resolve(tmux: &TmuxServer, pane: &str) -> serde_json::Value {
    let run = tmux.agentpane(&["resolve", pane, "--json"]);
    assert_eq!(run.code, 0, "{run:?}");
    run.json()
}

/// Waits until `pane` reads `state` with `reason` (`None`: no reason); the resolution. Panics
/// with the last resolution and the screen after [`STEP`].
pub fn wait_state(
    tmux: &TmuxServer,
    pane: &str,
    state: &str,
    reason: Option<&str>,
) -> serde_json::Value {
    wait_resolved(tmux, pane, STEP, &format!("{state} {reason:?}"), |r| {
        r["state"] == state
            && match reason {
                Some(want) => r["reason"] == want,
                None => r["reason"].is_null(),
            }
    })
}

/// Polls `resolve PANE` until the resolution satisfies `accept`; it. Panics after `deadline`
/// naming `what` was awaited, with the last resolution and the screen.
pub fn wait_resolved(
    tmux: &TmuxServer,
    pane: &str,
    deadline: Duration,
    what: &str,
    accept: impl Fn(&serde_json::Value) -> bool,
) -> serde_json::Value {
    let mut last = serde_json::Value::Null;
    let found = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        wait_for(deadline, &format!("{pane} to read {what}"), || {
            let r = resolve(tmux, pane);
            let ok = accept(&r);
            last = r.clone();
            ok.then_some(r)
        })
    }));
    found.unwrap_or_else(|_| {
        panic!(
            "{pane} never read {what}; last: {last:#}\nscreen:\n{}",
            screen(tmux, pane)
        )
    })
}

/// The alerts the watcher raised for `pane` so far: (state, reason).
pub fn alerts_now(watch: &crate::common::Watch, pane: &str) -> Vec<(String, String)> {
    watch
        .alerts()
        .iter()
        .filter(|a| a["pane"] == pane)
        .map(|a| {
            (
                a["state"].as_str().unwrap_or("").to_string(),
                a["reason"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

/// Waits until the watcher has raised `n` alerts for `pane`; them all.
pub fn wait_alerts(watch: &crate::common::Watch, pane: &str, n: usize) -> Vec<(String, String)> {
    let end = Instant::now() + STEP;
    loop {
        let a = alerts_now(watch, pane);
        if a.len() >= n {
            return a;
        }
        assert!(
            Instant::now() < end,
            "timed out waiting for {n} alerts for {pane}; all alerts: {:#?}",
            watch.alerts()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// The word after `marker` in a prompt (`PLAIN banana` → `banana`; `none` when none follows):
/// the stand-ins answer `PLAIN <word>` with `Answer: <word>.`, so each pane of a mixed session
/// has an answer of its own.
pub fn word_after(text: &str, marker: &str) -> Option<String> {
    let rest = &text[text.find(marker)? + marker.len()..];
    let word: String = rest
        .trim_start()
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '-' || *c == '_')
        .collect();
    Some(if word.is_empty() { "none".into() } else { word })
}
