//! Running relays (docs/design.md#loop-guard): the effects behind [`RelayState::step`]'s actions,
//! shared by the foreground `agentpane relay` loop and the watcher, and the registry of relays the
//! watcher runs (`<state>/relays/<id>.json`, one file each, atomic writes).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use chrono::Utc;
use serde::{Deserialize, Serialize};

use super::deliver::{checked_state_of, deliver_one, is_free};
use super::queue::{new_id, JournalEntry, Outcome, Queued, Store};
use super::recipient::{self, Recipient};
use super::relay::{Action, RelayState};
use super::sanitize::sanitize;
use super::template::{Template, Vars};
use crate::events::Time;
use crate::paths;
use crate::scan::PaneReport;
use crate::tmux::Tmux;

/// How a relay ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum End {
    /// The thread ended on its own (an acknowledgement, a pane gone).
    Finished(String),
    /// The round limit or an agent failure: the human is called.
    Escalated(String),
}

/// What acting on one step's actions needs.
pub struct Runner<'a> {
    pub tmux: &'a Tmux,
    pub store: &'a Store,
    /// The tmux server's socket path (queued messages are bound to it).
    pub server: &'a str,
    pub template: Option<&'a Template>,
    /// The agents of sides A and B the relay started with; when either stops being that
    /// agent (exits, is suspended or replaced), the relay escalates instead of sending.
    pub agents: Option<&'a [Recipient; 2]>,
}

impl Runner<'_> {
    /// Carries out `actions` for `relay`: routes go out now when their destination is free,
    /// else into the queue; an escalation is journaled and shown. Returns log lines and how
    /// the relay ended, if it did.
    pub fn apply(
        &self,
        relay: &RelayState,
        actions: Vec<Action>,
        reports: &[PaneReport],
    ) -> (Vec<String>, Option<End>) {
        let mut log = Vec::new();
        if let Some(reason) = self.agent_left(relay, reports) {
            return self.escalate(relay, reason, log);
        }
        for action in actions {
            match action {
                Action::Route {
                    src,
                    dst,
                    round,
                    text,
                } => log.push(self.route(&src, &dst, round, &text, reports)),
                Action::Skip { pane, reason } => log.push(format!("{pane}: {reason}")),
                Action::Finish { reason } => {
                    log.push(format!("relay finished: {reason}"));
                    return (log, Some(End::Finished(reason)));
                }
                Action::Escalate { reason } => return self.escalate(relay, reason, log),
            }
        }
        (log, None)
    }

    /// Why the relay must stop: a side is no longer the agent it started with.
    fn agent_left(&self, relay: &RelayState, reports: &[PaneReport]) -> Option<String> {
        let agents = self.agents?;
        [(&relay.a, &agents[0]), (&relay.b, &agents[1])]
            .into_iter()
            .find_map(
                |(pane, agent)| match recipient::check(self.tmux, pane, agent, reports) {
                    Err(why) if why.is_final() => Some(format!(
                        "ESCALATED: the relay between {} and {} stopped: {why}; over to you",
                        relay.a, relay.b
                    )),
                    _ => None,
                },
            )
    }

    /// Journals and shows an escalation; the relay ends.
    fn escalate(
        &self,
        relay: &RelayState,
        reason: String,
        mut log: Vec<String>,
    ) -> (Vec<String>, Option<End>) {
        let _ = self.store.record_entry(&JournalEntry {
            id: new_id(),
            src: relay.a.clone(),
            dst: relay.b.clone(),
            bytes: 0,
            at: Utc::now(),
            outcome: Outcome::Escalated,
            detail: Some(reason.clone()),
        });
        let _ = self
            .tmux
            .display_message(None, &format!("agentpane: {reason}"));
        log.push(reason.clone());
        (log, Some(End::Escalated(reason)))
    }

    fn route(
        &self,
        src: &str,
        dst: &str,
        round: u32,
        text: &str,
        reports: &[PaneReport],
    ) -> String {
        let label = format!("{src} (relay round {round})");
        let vars = Vars {
            answer: text,
            source: &label,
            cwd: "",
            instruction: "",
        };
        let body = match self.template.map(|t| t.render(&vars)) {
            Some(Ok(body)) => body,
            Some(Err(e)) => return format!("round {round}: {src} → {dst}: template failed: {e:#}"),
            None => text.to_string(),
        };
        let to = match recipient::admit(self.tmux, reports, dst) {
            Ok(to) => to,
            Err(why) => return format!("round {round}: {src} → {dst}: not delivered: {why}"),
        };
        let msg = Queued {
            id: new_id(),
            created: Utc::now(),
            server: self.server.to_string(),
            src: src.to_string(),
            dst: dst.to_string(),
            text: sanitize(&body),
            submit: true,
            recipient: Some(to),
        };
        let (state, _) = checked_state_of(self.tmux, reports, dst);
        if is_free(state) {
            let done = deliver_one(self.store, self.tmux, &msg, reports);
            format!(
                "round {round}: {src} → {dst}: {}",
                outcome_name(done.outcome)
            )
        } else {
            match self.store.enqueue(&msg) {
                Ok(()) => format!("round {round}: {dst} is {state}; queued {}", msg.id),
                Err(e) => format!("round {round}: {src} → {dst} not queued: {e:#}"),
            }
        }
    }
}

