//! The adapter against what Qwen Code 0.24.4 really wrote (fixtures/real-clients/qwen-0.24.4).

use serde_json::Value;

use super::answer::last_answer_in;
use super::parse::{parse_fragments, parse_line};
use crate::events::{Event, EventKind};

const FIXTURES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/fixtures/real-clients/qwen-0.24.4"
);
const SESSION_A: &str =
    "projects/-tmp-qwenrec-work-demo/chats/9027fcf2-d57d-45b6-b91e-ffb47ca01e86.jsonl";
const SESSION_B: &str =
    "projects/-tmp-qwenrec-work--ber-proj-v2/chats/f740fdfe-0273-41be-aa4a-ece8b2dd6000.jsonl";
/// The stand-in's plain answer (tests/real/openai_chat.rs `ANSWER`).
const ANSWER: &str = "Here is the answer.\n\n```sh\necho  \"hi\"\t$x\n```\nDone.";

fn read(rel: &str) -> String {
    std::fs::read_to_string(format!("{FIXTURES}/{rel}")).expect(rel)
}

fn events(text: &str) -> Vec<Event> {
    text.lines()
        .map(|l| parse_line(l.as_bytes()).expect("every recorded line is a record"))
        .collect()
}

/// The main thread's events that decide a state: no bookkeeping, no proof of life.
fn decisive(text: &str) -> Vec<EventKind> {
    events(text)
        .into_iter()
        .filter(|e| !e.sidechain)
        .map(|e| e.kind)
        .filter(|k| !matches!(k, EventKind::Meta | EventKind::Progress))
        .collect()
}

fn last_decisive(state: &str) -> EventKind {
    decisive(&read(&format!("states/{state}/chat.jsonl")))
        .pop()
        .expect(state)
}

fn tool(id: &str) -> EventKind {
    EventKind::ToolUse {
        ids: vec![id.into()],
        names: vec!["run_shell_command".into()],
    }
}

fn result(id: &str) -> EventKind {
    EventKind::ToolResult {
        ids: vec![id.into()],
    }
}

fn api_error(kind: &EventKind) -> (&str, &str) {
    match kind {
        EventKind::ApiError(e) => (e.kind.as_str(), e.text.as_str()),
        other => panic!("not an API error: {other:?}"),
    }
}

const DONE: EventKind = EventKind::AssistantText { closes: Some(true) };

#[test]
fn session_a_reads_as_the_turns_that_were_typed() {
    let kinds = decisive(&read(SESSION_A));
    assert_eq!(kinds.len(), 12, "{kinds:#?}");
    assert_eq!(
        kinds[..7],
        [
            EventKind::UserPrompt, // Say hello please
            DONE,
            EventKind::UserPrompt, // RUNBASH now (read-only echo: run without asking)
            tool("call_0"),
            result("call_0"),
            DONE,
            EventKind::UserPrompt, // SLOW story
        ]
    );
    assert_eq!(kinds[7], EventKind::Interrupted, "Escape mid-stream");
    // BADREQ, then a prompt the stand-in of that run also answered 400 (the client resent
    // the failed prompt with it).
    assert_eq!(kinds[8], EventKind::UserPrompt);
    assert_eq!(kinds[10], EventKind::UserPrompt);
    assert_eq!(kinds[9], kinds[11]);
    assert_eq!(
        api_error(&kinds[9]),
        (
            "api error 400: model mock-model does not exist",
            "400 model mock-model does not exist"
        )
    );
}

#[test]
fn session_b_reads_as_approval_retries_and_a_refusal() {
    let kinds = decisive(&read(SESSION_B));
    assert_eq!(
        kinds[..6],
        [
            EventKind::UserPrompt,
            DONE,
            EventKind::UserPrompt,
            tool("call_0"),
            result("call_0"),
            DONE,
        ]
    );
    // QUOTA: one api_error per attempt, and nothing when Escape ended the wait.
    let retries: Vec<_> = kinds[7..]
        .iter()
        .take_while(|k| matches!(k, EventKind::ApiError(_)))
        .collect();
    assert_eq!(retries.len(), 7);
    for r in retries {
        assert_eq!(
            api_error(r),
            ("rate limit", "429 Rate limit reached for mock-model")
        );
    }
    assert_eq!(
        kinds[kinds.len() - 3..],
        [
            EventKind::UserPrompt,
            tool("call_1"),
            EventKind::Interrupted
        ],
        "refused at the approval prompt"
    );
}

#[test]
fn each_recorded_state_ends_in_the_event_that_decides_it() {
    assert_eq!(last_decisive("03-answer-done"), DONE);
    assert_eq!(last_decisive("05-slow-streaming"), EventKind::UserPrompt);
    assert_eq!(last_decisive("06-interrupted"), EventKind::Interrupted);
    assert_eq!(
        api_error(&last_decisive("09-badreq")).0,
        "api error 400: model mock-model does not exist"
    );
    // Waiting for approval and running read the same in the log; the title tells them apart.
    assert_eq!(last_decisive("23-approval-pending"), tool("call_0"));
    assert_eq!(last_decisive("24-approved-running"), tool("call_0"));
    assert_eq!(last_decisive("25-tool-done"), DONE);
    assert_eq!(
        api_error(&last_decisive("29-quota-retry-countdown")).0,
        "rate limit"
    );
    assert_eq!(last_decisive("32-approval-refused"), EventKind::Interrupted);
}

