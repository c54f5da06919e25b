//! The released Kilo Code CLI (pinned in tests/real/clients.txt; an opencode fork keeping
//! opencode's store as `kilo/kilo.db`) against the OpenAI-compatible stand-in
//! (tests/real/openai_chat.rs), in a private tmux server with the watcher running: what
//! `resolve`, `last`, `route` and the alerts say at each step of real turns.

mod common;
mod real;

use std::time::Duration;

use agentpane::events::AgentKind;
use serde_json::Value;

use common::{FakeAgent, TmuxServer, Watch};
use real::http::MockServer;
use real::openai_chat::{self, ANSWER};
use real::{press, start, type_prompt, wait_alerts, wait_for, wait_screen, STEP};

/// A Claude transcript whose last answer routes into Kilo.
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
        start::kilo_config(&server, &api.url());
        World { server, api }
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

    /// The newest user text the API received (not the title generator's).
    fn last_prompt(&self) -> String {
        openai_chat::last_prompt(&self.api)
    }
}

fn none(r: &Value) -> bool {
    r.is_null()
}

#[test]
#[cfg_attr(skip_real, ignore = "AGENTPANE_SKIP_REAL: real clients not run")]
fn kilo_turns_read_right_alert_once_and_route_in_and_out() {
    for client in real::clients("kilo") {
        let label = client.label();
        let w = World::new();
        let claude = w
            .server
            .spawn(&FakeAgent::claude().fixture(CLAUDE_WITH_ANSWER));
        let watch = Watch::start(&w.server, &[]);
        let pane = start::kilo(&w.server, &client, "proj");

        // Fresh: no session row before the first prompt; idle, no alert.
        let fresh = w.wait_state(&pane, "idle", none);
        assert_eq!(fresh["agent"], "kilo", "{label}: {fresh:#}");
        assert!(fresh["transcript"].is_null(), "{label}: {fresh:#}");

        // An answer: your-turn, `last` byte for byte, one alert.
        type_prompt(&w.server, &pane, "hello there");
        let done = w.wait_state(&pane, "your-turn", none);
        let transcript = done["transcript"].as_str().unwrap().to_string();
        // The stand-in's usage as Kilo stored it: input without the cached tokens,
        // summed back; the context as its sidebar counts it; the cost it priced (zero).
        let usage = real::usage::of_log(AgentKind::Kilo, &transcript);
        assert_eq!(usage.model.as_deref(), Some(openai_chat::MODEL), "{label}");
        let (p, o) = (openai_chat::PROMPT_TOKENS, openai_chat::COMPLETION_TOKENS);
        assert_eq!(usage.session_input, Some(p), "{label}: {usage:?}");
        assert_eq!(usage.session_output, Some(o), "{label}: {usage:?}");
        assert_eq!(usage.context_tokens, Some(p + o), "{label}: {usage:?}");
        assert_eq!(usage.cost_usd, Some(0.0), "{label}: {usage:?}");
        assert!(
            transcript.contains("/kilo/kilo.db#ses_"),
            "{label}: {done:#}"
        );
        let last = w.server.agentpane(&["last", &pane, "--json"]);
        assert_eq!(last.code, 0, "{label}: {last:?}");
        assert_eq!(last.json()["text"], ANSWER, "{label}");
        assert_eq!(last.json()["agent"], "kilo", "{label}");
        let alerts = wait_alerts(&watch, &pane, 1);
        assert_eq!(alerts, vec![("your-turn".into(), String::new())], "{label}");
        let classify = w
            .server
            .agentpane(&["classify", &transcript, "--agent", "kilo", "--json"]);
        assert_eq!(classify.code, 0, "{label}: {classify:?}");

        // Routing out: the answer reaches another agent byte for byte.
        let sink = real::scenario::routes_out(&w.server, &pane, ANSWER, &label);

        // A bash call waiting for permission: waiting, alerted, routes refused.
        type_prompt(&w.server, &pane, "RUNBASH please");
        w.wait_state(&pane, "waiting", |r| r == "permission: bash");
        let alerts = wait_alerts(&watch, &pane, 2);
        assert_eq!(alerts[1], ("waiting".into(), "permission: bash".into()));
        let refused = w.server.agentpane(&["route", &claude, &pane]);
        assert_eq!(refused.code, 1, "{label}: {refused:?}");
        let dialog = real::screen(&w.server, &pane);
        press(&w.server, &pane, "Enter");
        w.wait_state(&pane, "your-turn", none);
        let last = w.server.agentpane(&["last", &pane, "--json"]);
        assert_eq!(
            last.code,
            0,
            "{label}: {last:?}\ndialog:\n{dialog}\nnow:\n{}",
            real::screen(&w.server, &pane)
        );
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

        // HTTP 429, retried by Kilo (on screen only): attention with the error, one alert;
        // Escape during the retry wait: interrupted.
        type_prompt(&w.server, &pane, "QUOTA please");
        w.wait_state(&pane, "attention", |r| {
            r.as_str()
                .is_some_and(|r| r.starts_with("quota exceeded for stand-in — retrying"))
        });
        let alerts = wait_alerts(&watch, &pane, 5);
        assert_eq!(alerts[4].0, "attention", "{label}: {alerts:?}");
        press(&w.server, &pane, "Escape");
        std::thread::sleep(Duration::from_millis(300));
        press(&w.server, &pane, "Escape");
        w.wait_state(&pane, "your-turn", |r| r == "interrupted");

        // Escape mid-stream: interrupted, never alerted.
        type_prompt(&w.server, &pane, "SLOW please");
        wait_screen(&w.server, &pane, STEP, "the slow reply streaming", |s| {
            s.contains("word5 ")
        });
        w.wait_state(&pane, "working", none);
        // Escape, and again once Kilo asks for it (`esc again to interrupt`).
        press(&w.server, &pane, "Escape");
        wait_screen(
            &w.server,
            &pane,
            STEP,
            "Kilo asking for a second Escape",
            |s| s.contains("again to interrupt"),
        );
        press(&w.server, &pane, "Escape");
        w.wait_state(&pane, "your-turn", |r| r == "interrupted");

        // Routing in: a Claude answer pasted into Kilo's box reaches the API intact (like
        // opencode, one space after a collapsed multi-line paste; Kilo then appends its
        // `<environment_details>` block).
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
        // Kilo appends its own block to every prompt it sends: what was typed is before it.
        let got = got
            .split_once("\n\n<environment_details>")
            .map_or(got.as_str(), |(typed, _)| typed)
            .to_string();
        assert!(
            got == source || got == format!("{source} "),
            "{label}: the API got {got:?}, routed {source:?}"
        );
        w.wait_state(&pane, "your-turn", none);
        let alerts = wait_alerts(&watch, &pane, 6);
        assert_eq!(alerts.len(), 6, "{label}: {alerts:?}");
        assert!(!alerts.iter().any(|a| a.1 == "interrupted"), "{label}");
        assert_eq!(watch.stop(), 0);
    }
}

