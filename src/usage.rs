//! What a session has used and what an account has left (docs/design.md#usage): the numbers
//! each agent writes in its own log, read as [`Reading`]s one record at a time and summed by a
//! [`Tally`] as the log grows. Agent-neutral and pure; each agent's adapter says what its
//! records hold ([`crate::agents::Agent::usage`]).

use std::num::NonZeroUsize;

use lru::LruCache;
use serde::{Deserialize, Serialize};

use crate::events::{AgentKind, Time};

/// What one log record says about usage. Every field the record does not state is `None`
/// (or zero for the per-request counts it does not carry).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Reading {
    /// A record that repeats an earlier record's key is the same request written again (one
    /// API message streamed over several lines): it replaces that record's counts instead of
    /// adding to them.
    pub key: Option<String>,
    /// The model that answered.
    pub model: Option<String>,
    /// The prompt of this request, in tokens, as the agent counts it (input + cache read +
    /// cache creation for Claude Code): the context in use now.
    pub context_tokens: Option<u64>,
    /// Tokens this request sent (all input, cached included) and received.
    pub input: u64,
    pub output: u64,
    /// What this request cost, when the agent records it (never priced by agentpane).
    pub cost_usd: Option<f64>,
    /// The model's context window, when the record states it.
    pub context_window: Option<u64>,
    /// The session's totals (in, out) as the record states them (Codex's running total):
    /// they replace the sums so far.
    pub totals: Option<(u64, u64)>,
    /// The plan windows the record reveals (Codex's rate limits).
    pub limits: Vec<Limit>,
    /// The record's own time.
    pub at: Option<Time>,
}

/// One plan or account limit window an agent revealed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Limit {
    pub agent: AgentKind,
    /// The window's name as agentpane shows it: `5h`, `7d`, `primary`, …
    pub name: String,
    /// How much of the window is used, 0–100.
    pub used_percent: f64,
    /// The window's length, when stated.
    pub window_minutes: Option<u64>,
    /// When the window resets, when stated.
    pub resets_at: Option<Time>,
    /// When the agent said so (the record's time).
    pub seen_at: Option<Time>,
}

/// A session's usage as `panes --json` and `usage` show it; `None` where unknown.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    pub model: Option<String>,
    pub context_tokens: Option<u64>,
    pub context_window: Option<u64>,
    pub context_percent: Option<f64>,
    pub session_input: Option<u64>,
    pub session_output: Option<u64>,
    pub cost_usd: Option<f64>,
}

/// A session's usage and the plan windows it revealed: what one pane's report carries.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Metered {
    pub usage: Usage,
    pub limits: Vec<Limit>,
}

/// Every plan window once, the newest word on each (an account's window is the same for all
/// its sessions: the session that spoke last knows best), tightest first.
pub fn merge_limits<'a>(all: impl IntoIterator<Item = &'a Limit>) -> Vec<Limit> {
    let mut out: Vec<Limit> = Vec::new();
    for l in all {
        match out
            .iter_mut()
            .find(|o| o.agent == l.agent && o.name == l.name)
        {
            Some(o) if o.seen_at < l.seen_at => *o = l.clone(),
            Some(_) => {}
            None => out.push(l.clone()),
        }
    }
    out.sort_by(|a, b| b.used_percent.total_cmp(&a.used_percent));
    out
}

/// A token count, short: `950`, `12.3k`, `1.2M`.
pub fn tokens(n: u64) -> String {
    match n {
        n if n < 1_000 => n.to_string(),
        n if n < 1_000_000 => format!("{:.1}k", n as f64 / 1e3),
        n => format!("{:.1}M", n as f64 / 1e6),
    }
}

/// The context in use, compact: `9%` of a known window, the tokens when the window is
/// unknown, `-` when nothing is known.
pub fn context_cell(u: &Usage) -> String {
    match (u.context_percent, u.context_tokens) {
        (Some(p), _) => format!("{p:.0}%"),
        (None, Some(t)) => tokens(t),
        (None, None) => "-".into(),
    }
}

/// The cost, compact: `$1.23`, `-` when the agent records none.
pub fn cost_cell(u: &Usage) -> String {
    u.cost_usd.map_or("-".into(), |c| format!("${c:.2}"))
}

/// A window's name from its length: `5h`, `7d`, else minutes (`90m`).
pub fn window_name(minutes: u64) -> String {
    match minutes {
        m if m > 0 && m % 1440 == 0 => format!("{}d", m / 1440),
        m if m > 0 && m % 60 == 0 => format!("{}h", m / 60),
        m => format!("{m}m"),
    }
}

/// How many recent request keys a [`Tally`] remembers to replace a request written again.
const KEYS: usize = 64;

/// A session's usage summed over its records in log order (fed as the log grows, never
/// re-read from its start).
#[derive(Debug)]
pub struct Tally {
    usage: Usage,
    input: u64,
    output: u64,
    cost: Option<f64>,
    /// The counts each recent keyed request added, to take back when it is written again.
    recent: LruCache<String, (u64, u64, f64)>,
    /// The newest plan windows, by name.
    limits: Vec<Limit>,
}

