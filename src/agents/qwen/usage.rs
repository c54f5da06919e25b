//! What Qwen Code's chat log says about usage. Two kinds of record carry it:
//! - a main-thread reply (`"type": "assistant"`) holds the model as configured and the API's
//!   `usageMetadata` (`promptTokenCount`, cached tokens included): the context in use;
//! - a `ui_telemetry` record `qwen-code.api_response` holds the counts of every request the
//!   client made, its side requests (the memory extractor, the session title) included: the
//!   session's tokens, as Qwen Code's own `/stats` sums them.
//!
//! Each is written once (its `uuid` is the key). No cost and no context window are in the log.

use serde::Deserialize;
use serde_json::Value;

use crate::agents::fields;
use crate::usage::Reading;

#[derive(Deserialize)]
struct Record {
    uuid: Option<String>,
    #[serde(rename = "type")]
    kind: Option<String>,
    subtype: Option<String>,
    timestamp: Option<String>,
    model: Option<String>,
    #[serde(rename = "usageMetadata")]
    usage: Option<Metadata>,
    #[serde(rename = "systemPayload")]
    payload: Option<Payload>,
}

#[derive(Deserialize)]
struct Metadata {
    #[serde(rename = "promptTokenCount")]
    prompt: Option<u64>,
}

#[derive(Deserialize)]
struct Payload {
    #[serde(rename = "uiEvent")]
    event: Option<Value>,
}

/// The reading of one log line; `None` for a line that says nothing about usage.
pub fn reading(line: &[u8]) -> Option<Reading> {
    let reply = fields::contains(line, b"\"usageMetadata\"");
    if !reply && !fields::contains(line, b"qwen-code.api_response") {
        return None;
    }
    let r: Record = serde_json::from_slice(line).ok()?;
    let at = r.timestamp.as_deref().and_then(fields::rfc3339);
    match (r.kind.as_deref(), r.subtype.as_deref()) {
        (Some("assistant"), _) => Some(Reading {
            key: r.uuid,
            model: r.model,
            context_tokens: Some(r.usage?.prompt?),
            at,
            ..Reading::default()
        }),
        (Some("system"), Some("ui_telemetry")) => {
            let e = r.payload?.event?;
            if e.get("event.name")?.as_str()? != "qwen-code.api_response" {
                return None;
            }
            let count = |k: &str| e.get(k).and_then(Value::as_u64);
            Some(Reading {
                key: r.uuid,
                input: count("input_token_count")?,
                // Thinking is generated like the answer; Qwen Code counts it apart.
                output: count("output_token_count")?
                    .saturating_add(count("thoughts_token_count").unwrap_or(0)),
                at,
                ..Reading::default()
            })
        }
        _ => None,
    }
}

/// The context window of a Qwen model, as Qwen Code 0.24.4's own table states it for its
/// own models (after dropping a `provider/` prefix); any other model is unknown.
pub fn window(model: &str) -> Option<u64> {
    let m = model
        .rsplit('/')
        .next()
        .unwrap_or(model)
        .to_ascii_lowercase();
    let qwen3_dot = m
        .strip_prefix("qwen3.")
        .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit()));
    if m.starts_with("qwen3-coder-plus")
        || m.starts_with("qwen3-coder-flash")
        || qwen3_dot
        || m == "qwen-plus-latest"
        || m == "qwen-flash-latest"
        || m == "coder-model"
    {
        Some(1_000_000)
    } else if m.starts_with("qwen") {
        Some(262_144)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::usage::Tally;

    const SESSION_A: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/real-clients/qwen-0.24.4/projects/-tmp-qwenrec-work-demo/chats/",
        "9027fcf2-d57d-45b6-b91e-ffb47ca01e86.jsonl"
    );

    #[test]
    fn the_recorded_session_counts_every_request_and_the_last_prompt() {
        // Three replies of the main thread and one request of the memory extractor, each
        // 10 in, 5 out (the stand-in's counts); then a 400 (no usage).
        let mut t = Tally::default();
        for line in std::fs::read_to_string(SESSION_A).unwrap().lines() {
            if let Some(r) = reading(line.as_bytes()) {
                t.push(r);
            }
        }
        let u = t.usage(window("mock-model"));
        assert_eq!(u.model.as_deref(), Some("mock-model"));
        assert_eq!((u.session_input, u.session_output), (Some(40), Some(20)));
        assert_eq!(u.context_tokens, Some(10));
        assert_eq!((u.context_window, u.cost_usd), (None, None));
    }

    #[test]
    fn a_reply_gives_the_context_and_a_response_the_counts() {
        let reply = br#"{"uuid":"a","timestamp":"2026-12-02T09:42:24Z","type":"assistant","model":"qwen3-coder-plus","message":{},"usageMetadata":{"promptTokenCount":1234,"candidatesTokenCount":56,"cachedContentTokenCount":200,"totalTokenCount":1290}}"#;
        let r = reading(reply).unwrap();
        assert_eq!((r.context_tokens, r.input, r.output), (Some(1234), 0, 0));
        let agent: &dyn crate::agents::Agent = &crate::agents::qwen::Qwen;
        assert_eq!(agent.usage(reply), Some(r));
        let response = br#"{"uuid":"b","type":"system","subtype":"ui_telemetry","systemPayload":{"uiEvent":{"event.name":"qwen-code.api_response","input_token_count":1234,"output_token_count":56,"thoughts_token_count":4}}}"#;
        let r = reading(response).unwrap();
        assert_eq!((r.context_tokens, r.input, r.output), (None, 1234, 60));
        let home = std::path::Path::new("/nonexistent");
        assert_eq!(
            agent.context_window("qwen3-coder-plus", None, home),
            Some(1_000_000)
        );
        assert_eq!(window("openai/qwen3.5-max"), Some(1_000_000));
        assert_eq!(window("qwen-turbo"), Some(262_144));
        assert_eq!(window("gpt-4o"), None);
    }

    #[test]
    fn lines_without_usage_or_malformed_are_skipped() {
        for line in [
            &br#"{"uuid":"u","type":"user","message":{"parts":[{"text":"usageMetadata"}]}}"#[..],
            br#"{"uuid":"a","type":"assistant","usageMetadata":{}}"#,
            br#"{"uuid":"a","type":"assistant","usageMetadata":{"promptTokenCount":-1}}"#,
            br#"{"type":"system","subtype":"ui_telemetry","systemPayload":{"uiEvent":{"event.name":"qwen-code.api_error"}}} qwen-code.api_response"#,
            br#"{"type":"system","subtype":"ui_telemetry","systemPayload":{"uiEvent":{"event.name":"qwen-code.api_response"}}}"#,
            br#"{"uuid":"a","type":"assistant","usageMetadata":{"prompt"#,
        ] {
            assert_eq!(reading(line), None, "{}", String::from_utf8_lossy(line));
        }
    }
}
