//! Relays inside the watcher (docs/design.md#loop-guard): every relay registered for this tmux
//! server (`agentpane relay A B` while a watcher runs) steps on each scan with the same pure
//! [`RelayState`] and the same effects as the foreground command; the routes it sends so far
//! are saved in the registration, so a watcher restart never resets the round limit.
//! A relay with a side on another host steps on a thread of its own ([`Across`]), on every scan
//! and every remote wake, so its ssh calls never hold up a scan or the status line; what waits
//! in the outbox for a host goes out there when its link is up.

use std::collections::BTreeMap;
use std::sync::mpsc;

use crate::extract::cache::AnswerCache;
use crate::remote::call;
use crate::remote::link::{HostView, Link};
use crate::remote::ssh::Ssh;
use crate::route::outbox::Outbox;
use crate::route::queue::Store;
use crate::route::relay::{RelayState, Turn};
use crate::route::relays::{outcome_name, relay_turns, remote_side, Registry, Runner};
use crate::route::source::{pane_answer, report_of};
use crate::route::template::Template;
use crate::scan::PaneReport;
use crate::tmux::Tmux;

/// The watcher's running relays.
pub struct Relays {
    states: BTreeMap<String, RelayState>,
    answers: AnswerCache,
    /// Per relay across hosts, the facts of its two sides at its last step: the same facts
    /// again (a safety poll, another pane's news) step nothing, so an idle relay spawns
    /// nothing; its agents are checked again when its sides change, and at every delivery.
    seen: BTreeMap<String, Vec<Turn>>,
}

impl Default for Relays {
    fn default() -> Relays {
        Relays {
            states: BTreeMap::new(),
            answers: AnswerCache::new(32),
            seen: BTreeMap::new(),
        }
    }
}

/// Which relays a [`Relays`] steps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Which {
    /// Between panes of this tmux server.
    Local,
    /// With a side on another host.
    Across,
}

/// The relays with a side on another host, on a thread of their own: the watcher hands it the
/// latest scan and hosts' views, and it steps them (answers fetched and text handed over
/// across ssh) and flushes the outbox, logging what it did.
pub struct Across {
    tx: mpsc::Sender<(Vec<PaneReport>, Vec<HostView>)>,
}

impl Across {
    pub fn start(tmux: Tmux, server: String) -> Across {
        let (tx, rx) = mpsc::channel::<(Vec<PaneReport>, Vec<HostView>)>();
        std::thread::spawn(move || {
            let mut relays = Relays::default();
            while let Ok(mut facts) = rx.recv() {
                // Only the newest facts count: a step on older ones would be stale.
                while let Ok(newer) = rx.try_recv() {
                    facts = newer;
                }
                for line in relays.step(&tmux, &facts.0, &server, &facts.1, Which::Across) {
                    super::log::line(&line);
                }
            }
        });
        Across { tx }
    }

    /// New facts: the latest local scan and the hosts' views.
    pub fn send(&self, reports: &[PaneReport], views: &[HostView]) {
        let _ = self.tx.send((reports.to_vec(), views.to_vec()));
    }
}

impl Relays {
    /// One step of every relay of kind `which` registered for `server`, then (with hosts) the
    /// outbox for hosts that are up; returns log lines.
    pub fn step(
        &mut self,
        tmux: &Tmux,
        reports: &[PaneReport],
        server: &str,
        views: &[HostView],
        which: Which,
    ) -> Vec<String> {
        let mut log = self.relay(tmux, reports, server, views, which);
        if !views.is_empty() {
            log.extend(flush_outbox(views));
        }
        log
    }

