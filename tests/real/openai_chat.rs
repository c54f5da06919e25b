//! A stand-in for an OpenAI-compatible chat API (`POST /v1/chat/completions`, streamed as
//! server-sent `chat.completion.chunk`s), as opencode's bundled `@ai-sdk/openai-compatible`
//! provider calls it, plus the opencode client setup that points at it.
//!
//! The reply depends on the newest user text (tests type these words into the client):
//! - `RUNBASH` → one `bash` tool call (`echo hello`); once its result comes back, "Tool done.";
//! - `RUNWRITE` → the same with `touch hello.txt` (Copilot CLI runs `echo` without asking, but
//!   asks before a command that writes);
//! - `RUNRM` → the same with `rm -rf scratch` (pi's shipped permission gate asks only before
//!   a dangerous command); to a client that offers Cline CLI's `run_commands` tool, these
//!   two call it instead (`{"commands": [...]}`);
//! - `ASKUSER` → one `ask_user` tool call (Copilot CLI's question to the user);
//! - `BADREQ` → HTTP 400 `model_not_found` (opencode does not retry a 400);
//! - `QUOTA` → HTTP 429 `insufficient_quota` (opencode retries it with growing back-off);
//! - `SLOW` → a reply streamed for ~30 s (long enough to press Escape mid-stream);
//! - `PLAIN <word>` → `Answer: <word>.` (a mixed session's panes each get their own);
//! - anything else → [`ANSWER`].
//!
//! opencode also asks the same model for a session title; that reply is `Title <first word of
//! the prompt>`, so a test can tell sessions apart by their title.

use std::path::Path;
use std::time::Duration;

use serde_json::{json, Value};

use super::http::{MockServer, Reply, Request};

/// The answer to a plain prompt: a code block with two spaces and a tab, byte-exact checks.
pub const ANSWER: &str = "Here is the answer.\n\n```sh\necho  \"hi\"\t$x\n```\nDone.";

/// The model id the provider names.
pub const MODEL: &str = "stand-in";

