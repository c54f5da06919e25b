//! The JSON Claude Code gives its `statusLine` command on stdin (2.1.332: `session_id`,
//! `model.id`, `cost.total_cost_usd`, `context_window {context_window_size, current_usage}`
//! and, for a claude.ai login or a gateway token only, `rate_limits.five_hour` and
//! `rate_limits.seven_day` as `{used_percentage, resets_at}` with the reset in Unix
//! seconds), read as plan windows and this session's usage.

use serde_json::Value;

use crate::events::{AgentKind, Time};
use crate::limits::StatusLine;
use crate::usage::{Limit, Usage};

/// The plan windows Claude Code names, as agentpane names them, with their length.
const WINDOWS: [(&str, &str, u64); 2] = [
    ("five_hour", "5h", 5 * 60),
    ("seven_day", "7d", 7 * 24 * 60),
];

/// The plan windows of one status-line input (`5h`, `7d`), seen at `now`; none when it carries
/// no `rate_limits` (an API key, Bedrock or Vertex, or a client before 2.1.80).
pub fn claude_limits(input: &Value, now: Time) -> Vec<Limit> {
    WINDOWS
        .iter()
        .filter_map(|(key, name, minutes)| {
            let w = &input["rate_limits"][key];
            let used = w["used_percentage"]
                .as_f64()
                .filter(|u| u.is_finite() && *u >= 0.0)?;
            let resets_at = w["resets_at"]
                .as_i64()
                .and_then(|s| chrono::DateTime::from_timestamp(s, 0));
            Some(Limit {
                agent: AgentKind::Claude,
                name: (*name).to_string(),
                used_percent: used.min(100.0),
                window_minutes: Some(*minutes),
                resets_at,
                seen_at: Some(now),
            })
        })
        .collect()
}

/// This session's usage as the input states it: the model, the last request's prompt (input +
/// cache read + cache creation) against the model's window, and Claude Code's own cost. The
/// session's token totals are not in it (2.1.332's `total_input_tokens` is the last request).
pub fn claude_usage(input: &Value) -> Usage {
    let cw = &input["context_window"];
    let now = &cw["current_usage"];
    let context_tokens = now.is_object().then(|| {
        [
            "input_tokens",
            "cache_read_input_tokens",
            "cache_creation_input_tokens",
        ]
        .iter()
        .map(|k| now[k].as_u64().unwrap_or(0))
        .sum::<u64>()
    });
    let context_window = cw["context_window_size"].as_u64().filter(|w| *w > 0);
    let context_percent = match (context_tokens, context_window) {
        (Some(t), Some(w)) => Some(t as f64 * 100.0 / w as f64),
        _ => None,
    };
    Usage {
        model: input["model"]["id"].as_str().map(str::to_string),
        context_tokens,
        context_window,
        context_percent,
        session_input: None,
        session_output: None,
        cost_usd: input["cost"]["total_cost_usd"]
            .as_f64()
            .filter(|c| c.is_finite() && *c >= 0.0),
    }
}

/// One status-line input read whole; an input that is not a JSON object says nothing.
pub fn read(input: &[u8], now: Time) -> StatusLine {
    let Ok(value) = serde_json::from_slice::<Value>(input) else {
        return StatusLine::default();
    };
    if !value.is_object() {
        return StatusLine::default();
    }
    StatusLine {
        session_id: value["session_id"].as_str().map(str::to_string),
        limits: claude_limits(&value, now),
        usage: claude_usage(&value),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> Vec<u8> {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/real-clients/claude-2.1.332")
            .join(name);
        std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    fn at(secs: i64) -> Time {
        chrono::DateTime::from_timestamp(secs, 0).unwrap()
    }

    #[test]
    fn the_real_2_1_332_input_gives_both_plan_windows_and_the_usage() {
        let now = at(1_796_612_179);
        let s = read(&fixture("statusline-rate-limits.json"), now);
        assert_eq!(
            s.session_id.as_deref(),
            Some("a9e1eeeb-5b30-4fef-8858-ecbba7985264")
        );
        assert_eq!(
            s.limits,
            vec![
                Limit {
                    agent: AgentKind::Claude,
                    name: "5h".into(),
                    used_percent: 62.0,
                    window_minutes: Some(300),
                    resets_at: Some(at(1_796_616_361)),
                    seen_at: Some(now),
                },
                Limit {
                    agent: AgentKind::Claude,
                    name: "7d".into(),
                    used_percent: 21.0,
                    window_minutes: Some(10080),
                    resets_at: Some(at(1_796_871_361)),
                    seen_at: Some(now),
                },
            ]
        );
        assert_eq!(s.usage.model.as_deref(), Some("claude-opus-5-5"));
        assert_eq!(s.usage.context_tokens, Some(1200 + 4500 + 300));
        assert_eq!(s.usage.context_window, Some(1_000_000));
        assert_eq!(s.usage.context_percent, Some(0.6));
        assert_eq!(s.usage.cost_usd, Some(0.008039999999999999));
        assert_eq!(s.usage.session_input, None);
    }

    #[test]
    fn the_first_input_before_any_request_has_no_windows_and_no_context() {
        let s = read(&fixture("statusline-first.json"), at(0));
        assert!(s.limits.is_empty());
        assert_eq!(s.usage.context_tokens, None);
        assert_eq!(s.usage.context_percent, None);
        assert_eq!(s.usage.context_window, Some(1_000_000));
        assert_eq!(s.usage.cost_usd, Some(0.0));
    }

    #[test]
    fn bad_input_says_nothing_and_never_panics() {
        for input in [
            &b""[..],
            b"[]",
            b"nul",
            b"{\"rate_limits\": 5}",
            b"\xff\xfe",
        ] {
            let s = read(input, at(0));
            assert!(s.limits.is_empty(), "{input:?}");
        }
        let odd = br#"{"rate_limits":{"five_hour":{"used_percentage":-3,"resets_at":1},
            "seven_day":{"used_percentage":250,"resets_at":"soon"}}}"#;
        let s = read(odd, at(0));
        assert_eq!(s.limits.len(), 1);
        assert_eq!(s.limits[0].used_percent, 100.0);
        assert_eq!(s.limits[0].resets_at, None);
    }
}
