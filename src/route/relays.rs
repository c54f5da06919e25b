//! Running relays (docs/design.md#loop-guard): the effects behind [`RelayState::step`]'s actions,
//! shared by the foreground `agentpane relay` loop and the watcher, and the registry of relays the
//! watcher runs (`<state>/relays/<id>.json`, one file each, atomic writes).
//!
//! A side may be a pane on another host (`HOST:%N`, docs/routing.md#remote-hosts): its turns
//! come from the watcher's link to that host (the streamed document's state and turn key),
//! its answer from that host's `last` over the shared connection, and text for it goes
//! through the [`Outbox`] to that host's agentpane, which delivers it with every rule. While
//! a side's host is unreachable the relay holds: nothing is sent, nothing is forgotten, and
//! the turn that ended meanwhile is relayed once the link is back.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use chrono::Utc;
use serde::{Deserialize, Serialize};

use super::deliver::{checked_state_of, deliver_one, is_free};
use super::outbox::{Outbox, Outgoing};
use super::queue::{new_id, JournalEntry, Outcome, Queued, Store};
use super::recipient::{self, Recipient};
use super::relay::{Action, Pending, RelayState, Turn};
use super::sanitize::sanitize;
use super::template::{Template, Vars};
use crate::events::Time;
use crate::paths;
use crate::remote::link::{HostView, Link};
use crate::remote::Host;
use crate::scan::PaneReport;
use crate::tmux::Tmux;

/// A relay side on another host, `HOST:%N`: the host and the pane id there. A local side is a
/// bare pane id, which never holds a `:`.
pub fn remote_side(side: &str) -> Option<(Host, &str)> {
    let (host, pane) = side.split_once(':')?;
    Some((Host::parse(host).ok()?, pane))
}

/// The agent a side started with: a process here, or an agent's name on another host (whose
/// own agentpane checks the process when it delivers).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum SideAgent {
    Here(Recipient),
    There { host: String, agent: String },
}

impl std::fmt::Display for SideAgent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SideAgent::Here(r) => r.fmt(f),
            SideAgent::There { host, agent } => write!(f, "{agent} on {host}"),
        }
    }
}

/// The view of `host` when its link is up.
fn up<'a>(views: &'a [HostView], host: &Host) -> Option<&'a HostView> {
    views
        .iter()
        .find(|v| v.host == host.as_str() && matches!(v.link, Link::Up { .. }))
}

/// The relay's facts for sides `a` and `b`: local panes from the scan, remote ones from their
/// host's latest document. `None` while a remote side's host is not up: the relay holds (a
/// pane missing from an up host's document is gone, and the relay finishes).
pub fn relay_turns(
    reports: &[PaneReport],
    views: &[HostView],
    sides: [&str; 2],
) -> Option<Vec<Turn>> {
    let mut turns: Vec<Turn> = reports.iter().map(Turn::of).collect();
    for side in sides {
        let Some((host, pane)) = remote_side(side) else {
            continue;
        };
        let view = up(views, &host)?;
        if let Some(p) = view.panes().iter().find(|p| p.pane_id == pane) {
            turns.push(Turn {
                pane: side.to_string(),
                state: p.state,
                turn_key: p.turn_key.clone(),
                reason: p.reason.clone(),
            });
        }
    }
    Some(turns)
}

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
    pub agents: Option<&'a [SideAgent; 2]>,
    /// The hosts' views (for a side on another host).
    pub views: &'a [HostView],
    /// Where text for another host waits until that host took it.
    pub outbox: Option<&'a Outbox>,
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
        let why = |pane: &str, agent: &SideAgent| match agent {
            SideAgent::Here(agent) => match recipient::check(self.tmux, pane, agent, reports) {
                Err(why) if why.is_final() => Some(why.to_string()),
                _ => None,
            },
            SideAgent::There { agent, .. } => {
                let (host, id) = remote_side(pane)?;
                // A host that is not up says nothing about its panes: the relay holds.
                let view = up(self.views, &host)?;
                let now = view.panes().iter().find(|p| p.pane_id == id);
                match now.and_then(|p| p.agent.as_deref()) {
                    Some(a) if a == agent => None,
                    Some(other) => Some(format!("{pane} runs {other} now, not {agent}")),
                    None => Some(format!("{agent} in {pane} is gone")),
                }
            }
        };
        [(&relay.a, &agents[0]), (&relay.b, &agents[1])]
            .into_iter()
            .find_map(|(pane, agent)| why(pane, agent))
            .map(|why| {
                format!(
                    "ESCALATED: the relay between {} and {} stopped: {why}; over to you",
                    relay.a, relay.b
                )
            })
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
        if let Some((host, pane)) = remote_side(dst) {
            return self.send_across(src, &host, pane, round, &body);
        }
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

