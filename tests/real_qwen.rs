//! The released Qwen Code (pinned in tests/real/clients.txt) against its OpenAI Chat stand-in
//! (tests/real/qwen.rs), in a private tmux server with the watcher running: what `resolve`,
//! `last`, `route` and the alerts say at each step of real turns, typed as a person types.
//!
//! The 429 step comes last: Qwen Code first retries a 429 inside the request six times with
//! only a spinner on screen (~95 s of back-off; the stand-in's `retry-after-ms` makes it
//! ~12 s), and only then shows the countdown agentpane reads.
//!
//! `QWEN_STANDIN_DIR=/tmp/x cargo test --test real_qwen -- --ignored --nocapture` serves the
//! stand-in alone for a hand-driven recording session (see [`qwen_stand_in_serves_until_stopped`]).

mod common;
mod live;
mod real;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use agentpane::events::AgentKind;
use serde_json::Value;

use common::{FakeAgent, TmuxServer, Watch};
use real::http::MockServer;
use real::openai_chat::{self, ANSWER};
use real::{
    alerts_now, press, start, type_prompt, wait_alerts, wait_for, wait_screen, Client, STEP,
};

/// A Claude transcript whose last answer routes into Qwen Code.
const CLAUDE_WITH_ANSWER: &str =
    "claude/d-kimuson-claude-code-viewer/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl";

/// How long Qwen Code retries a 429 in silence before it shows the countdown (six retries
/// 2 s apart, as the stand-in asks), with room for a loaded machine.
const SILENT_RETRIES: Duration = Duration::from_secs(60);

/// A tmux server with the stand-in and Qwen Code's settings pointing at it.
struct World {
    server: TmuxServer,
    api: MockServer,
}

impl World {
    fn new() -> World {
        let api = real::qwen::start();
        let server = TmuxServer::start();
        start::qwen_config(&server);
        World { server, api }
    }

    /// Starts `client` in `work/<dir>` and waits for its input box; the pane id.
    fn qwen(&self, client: &Client, dir: &str) -> String {
        start::qwen(&self.server, client, &self.api.url(), dir)
    }

    fn resolve(&self, pane: &str) -> Value {
        real::resolve(&self.server, pane)
    }

    /// Waits until `pane` reads `state` with `reason` (`None`: no reason); the resolution.
    fn wait_state(&self, pane: &str, state: &str, reason: Option<&str>) -> Value {
        real::wait_state(&self.server, pane, state, reason)
    }

    /// The text parts of the newest prompt the main loop sent (requests that offer tools).
    fn last_prompt_parts(&self) -> Vec<String> {
        self.api
            .requests()
            .iter()
            .rev()
            .filter_map(|r| r.json())
            .filter(|b| b["tools"].as_array().is_some_and(|t| !t.is_empty()))
            .find_map(|b| {
                let messages = b["messages"].as_array()?.clone();
                let user = messages.iter().rev().find(|m| m["role"] == "user")?.clone();
                Some(match &user["content"] {
                    Value::String(s) => vec![s.clone()],
                    Value::Array(parts) => parts
                        .iter()
                        .filter_map(|p| p["text"].as_str().map(str::to_string))
                        .collect(),
                    _ => Vec::new(),
                })
            })
            .unwrap_or_default()
    }
}

