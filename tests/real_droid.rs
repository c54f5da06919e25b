//! The released Factory Droid (pinned in tests/real/clients.txt) against the OpenAI chat
//! stand-in (tests/real/openai_chat.rs), offline (`FACTORY_AIRGAP_ENABLED`), in a private tmux
//! server with the watcher running: what `resolve`, `last`, `route`, `answer` and the alerts
//! say at each step of real turns, typed as a person types. Droid's log shows a pending
//! approval only as a running tool: `waiting` comes from its dialog on the screen.

mod common;
mod real;

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use serde_json::{json, Value};

use common::{FakeAgent, TmuxServer, Watch};
use real::http::{MockServer, Reply, Request};
use real::openai_chat::{self, chunk, ANSWER};
use real::{
    alerts_now, press, type_prompt, wait_alerts, wait_drawn, wait_for, wait_screen, Client, STEP,
};

/// A Claude transcript whose last answer routes into droid.
const CLAUDE_WITH_ANSWER: &str =
    "claude/d-kimuson-claude-code-viewer/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl";

/// What droid's approval dialog shows for the stand-in's `RUNWRITE` call.
const DIALOG: &str = "Command to approve · medium risk";

/// The chat stand-in, but `RUNWRITE` asks for droid's own shell tool as droid requires it:
/// `Execute` with a summary and a risk (medium: droid asks first).
fn reply(req: &Request) -> Reply {
    static CALLS: AtomicU32 = AtomicU32::new(0);
    let body = req.json().unwrap_or(Value::Null);
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let after_tool = messages.last().is_some_and(|m| m["role"] == "tool");
    if req.method != "POST"
        || after_tool
        || !openai_chat::last_user_text(&messages).contains("RUNWRITE")
    {
        return openai_chat::reply(req);
    }
    let n = CALLS.fetch_add(1, Ordering::Relaxed);
    let args = json!({"command": "touch hello.txt", "summary": "Create hello.txt",
        "riskLevelReason": "It writes a file.", "riskLevel": "medium"});
    Reply::sse(vec![
        chunk(
            json!({"role": "assistant", "content": null, "tool_calls": [{"index": 0,
                "id": format!("call_droid_{n}"), "type": "function",
                "function": {"name": "Execute", "arguments": ""}}]}),
            None,
        ),
        chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": args.to_string()}}]}),
            None,
        ),
        chunk(json!({}), Some("tool_calls")),
        (String::new(), "[DONE]".into()),
    ])
}

struct World {
    server: TmuxServer,
    api: MockServer,
}

impl World {
    /// The stand-in, and droid's settings in the temporary `HOME`: one custom model at the
    /// stand-in, `work/proj` and `work/shared` trusted (else its first start asks).
    fn new() -> World {
        let api = MockServer::start(reply);
        let server = TmuxServer::start();
        let dir = server.home().join(".factory");
        std::fs::create_dir_all(&dir).expect("create ~/.factory");
        let trusted: serde_json::Map<String, Value> = ["proj", "shared"]
            .iter()
            .map(|f| {
                let path = server.work(f).to_string_lossy().into_owned();
                (path, json!({"trustedAt": "2026-12-07T00:00:00.000Z"}))
            })
            .collect();
        let settings = json!({
            "customModels": [{"model": openai_chat::MODEL, "displayName": "Stand-in",
                "baseUrl": format!("{}/v1", api.url()), "apiKey": "sk-mock",
                "provider": "generic-chat-completion-api", "maxOutputTokens": 8192}],
            "logoAnimation": "off",
            "trustedFolders": trusted,
        });
        std::fs::write(dir.join("settings.json"), settings.to_string()).expect("write settings");
        World { server, api }
    }

