//! What pi's session log says about usage: each assistant message carries its `model` and
//! `usage {input, output, cacheRead, cacheWrite, totalTokens, cost {total}}` (`input` without
//! the cached tokens; `cost` priced by pi from its own model table). The context in use is
//! counted as pi counts it: the last assistant message's `totalTokens` (else the sum of the
//! four), passing over aborted and failed ones (their counts are zero). Each message is
//! written once (its entry `id` is the key).
//!
//! The window is not in the log: pi knows each model's `contextWindow` from its model table
//! and `<agent dir>/models.json` ([`window_in`]).

use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use crate::agents::fields;
use crate::usage::Reading;

#[derive(Deserialize)]
struct Entry {
    id: Option<String>,
    #[serde(rename = "type")]
    kind: Option<String>,
    timestamp: Option<String>,
    message: Option<Message>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Message {
    role: Option<String>,
    model: Option<String>,
    stop_reason: Option<String>,
    usage: Option<Usage>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Usage {
    input: u64,
    output: u64,
    #[serde(default)]
    cache_read: u64,
    #[serde(default)]
    cache_write: u64,
    #[serde(default)]
    total_tokens: u64,
    cost: Option<Cost>,
}

#[derive(Deserialize)]
struct Cost {
    total: Option<f64>,
}

/// The reading of one log line; `None` for a line that is no assistant message with usage.
pub fn reading(line: &[u8]) -> Option<Reading> {
    if !fields::contains(line, b"\"usage\"") {
        return None;
    }
    let e: Entry = serde_json::from_slice(line).ok()?;
    let m = e.message.filter(|_| e.kind.as_deref() == Some("message"))?;
    if m.role.as_deref() != Some("assistant") {
        return None;
    }
    let u = m.usage?;
    let sent = u
        .input
        .saturating_add(u.cache_read)
        .saturating_add(u.cache_write);
    let counted = !matches!(m.stop_reason.as_deref(), Some("aborted" | "error"));
    let context = match u.total_tokens {
        0 => sent.saturating_add(u.output),
        total => total,
    };
    Some(Reading {
        key: e.id,
        model: m.model,
        context_tokens: counted.then_some(context),
        input: sent,
        output: u.output,
        cost_usd: u.cost.and_then(|c| c.total).filter(|c| c.is_finite()),
        at: e.timestamp.as_deref().and_then(fields::rfc3339),
        ..Reading::default()
    })
}

/// The context window `models.json` (in pi's agent dir `agent_dir`) gives `model`: a custom
/// model's `contextWindow` (pi's default of 128000 when it states none), or a provider's
/// `modelOverrides` for a built-in model. `None` when the file does not name the model, cannot
/// be read, or is not plain JSON (pi also accepts comments in it).
pub fn window_in(agent_dir: &Path, model: &str) -> Option<u64> {
    let text = std::fs::read(agent_dir.join("models.json")).ok()?;
    let config: Value = serde_json::from_slice(&text).ok()?;
    for provider in config.get("providers")?.as_object()?.values() {
        let custom = provider
            .get("models")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .find(|m| m.get("id").and_then(Value::as_str) == Some(model));
        if let Some(m) = custom {
            return m.get("contextWindow").map_or(Some(128_000), Value::as_u64);
        }
        let overridden = provider
            .get("modelOverrides")
            .and_then(|o| o.get(model))
            .and_then(|o| o.get("contextWindow"))
            .and_then(Value::as_u64);
        if overridden.is_some() {
            return overridden;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::usage::Tally;

    const SESSION: &str = include_str!("../../../fixtures/real-clients/pi-0.73.1/session.jsonl");

    #[test]
    fn the_recorded_session_sums_its_replies_and_skips_failed_ones_for_context() {
        // Three replies of 10 in, 5 out (15 in all, as pi counts the context), then an
        // aborted reply and failed ones, all zero.
        let mut t = Tally::default();
        let mut last = None;
        for line in SESSION.lines() {
            if let Some(r) = reading(line.as_bytes()) {
                last = Some(r.clone());
                t.push(r);
            }
        }
        assert_eq!(last.unwrap().context_tokens, None, "a failed reply");
        let u = t.usage(Some(128_000));
        assert_eq!(u.model.as_deref(), Some("mock-model"));
        assert_eq!((u.session_input, u.session_output), (Some(30), Some(15)));
        assert_eq!(u.context_tokens, Some(15));
        assert_eq!(
            u.cost_usd,
            Some(0.0),
            "pi records a cost, zero for this model"
        );
    }

    #[test]
    fn a_reply_with_cache_counts_it_as_sent() {
        let line = br#"{"type":"message","id":"m1","parentId":"u1","timestamp":"2026-12-02T12:36:50.000Z","message":{"role":"assistant","content":[],"api":"openai-completions","provider":"mock","model":"mock-model","usage":{"input":1034,"output":56,"cacheRead":200,"cacheWrite":0,"totalTokens":1290,"cost":{"input":0.001,"output":0.002,"cacheRead":0,"cacheWrite":0,"total":0.003}},"stopReason":"stop","timestamp":1796200000000}}"#;
        let r = reading(line).unwrap();
        assert_eq!(
            (r.input, r.output, r.context_tokens),
            (1234, 56, Some(1290))
        );
        assert_eq!(r.cost_usd, Some(0.003));
        let agent: &dyn crate::agents::Agent = &crate::agents::pi::Pi;
        assert_eq!(agent.usage(line), Some(r));
    }

    #[test]
    fn the_window_comes_from_models_json() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(window_in(dir.path(), "mock-model"), None, "no file");
        std::fs::write(
            dir.path().join("models.json"),
            r#"{"providers":{"mock":{"baseUrl":"http://x","api":"openai-completions","models":[{"id":"mock-model","contextWindow":64000},{"id":"plain"}]},
               "anthropic":{"modelOverrides":{"claude-x":{"contextWindow":1000000}}}}}"#,
        )
        .unwrap();
        assert_eq!(window_in(dir.path(), "mock-model"), Some(64_000));
        assert_eq!(
            window_in(dir.path(), "plain"),
            Some(128_000),
            "pi's default"
        );
        assert_eq!(window_in(dir.path(), "claude-x"), Some(1_000_000));
        assert_eq!(window_in(dir.path(), "other"), None);
        let home = dir.path().parent().unwrap();
        let agent: &dyn crate::agents::Agent = &crate::agents::pi::Pi;
        assert_eq!(
            agent.context_window("mock-model", None, home),
            None,
            "not its agent dir"
        );
        std::fs::write(dir.path().join("models.json"), "// comment\n{").unwrap();
        assert_eq!(window_in(dir.path(), "mock-model"), None);
    }

    #[test]
    fn other_lines_and_malformed_usage_are_skipped() {
        for line in [
            &br#"{"type":"message","id":"u","message":{"role":"user","content":"usage","usage":{"input":1,"output":1}}}"#[..],
            br#"{"type":"message","id":"a","message":{"role":"assistant","usage":{"input":-5,"output":1}}}"#,
            br#"{"type":"message","id":"a","message":{"role":"assistant","usage":null}}"#,
            br#"{"type":"model_change","usage":{}}"#,
            br#"{"type":"message","id":"a","message":{"role":"assistant","usage":{"inp"#,
        ] {
            assert_eq!(reading(line), None, "{}", String::from_utf8_lossy(line));
        }
    }
}
