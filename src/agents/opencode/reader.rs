//! The state reads of opencode sessions, kept between scans so that a scan reads only what was
//! written since the last one. Per database: one connection, kept open; one `PRAGMA
//! data_version` to learn whether anyone committed at all; if so, one statement for the
//! fingerprints of all its sessions ([`store::fingerprints`]); and the rows of only those
//! sessions whose fingerprint moved. A write to one session re-reads that session, not every
//! pane's.
//!
//! How deep the fingerprints look ([`Depth`]): after a file wake, each session's newest
//! message and its parts, which is where opencode writes (a new message, a streamed part, a
//! finished step) and costs a few index lookups per session; at the safety poll, every row a
//! state read looks at, so a write anywhere else is read within one poll.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use anyhow::Result;

use super::store::{self, Databases};
use super::{parse, SessionRef};
use crate::events::Event;

/// How far a look for changes goes into each session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Depth {
    /// The newest message and its parts.
    Newest,
    /// Every message and part a state read looks at ([`store::STATE_MESSAGES`]).
    Window,
}

impl Depth {
    fn messages(self) -> usize {
        match self {
            Depth::Newest => 1,
            Depth::Window => store::STATE_MESSAGES,
        }
    }

    fn index(self) -> usize {
        match self {
            Depth::Newest => 0,
            Depth::Window => 1,
        }
    }
}

/// What the last read of one session found.
#[derive(Debug)]
struct Seen {
    /// Its fingerprints at each [`Depth`] when it was read.
    prints: [String; 2],
    /// The session's events, or why there are none (it was deleted, the read failed).
    events: Result<Vec<Event>, String>,
    /// Which read this was ([`Reader::read_mark`]).
    mark: u64,
}

/// The sessions' events as of the last [`Reader::refresh`], and the databases they are read
/// from.
#[derive(Debug, Default)]
pub struct Reader {
    dbs: Databases,
    seen: HashMap<SessionRef, Seen>,
    /// Per database, `data_version` when it was last looked at to each [`Depth`].
    looked: HashMap<PathBuf, [Option<i64>; 2]>,
    /// Sessions whose rows were read (not taken from what was kept), for tests and counters.
    pub reads: u64,
    /// Sessions whose events were set, read or failed: the last one's [`Reader::read_mark`].
    marks: u64,
}

impl Reader {
    /// The connections, for the locator to share within a scan.
    pub fn databases(&mut self) -> &mut Databases {
        &mut self.dbs
    }

    /// Brings the kept events of `sessions` up to date with their databases, looking for
    /// changes to `depth`.
    pub fn refresh(&mut self, sessions: &[SessionRef], depth: Depth) {
        let mut by_db: BTreeMap<&PathBuf, Vec<&SessionRef>> = BTreeMap::new();
        for s in sessions {
            by_db.entry(&s.db).or_default().push(s);
        }
        for (db, refs) in by_db {
            if let Err(e) = self.refresh_db(db, &refs, depth) {
                // The next scan opens the database again and reads every session.
                self.dbs.forget(db);
                self.looked.remove(db.as_path());
                let why = format!("{e:#}");
                for r in refs {
                    self.marks += 1;
                    self.seen.insert(
                        r.clone(),
                        Seen {
                            prints: Default::default(),
                            events: Err(why.clone()),
                            mark: self.marks,
                        },
                    );
                }
            }
        }
    }

