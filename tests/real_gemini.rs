//! The real Gemini CLI (pinned in tests/real/clients.txt) in a private tmux server against
//! the API stand-in of tests/real/gemini.rs: what agentpane reads from it, scenario by
//! scenario. One client session runs several checks in a row to keep the suite fast.

mod common;
mod real;

use std::time::Duration;

use agentpane::events::AgentKind;
use common::{wait_until_else, TmuxServer, Watch, WATCHER_FINDS};
use real::gemini::{self, answer_to, TOOL_DONE};
use real::{press, start, wait_for, STEP};

fn resolve(server: &TmuxServer, pane: &str) -> serde_json::Value {
    real::resolve(server, pane)
}

/// Waits until `pane` reads `state` (and `reason`, when given); returns the resolution.
fn wait_state(
    server: &TmuxServer,
    pane: &str,
    state: &str,
    reason: Option<&str>,
) -> serde_json::Value {
    real::wait_resolved(server, pane, STEP, &format!("{state} {reason:?}"), |r| {
        r["state"] == state && reason.map_or(true, |x| r["reason"] == x)
    })
}

fn last_text(server: &TmuxServer, pane: &str) -> Option<String> {
    let run = server.agentpane(&["last", pane, "--json"]);
    (run.code == 0).then(|| run.json()["text"].as_str().unwrap_or_default().to_string())
}

fn alerts_for(watch: &Watch, pane: &str) -> Vec<(String, Option<String>)> {
    watch
        .alerts()
        .into_iter()
        .filter(|a| a["pane"] == pane)
        .map(|a| {
            (
                a["state"].as_str().unwrap_or_default().to_string(),
                a["reason"].as_str().map(str::to_string),
            )
        })
        .collect()
}

/// What the watcher made of `pane`, for a failure message: its alerts, its snapshot's row, its
/// log, and what `panes --json` and the screen say now.
fn watcher_view(server: &TmuxServer, watch: &Watch, pane: &str) -> String {
    format!(
        "alerts: {:?}\nthe watcher's row: {:#}\npanes --json: {:#}\nthe watcher's log:\n{}\nscreen:\n{}",
        alerts_for(watch, pane),
        server.snapshot_row(pane),
        row(server, pane),
        std::fs::read_to_string(server.server_dir().join("watch.log")).unwrap_or_default(),
        real::screen(server, pane)
    )
}

/// [`wait_for`], telling on a timeout what the watcher made of `pane`.
fn wait_watched<T>(
    server: &TmuxServer,
    watch: &Watch,
    pane: &str,
    what: &str,
    probe: impl FnMut() -> Option<T>,
) -> T {
    let found =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| wait_for(STEP, what, probe)));
    found.unwrap_or_else(|_| {
        panic!(
            "timed out after {STEP:?} waiting for {what}\n{}",
            watcher_view(server, watch, pane)
        )
    })
}

/// Waits until the watcher reads the log a fresh `pane` resolves to. Gemini CLI writes it a
/// moment after its first screen; a watcher that resolved the pane in between read it `idle`,
/// through its first answer, for a minute.
fn watcher_reads_its_log(server: &TmuxServer, watch: &Watch, pane: &str) {
    let log = resolve(server, pane)["transcript"].clone();
    assert!(log.is_string(), "{pane} has no log yet");
    wait_until_else(
        WATCHER_FINDS,
        &format!("the watcher to read {log}"),
        || server.snapshot_row(pane)["transcript"] == log,
        || watcher_view(server, watch, pane),
    );
}

