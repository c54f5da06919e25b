//! A stand-in for the Anthropic Messages API that Claude Code talks to, scripted by a marker
//! word in the last user prompt:
//!
//! | marker    | reply |
//! |-----------|-------|
//! | `PLAIN`   | `Answer: <the word after the marker>.` at once |
//! | `SLOW`    | a long answer streamed over [`SLOW_STREAM`] |
//! | `TOOL`    | a `Bash` call that needs permission; after its result, `Tool finished.` |
//! | `E400`    | HTTP 400 `invalid_request_error` |
//! | `QUOTA`   | HTTP 429 `rate_limit_error` (not retried) |
//! | `BUSY429` | HTTP 429 `rate_limit_error` with `retry-after` (retried by the client) while [`Anthropic::limiting`]; then `Recovered.` |
//! | `AGENT`   | an `Agent`/`Task` call (`Sub research`) whose subagent answers after [`SUB_DELAY`]; then `Main done after the agent.` |
//! | otherwise | `Routed reply.` (a routed prompt carries no marker) |
//!
//! Side requests (no `tools`: titles, summaries) get a short text; other paths are logged and
//! answered with `{}`.

#![allow(dead_code)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};

use crate::real::http::{Chunk, MockServer, Reply, Request};

/// How long the `SLOW` answer streams.
pub const SLOW_STREAM: Duration = Duration::from_secs(15);
/// How long the subagent's first request takes before it answers.
pub const SUB_DELAY: Duration = Duration::from_secs(8);
/// The `TOOL` marker's command (not read-only, so Claude Code asks).
pub const TOOL_COMMAND: &str = "touch agentpane-tool-ran.txt";
/// The subagent's description (the background reason names it).
pub const AGENT_DESCRIPTION: &str = "Sub research";

/// An `ANTHROPIC_AUTH_TOKEN` whose claims (`{"aud": "claude-gateway", "sub":
/// "agentpane-test", "exp": 4102444800}`, unsigned) make Claude Code 2.1.332 read the plan
/// headers as it does for a claude.ai login (it reads them for no other token).
pub const GATEWAY_TOKEN: &str = "eyJhbGciOiAibm9uZSIsICJ0eXAiOiAiSldUIn0.\
    eyJhdWQiOiAiY2xhdWRlLWdhdGV3YXkiLCAic3ViIjogImFnZW50cGFuZS10ZXN0IiwgImV4cCI6IDQxMDI0NDQ4MDB9.\
    c2ln";

/// The running stand-in.
pub struct Anthropic {
    pub server: MockServer,
    unknown: Arc<Mutex<Vec<String>>>,
    limiting: Arc<std::sync::atomic::AtomicBool>,
    /// Whether the client gets [`GATEWAY_TOKEN`] (a stand-in that reports plan windows).
    gateway: bool,
}

impl Anthropic {
    pub fn start() -> Anthropic {
        Anthropic::start_with_plan(&[])
    }

    /// A stand-in whose model replies carry plan windows as the API sends them
    /// (`anthropic-ratelimit-unified-<5h|7d>-utilization` as a fraction, `…-reset` in Unix
    /// seconds): `(window, used fraction, reset)`. With any, the client gets a token that
    /// makes it read them ([`GATEWAY_TOKEN`]).
    pub fn start_with_plan(windows: &[(&str, f64, i64)]) -> Anthropic {
        let unknown = Arc::new(Mutex::new(Vec::new()));
        let log = unknown.clone();
        let limiting = Arc::new(std::sync::atomic::AtomicBool::new(true));
        let limit = limiting.clone();
        let mut plan: Vec<(String, String)> = Vec::new();
        if !windows.is_empty() {
            plan.push((
                "anthropic-ratelimit-unified-status".into(),
                "allowed".into(),
            ));
        }
        for (name, used, reset) in windows {
            let key = format!("anthropic-ratelimit-unified-{name}");
            plan.push((format!("{key}-utilization"), used.to_string()));
            plan.push((format!("{key}-reset"), reset.to_string()));
        }
        let server = MockServer::start(move |req| {
            let reply = respond(req, &log, limit.load(std::sync::atomic::Ordering::SeqCst));
            match reply {
                Reply::Stream {
                    chunks,
                    mut headers,
                } => {
                    headers.extend(plan.iter().cloned());
                    Reply::Stream { chunks, headers }
                }
                body => body,
            }
        });
        Anthropic {
            server,
            unknown,
            limiting,
            gateway: !windows.is_empty(),
        }
    }

