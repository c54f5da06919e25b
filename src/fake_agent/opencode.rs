//! The fake opencode: rows into `<XDG_DATA_HOME or ~/.local/share>/opencode/opencode.db`, the
//! SQLite database (WAL) every real opencode shares and holds open while it runs. A database
//! that does not exist yet is created as opencode 1.18.33 creates it (its recorded dump:
//! schema, `global` project, applied migrations). See docs/agents/opencode.md.
//!
//! The fixture is a SQL dump: each line of `INSERT INTO <table> VALUES(…);` statements (one or
//! more) is one step; other lines (schema, comments) are skipped. SQLite itself reads a step's
//! rows into a scratch in-memory copy of the schema; they are made the fake's own, then written
//! like opencode writes a row (an insert that updates the row in place when its id exists),
//! one transaction per step:
//!
//! - every `ses_…` id becomes the fake's session id, the session's `directory` its folder;
//! - `msg_…`/`prt_…` ids keep their time-ordered head and get a per-process tail, so two fakes
//!   replaying one fixture into one database never share a row;
//! - times (`time_*` columns, epoch milliseconds in the JSON `data`) become now: each recorded
//!   instant is mapped once, so a row written again keeps its creation time;
//! - `path.cwd` in a message's data becomes the fake's folder.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use rusqlite::types::Value as SqlValue;
use rusqlite::Connection;
use serde_json::Value;

use super::{env_dir, random_uuid, Sink};
use crate::paths;

/// The database opencode 1.18.33 creates at first start (a recorded `.dump`).
const FRESH_DB: &str = include_str!("../../fixtures/real-clients/opencode-1.18.33/fresh-db.sql");

/// A row read from a step: its table, column names and values.
type Row = (String, Vec<String>, Vec<SqlValue>);

/// The tables a step's rows are written in first, in this order: a row's parent before it.
const PARENTS_FIRST: [&str; 3] = ["session", "message", "part"];

/// Epoch milliseconds start here (2001); smaller numbers are not times.
const MIN_MS: i64 = 1_000_000_000_000;

/// The fixture's replay steps: its `INSERT` lines.
pub fn steps(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| l.starts_with("INSERT INTO "))
        .map(str::to_string)
        .collect()
}

/// An opencode database the fake holds open and writes its session into.
pub struct Store {
    db: PathBuf,
    conn: Connection,
    /// The schema alone, where SQLite reads each fixture row.
    scratch: Connection,
    session_id: String,
    cwd: String,
    /// The per-process tail of message and part ids.
    tail: String,
    /// Recorded instant → the time it was replayed at.
    times: HashMap<i64, i64>,
}

impl Sink for Store {
    fn target(&self) -> &Path {
        &self.db
    }

    fn consumed(&self) -> usize {
        0
    }

    /// Writes the rows of one step in one transaction, parents first (the database enforces
    /// its foreign keys, as opencode's does).
    fn append(&mut self, step: &str) -> Result<()> {
        let rows = self.read_rows(step)?;
        let now = chrono::Utc::now().timestamp_millis();
        let rows: Vec<Row> = rows
            .into_iter()
            .map(|(table, columns, values)| {
                let values = columns
                    .iter()
                    .zip(values)
                    .map(|(c, v)| self.own_value(&table, c, v, now))
                    .collect();
                (table, columns, values)
            })
            .collect();
        let tx = self.conn.transaction()?;
        for (table, columns, values) in rows {
            let names: Vec<String> = columns.iter().map(|c| format!("`{c}`")).collect();
            let marks = vec!["?"; columns.len()].join(", ");
            let updates: Vec<String> = names
                .iter()
                .map(|n| format!("{n} = excluded.{n}"))
                .collect();
            // Like opencode's writes: a row whose id exists is updated in place.
            let sql = format!(
                "INSERT INTO `{table}` ({}) VALUES ({marks}) ON CONFLICT DO UPDATE SET {}",
                names.join(", "),
                updates.join(", ")
            );
            tx.execute(&sql, rusqlite::params_from_iter(values))
                .with_context(|| format!("cannot write a {table} row to {}", self.db.display()))?;
        }
        tx.commit()
            .with_context(|| format!("cannot write to {}", self.db.display()))
    }

    /// The fixture again as new messages of the same session: fresh ids and times.
    fn restart(&mut self) {
        self.tail = id_tail(&random_uuid(), 14);
        self.times.clear();
    }

    fn finish(self: Box<Self>) {}
}

