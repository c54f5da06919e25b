//! Routing end to end on a private tmux server (`tmux -L agentpane-test-…`, killed on drop):
//! a plain pane's screen routed into a fake agent that records what it receives, injection
//! neutralised, Enter submitted once; self-routes refused; the queue surviving a restart,
//! delivered exactly once. What is refused for safety (shells, agents gone): `route_safety.rs`.

mod common;

use std::path::Path;
use std::time::Duration;

use agentpane::route::queue::{new_id, Outcome, Queued, Store};
use common::{wait_until, FakeAgent, Run, TmuxServer, DEADLINE};

const CLAUDE_WITH_ANSWER: &str =
    "claude/d-kimuson-claude-code-viewer/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl";
const CODEX_MID_TURN: &str = "codex/derived-prefix/kvsankar-session-01.prefix-L1-7.mid-turn.jsonl";

/// A plain pane running `command` (test-controlled text) in a new window.
fn plain(server: &TmuxServer, command: &str) -> String {
    server.new_window(command, &server.work("plain"), &[])
}

/// An agent pane whose submitted lines land in a file (cooked tty: a line reaches the fake
/// agent only on Enter, so the file proves what was submitted, and how often).
fn sink(server: &TmuxServer) -> (String, std::path::PathBuf) {
    server.inbox_agent("sink")
}