    /// Whether `BUSY429` prompts are answered with a retryable 429 (at start: yes).
    pub fn limiting(&self, on: bool) {
        self.limiting.store(on, std::sync::atomic::Ordering::SeqCst);
    }

    /// The environment that points Claude Code here and keeps it offline.
    pub fn client_env(&self) -> Vec<(String, String)> {
        [
            ("ANTHROPIC_BASE_URL", self.server.url()),
            (
                "ANTHROPIC_AUTH_TOKEN",
                match self.gateway {
                    true => GATEWAY_TOKEN.to_string(),
                    false => "agentpane-test-token".to_string(),
                },
            ),
            ("DISABLE_TELEMETRY", "1".into()),
            ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".into()),
            ("DISABLE_AUTOUPDATER", "1".into()),
            ("DISABLE_ERROR_REPORTING", "1".into()),
            // Else every start clones the plugin marketplace from github.com.
            (
                "CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL",
                "1".into(),
            ),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
    }

    /// The user prompts of the main conversation's model requests, in order (the human's
    /// text blocks of each request's last message, system reminders left out).
    pub fn prompts(&self) -> Vec<String> {
        self.server
            .requests()
            .iter()
            .filter_map(Request::json)
            .filter(has_tools)
            .filter_map(|body| last_user_text(&body))
            .collect()
    }

    /// The tool results the client sent back, by tool call id, in order (the last user
    /// message of each main-conversation request): `(id, is_error)`.
    pub fn tool_results(&self) -> Vec<(String, bool)> {
        let mut out: Vec<(String, bool)> = Vec::new();
        for body in self.server.requests().iter().filter_map(Request::json) {
            let Some(last) = last_user(&body) else {
                continue;
            };
            for b in last["content"].as_array().into_iter().flatten() {
                if b["type"] != "tool_result" {
                    continue;
                }
                let id = b["tool_use_id"].as_str().unwrap_or_default().to_string();
                if !out.iter().any(|(seen, _)| *seen == id) {
                    out.push((id, b["is_error"].as_bool().unwrap_or(false)));
                }
            }
        }
        out
    }

    /// Paths the stand-in does not know (for diagnosing a new client release).
    pub fn unknown_paths(&self) -> Vec<String> {
        self.unknown.lock().unwrap().clone()
    }
}

fn respond(req: &Request, unknown: &Mutex<Vec<String>>, limiting: bool) -> Reply {
    let path = req.path.split('?').next().unwrap_or("");
    match (req.method.as_str(), path) {
        ("POST", "/v1/messages") => {}
        ("POST", "/v1/messages/count_tokens") => {
            return Reply::json(200, json!({"input_tokens": 100}));
        }
        _ => {
            unknown
                .lock()
                .unwrap()
                .push(format!("{} {}", req.method, req.path));
            eprintln!("anthropic stand-in: unknown {} {}", req.method, req.path);
            return Reply::json(200, json!({}));
        }
    }
    let Some(body) = req.json() else {
        return error(400, "invalid_request_error", "body is not JSON");
    };
    let model = body["model"].as_str().unwrap_or("claude-test").to_string();
    if !has_tools(&body) {
        return message(&model, vec![text_block("Ok")], "end_turn", Duration::ZERO);
    }
    let last = last_user(&body).cloned().unwrap_or(Value::Null);
    // 2.1.332 sends the notification inside a system reminder.
    if all_text_of(&last).contains("<task-notification>") {
        return message(
            &model,
            vec![text_block("Main done after the agent.")],
            "end_turn",
            Duration::ZERO,
        );
    }
    let prompt = last_user_text(&body).unwrap_or_default();
    if has_tool_result(&last) && prompt.trim().is_empty() {
        let done = if all_text(&body).contains("SUBTASK") {
            "Subagent finished."
        } else {
            "Tool finished."
        };
        return message(&model, vec![text_block(done)], "end_turn", Duration::ZERO);
    }
    if prompt.contains("SUBTASK") {
        return delayed(
            message(
                &model,
                vec![text_block("Subagent finished.")],
                "end_turn",
                Duration::ZERO,
            ),
            SUB_DELAY,
        );
    }
    if prompt.contains("E400") {
        return error(
            400,
            "invalid_request_error",
            "messages: text content blocks must be non-empty",
        );
    }
    if prompt.contains("QUOTA") {
        return error(
            429,
            "rate_limit_error",
            "Quota exceeded for this organization",
        );
    }
    if prompt.contains("BUSY429") {
        if limiting {
            return Reply::Body {
                status: 429,
                content_type: "application/json".into(),
                body: json!({"type": "error", "error": {"type": "rate_limit_error", "message": "Number of request tokens has exceeded your per-minute rate limit"}}).to_string(),
                headers: vec![
                    ("retry-after".into(), "3".into()),
                    ("x-should-retry".into(), "true".into()),
                ],
            };
        }
        return message(
            &model,
            vec![text_block("Recovered.")],
            "end_turn",
            Duration::ZERO,
        );
    }
    if prompt.contains("SLOW") {
        let words: Vec<String> = (1..=60).map(|i| format!("word{i} ")).collect();
        return message_paced(&model, &words, SLOW_STREAM / 60);
    }
    if prompt.contains("TOOL") {
        return message(
            &model,
            vec![tool_block(
                "Bash",
                json!({"command": TOOL_COMMAND, "description": "Create a marker file"}),
            )],
            "tool_use",
            Duration::ZERO,
        );
    }
    if prompt.contains("AGENT") {
        let tool = tool_names(&body)
            .into_iter()
            .find(|n| n == "Agent" || n == "Task")
            .unwrap_or_else(|| "Task".into());
        let mut input = json!({
            "description": AGENT_DESCRIPTION,
            "prompt": "SUBTASK: look around and report.",
            "subagent_type": "general-purpose",
        });
        if tool_has_param(&body, &tool, "run_in_background") {
            input["run_in_background"] = json!(true);
        }
        return message(
            &model,
            vec![tool_block(&tool, input)],
            "tool_use",
            Duration::ZERO,
        );
    }
    if let Some(word) = super::word_after(&prompt, "PLAIN") {
        return message(
            &model,
            vec![text_block(&format!("Answer: {word}."))],
            "end_turn",
            Duration::ZERO,
        );
    }
    message(
        &model,
        vec![text_block("Routed reply.")],
        "end_turn",
        Duration::ZERO,
    )
}

/// The last message with role `user` (newer clients put `system` messages after it).
fn last_user(body: &Value) -> Option<&Value> {
    body["messages"]
        .as_array()?
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
}

fn has_tools(body: &Value) -> bool {
    body["tools"].as_array().is_some_and(|t| !t.is_empty())
}

fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["name"].as_str().map(str::to_string))
        .collect()
}

