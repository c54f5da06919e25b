//! The released opencode (pinned in tests/real/clients.txt) against the OpenAI-compatible
//! stand-in (tests/real/openai_chat.rs), in a private tmux server with the watcher running:
//! what `resolve`, `last`, `route` and the alerts say at each step of real turns.

mod common;
mod real;

use std::path::Path;
use std::time::Duration;

use agentpane::events::AgentKind;
use serde_json::Value;

use common::{FakeAgent, TmuxServer, Watch};
use real::http::MockServer;
use real::openai_chat::{self, ANSWER};
use real::{
    alerts_now, press, start, type_prompt, wait_alerts, wait_for, wait_screen, Client, STEP,
};

/// A Claude transcript whose last answer routes into opencode.
const CLAUDE_WITH_ANSWER: &str =
    "claude/d-kimuson-claude-code-viewer/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl";

/// A tmux server with the stand-in and opencode's configuration pointing at it.
struct World {
    server: TmuxServer,
    api: MockServer,
}

impl World {
    fn new() -> World {
        let api = openai_chat::start();
        let server = TmuxServer::start();
        start::opencode_config(&server, &api.url());
        World { server, api }
    }

    /// Starts `client` in `work/<dir>` and waits for its input box.
    fn opencode(&self, client: &Client, dir: &str) -> String {
        start::opencode(&self.server, client, dir)
    }

    fn db(&self) -> std::path::PathBuf {
        self.server
            .path()
            .join("opencode/data/opencode/opencode.db")
    }

    fn resolve(&self, pane: &str) -> Value {
        real::resolve(&self.server, pane)
    }

    /// Waits until `pane` reads `state` with `reason` (`None`: no reason); the resolution.
    fn wait_state(&self, pane: &str, state: &str, reason: Option<&str>) -> Value {
        real::wait_state(&self.server, pane, state, reason)
    }

    /// The newest messages in opencode's database, for failure messages.
    fn recent_messages(&self) -> String {
        let Ok(conn) = rusqlite::Connection::open_with_flags(
            self.db(),
            rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
        ) else {
            return "no database".into();
        };
        let Ok(mut stmt) = conn.prepare(
            "SELECT id, session_id, time_created, time_updated, data FROM message \
             ORDER BY time_created DESC LIMIT 6",
        ) else {
            return "no messages".into();
        };
        stmt.query_map([], |r| {
            Ok(format!(
                "{} {} {} {} {}",
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, i64>(2)?,
                r.get::<_, i64>(3)?,
                r.get::<_, String>(4)?
            ))
        })
        .map(|rows| rows.flatten().collect::<Vec<_>>().join("\n"))
        .unwrap_or_default()
    }

    /// The newest user text the API received.
    fn last_prompt(&self) -> String {
        openai_chat::last_prompt(&self.api)
    }
}

/// The titles the stand-in gives sessions: `Title <first word of the first prompt>`.
fn session_titled(db: &Path, title: &str) -> Option<String> {
    let conn =
        rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .ok()?;
    conn.query_row("SELECT id FROM session WHERE title = ?1", [title], |r| {
        r.get(0)
    })
    .ok()
}

