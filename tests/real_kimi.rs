//! The released Kimi Code (pinned in tests/real/clients.txt, with the Node it needs installed
//! beside it) against the OpenAI-compatible stand-in (tests/real/kimi.rs), in a private tmux
//! server with the watcher running: what `resolve`, `last`, `route`, `answer` and the alerts
//! say at each step of real turns, and which session each of two panes in one folder reads.

mod common;
mod real;

use std::time::Duration;

use serde_json::{json, Value};

use common::{FakeAgent, TmuxServer, Watch};
use real::http::MockServer;
use real::openai_chat::ANSWER;
use real::{alerts_now, press, type_prompt, wait_alerts, wait_for, wait_screen, Client, STEP};

/// A Claude transcript whose last answer routes into Kimi Code.
const CLAUDE_WITH_ANSWER: &str =
    "claude/d-kimuson-claude-code-viewer/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl";

/// What the permission dialog of `RUNWRITE` reads.
const ASKED: &str = "permission: Bash (touch hello.txt)";

struct World {
    server: TmuxServer,
    api: MockServer,
}

impl World {
    fn new() -> World {
        let api = real::kimi::serve();
        let server = TmuxServer::start();
        real::kimi::config(&server);
        World { server, api }
    }

    fn start(&self, client: &Client, dir: &str) -> String {
        real::kimi::start(&self.server, client, &self.api.url(), dir)
    }

    fn resolve(&self, pane: &str) -> Value {
        real::resolve(&self.server, pane)
    }

    /// Waits until `pane` reads `state` with `reason` (`None`: none); the resolution.
    fn wait_state(&self, pane: &str, state: &str, reason: Option<&str>) -> Value {
        real::wait_state(&self.server, pane, state, reason)
    }

    /// The newest prompt the API received.
    fn last_prompt(&self) -> String {
        self.api
            .requests()
            .iter()
            .rev()
            .filter_map(|r| r.json())
            .find_map(|b| Some(real::kimi::prompt_of(b["messages"].as_array()?)))
            .unwrap_or_default()
    }
}

#[test]
#[cfg_attr(skip_real, ignore = "AGENTPANE_SKIP_REAL: real clients not run")]
fn kimi_turns_read_right_alert_once_and_route_in_and_out() {
    for client in real::clients("kimi") {
        let label = client.label();
        let w = World::new();
        let claude = w
            .server
            .spawn(&FakeAgent::claude().fixture(CLAUDE_WITH_ANSWER));
        let watch = Watch::start(&w.server, &[]);
        let pane = w.start(&client, "proj");

        // Fresh: recognised whichever node runs it (its own, retitled `kimi-code`); no
        // session before the first prompt. Idle, no alert.
        let fresh = w.wait_state(&pane, "idle", None);
        assert_eq!(fresh["agent"], "kimi", "{label}: {fresh:#}");
        assert!(fresh["transcript"].is_null(), "{label}: {fresh:#}");

        // An answer: your-turn, `last` byte for byte, one alert.
        type_prompt(&w.server, &pane, "hello there");
        let done = w.wait_state(&pane, "your-turn", None);
        assert_eq!(done["via"], "cwd", "{label}: {done:#}");
        let transcript = done["transcript"].as_str().unwrap().to_string();
        assert!(
            transcript.ends_with("/agents/main/wire.jsonl"),
            "{transcript}"
        );
        let last = w.server.agentpane(&["last", &pane, "--json"]);
        assert_eq!(last.code, 0, "{label}: {last:?}");
        assert_eq!(last.json()["text"], ANSWER, "{label}");
        assert_eq!(last.json()["agent"], "kimi", "{label}");
        let alerts = wait_alerts(&watch, &pane, 1);
        assert_eq!(alerts, vec![("your-turn".into(), String::new())], "{label}");
        let classify = w.server.agentpane(&["classify", &transcript, "--json"]);
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

        // A command it asks about: waiting with the request, alerted, routes refused. Denied
        // from outside, held to the request shown: the command does not run.
        let work = w.server.work("proj");
        type_prompt(&w.server, &pane, "RUNWRITE please");
        w.wait_state(&pane, "waiting", Some(ASKED));
        let alerts = wait_alerts(&watch, &pane, 2);
        assert_eq!(alerts[1], ("waiting".into(), ASKED.into()), "{label}");
        let refused = w.server.agentpane(&["route", &claude, &pane]);
        assert_eq!(refused.code, 1, "{label}: {refused:?}");
        let req = real::pane_row(&w.server, &pane)["request"].clone();
        assert_eq!(req["summary"], "touch hello.txt", "{label}: {req:#}");
        let fp = req["fingerprint"].as_str().unwrap_or_default().to_string();
        let run = real::answer(&w.server, &pane, "deny", &fp);
        assert_eq!(run.code, 0, "{label}: {run:?}");
        assert_eq!(run.json()["keys"], json!(["3"]), "{label}");
        w.wait_state(&pane, "your-turn", None);
        assert!(
            !work.join("hello.txt").exists(),
            "{label}: denied, yet it ran"
        );
        let again = real::answer(&w.server, &pane, "deny", &fp);
        assert_eq!(again.code, 1, "{label}: {again:?}");
        let last = w.server.agentpane(&["last", &pane, "--json"]);
        assert_eq!(last.json()["text"], "Tool done.", "{label}: {last:?}");
        wait_alerts(&watch, &pane, 3);

        // Asked again and allowed: the command runs.
        type_prompt(&w.server, &pane, "RUNWRITE again");
        w.wait_state(&pane, "waiting", Some(ASKED));
        wait_alerts(&watch, &pane, 4);
        let req = real::pane_row(&w.server, &pane)["request"].clone();
        let fp = req["fingerprint"].as_str().unwrap_or_default().to_string();
        let run = real::answer(&w.server, &pane, "allow", &fp);
        assert_eq!(run.code, 0, "{label}: {run:?}");
        assert_eq!(run.json()["keys"], json!(["1"]), "{label}");
        w.wait_state(&pane, "your-turn", None);
        assert!(
            work.join("hello.txt").exists(),
            "{label}: allowed, yet it did not run"
        );
        wait_alerts(&watch, &pane, 5);

        // HTTP 400: attention naming it, not retried; no answer handed on.
        type_prompt(&w.server, &pane, "BADREQ now");
        w.wait_state(
            &pane,
            "attention",
            Some("api error 400: model stand-in does not exist"),
        );
        let alerts = wait_alerts(&watch, &pane, 6);
        assert_eq!(alerts[5].0, "attention", "{label}: {alerts:?}");
        assert_eq!(w.server.agentpane(&["last", &pane]).code, 1, "{label}");
        assert_eq!(w.server.agentpane(&["route", &pane, &sink]).code, 1);

        // HTTP 429 (quota): Kimi Code does not retry it either; attention, one alert.
        let before = w.api.requests().len();
        type_prompt(&w.server, &pane, "QUOTA please");
        w.wait_state(&pane, "attention", Some("quota exceeded"));
        let alerts = wait_alerts(&watch, &pane, 7);
        assert_eq!(alerts[6].0, "attention", "{label}: {alerts:?}");
        std::thread::sleep(Duration::from_secs(2));
        assert_eq!(
            alerts_now(&watch, &pane).len(),
            7,
            "{label}: one alert a turn"
        );
        assert_eq!(w.api.requests().len(), before + 1, "{label}: not retried");

        // HTTP 429 (rate limit): retried; attention while it waits (alerted once), where its
        // retries stand read from its screen. Escape gives up: interrupted.
        type_prompt(&w.server, &pane, "RATE please");
        let retrying = wait_for(STEP, "the retry wait", || {
            let r = w.resolve(&pane);
            let reason = r["reason"].as_str().unwrap_or_default();
            (r["state"] == "attention" && reason.starts_with("rate limit — retrying (attempt "))
                .then_some(r)
        });
        assert_eq!(retrying["source"], "pane", "{label}: {retrying:#}");
        let alerts = wait_alerts(&watch, &pane, 8);
        assert_eq!(alerts[7].0, "attention", "{label}: {alerts:?}");
        press(&w.server, &pane, "Escape");
        w.wait_state(&pane, "your-turn", Some("interrupted"));

        // Escape mid-stream: interrupted, never alerted.
        type_prompt(&w.server, &pane, "SLOW please");
        wait_screen(&w.server, &pane, STEP, "the slow reply streaming", |s| {
            s.contains("word5 ")
        });
        w.wait_state(&pane, "working", None);
        press(&w.server, &pane, "Escape");
        w.wait_state(&pane, "your-turn", Some("interrupted"));

        // Routing in: a Claude answer pasted into its box reaches the API as typed.
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
        assert_eq!(got, source, "{label}");
        w.wait_state(&pane, "your-turn", None);
        let alerts = wait_alerts(&watch, &pane, 9);
        assert_eq!(alerts.len(), 9, "{label}: {alerts:?}");
        assert!(!alerts.iter().any(|a| a.1 == "interrupted"), "{label}");
        assert_eq!(watch.stop(), 0);
    }
}

