//! The released pi (pinned in tests/real/clients.txt) against the OpenAI-compatible stand-in
//! (tests/real/openai_chat.rs), in a private tmux server with the watcher running: what
//! `resolve`, `last`, `route` and the alerts say at each step of real turns, with agentpane's
//! pi extension installed (`hooks install --agent pi`) and without it.

mod common;
mod real;

use std::time::Duration;

use agentpane::events::AgentKind;
use serde_json::Value;

use common::{FakeAgent, TmuxServer, Watch};
use real::http::MockServer;
use real::openai_chat::{self, ANSWER};
use real::{alerts_now, press, start, type_prompt, wait_alerts, wait_for, wait_screen, STEP};

/// A Claude transcript whose last answer routes into pi.
const CLAUDE_WITH_ANSWER: &str =
    "claude/d-kimuson-claude-code-viewer/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl";

struct World {
    server: TmuxServer,
    api: MockServer,
}

impl World {
    fn new() -> World {
        let api = openai_chat::start();
        let server = TmuxServer::start();
        start::pi_config(&server, &api.url());
        World { server, api }
    }

    fn hooks(&self, verb: &str) {
        let run = self.server.agentpane(&["hooks", verb, "--agent", "pi"]);
        assert_eq!(run.code, 0, "hooks {verb} --agent pi: {run:?}");
    }

    fn resolve(&self, pane: &str) -> Value {
        real::resolve(&self.server, pane)
    }

    /// Waits until `pane` reads `state` with a reason `reason` accepts; the resolution.
    fn wait_state(&self, pane: &str, state: &str, reason: impl Fn(&Value) -> bool) -> Value {
        real::wait_resolved(&self.server, pane, STEP, state, |r| {
            r["state"] == state && reason(&r["reason"])
        })
    }

    /// The newest user text the API received.
    fn last_prompt(&self) -> String {
        openai_chat::last_prompt(&self.api)
    }
}

fn none(r: &Value) -> bool {
    r.is_null()
}

