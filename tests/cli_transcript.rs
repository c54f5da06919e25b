//! `classify` and `last --transcript` through the real binary: the contract of
//! docs/design.md#cli-contract and the bad-input rules of docs/design.md#reliability.

use std::io::Write;
use std::path::Path;
use std::process::Output;

mod common;

fn agentpane(args: &[&str]) -> Output {
    let world = tempfile::tempdir().unwrap();
    common::agentpane_in(world.path())
        .args(args)
        .output()
        .expect("binary runs")
}

fn fixture(rel: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/real")
        .join(rel)
        .to_string_lossy()
        .into_owned()
}

fn json(out: &Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("one JSON object")
}

#[test]
fn classify_json_has_the_contract_fields() {
    let out = agentpane(&[
        "classify",
        &fixture("claude/marot-spotter/short.jsonl"),
        "--now",
        "2026-02-10T21:12:10Z",
        "--json",
    ]);
    let v = json(&out);
    assert_eq!(v["agent"], "claude");
    assert_eq!(v["state"], "your-turn");
    assert_eq!(v["reason"], "interrupted");
    assert!(v["turn_key"].is_string());
    assert_eq!(v["at"], "2026-02-10T21:12:02.480Z");
}

#[test]
fn classify_respects_agent_and_now() {
    let file = fixture("codex/kvsankar-agent-history/session-01.jsonl");
    let v = json(&agentpane(&[
        "classify",
        &file,
        "--agent",
        "codex",
        "--now",
        "2026-06-05T05:00:00Z",
        "--json",
    ]));
    assert_eq!(
        (v["agent"].as_str(), v["state"].as_str()),
        (Some("codex"), Some("your-turn"))
    );
    let v = json(&agentpane(&[
        "classify",
        &file,
        "--now",
        "2026-06-06T05:00:00Z",
        "--json",
    ]));
    assert_eq!(v["state"], "idle");
    assert!(v["reason"].is_null());
}

#[test]
fn classify_plain_output_is_one_line() {
    let out = agentpane(&[
        "classify",
        &fixture("claude/derived-prefix/short.prefix-L1-10.awaiting-permission.jsonl"),
        "--now",
        "2026-02-10T21:12:05Z",
    ]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.lines().count(), 1);
    assert!(
        text.starts_with("working\tclaude\ttool: Bash, Glob"),
        "{text}"
    );
}

#[test]
fn unreadable_file_is_one_clear_line_and_exit_2() {
    let out = agentpane(&["classify", "/nonexistent/agentpane/x.jsonl"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("/nonexistent/agentpane/x.jsonl"), "{err}");
}

#[test]
fn bad_now_is_a_usage_error() {
    let out = agentpane(&[
        "classify",
        &fixture("claude/marot-spotter/short.jsonl"),
        "--now",
        "yesterday",
    ]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn empty_file_is_idle() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("empty.jsonl");
    std::fs::write(&p, b"").unwrap();
    let v = json(&agentpane(&["classify", p.to_str().unwrap(), "--json"]));
    assert_eq!(v["state"], "idle");
}

#[test]
fn garbage_lines_are_skipped_never_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("bad.jsonl");
    let mut f = std::fs::File::create(&p).unwrap();
    f.write_all(b"{\"type\":\"user\",\"timestamp\":\"2026-02-10T21:00:00Z\",\"message\":{\"content\":\"go\"}}\n").unwrap();
    f.write_all(&[0xff, 0xfe, 0x00, b'\n']).unwrap();
    f.write_all(b"{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":\"te\n")
        .unwrap();
    f.write_all(b"{\"type\":\"brand-new-record\",\"x\":1}\n")
        .unwrap();
    f.write_all(b"[1,2,3]\n\n\r\n").unwrap();
    f.write_all(b"{\"type\":\"assistant\",\"message\":{\"stop_reason\":\"end_turn\",\"con")
        .unwrap();
    drop(f);
    let v = json(&agentpane(&[
        "classify",
        p.to_str().unwrap(),
        "--now",
        "2026-02-10T21:00:05Z",
        "--json",
    ]));
    assert_eq!(
        v["state"], "working",
        "the prompt decides; the partial last line is ignored"
    );
}

#[test]
fn fifty_megabyte_single_line_is_read_in_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("huge.jsonl");
    let mut f = std::fs::File::create(&p).unwrap();
    f.write_all(b"{\"type\":\"user\",\"uuid\":\"u1\",\"timestamp\":\"2026-02-10T21:00:00Z\",\"message\":{\"content\":\"go\"}}\n").unwrap();
    f.write_all(b"{\"type\":\"assistant\",\"uuid\":\"a1\",\"timestamp\":\"2026-02-10T21:00:01Z\",\"message\":{\"id\":\"m1\",\"content\":[{\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"Bash\",\"input\":{}}]}}\n").unwrap();
    f.write_all(b"{\"type\":\"user\",\"isSidechain\":false,\"message\":{\"role\":\"user\",\"content\":[{\"tool_use_id\":\"t1\",\"type\":\"tool_result\",\"content\":\"").unwrap();
    let chunk = vec![b'x'; 1 << 20];
    for _ in 0..50 {
        f.write_all(&chunk).unwrap();
    }
    f.write_all(b"\"}]},\"uuid\":\"r1\",\"timestamp\":\"2026-02-10T21:00:30Z\"}\n")
        .unwrap();
    drop(f);
    let v = json(&agentpane(&[
        "classify",
        p.to_str().unwrap(),
        "--now",
        "2026-02-10T21:00:31Z",
        "--json",
    ]));
    assert_eq!(v["state"], "working");
    assert_eq!(
        v["turn_key"], "r1",
        "the huge tool result itself is the deciding event"
    );
    assert!(v["reason"].is_null(), "the tool finished: no pending tool");
}