/// The usage every completed reply reports (`usage.prompt_tokens`, of them
/// `prompt_tokens_details.cached_tokens`, `completion_tokens`): known numbers, so a test can
/// check what the client logged of them.
pub const PROMPT_TOKENS: u64 = 1234;
pub const CACHED_TOKENS: u64 = 200;
pub const COMPLETION_TOKENS: u64 = 56;

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
    let system = messages
        .iter()
        .filter(|m| m["role"] == "system")
        .map(content)
        .collect::<String>();
    let last = messages.last().cloned().unwrap_or(Value::Null);
    let user = last_user_text(&messages);
    if system.contains("title generator") {
        let word = user.split_whitespace().next().unwrap_or("untitled");
        return text_stream(&[&format!("Title {word}")], Duration::ZERO);
    }
    if last["role"] == "tool" {
        return text_stream(&["Tool done."], Duration::ZERO);
    }
    if user.contains("BADREQ") {
        return Reply::json(
            400,
            json!({"error": {"message": "model stand-in does not exist",
                "type": "invalid_request_error", "code": "model_not_found"}}),
        );
    }
    if user.contains("QUOTA") {
        return Reply::json(
            429,
            json!({"error": {"message": "quota exceeded for stand-in",
                "type": "insufficient_quota", "code": "insufficient_quota"}}),
        );
    }
    if let Some(command) = run_commands(&body, &user) {
        return tool_call_ending("run_commands", json!({"commands": [command]}), "tool_calls");
    }
    if user.contains("RUNRM") {
        // OpenAI's own finish reason: pi's `openai-completions` provider takes no other.
        return tool_call_ending("bash", bash("rm -rf scratch"), "tool_calls");
    }
    if user.contains("RUNWRITE") {
        return tool_call("bash", bash("touch hello.txt"));
    }
    if user.contains("RUNBASH") {
        return tool_call("bash", bash("echo hello"));
    }
    if user.contains("ASKUSER") {
        let schema = json!({"properties": {"color": {"type": "string", "title": "Color",
            "enum": ["red", "blue"]}}, "required": ["color"]});
        return tool_call(
            "ask_user",
            json!({"message": "Which color?", "requestedSchema": schema}),
        );
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

/// The text of a chat message (string content, or the text of its parts).
pub fn content(m: &Value) -> String {
    match &m["content"] {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect(),
        _ => String::new(),
    }
}

/// The tool results the stand-in received after its first `from` requests: the text of each
/// request's last message that is a tool's (a call that ran, or its refusal).
pub fn tool_replies(api: &MockServer, from: usize) -> Vec<String> {
    api.requests()
        .iter()
        .skip(from)
        .filter_map(|r| r.json())
        .filter_map(|b| {
            let last = b["messages"].as_array()?.last()?.clone();
            (last["role"] == "tool").then(|| content(&last))
        })
        .collect()
}

/// After `allow --always` (the stand-in's first `since` requests came before it): the call
/// ran once; then types `prompt` into `pane` and waits until the call it asks for runs again
/// without a dialog — a tool result reaches the stand-in, `dialog` never on screen meanwhile.
pub fn always_kept(
    tmux: &crate::common::TmuxServer,
    api: &MockServer,
    pane: &str,
    since: usize,
    prompt: &str,
    dialog: &str,
) {
    let ran = tool_replies(api, since);
    assert_eq!(ran.len(), 1, "the call ran once: {ran:?}");
    let before = api.requests().len();
    super::type_prompt(tmux, pane, prompt);
    super::wait_for(super::STEP, "the call to run unasked", || {
        let screen = super::screen(tmux, pane);
        assert!(!screen.contains(dialog), "asked again:\n{screen}");
        (!tool_replies(api, before).is_empty()).then_some(())
    });
}

/// The newest user text `api` received, in any request but a title generator's (opencode and
/// Kilo ask for a title beside the turn).
pub fn last_prompt(api: &MockServer) -> String {
    api.requests()
        .iter()
        .rev()
        .filter_map(|r| r.json())
        .filter(|b| !content(&b["messages"][0]).contains("title generator"))
        .find_map(|b| Some(last_user_text(b["messages"].as_array()?)))
        .unwrap_or_default()
}

/// The newest user message's text.
pub fn last_user_text(messages: &[Value]) -> String {
    messages
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .map(content)
        .unwrap_or_default()
}

/// One `chat.completion.chunk` event; the last one (with `finish`) carries `usage`.
pub fn chunk(delta: Value, finish: Option<&str>) -> (String, String) {
    let mut c = json!({
        "id": "chatcmpl-standin", "object": "chat.completion.chunk", "created": 1,
        "model": MODEL,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    });
    if finish.is_some() {
        c["usage"] = json!({
            "prompt_tokens": PROMPT_TOKENS,
            "completion_tokens": COMPLETION_TOKENS,
            "total_tokens": PROMPT_TOKENS + COMPLETION_TOKENS,
            "prompt_tokens_details": {"cached_tokens": CACHED_TOKENS},
        });
    }
    (String::new(), c.to_string())
}

/// A streamed assistant reply of `parts`, `pace` before each event.
pub fn text_stream(parts: &[&str], pace: Duration) -> Reply {
    let mut events = vec![chunk(json!({"role": "assistant", "content": ""}), None)];
    events.extend(parts.iter().map(|p| chunk(json!({"content": p}), None)));
    events.push(chunk(json!({}), Some("stop")));
    events.push((String::new(), "[DONE]".into()));
    Reply::sse_paced(events, pace)
}

/// The command `RUNRM` or `RUNWRITE` asks for, when the client offers Cline CLI's
/// `run_commands` tool (its commands in a list) rather than `bash`.
fn run_commands(body: &Value, user: &str) -> Option<&'static str> {
    let tools = body["tools"].as_array()?;
    if !tools
        .iter()
        .any(|t| t["function"]["name"] == "run_commands")
    {
        return None;
    }
    if user.contains("RUNRM") {
        Some("rm -rf scratch")
    } else if user.contains("RUNWRITE") {
        Some("touch hello.txt")
    } else {
        None
    }
}