#[test]
#[cfg_attr(skip_real, ignore = "AGENTPANE_SKIP_REAL: real clients not run")]
fn qwen_turns_read_right_alert_once_and_route_in_and_out() {
    for client in real::clients("qwen") {
        let label = client.label();
        let started = Instant::now();
        let w = World::new();
        // A Claude pane with an answer to route in, started before the watcher so its
        // finished turn is history, not news.
        let claude = w
            .server
            .spawn(&FakeAgent::claude().fixture(CLAUDE_WITH_ANSWER));
        let watch = Watch::start(&w.server, &[]);
        let pane = w.qwen(&client, "proj");

        // A fresh session: its record names it, its log appears at the first prompt.
        let fresh = w.wait_state(&pane, "idle", None);
        assert_eq!(fresh["agent"], "qwen", "{label}: {fresh:#}");
        assert!(fresh["transcript"].is_null(), "{label}: {fresh:#}");
        assert!(fresh["session_id"].is_string(), "{label}: {fresh:#}");
        std::thread::sleep(Duration::from_secs(2));
        assert!(
            alerts_now(&watch, &pane).is_empty(),
            "{label}: a fresh start is no news"
        );

        // An answer: your-turn, `last` is the answer byte for byte, one alert.
        type_prompt(&w.server, &pane, "hello there");
        let done = w.wait_state(&pane, "your-turn", None);
        let transcript = done["transcript"].as_str().unwrap().to_string();
        // The stand-in's usage as Qwen Code logged it: the reply's prompt as the context; each
        // request's counts in the session (the memory extractor's request may follow the turn).
        let usage = real::usage::of_log(AgentKind::Qwen, &transcript);
        assert_eq!(usage.model.as_deref(), Some(real::qwen::MODEL), "{label}");
        let (p, o) = (openai_chat::PROMPT_TOKENS, openai_chat::COMPLETION_TOKENS);
        assert_eq!(usage.context_tokens, Some(p), "{label}: {usage:?}");
        let requests = usage.session_output.unwrap_or(0) / o;
        assert!((1..=2).contains(&requests), "{label}: {usage:?}");
        assert_eq!(
            usage.session_input,
            Some(requests * p),
            "{label}: {usage:?}"
        );
        assert_eq!(
            usage.session_output,
            Some(requests * o),
            "{label}: {usage:?}"
        );
        assert!(
            transcript.contains("/projects/") && transcript.contains("/chats/"),
            "{label}: {done:#}"
        );
        assert_eq!(done["via"], "session-record", "{label}");
        let last = w.server.agentpane(&["last", &pane, "--json"]);
        assert_eq!(last.code, 0, "{label}: {last:?}");
        assert_eq!(last.json()["text"], ANSWER, "{label}");
        assert_eq!(last.json()["source"], "transcript", "{label}");
        let alerts = wait_alerts(&watch, &pane, 1);
        assert_eq!(alerts, vec![("your-turn".into(), String::new())], "{label}");

        // Routing out: the answer reaches another agent byte for byte.
        let sink = real::scenario::routes_out(&w.server, &pane, ANSWER, &label);

        // A shell call waiting for approval: waiting with the tool, alerted; nothing may be
        // routed into the dialog. Approved, it runs and the turn ends.
        type_prompt(&w.server, &pane, "RUNBASH please");
        wait_screen(&w.server, &pane, STEP, "the approval dialog", |s| {
            s.contains("Allow execution")
        });
        w.wait_state(&pane, "waiting", Some("permission: run_shell_command"));
        let alerts = wait_alerts(&watch, &pane, 2);
        assert_eq!(
            alerts[1],
            ("waiting".into(), "permission: run_shell_command".into()),
            "{label}"
        );
        let refused = w.server.agentpane(&["route", &claude, &pane]);
        assert_eq!(refused.code, 1, "{label}: {refused:?}");
        assert!(
            refused.stderr.contains("waiting") || refused.stdout.contains("waiting"),
            "{label}: {refused:?}"
        );
        press(&w.server, &pane, "Enter");
        w.wait_state(&pane, "your-turn", None);
        let last = w.server.agentpane(&["last", &pane, "--json"]);
        assert_eq!(last.code, 0, "{label}: {last:?}");
        assert_eq!(last.json()["text"], "Tool done.", "{label}");
        let alerts = wait_alerts(&watch, &pane, 3);
        assert_eq!(alerts[2], ("your-turn".into(), String::new()), "{label}");

        // Escape mid-stream: your-turn (interrupted), never alerted; the client puts the
        // cancelled prompt back in its input box.
        type_prompt(&w.server, &pane, "SLOW please");
        wait_screen(&w.server, &pane, STEP, "the slow reply streaming", |s| {
            s.contains("word5 ")
        });
        w.wait_state(&pane, "working", None);
        press(&w.server, &pane, "Escape");
        w.wait_state(&pane, "your-turn", Some("interrupted"));
        wait_screen(&w.server, &pane, STEP, "the prompt back in the box", |s| {
            agentpane::agents::qwen::pane::held_lines(s) > 0
        });

        // Routing in, into the box holding the cancelled prompt: the box is cleared first,
        // and the API gets the routed answer alone, byte for byte.
        let source = w.server.agentpane(&["last", &claude, "--json"]).json()["text"]
            .as_str()
            .unwrap()
            .to_string();
        let routed = w.server.agentpane(&["route", &claude, &pane]);
        assert_eq!(
            routed.code,
            0,
            "{label}: {routed:?}\n{}",
            real::screen(&w.server, &pane)
        );
        let parts = wait_for(STEP, "the routed prompt at the API", || {
            let parts = w.last_prompt_parts();
            parts
                .last()
                .is_some_and(|p| p.contains(&source[..20]))
                .then_some(parts)
        });
        assert_eq!(
            parts.last(),
            Some(&source),
            "{label}: the API got {parts:?}"
        );
        assert!(
            !parts.iter().any(|p| p.contains("SLOW please")),
            "{label}: the cancelled prompt went with it: {parts:?}"
        );
        w.wait_state(&pane, "your-turn", None);
        let alerts = wait_alerts(&watch, &pane, 4);
        assert_eq!(alerts[3], ("your-turn".into(), String::new()), "{label}");

        // HTTP 400: attention naming it, alerted; its turn has no answer to hand on.
        type_prompt(&w.server, &pane, "BADREQ now");
        let reason = "api error 400: model mock-model does not exist";
        w.wait_state(&pane, "attention", Some(reason));
        let alerts = wait_alerts(&watch, &pane, 5);
        assert_eq!(alerts[4], ("attention".into(), reason.into()), "{label}");
        real::scenario::nothing_to_hand_on(&w.server, &pane, &sink, &label);

        // HTTP 429: working while the client retries in silence, attention once the countdown
        // shows, one alert for the turn; Escape during the wait ends it as interrupted.
        type_prompt(&w.server, &pane, "QUOTA please");
        w.wait_state(&pane, "working", Some("retrying"));
        let want = "rate limit — retrying (attempt 1/10, next in ";
        let row = wait_for(
            SILENT_RETRIES,
            &format!("{label}: attention, {want}…"),
            || {
                let r = w.resolve(&pane);
                (r["state"] == "attention"
                    && r["reason"].as_str().is_some_and(|g| g.starts_with(want)))
                .then_some(r)
            },
        );
        assert_eq!(row["retry"]["attempt"], 1, "{label}: {row:#}");
        assert!(row["retry"]["next_at"].is_string(), "{label}: {row:#}");
        let alerts = wait_alerts(&watch, &pane, 6);
        assert_eq!(alerts[5].0, "attention", "{label}: {alerts:?}");
        std::thread::sleep(Duration::from_secs(8));
        assert_eq!(alerts_now(&watch, &pane).len(), 6, "{label}: one per turn");
        press(&w.server, &pane, "Escape");
        w.wait_state(&pane, "your-turn", Some("interrupted"));

        // One alert per turn that needs the person; never the interrupts.
        std::thread::sleep(Duration::from_secs(3));
        let alerts = alerts_now(&watch, &pane);
        assert_eq!(alerts.len(), 6, "{label}: {alerts:?}");
        assert!(
            !alerts.iter().any(|a| a.1 == "interrupted"),
            "{label}: {alerts:?}"
        );
        assert_eq!(watch.stop(), 0);
        eprintln!("{label}: the scenario took {:.0?}", started.elapsed());
    }
}