impl Runner<'_> {
    /// A route to a pane on another host: into the outbox, then sent at once when the host
    /// is up (else when it is back). That host delivers it, or queues it while its agent is
    /// busy, with every delivery rule checked there at that moment.
    fn send_across(&self, src: &str, host: &Host, pane: &str, round: u32, body: &str) -> String {
        let Some(outbox) = self.outbox else {
            return format!("round {round}: {src} → {host}:{pane}: no outbox for another host");
        };
        let msg = Outgoing {
            id: new_id(),
            created: Utc::now(),
            host: host.to_string(),
            pane: pane.to_string(),
            src: src.to_string(),
            text: sanitize(body),
        };
        if let Err(e) = outbox.put(&msg) {
            return format!("round {round}: {src} → {}: not sent: {e:#}", msg.dst());
        }
        let ssh = crate::remote::ssh::Ssh::from_env();
        let views = self.views;
        let is_up = |h: &str| {
            views
                .iter()
                .any(|v| v.host == h && matches!(v.link, Link::Up { .. }))
        };
        let sent = outbox.flush(self.store, &ssh, &is_up);
        match sent.iter().find(|s| s.id == msg.id) {
            Some(s) => format!(
                "round {round}: {src} → {}: {} ({})",
                s.dst,
                outcome_name(s.outcome),
                s.detail
            ),
            None => format!(
                "round {round}: {src} → {}: waits in the outbox ({} is not up)",
                msg.dst(),
                host
            ),
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
    pub agents: Option<[SideAgent; 2]>,
    /// The turn keys A and B had closed when last seen (at registration, then as the relay
    /// goes): a restarted watcher or a reconnected host goes on from here, so a turn is
    /// relayed once, and one that ended while nobody looked is relayed when seen.
    #[serde(default)]
    pub keys: Option<[Option<String>; 2]>,
    /// The side whose turn end is relayed next (0: A, 1: B).
    #[serde(default)]
    pub expect: Option<usize>,
    /// A route held until its destination is free (the answer, sanitised at sending).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending: Option<Pending>,
}

impl Registration {
    /// True when a side is on another host.
    pub fn across(&self) -> bool {
        remote_side(&self.a).is_some() || remote_side(&self.b).is_some()
    }

    /// A relay state that continues from what was already sent and seen.
    pub fn state(&self) -> RelayState {
        match &self.keys {
            Some(keys) => RelayState::resume(
                &self.a,
                &self.b,
                self.rounds,
                self.sent,
                keys.clone(),
                self.expect,
                self.pending.clone(),
            ),
            None => {
                let mut s = RelayState::new(&self.a, &self.b, self.rounds);
                s.sent = self.sent;
                s
            }
        }
    }

    /// Takes what `state` went through into the registration; true when anything changed
    /// (then it is saved).
    pub fn follow(&mut self, state: &RelayState) -> bool {
        let keys = Some(state.keys().clone());
        let pending = state.pending();
        let changed = self.sent != state.sent
            || self.keys != keys
            || self.expect != state.expect()
            || self.pending != pending;
        self.sent = state.sent;
        self.keys = keys;
        self.expect = state.expect();
        self.pending = pending;
        changed
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
        Registry::open(&paths::trusted_state_dir()?)
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
        paths::json_records(&self.dir, |x: &Registration, y| {
            (x.created, &x.id).cmp(&(y.created, &y.id))
        })
        .unwrap_or_default()
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
            keys: None,
            expect: None,
            pending: None,
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

    fn view(host: &str, link: Link) -> HostView {
        HostView {
            host: host.into(),
            link,
            since: Utc::now(),
        }
    }

    fn remote_pane(id: &str, key: &str) -> crate::remote::doc::RemotePane {
        crate::remote::doc::RemotePane {
            pane_id: id.into(),
            target: "w:1.0".into(),
            agent: Some("codex".into()),
            state: crate::state::State::YourTurn,
            seen: false,
            reason: None,
            turn_key: Some(key.into()),
            at: None,
            resets_at: None,
            answer_head: None,
            usage: None,
            limits: Vec::new(),
            request: None,
        }
    }

    #[test]
    fn a_remote_side_is_read_from_its_host_and_holds_while_the_host_is_down() {
        use crate::remote::doc::Document;
        let up = [view(
            "devbox",
            Link::Up {
                doc: Document::new(vec![remote_pane("%3", "k7")], None),
            },
        )];
        let turns = relay_turns(&[], &up, ["devbox:%3", "%5"]).expect("devbox is up");
        assert_eq!(turns.len(), 1);
        assert_eq!(turns[0].pane, "devbox:%3");
        assert_eq!(turns[0].closed_key().as_deref(), Some("k7"));
        // Down or not heard from yet: no facts, the relay holds (it does not finish).
        for link in [
            Link::Down {
                reason: "refused".into(),
            },
            Link::Connecting,
        ] {
            assert!(relay_turns(&[], &[view("devbox", link)], ["devbox:%3", "%5"]).is_none());
        }
        // Up, but the pane is gone from its document: no turn, so the relay finishes.
        let gone = relay_turns(&[], &up, ["devbox:%4", "%5"]).expect("up");
        assert!(gone.is_empty());
        assert_eq!(remote_side("%5"), None);
        assert_eq!(
            remote_side("devbox:%3").map(|(h, p)| (h.to_string(), p.to_string())),
            Some(("devbox".into(), "%3".into()))
        );
    }

    #[test]
    fn an_older_registration_of_local_agents_still_reads() {
        let json = r#"{"id":"r","server":"/s","a":"%1","b":"%2","rounds":3,"created":"2026-01-01T00:00:00Z","sent":1,
            "agents":[{"kind":"claude","pid":10,"start_ticks":5},{"kind":"codex","pid":11,"start_ticks":6}]}"#;
        let reg: Registration = serde_json::from_str(json).unwrap();
        assert!(matches!(
            &reg.agents,
            Some([SideAgent::Here(_), SideAgent::Here(_)])
        ));
        assert!(!reg.across());
        assert_eq!(reg.state().sent, 1);
        let there = SideAgent::There {
            host: "devbox".into(),
            agent: "codex".into(),
        };
        let back: SideAgent =
            serde_json::from_str(&serde_json::to_string(&there).unwrap()).unwrap();
        assert_eq!(back, there);
        assert_eq!(there.to_string(), "codex on devbox");
    }

    #[test]
    fn a_restarted_relay_keeps_its_round_count() {
        assert_eq!(reg("r", "%1", "%2", 4).state().sent, 4);
    }
}
