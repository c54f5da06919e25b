//! Reading opencode's database without disturbing the agent: read-only connections (no
//! checkpoint on close, no write lock ever), a short busy timeout, every read of one session
//! inside one transaction (a WAL snapshot: rows updated in place are never seen half
//! written). Only the fields agentpane uses are pulled out of the JSON `data` columns by
//! SQLite itself, so a huge tool output never crosses into agentpane, and only the latest rows
//! of a session are read.
//!
//! A connection ([`Db`]) is opened once per scan for every pane on that database, and a
//! long-running caller (the watcher) keeps it between scans ([`Databases`]): opening is most
//! of a read's cost, and every open touches the `-wal` and `-shm` files (as root SQLite even
//! `fchown`s them), which a file watch on the folder sees. Kept open, the connection tells
//! whether anyone committed since it last looked (`PRAGMA data_version`) without reading a
//! row, and [`fingerprints`] which sessions changed without loading a JSON column.

use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};
use rusqlite::{Connection, OpenFlags, OptionalExtension};

/// How long a read waits for a lock before it gives up (opencode holds write locks for
/// milliseconds; a scan never waits longer than this).
const BUSY_TIMEOUT: Duration = Duration::from_millis(250);

/// How many of a session's newest messages a state read looks at: one turn's user prompt and
/// its latest assistant steps.
pub const STATE_MESSAGES: usize = 12;

/// How far back (in messages) an answer is looked for: a turn of more tool steps than this
/// since its last answer has none to hand on, and the read stays bounded.
pub const ANSWER_MESSAGES: usize = 2000;

/// One `session` row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionRow {
    pub id: String,
    pub directory: String,
    pub title: String,
    /// Milliseconds since the epoch.
    pub created_ms: i64,
    pub updated_ms: i64,
}

/// What agentpane reads of one `message` row.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MessageRow {
    pub id: String,
    /// `user` or `assistant`.
    pub role: String,
    pub created_ms: i64,
    /// The row's last write.
    pub updated_ms: i64,
    /// `time.completed`: the assistant message is finished (answered, failed or aborted).
    pub completed_ms: Option<i64>,
    /// `finish`: `stop`, `tool-calls`, `length`, … (absent while streaming and after an abort).
    pub finish: Option<String>,
    /// `error.name`: `APIError`, `ProviderAuthError`, `MessageAbortedError`, …
    pub error_name: Option<String>,
    pub error_message: Option<String>,
    pub status_code: Option<i64>,
    /// The user message an assistant message answers.
    pub parent: Option<String>,
    pub parts: Vec<PartRow>,
}

/// What agentpane reads of one `part` row.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PartRow {
    pub id: String,
    /// `text`, `tool`, `reasoning`, `step-start`, `step-finish`, …
    pub kind: String,
    pub updated_ms: i64,
    /// Tool parts: the tool's name (`bash`, `edit`, …), call id and `state.status`
    /// (`pending`, `running`, `completed`, `error`).
    pub tool: Option<String>,
    pub call_id: Option<String>,
    pub status: Option<String>,
    /// Tool parts: `state.metadata` is present (a running tool writes it once it really runs;
    /// a tool waiting for permission has none).
    pub has_metadata: bool,
    /// Tool parts that failed: the error (at most 200 characters), e.g. opencode's "The user
    /// rejected permission to use this specific tool call."
    pub error: Option<String>,
    /// Text parts: the text (other parts never load their payload).
    pub text: Option<String>,
    /// Text parts opencode adds itself (`synthetic`) or leaves out (`ignored`).
    pub hidden: bool,
}

/// One read-only connection to an opencode database.
#[derive(Debug)]
pub struct Db {
    path: PathBuf,
    conn: Connection,
    /// Device and inode of the file opened: a database replaced under the same name (deleted
    /// and created again) is opened again.
    file: (u64, u64),
}

