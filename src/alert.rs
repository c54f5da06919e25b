//! The alert engine (docs/design.md#alerts) as a pure state machine: each step takes the reports of
//! one scan, the clock and the alert memory, and returns what to do — deliver, retract or
//! acknowledge. It never reads the clock, the disk or tmux; the watcher owns those effects.
//!
//! Rules: a pane entering `your-turn`, `waiting`, `attention` or `stalled` for a key never seen
//! before gets a pending alert, delivered after a delay (1 s) unless a follow-up write changes
//! the evidence first; one delivery per key (agent + state + transcript + turn key), keys
//! remembered 12 h; the first scan is history (baselined, never alarmed); several new keys in
//! one scan alert the newest and baseline the rest; focusing the pane acknowledges (`your-turn`
//! becomes seen); a delivered alert whose evidence changes is retracted.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;

use crate::events::{AgentKind, Time};
pub use crate::memory::alert_key;
use crate::memory::AlertMemory;
use crate::scan::PaneReport;
use crate::state::{State, Status};

mod usage;
pub use usage::{context_key, limit_key, Over, UsageAlerts};

/// One alert, as the sinks and `--alert-command` receive it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Alert {
    pub agent: Option<AgentKind>,
    /// `%N`.
    pub pane: String,
    /// `session:window.pane`.
    pub target: String,
    /// `@N`.
    pub window: String,
    pub state: State,
    pub reason: Option<String>,
    pub turn_key: Option<String>,
    pub transcript: Option<PathBuf>,
    /// Semantic time of the deciding event (else when it was first noticed).
    pub at: Time,
    /// The once-only key.
    pub key: String,
    /// For `waiting`: what the agent asks to decide (docs/design.md#deciding-from-anywhere).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request: Option<crate::read::request::Request>,
    /// For a usage alert: the plan window or the context that passed its threshold (the
    /// pane fields are empty for a plan window, which is the account's, not a pane's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<usage::Over>,
}

impl Alert {
    /// One human line, e.g. `claude in work:1.0: your turn`; terminal-safe (the reason may
    /// quote the agent, the target is a name anyone in tmux can set).
    pub fn message(&self) -> String {
        let agent = usage::agent_name(self.agent);
        if let (Some(_), Some(r)) = (&self.usage, &self.reason) {
            let line = match self.target.is_empty() {
                true => format!("{agent}: {r}"),
                false => format!("{agent} in {}: {r}", self.target),
            };
            return crate::text::terminal_line(&line);
        }
        let what = match self.state {
            State::YourTurn => "your turn".to_string(),
            other => other.as_str().to_string(),
        };
        let line = match &self.reason {
            Some(r) => format!("{agent} in {}: {what} ({r})", self.target),
            None => format!("{agent} in {}: {what}", self.target),
        };
        crate::text::terminal_line(&line)
    }
}

/// What the watcher must do.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Show the alert on every sink.
    Deliver(Alert),
    /// The evidence changed (user replied, turn restarted, pane closed): clear it.
    Retract(Alert),
    /// The user focused the pane: clear it, the turn is seen.
    Acknowledge(Alert),
}

/// Tunables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Config {
    /// How long a new state must hold before it is alerted.
    pub delay: Duration,
    /// Alert for machine-driven sessions too (Codex `exec`, MCP, subagents); off by default.
    pub machine: bool,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            delay: Duration::from_secs(1),
            machine: false,
        }
    }
}

/// True when this status deserves an alert (an interruption is the user's own doing).
pub fn wants_alert(s: &Status) -> bool {
    match s.state {
        State::YourTurn => !s.seen && s.reason.as_deref() != Some("interrupted"),
        State::Waiting | State::Attention | State::Stalled => true,
        State::Working | State::Idle | State::None => false,
    }
}

fn alert_of(r: &PaneReport, key: String, now: Time) -> Alert {
    let pane = &r.resolved.pane;
    Alert {
        agent: r.resolved.agent.as_ref().map(|a| a.kind),
        pane: pane.pane_id.clone(),
        target: pane.target(),
        window: pane.window_id.clone(),
        state: r.status.state,
        reason: r.status.reason.clone(),
        turn_key: r.status.turn_key.clone(),
        transcript: r.resolved.transcript.clone(),
        at: r.status.at.unwrap_or(now),
        key,
        request: r.status.request.clone(),
        usage: None,
    }
}

/// The engine's state between scans.
#[derive(Debug, Default)]
pub struct Engine {
    config: Config,
    baselined: bool,
    /// Per pane: an alert waiting for its delay, and when it is due.
    pending: BTreeMap<String, (Alert, Time)>,
    /// Per pane: the delivered alert still on display.
    shown: BTreeMap<String, Alert>,
    /// Panes whose last report was an agent retrying a failed API call (or that call's next
    /// attempt in flight), with that turn's key.
    retrying: BTreeMap<String, Option<String>>,
}

impl Engine {
    /// A fresh engine: its first step is the baseline.
    pub fn new(config: Config) -> Engine {
        Engine {
            config,
            ..Engine::default()
        }
    }