#[test]
#[cfg_attr(skip_real, ignore = "AGENTPANE_SKIP_REAL: real clients not run")]
fn gemini_session_reads_fresh_answer_permission_error_and_interrupt() {
    for client in real::clients("gemini") {
        let server = TmuxServer::start();
        let api = gemini::start();
        let home = gemini::home(server.path());
        let watch = Watch::start(&server, &[]);
        let pane = start::gemini(&server, &client, &home, &api, "proj");
        let label = client.label();
        watcher_reads_its_log(&server, &watch, &pane);

        // Fresh: idle, its own session, no alert.
        let r = wait_state(&server, &pane, "idle", None);
        assert_eq!(r["agent"], "gemini", "{label}: {r:#}");
        assert_eq!(r["via"], "cwd", "{label}: {r:#}");
        assert!(r["session_id"].is_string(), "{label}: {r:#}");

        // An answer: your-turn, `last` is it (code block byte-exact), one alert.
        start::gemini_submit(&server, &pane, "hello gemini");
        wait_state(&server, &pane, "your-turn", None);
        assert_eq!(
            last_text(&server, &pane).as_deref(),
            Some(answer_to("hello gemini").as_str())
        );
        wait_watched(&server, &watch, &pane, "the your-turn alert", || {
            (alerts_for(&watch, &pane) == [("your-turn".to_string(), None)]).then_some(())
        });

        // The stand-in's usage as Gemini CLI logged it: the prompt (cached tokens included)
        // as the context, thinking counted as output.
        let log = resolve(&server, &pane)["transcript"]
            .as_str()
            .unwrap()
            .to_string();
        let usage = real::usage::of_log(AgentKind::Gemini, &log);
        assert_eq!(usage.model.as_deref(), Some(gemini::MODEL), "{label}");
        let (p, o) = (
            gemini::PROMPT_TOKENS,
            gemini::OUTPUT_TOKENS + gemini::THOUGHTS_TOKENS,
        );
        assert_eq!(usage.session_input, Some(p), "{label}: {usage:?}");
        assert_eq!(usage.session_output, Some(o), "{label}: {usage:?}");
        assert_eq!(usage.context_tokens, Some(p), "{label}: {usage:?}");

        // A command that needs approval: waiting on the tool, alerted, routing refused.
        start::gemini_submit(&server, &pane, "TOOL:mkdir newdir");
        wait_state(&server, &pane, "waiting", Some("permission: Shell"));
        wait_watched(&server, &watch, &pane, "the waiting alert", || {
            alerts_for(&watch, &pane)
                .iter()
                .any(|(s, _)| s == "waiting")
                .then_some(())
        });
        let src = server.new_window(
            "printf 'please review\\n'; exec sleep 600",
            &server.work("proj"),
            &[],
        );
        wait_for(STEP, "the source text", || {
            real::screen(&server, &src)
                .contains("please review")
                .then_some(())
        });
        let refused = server.agentpane(&["route", &src, &pane, "--transform", "full-output"]);
        assert_eq!(refused.code, 1, "{label}: {refused:?}");
        assert!(refused.stderr.contains("waiting"), "{label}: {refused:?}");
        assert!(
            !real::screen(&server, &pane).contains("please review"),
            "{label}: pasted into a dialog"
        );
        press(&server, &pane, "Enter"); // Allow once
        wait_state(&server, &pane, "your-turn", None);
        assert_eq!(last_text(&server, &pane).as_deref(), Some(TOOL_DONE));
        wait_watched(&server, &watch, &pane, "the second your-turn alert", || {
            (alerts_for(&watch, &pane)
                .iter()
                .filter(|(s, _)| s == "your-turn")
                .count()
                == 2)
                .then_some(())
        });
        assert!(
            server.work("proj").join("newdir").is_dir(),
            "{label}: the approved command ran"
        );

        // An API error: attention naming it in words; the failed turn has no answer (the
        // earlier one answered another prompt), and routing from it refuses, saying why.
        start::gemini_submit(&server, &pane, "ERR please");
        let reason = "api error 400: Invalid argument from stand-in";
        let r = wait_state(&server, &pane, "attention", Some(reason));
        assert_eq!(r["source"], "transcript", "{label}: {r:#}");
        let last = server.agentpane(&["last", &pane]);
        assert_eq!(last.code, 1, "{label}: {last:?}");
        assert!(
            last.stderr
                .contains(&format!("last turn failed ({reason})")),
            "{label}: {last:?}"
        );
        // Into an agent (a plain pane is no destination at all).
        let (sink, _) = server.inbox_agent("sink");
        let out = server.agentpane(&["route", &pane, &sink]);
        assert_eq!(out.code, 1, "{label}: {out:?}");
        assert!(
            out.stderr.contains(&format!("last turn failed ({reason})")),
            "{label}: {out:?}"
        );
        assert!(
            !real::screen(&server, &src).contains(TOOL_DONE),
            "{label}: an earlier answer was routed"
        );
        wait_watched(&server, &watch, &pane, "the attention alert", || {
            alerts_for(&watch, &pane)
                .iter()
                .any(|(s, _)| s == "attention")
                .then_some(())
        });

        // Escape mid-stream: your-turn (interrupted), no alert.
        start::gemini_submit(&server, &pane, "SLOW please");
        wait_state(&server, &pane, "working", None);
        real::wait_screen(&server, &pane, STEP, "streamed words", |s| {
            s.contains("word3")
        });
        let before = alerts_for(&watch, &pane).len();
        press(&server, &pane, "Escape");
        wait_state(&server, &pane, "your-turn", Some("interrupted"));
        std::thread::sleep(Duration::from_secs(2));
        assert_eq!(
            alerts_for(&watch, &pane).len(),
            before,
            "{label}: interrupt alerted: {:?}",
            watch.alerts()
        );
        let per_state = |state: &str| {
            alerts_for(&watch, &pane)
                .iter()
                .filter(|(s, _)| s == state)
                .count()
        };
        assert_eq!(per_state("your-turn"), 2, "{label}: {:?}", watch.alerts());
        assert_eq!(per_state("waiting"), 1, "{label}: {:?}", watch.alerts());
        assert_eq!(per_state("attention"), 1, "{label}: {:?}", watch.alerts());

        // A spent quota: Gemini CLI asks "Keep trying / Stop" and logs nothing until it is
        // answered, its title still saying working. The screen says it: attention, alerted.
        // Stop keeps it attention, now from the log: a new record, so a pane no client looks
        // at is alerted once more (a person who pressed Stop is looking, which acknowledges).
        start::gemini_submit(&server, &pane, "ERR429 please");
        real::wait_screen(&server, &pane, STEP, "the quota dialog", |s| {
            s.contains("Keep trying")
        });
        let asking =
            "quota exceeded: Usage limit reached for gemini-2.5-flash (Keep trying or Stop?)";
        let r = wait_state(&server, &pane, "attention", Some(asking));
        assert_eq!(r["source"], "pane", "{label}: {r:#}");
        wait_watched(&server, &watch, &pane, "the quota alert", || {
            (per_state("attention") == 2).then_some(())
        });
        let out = server.agentpane(&["route", &pane, &sink]);
        assert_eq!(out.code, 1, "{label}: {out:?}");
        press(&server, &pane, "Down");
        std::thread::sleep(Duration::from_millis(400));
        press(&server, &pane, "Enter"); // Stop
        let r = wait_state(&server, &pane, "attention", Some("quota exceeded"));
        assert_eq!(r["source"], "transcript", "{label}: {r:#}");
        let last = server.agentpane(&["last", &pane]);
        assert_eq!(last.code, 1, "{label}: {last:?}");
        wait_watched(&server, &watch, &pane, "the failed turn's alert", || {
            (per_state("attention") == 3).then_some(())
        });
        std::thread::sleep(Duration::from_secs(2));
        assert_eq!(per_state("attention"), 3, "{label}: {:?}", watch.alerts());
    }
}