    fn relay(
        &mut self,
        tmux: &Tmux,
        reports: &[PaneReport],
        server: &str,
        views: &[HostView],
        which: Which,
    ) -> Vec<String> {
        let mut log = Vec::new();
        let registry = match Registry::open_default() {
            Ok(r) => r,
            Err(e) => return vec![format!("relays unavailable: {e:#}")],
        };
        let regs: Vec<_> = registry
            .list()
            .into_iter()
            .filter(|r| r.server == server && r.across() == (which == Which::Across))
            .collect();
        // A registration removed (`relay --stop`) ends its relay here too.
        self.states.retain(|id, _| regs.iter().any(|r| &r.id == id));
        self.seen.retain(|id, _| regs.iter().any(|r| &r.id == id));
        if regs.is_empty() {
            return log;
        }
        let store = match Store::open_default() {
            Ok(s) => s,
            Err(e) => return vec![format!("routing queue unavailable: {e:#}")],
        };
        let outbox = Outbox::open_default().ok();
        let ssh = Ssh::from_env();
        let Relays {
            states,
            answers,
            seen,
        } = self;
        for mut reg in regs {
            if reg.agents.is_none() {
                log.push(format!(
                    "relay {} dropped: registered without its agents (an older agentpane); start it again",
                    reg.id
                ));
                registry.remove(&reg.id);
                continue;
            }
            let template = match reg.template.as_deref().map(Template::load).transpose() {
                Ok(t) => t,
                Err(e) => {
                    log.push(format!("relay {} dropped: template: {e:#}", reg.id));
                    registry.remove(&reg.id);
                    continue;
                }
            };
            // A side's host not up: the relay holds, its state untouched.
            let Some(turns) = relay_turns(reports, views, [&reg.a, &reg.b]) else {
                continue;
            };
            let state = states.entry(reg.id.clone()).or_insert_with(|| reg.state());
            if which == Which::Across {
                let sides: Vec<Turn> = turns
                    .iter()
                    .filter(|t| t.pane == reg.a || t.pane == reg.b)
                    .cloned()
                    .collect();
                if state.started() && seen.get(&reg.id) == Some(&sides) {
                    continue;
                }
                seen.insert(reg.id.clone(), sides);
            }
            // A remote side's new answer is fetched before the step: when its host cannot be
            // asked now, the relay holds (the turn stays news) and tries again on the next facts.
            let fetched = match fetch_new_answers(&ssh, state, &turns, [&reg.a, &reg.b]) {
                Ok(f) => f,
                Err(e) => {
                    log.push(format!("relay {}: held: {e:#}", reg.id));
                    seen.remove(&reg.id);
                    continue;
                }
            };
            let mut answer = |pane: &str| match remote_side(pane) {
                Some(_) => fetched
                    .iter()
                    .find(|(p, _)| p == pane)
                    .and_then(|(_, a)| a.clone()),
                None => pane_answer(tmux, pane, report_of(reports, pane), answers)
                    .ok()
                    .flatten()
                    .map(|a| a.text),
            };
            let actions = state.step_turns(&turns, &mut answer);
            let runner = Runner {
                tmux,
                store: &store,
                server,
                template: template.as_ref(),
                agents: reg.agents.as_ref(),
                views,
                outbox: outbox.as_ref(),
            };
            let (lines, end) = runner.apply(state, actions, reports);
            log.extend(lines.into_iter().map(|l| format!("relay {}: {l}", reg.id)));
            if end.is_some() {
                registry.remove(&reg.id);
                states.remove(&reg.id);
            } else if state.started() && reg.follow(state) {
                if let Err(e) = registry.save(&reg) {
                    log.push(format!("relay {}: round count not saved: {e:#}", reg.id));
                }
            }
        }
        log
    }
}

/// The answers of the remote sides whose closed turn is new to `state` (side, answer text);
/// an error when a host could not be asked.
fn fetch_new_answers(
    ssh: &Ssh,
    state: &RelayState,
    turns: &[Turn],
    sides: [&str; 2],
) -> anyhow::Result<Vec<(String, Option<String>)>> {
    let mut out = Vec::new();
    for (i, side) in sides.into_iter().enumerate() {
        let Some((host, pane)) = remote_side(side) else {
            continue;
        };
        let key = turns
            .iter()
            .find(|t| t.pane == side)
            .and_then(Turn::closed_key);
        if key.is_none() || key == state.keys()[i] {
            continue;
        }
        let answer = call::fetch_answer(ssh, &host, pane)?;
        out.push((side.to_string(), answer.map(|a| a.text)));
    }
    Ok(out)
}

/// Sends what waits in the outbox for hosts whose link is up.
fn flush_outbox(views: &[HostView]) -> Vec<String> {
    let (Ok(outbox), Ok(store)) = (Outbox::open_default(), Store::open_default()) else {
        return Vec::new();
    };
    let up = |h: &str| {
        views
            .iter()
            .any(|v| v.host == h && matches!(v.link, Link::Up { .. }))
    };
    outbox
        .flush(&store, &Ssh::from_env(), &up)
        .into_iter()
        .map(|s| {
            format!(
                "outbox {} → {}: {} ({})",
                s.id,
                s.dst,
                outcome_name(s.outcome),
                s.detail
            )
        })
        .collect()
}