    fn refresh_db(&mut self, path: &Path, refs: &[&SessionRef], depth: Depth) -> Result<()> {
        let db = self.dbs.get(path)?;
        let version = db.data_version()?;
        let looked = self.looked.entry(path.to_path_buf()).or_default();
        let all_kept = refs
            .iter()
            .all(|r| self.seen.get(r).is_some_and(|s| s.events.is_ok()));
        if all_kept && looked[depth.index()] == Some(version) {
            return Ok(());
        }
        let seen = &mut self.seen;
        let reads = &mut self.reads;
        let marks = &mut self.marks;
        db.read(|tx, path| {
            let ids: Vec<&str> = refs.iter().map(|r| r.session.as_str()).collect();
            let prints = store::fingerprints(tx, path, &ids, depth.messages())?;
            let changed: Vec<&SessionRef> = refs
                .iter()
                .copied()
                .filter(|r| {
                    !seen.get(*r).is_some_and(|s| {
                        s.events.is_ok() && prints.get(&r.session) == Some(&s.prints[depth.index()])
                    })
                })
                .collect();
            if changed.is_empty() {
                return Ok(());
            }
            // Both fingerprints of what is read now, so the next look of either depth
            // compares like with like.
            let changed_ids: Vec<&str> = changed.iter().map(|r| r.session.as_str()).collect();
            let mut both: [HashMap<String, String>; 2] = Default::default();
            for d in [Depth::Newest, Depth::Window] {
                both[d.index()] = if d == depth {
                    prints.clone()
                } else {
                    store::fingerprints(tx, path, &changed_ids, d.messages())?
                };
            }
            for r in changed {
                let print = |d: Depth| both[d.index()].get(&r.session).cloned().unwrap_or_default();
                let events = match store::latest_in(tx, path, &r.session, store::STATE_MESSAGES)? {
                    Some(messages) => {
                        *reads += 1;
                        Ok(parse::events(&messages))
                    }
                    None => Err(gone(r)),
                };
                *marks += 1;
                seen.insert(
                    r.clone(),
                    Seen {
                        prints: [print(Depth::Newest), print(Depth::Window)],
                        events,
                        mark: *marks,
                    },
                );
            }
            Ok(())
        })?;
        let looked = self.looked.entry(path.to_path_buf()).or_default();
        looked[depth.index()] = Some(version);
        if depth == Depth::Window {
            // A look at every row covers a look at the newest ones.
            looked[Depth::Newest.index()] = Some(version);
        }
        Ok(())
    }

    /// A mark that moves each time the events of `session` are set afresh (read, or found
    /// gone or unreadable); `None` before the first time. Many sessions share one database,
    /// so a write to it says only that one of them may have changed: what was kept for a
    /// session whose mark did not move across a refresh still holds.
    pub fn read_mark(&self, session: &SessionRef) -> Option<u64> {
        self.seen.get(session).map(|s| s.mark)
    }

    /// The events of `session` as of the last refresh that covered it; `None` when none did.
    pub fn events(&self, session: &SessionRef) -> Option<Result<&[Event]>> {
        let seen = self.seen.get(session)?;
        Some(match &seen.events {
            Ok(events) => Ok(events),
            Err(why) => Err(anyhow::anyhow!("{why}")),
        })
    }

    /// Forgets the sessions `keep` says no to, and closes databases none of the rest is in.
    pub fn retain(&mut self, keep: impl Fn(&SessionRef) -> bool) {
        self.seen.retain(|r, _| keep(r));
        let seen = &self.seen;
        let in_use = |db: &Path| seen.keys().any(|r| r.db == db);
        self.dbs.retain(in_use);
        self.looked.retain(|db, _| in_use(db));
    }
}

fn gone(r: &SessionRef) -> String {
    format!("no session {} in {}", r.session, r.db.display())
}

#[cfg(test)]
mod tests {
    use super::super::store::testkit::{db_from, fixture};
    use super::*;

    const SESSION: &str = "ses_dcc45fdafffevJwm88T7RhVzyq";

    /// opencode writing the session's message `nth` from the newest (0: the newest) in place.
    fn finish(db: &Path, nth: usize, finish: &str) {
        let writer = rusqlite::Connection::open(db).unwrap();
        writer
            .execute(
                "UPDATE message SET time_updated = time_updated + 1, \
                 data = json_set(data, '$.finish', ?3) WHERE id = \
                 (SELECT id FROM message WHERE session_id = ?1 \
                  ORDER BY time_created DESC, id DESC LIMIT 1 OFFSET ?2)",
                rusqlite::params![SESSION, nth as i64, finish],
            )
            .unwrap();
    }

