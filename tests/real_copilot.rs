//! The released GitHub Copilot CLI (pinned in tests/real/clients.txt) against the OpenAI chat
//! stand-in (tests/real/openai_chat.rs), offline, in a private tmux server with the watcher
//! running: what `resolve`, `last`, `route` and the alerts say at each step of real turns,
//! typed as a person types. Copilot writes its approvals to its own log, so `waiting` comes
//! from the log, not the screen.
//!
//! The last test is the recorder that made fixtures/real-clients/copilot-1.0.102 (its README
//! has the steps): the stand-in served on its own, for driving the client by hand.
//!
//! ```sh
//! STANDIN_DIR=/tmp/rec cargo test --test real_copilot -- --ignored --exact standin
//! ```
//!
//! writes the port to `$STANDIN_DIR/port`, appends every request to
//! `$STANDIN_DIR/requests.jsonl`, and stops when `$STANDIN_DIR/stop` appears.

mod common;
mod real;

use std::io::Write;
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

/// A Claude transcript whose last answer routes into Copilot.
const CLAUDE_WITH_ANSWER: &str =
    "claude/d-kimuson-claude-code-viewer/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl";

/// A tmux server with the stand-in and Copilot's home trusting `work/proj` and `work/shared`.
struct World {
    server: TmuxServer,
    api: MockServer,
}

impl World {
    fn new() -> World {
        let api = openai_chat::start();
        let server = TmuxServer::start();
        start::copilot_config(&server, &["proj", "shared"]);
        World { server, api }
    }

    /// Starts `client` in `work/<dir>` and waits for its input box.
    fn copilot(&self, client: &Client, dir: &str) -> String {
        start::copilot(&self.server, client, &self.api.url(), dir)
    }

    fn resolve(&self, pane: &str) -> Value {
        real::resolve(&self.server, pane)
    }

    /// Waits until `pane` reads `state` with `reason` (`None`: no reason); the resolution.
    fn wait_state(&self, pane: &str, state: &str, reason: Option<&str>) -> Value {
        real::wait_state(&self.server, pane, state, reason)
    }

    /// The newest user text the API received, without the `<current_datetime>` block
    /// Copilot puts before every prompt.
    fn last_prompt(&self) -> String {
        let text = openai_chat::last_prompt(&self.api);
        match text.split_once("</current_datetime>\n\n") {
            Some((_, prompt)) => prompt.to_string(),
            None => text,
        }
    }
}