#[test]
#[cfg_attr(skip_real, ignore = "AGENTPANE_SKIP_REAL: real clients not run")]
fn opencode_turns_read_right_alert_once_and_route_in_and_out() {
    for client in real::clients("opencode") {
        let label = client.label();
        let w = World::new();
        // A Claude pane with an answer to route in, started before the watcher so its
        // finished turn is history, not news.
        let claude = w
            .server
            .spawn(&FakeAgent::claude().fixture(CLAUDE_WITH_ANSWER));
        let watch = Watch::start(&w.server, &[]);
        let pane = w.opencode(&client, "proj");

        // A fresh session: opencode has no session row before the first prompt.
        let fresh = w.wait_state(&pane, "idle", None);
        assert_eq!(fresh["agent"], "opencode", "{label}: {fresh:#}");
        assert!(fresh["transcript"].is_null(), "{label}: {fresh:#}");

        // An answer: your-turn, `last` is the answer byte for byte, one alert.
        type_prompt(&w.server, &pane, "hello there");
        let done = w.wait_state(&pane, "your-turn", None);
        let transcript = done["transcript"].as_str().unwrap().to_string();
        // The stand-in's usage as opencode stored it: input without the cached tokens,
        // summed back; the context as its sidebar counts it; the cost it priced (zero).
        let usage = real::usage::of_log(AgentKind::Opencode, &transcript);
        assert_eq!(usage.model.as_deref(), Some(openai_chat::MODEL), "{label}");
        let (p, o) = (openai_chat::PROMPT_TOKENS, openai_chat::COMPLETION_TOKENS);
        assert_eq!(usage.session_input, Some(p), "{label}: {usage:?}");
        assert_eq!(usage.session_output, Some(o), "{label}: {usage:?}");
        assert_eq!(usage.context_tokens, Some(p + o), "{label}: {usage:?}");
        assert_eq!(usage.cost_usd, Some(0.0), "{label}: {usage:?}");
        assert!(
            transcript.contains("/opencode.db#ses_"),
            "{label}: {done:#}"
        );
        assert_eq!(done["via"], "cwd", "{label}");
        let last = w.server.agentpane(&["last", &pane, "--json"]);
        assert_eq!(last.code, 0, "{label}: {last:?}");
        assert_eq!(last.json()["text"], ANSWER, "{label}");
        assert_eq!(last.json()["source"], "transcript", "{label}");
        let alerts = wait_alerts(&watch, &pane, 1);
        assert_eq!(alerts, vec![("your-turn".into(), String::new())], "{label}");

        // Routing out: the answer reaches another agent byte for byte.
        let sink = real::scenario::routes_out(&w.server, &pane, ANSWER, &label);

        // A bash call waiting for permission: waiting, the tool as reason, alerted; nothing
        // may be routed into the dialog.
        type_prompt(&w.server, &pane, "RUNBASH please");
        wait_screen(&w.server, &pane, STEP, "the permission dialog", |s| {
            s.contains("Permission required")
        });
        w.wait_state(&pane, "waiting", Some("permission: bash"));
        let alerts = wait_alerts(&watch, &pane, 2);
        assert_eq!(alerts[1], ("waiting".into(), "permission: bash".into()));
        let refused = w.server.agentpane(&["route", &claude, &pane]);
        assert_eq!(refused.code, 1, "{label}: {refused:?}");
        assert!(refused.stderr.contains("waiting") || refused.stdout.contains("waiting"));
        press(&w.server, &pane, "Enter");
        let approved = w.wait_state(&pane, "your-turn", None);
        let last = w.server.agentpane(&["last", &pane, "--json"]);
        assert_eq!(
            last.code,
            0,
            "{label}: {last:?} {approved:#}\n{}\n{}",
            real::screen(&w.server, &pane),
            w.recent_messages()
        );
        assert_eq!(last.json()["text"], "Tool done.", "{label}");
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
            "{label}"
        );
        real::scenario::nothing_to_hand_on(&w.server, &pane, &sink, &label);

        // A 429 that opencode keeps retrying (only its footer says so): attention naming the
        // error, alerted; Escape during the retry wait ends the turn as interrupted.
        type_prompt(&w.server, &pane, "QUOTA please");
        let want = "quota exceeded for stand-in — retrying (attempt ";
        let row = wait_for(STEP, &format!("{label}: attention, {want}…"), || {
            let r = w.resolve(&pane);
            (r["state"] == "attention" && r["reason"].as_str().is_some_and(|g| g.starts_with(want)))
                .then_some(r)
        });
        // Where the retries stand, for scripts: the attempt and the next try's time.
        assert!(
            row["retry"]["attempt"].as_u64().is_some(),
            "{label}: {row:#}"
        );
        assert!(row["retry"]["next_at"].is_string(), "{label}: {row:#}");
        let alerts = wait_alerts(&watch, &pane, 5);
        assert_eq!(alerts[4].0, "attention", "{label}: {alerts:?}");
        // One alert for the turn, not one per attempt.
        std::thread::sleep(Duration::from_secs(8));
        assert_eq!(alerts_now(&watch, &pane).len(), 5, "{label}");
        press(&w.server, &pane, "Escape");
        std::thread::sleep(Duration::from_millis(300));
        press(&w.server, &pane, "Escape");
        w.wait_state(&pane, "your-turn", Some("interrupted"));

        // Escape mid-stream: your-turn (interrupted), never alerted.
        type_prompt(&w.server, &pane, "SLOW please");
        wait_screen(&w.server, &pane, STEP, "the slow reply streaming", |s| {
            s.contains("word5 ")
        });
        w.wait_state(&pane, "working", None);
        press(&w.server, &pane, "Escape");
        std::thread::sleep(Duration::from_millis(300));
        press(&w.server, &pane, "Escape");
        w.wait_state(&pane, "your-turn", Some("interrupted"));

        // Routing in: a Claude answer pasted into opencode's box reaches the API intact
        // (opencode appends one space after a collapsed multi-line paste).
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
        assert!(
            got == source || got == format!("{source} "),
            "{label}: the API got {got:?}, routed {source:?}"
        );
        w.wait_state(&pane, "your-turn", None);

        // Alerts: one per turn that needs the human, the routed turn's answer last; never
        // the interrupt.
        let alerts = wait_alerts(&watch, &pane, 6);
        assert_eq!(alerts.len(), 6, "{label}: {alerts:?}");
        assert_eq!(alerts[5], ("your-turn".into(), String::new()), "{label}");
        assert!(
            !alerts.iter().any(|a| a.1 == "interrupted"),
            "{label}: {alerts:?}"
        );
        assert_eq!(watch.stop(), 0);
    }
}