fn tool_has_param(body: &Value, tool: &str, param: &str) -> bool {
    body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|t| t["name"] == tool)
        .is_some_and(|t| !t["input_schema"]["properties"][param].is_null())
}

fn has_tool_result(message: &Value) -> bool {
    message["content"]
        .as_array()
        .is_some_and(|b| b.iter().any(|b| b["type"] == "tool_result"))
}

/// Every text of one message, joined.
fn all_text_of(message: &Value) -> String {
    match &message["content"] {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// Every user text of a request (the subagent's prompt is its first message).
fn all_text(body: &Value) -> String {
    body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["role"] == "user")
        .map(all_text_of)
        .collect::<Vec<_>>()
        .join("\n")
}

/// The human's own text in the last user message of a request: the newest of its text
/// blocks that are not system reminders or interruption notes (a prompt typed after an
/// interrupted tool call shares its message with the refused tool's result). `None` when
/// there is none.
pub fn last_user_text(body: &Value) -> Option<String> {
    let last = last_user(body)?;
    let texts: Vec<&str> = match &last["content"] {
        Value::String(s) => vec![s.as_str()],
        Value::Array(blocks) => blocks
            .iter()
            .filter(|b| b["type"] == "text")
            .filter_map(|b| b["text"].as_str())
            .filter(|t| {
                let t = t.trim_start();
                !t.starts_with("<system-reminder>") && !t.starts_with("[Request interrupted")
            })
            .collect(),
        _ => return None,
    };
    // After a failed request the client sends the failed prompt and the next one in one
    // message: the newest text is the prompt.
    let text = texts.last()?;
    (!text.trim().is_empty()).then(|| unwrap_paste(text))
}

/// Claude Code 2.1.332 sends a pasted multi-line text as
/// `\n\n<pasted_content id="…">\nTEXT\n</pasted_content id="…">\n`: the text itself.
fn unwrap_paste(text: &str) -> String {
    let inner = (|| {
        let open = text.find("<pasted_content id=\"")?;
        let body = open + text[open..].find(">\n")? + 2;
        let close = text.rfind("\n</pasted_content id=\"")?;
        (body <= close).then(|| text[body..close].to_string())
    })();
    inner.unwrap_or_else(|| text.to_string())
}

fn text_block(text: &str) -> Value {
    json!({"type": "text", "text": text})
}

fn tool_block(name: &str, input: Value) -> Value {
    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    json!({"type": "tool_use", "id": format!("toolu_agentpane{n:04}"), "name": name, "input": input})
}

fn message_id() -> String {
    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("msg_agentpane{}{n:04}", std::process::id())
}

/// What every message's request used: input, cache creation, cache read (its prompt, the
/// context in use: their sum), and its output at the start of the stream.
pub const USAGE: (u64, u64, u64, u64) = (12, 300, 4000, 1);

fn start_event(model: &str) -> (String, String) {
    let (input, created, read, output) = USAGE;
    (
        "message_start".into(),
        json!({"type": "message_start", "message": {
            "id": message_id(), "type": "message", "role": "assistant", "model": model,
            "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": input, "output_tokens": output,
                      "cache_creation_input_tokens": created, "cache_read_input_tokens": read}}})
        .to_string(),
    )
}

