//! What Copilot CLI's `events.jsonl` says about usage: one `session.usage_record` per model
//! call, `data.usage {model, inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens,
//! cost, maxPromptTokens}`. `inputTokens` is the whole prompt (the client adds the cached
//! tokens to it): the context in use. `maxPromptTokens` is the most the client sends: the
//! window. `cost` counts premium requests (the multiplier of the model), not money: it is
//! never shown as a cost. Each record is written once (its event `id` is the key).

use serde::Deserialize;

use crate::agents::fields;
use crate::usage::Reading;

#[derive(Deserialize)]
struct Record {
    id: Option<String>,
    #[serde(rename = "type")]
    kind: Option<String>,
    timestamp: Option<String>,
    data: Option<Data>,
}

#[derive(Deserialize)]
struct Data {
    usage: Option<Usage>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Usage {
    model: Option<String>,
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    max_prompt_tokens: Option<u64>,
}

/// The reading of one `events.jsonl` line; `None` for any other event.
pub fn reading(line: &[u8]) -> Option<Reading> {
    if !fields::contains(line, b"\"session.usage_record\"") {
        return None;
    }
    let r: Record = serde_json::from_slice(line).ok()?;
    if r.kind.as_deref() != Some("session.usage_record") {
        return None;
    }
    let u = r.data?.usage?;
    let input = u.input_tokens?;
    Some(Reading {
        key: r.id,
        model: u.model,
        context_tokens: Some(input),
        input,
        output: u.output_tokens.unwrap_or(0),
        context_window: u.max_prompt_tokens.filter(|&w| w > 0),
        at: r.timestamp.as_deref().and_then(fields::rfc3339),
        ..Reading::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::usage::Tally;

    fn fixture(name: &str) -> String {
        let path = format!(
            "{}/fixtures/real-clients/copilot-1.0.102/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    fn tally(text: &str) -> crate::usage::Usage {
        let mut t = Tally::default();
        for line in text.lines() {
            if let Some(r) = reading(line.as_bytes()) {
                t.push(r);
            }
        }
        t.usage(None)
    }

    #[test]
    fn the_recorded_session_sums_its_model_calls() {
        // Three calls of 10 in, 5 out (as the client's own shutdown summary says: 30 and
        // 15), then an abort, a 400 and a 429 (no call recorded).
        let u = tally(&fixture("turns.jsonl"));
        assert_eq!(u.model.as_deref(), Some("mock-model"));
        assert_eq!((u.session_input, u.session_output), (Some(30), Some(15)));
        assert_eq!(
            (u.context_tokens, u.context_window),
            (Some(10), Some(128_000))
        );
        assert_eq!(u.cost_usd, None, "premium requests are no money");
    }

    #[test]
    fn a_resumed_session_counts_both_processes_calls() {
        let text = fixture("two-processes.jsonl");
        let calls = text.matches("\"session.usage_record\"").count();
        assert!(calls >= 2, "{calls}");
        let u = tally(&text);
        assert_eq!(u.session_input, Some(10 * calls as u64));
    }

    #[test]
    fn a_call_gives_its_prompt_as_context() {
        let line = br#"{"type":"session.usage_record","data":{"usage":{"model":"gpt-5","inputTokens":1234,"outputTokens":56,"cacheReadTokens":200,"cacheWriteTokens":0,"cost":1.0,"maxPromptTokens":272000}},"id":"e1","timestamp":"2026-12-02T09:37:36.929Z","parentId":null}"#;
        let r = reading(line).unwrap();
        assert_eq!(
            (r.context_tokens, r.input, r.output),
            (Some(1234), 1234, 56)
        );
        assert_eq!((r.context_window, r.cost_usd), (Some(272_000), None));
        let agent: &dyn crate::agents::Agent = &crate::agents::copilot::Copilot;
        assert_eq!(agent.usage(line), Some(r));
    }

    #[test]
    fn other_events_and_malformed_records_are_skipped() {
        for line in [
            &br#"{"type":"assistant.message","data":{"content":"\"session.usage_record\""}}"#[..],
            br#"{"type":"session.usage_record","data":{}}"#,
            br#"{"type":"session.usage_record","data":{"usage":{"inputTokens":"x"}}}"#,
            br#"{"type":"session.usage_record","data":{"usage":{"inputTok"#,
        ] {
            assert_eq!(reading(line), None, "{}", String::from_utf8_lossy(line));
        }
    }
}