#[test]
#[cfg_attr(skip_real, ignore = "AGENTPANE_SKIP_REAL: real clients not run")]
fn two_kilo_sessions_in_one_folder_each_show_their_own() {
    for client in real::clients("kilo") {
        let label = client.label();
        let w = World::new();
        let a = start::kilo(&w.server, &client, "shared");
        type_prompt(&w.server, &a, "ALPHA hello");
        let ra = w.wait_state(&a, "your-turn", none);
        let alpha = ra["session_id"].as_str().unwrap().to_string();
        let b = start::kilo(&w.server, &client, "shared");
        assert!(w.resolve(&b)["session_id"].is_null(), "{label}");
        type_prompt(&w.server, &b, "BADREQ hello");
        let rb = w.wait_state(&b, "attention", |r| {
            r == "api error 400: model stand-in does not exist"
        });
        let bravo = rb["session_id"].as_str().unwrap().to_string();
        assert_ne!(alpha, bravo, "{label}");
        let ra = w.resolve(&a);
        assert_eq!(ra["session_id"], alpha.as_str(), "{label}: {ra:#}");
        assert_eq!(ra["state"], "your-turn", "{label}: {ra:#}");
    }
}

#[test]
#[cfg_attr(skip_real, ignore = "AGENTPANE_SKIP_REAL: real clients not run")]
fn a_pending_command_is_shown_and_answered_from_outside() {
    for client in real::clients("kilo") {
        let label = client.label();
        let w = World::new();
        let pane = start::kilo(&w.server, &client, "proj");
        let ask = || -> String {
            type_prompt(&w.server, &pane, "RUNBASH please");
            w.wait_state(&pane, "waiting", |r| r == "permission: bash");
            // The dialog's first frame names the kind before the command: asked nothing yet.
            let row = real::wait_row(&w.server, &pane, "the request", |r| !r["request"].is_null());
            let req = row["request"].clone();
            assert_eq!(req["summary"], "$ echo hello", "{label}: {req:#}");
            req["fingerprint"].as_str().unwrap().to_string()
        };
        // Allow once: its answer closes the turn.
        let run = real::answer(&w.server, &pane, "allow", &ask());
        assert_eq!(run.code, 0, "{label}: {run:?}");
        w.wait_state(&pane, "your-turn", none);
        // Deny: Escape opens Kilo's "Reject permission" step (what to do instead); Enter
        // there, nothing written, rejects the call and ends the turn. No tool result reaches
        // the stand-in.
        let fp = ask();
        let before = w.api.requests().len();
        let run = real::answer(&w.server, &pane, "deny", &fp);
        assert_eq!(run.code, 0, "{label}: {run:?}");
        let out = run.json();
        assert_eq!(
            out["keys"],
            serde_json::json!(["Escape", "Enter"]),
            "{label}: {out}"
        );
        assert_eq!(out["closed"], true, "{label}: {out}");
        w.wait_state(&pane, "your-turn", |r| r == "interrupted");
        // The store says so before the screen is redrawn.
        wait_screen(
            &w.server,
            &pane,
            STEP,
            "the dialog and its step gone",
            |s| !s.contains("Permission required") && !s.contains("Reject permission"),
        );
        let replies = openai_chat::tool_replies(&w.api, before);
        assert!(
            replies.is_empty(),
            "{label}: a rejected call ran: {replies:?}"
        );

        // Allow always: Kilo asks to confirm ("Always allow … Confirm  Cancel"); the last
        // Enter goes in once that is up. The call runs, and the same command asked again runs
        // without a dialog.
        let fp = ask();
        let before = w.api.requests().len();
        let run = real::answer_always(&w.server, &pane, &fp);
        assert_eq!(run.code, 0, "{label}: {run:?}");
        let keys = run.json()["keys"].clone();
        assert_eq!(
            keys.as_array().unwrap().last(),
            Some(&serde_json::json!("Enter"))
        );
        assert_eq!(keys.as_array().unwrap().len(), 3, "{label}: {keys}");
        w.wait_state(&pane, "your-turn", none);
        openai_chat::always_kept(
            &w.server,
            &w.api,
            &pane,
            before,
            "RUNBASH please",
            "Permission required",
        );
    }
}