    /// opencode 1.18.33 answering an HTTP 400: the assistant message is written without any
    /// part, then written again in place with its error. A message without parts once made
    /// its fingerprint NULL, dropped from the token, so the watcher read `working` forever.
    #[test]
    fn a_message_without_parts_is_read_again_when_its_error_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let db = db_from(dir.path(), &fixture("session.sql"));
        let r = SessionRef {
            db: db.clone(),
            session: SESSION.into(),
        };
        let writer = rusqlite::Connection::open(&db).unwrap();
        writer
            .execute(
                "INSERT INTO message (id, session_id, time_created, time_updated, data) \
                 SELECT 'msg_zzz_failed', ?1, max(time_created) + 1, max(time_created) + 1, \
                 '{\"role\":\"assistant\",\"time\":{\"created\":1}}' \
                 FROM message WHERE session_id = ?1",
                [SESSION],
            )
            .unwrap();
        let mut reader = Reader::default();
        reader.refresh(std::slice::from_ref(&r), Depth::Window);
        let open = reader.events(&r).unwrap().unwrap().to_vec();
        assert_eq!(reader.reads, 1);
        writer
            .execute(
                "UPDATE message SET data = json_set(data, '$.time.completed', 2, \
                 '$.error', json('{\"name\":\"APIError\",\"data\":{\"message\":\"bad\",\
                 \"statusCode\":400}}')) WHERE id = 'msg_zzz_failed'",
                [],
            )
            .unwrap();
        for depth in [Depth::Newest, Depth::Window] {
            reader.refresh(std::slice::from_ref(&r), depth);
        }
        assert_eq!(reader.reads, 2, "the error was written: read again");
        assert_ne!(reader.events(&r).unwrap().unwrap(), &open[..]);
    }

    #[test]
    fn a_session_is_read_again_only_after_it_was_written() {
        let dir = tempfile::tempdir().unwrap();
        let db = db_from(dir.path(), &fixture("session.sql"));
        let r = SessionRef {
            db: db.clone(),
            session: SESSION.into(),
        };
        let gone = SessionRef {
            db: db.clone(),
            session: "ses_gone".into(),
        };
        let mut reader = Reader::default();
        reader.refresh(&[r.clone(), gone.clone()], Depth::Window);
        assert_eq!(reader.reads, 1);
        let before = reader.events(&r).unwrap().unwrap().to_vec();
        assert!(!before.is_empty());
        assert!(reader.events(&gone).unwrap().is_err(), "a missing session");

        for depth in [Depth::Newest, Depth::Window, Depth::Newest] {
            reader.refresh(std::slice::from_ref(&r), depth);
        }
        assert_eq!(reader.reads, 1, "nothing committed: nothing read");
        assert_eq!(reader.databases().opened, 1, "one connection, kept");

        // A commit elsewhere in the database that leaves the session's rows alone.
        let writer = rusqlite::Connection::open(&db).unwrap();
        writer
            .execute(
                "UPDATE session SET title = 'renamed' WHERE id = ?1",
                [SESSION],
            )
            .unwrap();
        reader.refresh(std::slice::from_ref(&r), Depth::Window);
        assert_eq!(reader.reads, 1, "its rows did not change");

        // opencode finishing the newest message: written in place.
        finish(&db, 0, "length");
        reader.refresh(std::slice::from_ref(&r), Depth::Newest);
        assert_eq!(reader.reads, 2, "written: read again");
        assert_ne!(reader.events(&r).unwrap().unwrap(), &before[..]);
        reader.refresh(std::slice::from_ref(&r), Depth::Window);
        assert_eq!(reader.reads, 2, "read already, at both depths");

        reader.retain(|_| false);
        assert!(reader.events(&r).is_none());
        reader.refresh(std::slice::from_ref(&r), Depth::Newest);
        assert_eq!(
            reader.databases().opened,
            2,
            "closed once no session needed it"
        );
    }

    #[test]
    fn a_write_below_the_newest_message_is_read_at_the_next_deep_look() {
        let dir = tempfile::tempdir().unwrap();
        let db = db_from(dir.path(), &fixture("session.sql"));
        let r = SessionRef {
            db: db.clone(),
            session: SESSION.into(),
        };
        let mut reader = Reader::default();
        reader.refresh(std::slice::from_ref(&r), Depth::Window);
        finish(&db, 3, "length");
        reader.refresh(std::slice::from_ref(&r), Depth::Newest);
        assert_eq!(reader.reads, 1, "a file wake looks at the newest rows only");
        reader.refresh(std::slice::from_ref(&r), Depth::Newest);
        reader.refresh(std::slice::from_ref(&r), Depth::Window);
        assert_eq!(reader.reads, 2, "the safety poll looks at every row read");
    }
}
