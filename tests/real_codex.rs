//! The released Codex CLI (every pinned version) in a private tmux server, talking to the
//! Responses API stand-in of `tests/real/openai.rs`: what `agentpane` shows for each thing a
//! user meets — a fresh session, an answer, a command waiting for approval, Escape, API
//! errors, several sessions in one folder — and what `last` and `route` hand on.
//!
//! Codex 0.171 starts a shared app-server daemon (under `CODEX_HOME/packages/…`, outside the
//! pane's process tree) that writes every pane's rollout; [`Codex`] kills the daemons of its
//! own `CODEX_HOME`, by PID, when it is dropped.

mod common;
mod real;

use std::path::PathBuf;
use std::time::Duration;

use common::{Run, TmuxServer, Watch};
use real::http::MockServer;
use real::{openai, screen, start, wait_for, wait_screen, Client, STEP};
use serde_json::Value;

/// One world: a tmux server, the API stand-in, a `CODEX_HOME` configured for it.
struct Codex {
    server: TmuxServer,
    api: MockServer,
    client: Client,
    /// One world at a time: each starts its own daemon and TUIs, heavy on a loaded 2-core
    /// machine; run side by side they starved each other's start-up.
    _turn: std::sync::MutexGuard<'static, ()>,
}

static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

impl Codex {
    fn start(client: &Client) -> Codex {
        let turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
        let server = TmuxServer::start();
        let api = openai::start();
        start::codex_config(&server, &api.url(), "proj");
        Codex {
            server,
            api,
            client: client.clone(),
            _turn: turn,
        }
    }

    fn work(&self) -> PathBuf {
        self.server.work("proj")
    }

    /// Starts `codex ARGS` in a new window in the project folder and waits until its thread
    /// exists and its prompt shows.
    fn open(&self, args: &str) -> String {
        start::codex(&self.server, &self.client, "proj", args)
    }

    /// Types a prompt and waits until the API has seen it.
    fn ask(&self, pane: &str, text: &str) {
        start::codex_ask(&self.server, &self.api, pane, text);
    }

    /// Waits until the TUI shows its idle input box.
    fn wait_prompt(&self, pane: &str) -> String {
        start::codex_wait_prompt(&self.server, pane)
    }

    /// Thread ids the shared daemon has created (one lock file each).
    fn threads(&self) -> usize {
        start::codex_threads(&self.server)
    }

    fn run(&self, args: &[&str]) -> Run {
        self.server.agentpane(args)
    }

    /// `resolve PANE --json`.
    fn resolve(&self, pane: &str) -> Value {
        let run = self.run(&["resolve", pane, "--json"]);
        assert_eq!(run.code, 0, "{run:?}");
        run.json()
    }

    /// Waits until `pane` reads `state`; the last resolve.
    fn wait_state(&self, pane: &str, state: &str) -> Value {
        let mut last = Value::Null;
        let found = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            wait_for(STEP, &format!("{pane} to read {state}"), || {
                last = self.resolve(pane);
                (last["state"] == state).then(|| last.clone())
            })
        }));
        found.unwrap_or_else(|_| {
            panic!(
                "{pane} never read {state}; last: {last:#}\nscreen:\n{}",
                screen(&self.server, pane)
            )
        })
    }

    fn last(&self, pane: &str) -> Run {
        self.run(&["last", pane])
    }

    /// The user text of every real turn the API saw, in order.
    fn prompts(&self) -> Vec<String> {
        start::codex_prompts(&self.api)
    }
}

impl Drop for Codex {
    fn drop(&mut self) {
        let _ = self.server.try_tmux(&["kill-server"]);
        start::kill_codex_daemons(&self.server.codex_dir());
    }
}

fn alerts_for(watch: &Watch, pane: &str) -> Vec<Value> {
    watch
        .alerts()
        .into_iter()
        .filter(|a| a["pane"] == pane)
        .collect()
}

