//! Kimi Code against the OpenAI-compatible chat stand-in: its replies ([`reply`]) and the
//! client's start ([`start`]), configured by its environment alone (`KIMI_PROVIDER_TYPE=kimi`,
//! `KIMI_BASE_URL`, `KIMI_MODEL_NAME`, `KIMI_API_KEY`).
//!
//! Kimi Code sends a `<system-reminder>` as a user message of its own after a prompt, and
//! merges the prompts of failed turns into one user message (`BADREQ now\n\nQUOTA now`): the
//! prompt a reply answers is the last paragraph of the newest user text that is no reminder.
//! - `RUNWRITE` → one `Bash` call `touch hello.txt` (Kimi Code asks before running any
//!   command); once its result comes back, "Tool done.";
//! - `BADREQ` → HTTP 400, `QUOTA` → HTTP 429 `insufficient_quota` (neither is retried);
//!   `RATE` → HTTP 429 `rate_limit_exceeded` (retried, 10 attempts);
//! - `SLOW` → a reply streamed for ~30 s; `PLAIN <word>` → `Answer: <word>.`;
//! - anything else → [`openai_chat::ANSWER`].

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{json, Value};

use super::http::{MockServer, Reply, Request};
use super::openai_chat::{self, chunk, text_stream, ANSWER};
use super::{wait_drawn, wait_screen, Client, STEP};
use crate::common::TmuxServer;

/// Starts the stand-in.
pub fn serve() -> MockServer {
    MockServer::start(reply)
}

/// The prompt the newest request answers (see the module doc).
pub fn prompt_of(messages: &[Value]) -> String {
    let text = messages
        .iter()
        .rev()
        .filter(|m| m["role"] == "user")
        .flat_map(|m| match &m["content"] {
            Value::Array(parts) => parts
                .iter()
                .rev()
                .filter_map(|p| p["text"].as_str().map(str::to_string))
                .collect(),
            Value::String(s) => vec![s.clone()],
            _ => Vec::new(),
        })
        .find(|t| !t.starts_with("<system-reminder>"))
        .unwrap_or_default();
    text.rsplit("\n\n").next().unwrap_or_default().to_string()
}

/// The scripted reply to one request.
pub fn reply(req: &Request) -> Reply {
    if req.method == "GET" {
        return openai_chat::reply(req);
    }
    let body = req.json().unwrap_or(Value::Null);
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    if messages.last().is_some_and(|m| m["role"] == "tool") {
        return text_stream(&["Tool done."], Duration::ZERO);
    }
    let user = prompt_of(&messages);
    let error = |status: u16, message: &str, code: &str| {
        Reply::json(
            status,
            json!({"error": {"message": message, "type": code, "code": code}}),
        )
    };
    if user.contains("BADREQ") {
        return error(400, "model stand-in does not exist", "model_not_found");
    }
    if user.contains("QUOTA") {
        return error(429, "quota exceeded for stand-in", "insufficient_quota");
    }
    if user.contains("RATE") {
        return error(429, "rate limited, slow down", "rate_limit_exceeded");
    }
    if user.contains("RUNWRITE") {
        return bash_call("touch hello.txt");
    }
    if user.contains("SLOW") {
        let words: Vec<String> = (0..150).map(|i| format!("word{i} ")).collect();
        let refs: Vec<&str> = words.iter().map(String::as_str).collect();
        return text_stream(&refs, Duration::from_millis(200));
    }
    if let Some(word) = super::word_after(&user, "PLAIN") {
        return text_stream(&[&format!("Answer: {word}.")], Duration::from_millis(20));
    }
    let (head, tail) = ANSWER.split_at(ANSWER.len() / 2);
    text_stream(&[head, tail], Duration::from_millis(20))
}

/// One streamed `Bash` tool call running `command`.
fn bash_call(command: &str) -> Reply {
    static CALLS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let args = json!({"command": command}).to_string();
    Reply::sse(vec![
        chunk(
            json!({"role": "assistant", "content": null, "tool_calls": [{"index": 0,
                "id": format!("call_{n}"), "type": "function",
                "function": {"name": "Bash", "arguments": ""}}]}),
            None,
        ),
        chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": args}}]}),
            None,
        ),
        chunk(json!({}), Some("tool_calls")),
        (String::new(), "[DONE]".into()),
    ])
}

/// Kimi Code's root under the test HOME.
pub fn root(tmux: &TmuxServer) -> PathBuf {
    tmux.home().join(".kimi-code")
}

/// Its `tui.toml` without the dialogs that come at random (the feedback survey, the
/// cache-expiry hint) and without self-updates.
pub fn config(tmux: &TmuxServer) {
    let dir = root(tmux);
    std::fs::create_dir_all(&dir).expect("create the kimi-code dir");
    let tui = "disable_feedback_survey = true\ncache_expiry_hint = false\n\
               [upgrade]\nauto_install = false\n";
    std::fs::write(dir.join("tui.toml"), tui).expect("write tui.toml");
}

/// The environment of a Kimi Code pane: the stand-in as its provider, off the network.
pub fn env(api_url: &str) -> Vec<(String, String)> {
    [
        ("KIMI_PROVIDER_TYPE", "kimi"),
        ("KIMI_BASE_URL", &format!("{api_url}/v1")),
        ("KIMI_MODEL_NAME", openai_chat::MODEL),
        ("KIMI_API_KEY", "test-key"),
        ("KIMI_CODE_NO_AUTO_UPDATE", "1"),
        ("KIMI_DISABLE_TELEMETRY", "1"),
        ("TERM", "xterm-256color"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

/// Starts `kimi` in a new window in `work/<dir>` with its own Node (≥ 22.19, installed beside
/// it) first on `PATH` (its `bin` is `#!/usr/bin/env node`; the pane's shell keeps its own
/// `PATH` from tmux), trusts the folder when it asks (the first start there), and waits for
/// its input box; the pane id.
pub fn start(tmux: &TmuxServer, client: &Client, api_url: &str, dir: &str) -> String {
    let bin = client.dir.join("node_modules/.bin");
    let cmd = format!(
        "env PATH={}:\"$PATH\" {}",
        bin.display(),
        client.program().display()
    );
    let pane = tmux.new_window(&cmd, &tmux.work(dir), &env(api_url));
    wait_drawn(tmux, &pane, &client.label());
    let shown = wait_screen(tmux, &pane, STEP, "kimi's trust dialog or input box", |s| {
        s.contains("Trust this folder?") || s.contains("Welcome to Kimi Code")
    });
    if shown.contains("Trust this folder?") {
        super::press(tmux, &pane, "Enter");
    }
    wait_screen(tmux, &pane, STEP, "kimi's input box", |s| {
        s.contains("Welcome to Kimi Code") && s.contains("context:")
    });
    pane
}