impl Db {
    /// Opens `db` read-only.
    pub fn open(db: &Path) -> Result<Db> {
        let file = identity(db).with_context(|| format!("cannot open {}", db.display()))?;
        let conn = Connection::open_with_flags(
            db,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .with_context(|| format!("cannot open {} read-only", db.display()))?;
        conn.busy_timeout(BUSY_TIMEOUT)
            .with_context(|| format!("cannot read {}", db.display()))?;
        Ok(Db {
            path: db.to_path_buf(),
            conn,
            file,
        })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// `PRAGMA data_version`: it moves whenever another connection commits. Taken before a
    /// read, a commit in between makes the next comparison say "changed" once more, never
    /// "unchanged" too early.
    pub fn data_version(&self) -> Result<i64> {
        self.conn
            .prepare_cached("PRAGMA data_version")
            .and_then(|mut q| q.query_row([], |r| r.get(0)))
            .with_context(|| format!("cannot read {}", self.path.display()))
    }

    /// Runs `f` in one read transaction: everything it reads comes from one snapshot.
    pub fn read<T>(&mut self, f: impl FnOnce(&Connection, &Path) -> Result<T>) -> Result<T> {
        let tx = self
            .conn
            .transaction()
            .with_context(|| format!("cannot read {}", self.path.display()))?;
        let out = f(&tx, &self.path)?;
        tx.finish()?;
        Ok(out)
    }
}

fn identity(path: &Path) -> std::io::Result<(u64, u64)> {
    let meta = std::fs::metadata(path)?;
    Ok((meta.dev(), meta.ino()))
}

/// The databases a scan reads, each opened once; a long-running caller keeps them between
/// scans.
#[derive(Debug, Default)]
pub struct Databases {
    open: HashMap<PathBuf, Db>,
    /// Connections opened, for tests and the watcher's counters.
    pub opened: u64,
}

impl Databases {
    /// The connection to `db`, opened if it is not open yet or the file was replaced.
    pub fn get(&mut self, db: &Path) -> Result<&mut Db> {
        let current = identity(db).ok();
        let kept = self.open.get(db).is_some_and(|d| Some(d.file) == current);
        if !kept {
            self.open.remove(db);
            let fresh = Db::open(db)?;
            self.opened += 1;
            self.open.insert(db.to_path_buf(), fresh);
        }
        Ok(self.open.get_mut(db).expect("inserted above"))
    }

    /// Closes the connections to databases `keep` says no to.
    pub fn retain(&mut self, keep: impl Fn(&Path) -> bool) {
        self.open.retain(|p, _| keep(p));
    }

    /// Closes a connection that failed: the next read opens it again.
    pub fn forget(&mut self, db: &Path) {
        self.open.remove(db);
    }
}

/// Top-level, unarchived sessions whose directory is one of `dirs`, newest activity first (at
/// most 50).
pub fn sessions_in(db: &Path, dirs: &[String]) -> Result<Vec<SessionRow>> {
    let db = Db::open(db)?;
    sessions_in_db(&db, dirs)
}

/// [`sessions_in`] on an open database.
pub fn sessions_in_db(db: &Db, dirs: &[String]) -> Result<Vec<SessionRow>> {
    let (conn, db) = (&db.conn, db.path.as_path());
    let mut out = Vec::new();
    let mut stmt = conn
        .prepare_cached(
            "SELECT id, directory, title, time_created, time_updated FROM session \
             WHERE directory = ?1 AND parent_id IS NULL AND time_archived IS NULL \
             ORDER BY time_updated DESC LIMIT 50",
        )
        .with_context(|| format!("{} is not an opencode database", db.display()))?;
    for dir in dirs {
        let rows = stmt.query_map([dir], |r| {
            Ok(SessionRow {
                id: r.get(0)?,
                directory: r.get(1)?,
                title: r.get(2)?,
                created_ms: r.get(3)?,
                updated_ms: r.get(4)?,
            })
        })?;
        for row in rows {
            let row = row?;
            if !out.iter().any(|s: &SessionRow| s.id == row.id) {
                out.push(row);
            }
        }
    }
    out.sort_by_key(|s| std::cmp::Reverse(s.updated_ms));
    Ok(out)
}

const MESSAGE_COLUMNS: &str = "id, json_extract(data, '$.role'), time_created, time_updated, \
     json_extract(data, '$.time.completed'), json_extract(data, '$.finish'), \
     json_extract(data, '$.error.name'), json_extract(data, '$.error.data.message'), \
     json_extract(data, '$.error.data.statusCode'), json_extract(data, '$.parentID')";

fn message_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<MessageRow> {
    Ok(MessageRow {
        id: r.get(0)?,
        role: r.get::<_, Option<String>>(1)?.unwrap_or_default(),
        created_ms: r.get(2)?,
        updated_ms: r.get(3)?,
        completed_ms: r.get(4)?,
        finish: r.get(5)?,
        error_name: r.get(6)?,
        error_message: r.get(7)?,
        status_code: r.get(8).ok().flatten(),
        parent: r.get(9)?,
        parts: Vec::new(),
    })
}

/// The newest `limit` messages of `session` with their parts, oldest first, read in one
/// transaction. `Ok(None)` when the session does not exist (deleted).
pub fn latest_messages(db: &Path, session: &str, limit: usize) -> Result<Option<Vec<MessageRow>>> {
    Db::open(db)?.read(|tx, db| latest_in(tx, db, session, limit))
}

/// [`latest_messages`] inside a read of `db` ([`Db::read`]).
pub fn latest_in(
    tx: &Connection,
    db: &Path,
    session: &str,
    limit: usize,
) -> Result<Option<Vec<MessageRow>>> {
    let exists = tx
        .prepare_cached("SELECT 1 FROM session WHERE id = ?1")
        .and_then(|mut q| q.query_row([session], |_| Ok(())).optional())
        .with_context(|| format!("{} is not an opencode database", db.display()))?;
    if exists.is_none() {
        return Ok(None);
    }
    // Limits are written into the SQL: a bound `LIMIT ?` kept SQLite from stopping early
    // on the index (nine times as slow, measured on a busy database).
    let mut messages: Vec<MessageRow> = tx
        .prepare_cached(&format!(
            "SELECT {MESSAGE_COLUMNS} FROM message WHERE session_id = ?1 \
             ORDER BY time_created DESC, id DESC LIMIT {limit}"
        ))?
        .query_map([session], message_row)?
        .collect::<rusqlite::Result<_>>()?;
    messages.reverse();
    let mut parts = tx.prepare_cached(PART_QUERY)?;
    for m in &mut messages {
        m.parts = parts
            .query_map([&m.id], part_row)?
            .collect::<rusqlite::Result<_>>()?;
    }
    Ok(Some(messages))
}

/// A token per session that changes whenever one of its newest `limit` messages, or a part
/// of one of them, is written, added or removed (with [`STATE_MESSAGES`], what
/// [`latest_in`] reads): their ids, write times and sizes. SQLite reads them from the
/// indexes and the rows' headers: `octet_length` does not load the JSON. One indexed
/// statement per session; a session without messages, or none at all, has the empty token.
/// Every term is coalesced: a message without parts (opencode's assistant message that failed
/// before its first part) would otherwise make its whole entry NULL, which `group_concat`
/// drops, and its error would never be seen.
pub fn fingerprints(
    tx: &Connection,
    db: &Path,
    sessions: &[&str],
    limit: usize,
) -> Result<HashMap<String, String>> {
    let mut stmt = tx
        .prepare_cached(&format!(
            "SELECT group_concat(m.id || '.' || coalesce(m.time_updated, '') || '.' \
               || coalesce(octet_length(m.data), '') || ':' \
               || (SELECT count(*) || '.' || coalesce(max(p.time_updated), '') || '.' \
                          || total(octet_length(p.data)) FROM part p WHERE p.message_id = m.id), \
               ' ') \
             FROM (SELECT id, time_updated, data FROM message WHERE session_id = ?1 \
                   ORDER BY time_created DESC, id DESC LIMIT {limit}) AS m"
        ))
        .with_context(|| format!("{} is not an opencode database", db.display()))?;
    let mut out = HashMap::new();
    for session in sessions {
        let print: Option<String> = stmt.query_row([session], |r| r.get(0))?;
        out.insert(session.to_string(), print.unwrap_or_default());
    }
    Ok(out)
}

/// The newest assistant message of `session` that ended its turn one way or another (an
/// answer, an error, an abort), with its parts; steps that only called tools are passed over.
pub fn last_turn_end(db: &Path, session: &str) -> Result<Option<MessageRow>> {
    Db::open(db)?.read(|tx, db| last_turn_end_in(tx, db, session))
}

fn last_turn_end_in(tx: &Connection, db: &Path, session: &str) -> Result<Option<MessageRow>> {
    let found = tx
        .query_row(
            &format!(
                "SELECT {MESSAGE_COLUMNS} FROM (SELECT * FROM message WHERE session_id = ?1 \
                 ORDER BY time_created DESC, id DESC LIMIT {ANSWER_MESSAGES}) \
                 WHERE json_extract(data, '$.role') = 'assistant' \
                 AND json_extract(data, '$.time.completed') IS NOT NULL \
                 AND coalesce(json_extract(data, '$.finish'), '') NOT IN ('tool-calls', 'unknown') \
                 ORDER BY time_created DESC, id DESC LIMIT 1"
            ),
            [session],
            message_row,
        )
        .optional()
        .with_context(|| format!("{} is not an opencode database", db.display()))?;
    let Some(mut m) = found else {
        return Ok(None);
    };
    m.parts = tx
        .prepare_cached(PART_QUERY)?
        .query_map([&m.id], part_row)?
        .collect::<rusqlite::Result<_>>()?;
    Ok(Some(m))
}

const PART_QUERY: &str = "SELECT id, json_extract(data, '$.type'), time_updated, \
     json_extract(data, '$.tool'), json_extract(data, '$.callID'), \
     json_extract(data, '$.state.status'), \
     json_type(data, '$.state.metadata') IS NOT NULL, \
     CASE WHEN json_extract(data, '$.type') = 'text' THEN json_extract(data, '$.text') END, \
     coalesce(json_extract(data, '$.synthetic'), 0) OR coalesce(json_extract(data, '$.ignored'), 0), \
     substr(json_extract(data, '$.state.error'), 1, 200) \
     FROM part WHERE message_id = ?1 ORDER BY id";

fn part_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<PartRow> {
    Ok(PartRow {
        id: r.get(0)?,
        kind: r.get::<_, Option<String>>(1)?.unwrap_or_default(),
        updated_ms: r.get(2)?,
        tool: r.get(3)?,
        call_id: r.get(4)?,
        status: r.get(5)?,
        has_metadata: r.get(6)?,
        text: r.get(7)?,
        hidden: r.get(8)?,
        error: r.get(9).ok().flatten(),
    })
}

#[cfg(test)]
pub mod testkit {
    //! A database built from a recorded real-client dump.

    use std::path::{Path, PathBuf};

    /// Writes `sql` (a `sqlite3 .dump` of real rows) into a fresh WAL database in `dir`.
    pub fn db_from(dir: &Path, sql: &str) -> PathBuf {
        let path = dir.join("opencode.db");
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.pragma_update(None, "journal_mode", "wal").unwrap();
        conn.execute_batch(sql).unwrap();
        path
    }

    /// The recorded fixture `name` under `fixtures/real-clients/opencode-1.18.33/`.
    pub fn fixture(name: &str) -> String {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/real-clients/opencode-1.18.33")
            .join(name);
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::testkit::*;
    use super::*;

    const SESSION: &str = "ses_dcc45fdafffevJwm88T7RhVzyq";

    #[test]
    fn reads_the_latest_messages_with_their_parts() {
        let dir = tempfile::tempdir().unwrap();
        let db = db_from(dir.path(), &fixture("session.sql"));
        let all = latest_messages(&db, SESSION, 100).unwrap().unwrap();
        assert!(all.len() > 8, "{}", all.len());
        assert!(all.windows(2).all(|w| w[0].created_ms <= w[1].created_ms));
        let last3 = latest_messages(&db, SESSION, 3).unwrap().unwrap();
        assert_eq!(last3.len(), 3);
        assert_eq!(last3[2], all[all.len() - 1]);
        let tool = all
            .iter()
            .flat_map(|m| &m.parts)
            .find(|p| p.kind == "tool")
            .unwrap();
        assert_eq!(tool.tool.as_deref(), Some("bash"));
        assert_eq!(tool.status.as_deref(), Some("completed"));
        assert!(tool.has_metadata);
        assert_eq!(tool.text, None, "a tool part's payload is never loaded");
        assert_eq!(latest_messages(&db, "ses_gone", 5).unwrap(), None);
    }

    #[test]
    fn sessions_are_found_by_directory() {
        let dir = tempfile::tempdir().unwrap();
        let db = db_from(dir.path(), &fixture("session.sql"));
        let found = sessions_in(&db, &["/elsewhere".into(), "/tmp/oc/w/proj".into()]).unwrap();
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].id, SESSION);
        assert!(sessions_in(&db, &["/elsewhere".into()]).unwrap().is_empty());
    }

    #[test]
    fn a_write_in_progress_is_neither_seen_nor_waited_for() {
        let dir = tempfile::tempdir().unwrap();
        let db = db_from(dir.path(), &fixture("session.sql"));
        let before = latest_messages(&db, SESSION, 3).unwrap().unwrap();
        // opencode updates a message in place inside its own transaction.
        let mut writer = Connection::open(&db).unwrap();
        let tx = writer.transaction().unwrap();
        tx.execute(
            "UPDATE message SET data = json_set(data, '$.finish', 'stop') WHERE id = ?1",
            [&before[2].id],
        )
        .unwrap();
        let started = std::time::Instant::now();
        let during = latest_messages(&db, SESSION, 3).unwrap().unwrap();
        assert!(started.elapsed() < BUSY_TIMEOUT, "the reader never waits");
        assert_eq!(during, before, "an uncommitted write is not seen");
        tx.commit().unwrap();
        let after = latest_messages(&db, SESSION, 3).unwrap().unwrap();
        assert_eq!(after[2].finish.as_deref(), Some("stop"));
    }

    #[test]
    fn a_file_that_is_not_a_database_is_an_error_not_a_panic() {
        let dir = tempfile::tempdir().unwrap();
        let bad = dir.path().join("opencode.db");
        std::fs::write(&bad, b"not sqlite at all, just text").unwrap();
        assert!(latest_messages(&bad, SESSION, 5).is_err());
        assert!(sessions_in(&bad, &["/x".into()]).is_err());
        assert!(latest_messages(&dir.path().join("missing.db"), SESSION, 5).is_err());
    }
}
