//! Qwen Code's last answer and its log's recognition as `agentpane last` and `classify` read
//! them, against what Qwen Code 0.24.4 really wrote (fixtures/real-clients/qwen-0.24.4).

use agentpane::read::Budget;

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

#[test]
fn the_last_answer_is_the_newest_finished_reply() {
    let answer =
        |rel: &str| last_answer(&format!("{FIXTURES}/{rel}"), Budget::default()).map(|a| a.text);
    assert_eq!(
        answer("states/03-answer-done/chat.jsonl").as_deref(),
        Some(ANSWER)
    );
    // A tool call's record has usage too, but no answer; the reply after the result is one.
    assert_eq!(
        answer("states/23-approval-pending/chat.jsonl").as_deref(),
        Some(ANSWER)
    );
    assert_eq!(answer(SESSION_B).as_deref(), Some("Tool done."));
    // The interrupted reply is no answer: the one before it is.
    assert_eq!(
        answer("states/06-interrupted/chat.jsonl").as_deref(),
        Some("Tool done.")
    );
    // A turn that failed has none, and the reply before it does not stand in.
    assert_eq!(answer("states/09-badreq/chat.jsonl"), None);
    assert_eq!(answer(SESSION_A), None, "it ends in an HTTP 400");
}

/// The last answer as `agentpane last` reads it.
fn last_answer(path: &str, budget: Budget) -> Option<agentpane::events::Answer> {
    agentpane::extract::transcript::last_answer_within(
        std::path::Path::new(path),
        Some(agentpane::events::AgentKind::Qwen),
        budget,
    )
    .expect("read")
}

#[test]
fn a_qwen_log_given_without_its_agent_is_read_as_qwen() {
    let path = std::path::Path::new(FIXTURES).join("states/25-tool-done/chat.jsonl");
    let answer = agentpane::extract::transcript::last_answer_within(&path, None, Budget::default())
        .expect("read")
        .expect("an answer");
    assert_eq!(answer.agent, agentpane::events::AgentKind::Qwen);
    assert_eq!(answer.text, "Tool done.");
    for line in read(SESSION_B).lines() {
        assert_eq!(
            agentpane::agents::detect_line(line.as_bytes()),
            Some(agentpane::events::AgentKind::Qwen),
            "{line}"
        );
    }
}
