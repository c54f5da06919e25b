//! The released Cline CLI (pinned in tests/real/clients.txt) against the OpenAI-compatible
//! stand-in (tests/real/openai_chat.rs), in a private tmux server with the watcher running:
//! what `resolve`, `last`, `route`, `answer` and the alerts say at each step of real turns.
//!
//! Each world has its own HOME (the provider set with `cline auth`, as a user does) and its
//! own port for the hub daemon the client starts and leaves running (`CLINE_HUB_PORT`); the
//! daemon is ended by its pid when the world ends. Cline runs with `--auto-approve false`: it
//! approves every tool by itself otherwise.

mod common;
mod real;

use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;

use common::{FakeAgent, TmuxServer, Watch};
use real::http::MockServer;
use real::openai_chat::{self, ANSWER, MODEL};
use real::{alerts_now, press, type_prompt, wait_alerts, wait_for, wait_screen, Client, STEP};

/// A Claude transcript whose last answer routes into Cline.
const CLAUDE_WITH_ANSWER: &str =
    "claude/d-kimuson-claude-code-viewer/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl";

/// The notices Cline 3.0.65 opens at its first starts in a HOME, one a start.
const CLINE_NOTICES: usize = 2;

/// How long Cline 3.0.65 retries a 429 by itself (6 attempts, growing waits: about a minute).
const RETRIES: Duration = Duration::from_secs(150);

struct World {
    server: TmuxServer,
    api: MockServer,
    hub_port: u16,
}

impl World {
    fn new(client: &Client) -> World {
        let api = openai_chat::start();
        let server = TmuxServer::start();
        let hub_port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let out = std::process::Command::new(client.program())
            .args([
                "auth",
                "-p",
                "openai-compatible",
                "-k",
                "sk-test",
                "-m",
                MODEL,
                "-b",
            ])
            .arg(format!("{}/v1", api.url()))
            .env("HOME", server.home())
            .env("CLINE_HUB_PORT", hub_port.to_string())
            .output()
            .expect("run cline auth");
        assert!(out.status.success(), "cline auth: {out:?}");
        World {
            server,
            api,
            hub_port,
        }
    }

    /// Cline started in `dir` as a user's npm install starts it (its package's `bin`, the
    /// node wrapper that runs the native program), its first-run notice closed; the pane.
    fn cline(&self, client: &Client, dir: &str) -> String {
        let wrapper = client.dir.join("node_modules/cline/bin/cline");
        let cmd = format!("{} -i --auto-approve false", wrapper.display());
        let env = vec![
            ("CLINE_HUB_PORT".to_string(), self.hub_port.to_string()),
            ("TERM".to_string(), "xterm-256color".to_string()),
        ];
        let pane = self.server.new_window(&cmd, &self.server.work(dir), &env);
        real::wait_drawn(&self.server, &pane, &client.label());
        self.ready(&pane);
        pane
    }

    /// Waits for Cline's input box in `pane`, ready to be typed into. Cline 3.0.65 opens a
    /// notice over the box at the first two starts in a HOME ("Try ClinePass", then
    /// "Introducing Cline Desktop"; any key but Enter closes it) a moment after it drew the
    /// box, and records it as seen once closed: a box on screen is not yet a box that takes
    /// keys while a notice is still to come.
    fn ready(&self, pane: &str) {
        const NOTICE: &str = "Press Enter to open, any other key to close";
        let box_shown = |s: &str| {
            s.contains("What can I do for you?") && s.contains("Auto-approve all disabled")
        };
        let seen = self.notices_seen();
        if seen < CLINE_NOTICES {
            wait_screen(&self.server, pane, real::START, "Cline's notice", |s| {
                s.contains(NOTICE)
            });
            // It takes keys only a moment after it is drawn (a key before that is lost);
            // `Right` closes it and does nothing in the empty box behind it, so it is
            // pressed while the notice is on screen.
            wait_for(STEP, "Cline's notice to close", || {
                let open = real::screen(&self.server, pane).contains(NOTICE);
                if open {
                    press(&self.server, pane, "Right");
                }
                (!open).then_some(())
            });
            wait_for(STEP, "Cline to record its notice as seen", || {
                (self.notices_seen() > seen).then_some(())
            });
        }
        wait_screen(&self.server, pane, real::START, "Cline's input box", |s| {
            !s.contains(NOTICE) && box_shown(s)
        });
    }

