//! The pane resolver end to end: a private tmux server, fake `claude`/`codex`/`gemini`/
//! `opencode` agents, and the `resolve` / `panes` / `last` commands (docs/design.md#resolving-a-pane, #cli-contract).

mod common;

use std::path::Path;

use agentpane::events::AgentKind;
use common::{
    agentpane_without_server, real_client_fixture, wait_until, FakeAgent, TmuxServer, DEADLINE,
};
use serde_json::Value;

const CLAUDE_FIXTURE: &str = "claude/marot-spotter/short.jsonl";
const CODEX_FIXTURE: &str = "codex/kvsankar-agent-history/session-01.jsonl";
/// Recorded from the real clients (`fixtures/real-clients/`).
const GEMINI_FIXTURE: &str = "gemini-0.61.0/session.jsonl";
const OPENCODE_FIXTURE: &str = "opencode-1.18.33/replay.sql";

fn resolve(server: &TmuxServer, pane: &str) -> Value {
    let run = server.agentpane(&["resolve", pane, "--json"]);
    assert_eq!(run.code, 0, "{run:?}");
    run.json()
}

fn under(path: &Value, dir: &Path) -> bool {
    path.as_str().is_some_and(|p| Path::new(p).starts_with(dir))
}

#[test]
fn fake_claude_resolves_through_its_session_record() {
    let server = TmuxServer::start();
    let pane = server.spawn(&FakeAgent::claude().fixture(CLAUDE_FIXTURE));
    let v = resolve(&server, &pane);
    assert_eq!(v["pane_id"], pane.as_str());
    assert_eq!(v["agent"], "claude");
    assert_eq!(v["via"], "session-record");
    let pid = v["agent_pid"].as_u64().unwrap();
    let record = server.claude_dir().join(format!("sessions/{pid}.json"));
    assert!(
        record.is_file(),
        "the agent pid is the one that wrote {record:?}"
    );
    let id = v["session_id"].as_str().unwrap();
    let expected = server
        .claude_dir()
        .join("projects")
        .join(claude_folder(&server.work("proj")))
        .join(format!("{id}.jsonl"));
    assert_eq!(v["transcript"], expected.to_str().unwrap());
    // Replayed real lines classify; the fixture ends with an interrupted turn.
    assert_eq!(v["state"], "your-turn", "{v:#}");
    assert_eq!(v["source"], "transcript");
}

fn claude_folder(cwd: &Path) -> String {
    cwd.to_str()
        .unwrap()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

#[test]
fn fake_codex_resolves_through_the_rollout_it_holds_open() {
    let server = TmuxServer::start();
    let pane = server.spawn(&FakeAgent::codex().fixture(CODEX_FIXTURE));
    let v = resolve(&server, &pane);
    assert_eq!(v["agent"], "codex");
    assert_eq!(v["via"], "open-file");
    assert!(
        under(&v["transcript"], &server.codex_dir().join("sessions")),
        "{v:#}"
    );
    let name = v["transcript"].as_str().unwrap();
    assert!(name.ends_with(&format!("{}.jsonl", v["session_id"].as_str().unwrap())));
}

#[test]
fn panes_lists_every_agent_pane_and_only_those() {
    let server = TmuxServer::start();
    let claude = server.spawn(&FakeAgent::claude().fixture(CLAUDE_FIXTURE));
    let codex = server.spawn(&FakeAgent::codex().fixture(CODEX_FIXTURE).in_dir("other"));
    let run = server.agentpane(&["panes", "--json"]);
    assert_eq!(run.code, 0, "{run:?}");
    let rows = run.json();
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 2, "the plain shell pane is left out: {rows:#?}");
    for key in [
        "pane_id",
        "target",
        "agent",
        "agent_pid",
        "transcript",
        "via",
        "state",
        "reason",
        "source",
        "at",
    ] {
        assert!(rows.iter().all(|r| r.get(key).is_some()), "missing {key}");
    }
    let by_pane = |p: &str| rows.iter().find(|r| r["pane_id"] == p).unwrap().clone();
    assert_eq!(by_pane(&claude)["agent"], "claude");
    assert_eq!(by_pane(&codex)["agent"], "codex");
    assert!(rows.iter().all(|r| r["source"] == "transcript"));
    let states = [
        "working",
        "waiting",
        "your-turn",
        "stalled",
        "attention",
        "idle",
    ];
    assert!(rows
        .iter()
        .all(|r| states.contains(&r["state"].as_str().unwrap())));

    let table = server.agentpane(&["panes"]);
    assert_eq!(table.code, 0);
    let lines: Vec<&str> = table.stdout.lines().collect();
    assert!(
        lines[0].starts_with("TARGET") && lines[0].contains("CWD"),
        "{table:?}"
    );
    assert_eq!(lines.len(), 3, "{table:?}");
    assert!(table.stdout.contains("claude") && table.stdout.contains("codex"));
}

