//! Starting each released client offline in a private tmux server: the configuration it
//! reads, the start-up dialogs it shows, and how a test knows it is ready. The per-agent
//! binaries (`tests/real_<agent>.rs`) and the mixed one (`tests/real_mixed.rs`) start their
//! clients through here, so a client release that changes its start-up is fixed once.
//!
//! Every client runs with the tmux server's environment (its temporary `HOME`,
//! `CLAUDE_CONFIG_DIR`, `CODEX_HOME`) plus what its function adds.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::anthropic::Anthropic;
use super::http::MockServer;
use super::wait_screen;
use super::{gemini, openai, openai_chat, press, qwen, screen, type_prompt, wait_drawn, wait_for};
use super::{Client, STEP};
use crate::common::TmuxServer;

// Claude Code.

/// Writes Claude Code's config before it starts (it rewrites `.claude.json` while it runs):
/// onboarding done, the auto-mode offer seen, `work/<folder>` trusted for each of `folders`,
/// tools that ask.
pub fn claude_config(tmux: &TmuxServer, folders: &[&str]) {
    let projects: serde_json::Map<String, Value> = folders
        .iter()
        .map(|f| {
            let dir = tmux.work(f).to_string_lossy().into_owned();
            (dir, json!({"hasTrustDialogAccepted": true}))
        })
        .collect();
    // 2.1.332 may offer to make auto mode the default ("Make auto mode your default
    // permission mode?") over the prompt at any moment, once per user: as seen already.
    let config = json!({
        "hasCompletedOnboarding": true,
        "hasSeenAutoDefaultNudge": true,
        "projects": projects,
    });
    let claude = tmux.claude_dir();
    std::fs::write(claude.join(".claude.json"), config.to_string()).expect("write config");
    std::fs::write(
        claude.join("settings.json"),
        r#"{"permissions":{"defaultMode":"default"}}"#,
    )
    .expect("write settings");
}

/// Starts Claude Code in a new window in `work/<folder>` (trusted by [`claude_config`]),
/// answers the start-up offers, and waits for its empty prompt; the pane id.
pub fn claude(tmux: &TmuxServer, client: &Client, api: &Anthropic, folder: &str) -> String {
    let bin = client.bin_dir(tmux.path());
    let mut env = api.client_env();
    env.push((
        "PATH".into(),
        format!("{}:/usr/local/bin:/usr/bin:/bin", bin.display()),
    ));
    let program = bin.join("claude");
    let pane = tmux.new_window(
        program.to_str().expect("utf-8 path"),
        &tmux.work(folder),
        &env,
    );
    wait_drawn(tmux, &pane, &client.label());
    claude_wait_ready(tmux, client, &pane);
    pane
}

/// What a test's own `statusLine` command prints: it shows under the input box, where the
/// `? for shortcuts` hint was.
pub const USER_STATUS_LINE: &str = "agentpane-test-status";

/// Waits until the pane shows Claude Code's input box, answering one-time offers (auto
/// mode, fullscreen renderer) with "no" on the way.
pub fn claude_wait_ready(tmux: &TmuxServer, client: &Client, pane: &str) {
    let end = Instant::now() + STEP;
    loop {
        let s = screen(tmux, pane);
        if s.contains("Make auto mode your default") || s.contains("fullscreen") {
            // The last option is always the "keep things as they are" answer.
            for _ in 0..3 {
                press(tmux, pane, "Down");
            }
            std::thread::sleep(Duration::from_millis(300));
            press(tmux, pane, "Enter");
            std::thread::sleep(Duration::from_millis(800));
            continue;
        }
        // With a status line the hint gives way to it, to the mode (2.1.332) or to nothing
        // but the agents' hint (2.1.197, when it prints nothing).
        if [
            "? for shortcuts",
            "manual mode on",
            "← for agents",
            USER_STATUS_LINE,
        ]
        .iter()
        .any(|m| s.contains(m))
        {
            return;
        }
        assert!(
            Instant::now() < end,
            "{}: no input box after {STEP:?}; the screen:\n{s}",
            client.label()
        );
        std::thread::sleep(Duration::from_millis(300));
    }
}

// Codex CLI.

/// Writes `CODEX_HOME/config.toml`: the Responses API stand-in at `api_url` as the model
/// provider (key from `AGENTPANE_MOCK_KEY`, no retries), commands that ask, no update
/// check, `work/<folder>` trusted.
pub fn codex_config(tmux: &TmuxServer, api_url: &str, folder: &str) {
    let config = format!(
        r#"model_provider = "mock"
model = "gpt-5.1-codex"
approval_policy = "on-request"
sandbox_mode = "workspace-write"
check_for_update_on_startup = false

[model_providers.mock]
name = "mock"
base_url = "{api_url}/v1"
wire_api = "responses"
env_key = "AGENTPANE_MOCK_KEY"
request_max_retries = 0
stream_max_retries = 0

[projects."{dir}"]
trust_level = "trusted"
"#,
        dir = tmux.work(folder).display()
    );
    std::fs::write(tmux.codex_dir().join("config.toml"), config).expect("write config");
}