#[test]
fn the_memory_extractor_after_an_answer_is_a_sidechain() {
    let all = events(&read(SESSION_A));
    let after_answer = &all[5];
    assert_eq!(after_answer.kind, EventKind::Progress);
    assert!(after_answer.sidechain, "{after_answer:?}");
    // The main loop's own api_response is not.
    assert_eq!(all[3].kind, EventKind::Progress);
    assert!(!all[3].sidechain);
}

#[test]
fn events_carry_the_record_uuid_and_time_but_bookkeeping_no_time() {
    let all = events(&read(SESSION_A));
    assert_eq!(
        all[0].key.as_deref(),
        Some("5d41e729-5756-46df-ba2b-81cdc69d5cf7")
    );
    assert_eq!(
        all[0].at.map(|t| t.to_rfc3339()),
        Some("2026-12-02T09:39:50.878+00:00".to_string())
    );
    assert_eq!(all[1].kind, EventKind::Meta, "attribution_snapshot");
    assert_eq!(all[1].at, None);
}

#[test]
fn a_line_too_large_keeps_its_kind_ids_and_time() {
    let text = read(SESSION_B);
    for (n, want) in [
        (0, EventKind::UserPrompt),
        (12, result("call_0")),
        (31, EventKind::Interrupted),
    ] {
        let line = text.lines().nth(n).expect("line").as_bytes();
        let (head, tail) = (
            &line[..line.len().min(400)],
            &line[line.len().saturating_sub(300)..],
        );
        let e = parse_fragments(head, tail).expect("fragment event");
        assert_eq!(e.kind, want, "line {n}");
        let whole = parse_line(line).expect("whole");
        assert_eq!((e.key, e.at), (whole.key, whole.at), "line {n}");
    }
}

#[test]
fn a_rewind_leaves_the_abandoned_turn_out_of_the_answer() {
    let text = read("states/25-tool-done/chat.jsonl");
    let mut records: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // As 0.24.4 `rewindRecording` appends it: parent = the record before the rewound turn's
    // prompt ("RUNBASH now", line 6).
    let parent = records[6]["parentUuid"].clone();
    let rewind = serde_json::json!({"uuid": "rewind-1", "parentUuid": parent,
        "timestamp": "2026-12-02T09:50:00.000Z", "type": "system", "subtype": "rewind",
        "systemPayload": {}});
    assert_eq!(
        parse_line(rewind.to_string().as_bytes()).map(|e| e.kind),
        Some(EventKind::LocalCommand)
    );
    assert_eq!(
        last_answer_in(&records).map(|a| a.text).as_deref(),
        Some("Tool done.")
    );
    records.push(rewind);
    assert_eq!(
        last_answer_in(&records).map(|a| a.text).as_deref(),
        Some(ANSWER)
    );
}

#[test]
fn clearing_the_box_takes_two_presses_a_line() {
    assert_eq!(super::clear_presses(1), 2);
    assert_eq!(super::clear_presses(3), 6);
    assert_eq!(super::clear_presses(0), 2);
}

#[test]
fn the_approval_dialog_on_screen_is_a_request_with_numbered_keys() {
    use crate::agents::Agent;
    let screen = read("states/23-approval-pending/screen.txt");
    let d = crate::agents::qwen::Qwen
        .on_screen(&screen)
        .expect("the dialog");
    assert_eq!(d.request.tool, "Shell");
    assert_eq!(d.request.summary, "echo hello > hello.txt");
    assert_eq!(d.choices.allow, Some(vec!["1".to_string()]));
    assert_eq!(d.choices.always, Some(vec!["2".to_string()]));
    assert_eq!(d.choices.deny, Some(vec!["4".to_string()]));
    // The answered screen of the same session shows none.
    assert!(crate::agents::qwen::Qwen
        .on_screen(&read("states/25-tool-done/screen.txt"))
        .is_none());
}

#[test]
fn lines_of_the_command_are_never_its_options() {
    use crate::agents::Agent;
    use crate::read::dialog::with_option_like_lines;
    let screen = with_option_like_lines(
        &read("states/23-approval-pending/screen.txt"),
        "echo hello > hello.txt",
    );
    let d = crate::agents::qwen::Qwen
        .on_screen(&screen)
        .expect("the dialog");
    let keys = crate::read::dialog::single_keys(&d.choices);
    assert_eq!(keys, [Some("1"), Some("2"), Some("4")]);
    assert_eq!(d.options.len(), 4, "{:?}", d.options);
}
