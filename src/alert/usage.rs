//! Alerts for what agents have left (docs/design.md#usage), pure like the rest of the engine:
//! one when a plan window's use reaches its threshold (once per window: the key holds its
//! reset), one when a pane's context passes its own (once per session until the context falls
//! back under it, as it does when the agent compacts). The first step is history: what is
//! already over a threshold when the watcher starts is remembered, not alerted.

use std::collections::BTreeMap;

use serde::Serialize;

use super::{alert_of, Alert};
use crate::events::{AgentKind, Time};
use crate::scan::PaneReport;
use crate::segment::Thresholds;
use crate::state::State;
use crate::usage::{Limit, Usage};

/// How long a plan-window key without a reset is remembered.
const NO_RESET_MEMORY: chrono::Duration = chrono::Duration::days(8);

/// What a usage alert is about.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "over", rename_all = "kebab-case")]
pub enum Over {
    /// A plan window reached the limit threshold.
    Limit(Limit),
    /// A pane's context (in percent) passed the context threshold.
    Context { percent: f64 },
}

/// How far a window's stated reset may move and still be the same window (a reset worked out
/// from "resets in N s" at each record moves by a second or so; the next window's is hours
/// later).
const SAME_WINDOW: chrono::Duration = chrono::Duration::minutes(5);

/// The once-only memory of usage alerts.
#[derive(Debug, Default)]
pub struct UsageAlerts {
    baselined: bool,
    /// Plan windows alerted (or baselined), by agent and name: the reset of the window alerted.
    windows: BTreeMap<String, Time>,
    /// Pane contexts alerted (or baselined), by [`context_key`], with when each may be
    /// forgotten.
    seen: BTreeMap<String, Time>,
}

/// The key of a plan window: agent, name and reset (a new window is a new key).
pub fn limit_key(l: &Limit) -> String {
    let reset = l
        .resets_at
        .map_or("-".to_string(), |r| r.timestamp().to_string());
    format!("limit|{}|{}|{reset}", l.agent.name(), l.name)
}

/// The key of a pane's context: the pane and its session (a new session is a new key).
pub fn context_key(r: &PaneReport) -> String {
    let session = r
        .resolved
        .transcript
        .as_ref()
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_default();
    format!("context|{}|{session}", r.resolved.pane.pane_id)
}

impl UsageAlerts {
    /// One step: the plan windows in force (`limits`), each agent pane's report with its
    /// usage, the thresholds; the alerts to deliver.
    pub fn step(
        &mut self,
        limits: &[Limit],
        panes: &[(&PaneReport, &Usage)],
        th: Thresholds,
        now: Time,
    ) -> Vec<Alert> {
        self.seen.retain(|_, until| *until > now);
        self.windows.retain(|_, reset| *reset + SAME_WINDOW > now);
        let mut out = Vec::new();
        for l in limits {
            let in_force = l.resets_at.map_or(true, |r| r > now);
            if !in_force || l.used_percent < th.limit {
                continue;
            }
            let reset = l.resets_at.unwrap_or(now + NO_RESET_MEMORY);
            let window = format!("{}|{}", l.agent.name(), l.name);
            let alerted = self
                .windows
                .get(&window)
                .is_some_and(|r| reset <= *r + SAME_WINDOW);
            if alerted {
                continue;
            }
            self.windows.insert(window, reset);
            if self.baselined {
                out.push(limit_alert(l, limit_key(l), now));
            }
        }
        for (r, u) in panes {
            let key = context_key(r);
            match u.context_percent.filter(|p| *p >= th.context) {
                // Back under the threshold (compacted): the next crossing alerts again.
                None => {
                    self.seen.remove(&key);
                }
                Some(percent) => {
                    let until = now + NO_RESET_MEMORY;
                    if self.seen.insert(key.clone(), until).is_none() && self.baselined {
                        let mut a = alert_of(r, key, now);
                        a.at = now;
                        a.reason = Some(format!("context {}% full", percent.floor()));
                        a.usage = Some(Over::Context { percent });
                        out.push(a);
                    }
                }
            }
        }
        self.baselined = true;
        out
    }
}