    /// How many of its start notices Cline records as seen in this world's HOME.
    fn notices_seen(&self) -> usize {
        let file = self
            .server
            .home()
            .join(".cline/data/settings/cli-notices.json");
        std::fs::read(file)
            .ok()
            .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
            .and_then(|v| {
                v["shown"]
                    .as_object()
                    .map(|m| m.values().filter(|v| **v == true).count())
            })
            .unwrap_or(0)
    }

    fn resolve(&self, pane: &str) -> Value {
        real::resolve(&self.server, pane)
    }

    /// Waits until `pane` reads `state` with a reason `reason` accepts; the resolution.
    fn wait_state(&self, pane: &str, state: &str, reason: impl Fn(&Value) -> bool) -> Value {
        self.wait_state_for(STEP, pane, state, reason)
    }

    fn wait_state_for(
        &self,
        deadline: Duration,
        pane: &str,
        state: &str,
        reason: impl Fn(&Value) -> bool,
    ) -> Value {
        real::wait_resolved(&self.server, pane, deadline, state, |r| {
            r["state"] == state && reason(&r["reason"])
        })
    }

    /// The newest user text the API received.
    fn last_prompt(&self) -> String {
        openai_chat::last_prompt(&self.api)
    }

    /// The hub daemon's discovery record.
    fn hub_record(&self) -> PathBuf {
        self.server
            .home()
            .join(".cline/data/locks/hub/production.json")
    }
}

impl Drop for World {
    fn drop(&mut self) {
        // The hub daemon outlives the client; it was started by this world's client.
        let pid = std::fs::read(self.hub_record())
            .ok()
            .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
            .and_then(|v| v["pid"].as_u64());
        if let Some(pid) = pid.filter(|p| *p > 1) {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            if String::from_utf8_lossy(&cmdline).contains("--cline-hub-daemon") {
                let _ = std::process::Command::new("kill")
                    .arg(pid.to_string())
                    .status();
            }
        }
    }
}

/// [`wait_alerts`], saying on failure what the watcher saw (its row, its log).
fn alerts_for(w: &World, watch: &Watch, pane: &str, n: usize) -> Vec<(String, String)> {
    let got =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| wait_alerts(watch, pane, n)));
    got.unwrap_or_else(|_| {
        panic!(
            "{pane}: fewer than {n} alerts; the watcher's row: {:#}\nits log:\n{}",
            w.server.snapshot_row(pane),
            std::fs::read_to_string(w.server.server_dir().join("watch.log")).unwrap_or_default()
        )
    })
}

fn none(r: &Value) -> bool {
    r.is_null()
}

/// Cline wraps a prompt in its mode tag before it sends it.
fn unwrapped(prompt: &str) -> &str {
    prompt
        .strip_prefix("<user_input mode=\"act\">")
        .and_then(|p| p.strip_suffix("</user_input>"))
        .unwrap_or(prompt)
}

