//! Property tests on the line parsers and the classifier: arbitrary bytes and arbitrary records
//! built from the transcript vocabulary never panic, and classification is total.

use agentpane::agents;
use agentpane::events::{AgentKind, Event};
use agentpane::state::{classify, Observation, State, Windows};
use proptest::prelude::*;
use serde_json::{json, Map, Value};

fn vocab_string() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("user".to_string()),
        Just("assistant".to_string()),
        Just("system".to_string()),
        Just("progress".to_string()),
        Just("event_msg".to_string()),
        Just("response_item".to_string()),
        Just("tool_use".to_string()),
        Just("tool_result".to_string()),
        Just("text".to_string()),
        Just("end_turn".to_string()),
        Just("task_complete".to_string()),
        Just("function_call".to_string()),
        Just("[Request interrupted by user]".to_string()),
        Just("<command-name>/x</command-name>".to_string()),
        Just("2026-02-10T21:00:00Z".to_string()),
        Just("not a time".to_string()),
        ".{0,12}",
    ]
}

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("type"),
        Just("subtype"),
        Just("message"),
        Just("content"),
        Just("stop_reason"),
        Just("timestamp"),
        Just("uuid"),
        Just("isSidechain"),
        Just("isMeta"),
        Just("id"),
        Just("payload"),
        Just("tool_use_id"),
        Just("call_id"),
        Just("name"),
        Just("text"),
        Just("isApiErrorMessage"),
        Just("error"),
        Just("rate_limits"),
        Just("model"),
        Just("rate_limit_reached_type"),
        Just("turn_id"),
        Just("role"),
        Just("phase"),
    ]
    .prop_map(str::to_string)
}

fn value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        vocab_string().prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((key(), inner), 0..6)
                .prop_map(|kv| Value::Object(kv.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

fn parse_all(agent: AgentKind, lines: &[Value]) -> Vec<Event> {
    lines
        .iter()
        .filter_map(|l| agents::parse_line(agent, l.to_string().as_bytes()))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..400)) {
        let _ = agents::parse_line(AgentKind::Claude, &bytes);
        let _ = agents::parse_line(AgentKind::Codex, &bytes);
        let _ = agents::detect_line(&bytes);
        let _ = agents::parse_fragments(AgentKind::Claude, &bytes, &bytes);
        let _ = agents::parse_fragments(AgentKind::Codex, &bytes, &bytes);
        let _ = agents::parse_line(AgentKind::Pi, &bytes);
        let _ = agents::parse_fragments(AgentKind::Pi, &bytes, &bytes);
    }

    #[test]
    fn arbitrary_records_classify_to_a_real_state(
        lines in prop::collection::vec(value(), 0..12),
        now_offset in 0i64..100_000,
        seen in any::<bool>(),
    ) {
        let now = chrono::DateTime::parse_from_rfc3339("2026-02-10T21:00:00Z").unwrap()
            .with_timezone(&chrono::Utc) + chrono::Duration::seconds(now_offset);
        for agent in [AgentKind::Claude, AgentKind::Codex] {
            let events = parse_all(agent, &lines);
            let s = classify(&events, now, &Windows::default(), Observation { seen_working: seen, ..Observation::default() });
            prop_assert_ne!(s.state, State::None);
            prop_assert_ne!(s.state, State::Waiting, "transcripts alone never claim a permission wait");
        }
    }
}