#[test]
#[cfg_attr(skip_real, ignore = "AGENTPANE_SKIP_REAL: real clients not run")]
fn pi_turns_read_right_alert_once_and_route_in_and_out() {
    for client in real::clients("pi") {
        let label = client.label();
        let w = World::new();
        w.hooks("install");
        let claude = w
            .server
            .spawn(&FakeAgent::claude().fixture(CLAUDE_WITH_ANSWER));
        let watch = Watch::start(&w.server, &[]);
        let gate = start::pi_permission_gate(&client);
        let pane = start::pi(
            &w.server,
            &client,
            "proj",
            &format!("-e {}", gate.display()),
        );

        // Fresh: the extension names the log pi will write; none yet. Idle, no alert.
        let fresh = w.wait_state(&pane, "idle", none);
        assert_eq!(fresh["agent"], "pi", "{label}: {fresh:#}");
        assert!(fresh["transcript"].is_null(), "{label}: {fresh:#}");
        assert!(fresh["session_id"].is_string(), "{label}: {fresh:#}");

        // An answer: your-turn, `last` byte for byte, one alert.
        type_prompt(&w.server, &pane, "hello there");
        let done = w.wait_state(&pane, "your-turn", none);
        assert_eq!(done["via"], "session-record", "{label}: {done:#}");
        let transcript = done["transcript"].as_str().unwrap().to_string();
        // The stand-in's usage as pi logged it: input without the cached tokens, the
        // context counted as pi counts it (all four counts of the reply).
        let usage = real::usage::of_log(AgentKind::Pi, &transcript);
        assert_eq!(usage.model.as_deref(), Some("mock-model"), "{label}");
        let (p, o) = (openai_chat::PROMPT_TOKENS, openai_chat::COMPLETION_TOKENS);
        assert_eq!(usage.session_input, Some(p), "{label}: {usage:?}");
        assert_eq!(usage.session_output, Some(o), "{label}: {usage:?}");
        assert_eq!(usage.context_tokens, Some(p + o), "{label}: {usage:?}");
        let last = w.server.agentpane(&["last", &pane, "--json"]);
        assert_eq!(last.code, 0, "{label}: {last:?}");
        assert_eq!(last.json()["text"], ANSWER, "{label}");
        assert_eq!(last.json()["agent"], "pi", "{label}");
        let alerts = wait_alerts(&watch, &pane, 1);
        assert_eq!(alerts, vec![("your-turn".into(), String::new())], "{label}");
        let classify = w
            .server
            .agentpane(&["classify", &transcript, "--agent", "pi", "--json"]);
        assert_eq!(classify.code, 0, "{label}: {classify:?}");
        assert_eq!(classify.json()["state"], "your-turn", "{label}");
        let by_name = w.server.agentpane(&["last", "--transcript", &transcript]);
        assert_eq!(
            by_name.stdout,
            format!("{ANSWER}\n"),
            "{label}: {by_name:?}"
        );

        // Routing out: the answer reaches another agent byte for byte.
        let sink = real::scenario::routes_out(&w.server, &pane, ANSWER, &label);

        // A dangerous command the permission gate asks about: waiting on bash, alerted,
        // routes refused. Refused ("No"): the turn goes on to its answer.
        type_prompt(&w.server, &pane, "RUNRM please");
        w.wait_state(&pane, "waiting", |r| r == "permission: bash");
        let alerts = wait_alerts(&watch, &pane, 2);
        assert_eq!(alerts[1], ("waiting".into(), "permission: bash".into()));
        let refused = w.server.agentpane(&["route", &claude, &pane]);
        assert_eq!(refused.code, 1, "{label}: {refused:?}");
        // Denied from outside, held to the request shown: the gate blocks the command.
        let req = real::pane_row(&w.server, &pane)["request"].clone();
        assert_eq!(req["summary"], "rm -rf scratch", "{label}: {req:#}");
        let fp = req["fingerprint"].as_str().unwrap_or_default().to_string();
        let run = real::answer(&w.server, &pane, "deny", &fp);
        assert_eq!(run.code, 0, "{label}: {run:?}");
        assert_eq!(run.json()["keys"], serde_json::json!(["Escape"]), "{label}");
        w.wait_state(&pane, "your-turn", none);
        let again = real::answer(&w.server, &pane, "deny", &fp);
        assert_eq!(again.code, 1, "{label}: {again:?}");
        let last = w.server.agentpane(&["last", &pane, "--json"]);
        assert_eq!(last.json()["text"], "Tool done.", "{label}: {last:?}");
        wait_alerts(&watch, &pane, 3);

        // HTTP 400: attention naming it; no answer handed on.
        type_prompt(&w.server, &pane, "BADREQ now");
        w.wait_state(&pane, "attention", |r| {
            r == "api error 400: model stand-in does not exist"
        });
        let alerts = wait_alerts(&watch, &pane, 4);
        assert_eq!(alerts[3].0, "attention", "{label}: {alerts:?}");
        assert_eq!(w.server.agentpane(&["last", &pane]).code, 1, "{label}");
        assert_eq!(w.server.agentpane(&["route", &pane, &sink]).code, 1);

        // HTTP 429: pi retries it 3 times (2, 4, 8 s), one error record each. Attention
        // "retrying" while it waits, then the error once it gave up; one alert for the turn.
        type_prompt(&w.server, &pane, "QUOTA please");
        let retrying = w.wait_state(&pane, "attention", |r| {
            r.as_str()
                .is_some_and(|r| r.starts_with("rate limit — retrying (attempt "))
        });
        assert_eq!(retrying["retry"]["limit"], 3, "{label}: {retrying:#}");
        w.wait_state(&pane, "attention", |r| r == "quota exceeded");
        let alerts = wait_alerts(&watch, &pane, 5);
        assert_eq!(alerts[4].0, "attention", "{label}: {alerts:?}");
        std::thread::sleep(Duration::from_secs(2));
        assert_eq!(
            alerts_now(&watch, &pane).len(),
            5,
            "{label}: one alert a turn"
        );
        assert_eq!(w.server.agentpane(&["last", &pane]).code, 1, "{label}");

        // Escape mid-stream: interrupted, never alerted.
        type_prompt(&w.server, &pane, "SLOW please");
        wait_screen(&w.server, &pane, STEP, "the slow reply streaming", |s| {
            s.contains("word5 ")
        });
        w.wait_state(&pane, "working", none);
        press(&w.server, &pane, "Escape");
        w.wait_state(&pane, "your-turn", |r| r == "interrupted");

        // Routing in: a Claude answer pasted into pi's box reaches the API as typed (pi trims
        // the box and turns a tab into four spaces).
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
        assert_eq!(got, source.trim().replace('\t', "    "), "{label}");
        w.wait_state(&pane, "your-turn", none);
        let alerts = wait_alerts(&watch, &pane, 6);
        assert_eq!(alerts.len(), 6, "{label}: {alerts:?}");
        assert!(!alerts.iter().any(|a| a.1 == "interrupted"), "{label}");
        assert_eq!(watch.stop(), 0);
    }
}