#[test]
fn a_plain_shell_pane_resolves_to_no_agent() {
    let server = TmuxServer::start();
    let v = resolve(&server, "main:0.0");
    assert_eq!(v["agent"], Value::Null);
    assert_eq!(v["agent_pid"], Value::Null);
    assert_eq!(v["transcript"], Value::Null);
    assert_eq!(v["via"], "none");
    assert_eq!(v["state"], "none");
    let human = server.agentpane(&["resolve", "main:0.0"]);
    assert_eq!(human.code, 0);
    assert!(human.stdout.contains("no agent"), "{human:?}");
}

#[test]
fn no_agent_panes_is_not_an_error() {
    let server = TmuxServer::start();
    let run = server.agentpane(&["panes"]);
    assert_eq!((run.code, run.stdout.as_str()), (0, ""), "{run:?}");
    assert!(run.stderr.contains("no pane"), "{run:?}");
    let json = server.agentpane(&["panes", "--json"]);
    assert_eq!(json.code, 0);
    assert_eq!(json.json(), serde_json::json!([]));
    assert_eq!(
        server.agentpane(&["resolve", "--json"]).json(),
        serde_json::json!([])
    );
}

#[test]
fn no_tmux_server_exits_3_with_one_line() {
    for args in [
        &["panes"][..],
        &["panes", "--json"],
        &["resolve"],
        &["resolve", "%1"],
    ] {
        let run = agentpane_without_server(args);
        assert_eq!(run.code, 3, "{args:?}: {run:?}");
        assert_eq!(run.stdout, "");
        assert_eq!(run.stderr.trim().lines().count(), 1, "{run:?}");
        assert!(run.stderr.contains("no tmux server"), "{run:?}");
    }
}