/// The environment a Codex pane needs besides the server's.
pub fn codex_env() -> Vec<(String, String)> {
    vec![("AGENTPANE_MOCK_KEY".to_string(), "mock-key".to_string())]
}

/// Starts `codex ARGS` in a new window in `work/<folder>` and waits until its thread exists
/// (a lock file per thread) and its prompt shows; the pane id.
pub fn codex(tmux: &TmuxServer, client: &Client, folder: &str, args: &str) -> String {
    let before = codex_threads(tmux);
    let cmd = format!("{} {args}", client.program().display());
    let pane = tmux.new_window(&cmd, &tmux.work(folder), &codex_env());
    wait_drawn(tmux, &pane, &client.label());
    let started = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        wait_for(STEP, "the new session's thread", || {
            (codex_threads(tmux) > before).then_some(())
        })
    }));
    if started.is_err() {
        panic!(
            "{pane}: no new thread after {STEP:?}; the screen:\n{}",
            screen(tmux, &pane)
        );
    }
    codex_wait_prompt(tmux, &pane);
    pane
}

/// Waits until Codex's TUI shows its idle input box.
pub fn codex_wait_prompt(tmux: &TmuxServer, pane: &str) -> String {
    wait_screen(tmux, pane, STEP, "the Codex prompt", |s| {
        s.contains("for shortcuts") && !s.contains("esc to interrupt")
    })
}

/// Thread ids Codex's shared daemon has created (one lock file each).
pub fn codex_threads(tmux: &TmuxServer) -> usize {
    std::fs::read_dir(tmux.codex_dir().join("thread-writer-locks"))
        .map(|d| {
            d.flatten()
                .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
                .count()
        })
        .unwrap_or(0)
}

/// The user text of every real turn the Responses stand-in saw, in order.
pub fn codex_prompts(api: &MockServer) -> Vec<String> {
    openai::turn_requests(api)
        .iter()
        .filter_map(openai::last_user_text)
        .collect()
}

/// Types a prompt into Codex and waits until the API has seen it. A TUI still settling may
/// drop the Enter, as it would for a person, who then presses it again — only while the
/// text still sits in the input box (an Enter on a dialog would answer it).
pub fn codex_ask(tmux: &TmuxServer, api: &MockServer, pane: &str, text: &str) {
    codex_wait_prompt(tmux, pane);
    type_prompt(tmux, pane, text);
    let seen = || {
        codex_prompts(api)
            .iter()
            .filter(|p| p.as_str() == text)
            .count()
    };
    let before = seen();
    for attempt in 0..3 {
        let arrived = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            wait_for(Duration::from_secs(15), "the prompt at the API", || {
                (seen() > before).then_some(())
            })
        }));
        if arrived.is_ok() {
            return;
        }
        let s = screen(tmux, pane);
        let composer = s.lines().rev().find(|l| l.starts_with('›'));
        if composer.is_some_and(|l| l.contains(text)) {
            eprintln!("{pane}: prompt still in the box (attempt {attempt}); Enter again");
            press(tmux, pane, "Enter");
        }
    }
    panic!(
        "{pane}: the prompt {text:?} never reached the API:\n{}",
        screen(tmux, pane)
    );
}

/// Kills, by PID, every process whose command line runs from `codex_home` (Codex 0.171's
/// app-server daemon and its helper copy themselves under `CODEX_HOME/packages/`, outside
/// the pane's process tree, and outlive the tmux server).
pub fn kill_codex_daemons(codex_home: &Path) {
    let needle = codex_home.to_string_lossy().into_owned();
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return;
    };
    for entry in procs.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if cmdline.starts_with(&needle) && cmdline.contains("app-server") {
            let _ = std::process::Command::new("kill")
                .arg(pid.to_string())
                .status();
        }
    }
}

// Gemini CLI.

/// Starts Gemini CLI (its `HOME` from [`gemini::home`]) in a new window working in
/// `work/<dir>`; returns its pane once its session log exists (agentpane resolves it).
pub fn gemini(
    tmux: &TmuxServer,
    client: &Client,
    home: &Path,
    api: &MockServer,
    dir: &str,
) -> String {
    let env = gemini::env(client, tmux.path(), home, api);
    // By its full path: tmux looks the command up in its own PATH, not the pane's.
    let program = client.bin_dir(tmux.path()).join("gemini");
    let pane = tmux.new_window(&program.display().to_string(), &tmux.work(dir), &env);
    wait_drawn(tmux, &pane, &client.label());
    let mut last = Value::Null;
    let started = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        wait_for(STEP * 2, "its session log", || {
            let run = tmux.agentpane(&["resolve", &pane, "--json"]);
            assert_eq!(run.code, 0, "{run:?}");
            last = run.json();
            last["transcript"].is_string().then_some(())
        })
    }));
    if started.is_err() {
        panic!(
            "{} did not start in {pane}; last resolution: {last:#}\nscreen:\n{}",
            client.label(),
            screen(tmux, &pane)
        );
    }
    pane
}