fn bash(command: &str) -> Value {
    json!({"command": command, "description": "Say hello"})
}

fn tool_call(name: &str, args: Value) -> Reply {
    tool_call_ending(name, args, "tool-calls")
}

/// One streamed tool call whose last chunk says `finish`.
fn tool_call_ending(name: &str, args: Value, finish: &str) -> Reply {
    static CALLS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let args = args.to_string();
    Reply::sse(vec![
        chunk(
            json!({"role": "assistant", "content": null, "tool_calls": [{"index": 0,
                "id": format!("call_{n}"), "type": "function",
                "function": {"name": name, "arguments": ""}}]}),
            None,
        ),
        chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": args}}]}),
            None,
        ),
        chunk(json!({}), Some(finish)),
        (String::new(), "[DONE]".into()),
    ])
}

/// Writes opencode's configuration under `config_home/opencode/opencode.json`: one provider
/// (`@ai-sdk/openai-compatible`, bundled in the binary) at `base_url`, bash asks for
/// permission, no update checks, no sharing.
pub fn write_config(config_home: &Path, base_url: &str) {
    write_config_as(config_home, base_url, "opencode");
}

/// [`write_config`] for opencode or a fork of it keeping its config under its own `name`
/// (Kilo: `<config>/kilo/kilo.json`).
pub fn write_config_as(config_home: &Path, base_url: &str, name: &str) {
    let dir = config_home.join(name);
    std::fs::create_dir_all(&dir).expect("create opencode config dir");
    let config = json!({
        "$schema": "https://opencode.ai/config.json",
        "autoupdate": false,
        "share": "disabled",
        "model": format!("standin/{MODEL}"),
        "small_model": format!("standin/{MODEL}"),
        "permission": {"bash": "ask"},
        "provider": {"standin": {
            "npm": "@ai-sdk/openai-compatible",
            "name": "Stand-in",
            "options": {"baseURL": format!("{base_url}/v1"), "apiKey": "test-key"},
            "models": {MODEL: {"name": "Stand-in"}},
        }},
    });
    std::fs::write(dir.join(format!("{name}.json")), config.to_string()).expect("write the config");
}

/// The environment an opencode pane runs with: its own XDG folders under `root` and the
/// switches that keep it off the network.
pub fn env(root: &Path) -> Vec<(String, String)> {
    env_as(root, "OPENCODE")
}

/// [`env`] for opencode or a fork whose switches start with `prefix` (Kilo: `KILO`, which
/// also uploads sessions unless `KILO_DISABLE_SESSION_INGEST` is set).
pub fn env_as(root: &Path, prefix: &str) -> Vec<(String, String)> {
    let dir = |name: &str| root.join(name).to_string_lossy().into_owned();
    let mut env = vec![
        ("XDG_CONFIG_HOME".to_string(), dir("config")),
        ("XDG_DATA_HOME".to_string(), dir("data")),
        ("XDG_STATE_HOME".to_string(), dir("state")),
        ("XDG_CACHE_HOME".to_string(), dir("cache")),
    ];
    for var in [
        "DISABLE_AUTOUPDATE",
        "DISABLE_LSP_DOWNLOAD",
        "DISABLE_MODELS_FETCH",
        "DISABLE_DEFAULT_PLUGINS",
        "DISABLE_TERMINAL_TITLE",
        "DISABLE_SHARE",
        "DISABLE_CLAUDE_CODE",
        "DISABLE_SESSION_INGEST",
    ] {
        env.push((format!("{prefix}_{var}"), "1".to_string()));
    }
    env
}
