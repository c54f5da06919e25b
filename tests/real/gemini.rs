//! A stand-in for the Gemini API as Gemini CLI calls it with an API key
//! (`GOOGLE_GEMINI_BASE_URL`, `GEMINI_API_KEY`): `POST /v1beta/models/<model>:
//! streamGenerateContent?alt=sse`, each event a `GenerateContentResponse`. What it answers
//! is scripted by the prompt:
//!
//! - `TOOL:<command>`: a `run_shell_command` function call (an approval for anything but a
//!   read-only command); the call's result is answered with [`TOOL_DONE`];
//! - `ERR`: HTTP 400 `INVALID_ARGUMENT`; `ERR429`: a spent quota (429 `RESOURCE_EXHAUSTED`,
//!   `limit: 0`, which the client does not retry); `ERR403`: 403 `PERMISSION_DENIED`;
//!   `RATE429`: a plain 429 `RESOURCE_EXHAUSTED`, which the client retries (10 attempts);
//!   `RATE429x<N>`: that 429 to the prompt's first N requests, then its answer (the client's
//!   retry loop recovering: waits of 5, 10, 20 s, ±30 %, so N = 4 answers after ~65 s);
//! - `SLOW`: text streamed over ~15 s (for Escape);
//! - anything else: [`answer_to`] the prompt, with a code block.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{json, Value};

use crate::real::http::{MockServer, Reply, Request};
use crate::real::Client;

/// The model the client is pinned to.
pub const MODEL: &str = "gemini-2.5-flash";
/// The usage every completed reply reports (`usageMetadata`: `promptTokenCount`, of them
/// `cachedContentTokenCount`, `candidatesTokenCount`, `thoughtsTokenCount`): known numbers, so a
/// test can check what the client logged of them.
pub const PROMPT_TOKENS: u64 = 1234;
pub const CACHED_TOKENS: u64 = 200;
pub const OUTPUT_TOKENS: u64 = 56;
pub const THOUGHTS_TOKENS: u64 = 7;

/// The reply once a tool call's result comes back.
pub const TOOL_DONE: &str = "The command ran.";

/// The message of the stand-in's 429, worded as the real API words a spent free-tier quota.
pub const QUOTA_MESSAGE: &str = "You exceeded your current quota, please check your plan and billing details.\n* Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier_requests, limit: 0, model: gemini-2.5-flash";

/// The scripted answer to a plain prompt: text, then a code block (byte-exact checks).
pub fn answer_to(prompt: &str) -> String {
    format!(
        "Answer to: {prompt}\n\n```rust\nfn main() {{\n    println!(\"hi\\tthere\");\n}}\n```\nDone."
    )
}

/// The text of the newest user turn of a request (empty for a function response).
pub fn prompt_of(req: &Request) -> String {
    let Some(body) = req.json() else {
        return String::new();
    };
    let last = body["contents"]
        .as_array()
        .and_then(|c| c.last())
        .cloned()
        .unwrap_or(Value::Null);
    // The first turn carries the session context as an earlier part: the prompt is the last.
    last["parts"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| p["text"].as_str())
        .next_back()
        .unwrap_or_default()
        .to_string()
}

fn is_function_response(req: &Request) -> bool {
    req.json().is_some_and(|b| {
        b["contents"]
            .as_array()
            .and_then(|c| c.last())
            .and_then(|l| l["parts"].as_array())
            .is_some_and(|ps| ps.iter().any(|p| p.get("functionResponse").is_some()))
    })
}

fn chunk(parts: Value, finish: bool) -> (String, String) {
    let mut candidate = json!({"content": {"role": "model", "parts": parts}, "index": 0});
    let mut event = json!({"candidates": [], "modelVersion": MODEL});
    if finish {
        candidate["finishReason"] = json!("STOP");
        event["usageMetadata"] = json!({
            "promptTokenCount": PROMPT_TOKENS,
            "cachedContentTokenCount": CACHED_TOKENS,
            "candidatesTokenCount": OUTPUT_TOKENS,
            "thoughtsTokenCount": THOUGHTS_TOKENS,
            "totalTokenCount": PROMPT_TOKENS + OUTPUT_TOKENS + THOUGHTS_TOKENS,
        });
    }
    event["candidates"] = json!([candidate]);
    (String::new(), event.to_string())
}