/// `pane`'s row in `panes --json`.
fn row(server: &TmuxServer, pane: &str) -> serde_json::Value {
    let run = server.agentpane(&["panes", "--json"]);
    assert_eq!(run.code, 0, "{run:?}");
    run.json()
        .as_array()
        .into_iter()
        .flatten()
        .find(|r| r["pane_id"] == pane)
        .cloned()
        .unwrap_or(serde_json::Value::Null)
}

/// Gemini CLI retries a plain 429 up to 10 times and shows none of it: the title says working,
/// the loading line `Thinking... (esc to cancel, 34s)` sits under the prompt, the log holds
/// only the prompt. A prompt unanswered 30 s reads `attention` (no attempt, limit or wait:
/// the client gives none), alerted once for the turn; the answer that ends the loop brings
/// the pane back to `your-turn`.
#[test]
#[cfg_attr(skip_real, ignore = "AGENTPANE_SKIP_REAL: real clients not run")]
fn an_unanswered_prompt_under_hidden_retries_is_attention_once_then_recovers() {
    for client in real::clients("gemini") {
        let server = TmuxServer::start();
        let api = gemini::start();
        let home = gemini::home(server.path());
        let watch = Watch::start(&server, &[]);
        let pane = start::gemini(&server, &client, &home, &api, "proj");
        let label = client.label();
        watcher_reads_its_log(&server, &watch, &pane);
        wait_state(&server, &pane, "idle", None);
        let started = std::time::Instant::now();

        // Four 429s, then the answer: waits of about 5, 10, 20 and 30 s.
        let prompt = "RATE429x4 please";
        start::gemini_submit(&server, &pane, prompt);
        wait_state(&server, &pane, "working", None);
        let attention = format!("{label}: attention while retrying");
        let r = wait_watched(&server, &watch, &pane, &attention, || {
            let r = row(&server, &pane);
            (r["state"] == "attention").then_some(r)
        });
        let attention_after = started.elapsed();
        let reason = r["reason"].as_str().unwrap_or_default();
        assert!(
            reason.starts_with("no reply from the API for ") && reason.ends_with(" s — retrying"),
            "{label}: {r:#}"
        );
        assert_eq!(r["source"], "pane", "{label}: {r:#}");
        assert!(r["retry"].is_object(), "{label}: {r:#}");
        assert!(r["retry"]["attempt"].is_null(), "{label}: {r:#}");
        assert!(
            api.requests()
                .iter()
                .filter(|q| gemini::prompt_of(q) == prompt)
                .count()
                >= 3,
            "{label}: attention before the third attempt"
        );
        let out = server.agentpane(&["last", &pane]);
        assert_eq!(out.code, 1, "{label}: no answer yet: {out:?}");

        // One alert for the turn, however many scans and attempts follow.
        wait_watched(&server, &watch, &pane, "the retry alert", || {
            (!alerts_for(&watch, &pane).is_empty()).then_some(())
        });
        std::thread::sleep(Duration::from_secs(6));
        assert_eq!(
            alerts_for(&watch, &pane).len(),
            1,
            "{label}: {:?}",
            watch.alerts()
        );
        assert_eq!(
            alerts_for(&watch, &pane)[0].0,
            "attention",
            "{label}: {:?}\nthe watcher's log:\n{}\nits snapshot:\n{}",
            watch.alerts(),
            std::fs::read_to_string(server.server_dir().join("watch.log")).unwrap_or_default(),
            std::fs::read_to_string(server.server_dir().join("state.json")).unwrap_or_default()
        );

        // The fifth attempt is answered: your-turn, its answer, no retry left.
        let r = wait_state(&server, &pane, "your-turn", None);
        let recovered_after = started.elapsed();
        assert_eq!(
            last_text(&server, &pane).as_deref(),
            Some(answer_to(prompt).as_str()),
            "{label}: {r:#}"
        );
        assert!(row(&server, &pane)["retry"].is_null(), "{label}");
        assert_eq!(
            api.requests()
                .iter()
                .filter(
                    |q| gemini::prompt_of(q) == prompt && q.path.contains(":streamGenerateContent")
                )
                .count(),
            5,
            "{label}"
        );
        eprintln!(
            "{label}: attention after {attention_after:?}, your-turn after {recovered_after:?}"
        );
    }
}