#[test]
#[cfg_attr(skip_real, ignore = "AGENTPANE_SKIP_REAL: real clients not run")]
fn two_opencode_sessions_in_one_folder_never_show_a_neighbours() {
    for client in real::clients("opencode") {
        let label = client.label();
        let w = World::new();
        let a = w.opencode(&client, "shared");
        type_prompt(&w.server, &a, "ALPHA hello");
        let ra = w.wait_state(&a, "your-turn", None);
        let alpha = wait_for(STEP, "the first session's title", || {
            session_titled(&w.db(), "Title ALPHA")
        });
        assert_eq!(ra["session_id"], alpha.as_str(), "{label}: {ra:#}");

        // A second opencode in the same folder, before its first prompt: no session of its
        // own yet, and the first pane keeps its own.
        let b = w.opencode(&client, "shared");
        let rb = w.resolve(&b);
        assert!(rb["session_id"].is_null(), "{label}: {rb:#}");
        assert_eq!(w.resolve(&a)["session_id"], alpha.as_str(), "{label}");

        type_prompt(&w.server, &b, "BRAVO hello");
        let bravo = wait_for(STEP, "the second session's title", || {
            session_titled(&w.db(), "Title BRAVO")
        });
        wait_screen(&w.server, &b, STEP, "the second answer", |s| {
            s.contains("Done.")
        });
        // Each pane shows its own session, never the neighbour's: the shared text log ties
        // each process to its run, and each run to the sessions it created.
        let own_session = |pane: &str, own: &str, other: &str| {
            wait_for(STEP, &format!("{label}: {pane} to show {own}"), || {
                let r = w.resolve(pane);
                assert_ne!(
                    r["session_id"].as_str(),
                    Some(other),
                    "{label}: {pane} {r:#}"
                );
                let panes = w.server.agentpane(&["panes", "--json"]).json();
                let row = panes
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|p| p["pane_id"] == pane)
                    .cloned()
                    .unwrap();
                assert_ne!(row["session_id"].as_str(), Some(other), "{label}: {row:#}");
                (r["session_id"] == own).then_some(r)
            })
        };
        own_session(&a, &alpha, &bravo);
        let rb = own_session(&b, &bravo, &alpha);
        assert_eq!(rb["via"], "cwd", "{label}: {rb:#}");
        // opencode draws the answer before it commits the message's end: the state follows.
        w.wait_state(&b, "your-turn", None);
        assert_eq!(w.resolve(&b)["session_id"], bravo.as_str(), "{label}");

        // A 400 in the second pane reads attention there; the first keeps its answer.
        type_prompt(&w.server, &b, "BADREQ now");
        w.wait_state(
            &b,
            "attention",
            Some("api error 400: model stand-in does not exist"),
        );
        let ra = own_session(&a, &alpha, &bravo);
        assert_eq!(ra["state"], "your-turn", "{label}: {ra:#}");
        own_session(&b, &bravo, &alpha);
    }
}