    /// When the next pending alert falls due (the watcher sleeps until then at most).
    pub fn next_due(&self) -> Option<Time> {
        self.pending.values().map(|(_, due)| *due).min()
    }

    /// Whether this report deserves an alert under this engine's configuration.
    fn wants(&self, r: &PaneReport) -> bool {
        wants_alert(&r.status) && (self.config.machine || !r.resolved.machine_driven)
    }

    /// Alerts on display, by pane.
    pub fn shown(&self) -> impl Iterator<Item = &Alert> {
        self.shown.values()
    }

    /// One step over a scan's reports.
    pub fn step(
        &mut self,
        reports: &[PaneReport],
        now: Time,
        mem: &mut AlertMemory,
    ) -> Vec<Action> {
        let mut actions = Vec::new();
        if !self.baselined {
            for r in reports {
                if self.wants(r) {
                    mem.remember(&alert_key(r), now, false);
                }
            }
            self.baselined = true;
            return actions;
        }

        // Panes that went away take their alerts with them.
        let present: Vec<&str> = reports
            .iter()
            .map(|r| r.resolved.pane.pane_id.as_str())
            .collect();
        self.pending
            .retain(|pane, _| present.contains(&pane.as_str()));
        let gone: Vec<String> = self
            .shown
            .keys()
            .filter(|p| !present.contains(&p.as_str()))
            .cloned()
            .collect();
        for pane in gone {
            if let Some(a) = self.shown.remove(&pane) {
                actions.push(Action::Retract(a));
            }
        }

        let mut fresh: Vec<Alert> = Vec::new();
        self.retrying
            .retain(|pane, _| present.contains(&pane.as_str()));
        for r in reports {
            let pane = r.resolved.pane.pane_id.as_str();
            let key = alert_key(r);
            let wanted = self.wants(r);
            if r.status.state == State::Attention && self.retrying.contains_key(pane) {
                self.same_retrying_turn(r, &key, now, mem);
            }
            // The retried call's next attempt reads working: the same turn, still waiting on
            // the API, so its alert stays (on display or on its way) until it ends.
            let in_flight = matches!(r.status.state, State::Working | State::Stalled)
                && self.retrying.get(pane) == Some(&r.status.turn_key);
            if r.status.state == State::Attention && r.status.retry.is_some() {
                self.retrying
                    .insert(pane.to_string(), r.status.turn_key.clone());
            } else if !in_flight {
                self.retrying.remove(pane);
            }
            if r.resolved.pane.focused() {
                if let Some(a) = self.shown.remove(pane) {
                    mem.mark_seen(&a.key, now);
                    actions.push(Action::Acknowledge(a));
                }
                self.pending.remove(pane);
                if r.status.state == State::YourTurn {
                    mem.mark_seen(&key, now);
                } else if wanted {
                    mem.remember(&key, now, false);
                }
                continue;
            }
            if in_flight {
                continue;
            }
            let current = wanted.then_some(key.as_str());
            if self
                .shown
                .get(pane)
                .is_some_and(|a| Some(a.key.as_str()) != current)
            {
                if let Some(a) = self.shown.remove(pane) {
                    actions.push(Action::Retract(a));
                }
            }
            if self
                .pending
                .get(pane)
                .is_some_and(|(a, _)| Some(a.key.as_str()) != current)
            {
                self.pending.remove(pane);
            }
            if wanted && mem.get(&key).is_none() && !self.pending.contains_key(pane) {
                fresh.push(alert_of(r, key, now));
            }
        }

        // Storm collapse: the newest new alert waits for its delay, the rest are history.
        fresh.sort_by_key(|a| a.at);
        if let Some(newest) = fresh.pop() {
            let due = now + chrono::Duration::from_std(self.config.delay).unwrap_or_default();
            self.pending.insert(newest.pane.clone(), (newest, due));
        }
        for a in fresh {
            mem.remember(&a.key, now, false);
        }

        let due: Vec<String> = self
            .pending
            .iter()
            .filter(|(_, (_, due))| *due <= now)
            .map(|(pane, _)| pane.clone())
            .collect();
        for pane in due {
            if let Some((a, _)) = self.pending.remove(&pane) {
                mem.remember(&a.key, now, true);
                self.shown.insert(pane, a.clone());
                actions.push(Action::Deliver(a));
            }
        }
        actions
    }

    /// An agent that retried a failed API call still needs the human: it gave up (an error
    /// of its own) or retries on. Either way it is the turn already alerted (or on its way),
    /// under another key when the agent names the final error by another id than the turn:
    /// the alert on display or pending takes the new key, and the key counts as alerted.
    fn same_retrying_turn(&mut self, r: &PaneReport, key: &str, now: Time, mem: &mut AlertMemory) {
        let pane = r.resolved.pane.pane_id.as_str();
        if let Some((a, _)) = self.pending.get_mut(pane) {
            *a = alert_of(r, key.to_string(), a.at);
            return;
        }
        let delivered = self.shown.contains_key(pane);
        if let Some(a) = self.shown.get_mut(pane) {
            *a = alert_of(r, key.to_string(), a.at);
        }
        if mem.get(key).is_none() {
            mem.remember(key, now, delivered);
        }
    }
}

#[cfg(test)]
mod tests;