fn capture(server: &TmuxServer, pane: &str) -> String {
    server.tmux(&["capture-pane", "-p", "-J", "-t", pane])
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

fn wait_for(what: &str, timeout: Duration, check: impl FnMut() -> bool) {
    wait_until(timeout, what, check)
}

fn outcomes(server: &TmuxServer) -> Vec<String> {
    read(&server.state_dir().join("journal.jsonl"))
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["outcome"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect()
}

#[test]
fn plain_screen_routes_into_an_agent_once_with_injection_neutralised() {
    let server = TmuxServer::start();
    let src = plain(
        &server,
        "printf 'hello from src\\nsecond row\\n'; exec sleep 600",
    );
    let (dst, file) = sink(&server);
    wait_for("the source text", DEADLINE, || {
        capture(&server, &src).contains("second row")
    });
    let template = server.path().join("evil.tmpl");
    std::fs::write(
        &template,
        "Q: {answer}\nEND\x1b[201~INJECT\u{9b}2J\x07\r\n\0tail-marker-xyz",
    )
    .unwrap();
    let run = server.agentpane(&[
        "route",
        &src,
        &dst,
        "--transform",
        "full-output",
        "--template",
        template.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    let report = run.json();
    assert_eq!(report["outcome"], "delivered");
    assert_eq!(report["submitted"], true);
    assert_eq!(report["source"], "pane");
    eprintln!(
        "routing latency, plain pane into a fake agent (command start → Enter): {} ms",
        report["latency_ms"]
    );

    let expected = "Q: hello from src\nsecond row\nEND[201~INJECT2J\ntail-marker-xyz\n";
    wait_for(
        &format!("the submitted text (got {:?})", read(&file)),
        DEADLINE,
        || read(&file) == expected,
    );
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(
        read(&file),
        expected,
        "arrives once, with Enter, controls stripped"
    );
    assert_eq!(outcomes(&server), ["pasting", "delivered"]);
}

#[test]
fn no_submit_pastes_without_enter() {
    let server = TmuxServer::start();
    let src = plain(&server, "printf 'only pasted\\n'; exec sleep 600");
    let (dst, file) = sink(&server);
    wait_for("the source text", DEADLINE, || {
        capture(&server, &src).contains("only pasted")
    });
    let run = server.agentpane(&[
        "route",
        &src,
        &dst,
        "--transform",
        "full-output",
        "--no-submit",
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(capture(&server, &dst).contains("only pasted"));
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(read(&file), "", "nothing submitted without Enter");
}

#[test]
fn routing_a_pane_to_itself_is_refused() {
    let server = TmuxServer::start();
    let pane = plain(&server, "exec sleep 600");
    let same = server.tmux(&[
        "display-message",
        "-p",
        "-t",
        &pane,
        "main:#{window_index}.0",
    ]);
    let run = server.agentpane(&["route", &pane, &same]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("to itself"), "{run:?}");
    let run = server.agentpane(&["route", &pane, &same, "--json"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert_eq!(run.json()["outcome"], "error", "{run:?}");
    let missing = server.agentpane(&["route", &pane, "%999"]);
    assert_ne!(missing.code, 0, "{missing:?}");
    // With --json a failed route is still one JSON document on stdout, saying why (`error`:
    // bad targets; `refused` is kept for a route that could run but sends nothing).
    for run in [
        server.agentpane(&["route", &pane, &same, "--json"]),
        server.agentpane(&["route", &pane, "%999", "--json"]),
    ] {
        assert_ne!(run.code, 0, "{run:?}");
        let doc = run.json();
        assert_eq!(doc["outcome"], "error", "{run:?}");
        assert_eq!(doc["submitted"], false, "{run:?}");
        assert!(doc["detail"].as_str().is_some_and(|d| !d.is_empty()));
    }
    assert!(outcomes(&server).is_empty(), "nothing journalled");
}

#[test]
fn claude_transcript_answer_routes_with_a_template() {
    let server = TmuxServer::start();
    let claude = server.spawn(&FakeAgent::claude().fixture(CLAUDE_WITH_ANSWER));
    // The fake writes the fixture right after starting; wait for its last answer.
    let mut answer: Option<Run> = None;
    wait_for("the fake's answer", DEADLINE, || {
        let run = server.agentpane(&["last", &claude, "--json"]);
        let ok = run.code == 0;
        answer = Some(run);
        ok
    });
    let answer = answer.unwrap();
    let answer = answer.json();
    assert_eq!(answer["source"], "transcript");
    assert_eq!(answer["agent"], "claude");
    let text = answer["text"].as_str().unwrap().to_string();
    assert!(text.starts_with("I've created a basic CLAUDE.md"), "{text}");

    let (dst, file) = sink(&server);
    let run = server.agentpane(&[
        "route",
        &claude,
        &dst,
        "--template",
        "review",
        "--instruction",
        "Be brief.",
        "--json",
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.json()["source"], "transcript");
    eprintln!(
        "routing latency, fake claude source (command start → Enter): {} ms",
        run.json()["latency_ms"]
    );
    wait_for("the routed answer", DEADLINE, || {
        read(&file).ends_with("</answer>\n")
    });
    let got = read(&file);
    assert!(
        got.starts_with("Review the answer below from claude in "),
        "{got}"
    );
    assert!(got.contains("\nBe brief.\n"), "{got}");
    assert!(
        got.contains(&format!("<answer>\n{text}\n</answer>\n")),
        "{got}"
    );
}

#[test]
fn busy_agent_is_refused_then_queued_and_delivered_when_free() {
    let server = TmuxServer::start();
    let src = plain(&server, "printf 'please review\\n'; exec sleep 600");
    wait_for("the source text", DEADLINE, || {
        capture(&server, &src).contains("please review")
    });
    let codex = server.spawn(&FakeAgent::codex().fixture(CODEX_MID_TURN));
    wait_for("codex working", DEADLINE, || {
        server.agentpane(&["resolve", &codex, "--json"]).json()["state"] == "working"
    });

    let refused = server.agentpane(&["route", &src, &codex, "--transform", "full-output"]);
    assert_eq!(refused.code, 1, "{refused:?}");
    assert!(refused.stderr.contains("busy (working)"), "{refused:?}");
    // `--json` prints one JSON document whatever the outcome, refusals included.
    let refused = server.agentpane(&[
        "route",
        &src,
        &codex,
        "--transform",
        "full-output",
        "--json",
    ]);
    assert_eq!(refused.code, 1, "{refused:?}");
    assert_eq!(refused.json()["outcome"], "refused", "{refused:?}");
    let waited = server.agentpane(&[
        "route",
        &src,
        &codex,
        "--transform",
        "full-output",
        "--wait",
        "0.5",
    ]);
    assert_eq!(waited.code, 1, "{waited:?}");
    assert!(
        waited.stderr.contains("still busy (working) after waiting"),
        "{waited:?}"
    );

    let queued = server.agentpane(&[
        "route",
        &src,
        &codex,
        "--transform",
        "full-output",
        "--queue",
        "--json",
    ]);
    assert_eq!(queued.code, 0, "{queued:?}");
    assert_eq!(queued.json()["outcome"], "queued");
    // Still busy: a delivery pass leaves it queued.
    let early = server.agentpane(&["route-queue", "--deliver", "--json"]);
    assert_eq!(early.stdout, "", "{early:?}");
    assert_eq!(server.agentpane(&["route-queue"]).stdout.lines().count(), 1);

    // The turn ends (the fake appends Codex's task_complete): the next pass delivers, once.
    server.send_line(
        &codex,
        r#"line {"timestamp":"2026-01-01T00:00:00Z","type":"event_msg","payload":{"type":"task_complete","turn_id":"t1","last_agent_message":"ok"}}"#,
    );
    wait_for("codex your-turn", DEADLINE, || {
        server.agentpane(&["resolve", &codex, "--json"]).json()["state"] == "your-turn"
    });
    let delivered = server.agentpane(&["route-queue", "--deliver", "--json"]);
    assert_eq!(delivered.code, 0, "{delivered:?}");
    assert_eq!(delivered.json()["outcome"], "delivered");
    assert!(capture(&server, &codex).contains("please review"));
    let again = server.agentpane(&["route-queue", "--deliver", "--json"]);
    assert_eq!(again.stdout, "", "{again:?}");
    assert_eq!(server.agentpane(&["route-queue"]).stdout, "");
    assert_eq!(outcomes(&server), ["queued", "pasting", "delivered"]);
}

/// A message queued now for the agent in `dst`, as `route --queue` would queue it.
fn queued_for(server: &TmuxServer, dst: &str, text: &str) -> Queued {
    let socket = server.tmux(&["display-message", "-p", "#{socket_path}"]);
    Queued {
        id: new_id(),
        created: chrono::Utc::now(),
        server: socket.trim().to_string(),
        src: "%0".into(),
        dst: dst.to_string(),
        text: text.into(),
        submit: true,
        recipient: Some(server.recipient(dst)),
    }
}

#[test]
fn queued_message_survives_a_restart_and_is_delivered_exactly_once() {
    let server = TmuxServer::start();
    let (dst, file) = sink(&server);
    // One process queues (here: the test, as a process that then "crashes"), …
    let store = Store::open(&server.state_dir()).unwrap();
    let msg = queued_for(&server, &dst, "queued hello");
    store.enqueue(&msg).unwrap();
    // … and a paste that was started before a crash is never repeated.
    let started = Queued {
        id: new_id(),
        text: "must not be pasted".into(),
        ..msg.clone()
    };
    store.enqueue(&started).unwrap();
    store.record(&started, Outcome::Pasting, None).unwrap();
    // A message for another tmux server is left alone.
    let elsewhere = Queued {
        id: new_id(),
        server: "/tmp/some-other-server".into(),
        text: "other server".into(),
        ..msg.clone()
    };
    store.enqueue(&elsewhere).unwrap();
    drop(store);

    // A new process delivers the queue; a second one finds nothing left to do.
    let first = server.agentpane(&["route-queue", "--deliver", "--json"]);
    wait_for("the queued text", DEADLINE, || {
        read(&file) == "queued hello\n"
    });
    let second = server.agentpane(&["route-queue", "--deliver", "--json"]);
    assert!(second.stdout.is_empty(), "{second:?}");
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(read(&file), "queued hello\n", "{first:?}");

    let store = Store::open(&server.state_dir()).unwrap();
    let pending: Vec<String> = store.pending().unwrap().into_iter().map(|m| m.id).collect();
    assert_eq!(pending, std::slice::from_ref(&elsewhere.id));
    let last = store.last_outcomes().unwrap();
    assert_eq!(last.get(&msg.id), Some(&Outcome::Delivered));
    assert_eq!(last.get(&started.id), Some(&Outcome::Uncertain));
    assert!(server
        .state_dir()
        .join("queue/held")
        .join(format!("{}.json", started.id))
        .exists());
    let delivered = store
        .journal()
        .unwrap()
        .into_iter()
        .filter(|e| e.id == msg.id && e.outcome == Outcome::Delivered)
        .count();
    assert_eq!(delivered, 1);
}

/// The watcher was killed mid-paste and a torn append left a line that is not UTF-8 in the
/// journal. The watcher started again still reads every record after it: the message
/// delivered before the crash is not pasted again, the one whose paste had started is held,
/// and the damaged line is named in `watch.log` and by `route-queue`.
#[test]
fn a_torn_journal_line_hides_no_later_record_from_the_next_watcher() {
    let server = TmuxServer::start();
    let (dst, file) = sink(&server);
    let store = Store::open(&server.state_dir()).unwrap();
    let done = queued_for(&server, &dst, "delivered before the crash");
    let started = Queued {
        id: new_id(),
        text: "its paste had started".into(),
        ..done.clone()
    };
    store.enqueue(&done).unwrap();
    store.enqueue(&started).unwrap();
    let mut journal = std::fs::OpenOptions::new()
        .append(true)
        .open(store.journal_path())
        .unwrap();
    std::io::Write::write_all(&mut journal, b"{\"id\":\"2026\xff\xfe\xc3\n").unwrap();
    store.record(&done, Outcome::Pasting, None).unwrap();
    store.record(&done, Outcome::Delivered, None).unwrap();
    store.record(&started, Outcome::Pasting, None).unwrap();
    drop(store);

    let watch = common::Watch::start(&server, &[]);
    let held = server
        .state_dir()
        .join(format!("queue/held/{}.json", started.id));
    let queued = server.state_dir().join(format!("queue/{}.json", done.id));
    let log = server.server_dir().join("watch.log");
    // The watcher logs the damage once its pass is over, after the files moved.
    wait_for(
        "the started paste held, the delivered one dropped, the damage logged",
        DEADLINE,
        || {
            held.exists()
                && !queued.exists()
                && read(&log).contains("journal.jsonl line 3 is not valid UTF-8")
        },
    );
    assert_eq!(watch.stop(), 0);
    assert_eq!(read(&file), "", "nothing pasted a second time");
    let list = server.agentpane(&["route-queue"]);
    assert!(
        list.stdout.contains(&format!("held {} ", started.id)),
        "{list:?}"
    );
    assert!(!list.stdout.contains(&done.id), "{list:?}");
    assert!(
        list.stderr
            .contains("journal.jsonl line 3 is not valid UTF-8"),
        "{list:?}"
    );
}

/// A pane without an agent has no answer; `--screen` reads its screen, ANSI stripped, and
/// says so.
#[test]
fn last_screen_reads_a_plain_pane_and_says_so() {
    let server = TmuxServer::start();
    let pane = plain(
        &server,
        "printf '\\033[1mbold answer\\033[0m\\n'; exec sleep 600",
    );
    wait_for("the text", DEADLINE, || {
        capture(&server, &pane).contains("bold answer")
    });
    assert_eq!(server.agentpane(&["last", &pane]).code, 1);
    let run = server.agentpane(&["last", &pane, "--screen", "--json"]);
    assert_eq!(run.code, 0, "{run:?}");
    let v = run.json();
    assert_eq!(v["source"], "screen");
    assert_eq!(v["text"], "bold answer");
    assert_eq!(v["agent"], serde_json::Value::Null);
    let text = server.agentpane(&["last", &pane, "--screen"]);
    assert_eq!(text.stdout, "bold answer\n");
    assert!(text.stderr.contains("source: pane"), "{text:?}");
}

/// Recorded screens (`fixtures/captures/*.ansi.txt`, see SOURCES.md) → their expected answer.
#[test]
fn capture_fixtures_yield_their_last_answer() {
    use agentpane::events::AgentKind;
    use agentpane::extract::capture::last_answer;
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/captures");
    let cases = [
        ("claude-after-tool", Some(AgentKind::Claude)),
        ("claude-working", Some(AgentKind::Claude)),
        ("claude-boxed-prompt", Some(AgentKind::Claude)),
        ("codex-final", Some(AgentKind::Codex)),
        ("codex-working", Some(AgentKind::Codex)),
        ("codex-legacy", Some(AgentKind::Codex)),
        ("plain-shell", None),
    ];
    for (name, agent) in cases {
        let raw = std::fs::read(dir.join(format!("{name}.ansi.txt"))).unwrap();
        assert!(raw.contains(&0x1b), "{name} carries ANSI");
        let expected = read(&dir.join(format!("{name}.expected.txt")));
        let got = last_answer(&raw, agent);
        assert_eq!(got.as_deref(), Some(expected.trim_end()), "{name}");
        // Without knowing the agent, the same answer comes out (markers are unambiguous).
        assert_eq!(
            last_answer(&raw, None).as_deref(),
            Some(expected.trim_end()),
            "{name} (no agent)"
        );
        let answer = got.unwrap();
        for chrome in [
            "esc to interrupt",
            "for shortcuts",
            "context left",
            "⎿",
            "❯",
            "╭",
            "✻",
        ] {
            assert!(
                !answer.contains(chrome),
                "{name}: `{chrome}` left in the answer"
            );
        }
    }
}

/// Two fake Codex panes in the middle of a turn (working).
fn two_working_codex(server: &TmuxServer) -> (String, String) {
    let a = server.spawn(&FakeAgent::codex().fixture(CODEX_MID_TURN).in_dir("a"));
    let b = server.spawn(&FakeAgent::codex().fixture(CODEX_MID_TURN).in_dir("b"));
    for pane in [&a, &b] {
        wait_for("codex working", DEADLINE, || {
            server.agentpane(&["resolve", pane, "--json"]).json()["state"] == "working"
        });
    }
    (a, b)
}

/// How many deliveries the journal records.
fn delivered_count(server: &TmuxServer) -> usize {
    outcomes(server)
        .iter()
        .filter(|o| *o == "delivered")
        .count()
}

#[test]
fn relay_alternates_then_escalates_after_the_round_limit() {
    let server = TmuxServer::start();
    let (a, b) = two_working_codex(&server);
    let log = server.path().join("relay.log");
    let mut relay = common::agentpane_with_env(&server.env());
    relay
        .args(["-L", &server.name, "relay", &a, &b, "--rounds", "1"])
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap());
    let mut child = relay.spawn().unwrap();
    // Kill the child we started if the test fails midway.
    struct Reap(std::process::Child);
    impl Drop for Reap {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    wait_for("the relay to start", DEADLINE, || {
        read(&log).contains("relaying between")
    });
    std::thread::sleep(Duration::from_millis(1500));

    // A finishes while B is still busy: the route waits for B.
    server.codex_completes(&a, "a1", "QUESTION-FROM-A what does lib.rs do");
    wait_for("the relay to hold A's answer", DEADLINE, || {
        read(&log).contains("waits for it")
    });
    assert!(!capture(&server, &b).contains("QUESTION-FROM-A"));
    // B's unrelated turn ends: A's answer is delivered to B, and B's old turn is not relayed.
    server.codex_completes(&b, "b1", "UNRELATED-B-WORK");
    wait_for("A's answer in B", DEADLINE, || {
        capture(&server, &b).contains("QUESTION-FROM-A")
    });
    // The journal line is written after Enter: only then may the test type into B again.
    let delivered = |n: usize| delivered_count(&server) == n;
    wait_for("A's answer submitted", DEADLINE, || delivered(1));
    // B's reply goes back to A.
    server.codex_completes(&b, "b2", "REPLY-FROM-B lib.rs parses input");
    wait_for("B's reply in A", DEADLINE, || {
        capture(&server, &a).contains("REPLY-FROM-B")
    });
    wait_for("B's reply submitted", DEADLINE, || delivered(2));
    assert!(!capture(&server, &a).contains("UNRELATED-B-WORK"));
    // One round trip done: A's next answer is not sent; the relay escalates and exits 1.
    server.codex_completes(&a, "a2", "FOLLOW-UP-FROM-A and main.rs?");
    let deadline = std::time::Instant::now() + DEADLINE;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "relay did not stop: {}",
            read(&log)
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let _reap = Reap(child);
    assert_eq!(status.code(), Some(1), "{}", read(&log));
    assert!(read(&log).contains("ESCALATED"), "{}", read(&log));
    assert!(!capture(&server, &b).contains("FOLLOW-UP-FROM-A"));
    let journal = outcomes(&server);
    assert_eq!(
        journal.iter().filter(|o| *o == "delivered").count(),
        2,
        "{journal:?}"
    );
    assert_eq!(journal.last().map(String::as_str), Some("escalated"));
}

/// Runs agentpane on `server` with extra environment variables.
fn agentpane_with(
    server: &TmuxServer,
    env: &[(&str, &str)],
    args: &[&str],
) -> std::process::Output {
    let mut cmd = common::agentpane_with_env(&server.env());
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.args(["-L", &server.name]).args(args).output().unwrap()
}

#[test]
fn ai_transform_sends_the_command_output_and_nothing_on_failure() {
    let server = TmuxServer::start();
    let src = plain(&server, "printf 'hello from src\\n'; exec sleep 600");
    let (dst, file) = sink(&server);
    wait_for("the source text", DEADLINE, || {
        capture(&server, &src).contains("hello from src")
    });
    let args = [
        "route",
        &src,
        &dst,
        "--screen",
        "--transform",
        "ai",
        "--instruction",
        "shout it",
    ];

    let failed = agentpane_with(&server, &[("AGENTPANE_AI_COMMAND", "false")], &args);
    assert_eq!(failed.status.code(), Some(2), "{failed:?}");
    assert!(
        String::from_utf8_lossy(&failed.stderr).contains("nothing was sent"),
        "{failed:?}"
    );
    let slow = agentpane_with(
        &server,
        &[
            ("AGENTPANE_AI_COMMAND", "sleep 5"),
            ("AGENTPANE_AI_TIMEOUT", "0.3"),
        ],
        &args,
    );
    assert_eq!(slow.status.code(), Some(2), "{slow:?}");
    assert!(
        String::from_utf8_lossy(&slow.stderr).contains("did not finish"),
        "{slow:?}"
    );
    let unset = agentpane_with(&server, &[("AGENTPANE_AI_COMMAND", "")], &args);
    assert!(
        String::from_utf8_lossy(&unset.stderr).contains("AGENTPANE_AI_COMMAND"),
        "{unset:?}"
    );
    assert!(outcomes(&server).is_empty(), "nothing was pasted");

    let ok = agentpane_with(&server, &[("AGENTPANE_AI_COMMAND", "tr a-z A-Z")], &args);
    assert_eq!(ok.status.code(), Some(0), "{ok:?}");
    wait_for("the transformed text", DEADLINE, || {
        read(&file).contains("</ANSWER>\n")
    });
    let got = read(&file);
    assert!(
        got.starts_with("SHOUT IT\n\n<ANSWER>\nHELLO FROM SRC"),
        "{got}"
    );
}

#[test]
fn relay_runs_inside_the_watcher_and_escalates_there() {
    let server = TmuxServer::start();
    let (a, b) = two_working_codex(&server);
    let watch = common::Watch::start(&server, &[]);
    // With a watcher running, `relay` registers and returns at once.
    let started = server.agentpane(&["relay", &a, &b, "--rounds", "1"]);
    assert_eq!(started.code, 0, "{started:?}");
    assert!(started.stderr.contains("the watcher relays"), "{started:?}");
    let again = server.agentpane(&["relay", &b, &a]);
    assert_eq!(again.code, 2, "one relay per pair: {again:?}");
    let relays = server.state_dir().join("relays");
    let registered = || std::fs::read_dir(&relays).map(|d| d.count()).unwrap_or(0);
    assert_eq!(registered(), 1);
    std::thread::sleep(Duration::from_millis(800));

    server.codex_completes(&a, "a1", "QUESTION-FROM-A what does lib.rs do");
    // B is still busy: A's answer waits until B's own turn ends (which is not relayed).
    std::thread::sleep(Duration::from_millis(800));
    assert!(!capture(&server, &b).contains("QUESTION-FROM-A"));
    server.codex_completes(&b, "b0", "UNRELATED-B-WORK");
    wait_for("A's answer in B", DEADLINE, || {
        capture(&server, &b).contains("QUESTION-FROM-A")
    });
    let delivered = |n: usize| delivered_count(&server) == n;
    wait_for("A's answer submitted", DEADLINE, || delivered(1));
    server.codex_completes(&b, "b1", "REPLY-FROM-B lib.rs parses input");
    wait_for("B's reply in A", DEADLINE, || {
        capture(&server, &a).contains("REPLY-FROM-B")
    });
    wait_for("B's reply submitted", DEADLINE, || delivered(2));
    // The round trip is used up: the next answer escalates and the relay ends.
    server.codex_completes(&a, "a2", "FOLLOW-UP-FROM-A and main.rs?");
    wait_for("the escalation", DEADLINE, || {
        outcomes(&server).last().map(String::as_str) == Some("escalated")
    });
    wait_for("the relay unregistered", DEADLINE, || registered() == 0);
    assert!(!capture(&server, &b).contains("FOLLOW-UP-FROM-A"));
    assert!(!capture(&server, &a).contains("UNRELATED-B-WORK"));
    assert_eq!(watch.stop(), 0);
}

#[test]
fn a_watcher_relay_can_be_stopped() {
    let server = TmuxServer::start();
    let a = server.spawn(&FakeAgent::codex().fixture(CODEX_MID_TURN).in_dir("a"));
    let b = server.spawn(&FakeAgent::codex().fixture(CODEX_MID_TURN).in_dir("b"));
    let watch = common::Watch::start(&server, &[]);
    assert_eq!(server.agentpane(&["relay", &a, &b]).code, 0);
    let stop = server.agentpane(&["relay", &b, &a, "--stop"]);
    assert_eq!(stop.code, 0, "{stop:?}");
    assert_eq!(
        server.agentpane(&["relay", &a, &b, "--stop"]).code,
        1,
        "nothing left to stop"
    );
    assert_eq!(watch.stop(), 0);
}
