//! What a Codex rollout says about usage (docs/design.md#usage): `event_msg` `token_count`
//! records (`info.last_token_usage` for the context in use, `info.total_token_usage` as the
//! session's running totals, `info.model_context_window`, and the plan windows in
//! `rate_limits.primary/secondary` when the server sent its `x-codex-*` headers), and the model
//! of each `turn_context`. Codex logs no cost.

use serde_json::Value;

use crate::events::{AgentKind, Time};
use crate::usage::{Limit, Reading};

/// One rollout line's usage: `None` for a line that says nothing about it.
pub fn usage(line: &[u8]) -> Option<Reading> {
    let fields = crate::agents::fields::contains;
    if !fields(line, b"\"token_count\"") && !fields(line, b"\"turn_context\"") {
        return None;
    }
    let v: Value = serde_json::from_slice(line).ok()?;
    let at = crate::agents::fields::time(v.get("timestamp"));
    let p = v.get("payload")?;
    match v.get("type")?.as_str()? {
        "turn_context" => Some(Reading {
            model: Some(p.get("model")?.as_str()?.to_string()),
            at,
            ..Reading::default()
        }),
        "event_msg" if p.get("type")?.as_str()? == "token_count" => Some(token_count(p, at)),
        _ => None,
    }
}

fn token_count(p: &Value, at: Option<Time>) -> Reading {
    let info = p.get("info").filter(|i| !i.is_null());
    let n = |u: &Value, k: &str| u.get(k).and_then(Value::as_u64);
    let last = info.and_then(|i| i.get("last_token_usage"));
    let total = info.and_then(|i| i.get("total_token_usage"));
    Reading {
        // As Codex counts the context in use: the last request's tokens, in and out.
        context_tokens: last.and_then(|u| {
            n(u, "total_tokens")
                .or_else(|| Some(n(u, "input_tokens")? + n(u, "output_tokens").unwrap_or(0)))
        }),
        totals: total.and_then(|u| Some((n(u, "input_tokens")?, n(u, "output_tokens")?))),
        context_window: info.and_then(|i| n(i, "model_context_window")),
        limits: ["primary", "secondary"]
            .into_iter()
            .filter_map(|which| limit(p.get("rate_limits")?.get(which)?, which, at))
            .collect(),
        at,
        ..Reading::default()
    }
}

/// One plan window, named by its length (`5h`, `7d`) when stated, else `primary` or
/// `secondary`. The reset is `resets_at` (epoch seconds), or older Codex's
/// `resets_in_seconds` after the record's time.
fn limit(w: &Value, which: &str, at: Option<Time>) -> Option<Limit> {
    let used_percent = w.get("used_percent")?.as_f64()?;
    let window_minutes = w.get("window_minutes").and_then(Value::as_u64);
    let resets_at = match w.get("resets_at").and_then(Value::as_i64) {
        Some(s) => chrono::DateTime::from_timestamp(s, 0),
        None => w
            .get("resets_in_seconds")
            .and_then(Value::as_i64)
            .zip(at)
            .map(|(s, at)| at + chrono::Duration::seconds(s)),
    };
    Some(Limit {
        agent: AgentKind::Codex,
        name: window_minutes.map_or_else(|| which.to_string(), crate::usage::window_name),
        used_percent,
        window_minutes,
        resets_at,
        seen_at: at,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::usage::Tally;
    use std::path::Path;

    fn tally(rel: &str) -> Tally {
        let log = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)).unwrap();
        let mut t = Tally::default();
        log.lines()
            .filter_map(|l| usage(l.as_bytes()))
            .for_each(|r| t.push(r));
        t
    }

    #[test]
    fn a_real_rollout_gives_its_tokens_window_model_and_plan_windows() {
        let t = tally("fixtures/real/codex/kvsankar-agent-history/session-01.jsonl");
        let u = t.usage(None);
        assert_eq!(u.model.as_deref(), Some("gpt-5.5"));
        assert_eq!(u.context_tokens, Some(22549));
        assert_eq!(u.context_window, Some(258400));
        assert_eq!((u.session_input, u.session_output), (Some(22539), Some(10)));
        assert_eq!(u.cost_usd, None);
        let at = chrono::DateTime::parse_from_rfc3339("2026-06-05T04:58:26.707Z")
            .unwrap()
            .with_timezone(&chrono::Utc);
        assert_eq!(
            t.limits(),
            &[
                Limit {
                    agent: AgentKind::Codex,
                    name: "5h".into(),
                    used_percent: 15.0,
                    window_minutes: Some(300),
                    resets_at: chrono::DateTime::from_timestamp(1780638395, 0),
                    seen_at: Some(at),
                },
                Limit {
                    agent: AgentKind::Codex,
                    name: "7d".into(),
                    used_percent: 5.0,
                    window_minutes: Some(10080),
                    resets_at: chrono::DateTime::from_timestamp(1781146208, 0),
                    seen_at: Some(at),
                },
            ]
        );
    }

    #[test]
    fn a_released_clients_rollout_without_plan_windows_has_none() {
        let t = tally("fixtures/real-clients/codex-0.171.0/escape-stream-and-approval.jsonl");
        let u = t.usage(None);
        assert_eq!(u.context_window, Some(258400));
        assert!(t.limits().is_empty());
        assert!(u.session_input.is_some());
    }

    #[test]
    fn older_relative_resets_and_empty_info() {
        let line = br#"{"timestamp":"2025-09-27T15:00:00Z","type":"event_msg","payload":{"type":"token_count","info":null,"rate_limits":{"primary":{"used_percent":7.0,"window_minutes":300,"resets_in_seconds":60}}}}"#;
        let r = usage(line).unwrap();
        assert_eq!(r.context_tokens, None);
        assert_eq!(r.totals, None);
        assert_eq!(
            r.limits[0].resets_at.unwrap().to_rfc3339(),
            "2025-09-27T15:01:00+00:00"
        );
    }
}
