//! The status-line tokens for what agents have left (docs/design.md#usage): the tightest plan
//! window across agents (`5h 62% ↻1h10m`) once its use reaches a threshold, and a window's
//! context glyph once one of its panes' context passes its own. Pure.

use crate::events::Time;
use crate::usage::{Limit, Usage};

/// The thresholds, in percent (`@agentpane-limit-threshold`, `@agentpane-context-threshold`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Thresholds {
    /// A plan window shows (and alerts) from this use on.
    pub limit: f64,
    /// A pane's context shows (and alerts) from this fill on.
    pub context: f64,
}

impl Default for Thresholds {
    fn default() -> Thresholds {
        Thresholds {
            limit: 50.0,
            context: 80.0,
        }
    }
}

impl Thresholds {
    /// Thresholds from the options; an error naming the option for one that is not a
    /// non-negative number.
    pub fn new(limit: f64, context: f64) -> Result<Thresholds, String> {
        for (name, v) in [("limit-threshold", limit), ("context-threshold", context)] {
            if !v.is_finite() || v < 0.0 {
                return Err(format!("--{name} must be a percent (0 or more), not {v}"));
            }
        }
        Ok(Thresholds { limit, context })
    }
}

/// The plan window closest to its limit at `now` (the highest use; of equal ones, the one
/// that resets first) among those in force whose use reached `threshold`; `None` when none.
pub fn tightest(limits: &[Limit], threshold: f64, now: Time) -> Option<&Limit> {
    limits
        .iter()
        .filter(|l| l.resets_at.map_or(true, |r| r > now))
        .filter(|l| l.used_percent >= threshold)
        .max_by(|a, b| {
            a.used_percent.total_cmp(&b.used_percent).then_with(|| {
                match (a.resets_at, b.resets_at) {
                    (Some(x), Some(y)) => y.cmp(&x),
                    (x, y) => x.is_some().cmp(&y.is_some()),
                }
            })
        })
}

/// The `{limit}` token: `5h 62% ↻1h10m` for the [`tightest`] window (`reset` is the
/// countdown's prefix, the `reset` icon), empty when no window reached `threshold`.
pub fn limit_token(limits: &[Limit], threshold: f64, reset: &str, now: Time) -> String {
    let Some(l) = tightest(limits, threshold, now) else {
        return String::new();
    };
    let used = format!("{} {}%", l.name, l.used_percent.round());
    match l.resets_at {
        Some(at) => format!("{used}{reset}{}", super::countdown(at, now)),
        None => used,
    }
}

/// The fullest context among one window's panes (`usages`), in whole percent, when it passed
/// `threshold`.
pub fn context_over<'a>(
    usages: impl IntoIterator<Item = &'a Usage>,
    threshold: f64,
) -> Option<f64> {
    usages
        .into_iter()
        .filter_map(|u| u.context_percent)
        .filter(|p| *p >= threshold)
        .max_by(f64::total_cmp)
}

/// A window's context token: the `context` icon and the fullest pane's fill (`◕92%`), empty
/// while no pane passed `threshold`.
pub fn context_token<'a>(
    usages: impl IntoIterator<Item = &'a Usage>,
    threshold: f64,
    icon: &str,
) -> String {
    context_over(usages, threshold)
        .map(|p| format!("{icon}{}%", p.floor()))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::AgentKind;
    use chrono::TimeZone;

    fn t(secs: i64) -> Time {
        chrono::Utc.timestamp_opt(1_796_612_000 + secs, 0).unwrap()
    }

    fn win(agent: AgentKind, name: &str, used: f64, reset: Option<i64>) -> Limit {
        Limit {
            agent,
            name: name.into(),
            used_percent: used,
            window_minutes: None,
            resets_at: reset.map(t),
            seen_at: None,
        }
    }

    fn ctx(p: Option<f64>) -> Usage {
        Usage {
            context_percent: p,
            ..Usage::default()
        }
    }

    #[test]
    fn the_tightest_window_across_agents_shows_with_its_reset() {
        let limits = [
            win(AgentKind::Claude, "5h", 62.0, Some(4200)),
            win(AgentKind::Claude, "7d", 21.0, Some(300_000)),
            win(AgentKind::Codex, "primary", 55.4, Some(600)),
        ];
        assert_eq!(limit_token(&limits, 50.0, " ↻", t(0)), "5h 62% ↻1h10m");
        assert_eq!(limit_token(&limits, 70.0, " ↻", t(0)), "");
        // Once the 5h window reset, it no longer counts.
        assert_eq!(limit_token(&limits, 50.0, " ↻", t(4200)), "");
        assert_eq!(limit_token(&limits, 50.0, " ↻", t(100)), "5h 62% ↻1h08m");
        assert_eq!(
            limit_token(&limits[2..], 50.0, "↻", t(0)),
            "primary 55%↻10m"
        );
        // Equal use: the one that resets first.
        let tie = [
            win(AgentKind::Claude, "7d", 80.0, Some(90_000)),
            win(AgentKind::Codex, "primary", 80.0, Some(60)),
        ];
        assert_eq!(tightest(&tie, 50.0, t(0)).unwrap().name, "primary");
        let unknown_reset = [win(AgentKind::Codex, "secondary", 90.0, None)];
        assert_eq!(
            limit_token(&unknown_reset, 50.0, " ↻", t(0)),
            "secondary 90%"
        );
    }

    #[test]
    fn thresholds_must_be_percents() {
        assert_eq!(Thresholds::new(50.0, 80.0), Ok(Thresholds::default()));
        assert!(Thresholds::new(-1.0, 80.0).is_err());
        assert!(Thresholds::new(50.0, f64::NAN)
            .unwrap_err()
            .contains("context-threshold"));
    }

    #[test]
    fn the_context_token_shows_the_fullest_pane_past_the_threshold() {
        let panes = [ctx(Some(45.0)), ctx(None), ctx(Some(92.7)), ctx(Some(81.0))];
        assert_eq!(context_token(&panes, 80.0, "◕"), "◕92%");
        assert_eq!(context_token(&panes, 95.0, "◕"), "");
        assert_eq!(context_token(&[ctx(None)], 0.0, "◕"), "");
        assert_eq!(context_over(&panes[..2], 45.0), Some(45.0));
    }
}
