//! The real transcripts in `fixtures/real/` (see MANIFEST.txt): every prefix of an append-only
//! transcript is a real past state of that file, so each prefix must classify without a panic,
//! and the meaningful points must read as a human would.

use std::io::Cursor;
use std::path::{Path, PathBuf};

use agentpane::events::{AgentKind, Time};
use agentpane::extract::last_answer_from_transcript;
use agentpane::read::Budget;
use agentpane::state::{classify, Observation, State, Status, Windows};
use agentpane::transcript::{classify_file, tail_events_from};
use serde_json::Value;

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/real")
        .join(rel)
}

fn all_fixtures() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = walkdir::WalkDir::new(fixture(""))
        .into_iter()
        .map(|e| e.unwrap().into_path())
        .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    out.sort();
    assert!(out.len() >= 12, "fixtures missing: {out:?}");
    out
}

fn last_timestamp(data: &[u8]) -> Option<Time> {
    data.split(|&b| b == b'\n')
        .filter_map(|l| serde_json::from_slice::<Value>(l).ok())
        .filter_map(|v| {
            v.get("timestamp")
                .and_then(Value::as_str)
                .map(str::to_string)
        })
        .filter_map(|s| chrono::DateTime::parse_from_rfc3339(&s).ok())
        .map(|t| t.with_timezone(&chrono::Utc))
        .max()
}

fn status_of(data: &[u8], now: Time) -> Status {
    let tail = tail_events_from(Cursor::new(data), None, Budget::default()).unwrap();
    classify(
        &tail.events,
        now,
        &Windows::default(),
        Observation::default(),
    )
}

fn status_of_file(rel: &str, after_last: i64) -> Status {
    let path = fixture(rel);
    let data = std::fs::read(&path).unwrap();
    let now = last_timestamp(&data).unwrap() + chrono::Duration::seconds(after_last);
    classify_file(
        &path,
        None,
        now,
        &Windows::default(),
        Observation::default(),
    )
    .unwrap()
    .1
}

#[test]
fn every_line_prefix_of_every_real_transcript_classifies() {
    let files: Vec<(PathBuf, Vec<u8>, Time)> = all_fixtures()
        .into_iter()
        .map(|path| {
            let data = std::fs::read(&path).unwrap();
            let now = last_timestamp(&data).unwrap_or_else(chrono::Utc::now);
            (path, data, now)
        })
        .collect();
    // (file, end of the prefix): every line prefix is read afresh (the longest transcript has
    // 1,863 lines), so they are shared out over the cores, every n-th to each.
    let prefixes: Vec<(usize, usize)> = files
        .iter()
        .enumerate()
        .flat_map(|(f, (_, data, _))| {
            data.iter()
                .enumerate()
                .filter(|(_, &b)| b == b'\n')
                .map(move |(i, _)| (f, i + 1))
        })
        .collect();
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    std::thread::scope(|s| {
        for first in 0..threads {
            let (files, prefixes) = (&files, &prefixes);
            s.spawn(move || {
                for &(f, end) in prefixes.iter().skip(first).step_by(threads) {
                    let (path, data, now) = &files[f];
                    let status = status_of(&data[..end], *now);
                    assert_ne!(status.state, State::None, "{}:{end}", path.display());
                }
            });
        }
    });
}

#[test]
fn byte_prefixes_with_a_partial_last_line_classify_as_the_complete_prefix() {
    // A line still being written is ignored: cutting inside line N reads like lines 1..N-1.
    for rel in [
        "claude/marot-spotter/short.jsonl",
        "codex/kvsankar-agent-history/session-01.jsonl",
    ] {
        let data = std::fs::read(fixture(rel)).unwrap();
        let now = last_timestamp(&data).unwrap();
        for cut in (1..data.len()).step_by(97) {
            let complete = data[..cut]
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |i| i + 1);
            assert_eq!(
                status_of(&data[..cut], now),
                status_of(&data[..complete], now),
                "{rel} cut at {cut}"
            );
        }
    }
}

