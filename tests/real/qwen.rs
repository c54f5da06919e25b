//! Qwen Code against the OpenAI Chat Completions stand-in ([`super::openai_chat`]): its reply
//! script, its `settings.json` and the environment that keeps it offline.
//!
//! The reply depends on the newest user text of a request that offers tools (the main loop;
//! Qwen Code's side requests — next-speaker checks, follow-up suggestions, memory — offer
//! none and get a short plain answer):
//! - `RUNBASH` → one `run_shell_command` call (`echo hello > hello.txt`: a write, so it asks;
//!   Qwen Code runs a read-only `echo hello` without asking); once its result comes back,
//!   "Tool done.";
//! - `BADREQ` → HTTP 400 `model_not_found` (Qwen Code does not retry a 400);
//! - `QUOTA` → HTTP 429 asking for 2 s between retries (Qwen Code retries in silence six times,
//!   then counts down to its own retries, a minute at least);
//! - `SLOW` → a reply streamed for ~30 s (long enough to press Escape mid-stream);
//! - `PLAIN <word>` → `Answer: <word>.` (a mixed session's panes each get their own);
//! - anything else → [`ANSWER`].

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{json, Value};

use super::http::{MockServer, Reply, Request};
use super::openai_chat::{chunk, text_stream, ANSWER};

/// The model id the client asks for.
pub const MODEL: &str = "mock-model";

/// The pause a 429 asks of each retry Qwen Code makes in silence, before its countdown.
pub const SILENT_RETRY_MS: u64 = 2000;

/// Starts the stand-in.
pub fn start() -> MockServer {
    MockServer::start(reply)
}

/// The scripted reply to one request.
pub fn reply(req: &Request) -> Reply {
    if req.method == "GET" {
        return Reply::json(200, json!({"data": [{"id": MODEL, "object": "model"}]}));
    }
    let body = req.json().unwrap_or(Value::Null);
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let main_loop = body["tools"].as_array().is_some_and(|t| !t.is_empty());
    if !main_loop {
        return text_stream(&["ok"], Duration::ZERO);
    }
    let last = messages.last().cloned().unwrap_or(Value::Null);
    if last["role"] == "tool" {
        return text_stream(&["Tool done."], Duration::from_millis(20));
    }
    let user = last_prompt(&messages);
    if user.contains("BADREQ") {
        return Reply::json(
            400,
            json!({"error": {"message": "model mock-model does not exist",
                "type": "invalid_request_error", "code": "model_not_found"}}),
        );
    }
    if user.contains("QUOTA") {
        // `retry-after-ms` sets the pause of each silent retry inside the request (six of
        // them, 1.5 s doubling to 30 s without it: ~95 s); the countdown after them waits
        // at least its 60 s whatever the header says.
        return Reply::json(
            429,
            json!({"error": {"message": "Rate limit reached for mock-model",
                "type": "rate_limit_error", "code": "rate_limit_exceeded"}}),
        )
        .retry_after_ms(SILENT_RETRY_MS);
    }
    if user.contains("RUNBASH") {
        return shell_call();
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

/// The text of the newest user message's last part. Qwen Code sends a prompt whose turn
/// failed (HTTP 400) again in the next user message, before the new prompt, and puts a
/// `<system-reminder>` part before the first prompt.
pub fn last_prompt(messages: &[Value]) -> String {
    let Some(user) = messages.iter().rev().find(|m| m["role"] == "user") else {
        return String::new();
    };
    match &user["content"] {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .rev()
            .find_map(|p| p["text"].as_str())
            .unwrap_or_default()
            .to_string(),
        _ => String::new(),
    }
}

fn shell_call() -> Reply {
    static CALLS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let args = json!({"command": "echo hello > hello.txt", "description": "Write hello",
        "is_background": false})
    .to_string();
    Reply::sse(vec![
        chunk(
            json!({"role": "assistant", "content": null, "tool_calls": [{"index": 0,
                "id": format!("call_{n}"), "type": "function",
                "function": {"name": "run_shell_command", "arguments": ""}}]}),
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

/// Writes `<qwen_home>/settings.json`: OpenAI auth, no folder-trust dialog, no update check,
/// no usage statistics or telemetry, tools that ask (`default`; the client's own default
/// `auto` lets a model-based classifier approve them).
pub fn write_settings(qwen_home: &Path) {
    std::fs::create_dir_all(qwen_home).expect("create QWEN_HOME");
    let settings = json!({
        "security": {"auth": {"selectedType": "openai"}, "folderTrust": {"enabled": false}},
        "general": {"enableAutoUpdate": false},
        "privacy": {"usageStatisticsEnabled": false},
        "telemetry": {"enabled": false},
        "model": {"name": MODEL},
        "tools": {"approvalMode": "default"},
    });
    std::fs::write(qwen_home.join("settings.json"), settings.to_string())
        .expect("write qwen settings.json");
}

/// The Qwen home under a test root.
pub fn home(root: &Path) -> PathBuf {
    root.join("qwen-home")
}

/// The environment a Qwen Code pane runs with: its own `QWEN_HOME` and the stand-in as its
/// OpenAI endpoint.
pub fn env(root: &Path, base_url: &str) -> Vec<(String, String)> {
    vec![
        (
            "QWEN_HOME".into(),
            home(root).to_string_lossy().into_owned(),
        ),
        ("OPENAI_API_KEY".into(), "sk-mock".into()),
        ("OPENAI_BASE_URL".into(), format!("{base_url}/v1")),
        ("OPENAI_MODEL".into(), MODEL.into()),
    ]
}