/// Types a prompt into Gemini CLI as a person does and makes sure it was sent: Gemini CLI
/// takes an Enter its busy event loop handles within 30 ms of the typed text as a newline,
/// as a person would see, so they press Enter again.
pub fn gemini_submit(tmux: &TmuxServer, pane: &str, text: &str) {
    type_prompt(tmux, pane, text);
    for _ in 0..5 {
        std::thread::sleep(Duration::from_millis(700));
        if !agentpane::agents::gemini::pane::input_pending(&screen(tmux, pane)) {
            return;
        }
        press(tmux, pane, "Enter");
    }
}

// opencode.

/// Where opencode's XDG folders live for this tmux server.
pub fn opencode_root(tmux: &TmuxServer) -> PathBuf {
    tmux.path().join("opencode")
}

/// Writes opencode's configuration for the chat stand-in at `api_url`.
pub fn opencode_config(tmux: &TmuxServer, api_url: &str) {
    openai_chat::write_config(&opencode_root(tmux).join("config"), api_url);
}

/// Starts opencode (configured by [`opencode_config`]) in a new window in `work/<dir>` and
/// waits for its input box; the pane id.
pub fn opencode(tmux: &TmuxServer, client: &Client, dir: &str) -> String {
    let env = openai_chat::env(&opencode_root(tmux));
    let program = client.program();
    let pane = tmux.new_window(program.to_str().unwrap(), &tmux.work(dir), &env);
    wait_drawn(tmux, &pane, &client.label());
    wait_screen(tmux, &pane, STEP, "opencode's input box", |s| {
        s.contains("ctrl+p commands")
    });
    pane
}

// GitHub Copilot CLI.

/// Copilot CLI's home (`COPILOT_HOME`) for this tmux server.
pub fn copilot_home(tmux: &TmuxServer) -> PathBuf {
    tmux.path().join("copilot")
}

/// Writes Copilot CLI's `config.json` before it starts: `work/<folder>` trusted for each of
/// `folders` (else the first start in a folder asks "Confirm folder trust"). Each folder is a
/// git repository, as in the recording.
pub fn copilot_config(tmux: &TmuxServer, folders: &[&str]) {
    let home = copilot_home(tmux);
    std::fs::create_dir_all(&home).expect("create COPILOT_HOME");
    let trusted: Vec<String> = folders
        .iter()
        .map(|f| {
            let dir = tmux.work(f);
            let _ = std::process::Command::new("git")
                .args(["init", "-q"])
                .current_dir(&dir)
                .status();
            dir.to_string_lossy().into_owned()
        })
        .collect();
    let config = json!({"trustedFolders": trusted});
    std::fs::write(home.join("config.json"), config.to_string()).expect("write config.json");
}