#[test]
fn an_unknown_target_is_a_clear_error() {
    let server = TmuxServer::start();
    let run = server.agentpane(&["resolve", "nosuch:9"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("nosuch:9"), "{run:?}");
}

#[test]
fn an_agent_started_by_a_shell_wrapper_is_found_below_it() {
    let server = TmuxServer::start();
    let claude = server.bin().join("claude");
    let cmd = format!("sh -c '{}; exit 0'", claude.display());
    let env = FakeAgent::claude().env;
    let pane = server.new_window(&cmd, &server.work("proj"), &env);
    server.wait_for_agent(&pane);
    let v = resolve(&server, &pane);
    assert_eq!(v["agent"], "claude");
    assert_ne!(
        v["agent_pid"].as_u64().unwrap(),
        u64::from(server.pane_pid(&pane))
    );
    assert_eq!(v["via"], "session-record");
}

#[test]
fn a_corrupt_session_record_falls_back_to_the_cwd_transcript() {
    let server = TmuxServer::start();
    let pane = server.spawn(&FakeAgent::claude().fixture(CLAUDE_FIXTURE));
    let before = resolve(&server, &pane);
    let pid = before["agent_pid"].as_u64().unwrap();
    let record = server.claude_dir().join(format!("sessions/{pid}.json"));
    std::fs::write(&record, b"{\"pid\": 1, \"sessionId\": ").unwrap();
    let after = resolve(&server, &pane);
    assert_eq!(after["via"], "cwd", "{after:#}");
    assert_eq!(after["transcript"], before["transcript"]);
    let steps = after["steps"].to_string();
    assert!(steps.contains("not a JSON object"), "{steps}");
}

#[test]
fn a_held_open_transcript_is_found_without_a_record() {
    let server = TmuxServer::start();
    let pane = server.spawn(&FakeAgent::claude().hold());
    let before = resolve(&server, &pane);
    let pid = before["agent_pid"].as_u64().unwrap();
    std::fs::remove_file(server.claude_dir().join(format!("sessions/{pid}.json"))).unwrap();
    let after = resolve(&server, &pane);
    assert_eq!(after["via"], "open-file", "{after:#}");
    assert_eq!(after["transcript"], before["transcript"]);
}

#[test]
fn a_record_left_by_an_earlier_process_with_the_same_pid_is_ignored() {
    let server = TmuxServer::start();
    let pane = server.spawn(&FakeAgent::claude().fixture(CLAUDE_FIXTURE));
    let own = resolve(&server, &pane);
    let pid = own["agent_pid"].as_u64().unwrap();
    // An old session of an earlier process that had this PID, an hour ago.
    let old_id = "00000000-0000-4000-8000-000000000001";
    let folder = server
        .claude_dir()
        .join("projects")
        .join(claude_folder(&server.work("proj")));
    std::fs::write(
        folder.join(format!("{old_id}.jsonl")),
        b"{\"type\":\"user\",\"cwd\":\"/x\"}\n",
    )
    .unwrap();
    let hour_ago_ms = (chrono::Utc::now().timestamp() - 3600) * 1000;
    let stale = serde_json::json!({"pid": pid, "sessionId": old_id, "startedAt": hour_ago_ms,
        "procStart": "1"});
    std::fs::write(
        server.claude_dir().join(format!("sessions/{pid}.json")),
        stale.to_string(),
    )
    .unwrap();
    let v = resolve(&server, &pane);
    assert_eq!(v["transcript"], own["transcript"], "{v:#}");
    assert_eq!(v["via"], "cwd");
    assert!(v["steps"].to_string().contains("earlier process"), "{v:#}");
}

#[test]
fn the_fake_agent_writes_lines_on_demand_and_cleans_up() {
    let server = TmuxServer::start();
    let pane = server.spawn(&FakeAgent::claude().fixture(CLAUDE_FIXTURE).start_lines(0));
    let v = resolve(&server, &pane);
    let transcript = v["transcript"].as_str().unwrap().to_string();
    let lines = || {
        std::fs::read_to_string(&transcript)
            .map(|t| t.lines().count())
            .unwrap_or(0)
    };
    assert_eq!(lines(), 0);
    server.send_line(&pane, "step 3");
    wait_until(DEADLINE, "3 lines in the transcript", || lines() == 3);
    server.send_line(&pane, "all");
    wait_until(DEADLINE, "all 15 fixture lines", || lines() == 15);
    let pid = v["agent_pid"].as_u64().unwrap();
    let record = server.claude_dir().join(format!("sessions/{pid}.json"));
    assert!(record.is_file());
    server.send_line(&pane, "quit");
    wait_until(DEADLINE, "the record removed on clean exit", || {
        !record.exists()
    });
}

#[test]
fn resolve_without_a_pane_shows_every_agent_chain() {
    let server = TmuxServer::start();
    server.spawn(&FakeAgent::claude());
    server.spawn(&FakeAgent::codex());
    let run = server.agentpane(&["resolve"]);
    assert_eq!(run.code, 0, "{run:?}");
    for link in [
        "agent",
        "config root",
        "session record",
        "transcript",
        "state",
    ] {
        assert!(run.stdout.contains(link), "missing {link}: {}", run.stdout);
    }
    assert_eq!(
        server
            .agentpane(&["resolve", "--json"])
            .json()
            .as_array()
            .unwrap()
            .len(),
        2
    );
}

#[test]
fn any_tmux_target_names_the_same_pane() {
    let server = TmuxServer::start();
    let pane = server.spawn(&FakeAgent::codex());
    let window = server.tmux(&["display-message", "-p", "-t", &pane, "#{window_index}"]);
    let by_id = resolve(&server, &pane);
    for target in [format!("main:{window}"), format!("=main:{window}.0")] {
        let v = resolve(&server, &target);
        assert_eq!(v["pane_id"], pane.as_str(), "{target}");
        assert_eq!(v["transcript"], by_id["transcript"], "{target}");
    }
}

#[test]
fn a_paced_fake_agent_writes_its_fixture_over_time() {
    let server = TmuxServer::start();
    let agent = FakeAgent::claude()
        .fixture(CLAUDE_FIXTURE)
        .env("AGENTPANE_FAKE_PACE_MS", "20");
    let exe = server.bin().join("claude");
    let pane = server.split(
        "main:0",
        exe.to_str().unwrap(),
        &server.work("proj"),
        &agent.env,
    );
    server.wait_for_agent(&pane);
    let transcript = resolve(&server, &pane)["transcript"]
        .as_str()
        .unwrap()
        .to_string();
    wait_until(DEADLINE, "the whole fixture, paced", || {
        std::fs::read_to_string(&transcript).is_ok_and(|t| t.lines().count() == 15)
    });
    let text = std::fs::read_to_string(&transcript).unwrap();
    let first: Value = serde_json::from_str(text.lines().nth(1).unwrap()).unwrap();
    assert_eq!(first["cwd"], server.work("proj").to_str().unwrap());
    let id = resolve(&server, &pane)["session_id"].clone();
    assert_eq!(first["sessionId"], id);
}

#[test]
fn panes_work_without_a_utf8_locale() {
    // cron, systemd units and `env -i` have no LANG: tmux must still keep our separators.
    let server = TmuxServer::start();
    let pane = server.spawn(&FakeAgent::claude().fixture(CLAUDE_FIXTURE));
    let mut cmd = common::agentpane_with_env(&server.env());
    cmd.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default());
    for (k, v) in server.env() {
        cmd.env(k, v);
    }
    let out = cmd
        .args(["-L", &server.name, "panes", "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(rows[0]["pane_id"], pane.as_str(), "{rows}");
    assert_eq!(rows[0]["agent"], "claude");
}

/// The `panes --json` row of `pane`.
fn pane_row(server: &TmuxServer, pane: &str) -> Value {
    let run = server.agentpane(&["panes", "--json"]);
    assert_eq!(run.code, 0, "{run:?}");
    let rows = run.json();
    rows.as_array()
        .and_then(|r| r.iter().find(|r| r["pane_id"] == pane).cloned())
        .unwrap_or_else(|| panic!("{pane} is not listed: {rows:#}"))
}

fn wait_state(server: &TmuxServer, pane: &str, state: &str, reason: Option<&str>) {
    let end = std::time::Instant::now() + DEADLINE;
    loop {
        let row = pane_row(server, pane);
        if row["state"] == state && reason.map_or(true, |r| row["reason"] == r) {
            return;
        }
        assert!(
            std::time::Instant::now() < end,
            "waiting for {pane} to be {state} ({reason:?}): {row:#}"
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}

fn last_answer(server: &TmuxServer, pane: &str) -> String {
    let run = server.agentpane(&["last", pane]);
    assert_eq!(
        run.code,
        0,
        "{run:?}\n{}",
        server.agentpane(&["resolve", pane, "--json"]).stdout
    );
    run.stdout.trim_end().to_string()
}

/// The `content` of line `n` (from 1) of the Gemini recording.
fn gemini_reply(n: usize) -> String {
    let text = std::fs::read_to_string(real_client_fixture(GEMINI_FIXTURE)).unwrap();
    let v: Value = serde_json::from_str(text.lines().nth(n - 1).unwrap()).unwrap();
    assert_eq!(v["type"], "gemini");
    v["content"].as_str().unwrap().trim_end().to_string()
}

/// The text of a part opencode recorded (its final version, from the recorded dump).
fn opencode_text(part: &str) -> String {
    let db = rusqlite::Connection::open_in_memory().unwrap();
    let dump = real_client_fixture("opencode-1.18.33/session.sql");
    db.execute_batch(&std::fs::read_to_string(dump).unwrap())
        .unwrap();
    db.query_row(
        "SELECT json_extract(data, '$.text') FROM part WHERE id = ?1",
        [part],
        |r| r.get::<_, String>(0),
    )
    .unwrap()
    .trim_end()
    .to_string()
}

#[test]
fn fake_gemini_and_opencode_resolve_to_their_own_logs_with_state_and_answer() {
    let server = TmuxServer::start();
    // Gemini: its metadata line, then the startup history, a prompt, its answer (5 lines).
    let gemini = server.spawn(
        &FakeAgent::gemini()
            .real_client_fixture(GEMINI_FIXTURE)
            .start_lines(5)
            .in_dir("gem"),
    );
    // opencode: the first turn, answered (4 steps).
    let opencode = server.spawn(
        &FakeAgent::opencode()
            .real_client_fixture(OPENCODE_FIXTURE)
            .start_lines(4)
            .in_dir("oc"),
    );

    let g = resolve(&server, &gemini);
    assert_eq!(g["agent"], "gemini", "{g:#}");
    let chats = server.home().join(".gemini/tmp/gem/chats");
    assert!(under(&g["transcript"], &chats), "{g:#}");
    assert_eq!(g["via"], "cwd");
    let name = g["transcript"].as_str().unwrap();
    let id = g["session_id"].as_str().unwrap();
    assert!(name.ends_with(&format!("-{}.jsonl", &id[..8])), "{g:#}");

    let o = resolve(&server, &opencode);
    assert_eq!(o["agent"], "opencode", "{o:#}");
    let db = server.home().join(".local/share/opencode/opencode.db");
    let session = o["session_id"].as_str().unwrap();
    assert_eq!(
        o["transcript"],
        format!("{}#{session}", db.display()),
        "{o:#}"
    );
    let steps = o["steps"].to_string();
    assert!(steps.contains("held open"), "{o:#}");
    let pid = o["agent_pid"].as_u64().unwrap();
    let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap();
    assert_eq!(comm.trim(), "opencode");

    // Each finished its first turn: your-turn, and its own recorded answer.
    wait_state(&server, &gemini, "your-turn", None);
    wait_state(&server, &opencode, "your-turn", None);
    assert_eq!(last_answer(&server, &gemini), gemini_reply(5));
    let first = opencode_text("prt_233ba1f080012mb7vwF5pA7UrT");
    assert!(first.contains("```sh"), "{first}");
    assert_eq!(last_answer(&server, &opencode), first);

    // The next turn: a tool call out, then answered.
    server.send_line(&gemini, "step 3");
    wait_state(&server, &gemini, "working", Some("tool: pending"));
    server.send_line(&opencode, "step 5");
    wait_state(&server, &opencode, "working", Some("tool: bash"));
    // Up to the answer after the tool (line 14 or the bookkeeping line after it): the
    // recording goes on to a failed turn and an interrupted one, which have no answer.
    server.send_line(&gemini, "step 6");
    server.send_line(&opencode, "all");
    wait_state(&server, &gemini, "your-turn", None);
    wait_state(&server, &opencode, "your-turn", None);
    assert_eq!(last_answer(&server, &gemini), gemini_reply(14));
    assert_eq!(
        last_answer(&server, &opencode),
        opencode_text("prt_233ba65880010eCbltN9WRpUrm")
    );
    assert_eq!(last_answer(&server, &opencode), "Tool done.");
}

/// Takes away the record agentpane's pi extension wrote for the pi in `pane` (a pi without
/// the extension), once it is there.
fn without_pi_record(server: &TmuxServer, pane: &str) {
    let pid = server.agent_pid(pane);
    let record = server.state_dir().join(format!("pi/{pid}.json"));
    wait_until(DEADLINE, "the fake pi's record", || record.is_file());
    std::fs::remove_file(&record).unwrap();
}

/// When the log named `path` was begun (its name), Unix milliseconds.
fn pi_log_begun(path: &Value) -> i64 {
    agentpane::agents::pi::locate::created_ms(Path::new(path.as_str().expect("a log")))
        .expect("a pi log name")
}

#[test]
fn without_its_extension_a_pi_keeps_its_log_when_a_second_starts_in_the_folder() {
    let server = TmuxServer::start();
    let a = server.spawn(&FakeAgent::idle(AgentKind::Pi));
    without_pi_record(&server, &a);
    let ra = resolve(&server, &a);
    assert_eq!(ra["via"], "cwd", "{ra:#}");
    let log_a = ra["transcript"].clone();
    let answer = last_answer(&server, &a);
    assert!(!answer.is_empty());
    // The first pane still reads its own log, and its answer.
    let keeps = |a: &str| {
        let ra = resolve(&server, a);
        assert_eq!(
            (&ra["via"], &ra["transcript"]),
            (&"cwd".into(), &log_a),
            "{ra:#}"
        );
        assert_eq!(last_answer(&server, a), answer);
    };

    // The second pi starts surely after a's log began (a process start is known to the
    // second, up to a second early), and writes nothing until its first answer.
    let begun = pi_log_begun(&log_a);
    wait_until(DEADLINE, "4 s past the first log's beginning", || {
        chrono::Utc::now().timestamp_millis() > begun + 4000
    });
    let b = server.spawn_drawn(&FakeAgent::idle(AgentKind::Pi).env("AGENTPANE_FAKE_LATE", "1"));
    let rb = resolve(&server, &b);
    assert_eq!(rb["agent"], "pi", "{rb:#}");
    assert!(rb["transcript"].is_null(), "{rb:#}");
    keeps(&a);

    // The second answers: the log it begins is its own, and the first keeps its own.
    server.send_line(&b, "begin");
    without_pi_record(&server, &b);
    wait_until(DEADLINE, "the second pi's log", || {
        resolve(&server, &b)["transcript"].is_string()
    });
    let rb = resolve(&server, &b);
    assert_eq!(rb["via"], "cwd", "{rb:#}");
    assert_ne!(rb["transcript"], log_a, "{rb:#}");
    assert!(pi_log_begun(&rb["transcript"]) > begun, "{rb:#}");
    keeps(&a);
}