    /// Starts droid (its platform binary, as npm's postinstall leaves `droid`) in
    /// `work/<dir>` and waits for its input box; the pane id.
    fn droid(&self, client: &Client, dir: &str) -> String {
        let modules = client.dir.join("node_modules/@factory");
        let program = ["cli-linux-x64", "cli-linux-x64-baseline", "cli-linux-arm64"]
            .iter()
            .map(|p| modules.join(p).join("bin/droid"))
            .find(|p| p.is_file())
            .unwrap_or_else(|| {
                panic!(
                    "{}: no droid binary in {}",
                    client.label(),
                    modules.display()
                )
            });
        let env: Vec<(String, String)> = [
            ("FACTORY_AIRGAP_ENABLED", "true"),
            ("FACTORY_DROID_AUTO_UPDATE_ENABLED", "false"),
            ("FACTORY_DISABLE_KEYRING", "true"),
            ("TERM", "xterm-256color"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let pane =
            self.server
                .new_window(&program.display().to_string(), &self.server.work(dir), &env);
        wait_drawn(&self.server, &pane, &client.label());
        wait_screen(&self.server, &pane, real::START, "droid's input box", |s| {
            s.contains("? for help") && s.contains("Stand-in")
        });
        pane
    }

    fn resolve(&self, pane: &str) -> Value {
        real::resolve(&self.server, pane)
    }

    fn wait_state(&self, pane: &str, state: &str, reason: Option<&str>) -> Value {
        real::wait_state(&self.server, pane, state, reason)
    }

    /// The newest user text the API received.
    fn last_prompt(&self) -> String {
        openai_chat::last_prompt(&self.api)
    }

    /// Types `RUNWRITE …` and waits for droid's approval dialog, read as `waiting`; the request.
    fn ask(&self, pane: &str, label: &str) -> Value {
        type_prompt(&self.server, pane, "RUNWRITE please");
        wait_screen(&self.server, pane, STEP, "the approval dialog", |s| {
            s.contains(DIALOG)
        });
        self.wait_state(pane, "waiting", Some("permission: Execute"));
        let row = real::pane_row(&self.server, pane);
        assert_eq!(
            row["request"]["summary"], "touch hello.txt",
            "{label}: {row:#}"
        );
        row["request"].clone()
    }
}

#[test]
#[cfg_attr(skip_real, ignore = "AGENTPANE_SKIP_REAL: real clients not run")]
fn droid_turns_read_right_alert_once_and_route_in_and_out() {
    for client in real::clients("droid") {
        let label = client.label();
        let w = World::new();
        let claude = w
            .server
            .spawn(&FakeAgent::claude().fixture(CLAUDE_WITH_ANSWER));
        let watch = Watch::start(&w.server, &[]);
        let pane = w.droid(&client, "proj");

        // Fresh: droid begins its log at start (a header only), though it may draw its input
        // box a moment before the file exists: idle all along, then read from that log. No alert.
        let fresh = real::wait_resolved(&w.server, &pane, STEP, "idle from its log", |r| {
            r["state"] == "idle" && r["reason"].is_null() && r["via"] == "cwd"
        });
        assert_eq!(fresh["agent"], "droid", "{label}: {fresh:#}");
        assert_eq!(fresh["via"], "cwd", "{label}: {fresh:#}");
        let transcript = fresh["transcript"].as_str().unwrap_or_default().to_string();
        let session = fresh["session_id"].as_str().unwrap_or_default().to_string();
        assert!(
            !session.is_empty() && transcript.ends_with(&format!("/{session}.jsonl")),
            "{label}: {fresh:#}"
        );

        // An answer: your-turn, `last` byte for byte, one alert.
        type_prompt(&w.server, &pane, "hello there");
        let done = w.wait_state(&pane, "your-turn", None);
        assert_eq!(done["transcript"], transcript.as_str(), "{label}: {done:#}");
        let last = w.server.agentpane(&["last", &pane, "--json"]);
        assert_eq!(last.code, 0, "{label}: {last:?}");
        assert_eq!(last.json()["text"], ANSWER, "{label}");
        assert_eq!(last.json()["source"], "transcript", "{label}");
        let alerts = wait_alerts(&watch, &pane, 1);
        assert_eq!(alerts, vec![("your-turn".into(), String::new())], "{label}");

        // Routing out: the answer reaches another agent byte for byte.
        let sink = real::scenario::routes_out(&w.server, &pane, ANSWER, &label);

        // Escape mid-stream: your-turn (interrupted), never alerted. Droid may draw the
        // streamed words only near the end of the 30 s reply (seen on a loaded machine): its
        // spinner, not the words, says the reply is streaming.
        type_prompt(&w.server, &pane, "SLOW please");
        wait_screen(&w.server, &pane, STEP, "the slow reply streaming", |s| {
            s.contains("Streaming...")
        });
        w.wait_state(&pane, "working", None);
        press(&w.server, &pane, "Escape");
        w.wait_state(&pane, "your-turn", Some("interrupted"));
        assert!(
            real::screen(&w.server, &pane).contains("Request cancelled by user"),
            "{label}"
        );

        // A command that asks first: waiting on Execute (from the screen), alerted, routes
        // refused; allowed from outside, held to the request shown: it runs, and its answer
        // closes the turn.
        let hello = w.server.work("proj").join("hello.txt");
        let req = w.ask(&pane, &label);
        let alerts = wait_alerts(&watch, &pane, 2);
        assert_eq!(
            alerts[1],
            ("waiting".into(), "permission: Execute".into()),
            "{label}"
        );
        let refused = w.server.agentpane(&["route", &claude, &pane]);
        assert_eq!(refused.code, 1, "{label}: {refused:?}");
        let fp = req["fingerprint"].as_str().unwrap_or_default().to_string();
        let run = real::answer(&w.server, &pane, "allow", &fp);
        assert_eq!(run.code, 0, "{label}: {run:?}");
        w.wait_state(&pane, "your-turn", None);
        assert!(hello.is_file(), "{label}: allowed, ran");
        let last = w.server.agentpane(&["last", &pane, "--json"]);
        assert_eq!(last.json()["text"], "Tool done.", "{label}: {last:?}");
        let again = real::answer(&w.server, &pane, "allow", &fp);
        assert_eq!(again.code, 1, "{label}: {again:?}");
        wait_alerts(&watch, &pane, 3);

        // Denied from outside: Escape cancels the call; the person stopped the turn.
        std::fs::remove_file(&hello).expect("remove hello.txt");
        let req = w.ask(&pane, &label);
        wait_alerts(&watch, &pane, 4);
        let fp = req["fingerprint"].as_str().unwrap_or_default().to_string();
        let run = real::answer(&w.server, &pane, "deny", &fp);
        assert_eq!(run.code, 0, "{label}: {run:?}");
        assert_eq!(run.json()["keys"], json!(["Escape"]), "{label}: {run:?}");
        w.wait_state(&pane, "your-turn", Some("interrupted"));
        assert!(!hello.exists(), "{label}: denied, never ran");

        // HTTP 400: attention naming it; no answer handed on.
        type_prompt(&w.server, &pane, "BADREQ now");
        let reason = "api error 400: model stand-in does not exist";
        w.wait_state(&pane, "attention", Some(reason));
        let alerts = wait_alerts(&watch, &pane, 5);
        assert_eq!(alerts[4], ("attention".into(), reason.into()), "{label}");
        assert_eq!(w.server.agentpane(&["last", &pane]).code, 1, "{label}");
        assert_eq!(w.server.agentpane(&["route", &pane, &sink]).code, 1);

        // Routing in: a Claude answer pasted into droid's box reaches the API intact.
        let source = w.server.agentpane(&["last", &claude, "--json"]).json()["text"]
            .as_str()
            .unwrap()
            .to_string();
        let routed = w.server.agentpane(&["route", &claude, &pane]);
        assert_eq!(routed.code, 0, "{label}: {routed:?}");
        let got = wait_for(STEP, "the routed prompt at the API", || {
            let p = w.last_prompt();
            p.starts_with(&source[..20]).then_some(p)
        });
        assert_eq!(
            got, source,
            "{label}: the API got another text than was routed"
        );
        w.wait_state(&pane, "your-turn", None);
        wait_alerts(&watch, &pane, 6);

        // HTTP 429: droid retries it for about 20 s, writing nothing until it gives up, its
        // screen saying so. Attention "retrying" meanwhile, then the error; one alert.
        type_prompt(&w.server, &pane, "QUOTA please");
        let want = "API error — retrying (attempt ";
        wait_for(
            Duration::from_secs(60),
            &format!("{label}: {want}…"),
            || {
                let r = w.resolve(&pane);
                (r["state"] == "attention"
                    && r["reason"].as_str().is_some_and(|g| g.starts_with(want)))
                .then_some(r)
            },
        );
        wait_for(
            Duration::from_secs(90),
            "attention after the 429 retries",
            || {
                let r = w.resolve(&pane);
                (r["state"] == "attention" && r["reason"] == "quota exceeded").then_some(r)
            },
        );
        let alerts = wait_alerts(&watch, &pane, 7);
        assert_eq!(alerts[6].0, "attention", "{label}: {alerts:?}");
        std::thread::sleep(Duration::from_secs(3));
        let alerts = alerts_now(&watch, &pane);
        assert_eq!(alerts.len(), 7, "{label}: one alert a turn: {alerts:?}");
        assert!(
            !alerts.iter().any(|a| a.1 == "interrupted"),
            "{label}: {alerts:?}"
        );
        assert_eq!(w.server.agentpane(&["last", &pane]).code, 1, "{label}");
        assert_eq!(watch.stop(), 0);
    }
}

#[test]
#[cfg_attr(skip_real, ignore = "AGENTPANE_SKIP_REAL: real clients not run")]
fn two_droid_sessions_in_one_folder_each_show_their_own() {
    for client in real::clients("droid") {
        let label = client.label();
        let w = World::new();
        // Each begins its log at start, a moment after it draws its input box (once, under a
        // full suite's load, the second's was not read within a minute): a pane reads its own
        // session once its log exists, and nothing of a neighbour's before.
        let a = w.droid(&client, "shared");
        let ra = real::wait_resolved(&w.server, &a, STEP, "idle from its own log", |r| {
            r["state"] == "idle" && r["session_id"].is_string()
        });
        let b = w.droid(&client, "shared");
        let rb = w.resolve(&b);
        assert_eq!(rb["state"], "idle", "{label}: {rb:#}");
        assert_ne!(rb["session_id"], ra["session_id"], "{label}: {rb:#}");
        type_prompt(&w.server, &a, "hello from a");
        let done = w.wait_state(&a, "your-turn", None);
        assert_eq!(done["session_id"], ra["session_id"], "{label}: {done:#}");
        let rb = w.resolve(&b);
        assert_eq!(
            rb["state"], "idle",
            "{label}: the neighbour's answer is not b's"
        );
        assert_ne!(rb["session_id"], ra["session_id"], "{label}: {rb:#}");
        type_prompt(&w.server, &b, "SLOW from b");
        let busy = w.wait_state(&b, "working", None);
        assert!(busy["session_id"].is_string(), "{label}: {busy:#}");
        assert_ne!(busy["session_id"], ra["session_id"], "{label}: {busy:#}");
        if rb["session_id"].is_string() {
            assert_eq!(busy["session_id"], rb["session_id"], "{label}: {busy:#}");
        }
        assert_eq!(w.resolve(&a)["state"], "your-turn", "{label}");
        assert_ne!(busy["transcript"], done["transcript"], "{label}");
    }
}