impl Default for Tally {
    fn default() -> Tally {
        Tally {
            usage: Usage::default(),
            input: 0,
            output: 0,
            cost: None,
            recent: LruCache::new(NonZeroUsize::new(KEYS).expect("nonzero")),
            limits: Vec::new(),
        }
    }
}

impl Tally {
    /// Adds one record's reading.
    pub fn push(&mut self, r: Reading) {
        let cost = r.cost_usd.unwrap_or(0.0);
        if let Some(key) = &r.key {
            if let Some((i, o, c)) = self.recent.get(key).copied() {
                self.input = self.input.saturating_sub(i);
                self.output = self.output.saturating_sub(o);
                self.cost = self.cost.map(|t| t - c);
            }
            self.recent.put(key.clone(), (r.input, r.output, cost));
        }
        self.input = self.input.saturating_add(r.input);
        self.output = self.output.saturating_add(r.output);
        if let Some(c) = r.cost_usd {
            self.cost = Some(self.cost.unwrap_or(0.0) + c);
        }
        if let Some((i, o)) = r.totals {
            self.input = i;
            self.output = o;
        }
        if r.model.is_some() {
            self.usage.model = r.model;
        }
        if r.context_tokens.is_some() {
            self.usage.context_tokens = r.context_tokens;
        }
        if r.context_window.is_some() {
            self.usage.context_window = r.context_window;
        }
        for limit in r.limits {
            self.limits.retain(|l| l.name != limit.name);
            self.limits.push(limit);
        }
    }

    /// The usage so far; `window` is the model's context window when the log never stated
    /// it (from the agent's config or table), `None` when unknown.
    pub fn usage(&self, window: Option<u64>) -> Usage {
        let mut u = self.usage.clone();
        u.context_window = u.context_window.or(window);
        let seen = self.input > 0 || self.output > 0;
        u.session_input = seen.then_some(self.input);
        u.session_output = seen.then_some(self.output);
        u.cost_usd = self.cost.map(|c| c.max(0.0));
        u.context_percent = match (u.context_tokens, u.context_window) {
            (Some(t), Some(w)) if w > 0 => Some(t as f64 * 100.0 / w as f64),
            _ => None,
        };
        u
    }

    /// The newest plan windows this session revealed.
    pub fn limits(&self) -> &[Limit] {
        &self.limits
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(key: &str, ctx: u64, input: u64, output: u64) -> Reading {
        Reading {
            key: Some(key.into()),
            context_tokens: Some(ctx),
            input,
            output,
            ..Reading::default()
        }
    }

    #[test]
    fn a_request_written_again_replaces_its_counts() {
        let mut t = Tally::default();
        t.push(req("m1", 100, 100, 5));
        t.push(req("m1", 100, 100, 40));
        t.push(req("m2", 300, 300, 7));
        let u = t.usage(Some(1000));
        assert_eq!(u.session_input, Some(400));
        assert_eq!(u.session_output, Some(47));
        assert_eq!(u.context_tokens, Some(300));
        assert_eq!(u.context_percent, Some(30.0));
    }

    fn limit(name: &str, used: f64, seen: i64) -> Limit {
        Limit {
            agent: AgentKind::Codex,
            name: name.into(),
            used_percent: used,
            window_minutes: None,
            resets_at: None,
            seen_at: chrono::DateTime::from_timestamp(seen, 0),
        }
    }

    #[test]
    fn each_window_once_with_its_newest_word_tightest_first() {
        let all = [
            limit("5h", 10.0, 1),
            limit("7d", 40.0, 1),
            limit("5h", 62.0, 2),
        ];
        let merged = merge_limits(&all);
        assert_eq!(merged, vec![limit("5h", 62.0, 2), limit("7d", 40.0, 1)]);
        assert_eq!(window_name(300), "5h");
        assert_eq!(window_name(10080), "7d");
        assert_eq!(window_name(90), "90m");
    }

    #[test]
    fn cells_are_compact_and_unknown_is_a_dash() {
        let mut u = Usage::default();
        assert_eq!((context_cell(&u), cost_cell(&u)), ("-".into(), "-".into()));
        u.context_tokens = Some(22549);
        assert_eq!(context_cell(&u), "22.5k");
        u.context_percent = Some(8.726);
        u.cost_usd = Some(0.4567);
        assert_eq!(
            (context_cell(&u), cost_cell(&u)),
            ("9%".into(), "$0.46".into())
        );
        assert_eq!(tokens(1_234_567), "1.2M");
    }

    #[test]
    fn stated_totals_replace_the_sums_and_unknown_stays_unknown() {
        let mut t = Tally::default();
        assert_eq!(t.usage(None), Usage::default());
        t.push(Reading {
            totals: Some((1234, 56)),
            input: 10,
            ..Reading::default()
        });
        let u = t.usage(None);
        assert_eq!((u.session_input, u.session_output), (Some(1234), Some(56)));
        assert_eq!(u.context_percent, None);
        assert_eq!(u.cost_usd, None);
    }
}