#[test]
fn prefix_ending_at_a_main_thread_prompt_is_working() {
    for path in all_fixtures() {
        let data = std::fs::read(&path).unwrap();
        let mut end = 0;
        while let Some(nl) = data[end..].iter().position(|&b| b == b'\n') {
            let line = &data[end..end + nl];
            end += nl + 1;
            let Ok(v) = serde_json::from_slice::<Value>(line) else {
                continue;
            };
            let is_prompt = v["type"] == "user"
                && v["isSidechain"] == false
                && v.get("isMeta").is_none()
                && v["message"]["content"]
                    .as_str()
                    .is_some_and(|c| !c.starts_with('<') && !c.starts_with("[Request interrupted"));
            if is_prompt {
                let now = last_timestamp(line).unwrap() + chrono::Duration::seconds(2);
                let s = status_of(&data[..end], now);
                assert_eq!(s.state, State::Working, "{}:{end}", path.display());
            }
        }
    }
}

#[test]
fn awaiting_permission_prefix_is_not_your_turn() {
    let s = status_of_file(
        "claude/derived-prefix/short.prefix-L1-10.awaiting-permission.jsonl",
        10,
    );
    assert_eq!(s.state, State::Working);
    assert_eq!(s.reason.as_deref(), Some("tool: Bash, Glob"));
}

#[test]
fn rejected_tools_then_interrupt_is_your_turn_interrupted() {
    let s = status_of_file("claude/marot-spotter/short.jsonl", 5);
    assert_eq!(s.state, State::YourTurn);
    assert_eq!(s.reason.as_deref(), Some("interrupted"));
}

#[test]
fn finished_sessions_are_your_turn_shortly_after_their_last_event() {
    for rel in [
        "claude/marot-spotter/258c7280-ae70-4798-800f-63464d01a85d.jsonl",
        "claude/marot-spotter/subagent.jsonl",
        "claude/kvsankar-agent-history/session-01.jsonl",
        "claude/d-kimuson-claude-code-viewer/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl",
        "claude/d-kimuson-claude-code-viewer/5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl",
        "claude/d-kimuson-claude-code-viewer/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl",
        "codex/kvsankar-agent-history/session-01.jsonl",
    ] {
        let s = status_of_file(rel, 5);
        assert_eq!(s.state, State::YourTurn, "{rel}: {s:?}");
        assert!(s.turn_key.is_some(), "{rel}");
        assert_eq!(
            status_of_file(rel, 3 * 3600).state,
            State::Idle,
            "{rel} hours later"
        );
    }
}

#[test]
fn codex_mid_turn_prefix_is_working() {
    let s = status_of_file(
        "codex/derived-prefix/kvsankar-session-01.prefix-L1-7.mid-turn.jsonl",
        5,
    );
    assert_eq!(s.state, State::Working);
}

#[test]
fn agent_is_detected_from_content() {
    let (agent, _) = classify_file(
        &fixture("codex/kvsankar-agent-history/session-01.jsonl"),
        None,
        chrono::Utc::now(),
        &Windows::default(),
        Observation::default(),
    )
    .unwrap();
    assert_eq!(agent, AgentKind::Codex);
}

#[test]
fn last_answer_is_the_final_message_text_byte_exact() {
    let path = fixture("claude/marot-spotter/258c7280-ae70-4798-800f-63464d01a85d.jsonl");
    let answer = last_answer_from_transcript(&path, None).unwrap().unwrap();
    // The final message's text blocks, verbatim (code fence included).
    let data = std::fs::read_to_string(&path).unwrap();
    let last_text = data
        .lines()
        .rev()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["type"] == "assistant")
        .filter_map(|v| {
            v["message"]["content"][0]["text"]
                .as_str()
                .map(str::to_string)
        })
        .next()
        .unwrap();
    assert_eq!(answer.text, last_text.trim_matches('\n'));
    assert!(answer.text.contains("```\nOn branch spotter-gqc\n"));
}

#[test]
fn last_answer_skips_messages_with_tool_use_and_sidechains() {
    let path = fixture("claude/derived-prefix/short.prefix-L1-10.awaiting-permission.jsonl");
    // The only assistant message ends in tool uses: no final answer yet.
    assert!(last_answer_from_transcript(&path, None).unwrap().is_none());
    let path =
        fixture("claude/d-kimuson-claude-code-viewer/5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl");
    let answer = last_answer_from_transcript(&path, None).unwrap().unwrap();
    assert!(answer
        .text
        .starts_with("CLAUDE.mdファイルを最新の状態にアップデートしました"));
}

#[test]
fn codex_last_answer_is_last_agent_message() {
    let path = fixture("codex/kvsankar-agent-history/session-01.jsonl");
    let answer = last_answer_from_transcript(&path, None).unwrap().unwrap();
    assert_eq!(answer.text, "[REDACTED_ASSISTANT_TEXT]");
    assert_eq!(answer.agent, AgentKind::Codex);
}