/// Issue 18: a real opencode idle after an answer kept the watcher at ~10 % of a core,
/// ~30 wakes a second: its own reads of the database looked like news to its file watch.
/// Now the watcher (default 5 s safety poll) beside it uses under 5 ms of CPU a second,
/// itself and its tmux clients. `AGENTPANE_COST_SECS` (default 10) sets the window, and the
/// measurement is printed (scripts/watcher-kinds.sh runs this with `--nocapture`).
#[test]
#[cfg_attr(skip_real, ignore = "AGENTPANE_SKIP_REAL: real clients not run")]
fn an_idle_opencode_leaves_the_watcher_asleep() {
    use common::cost::{counters, cpu_ms, settle, start_watcher};
    let secs: u64 = std::env::var("AGENTPANE_COST_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10);
    for client in real::clients("opencode") {
        let label = client.label();
        let w = World::new();
        let pane = w.opencode(&client, "proj");
        type_prompt(&w.server, &pane, "hello there");
        w.wait_state(&pane, "your-turn", None);
        let watch = start_watcher(&w.server, &[]);
        settle(watch.0.id());
        let (cpu0, c0) = (cpu_ms(watch.0.id()), counters(&w.server, &watch));
        std::thread::sleep(Duration::from_secs(secs));
        let (cpu1, c1) = (cpu_ms(watch.0.id()), counters(&w.server, &watch));
        let used = cpu1 - cpu0;
        println!(
            "real {label} idle after an answer, watcher over {secs} s: {used} ms of CPU = {:.3} % \
             of a core, {} wakes, {} tmux list-panes, {} transcript reads",
            used as f64 / 10.0 / secs as f64,
            c1.wakes - c0.wakes,
            c1.lists - c0.lists,
            c1.reads - c0.reads
        );
        assert!(
            used < 5 * secs,
            "{label}: the watcher used {used} ms of CPU in {secs} s beside an idle opencode"
        );
        assert_eq!(w.resolve(&pane)["state"], "your-turn", "{label}");
    }
}

#[test]
#[cfg_attr(skip_real, ignore = "AGENTPANE_SKIP_REAL: real clients not run")]
fn a_pending_command_is_shown_and_answered_from_outside() {
    for client in real::clients("opencode") {
        let label = client.label();
        let w = World::new();
        let pane = w.opencode(&client, "proj");
        let ask = || -> Value {
            type_prompt(&w.server, &pane, "RUNBASH please");
            wait_screen(&w.server, &pane, STEP, "the permission dialog", |s| {
                s.contains("Permission required")
            });
            w.wait_state(&pane, "waiting", Some("permission: bash"));
            // The dialog's first frame names the kind before the command: asked nothing yet.
            let row = real::wait_row(&w.server, &pane, "the request", |r| !r["request"].is_null());
            let req = row["request"].clone();
            assert_eq!(req["summary"], "$ echo hello", "{label}: {req:#}");
            req
        };

        // The person moved the selection to "Allow always": allow once moves back to
        // "Allow once" first, so the next call asks again.
        let req = ask();
        press(&w.server, &pane, "Right");
        std::thread::sleep(Duration::from_millis(300));
        let fp = req["fingerprint"].as_str().unwrap().to_string();
        let run = real::answer(&w.server, &pane, "allow", &fp);
        assert_eq!(run.code, 0, "{label}: {run:?}");
        assert_eq!(
            run.json()["keys"],
            serde_json::json!(["Left", "Enter"]),
            "{label}: {run:?}"
        );
        w.wait_state(&pane, "your-turn", None);
        let last = w.server.agentpane(&["last", &pane, "--json"]);
        assert_eq!(last.json()["text"], "Tool done.", "{label}: {last:?}");

        // Asked again (allowed once only); denied: Escape hands the turn back.
        let req = ask();
        let fp = req["fingerprint"].as_str().unwrap().to_string();
        let run = real::answer(&w.server, &pane, "deny", &fp);
        assert_eq!(run.code, 0, "{label}: {run:?}");
        w.wait_state(&pane, "your-turn", Some("interrupted"));
        let again = real::answer(&w.server, &pane, "deny", &fp);
        assert_eq!(again.code, 1, "{label}: {again:?}");

        // Allow always: opencode asks to confirm ("Always allow … Confirm  Cancel"); the last
        // Enter goes in once that is up. The call runs, and the same command asked again runs
        // without a dialog.
        let req = ask();
        let fp = req["fingerprint"].as_str().unwrap().to_string();
        let before = w.api.requests().len();
        let run = real::answer_always(&w.server, &pane, &fp);
        assert_eq!(run.code, 0, "{label}: {run:?}");
        assert_eq!(
            run.json()["keys"],
            serde_json::json!(["Right", "Enter", "Enter"]),
            "{label}: {run:?}"
        );
        w.wait_state(&pane, "your-turn", None);
        openai_chat::always_kept(
            &w.server,
            &w.api,
            &pane,
            before,
            "RUNBASH please",
            "Permission required",
        );
        w.wait_state(&pane, "your-turn", None);
    }
}
