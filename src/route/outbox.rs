//! Text for a pane on another host, exactly once across dropped connections
//! (docs/routing.md#remote-hosts). A relay's answer for a remote pane is first written to
//! `<state>/outbox/<id>.json` (atomic, fsynced), then handed to the host's agentpane on ssh's
//! stdin with its id (`deliver-stdin --id ID --queue`). The host claims each id once
//! (`<state>/received/<id>`, created exclusively before anything is pasted), so sending again
//! after a connection that dropped mid-call never pastes twice; the outbox entry goes only
//! once the host answered. While the host is unreachable the entry waits and is sent when the
//! link is back (older than [`QUEUE_MAX_AGE`]: expired, journaled, not sent). Delivery there
//! — free agent, foreground process, sanitising — is that host's, checked at that moment;
//! a busy destination is queued there, for its watcher.

use std::fs::{self, OpenOptions};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use chrono::Utc;
use serde::{Deserialize, Serialize};

use super::deliver::QUEUE_MAX_AGE;
use super::queue::{JournalEntry, Outcome, Store};
use crate::events::Time;
use crate::paths;
use crate::remote::call::{self, Delivery};
use crate::remote::ssh::Ssh;
use crate::remote::Host;

/// How long a host remembers the ids it received (a retry comes long before).
const CLAIM_KEEP: chrono::Duration = chrono::Duration::days(7);

/// One message for a pane on another host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Outgoing {
    pub id: String,
    pub created: Time,
    pub host: String,
    /// The pane id there (`%N`).
    pub pane: String,
    /// The source, for the journal and the label there (`%5`, `devbox:%3`).
    pub src: String,
    /// The sanitised text.
    pub text: String,
}

impl Outgoing {
    /// `HOST:PANE`, as the journal names the destination.
    pub fn dst(&self) -> String {
        format!("{}:{}", self.host, self.pane)
    }
}

/// What became of one outgoing message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sent {
    pub id: String,
    pub dst: String,
    pub outcome: Outcome,
    pub detail: String,
}

/// The outbox folder.
pub struct Outbox {
    dir: PathBuf,
}

impl Outbox {
    /// `<state>/outbox`.
    pub fn open_default() -> Result<Outbox> {
        Outbox::open(&paths::trusted_state_dir()?)
    }

    /// `<state_dir>/outbox`, created private.
    pub fn open(state_dir: &Path) -> Result<Outbox> {
        let dir = state_dir.join("outbox");
        paths::ensure_private_dir(&dir)?;
        Ok(Outbox { dir })
    }

    fn path(&self, id: &str) -> PathBuf {
        self.dir.join(format!("{id}.json"))
    }

    /// Persists `msg` (atomic, fsynced).
    pub fn put(&self, msg: &Outgoing) -> Result<()> {
        let data = serde_json::to_vec_pretty(msg).context("cannot encode the message")?;
        paths::write_atomic(&self.path(&msg.id), &data)
    }

    /// Every readable message, oldest first.
    pub fn list(&self) -> Vec<Outgoing> {
        paths::json_records(&self.dir, |x: &Outgoing, y| {
            (x.created, &x.id).cmp(&(y.created, &y.id))
        })
        .unwrap_or_default()
    }

    /// Removes a message (sent, or dropped by the person); true when it was there.
    pub fn remove(&self, id: &str) -> bool {
        valid_id(id) && fs::remove_file(self.path(id)).is_ok()
    }

    /// Sends what waits for the hosts `up` says are reachable, oldest first; a host whose
    /// connection fails keeps the rest of its messages, in order, for the next time.
    pub fn flush(&self, store: &Store, ssh: &Ssh, up: &dyn Fn(&str) -> bool) -> Vec<Sent> {
        let mut out = Vec::new();
        let mut failed: Vec<String> = Vec::new();
        for msg in self.list() {
            let mut done = |outcome: Outcome, detail: String| {
                let _ = store.record_entry(&JournalEntry {
                    id: msg.id.clone(),
                    src: msg.src.clone(),
                    dst: msg.dst(),
                    bytes: msg.text.len(),
                    at: Utc::now(),
                    outcome,
                    detail: Some(detail.clone()),
                });
                let _ = self.remove(&msg.id);
                out.push(Sent {
                    id: msg.id.clone(),
                    dst: msg.dst(),
                    outcome,
                    detail,
                });
            };
            if Utc::now() - msg.created > QUEUE_MAX_AGE {
                done(
                    Outcome::Expired,
                    format!("{} was unreachable for 24 h; not sent", msg.host),
                );
                continue;
            }
            if failed.contains(&msg.host) || !up(&msg.host) {
                continue;
            }
            let host = match Host::parse(&msg.host) {
                Ok(h) => h,
                Err(e) => {
                    done(Outcome::Undeliverable, format!("{e:#}"));
                    continue;
                }
            };
            // The label there names this machine for a pane of it.
            let from = if msg.src.contains(':') {
                msg.src.clone()
            } else {
                format!("{}:{}", crate::remote::this_host(), msg.src)
            };
            let delivery = Delivery {
                pane: &msg.pane,
                from: &from,
                queue: true,
                id: Some(&msg.id),
                ..Delivery::default()
            };
            match call::deliver(ssh, &host, &delivery, &msg.text) {
                Ok((crate::exit::OK, said)) => {
                    let outcome = if said.message.contains("queued") {
                        Outcome::Queued
                    } else {
                        Outcome::Delivered
                    };
                    done(outcome, said.message);
                }
                Ok((_, said)) => done(Outcome::Undeliverable, said.message),
                // Not known whether it arrived: sent again, with the same id, later.
                Err(e) => {
                    failed.push(msg.host.clone());
                    out.push(Sent {
                        id: msg.id.clone(),
                        dst: msg.dst(),
                        outcome: Outcome::Failed,
                        detail: format!("{e:#}; sent again when {} answers", msg.host),
                    });
                }
            }
        }
        out
    }
}