#[test]
#[cfg_attr(skip_real, ignore = "AGENTPANE_SKIP_REAL: real clients not run")]
fn two_kimi_sessions_in_one_folder_each_show_their_own_or_none() {
    for client in real::clients("kimi") {
        let label = client.label();
        let w = World::new();

        // One after the other, each made its session before the next started: each its own.
        let a = w.start(&client, "shared");
        type_prompt(&w.server, &a, "PLAIN alpha");
        let ra = w.wait_state(&a, "your-turn", None);
        let b = w.start(&client, "shared");
        type_prompt(&w.server, &b, "BADREQ hello");
        let rb = w.wait_state(
            &b,
            "attention",
            Some("api error 400: model stand-in does not exist"),
        );
        assert_ne!(ra["transcript"], rb["transcript"], "{label}");
        let ra = w.resolve(&a);
        assert_eq!(ra["state"], "your-turn", "{label}: {ra:#}");
        assert_eq!(ra["via"], "cwd", "{label}: {ra:#}");
        let last = w.server.agentpane(&["last", &a, "--json"]);
        assert_eq!(last.json()["text"], "Answer: alpha.", "{label}: {last:?}");

        // Both started before either asked anything: the younger cannot tell its session
        // from the older one's, the older has none of its own; neither shows the other's.
        let c = w.start(&client, "both");
        let d = w.start(&client, "both");
        type_prompt(&w.server, &c, "PLAIN gamma");
        wait_screen(&w.server, &c, STEP, "c's answer", |s| {
            s.contains("Answer: gamma.")
        });
        let rc = w.wait_state(&c, "idle", None);
        assert!(rc["transcript"].is_null(), "{label}: {rc:#}");
        let rd = w.resolve(&d);
        assert_eq!(rd["via"], "ambiguous", "{label}: {rd:#}");
        assert!(rd["transcript"].is_null(), "{label}: {rd:#}");
        // Its dialog is still read from its screen.
        type_prompt(&w.server, &d, "RUNWRITE here");
        let rd = w.wait_state(&d, "waiting", Some("permission: Bash"));
        assert_eq!(rd["source"], "pane", "{label}: {rd:#}");
    }
}