#[test]
#[cfg_attr(skip_real, ignore = "AGENTPANE_SKIP_REAL: real clients not run")]
fn two_pi_sessions_in_one_folder_each_show_their_own_or_none() {
    for client in real::clients("pi") {
        let label = client.label();
        let w = World::new();

        // With the extension: each pane its own log.
        w.hooks("install");
        let a = start::pi(&w.server, &client, "shared", "");
        let b = start::pi(&w.server, &client, "shared", "");
        type_prompt(&w.server, &a, "ALPHA hello");
        let ra = w.wait_state(&a, "your-turn", none);
        type_prompt(&w.server, &b, "BADREQ hello");
        let rb = w.wait_state(&b, "attention", |r| {
            r == "api error 400: model stand-in does not exist"
        });
        assert_ne!(ra["transcript"], rb["transcript"], "{label}");
        let ra = w.resolve(&a);
        assert_eq!(ra["state"], "your-turn", "{label}: {ra:#}");
        assert_eq!(ra["via"], "session-record", "{label}: {ra:#}");

        // Without it: a pi alone in its folder is read from the one log begun there since
        // it started; two in one folder cannot be told apart, and neither shows the other's.
        w.hooks("uninstall");
        let solo = start::pi(&w.server, &client, "solo", "");
        type_prompt(&w.server, &solo, "hello alone");
        let r = w.wait_state(&solo, "your-turn", none);
        assert_eq!(r["via"], "cwd", "{label}: {r:#}");
        let gate = format!("-e {}", start::pi_permission_gate(&client).display());
        let c = start::pi(&w.server, &client, "both", &gate);
        let d = start::pi(&w.server, &client, "both", &gate);
        type_prompt(&w.server, &c, "hello from c");
        wait_screen(&w.server, &c, STEP, "c's answer", |s| s.contains("Done."));
        let rc = w.wait_state(&c, "idle", |_| true);
        assert_eq!(rc["via"], "ambiguous", "{label}: {rc:#}");
        assert!(rc["transcript"].is_null(), "{label}: {rc:#}");
        let rd = w.resolve(&d);
        assert!(rd["transcript"].is_null(), "{label}: {rd:#}");
        assert_eq!(rd["state"], "idle", "{label}: {rd:#}");
        // Ambiguous, its state still comes from its screen: the gate's dialog is a wait.
        type_prompt(&w.server, &c, "RUNRM please");
        let rc = w.wait_state(&c, "waiting", |r| r == "permission: bash");
        assert_eq!(rc["via"], "ambiguous", "{label}: {rc:#}");
        assert_eq!(rc["source"], "pane", "{label}: {rc:#}");
        // Allowed from outside: the command runs and the turn goes on to its answer.
        let req = real::pane_row(&w.server, &c)["request"].clone();
        assert_eq!(req["summary"], "rm -rf scratch", "{label}: {req:#}");
        let fp = req["fingerprint"].as_str().unwrap_or_default().to_string();
        let run = real::answer(&w.server, &c, "allow", &fp);
        assert_eq!(run.code, 0, "{label}: {run:?}");
        assert_eq!(run.json()["keys"], serde_json::json!(["Enter"]), "{label}");
        wait_screen(&w.server, &c, STEP, "c's answer after the command", |s| {
            s.contains("Tool done.")
        });
    }
}