#[test]
#[ignore = "serves the stand-in for a hand-driven recording session"]
fn qwen_stand_in_serves_until_stopped() {
    let dir = PathBuf::from(std::env::var_os("QWEN_STANDIN_DIR").expect("QWEN_STANDIN_DIR"));
    let requests = dir.join("requests");
    std::fs::create_dir_all(&requests).expect("create requests dir");
    let api = real::qwen::start();
    std::fs::write(dir.join("url"), api.url()).expect("write url");
    let started = Instant::now();
    let mut written = 0;
    while !dir.join("stop").exists() && started.elapsed() < Duration::from_secs(3600) {
        for (n, req) in api.requests().iter().enumerate().skip(written) {
            let body = req.json().unwrap_or(serde_json::Value::Null);
            let record = serde_json::json!({"method": req.method, "path": req.path,
                "body": body});
            std::fs::write(requests.join(format!("{n:03}.json")), record.to_string())
                .expect("write request");
            written = n + 1;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
#[cfg_attr(skip_real, ignore = "AGENTPANE_SKIP_REAL: real clients not run")]
fn a_pending_command_is_shown_and_answered_from_outside() {
    for client in real::clients("qwen") {
        let label = client.label();
        let w = World::new();
        let pane = w.qwen(&client, "proj");
        let ask = || -> Value {
            type_prompt(&w.server, &pane, "RUNBASH please");
            wait_screen(&w.server, &pane, STEP, "the approval dialog", |s| {
                s.contains("Allow execution")
            });
            w.wait_state(&pane, "waiting", Some("permission: run_shell_command"));
            let req = real::pane_row(&w.server, &pane)["request"].clone();
            assert!(
                req["summary"]
                    .as_str()
                    .is_some_and(|s| s.starts_with("echo hello")),
                "{label}: {req:#}"
            );
            req
        };

        // Allow once: it runs and the answer after it closes the turn.
        let req = ask();
        let fp = req["fingerprint"].as_str().unwrap().to_string();
        let run = real::answer(&w.server, &pane, "allow", &fp);
        assert_eq!(run.code, 0, "{label}: {run:?}");
        w.wait_state(&pane, "your-turn", None);
        let last = w.server.agentpane(&["last", &pane, "--json"]);
        assert_eq!(last.json()["text"], "Tool done.", "{label}: {last:?}");
        let again = real::answer(&w.server, &pane, "allow", &fp);
        assert_eq!(again.code, 1, "{label}: {again:?}");
        assert_eq!(again.json()["refusal"], "no-dialog", "{label}: {again:?}");

        // Deny: the call is refused and the turn handed back.
        let req = ask();
        let fp = req["fingerprint"].as_str().unwrap().to_string();
        let run = real::answer(&w.server, &pane, "deny", &fp);
        assert_eq!(run.code, 0, "{label}: {run:?}");
        wait_for(STEP, "the denied turn to end", || {
            let r = w.resolve(&pane);
            (r["state"] != "waiting" && r["state"] != "working").then_some(())
        });

        // The person, at the pane in their own terminal, allows it with its key, and an
        // answer from elsewhere follows at once, before Qwen Code may have drawn the key:
        // refused, someone is typing there; the stand-in gets one tool result, the person's.
        let person = live::Person::at(&w.server, &pane);
        let before = w.api.requests().len();
        let req = ask();
        let fp = req["fingerprint"].as_str().unwrap().to_string();
        person.keys(&["1"]);
        let late = real::answer(&w.server, &pane, "deny", &fp);
        assert_eq!(late.code, 1, "{label}: {late:?}");
        assert_eq!(late.json()["refusal"], "person-typing", "{label}: {late:?}");
        w.wait_state(&pane, "your-turn", None);
        let last = w.server.agentpane(&["last", &pane, "--json"]);
        assert_eq!(last.json()["text"], "Tool done.", "{label}: {last:?}");
        let replies = real::openai_chat::tool_replies(&w.api, before);
        assert_eq!(replies.len(), 1, "{label}: {replies:?}");
        assert!(
            !replies[0].to_lowercase().contains("cancel"),
            "{label}: {replies:?}"
        );
    }
}