#[test]
#[cfg_attr(skip_real, ignore = "AGENTPANE_SKIP_REAL: real clients not run")]
fn two_gemini_sessions_in_one_folder_each_show_their_own_and_route_byte_exact() {
    for client in real::clients("gemini") {
        let server = TmuxServer::start();
        let api = gemini::start();
        let home = gemini::home(server.path());
        let label = client.label();
        let a_started = std::time::Instant::now();
        let a = start::gemini(&server, &client, &home, &api, "shared");
        // A person opens the second pane a little later. Sessions are told apart by process
        // start times: a first session within 20 s of an earlier process's start, while that
        // one has none, reads `ambiguous` (it may still be starting), and so does one more
        // than 30 s after a lone process's start.
        std::thread::sleep(Duration::from_secs(32).saturating_sub(a_started.elapsed()));
        let b = start::gemini(&server, &client, &home, &api, "shared");
        // B's startup removed A's still-empty log (Gemini CLI deletes other sessions without
        // a prompt); A's next write brings it back. Until then A has none, never B's.
        let (ra, rb) = (resolve(&server, &a), resolve(&server, &b));
        assert_ne!(ra["transcript"], rb["transcript"], "{label}: {ra:#} {rb:#}");

        // A answers; B stays idle with no answer of A's.
        start::gemini_submit(&server, &a, "alpha question");
        let ra = wait_state(&server, &a, "your-turn", None);
        let rb = resolve(&server, &b);
        assert!(ra["transcript"].is_string(), "{label}: {ra:#}");
        assert_ne!(ra["transcript"], rb["transcript"], "{label}: {ra:#} {rb:#}");
        assert_ne!(ra["session_id"], rb["session_id"], "{label}");
        let alpha = answer_to("alpha question");
        assert_eq!(last_text(&server, &a).as_deref(), Some(alpha.as_str()));
        assert_eq!(rb["state"], "idle", "{label}: {rb:#}");
        assert_eq!(last_text(&server, &b), None, "{label}: B shows A's answer");

        // Routing out of A and into B: the answer reaches the API byte-exact.
        let run = server.agentpane(&["route", &a, &b, "--json"]);
        assert_eq!(run.code, 0, "{label}: {run:?}");
        wait_for(STEP, "the routed prompt at the API", || {
            api.requests()
                .iter()
                .any(|r| gemini::prompt_of(r) == alpha)
                .then_some(())
        });
        wait_state(&server, &b, "your-turn", None);
        assert_eq!(
            last_text(&server, &b).as_deref(),
            Some(answer_to(&alpha).as_str())
        );
        assert_eq!(
            last_text(&server, &a).as_deref(),
            Some(alpha.as_str()),
            "{label}"
        );
    }
}