/// The environment a Copilot CLI pane runs with: its home, and the documented switches that
/// run it offline against the OpenAI chat stand-in at `api_url` (`copilot help environment`).
pub fn copilot_env(tmux: &TmuxServer, api_url: &str) -> Vec<(String, String)> {
    let home = copilot_home(tmux).to_string_lossy().into_owned();
    [
        ("COPILOT_HOME", home.as_str()),
        ("COPILOT_OFFLINE", "true"),
        ("COPILOT_AUTO_UPDATE", "false"),
        ("COPILOT_PROVIDER_BASE_URL", &format!("{api_url}/v1")),
        ("COPILOT_PROVIDER_TYPE", "openai"),
        ("COPILOT_PROVIDER_API_KEY", "sk-mock"),
        ("COPILOT_MODEL", "mock-model"),
        ("COPILOT_PROVIDER_MAX_PROMPT_TOKENS", "128000"),
        ("COPILOT_PROVIDER_MAX_OUTPUT_TOKENS", "8192"),
        ("TERM", "xterm-256color"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

/// Starts Copilot CLI through its npm loader (`node_modules/.bin/copilot`, as a user's shell
/// does) in a new window in `work/<dir>` (trusted by [`copilot_config`]) and waits for its
/// idle footer; the pane id.
pub fn copilot(tmux: &TmuxServer, client: &Client, api_url: &str, dir: &str) -> String {
    let env = copilot_env(tmux, api_url);
    let program = client.program();
    let pane = tmux.new_window(&program.display().to_string(), &tmux.work(dir), &env);
    wait_drawn(tmux, &pane, &client.label());
    wait_screen(tmux, &pane, STEP, "Copilot CLI's input box", |s| {
        s.contains("open sidebar") && s.contains("Interactive")
    });
    pane
}

// Kilo Code CLI (an opencode fork: the same config under `kilo`, `KILO_` switches).

/// Where Kilo's XDG folders live for this tmux server.
pub fn kilo_root(tmux: &TmuxServer) -> PathBuf {
    tmux.path().join("kilo")
}

/// Writes Kilo's configuration (`<config>/kilo/kilo.json`) for the chat stand-in at `api_url`.
pub fn kilo_config(tmux: &TmuxServer, api_url: &str) {
    openai_chat::write_config_as(&kilo_root(tmux).join("config"), api_url, "kilo");
}

/// Starts Kilo (configured by [`kilo_config`]) from its npm `bin` in a new window in
/// `work/<dir>` and waits for its input box; the pane id.
pub fn kilo(tmux: &TmuxServer, client: &Client, dir: &str) -> String {
    let env = openai_chat::env_as(&kilo_root(tmux), "KILO");
    let program = client.program();
    let pane = tmux.new_window(program.to_str().unwrap(), &tmux.work(dir), &env);
    wait_drawn(tmux, &pane, &client.label());
    wait_screen(tmux, &pane, STEP, "Kilo's input box", |s| {
        s.contains("ctrl+p commands") || s.contains("ctrl+p")
    });
    pane
}

// Qwen Code.

/// Writes Qwen Code's `settings.json` (OpenAI auth, no telemetry, tools that ask).
pub fn qwen_config(tmux: &TmuxServer) {
    qwen::write_settings(&qwen::home(tmux.path()));
}

/// Starts Qwen Code (configured by [`qwen_config`]) against the stand-in at `api_url` in a
/// new window in `work/<dir>` and waits for its input box; the pane id.
pub fn qwen(tmux: &TmuxServer, client: &Client, api_url: &str, dir: &str) -> String {
    let env = qwen::env(tmux.path(), api_url);
    // By its full path: tmux looks the command up in its own PATH, not the pane's.
    let program = client.bin_dir(tmux.path()).join("qwen");
    let pane = tmux.new_window(&program.display().to_string(), &tmux.work(dir), &env);
    wait_drawn(tmux, &pane, &client.label());
    wait_screen(tmux, &pane, STEP, "Qwen Code's input box", |s| {
        s.contains("Type your message")
    });
    pane
}

// pi.

/// pi's agent dir (`~/.pi/agent`) for this tmux server.
pub fn pi_dir(tmux: &TmuxServer) -> PathBuf {
    tmux.home().join(".pi/agent")
}

/// Writes pi's `models.json` (one OpenAI-compatible provider at the chat stand-in `api_url`)
/// and `settings.json` (that provider's model by default).
pub fn pi_config(tmux: &TmuxServer, api_url: &str) {
    let dir = pi_dir(tmux);
    std::fs::create_dir_all(&dir).expect("create the pi agent dir");
    let models = json!({"providers": {"mock": {
        "baseUrl": format!("{api_url}/v1"), "api": "openai-completions", "apiKey": "sk-mock",
        "compat": {"supportsDeveloperRole": false, "supportsReasoningEffort": false},
        "models": [{"id": "mock-model", "contextWindow": 128000, "maxTokens": 8192}],
    }}});
    std::fs::write(dir.join("models.json"), models.to_string()).expect("write models.json");
    let settings = json!({"defaultProvider": "mock", "defaultModel": "mock-model"});
    std::fs::write(dir.join("settings.json"), settings.to_string()).expect("write settings");
}

/// The switches that keep pi off the network.
pub fn pi_env() -> Vec<(String, String)> {
    [
        ("PI_OFFLINE", "1"),
        ("PI_SKIP_VERSION_CHECK", "1"),
        ("PI_TELEMETRY", "0"),
        ("TERM", "xterm-256color"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

/// The permission gate pi ships as an example extension (asks before `rm -rf`, `sudo`, …).
pub fn pi_permission_gate(client: &Client) -> PathBuf {
    client
        .dir
        .join("node_modules/@mariozechner/pi-coding-agent/examples/extensions/permission-gate.ts")
}

/// Starts `pi ARGS` (configured by [`pi_config`]) from its npm `bin` in a new window in
/// `work/<dir>` and waits for its input box; the pane id.
pub fn pi(tmux: &TmuxServer, client: &Client, dir: &str, args: &str) -> String {
    let cmd = format!("{} {args}", client.program().display());
    let pane = tmux.new_window(cmd.trim(), &tmux.work(dir), &pi_env());
    wait_drawn(tmux, &pane, &client.label());
    wait_screen(tmux, &pane, STEP, "pi's input box", |s| {
        s.contains("mock-model") && s.contains("escape interrupt")
    });
    pane
}