fn limit_alert(l: &Limit, key: String, now: Time) -> Alert {
    let reset = l
        .resets_at
        .map(|r| format!(", resets in {}", crate::segment::countdown(r, now)))
        .unwrap_or_default();
    Alert {
        agent: Some(l.agent),
        pane: String::new(),
        target: String::new(),
        window: String::new(),
        state: State::Attention,
        reason: Some(format!(
            "plan window {} at {}%{reset}",
            l.name,
            l.used_percent.round()
        )),
        turn_key: None,
        transcript: None,
        at: now,
        key,
        request: None,
        usage: Some(Over::Limit(l.clone())),
    }
}

/// The agent a usage alert names in its message, `agent` when unknown.
pub(super) fn agent_name(agent: Option<AgentKind>) -> &'static str {
    agent.map(|a| a.name()).unwrap_or("agent")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::testkit::{report, t};

    fn win(used: f64, reset: i64) -> Limit {
        Limit {
            agent: AgentKind::Claude,
            name: "5h".into(),
            used_percent: used,
            window_minutes: Some(300),
            resets_at: Some(t(reset)),
            seen_at: None,
        }
    }

    fn ctx(p: f64) -> Usage {
        Usage {
            context_percent: Some(p),
            ..Usage::default()
        }
    }

    fn keys(alerts: &[Alert]) -> Vec<String> {
        alerts.iter().map(|a| a.key.clone()).collect()
    }

    #[test]
    fn a_plan_window_alerts_once_when_it_crosses_and_again_in_the_next_window() {
        let th = Thresholds::default();
        let mut a = UsageAlerts::default();
        assert!(a.step(&[win(10.0, 3600)], &[], th, t(0)).is_empty());
        assert!(a.step(&[win(49.9, 3600)], &[], th, t(10)).is_empty());
        let got = a.step(&[win(62.0, 3600)], &[], th, t(20));
        assert_eq!(keys(&got), [limit_key(&win(62.0, 3600))]);
        assert_eq!(
            got[0].message(),
            "claude: plan window 5h at 62%, resets in 60m"
        );
        assert!(matches!(got[0].usage, Some(Over::Limit(_))));
        // Higher still, the same window: nothing more.
        assert!(a.step(&[win(80.0, 3600)], &[], th, t(30)).is_empty());
        assert!(a.step(&[win(95.0, 3600)], &[], th, t(40)).is_empty());
        // The same window, its reset stated a second later (worked out from "resets in").
        assert!(a.step(&[win(96.0, 3601)], &[], th, t(45)).is_empty());
        // The next window, over the threshold again: one more.
        assert!(a.step(&[win(5.0, 21600)], &[], th, t(3700)).is_empty());
        assert_eq!(a.step(&[win(51.0, 21600)], &[], th, t(3800)).len(), 1);
    }

    #[test]
    fn a_pane_context_alerts_once_and_again_after_it_compacted() {
        let th = Thresholds::default();
        let r = report(1, 1, State::Working, 0);
        let mut a = UsageAlerts::default();
        assert!(a.step(&[], &[(&r, &ctx(40.0))], th, t(0)).is_empty());
        let got = a.step(&[], &[(&r, &ctx(81.5))], th, t(10));
        assert_eq!(keys(&got), [context_key(&r)]);
        assert_eq!(got[0].pane, "%1");
        assert_eq!(got[0].message(), "claude in s:1.1: context 81% full");
        assert!(a.step(&[], &[(&r, &ctx(90.0))], th, t(20)).is_empty());
        assert!(a.step(&[], &[(&r, &ctx(12.0))], th, t(30)).is_empty());
        assert_eq!(a.step(&[], &[(&r, &ctx(85.0))], th, t(40)).len(), 1);
    }

    #[test]
    fn what_is_over_a_threshold_at_the_first_step_is_history() {
        let th = Thresholds::default();
        let r = report(1, 1, State::Working, 0);
        let mut a = UsageAlerts::default();
        assert!(a
            .step(&[win(70.0, 3600)], &[(&r, &ctx(90.0))], th, t(0))
            .is_empty());
        assert!(a
            .step(&[win(75.0, 3600)], &[(&r, &ctx(95.0))], th, t(10))
            .is_empty());
    }

    #[test]
    fn a_window_whose_reset_passed_never_alerts() {
        let th = Thresholds::default();
        let mut a = UsageAlerts::default();
        a.step(&[], &[], th, t(0));
        assert!(a.step(&[win(99.0, 50)], &[], th, t(60)).is_empty());
    }
}