/// Types `text` after an interrupt and presses Enter only once the whole text is in the input
/// box, as a person looks before sending. An Escape that Copilot 1.0.102 has not parsed yet
/// when the next key arrives joins it (`Esc R` is Alt-R) and the first letter is lost; a
/// starved client reads the keys together, so this happened under load. A prompt whose first
/// letter went is erased and typed again.
fn type_after_interrupt(server: &TmuxServer, pane: &str, text: &str) {
    let before = real::screen(server, pane).matches(text).count();
    for _ in 0..3 {
        server.tmux(&["send-keys", "-t", pane, "-l", text]);
        let end = Instant::now() + Duration::from_secs(5);
        while Instant::now() < end {
            if real::screen(server, pane).matches(text).count() > before {
                std::thread::sleep(Duration::from_millis(400));
                press(server, pane, "Enter");
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        eprintln!("{pane}: {text:?} not in the input box whole; erased and typed again");
        for _ in 0..text.chars().count() + 2 {
            press(server, pane, "BSpace");
        }
        std::thread::sleep(Duration::from_millis(300));
    }
    panic!(
        "{pane}: {text:?} never reached the input box whole:\n{}",
        real::screen(server, pane)
    );
}

/// Escape twice, as Copilot's footer asks (`esc esc interrupt`), again if the first double
/// press was not taken; then, as a person would, Ctrl-C. Copilot 1.0.102 now and then ignores
/// Escape for a whole turn (seen by hand as well), while Ctrl-C stops it the same way (an
/// `abort` record, `user_initiated` instead of `user_abort`): agentpane's reading is the same.
fn interrupt(server: &TmuxServer, pane: &str) {
    let cancelled = || {
        let end = Instant::now() + Duration::from_secs(2);
        while Instant::now() < end {
            if real::screen(server, pane).contains("Operation cancelled by user") {
                return true;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        false
    };
    for _ in 0..2 {
        press(server, pane, "Escape");
        std::thread::sleep(Duration::from_millis(300));
        press(server, pane, "Escape");
        if cancelled() {
            return;
        }
    }
    eprintln!("{pane}: Escape-Escape was not taken; Ctrl-C");
    press(server, pane, "C-c");
    assert!(
        cancelled(),
        "{pane} went on streaming after Escape and Ctrl-C:\n{}",
        real::screen(server, pane)
    );
}

#[test]
#[cfg_attr(skip_real, ignore = "AGENTPANE_SKIP_REAL: real clients not run")]
fn copilot_turns_read_right_alert_once_and_route_in_and_out() {
    for client in real::clients("copilot") {
        let label = client.label();
        let started = Instant::now();
        let w = World::new();
        // A Claude pane with an answer to route in, started before the watcher so its
        // finished turn is history, not news.
        let claude = w
            .server
            .spawn(&FakeAgent::claude().fixture(CLAUDE_WITH_ANSWER));
        let watch = Watch::start(&w.server, &[]);
        let pane = w.copilot(&client, "proj");

        // A fresh session: its folder and lock exist, its log does not yet.
        let fresh = w.wait_state(&pane, "idle", None);
        assert_eq!(fresh["agent"], "copilot", "{label}: {fresh:#}");
        assert!(fresh["transcript"].is_null(), "{label}: {fresh:#}");
        assert!(fresh["session_id"].is_string(), "{label}: {fresh:#}");
        assert_eq!(fresh["via"], "open-file", "{label}: {fresh:#}");

        // An answer: your-turn, `last` is the answer byte for byte, one alert.
        type_prompt(&w.server, &pane, "hello there");
        let done = w.wait_state(&pane, "your-turn", None);
        let transcript = done["transcript"].as_str().unwrap().to_string();
        // The stand-in's usage as Copilot CLI logged it: the whole prompt, cached tokens
        // included, and the prompt limit it was given as the window.
        let usage = real::usage::of_log(AgentKind::Copilot, &transcript);
        assert_eq!(usage.model.as_deref(), Some("mock-model"), "{label}");
        let (p, o) = (openai_chat::PROMPT_TOKENS, openai_chat::COMPLETION_TOKENS);
        assert_eq!(usage.session_input, Some(p), "{label}: {usage:?}");
        assert_eq!(usage.session_output, Some(o), "{label}: {usage:?}");
        assert_eq!(usage.context_tokens, Some(p), "{label}: {usage:?}");
        assert_eq!(usage.context_window, Some(128_000), "{label}: {usage:?}");
        assert_eq!(
            usage.cost_usd, None,
            "{label}: premium requests are no money"
        );
        let session = fresh["session_id"].as_str().unwrap();
        assert!(
            transcript.ends_with(&format!("/session-state/{session}/events.jsonl")),
            "{label}: {done:#}"
        );
        let last = w.server.agentpane(&["last", &pane, "--json"]);
        assert_eq!(last.code, 0, "{label}: {last:?}");
        assert_eq!(last.json()["text"], ANSWER, "{label}");
        assert_eq!(last.json()["source"], "transcript", "{label}");
        let alerts = wait_alerts(&watch, &pane, 1);
        assert_eq!(alerts, vec![("your-turn".into(), String::new())], "{label}");

        // Routing out: the answer reaches another agent byte for byte.
        let sink = real::scenario::routes_out(&w.server, &pane, ANSWER, &label);

        // Escape-Escape mid-stream: your-turn (interrupted), never alerted.
        type_prompt(&w.server, &pane, "SLOW please");
        wait_screen(&w.server, &pane, STEP, "the slow reply streaming", |s| {
            s.contains("word5 ")
        });
        w.wait_state(&pane, "working", None);
        interrupt(&w.server, &pane);
        w.wait_state(&pane, "your-turn", Some("interrupted"));

        // A command that writes asks first: waiting, the tool and command as reason, read
        // from the log itself; alerted; nothing may be routed into the dialog.
        type_after_interrupt(&w.server, &pane, "RUNWRITE please");
        wait_screen(&w.server, &pane, STEP, "the approval dialog", |s| {
            s.contains("Do you want to run this command?")
        });
        // The dialog may be on screen before `permission.requested` is written: the screen
        // reads waiting first, the log then says the same.
        let reason = "permission: bash (touch hello.txt)";
        w.wait_state(&pane, "waiting", Some(reason));
        let waiting = wait_for(STEP, "the request read from the log", || {
            let r = real::resolve(&w.server, &pane);
            (r["source"] == "transcript" && r["state"] == "waiting").then_some(r)
        });
        assert_eq!(
            (&waiting["state"], &waiting["reason"], &waiting["source"]),
            (
                &Value::from("waiting"),
                &Value::from(reason),
                &Value::from("transcript")
            ),
            "{label}: {waiting:#}"
        );
        let alerts = wait_alerts(&watch, &pane, 2);
        assert_eq!(
            alerts[1],
            (
                "waiting".into(),
                "permission: bash (touch hello.txt)".into()
            ),
            "{label}"
        );
        let refused = w.server.agentpane(&["route", &claude, &pane]);
        assert_eq!(refused.code, 1, "{label}: {refused:?}");
        assert!(
            refused.stderr.contains("waiting") || refused.stdout.contains("waiting"),
            "{label}: {refused:?}"
        );
        // Approved ("1. Yes"): the command runs, the answer after it closes the turn.
        press(&w.server, &pane, "Enter");
        w.wait_state(&pane, "your-turn", None);
        let last = w.server.agentpane(&["last", &pane, "--json"]);
        assert_eq!(last.code, 0, "{label}: {last:?}");
        assert_eq!(last.json()["text"], "Tool done.", "{label}");
        assert!(w.server.work("proj").join("hello.txt").is_file(), "{label}");
        // Each finished turn is alerted once it has stood for the alert delay; the next prompt
        // waits for that (a quick follow-up would rightly cancel it).
        let alerts = wait_alerts(&watch, &pane, 3);
        assert_eq!(alerts[2], ("your-turn".into(), String::new()), "{label}");

        // An API error: attention naming it; its turn has no answer to hand on.
        type_prompt(&w.server, &pane, "BADREQ now");
        w.wait_state(
            &pane,
            "attention",
            Some("api error 400: model stand-in does not exist"),
        );
        let alerts = wait_alerts(&watch, &pane, 4);
        assert_eq!(
            alerts[3],
            (
                "attention".into(),
                "api error 400: model stand-in does not exist".into()
            ),
            "{label}: {alerts:?}"
        );
        real::scenario::nothing_to_hand_on(&w.server, &pane, &sink, &label);

        // Routing in: a Claude answer pasted into Copilot's box reaches the API intact.
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
        let alerts = wait_alerts(&watch, &pane, 5);
        assert_eq!(alerts[4], ("your-turn".into(), String::new()), "{label}");

        // A long answer (over ten lines: Copilot shows `[Paste #1 - 12 lines]` in its box)
        // arrives whole, byte for byte.
        let long: String = (1..=12)
            .map(|i| format!("line {i}: `x = {i} * 2`  # two spaces\n"))
            .collect::<String>()
            .trim_end()
            .to_string();
        let writer = w
            .server
            .spawn(&FakeAgent::idle(agentpane::events::AgentKind::Copilot).in_dir("long"));
        let record = serde_json::json!({"type": "assistant.message", "data": {
            "messageId": "m-long", "interactionId": "i-long", "content": long,
            "toolRequests": []}, "id": "e-long", "timestamp": "", "parentId": null});
        w.server.send_line(&writer, &format!("line {record}"));
        wait_for(STEP, "the long answer in the fake", || {
            let r = w.server.agentpane(&["last", &writer, "--json"]);
            (r.code == 0 && r.json()["text"] == long.as_str()).then_some(())
        });
        let routed = w.server.agentpane(&["route", &writer, &pane]);
        assert_eq!(routed.code, 0, "{label}: {routed:?}");
        let got = wait_for(STEP, "the long routed prompt at the API", || {
            let p = w.last_prompt();
            p.starts_with("line 1:").then_some(p)
        });
        assert_eq!(
            got, long,
            "{label}: the API got another text than was routed"
        );
        w.wait_state(&pane, "your-turn", None);
        let alerts = wait_alerts(&watch, &pane, 6);
        assert_eq!(alerts[5], ("your-turn".into(), String::new()), "{label}");

        // Last, as it takes a minute: a 429 Copilot retries five times, writing nothing to its
        // session log until it gives up and showing only its spinner; each failed call is a
        // line of its process log. While it retries: attention, retrying, alerted; then
        // attention naming the error, no second alert for the turn, no answer handed on.
        type_prompt(&w.server, &pane, "QUOTA please");
        let want = "rate limit — retrying (attempt ";
        let row = wait_for(
            Duration::from_secs(60),
            &format!("{label}: attention, {want}…"),
            || {
                let r = w.resolve(&pane);
                (r["state"] == "attention"
                    && r["reason"].as_str().is_some_and(|g| g.starts_with(want)))
                .then_some(r)
            },
        );
        assert!(
            row["retry"]["attempt"].as_u64().is_some_and(|a| a >= 2),
            "{label}: {row:#}"
        );
        let alerts = wait_alerts(&watch, &pane, 7);
        assert_eq!(alerts[6].0, "attention", "{label}: {alerts:?}");
        let row = wait_for(
            Duration::from_secs(150),
            "attention after the 429 retries",
            || {
                let r = w.resolve(&pane);
                (r["state"] == "attention" && r["reason"] == "quota exceeded").then_some(r)
            },
        );
        assert!(row["retry"].is_null(), "{label}: {row:#}");
        let none = w.server.agentpane(&["last", &pane]);
        assert_eq!(none.code, 1, "{label}: {none:?}");

        // One alert per turn that needs the human, never the interrupt: the 429 turn's final
        // failure is the turn already alerted, though Copilot's `session.error` names the
        // prompt's message id where the turn's other records name its interaction id.
        std::thread::sleep(Duration::from_secs(3));
        let alerts = alerts_now(&watch, &pane);
        assert_eq!(alerts.len(), 7, "{label}: {alerts:?}");
        assert!(
            !alerts.iter().any(|a| a.1 == "interrupted"),
            "{label}: {alerts:?}"
        );
        assert_eq!(watch.stop(), 0);
        eprintln!("{label}: the scenario took {:.0?}", started.elapsed());
    }
}

#[test]
#[cfg_attr(skip_real, ignore = "AGENTPANE_SKIP_REAL: real clients not run")]
fn two_copilot_sessions_in_one_folder_each_show_their_own() {
    for client in real::clients("copilot") {
        let label = client.label();
        let w = World::new();
        let a = w.copilot(&client, "shared");
        let b = w.copilot(&client, "shared");
        let (ra, rb) = (w.resolve(&a), w.resolve(&b));
        let (sa, sb) = (ra["session_id"].as_str(), rb["session_id"].as_str());
        assert!(
            sa.is_some() && sb.is_some() && sa != sb,
            "{label}: {ra:#} {rb:#}"
        );
        type_prompt(&w.server, &a, "hello from a");
        let done = w.wait_state(&a, "your-turn", None);
        assert_eq!(done["session_id"], ra["session_id"], "{label}: {done:#}");
        // The neighbour's answer is not b's: b has no log yet.
        let fresh = w.wait_state(&b, "idle", None);
        assert!(fresh["transcript"].is_null(), "{label}: {fresh:#}");
        assert_eq!(fresh["session_id"], rb["session_id"], "{label}");
        type_prompt(&w.server, &b, "SLOW from b");
        let busy = w.wait_state(&b, "working", None);
        assert_eq!(busy["session_id"], rb["session_id"], "{label}: {busy:#}");
        assert_eq!(w.resolve(&a)["state"], "your-turn", "{label}");
        assert_ne!(busy["transcript"], done["transcript"], "{label}");
    }
}

#[test]
#[ignore = "serves the stand-in until $STANDIN_DIR/stop exists; run by hand to record a client"]
fn standin() {
    let dir = PathBuf::from(std::env::var_os("STANDIN_DIR").expect("STANDIN_DIR"));
    let log = dir.join("requests.jsonl");
    let api = real::http::MockServer::start(move |req| {
        let record = serde_json::json!({
            "method": req.method, "path": req.path, "body": req.json().unwrap_or_default(),
        });
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log)
        {
            let _ = writeln!(f, "{record}");
        }
        real::openai_chat::reply(req)
    });
    std::fs::write(dir.join("port"), api.port().to_string()).expect("write the port");
    while !dir.join("stop").exists() {
        std::thread::sleep(Duration::from_millis(300));
    }
}

#[test]
#[cfg_attr(skip_real, ignore = "AGENTPANE_SKIP_REAL: real clients not run")]
fn a_pending_command_is_shown_and_answered_from_outside() {
    for client in real::clients("copilot") {
        let label = client.label();
        let w = World::new();
        let pane = w.copilot(&client, "proj");
        let ask = || -> Value {
            type_prompt(&w.server, &pane, "RUNWRITE please");
            wait_screen(&w.server, &pane, STEP, "the approval dialog", |s| {
                s.contains("Do you want to run this command?")
            });
            w.wait_state(&pane, "waiting", Some("permission: bash (touch hello.txt)"));
            let row = real::pane_row(&w.server, &pane);
            assert_eq!(
                row["request"]["summary"], "touch hello.txt",
                "{label}: {row:#}"
            );
            row["request"].clone()
        };
        let hello = w.server.work("proj").join("hello.txt");

        // Allow once: the command runs, and its answer closes the turn.
        let req = ask();
        let fp = req["fingerprint"].as_str().unwrap().to_string();
        let run = real::answer(&w.server, &pane, "allow", &fp);
        assert_eq!(run.code, 0, "{label}: {run:?}");
        w.wait_state(&pane, "your-turn", None);
        assert!(hello.is_file(), "{label}: the command ran");
        let again = real::answer(&w.server, &pane, "allow", &fp);
        assert_eq!(again.code, 1, "{label}: {again:?}");
        assert_eq!(
            again.json()["refusal"],
            "already-answered",
            "{label}: {again:?}"
        );

        // Deny: Escape stops the call, as the option says. Copilot 1.0.102 now and then ignores
        // Escape (see `interrupt`): then the answer says the dialog is still up.
        std::fs::remove_file(&hello).unwrap();
        let req = ask();
        let fp = req["fingerprint"].as_str().unwrap().to_string();
        let run = real::answer(&w.server, &pane, "deny", &fp);
        assert_eq!(run.code, 0, "{label}: {run:?}");
        let out = run.json();
        assert_eq!(out["keys"], serde_json::json!(["Escape"]), "{label}: {out}");
        if out["closed"] == true {
            w.wait_state(&pane, "your-turn", Some("interrupted"));
        } else {
            eprintln!("{label}: Copilot ignored the Escape; Ctrl-C");
            interrupt(&w.server, &pane);
        }
        assert!(!hello.exists(), "{label}: denied, never ran");
    }
}