impl Store {
    /// Opens (creating it if needed) the database of this process's data folder, `name`
    /// (`opencode`, or `kilo` for Kilo, which keeps opencode's store under its own name).
    pub fn create(name: &str) -> Result<Store> {
        let cwd = std::env::current_dir()
            .context("cannot read the working directory")?
            .to_string_lossy()
            .into_owned();
        let data = env_dir("XDG_DATA_HOME").unwrap_or_else(|| {
            env_dir("HOME")
                .unwrap_or_else(paths::home_dir)
                .join(".local/share")
        });
        let root = data.join(name);
        std::fs::create_dir_all(&root)
            .with_context(|| format!("cannot create {}", root.display()))?;
        let db = root.join(format!("{name}.db"));
        let mut conn =
            Connection::open(&db).with_context(|| format!("cannot open {}", db.display()))?;
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        conn.pragma_update_and_check(None, "journal_mode", "WAL", |_| Ok(()))?;
        // Immediate: two fakes starting at once must not both create the tables.
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let fresh: bool = tx.query_row(
            "SELECT count(*) = 0 FROM sqlite_master WHERE type = 'table' AND name = 'session'",
            [],
            |r| r.get(0),
        )?;
        if fresh {
            tx.execute_batch(strip_transaction(FRESH_DB).as_str())
                .with_context(|| format!("cannot create the tables of {}", db.display()))?;
        }
        tx.commit()?;
        let scratch = scratch()?;
        let session_id = format!("ses_{}", id_tail(&random_uuid(), 26));
        Ok(Store {
            db,
            conn,
            scratch,
            session_id,
            cwd,
            tail: id_tail(&random_uuid(), 14),
            times: HashMap::new(),
        })
    }