/// Waits until `pane` has had `n` alerts; on failure shows what the watcher saw.
fn wait_alerts(w: &Codex, watch: &Watch, pane: &str, n: usize) {
    let end = std::time::Instant::now() + STEP;
    while alerts_for(watch, pane).len() < n {
        if std::time::Instant::now() > end {
            let state = std::fs::read_to_string(w.server.server_dir().join("state.json"));
            panic!(
                "{pane}: {n} alert(s) expected, got {:?}\nwatcher state: {state:?}",
                watch.alerts()
            );
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    assert_eq!(alerts_for(watch, pane).len(), n, "{:?}", watch.alerts());
}

/// Waits a little for a watcher scan to pass, then checks no new alert came.
fn no_new_alert(watch: &Watch, pane: &str, before: usize, what: &str) {
    std::thread::sleep(Duration::from_millis(1500));
    let now = alerts_for(watch, pane);
    assert_eq!(now.len(), before, "{what}: no alert expected: {now:?}");
}

#[test]
#[cfg_attr(skip_real, ignore = "AGENTPANE_SKIP_REAL: real clients not run")]
fn codex_session_reads_idle_answer_waiting_interrupted_and_errors() {
    for client in real::clients("codex") {
        let w = Codex::start(&client);
        let pane = w.open("");
        let watch = Watch::start(&w.server, &[]);

        // A fresh session: nothing answered yet.
        let fresh = w.wait_state(&pane, "idle");
        assert_eq!(fresh["agent"], "codex", "{fresh:#}");
        let last = w.last(&pane);
        assert_eq!(last.code, 1, "no answer in a fresh pane: {last:?}");
        let other = w.open("");
        let route = w.run(&["route", &pane, &other, "--json"]);
        assert_ne!(route.code, 0, "nothing to route: {route:?}");
        no_new_alert(&watch, &pane, 0, "fresh session");

        // A plain answer: your-turn, `last` is the answer, one alert.
        w.ask(&pane, "PLAIN question");
        let done = w.wait_state(&pane, "your-turn");
        assert_eq!(done["reason"], Value::Null, "{done:#}");
        let last = w.last(&pane);
        assert_eq!(
            (last.code, last.stdout.trim_end()),
            (0, openai::PLAIN_ANSWER),
            "{last:?}"
        );
        wait_alerts(&w, &watch, &pane, 1);
        assert_eq!(alerts_for(&watch, &pane)[0]["state"], "your-turn");

        // Escape while the answer streams: interrupted, no alert.
        w.ask(&pane, "SLOW please");
        wait_screen(&w.server, &pane, STEP, "the stream", |s| {
            s.contains("word2")
        });
        w.wait_state(&pane, "working");
        real::press(&w.server, &pane, "Escape");
        let stopped = w.wait_state(&pane, "your-turn");
        assert_eq!(stopped["reason"], "interrupted", "{stopped:#}");
        no_new_alert(&watch, &pane, 1, "Escape mid-stream");

        // A command that asks: waiting with the command as reason, alerted, routes refused.
        w.ask(&pane, "TOOL please");
        wait_screen(&w.server, &pane, STEP, "the approval prompt", |s| {
            s.contains("Would you like to run")
        });
        let waiting = w.wait_state(&pane, "waiting");
        let reason = waiting["reason"].as_str().unwrap_or_default();
        assert!(
            reason.contains("touch"),
            "the command names the wait: {waiting:#}"
        );
        wait_alerts(&w, &watch, &pane, 2);
        assert_eq!(alerts_for(&watch, &pane)[1]["state"], "waiting");
        let into = w.run(&["route", &other, &pane, "--json"]);
        assert_ne!(into.code, 0, "a dialog is not an input box: {into:?}");
        real::press(&w.server, &pane, "Escape");
        let cancelled = w.wait_state(&pane, "your-turn");
        assert_eq!(cancelled["reason"], "interrupted", "{cancelled:#}");
        no_new_alert(&watch, &pane, 2, "Escape at the approval prompt");

        // API errors: attention naming the error; no answer handed on.
        for (prompt, needle) in [("QUOTA please", "quota"), ("BAD please", "invalid prompt")] {
            w.ask(&pane, prompt);
            let failed = w.wait_state(&pane, "attention");
            let reason = failed["reason"].as_str().unwrap_or_default().to_lowercase();
            assert!(reason.contains(needle), "{prompt}: {failed:#}");
            let last = w.last(&pane);
            assert_eq!(
                last.code, 1,
                "{prompt}: a failed turn has no answer: {last:?}"
            );
            let route = w.run(&["route", &pane, &other, "--json"]);
            assert_ne!(route.code, 0, "{prompt}: {route:?}");
            assert!(
                serde_json::from_str::<Value>(&route.stdout).is_ok(),
                "route --json says why on stdout: {route:?}"
            );
        }
        assert!(
            alerts_for(&watch, &other).is_empty(),
            "the untouched pane was never alerted: {:?}",
            watch.alerts()
        );
        drop(watch);
    }
}

#[test]
#[cfg_attr(skip_real, ignore = "AGENTPANE_SKIP_REAL: real clients not run")]
fn codex_panes_in_one_folder_each_show_their_own_session_and_routes_arrive() {
    for client in real::clients("codex") {
        let w = Codex::start(&client);
        // Two panes on the shared daemon, started one after the other as a person does,
        // and one with its own server.
        let a = w.open("");
        wait_for(STEP, "the first thread", || {
            (w.threads() >= 1).then_some(())
        });
        std::thread::sleep(Duration::from_millis(1500));
        let b = w.open("");
        wait_for(STEP, "the second thread", || {
            (w.threads() >= 2).then_some(())
        });
        let c = w.open("--no-daemon");

        w.ask(&b, "PLAIN from b");
        let rb = w.wait_state(&b, "your-turn");
        assert_eq!(w.last(&b).stdout.trim_end(), openai::PLAIN_ANSWER);
        for pane in [&a, &c] {
            let r = w.resolve(pane);
            assert_eq!(r["state"], "idle", "{pane} has answered nothing: {r:#}");
            assert_ne!(r["transcript"], rb["transcript"], "{pane} took b's: {r:#}");
            assert_eq!(w.last(pane).code, 1, "{pane}");
        }

        w.ask(&c, "MULTI from c");
        let rc = w.wait_state(&c, "your-turn");
        assert_ne!(rc["transcript"], rb["transcript"]);
        assert_eq!(w.last(&c).stdout.trim_end(), openai::MULTI_ANSWER);
        let ra = w.resolve(&a);
        assert_eq!(ra["state"], "idle", "{ra:#}");

        // A routed answer is a's next prompt, byte-exact.
        let route = w.run(&["route", &b, &a, "--json"]);
        assert_eq!(route.code, 0, "{route:?}");
        w.wait_state(&a, "your-turn");
        assert_eq!(
            w.prompts().last().map(String::as_str),
            Some(openai::PLAIN_ANSWER)
        );
        assert_eq!(w.last(&a).stdout.trim_end(), openai::PLAIN_ANSWER);
        let ra = w.resolve(&a);
        assert_ne!(ra["transcript"], rb["transcript"], "{ra:#}");

        // A multi-line answer in a template.
        let template = w.server.path().join("t.tmpl");
        std::fs::write(&template, "Check this:\n{answer}\n-- end").unwrap();
        w.wait_prompt(&a);
        let route = w.run(&[
            "route",
            &c,
            &a,
            "--template",
            template.to_str().unwrap(),
            "--json",
        ]);
        assert_eq!(route.code, 0, "{route:?}");
        let expected = format!("Check this:\n{}\n-- end", openai::MULTI_ANSWER);
        wait_for(STEP, "the templated prompt at the API", || {
            (w.prompts().last() == Some(&expected)).then_some(())
        });
    }
}

#[test]
#[cfg_attr(skip_real, ignore = "AGENTPANE_SKIP_REAL: real clients not run")]
fn codex_panes_started_together_never_show_a_neighbours_session() {
    for client in real::clients("codex") {
        let w = Codex::start(&client);
        // Warm the daemon, then open two panes at once: their start times may not tell them
        // apart, and then neither may claim a thread.
        let first = w.open("");
        let cmd = w.client.program().display().to_string();
        let env = start::codex_env();
        let d = w.server.new_window(&cmd, &w.work(), &env);
        let e = w.server.new_window(&cmd, &w.work(), &env);
        wait_for(STEP, "both threads", || (w.threads() >= 3).then_some(()));
        w.wait_prompt(&d);
        w.wait_prompt(&e);
        w.ask(&d, "PLAIN from d");
        wait_screen(&w.server, &d, STEP, "d's answer", |s| {
            s.contains(openai::PLAIN_ANSWER)
        });
        let rd = w.resolve(&d);
        let re = w.resolve(&e);
        let rf = w.resolve(&first);
        eprintln!("started together: d via {}, e via {}", rd["via"], re["via"]);
        // d either finds its own rollout or says it cannot tell; e and first never take d's.
        let own = rd["transcript"].as_str().map(|t| {
            std::fs::read_to_string(t)
                .unwrap_or_default()
                .contains("PLAIN from d")
        });
        assert!(own == Some(true) || rd["via"] == "ambiguous", "d: {rd:#}");
        for (name, r) in [("e", &re), ("first", &rf)] {
            let t = r["transcript"].as_str().unwrap_or_default();
            let text = std::fs::read_to_string(t).unwrap_or_default();
            assert!(
                !text.contains("PLAIN from d"),
                "{name} shows d's session: {r:#}"
            );
            assert_ne!(
                w.last(if name == "e" { &e } else { &first }).code,
                0,
                "{name}"
            );
        }
    }
}

/// A rate limit Codex keeps retrying (it writes nothing to its rollout until it gives up)
/// needs the human: `attention` with where the retries stand, from its status line, alerted
/// once for the turn — also when the turn then fails for good.
#[test]
#[cfg_attr(skip_real, ignore = "AGENTPANE_SKIP_REAL: real clients not run")]
fn a_retried_rate_limit_is_attention_once() {
    for client in real::clients("codex") {
        let w = Codex::start(&client);
        let label = client.label();
        // Codex's own defaults retry; the suite's config turns retries off elsewhere.
        let cfg = w.server.codex_dir().join("config.toml");
        let text = std::fs::read_to_string(&cfg)
            .unwrap()
            .replace("request_max_retries = 0", "request_max_retries = 4")
            .replace("stream_max_retries = 0", "stream_max_retries = 5");
        std::fs::write(&cfg, text).unwrap();
        let pane = w.open("");
        let watch = Watch::start(&w.server, &[]);
        w.wait_state(&pane, "idle");
        w.ask(&pane, "Please RATE429 now");
        let row = wait_for(STEP, &format!("{label}: attention while retrying"), || {
            let r = w.resolve(&pane);
            (r["state"] == "attention"
                && r["reason"]
                    .as_str()
                    .is_some_and(|s| s.starts_with("rate limit — retrying (attempt ")))
            .then_some(r)
        });
        assert_eq!(row["source"], "pane", "{label}: {row:#}");
        assert_eq!(row["retry"]["limit"], 5, "{label}: {row:#}");
        // It gives up: the rollout's error decides, and the turn is not alerted again.
        wait_for(STEP, &format!("{label}: the final error"), || {
            let r = w.resolve(&pane);
            (r["state"] == "attention"
                && r["reason"]
                    .as_str()
                    .is_some_and(|s| s.contains("exceeded retry limit")))
            .then_some(r)
        });
        // One alert for the turn: the retries and the final error are one attention (the
        // watcher may alert it while it retries or at the final error).
        wait_alerts(&w, &watch, &pane, 1);
        std::thread::sleep(Duration::from_secs(3));
        let alerts = alerts_for(&watch, &pane);
        assert_eq!(alerts.len(), 1, "{label}: {alerts:#?}");
        assert_eq!(alerts[0]["state"], "attention", "{label}");
    }
}

/// The `function_call_output` items the API received, in order (one per request whose last
/// input item is one).
fn tool_outputs(w: &Codex) -> Vec<String> {
    openai::turn_requests(&w.api)
        .iter()
        .filter_map(|b| {
            let last = b["input"].as_array()?.last()?.clone();
            (last["type"] == "function_call_output").then(|| last["output"].to_string())
        })
        .collect()
}

#[test]
#[cfg_attr(skip_real, ignore = "AGENTPANE_SKIP_REAL: real clients not run")]
fn a_pending_command_is_shown_and_answered_from_outside() {
    for client in real::clients("codex") {
        let w = Codex::start(&client);
        let pane = w.open("");
        w.wait_state(&pane, "idle");
        let ask = |w: &Codex| -> Value {
            w.ask(&pane, "TOOL please");
            wait_screen(&w.server, &pane, STEP, "the approval prompt", |s| {
                s.contains("Would you like to run")
            });
            let row = w.wait_state(&pane, "waiting");
            // Read from the rollout, which records the call before Codex asks.
            let me = real::wait_row(&w.server, &pane, "the request from the rollout", |r| {
                r["request"]["from"] == "log"
            });
            assert_eq!(me["request"]["call_id"], "call_mock", "{me:#}");
            assert!(
                me["request"]["summary"]
                    .as_str()
                    .is_some_and(|s| s.contains(openai::TOOL_COMMAND)),
                "the command is shown: {me:#} (resolve: {row:#})\n{}",
                screen(&w.server, &pane)
            );
            me["request"].clone()
        };

        // Allow: the command runs and the API receives its output.
        let req = ask(&w);
        let fp = req["fingerprint"].as_str().unwrap().to_string();
        let before = tool_outputs(&w).len();
        let run = real::answer(&w.server, &pane, "allow", &fp);
        assert_eq!(run.code, 0, "{run:?}\n{}", screen(&w.server, &pane));
        wait_for(STEP, "the command's output at the API", || {
            (tool_outputs(&w).len() > before).then_some(())
        });
        assert!(w.work().join("approved.txt").exists(), "the command ran");
        w.wait_state(&pane, "your-turn");
        // Already answered: the rollout has the call's output; nothing typed.
        let again = real::answer(&w.server, &pane, "allow", &fp);
        assert_eq!(again.code, 1, "{again:?}");
        assert_eq!(again.json()["refusal"], "already-answered", "{again:?}");

        // Deny: Codex tells the model and the turn goes on or ends as Codex does.
        std::fs::remove_file(w.work().join("approved.txt")).unwrap();
        let req = ask(&w);
        let fp = req["fingerprint"].as_str().unwrap().to_string();
        let run = real::answer(&w.server, &pane, "deny", &fp);
        assert_eq!(run.code, 0, "{run:?}\n{}", screen(&w.server, &pane));
        let after = w.wait_state(&pane, "your-turn");
        assert!(!w.work().join("approved.txt").exists(), "denied: {after:#}");

        // The person answers in the pane first: once the pane has taken the key, the late
        // answer is refused.
        let req = ask(&w);
        let fp = req["fingerprint"].as_str().unwrap().to_string();
        let dialog = screen(&w.server, &pane);
        real::press(&w.server, &pane, "Escape");
        real::wait_screen(
            &w.server,
            &pane,
            real::STEP,
            "the pane to take the Escape",
            |s| s != dialog,
        );
        let late = real::answer(&w.server, &pane, "allow", &fp);
        assert_eq!(late.code, 1, "{late:?}");
        // The rollout no longer shows the call pending (Codex ended the turn).
        assert_eq!(late.json()["refusal"], "already-answered", "{late:?}");
        w.wait_state(&pane, "your-turn");
        assert!(!w.work().join("approved.txt").exists(), "never allowed");
    }
}

#[test]
#[cfg_attr(skip_real, ignore = "AGENTPANE_SKIP_REAL: real clients not run")]
fn codex_usage_and_plan_windows_reach_panes_json_as_the_client_logged_them() {
    for client in real::clients("codex") {
        let w = Codex::start(&client);
        let pane = w.open("");
        w.wait_state(&pane, "idle");
        w.ask(&pane, "PLAIN question");
        w.wait_state(&pane, "your-turn");
        // The turn's requests: each used [`openai::USAGE`]; Codex sums them.
        let turns = openai::turn_requests(&w.api).len() as u64;
        let (input, _cached, output, total) = openai::USAGE;
        let mut row = Value::Null;
        wait_for(STEP, "the plan windows in panes --json", || {
            let run = w.run(&["panes", "--json"]);
            row = run
                .json()
                .as_array()?
                .iter()
                .find(|r| r["pane_id"] == pane.as_str())?
                .clone();
            (row["limits"].as_array()?.len() == 2).then_some(())
        });
        let u = &row["usage"];
        assert_eq!(u["model"], "gpt-5.1-codex", "{row:#}");
        assert_eq!(u["context_tokens"], total, "{row:#}");
        assert_eq!(u["session_input"], input * turns, "{row:#}");
        assert_eq!(u["session_output"], output * turns, "{row:#}");
        assert_eq!(u["cost_usd"], Value::Null, "{row:#}");
        let window = u["context_window"]
            .as_u64()
            .expect("Codex states its window");
        assert_eq!(
            u["context_percent"].as_f64(),
            Some(total as f64 * 100.0 / window as f64)
        );
        let plan: Vec<(String, f64, u64, i64)> = row["limits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| {
                let reset = chrono::DateTime::parse_from_rfc3339(l["resets_at"].as_str().unwrap())
                    .unwrap()
                    .timestamp();
                (
                    l["name"].as_str().unwrap().to_string(),
                    l["used_percent"].as_f64().unwrap(),
                    l["window_minutes"].as_u64().unwrap(),
                    reset,
                )
            })
            .collect();
        let (p, s) = (openai::PRIMARY, openai::SECONDARY);
        assert_eq!(
            plan,
            vec![
                ("5h".to_string(), p.0, p.1, p.2),
                ("7d".to_string(), s.0, s.1, s.2)
            ],
            "{row:#}"
        );
    }
}