#[test]
#[cfg_attr(skip_real, ignore = "AGENTPANE_SKIP_REAL: real clients not run")]
fn a_pending_command_is_shown_and_answered_from_outside() {
    for client in real::clients("gemini") {
        let server = TmuxServer::start();
        let api = gemini::start();
        let home = gemini::home(server.path());
        let pane = start::gemini(&server, &client, &home, &api, "proj");
        let label = client.label();
        wait_state(&server, &pane, "idle", None);
        let ask = |dir: &str| -> serde_json::Value {
            start::gemini_submit(&server, &pane, &format!("TOOL:mkdir {dir}"));
            wait_state(&server, &pane, "waiting", Some("permission: Shell"));
            let req = row(&server, &pane)["request"].clone();
            assert_eq!(req["summary"], format!("mkdir {dir}"), "{label}: {req:#}");
            req
        };

        // Allow once: the command runs and its result reaches the stand-in's next turn.
        let req = ask("allowed");
        let fp = req["fingerprint"].as_str().unwrap().to_string();
        let run = real::answer(&server, &pane, "allow", &fp);
        assert_eq!(run.code, 0, "{label}: {run:?}");
        wait_state(&server, &pane, "your-turn", None);
        assert_eq!(last_text(&server, &pane).as_deref(), Some(TOOL_DONE));
        assert!(server.work("proj").join("allowed").is_dir(), "{label}");
        let again = real::answer(&server, &pane, "allow", &fp);
        assert_eq!(again.code, 1, "{label}: {again:?}");
        assert_eq!(again.json()["refusal"], "no-dialog", "{label}: {again:?}");

        // Deny: the command never runs; the turn is handed back.
        let req = ask("denied");
        let fp = req["fingerprint"].as_str().unwrap().to_string();
        let run = real::answer(&server, &pane, "deny", &fp);
        assert_eq!(run.code, 0, "{label}: {run:?}");
        wait_for(STEP, "the denied turn to end", || {
            let r = resolve(&server, &pane);
            (r["state"] != "waiting" && r["state"] != "working").then_some(())
        });
        assert!(!server.work("proj").join("denied").exists(), "{label}");
    }
}