#[test]
#[cfg_attr(skip_real, ignore = "AGENTPANE_SKIP_REAL: real clients not run")]
fn cline_turns_read_right_alert_once_and_route_in_and_out() {
    for client in real::clients("cline") {
        let label = client.label();
        let w = World::new(&client);
        let claude = w
            .server
            .spawn(&FakeAgent::claude().fixture(CLAUDE_WITH_ANSWER));
        let watch = Watch::start(&w.server, &[]);
        let pane = w.cline(&client, "proj");

        // Fresh: no session before the first prompt. Idle, no alert.
        let fresh = w.wait_state(&pane, "idle", none);
        assert_eq!(fresh["agent"], "cline", "{label}: {fresh:#}");
        assert!(fresh["transcript"].is_null(), "{label}: {fresh:#}");

        // An answer: your-turn, `last` byte for byte, one alert.
        type_prompt(&w.server, &pane, "hello there");
        let done = w.wait_state(&pane, "your-turn", none);
        assert_eq!(done["via"], "session-record", "{label}: {done:#}");
        let transcript = done["transcript"].as_str().unwrap().to_string();
        assert!(transcript.ends_with(".messages.json"), "{label}: {done:#}");
        let last = w.server.agentpane(&["last", &pane, "--json"]);
        assert_eq!(last.code, 0, "{label}: {last:?}");
        assert_eq!(last.json()["text"], ANSWER, "{label}");
        assert_eq!(last.json()["agent"], "cline", "{label}");
        let alerts = alerts_for(&w, &watch, &pane, 1);
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

        // A command it asks about: waiting on it, alerted, routes refused; denied from
        // outside, held to the request shown: the command never runs, the turn goes on.
        std::fs::create_dir_all(w.server.work("proj").join("scratch")).unwrap();
        let before = w.api.requests().len();
        type_prompt(&w.server, &pane, "RUNRM please");
        let reason = "permission: run_commands (rm -rf scratch)";
        w.wait_state(&pane, "waiting", |r| r == reason);
        let alerts = alerts_for(&w, &watch, &pane, 2);
        assert_eq!(alerts[1], ("waiting".into(), reason.into()), "{label}");
        let refused = w.server.agentpane(&["route", &claude, &pane]);
        assert_eq!(refused.code, 1, "{label}: {refused:?}");
        let req = real::pane_row(&w.server, &pane)["request"].clone();
        assert_eq!(req["summary"], "rm -rf scratch", "{label}: {req:#}");
        assert_eq!(req["tool"], "run_commands", "{label}: {req:#}");
        let fp = req["fingerprint"].as_str().unwrap_or_default().to_string();
        let run = real::answer(&w.server, &pane, "deny", &fp);
        assert_eq!(run.code, 0, "{label}: {run:?}");
        assert_eq!(run.json()["keys"], serde_json::json!(["n"]), "{label}");
        w.wait_state(&pane, "your-turn", none);
        let again = real::answer(&w.server, &pane, "deny", &fp);
        assert_eq!(again.code, 1, "{label}: {again:?}");
        let replies = openai_chat::tool_replies(&w.api, before);
        assert!(
            replies.len() == 1 && replies[0].contains("rejected by the user"),
            "{label}: {replies:?}"
        );
        assert!(w.server.work("proj").join("scratch").is_dir(), "{label}");
        let last = w.server.agentpane(&["last", &pane, "--json"]);
        assert_eq!(last.json()["text"], "Tool done.", "{label}: {last:?}");
        alerts_for(&w, &watch, &pane, 3);

        // Allowed from outside: the command runs.
        type_prompt(&w.server, &pane, "RUNWRITE please");
        w.wait_state(&pane, "waiting", |r| {
            r == "permission: run_commands (touch hello.txt)"
        });
        // Alerted before it is answered (an answer within the alert's delay leaves none).
        alerts_for(&w, &watch, &pane, 4);
        let req = real::pane_row(&w.server, &pane)["request"].clone();
        let fp = req["fingerprint"].as_str().unwrap_or_default().to_string();
        let run = real::answer(&w.server, &pane, "allow", &fp);
        assert_eq!(run.code, 0, "{label}: {run:?}");
        assert_eq!(run.json()["keys"], serde_json::json!(["y"]), "{label}");
        w.wait_state(&pane, "your-turn", none);
        assert!(w.server.work("proj").join("hello.txt").is_file(), "{label}");
        alerts_for(&w, &watch, &pane, 5);

        // HTTP 400: attention naming it; no answer handed on.
        type_prompt(&w.server, &pane, "BADREQ now");
        w.wait_state(&pane, "attention", |r| {
            r == "api error: model stand-in does not exist"
        });
        let alerts = alerts_for(&w, &watch, &pane, 6);
        assert_eq!(alerts[5].0, "attention", "{label}: {alerts:?}");
        assert_eq!(w.server.agentpane(&["last", &pane]).code, 1, "{label}");
        assert_eq!(w.server.agentpane(&["route", &pane, &sink]).code, 1);

        // HTTP 429: Cline retries it for about a minute, showing only `Thinking...` and
        // writing nothing but `running`: working (no alert) while it retries, then the
        // error once it gave up; one alert for the turn.
        let before = w.api.requests().len();
        type_prompt(&w.server, &pane, "QUOTA please");
        wait_for(STEP, "a retry of the 429", || {
            (w.api.requests().len() >= before + 2).then_some(())
        });
        let retrying = w.resolve(&pane);
        assert_eq!(retrying["state"], "working", "{label}: {retrying:#}");
        assert_eq!(alerts_now(&watch, &pane).len(), 6, "{label}");
        w.wait_state_for(RETRIES, &pane, "attention", |r| r == "quota exceeded");
        let alerts = alerts_for(&w, &watch, &pane, 7);
        assert_eq!(alerts[6].0, "attention", "{label}: {alerts:?}");
        std::thread::sleep(Duration::from_secs(2));
        assert_eq!(
            alerts_now(&watch, &pane).len(),
            7,
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

        // Routing in: a Claude answer pasted into Cline's box reaches the API as typed.
        let source = w.server.agentpane(&["last", &claude, "--json"]).json()["text"]
            .as_str()
            .unwrap()
            .to_string();
        let routed = w.server.agentpane(&["route", &claude, &pane]);
        assert_eq!(routed.code, 0, "{label}: {routed:?}");
        let got = wait_for(STEP, "the routed prompt at the API", || {
            let p = w.last_prompt();
            unwrapped(&p)
                .starts_with(&source[..20])
                .then(|| unwrapped(&p).to_string())
        });
        assert_eq!(got, source, "{label}");
        w.wait_state(&pane, "your-turn", none);
        let alerts = alerts_for(&w, &watch, &pane, 8);
        assert_eq!(alerts.len(), 8, "{label}: {alerts:?}");
        assert!(!alerts.iter().any(|a| a.1 == "interrupted"), "{label}");
        assert_eq!(watch.stop(), 0);
    }
}

#[test]
#[cfg_attr(skip_real, ignore = "AGENTPANE_SKIP_REAL: real clients not run")]
fn two_cline_sessions_in_one_folder_each_show_their_own_and_the_daemon_is_no_agent() {
    for client in real::clients("cline") {
        let label = client.label();
        let w = World::new(&client);
        let a = w.cline(&client, "shared");
        let b = w.cline(&client, "shared");
        type_prompt(&w.server, &a, "hello from a");
        let ra = w.wait_state(&a, "your-turn", none);
        type_prompt(&w.server, &b, "BADREQ from b");
        let rb = w.wait_state(&b, "attention", |r| {
            r == "api error: model stand-in does not exist"
        });
        assert_ne!(ra["transcript"], rb["transcript"], "{label}");
        assert_eq!(rb["via"], "session-record", "{label}: {rb:#}");
        let ra = w.resolve(&a);
        assert_eq!(ra["state"], "your-turn", "{label}: {ra:#}");
        assert_eq!(ra["via"], "session-record", "{label}: {ra:#}");

        // In a shell pane: once the client exits, its hub daemon lives on, and the pane is
        // a shell again, no agent's.
        let wrapper = client.dir.join("node_modules/cline/bin/cline");
        let env = vec![("CLINE_HUB_PORT".to_string(), w.hub_port.to_string())];
        let shell = w.server.new_window("sh", &w.server.work("shell"), &env);
        type_prompt(
            &w.server,
            &shell,
            &format!("{} -i --auto-approve false", wrapper.display()),
        );
        w.ready(&shell);
        let r = w.wait_state(&shell, "idle", none);
        assert_eq!(r["agent"], "cline", "{label}: {r:#}");
        // Ctrl+C twice quits; pressed until the shell has the pane again.
        wait_for(STEP, "the shell again", || {
            press(&w.server, &shell, "C-c");
            std::thread::sleep(Duration::from_millis(700));
            let command = w.server.tmux(&[
                "display-message",
                "-p",
                "-t",
                &shell,
                "#{pane_current_command}",
            ]);
            (command.trim() == "sh").then_some(())
        });
        wait_for(STEP, "the pane to read no agent", || {
            let run = w.server.agentpane(&["resolve", &shell, "--json"]);
            (run.code != 0 || run.json()["agent"].is_null()).then_some(())
        });
        let hub: Value =
            serde_json::from_slice(&std::fs::read(w.hub_record()).expect("the hub record"))
                .expect("hub record JSON");
        let pid = hub["pid"].as_u64().expect("the hub's pid");
        assert!(
            std::path::Path::new(&format!("/proc/{pid}")).exists(),
            "{label}: the hub daemon still runs"
        );
    }
}