/// Answers one request.
pub fn reply(req: &Request) -> Reply {
    if req.method != "POST" {
        return Reply::json(200, json!({}));
    }
    if !req.path.contains(":streamGenerateContent") {
        // Side calls (token counts, one-shot helpers): a harmless JSON answer.
        return Reply::json(
            200,
            json!({"totalTokens": 10, "candidates": [{"content": {"role": "model",
                "parts": [{"text": "{}"}]}, "finishReason": "STOP", "index": 0}]}),
        );
    }
    if is_function_response(req) {
        return Reply::sse(vec![chunk(json!([{"text": TOOL_DONE}]), true)]);
    }
    let prompt = prompt_of(req);
    if let Some(command) = prompt.strip_prefix("TOOL:") {
        let call = json!([{"functionCall": {"name": "run_shell_command",
            "args": {"command": command.trim(), "description": "run it"}}}]);
        return Reply::sse(vec![chunk(call, true)]);
    }
    if prompt.starts_with("RATE429") && !prompt.starts_with("RATE429x") {
        return rate_limited();
    }
    if prompt.starts_with("ERR429") {
        return Reply::json(
            429,
            json!({"error": {"code": 429, "message": QUOTA_MESSAGE, "status": "RESOURCE_EXHAUSTED"}}),
        );
    }
    if prompt.starts_with("ERR403") {
        return Reply::json(
            403,
            json!({"error": {"code": 403, "message": "Permission denied by stand-in",
                "status": "PERMISSION_DENIED"}}),
        );
    }
    if prompt.starts_with("ERR") {
        return Reply::json(
            400,
            json!({"error": {"code": 400, "message": "Invalid argument from stand-in",
                "status": "INVALID_ARGUMENT"}}),
        );
    }
    if prompt.starts_with("SLOW") {
        let mut events: Vec<_> = (0..50)
            .map(|i| chunk(json!([{ "text": format!("word{i} ") }]), false))
            .collect();
        events.push(chunk(json!([{"text": "end."}]), true));
        return Reply::sse_paced(events, Duration::from_millis(300));
    }
    answer(&prompt)
}

/// A plain 429, no retry delay: the client retries it.
fn rate_limited() -> Reply {
    Reply::json(
        429,
        json!({"error": {"code": 429, "message": "Too many requests, please slow down.", "status": "RESOURCE_EXHAUSTED"}}),
    )
}

/// The scripted answer, streamed in two events.
fn answer(prompt: &str) -> Reply {
    let text = answer_to(prompt);
    let (first, rest) = text.split_at(text.find("```").unwrap_or(0));
    Reply::sse(vec![
        chunk(json!([{ "text": first }]), false),
        chunk(json!([{ "text": rest }]), true),
    ])
}

/// The stand-in, serving [`reply`], and `RATE429x<N>` (which needs to count).
pub fn start() -> MockServer {
    let failed = std::sync::Mutex::new(std::collections::HashMap::<String, u32>::new());
    MockServer::start(move |req| {
        let prompt = prompt_of(req);
        let times = prompt
            .strip_prefix("RATE429x")
            .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
            .and_then(|n| n.parse::<u32>().ok());
        match times {
            Some(n) if req.path.contains(":streamGenerateContent") => {
                let mut failed = failed.lock().unwrap();
                let count = failed.entry(prompt.clone()).or_default();
                *count += 1;
                if *count <= n {
                    rate_limited()
                } else {
                    answer(&prompt)
                }
            }
            _ => reply(req),
        }
    })
}

/// A `HOME` for Gemini CLI: API-key auth against the stand-in, no folder-trust prompt, a
/// fixed model, no update checks, telemetry or tips.
pub fn home(root: &Path) -> PathBuf {
    let home = root.join("gemini-home");
    let dir = home.join(".gemini");
    std::fs::create_dir_all(&dir).expect("create gemini home");
    let settings = json!({
        "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": false}},
        "model": {"name": MODEL},
        "general": {"enableAutoUpdate": false, "enableAutoUpdateNotification": false},
        "privacy": {"usageStatisticsEnabled": false},
        "telemetry": {"enabled": false},
        "ui": {"hideTips": true, "hideBanner": true}
    });
    std::fs::write(dir.join("settings.json"), settings.to_string()).expect("write settings");
    home
}

/// The environment a pane running Gemini CLI gets.
pub fn env(
    client: &Client,
    scratch: &Path,
    home: &Path,
    api: &MockServer,
) -> Vec<(String, String)> {
    let path = format!(
        "{}:{}",
        client.bin_dir(scratch).display(),
        std::env::var("PATH").unwrap_or_default()
    );
    vec![
        ("HOME".into(), home.display().to_string()),
        ("PATH".into(), path),
        ("GOOGLE_GEMINI_BASE_URL".into(), api.url()),
        ("GEMINI_API_KEY".into(), "stand-in-key".into()),
        ("TERM".into(), "xterm-256color".into()),
    ]
}
