//! Relays inside the watcher (docs/design.md#loop-guard): every relay registered for this tmux
//! server (`agentpane relay A B` while a watcher runs) steps on each scan with the same pure
//! [`RelayState`] and the same effects as the foreground command; the routes it sends so far
//! are saved in the registration, so a watcher restart never resets the round limit.

use std::collections::BTreeMap;

use crate::extract::cache::AnswerCache;
use crate::route::queue::Store;
use crate::route::relay::RelayState;
use crate::route::relays::{Registry, Runner};
use crate::route::source::pane_answer;
use crate::route::template::Template;
use crate::scan::PaneReport;
use crate::tmux::Tmux;

/// The watcher's running relays.
pub struct Relays {
    states: BTreeMap<String, RelayState>,
    answers: AnswerCache,
}

impl Default for Relays {
    fn default() -> Relays {
        Relays {
            states: BTreeMap::new(),
            answers: AnswerCache::new(32),
        }
    }
}

impl Relays {
    /// One step of every relay registered for `server`; returns log lines.
    pub fn step(&mut self, tmux: &Tmux, reports: &[PaneReport], server: &str) -> Vec<String> {
        let mut log = Vec::new();
        let registry = match Registry::open_default() {
            Ok(r) => r,
            Err(e) => return vec![format!("relays unavailable: {e:#}")],
        };
        let regs: Vec<_> = registry
            .list()
            .into_iter()
            .filter(|r| r.server == server)
            .collect();
        // A registration removed (`relay --stop`) ends its relay here too.
        self.states.retain(|id, _| regs.iter().any(|r| &r.id == id));
        if regs.is_empty() {
            return log;
        }
        let store = match Store::open_default() {
            Ok(s) => s,
            Err(e) => return vec![format!("routing queue unavailable: {e:#}")],
        };
        let Relays { states, answers } = self;
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
            let state = states.entry(reg.id.clone()).or_insert_with(|| reg.state());
            let mut answer = |r: &PaneReport| {
                pane_answer(tmux, &r.resolved.pane.pane_id, Some(r), answers)
                    .ok()
                    .flatten()
                    .map(|a| a.text)
            };
            let actions = state.step(reports, &mut answer);
            let runner = Runner {
                tmux,
                store: &store,
                server,
                template: template.as_ref(),
                agents: reg.agents.as_ref(),
            };
            let (lines, end) = runner.apply(state, actions, reports);
            log.extend(lines.into_iter().map(|l| format!("relay {}: {l}", reg.id)));
            if end.is_some() {
                registry.remove(&reg.id);
                states.remove(&reg.id);
            } else if state.sent != reg.sent {
                reg.sent = state.sent;
                if let Err(e) = registry.save(&reg) {
                    log.push(format!("relay {}: round count not saved: {e:#}", reg.id));
                }
            }
        }
        log
    }
}