    /// Reads one step (a line of one or more `INSERT`s) with SQLite: each row's table,
    /// columns and values, parents first.
    fn read_rows(&self, step: &str) -> Result<Vec<Row>> {
        let mut tables: Vec<String> = self
            .scratch
            .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")?
            .query_map([], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        for table in &tables {
            self.scratch
                .execute(&format!("DELETE FROM `{table}`"), [])?;
        }
        self.scratch
            .execute_batch(step)
            .with_context(|| format!("cannot read the row {}", crate::text::chars(step, 80)))?;
        let rank = |t: &String| {
            PARENTS_FIRST
                .iter()
                .position(|p| p == t)
                .unwrap_or(usize::MAX)
        };
        tables.sort_by_key(rank);
        let mut rows = Vec::new();
        for table in tables {
            let mut stmt = self
                .scratch
                .prepare(&format!("SELECT * FROM `{table}` ORDER BY rowid"))?;
            let columns: Vec<String> = stmt.column_names().iter().map(|c| c.to_string()).collect();
            let found = stmt
                .query_map([], |r| {
                    (0..columns.len())
                        .map(|i| r.get::<_, SqlValue>(i))
                        .collect::<rusqlite::Result<Vec<_>>>()
                })?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            rows.extend(
                found
                    .into_iter()
                    .map(|values| (table.clone(), columns.clone(), values)),
            );
        }
        if rows.is_empty() {
            bail!(
                "not a row of an opencode table: {}",
                crate::text::chars(step, 80)
            );
        }
        Ok(rows)
    }

    /// One column's value, made the fake's own.
    fn own_value(&mut self, table: &str, column: &str, v: SqlValue, now: i64) -> SqlValue {
        match v {
            SqlValue::Integer(n) if column.starts_with("time_") => {
                SqlValue::Integer(self.own_time(n, now))
            }
            SqlValue::Text(_) if table == "session" && column == "directory" => {
                SqlValue::Text(self.cwd.clone())
            }
            // The folder relative to the project's worktree: `/` for the `global` project.
            SqlValue::Text(_) if table == "session" && column == "path" => {
                SqlValue::Text(self.cwd.trim_start_matches('/').to_string())
            }
            SqlValue::Text(s) if column == "data" => match serde_json::from_str::<Value>(&s) {
                Ok(mut json) => {
                    self.own_json(&mut json, None, now);
                    SqlValue::Text(json.to_string())
                }
                Err(_) => SqlValue::Text(s),
            },
            SqlValue::Text(s) => SqlValue::Text(self.own_id(&s)),
            other => other,
        }
    }

    fn own_json(&mut self, v: &mut Value, key: Option<&str>, now: i64) {
        match v {
            Value::Object(map) => {
                for (k, child) in map.iter_mut() {
                    if key == Some("path") && k == "cwd" {
                        *child = Value::String(self.cwd.clone());
                    } else {
                        self.own_json(child, Some(k), now);
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|i| self.own_json(i, None, now)),
            Value::String(s) => *s = self.own_id(s),
            Value::Number(n) if key.is_some() => {
                if let Some(ms) = n.as_i64().filter(|ms| *ms >= MIN_MS) {
                    *v = Value::from(self.own_time(ms, now));
                }
            }
            _ => {}
        }
    }

    /// A recorded instant replayed now; the same instant always maps to the same time.
    fn own_time(&mut self, recorded: i64, now: i64) -> i64 {
        if recorded < MIN_MS {
            return recorded;
        }
        *self.times.entry(recorded).or_insert(now)
    }

    fn own_id(&self, s: &str) -> String {
        if is_id(s, "ses_") {
            return self.session_id.clone();
        }
        if is_id(s, "msg_") || is_id(s, "prt_") {
            // `msg_` + 12 hex digits (time and counter: the order) + 14 random characters.
            return format!("{}{}", &s[..16], self.tail);
        }
        s.to_string()
    }
}

/// An empty in-memory copy of the schema, without foreign keys: a step's rows may refer to
/// rows of earlier steps.
fn scratch() -> Result<Connection> {
    let scratch = Connection::open_in_memory()?;
    scratch.execute_batch(FRESH_DB)?;
    scratch.pragma_update(None, "foreign_keys", false)?;
    Ok(scratch)
}

/// An opencode id: the prefix, 26 ASCII letters and digits.
fn is_id(s: &str, prefix: &str) -> bool {
    s.strip_prefix(prefix)
        .is_some_and(|rest| rest.len() == 26 && rest.bytes().all(|b| b.is_ascii_alphanumeric()))
}

/// `n` letters and digits from a random UUID (its hex digits, then more from another).
fn id_tail(seed: &str, n: usize) -> String {
    let mut out: String = seed.chars().filter(char::is_ascii_alphanumeric).collect();
    while out.len() < n {
        out.extend(random_uuid().chars().filter(char::is_ascii_alphanumeric));
    }
    out.truncate(n);
    out
}

/// A dump without its `BEGIN TRANSACTION;`/`COMMIT;` lines (it runs inside one of ours).
fn strip_transaction(dump: &str) -> String {
    dump.lines()
        .filter(|l| !matches!(l.trim(), "BEGIN TRANSACTION;" | "COMMIT;"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    const REPLAY: &str = include_str!("../../fixtures/real-clients/opencode-1.18.33/replay.sql");

    fn store_in(dir: &Path) -> Store {
        let db = dir.join("opencode.db");
        let conn = Connection::open(&db).unwrap();
        conn.execute_batch(FRESH_DB).unwrap();
        let scratch = scratch().unwrap();
        Store {
            db,
            conn,
            scratch,
            session_id: "ses_000000000000000000000000me".into(),
            cwd: "/w/here".into(),
            tail: "TTTTTTTTTTTTTT".into(),
            times: HashMap::new(),
        }
    }

    #[test]
    fn the_replay_fixture_is_real_rows() {
        // Every row of the replay fixture is a row of the recordings, unchanged.
        let dir =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/real-clients/opencode-1.18.33");
        let mut recorded: Vec<String> = ["session.sql", "in-flight.sql"]
            .iter()
            .flat_map(|f| steps(&std::fs::read_to_string(dir.join(f)).unwrap()))
            .collect();
        recorded.sort_by_key(|r| std::cmp::Reverse(r.len()));
        let replay = steps(REPLAY);
        assert_eq!(replay.len(), 14);
        assert_eq!(REPLAY.matches("INSERT INTO ").count(), 20);
        let mut rest = replay.join("\n");
        for row in &recorded {
            rest = rest.replace(row.as_str(), "");
        }
        assert!(rest.trim().is_empty(), "not recorded: {rest}");
    }

    #[test]
    fn rows_become_the_fakes_own_and_read_back_like_opencodes() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = store_in(dir.path());
        let rows = steps(REPLAY);
        for row in &rows[..4] {
            store.append(row).unwrap();
        }
        let db = dir.path().join("opencode.db");
        let sessions =
            crate::agents::opencode::store::sessions_in(&db, &["/w/here".to_string()]).unwrap();
        assert_eq!(sessions.len(), 1);
        assert_eq!(sessions[0].id, store.session_id);
        let now = chrono::Utc::now().timestamp_millis();
        assert!(
            (now - sessions[0].created_ms).abs() < 60_000,
            "{sessions:?}"
        );
        let end = crate::agents::opencode::store::last_turn_end(&db, &store.session_id)
            .unwrap()
            .expect("the first turn ended");
        assert_eq!(end.finish.as_deref(), Some("stop"));
        assert!(end.id.ends_with("TTTTTTTTTTTTTT"), "{}", end.id);
        let text: String = end.parts.iter().filter_map(|p| p.text.clone()).collect();
        assert!(text.starts_with("Here is the answer."), "{text}");
        // The in-flight row and its final version are one row; its start time stays.
        for row in &rows[4..] {
            store.append(row).unwrap();
        }
        let messages = crate::agents::opencode::store::latest_messages(&db, &store.session_id, 12)
            .unwrap()
            .unwrap();
        assert_eq!(messages.len(), 5, "{messages:?}");
        let tool: Vec<_> = messages
            .iter()
            .flat_map(|m| &m.parts)
            .filter(|p| p.kind == "tool")
            .collect();
        assert_eq!(tool.len(), 1);
        assert_eq!(tool[0].status.as_deref(), Some("completed"));
        let cwd: String = store
            .conn
            .query_row(
                "SELECT json_extract(data, '$.path.cwd') FROM message WHERE data LIKE '%cwd%' LIMIT 1",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(cwd, "/w/here");
    }

    #[test]
    fn a_line_that_is_not_an_opencode_row_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = store_in(dir.path());
        assert!(store.append("INSERT INTO nowhere VALUES(1);").is_err());
        assert!(store.append("INSERT INTO session VALUES(1);").is_err());
    }
}