/// An outcome's journal name (`delivered`, `queued`, …).
pub fn outcome_name(o: Outcome) -> String {
    serde_json::to_value(o)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

/// A relay the watcher runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Registration {
    pub id: String,
    /// The tmux server's socket path.
    pub server: String,
    pub a: String,
    pub b: String,
    pub rounds: u32,
    /// Template name or file, as given to `relay --template`.
    #[serde(default)]
    pub template: Option<String>,
    pub created: Time,
    /// Routes sent so far (kept across watcher restarts, so the round limit holds).
    #[serde(default)]
    pub sent: u32,
    /// The agents of A and B when the relay was started (see [`Runner::agents`]). A
    /// registration without them (an older agentpane) is dropped by the watcher.
    #[serde(default)]
    pub agents: Option<[Recipient; 2]>,
}

impl Registration {
    /// A relay state that continues from what was already sent.
    pub fn state(&self) -> RelayState {
        let mut s = RelayState::new(&self.a, &self.b, self.rounds);
        s.sent = self.sent;
        s
    }

    /// True when this relay joins the same two panes, in either order, on `server`.
    pub fn joins(&self, server: &str, a: &str, b: &str) -> bool {
        self.server == server && ((self.a == a && self.b == b) || (self.a == b && self.b == a))
    }
}

/// The folder of relay registrations.
pub struct Registry {
    dir: PathBuf,
}

impl Registry {
    /// `<state>/relays`.
    pub fn open_default() -> Result<Registry> {
        Registry::open(&paths::state_dir())
    }

    /// `<state_dir>/relays`, created private.
    pub fn open(state_dir: &Path) -> Result<Registry> {
        let dir = state_dir.join("relays");
        paths::ensure_private_dir(&dir)?;
        Ok(Registry { dir })
    }

    fn path(&self, id: &str) -> PathBuf {
        self.dir.join(format!("{id}.json"))
    }

    /// Writes (or rewrites) a registration atomically.
    pub fn save(&self, reg: &Registration) -> Result<()> {
        let data = serde_json::to_vec_pretty(reg).context("cannot encode the relay")?;
        paths::write_atomic(&self.path(&reg.id), &data)
    }

    /// Removes a registration; true when it existed.
    pub fn remove(&self, id: &str) -> bool {
        std::fs::remove_file(self.path(id)).is_ok()
    }

    /// Every readable registration, oldest first; unreadable files are skipped.
    pub fn list(&self) -> Vec<Registration> {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        let mut out: Vec<Registration> = entries
            .flatten()
            .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
            .filter_map(|e| serde_json::from_slice(&std::fs::read(e.path()).ok()?).ok())
            .collect();
        out.sort_by(|x, y| (x.created, &x.id).cmp(&(y.created, &y.id)));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reg(id: &str, a: &str, b: &str, sent: u32) -> Registration {
        Registration {
            id: id.into(),
            server: "/tmp/tmux-0/default".into(),
            a: a.into(),
            b: b.into(),
            rounds: 3,
            template: None,
            created: Utc::now(),
            sent,
            agents: None,
        }
    }

    #[test]
    fn registrations_round_trip_and_remove() {
        let dir = tempfile::tempdir().unwrap();
        let r = Registry::open(dir.path()).unwrap();
        r.save(&reg("r1", "%1", "%2", 0)).unwrap();
        r.save(&reg("r1", "%1", "%2", 2)).unwrap();
        std::fs::write(dir.path().join("relays/junk.json"), b"{not json").unwrap();
        let all = r.list();
        assert_eq!(all.len(), 1, "rewritten in place, junk skipped");
        assert_eq!(all[0].sent, 2);
        assert!(all[0].joins("/tmp/tmux-0/default", "%2", "%1"));
        assert!(!all[0].joins("/tmp/tmux-0/other", "%1", "%2"));
        assert!(r.remove("r1"));
        assert!(!r.remove("r1"));
        assert!(r.list().is_empty());
    }

    #[test]
    fn a_restarted_relay_keeps_its_round_count() {
        assert_eq!(reg("r", "%1", "%2", 4).state().sent, 4);
    }
}
