//! What Gemini CLI's chat log says about usage: each reply (`"type": "gemini"`) carries the
//! model and `tokens {input, output, cached, thoughts, tool, total}`, the API's
//! `usageMetadata` (`input` is `promptTokenCount`, cached tokens included). A reply is written
//! again under its id once its tool calls complete: the key is the id, so it counts once.
//! Replies recorded again when a turn is rolled back have neither model nor tokens. No cost
//! and no context window are in the log.

use serde::Deserialize;

use crate::usage::Reading;

#[derive(Deserialize)]
struct Record {
    id: Option<String>,
    #[serde(rename = "type")]
    kind: Option<String>,
    timestamp: Option<String>,
    model: Option<String>,
    tokens: Option<Tokens>,
}

#[derive(Deserialize)]
struct Tokens {
    #[serde(default)]
    input: u64,
    #[serde(default)]
    output: u64,
    #[serde(default)]
    thoughts: u64,
}

/// The reading of one log line; `None` for a line that is no reply with tokens.
pub fn reading(line: &[u8]) -> Option<Reading> {
    if !crate::agents::fields::contains(line, b"\"tokens\"") {
        return None;
    }
    let r: Record = serde_json::from_slice(line).ok()?;
    if r.kind.as_deref() != Some("gemini") {
        return None;
    }
    let t = r.tokens?;
    Some(Reading {
        key: r.id,
        model: r.model,
        // What Gemini CLI itself shows as the context in use: the last prompt's count.
        context_tokens: Some(t.input),
        input: t.input,
        // Thinking is generated (and billed) like the answer; Gemini CLI counts it apart.
        output: t.output.saturating_add(t.thoughts),
        at: r
            .timestamp
            .as_deref()
            .and_then(crate::agents::fields::rfc3339),
        ..Reading::default()
    })
}

/// The context window of a Gemini model, as Gemini CLI 0.61's own table states it
/// (`tokenLimit`); any other model is unknown.
pub fn window(model: &str) -> Option<u64> {
    const MIB: u64 = 1_048_576;
    match model {
        "gemini-3-pro-preview"
        | "gemini-3.1-pro-preview"
        | "gemini-3-flash-preview"
        | "gemini-3.5-flash"
        | "gemini-3.1-flash-lite"
        | "gemini-2.5-pro"
        | "gemini-2.5-flash"
        | "gemini-2.5-flash-lite"
        | "gemini-2.0-flash" => Some(MIB),
        "gemma-4-31b-it" | "gemma-4-26b-a4b-it" => Some(256_000),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::usage::Tally;

    #[test]
    fn the_recorded_session_sums_each_reply_once() {
        // Nine reply records, three of them the same reply written again (its tool calls
        // completing), then a history restated without tokens: six requests of 10 in, 5 out.
        let mut t = Tally::default();
        for line in super::super::tests::log() {
            if let Some(r) = reading(line.as_bytes()) {
                t.push(r);
            }
        }
        let u = t.usage(window("gemini-2.5-flash"));
        assert_eq!(u.model.as_deref(), Some("gemini-2.5-flash"));
        assert_eq!((u.session_input, u.session_output), (Some(60), Some(30)));
        assert_eq!(u.context_tokens, Some(10));
        assert_eq!(u.context_window, Some(1_048_576));
        assert_eq!(u.cost_usd, None, "Gemini CLI records no cost");
    }

    #[test]
    fn a_rewound_reply_still_counts_and_a_restated_list_adds_nothing() {
        // Two prompts answered, then `/rewind` to the second: `$rewindTo`, and a `$set`
        // restating the remaining messages, the first reply with its tokens.
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/fixtures/real-clients/gemini-0.61.0/rewind.jsonl"
        );
        let mut t = Tally::default();
        for line in std::fs::read_to_string(path).unwrap().lines() {
            if let Some(r) = reading(line.as_bytes()) {
                t.push(r);
            }
        }
        let u = t.usage(None);
        assert_eq!((u.session_input, u.session_output), (Some(20), Some(10)));
    }

    #[test]
    fn a_reply_counts_thoughts_as_output_and_the_prompt_as_context() {
        let line = br#"{"id":"a","timestamp":"2026-12-01T22:30:00Z","type":"gemini","content":[],"tokens":{"input":1234,"output":56,"cached":200,"thoughts":7,"tool":0,"total":1297},"model":"gemini-2.5-pro"}"#;
        let r = reading(line).unwrap();
        let agent: &dyn crate::agents::Agent = &crate::agents::gemini::Gemini;
        assert_eq!(agent.usage(line), Some(r.clone()), "the adapter reads it");
        assert_eq!(
            agent.context_window("gemini-2.5-pro", None, std::path::Path::new("/nonexistent")),
            Some(1_048_576)
        );
        assert_eq!(
            (r.input, r.output, r.context_tokens),
            (1234, 63, Some(1234))
        );
        assert_eq!(r.key.as_deref(), Some("a"));
        assert!(r.at.is_some());
    }

    #[test]
    fn lines_without_usage_or_malformed_are_skipped() {
        for line in [
            &br#"{"$set":{"lastUpdated":"x"}}"#[..],
            br#"{"id":"u","type":"user","content":"tokens"}"#,
            br#"{"id":"g","type":"gemini","tokens":null}"#,
            br#"{"id":"g","type":"gemini","tokens":{"input":"many"}}"#,
            br#"{"id":"g","type":"gemini","tokens":{"inp"#,
            b"\xff\xfe\"tokens\"",
        ] {
            assert_eq!(reading(line), None, "{}", String::from_utf8_lossy(line));
        }
        assert_eq!(window("mock-model"), None);
    }
}