/// A message id agentpane made ([`super::queue::new_id`]): digits and `-`, bounded.
pub fn valid_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 64
        && !id.starts_with('-')
        && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
}

/// What a host answered for an id it received before.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Received {
    /// The exit code and message of the first delivery; `None` while it runs (or when it
    /// ended in a crash: then it is never repeated either).
    pub first: Option<(i32, String)>,
}

/// The receiving host's half: claims `id` under `<state_dir>/received/` (created
/// exclusively, before anything is pasted); `Ok(Some(..))` when it was claimed before — a
/// retry of a message this host already took, never pasted again. Claims older than
/// [`CLAIM_KEEP`] are forgotten.
pub fn claim(state_dir: &Path, id: &str) -> Result<Option<Received>> {
    anyhow::ensure!(valid_id(id), "`{id}` is not a message id");
    let dir = state_dir.join("received");
    paths::ensure_private_dir(&dir)?;
    if let Ok(entries) = fs::read_dir(&dir) {
        let keep =
            std::time::SystemTime::now() - CLAIM_KEEP.to_std().unwrap_or(std::time::Duration::ZERO);
        for e in entries.flatten() {
            if e.metadata()
                .and_then(|m| m.modified())
                .is_ok_and(|t| t < keep)
            {
                let _ = fs::remove_file(e.path());
            }
        }
    }
    let path = dir.join(id);
    match OpenOptions::new().write(true).create_new(true).open(&path) {
        Ok(f) => {
            f.sync_all()
                .with_context(|| format!("cannot write {}", path.display()))?;
            Ok(None)
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            let said = fs::read_to_string(&path).unwrap_or_default();
            let first = said
                .split_once('\n')
                .and_then(|(code, msg)| Some((code.parse().ok()?, msg.trim().to_string())));
            Ok(Some(Received { first }))
        }
        Err(e) => Err(e).with_context(|| format!("cannot write {}", path.display())),
    }
}

/// Records how the delivery of a claimed id ended (what a retry is answered).
pub fn record_claim(state_dir: &Path, id: &str, code: i32, message: &str) -> Result<()> {
    anyhow::ensure!(valid_id(id), "`{id}` is not a message id");
    let line: String = message.chars().filter(|c| !c.is_control()).collect();
    paths::write_atomic(
        &state_dir.join("received").join(id),
        format!("{code}\n{line}\n").as_bytes(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_is_claimed_once() {
        let dir = tempfile::tempdir().unwrap();
        let id = "20260101-000000-000-42-0";
        assert_eq!(claim(dir.path(), id).unwrap(), None);
        let again = claim(dir.path(), id).unwrap().expect("claimed before");
        assert_eq!(
            again.first, None,
            "still running (or crashed): never repeated"
        );
        record_claim(dir.path(), id, 6, "not delivered: %3 runs dash").unwrap();
        let again = claim(dir.path(), id).unwrap().expect("claimed before");
        assert_eq!(again.first, Some((6, "not delivered: %3 runs dash".into())));
        assert_eq!(claim(dir.path(), "20260101-000000-000-42-1").unwrap(), None);
        for bad in ["", "../x", "a b", "-x", "a/b"] {
            assert!(claim(dir.path(), bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_outbox_keeps_messages_in_order_until_sent() {
        let dir = tempfile::tempdir().unwrap();
        let ob = Outbox::open(dir.path()).unwrap();
        let msg = |id: &str, secs: i64| Outgoing {
            id: id.into(),
            created: Utc::now() - chrono::Duration::seconds(secs),
            host: "devbox".into(),
            pane: "%3".into(),
            src: "%1".into(),
            text: "hello".into(),
        };
        ob.put(&msg("b", 1)).unwrap();
        ob.put(&msg("a", 5)).unwrap();
        let ids: Vec<String> = ob.list().into_iter().map(|m| m.id).collect();
        assert_eq!(ids, ["a", "b"]);
        // A host that is down: nothing is tried, nothing leaves.
        let store = Store::open(dir.path()).unwrap();
        let ssh = Ssh::from_env();
        assert!(ob.flush(&store, &ssh, &|_| false).is_empty());
        assert_eq!(ob.list().len(), 2);
        assert_eq!(msg("a", 0).dst(), "devbox:%3");
        // Dropped by the person: gone, once.
        assert!(ob.remove("a") && !ob.remove("a") && !ob.remove("../b"));
        assert_eq!(ob.list().len(), 1);
    }
}