#[test]
fn last_prints_the_answer_or_exits_1() {
    let out = agentpane(&[
        "last",
        "--transcript",
        &fixture("claude/kvsankar-agent-history/session-01.jsonl"),
    ]);
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "[REDACTED_ASSISTANT_TEXT]\n"
    );
    let out = agentpane(&[
        "last",
        "--transcript",
        &fixture("claude/derived-prefix/short.prefix-L1-10.awaiting-permission.jsonl"),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(!out.stderr.is_empty());
}

#[test]
fn last_json_names_its_source() {
    let v = json(&agentpane(&[
        "last",
        "--transcript",
        &fixture("codex/kvsankar-agent-history/session-01.jsonl"),
        "--json",
    ]));
    assert_eq!(v["source"], "transcript");
    assert_eq!(v["agent"], "codex");
}

#[test]
fn classify_and_last_take_gemini_and_opencode_or_detect_them() {
    let recorded = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/real-clients");
    let gemini = recorded.join("gemini-0.61.0/session.jsonl");
    // opencode's transcript is a session in its database: `<db>#<session id>`.
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("opencode.db");
    let dump = std::fs::read_to_string(recorded.join("opencode-1.18.33/session.sql")).unwrap();
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute_batch(&dump)
        .unwrap();
    let opencode = format!("{}#ses_dcc45fdafffevJwm88T7RhVzyq", db.display());
    for (file, agent) in [
        (gemini.display().to_string(), "gemini"),
        (opencode, "opencode"),
    ] {
        for flag in [&["--agent", agent][..], &[]] {
            let mut args = vec!["classify", &file, "--json"];
            args.extend(flag);
            let v = json(&agentpane(&args));
            assert_eq!(v["agent"], agent, "{args:?}: {v}");
            assert!(v["state"].is_string(), "{args:?}: {v}");
            let mut args = vec!["last", "--transcript", &file];
            args.extend(flag);
            // Both recorded sessions end after a failed turn: no answer, exit 1.
            let out = agentpane(&args);
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
            assert!(err.contains("no assistant answer"), "{args:?}: {err}");
        }
    }
    // Told it is opencode's, a plain file is refused with what an opencode transcript is.
    let out = agentpane(&[
        "classify",
        &gemini.display().to_string(),
        "--agent",
        "opencode",
    ]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("#<session id>"), "{err}");
}

#[test]
fn a_pi_log_is_classified_and_answered_with_or_without_agent() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/real-clients/pi-0.73.1");
    let session = dir.join("session.jsonl").to_string_lossy().into_owned();
    // Right after its last record: the 429 pi gave up on, one turn key for the 4 attempts.
    let now = "2026-12-02T12:37:50Z";
    for agent in [&["--agent", "pi"][..], &[]] {
        let mut args = vec!["classify", session.as_str(), "--now", now, "--json"];
        args.extend_from_slice(agent);
        let v = json(&agentpane(&args));
        assert_eq!(v["agent"], "pi", "{v}");
        assert_eq!(v["state"], "attention", "{v}");
        assert_eq!(v["reason"], "quota exceeded", "{v}");
    }
    // The failed turn has no answer; the log's first turn has one, byte for byte.
    let out = agentpane(&["last", "--transcript", &session, "--agent", "pi"]);
    assert_eq!(out.status.code(), Some(1));
    let demo = dir.join("demo.jsonl").to_string_lossy().into_owned();
    let out = agentpane(&["last", "--transcript", &demo, "--agent", "pi"]);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "Here is the answer.\n\n```sh\necho  \"hi\"\t$x\n```\nDone.\n"
    );
}