/// Every message's output, as its stream's end states it.
pub const OUTPUT: u64 = 8;

fn end_events(stop: &str) -> Vec<(String, String)> {
    vec![
        (
            "message_delta".into(),
            json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null},
                   "usage": {"output_tokens": OUTPUT}})
            .to_string(),
        ),
        (
            "message_stop".into(),
            json!({"type": "message_stop"}).to_string(),
        ),
    ]
}

/// One streamed message with these content blocks, `pace` before each event.
fn message(model: &str, blocks: Vec<Value>, stop: &str, pace: Duration) -> Reply {
    let mut events = vec![start_event(model)];
    for (i, block) in blocks.into_iter().enumerate() {
        let (start, delta) = match block["type"].as_str() {
            Some("tool_use") => (
                json!({"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}),
                json!({"type": "input_json_delta", "partial_json": block["input"].to_string()}),
            ),
            _ => (
                json!({"type": "text", "text": ""}),
                json!({"type": "text_delta", "text": block["text"]}),
            ),
        };
        events.push((
            "content_block_start".into(),
            json!({"type": "content_block_start", "index": i, "content_block": start}).to_string(),
        ));
        events.push((
            "content_block_delta".into(),
            json!({"type": "content_block_delta", "index": i, "delta": delta}).to_string(),
        ));
        events.push((
            "content_block_stop".into(),
            json!({"type": "content_block_stop", "index": i}).to_string(),
        ));
    }
    events.extend(end_events(stop));
    Reply::sse_paced(events, pace)
}

/// A text message whose words arrive one by one, `pace` apart.
fn message_paced(model: &str, words: &[String], pace: Duration) -> Reply {
    let mut events = vec![
        start_event(model),
        (
            "content_block_start".into(),
            json!({"type": "content_block_start", "index": 0,
                   "content_block": {"type": "text", "text": ""}})
            .to_string(),
        ),
    ];
    let mut chunks: Vec<Chunk> = sse_chunks(events.drain(..), Duration::ZERO);
    let deltas = words.iter().map(|w| {
        (
            "content_block_delta".to_string(),
            json!({"type": "content_block_delta", "index": 0,
                   "delta": {"type": "text_delta", "text": w}})
            .to_string(),
        )
    });
    chunks.extend(sse_chunks(deltas, pace));
    let mut tail = vec![(
        "content_block_stop".to_string(),
        json!({"type": "content_block_stop", "index": 0}).to_string(),
    )];
    tail.extend(end_events("end_turn"));
    chunks.extend(sse_chunks(tail, Duration::ZERO));
    Reply::Stream {
        chunks,
        headers: Vec::new(),
    }
}

fn sse_chunks(events: impl IntoIterator<Item = (String, String)>, pace: Duration) -> Vec<Chunk> {
    match Reply::sse_paced(events.into_iter().collect(), pace) {
        Reply::Stream { chunks, .. } => chunks,
        Reply::Body { .. } => unreachable!("sse_paced streams"),
    }
}

/// The same stream, its first event held back by `delay`.
fn delayed(reply: Reply, delay: Duration) -> Reply {
    match reply {
        Reply::Stream {
            mut chunks,
            headers,
        } => {
            if let Some(first) = chunks.first_mut() {
                first.delay += delay;
            }
            Reply::Stream { chunks, headers }
        }
        body => body,
    }
}

/// An API error as the Messages API writes it; never retried by the client.
fn error(status: u16, kind: &str, text: &str) -> Reply {
    Reply::Body {
        status,
        content_type: "application/json".into(),
        body: json!({"type": "error", "error": {"type": kind, "message": text}}).to_string(),
        headers: vec![("x-should-retry".into(), "false".into())],
    }
}
