//! A session's usage from opencode's database (Kilo's too), in one read-only statement. Every
//! assistant message row holds `modelID`, `cost` (in dollars, as opencode prices it) and
//! `tokens {input, output, reasoning, cache {read, write}}` (`input` without the cached
//! tokens), updated in place while it streams: one row per request. The session row keeps
//! opencode's running totals of the same (`cost`, `tokens_*`), so the session's counts are one
//! row read, however long the session: in = input + cache read + cache write, out = output +
//! reasoning (as opencode's own `stats` sums them). A database whose session rows have no
//! totals has them summed over its messages. The context in use is what opencode's sidebar
//! shows: the five counts of the newest assistant message that produced output. The window is
//! not in the database.

use anyhow::{Context, Result};
use rusqlite::{Connection, OptionalExtension};

use super::store::Db;
use super::SessionRef;
use crate::usage::{Reading, Tally, Usage};

/// The model of the session's newest assistant message and the context of the newest one
/// that produced output: both found walking back from the newest message.
const NEWEST: &str = "\
    (SELECT json_extract(data, '$.modelID') FROM message \
       WHERE session_id = ?1 AND json_extract(data, '$.role') = 'assistant' \
       ORDER BY time_created DESC, id DESC LIMIT 1), \
    (SELECT CAST(coalesce(json_extract(data, '$.tokens.input'), 0) \
                 + coalesce(json_extract(data, '$.tokens.output'), 0) \
                 + coalesce(json_extract(data, '$.tokens.reasoning'), 0) \
                 + coalesce(json_extract(data, '$.tokens.cache.read'), 0) \
                 + coalesce(json_extract(data, '$.tokens.cache.write'), 0) AS INTEGER) \
       FROM message \
       WHERE session_id = ?1 AND json_extract(data, '$.role') = 'assistant' \
       AND json_extract(data, '$.tokens.output') > 0 \
       ORDER BY time_created DESC, id DESC LIMIT 1)";

/// The session row's own running totals (opencode adds each finished step's counts and cost
/// to them): one row read, whatever the session's length.
fn by_row() -> String {
    format!(
        "SELECT tokens_input + tokens_cache_read + tokens_cache_write, \
                tokens_output + tokens_reasoning, cost, 1, {NEWEST} \
         FROM session WHERE id = ?1"
    )
}

/// The same summed over the session's assistant messages, for a database whose session rows
/// keep no totals (a release before they did).
fn by_messages() -> String {
    format!(
        "SELECT CAST(total(coalesce(json_extract(data, '$.tokens.input'), 0) \
                      + coalesce(json_extract(data, '$.tokens.cache.read'), 0) \
                      + coalesce(json_extract(data, '$.tokens.cache.write'), 0)) AS INTEGER), \
                CAST(total(coalesce(json_extract(data, '$.tokens.output'), 0) \
                      + coalesce(json_extract(data, '$.tokens.reasoning'), 0)) AS INTEGER), \
                total(coalesce(json_extract(data, '$.cost'), 0)), \
                max(json_type(data, '$.cost') IN ('integer', 'real')), {NEWEST} \
         FROM message WHERE session_id = ?1 AND json_extract(data, '$.role') = 'assistant'"
    )
}

/// The usage of `session`, read in one transaction of a fresh read-only connection.
pub fn session_usage(session: &SessionRef) -> Result<Usage> {
    Db::open(&session.db)?.read(|tx, db| {
        usage_in(tx, &session.session)
            .with_context(|| format!("{} is not an opencode database", db.display()))
    })
}

/// [`session_usage`] inside a read of the database.
pub fn usage_in(tx: &Connection, session: &str) -> rusqlite::Result<Usage> {
    let query = match tx.prepare_cached(&by_row()) {
        Err(e) if e.to_string().contains("no such column") => tx.prepare_cached(&by_messages()),
        q => q,
    };
    let row = query?
        .query_row([session], |r| {
            Ok((
                r.get::<_, Option<i64>>(0)?,
                r.get::<_, Option<i64>>(1)?,
                r.get::<_, Option<f64>>(2)?,
                r.get::<_, Option<bool>>(3)?,
                r.get::<_, Option<String>>(4)?,
                r.get::<_, Option<i64>>(5)?,
            ))
        })
        .optional()?;
    let Some((input, output, cost, priced, model, context)) = row else {
        return Ok(Usage::default());
    };
    let count = |n: Option<i64>| n.and_then(|n| u64::try_from(n).ok()).unwrap_or(0);
    let mut t = Tally::default();
    t.push(Reading {
        model,
        context_tokens: context.and_then(|n| u64::try_from(n).ok()),
        totals: Some((count(input), count(output))),
        cost_usd: cost.filter(|c| priced == Some(true) && c.is_finite()),
        ..Reading::default()
    });
    Ok(t.usage(None))
}

#[cfg(test)]
mod tests {
    use super::super::store::testkit::{db_from, fixture};
    use super::*;

    const SESSION: &str = "ses_dcc45fdafffevJwm88T7RhVzyq";

    fn usage_of(sql: &str, session: &str) -> Usage {
        let dir = tempfile::tempdir().unwrap();
        let db = db_from(dir.path(), sql);
        session_usage(&SessionRef {
            db,
            session: session.into(),
        })
        .unwrap()
    }

    #[test]
    fn the_recorded_session_reads_its_totals() {
        // Four requests of 10 in, 5 out (the session row's own totals say 40 and 20), the
        // rest aborted or failed with zero counts; cost 0 as the stand-in's model is priced.
        let u = usage_of(&fixture("session.sql"), SESSION);
        assert_eq!(u.model.as_deref(), Some("stand-in"));
        assert_eq!((u.session_input, u.session_output), (Some(40), Some(20)));
        assert_eq!(
            u.context_tokens,
            Some(15),
            "10 in + 5 out, as opencode shows it"
        );
        assert_eq!(u.cost_usd, Some(0.0));
        assert_eq!((u.context_window, u.context_percent), (None, None));
    }

    /// Writes the newest answering message's counts and cost as opencode would, `times` times
    /// over (a row updated in place as its request goes on).
    fn answer_again(conn: &Connection, times: usize) {
        let newest = "(SELECT id FROM message WHERE session_id = ?1 \
                       AND json_extract(data, '$.role') = 'assistant' \
                       AND json_extract(data, '$.tokens.output') > 0 \
                       ORDER BY time_created DESC, id DESC LIMIT 1)";
        for cost in [0.01, 0.25].into_iter().take(times) {
            conn.execute(
                &format!(
                    "UPDATE message SET data = json_set(data, \
                     '$.tokens', json('{{\"input\":1034,\"output\":56,\"reasoning\":4,\
                     \"cache\":{{\"read\":200,\"write\":10}}}}'), '$.cost', {cost}) \
                     WHERE id = {newest}"
                ),
                [SESSION],
            )
            .unwrap();
        }
    }

    #[test]
    fn the_session_rows_totals_are_read_with_the_cached_tokens() {
        let dir = tempfile::tempdir().unwrap();
        let db = db_from(dir.path(), &fixture("session.sql"));
        let conn = Connection::open(&db).unwrap();
        answer_again(&conn, 1);
        conn.execute(
            "UPDATE session SET tokens_input = 5000, tokens_cache_read = 700, \
             tokens_cache_write = 30, tokens_output = 90, tokens_reasoning = 9, cost = 1.5 \
             WHERE id = ?1",
            [SESSION],
        )
        .unwrap();
        let u = session_usage(&SessionRef {
            db,
            session: SESSION.into(),
        })
        .unwrap();
        assert_eq!((u.session_input, u.session_output), (Some(5730), Some(99)));
        assert_eq!(u.cost_usd, Some(1.5));
        assert_eq!(u.context_tokens, Some(1034 + 56 + 4 + 200 + 10));
    }

    #[test]
    fn without_totals_in_the_session_row_each_message_counts_once() {
        let dir = tempfile::tempdir().unwrap();
        let db = db_from(dir.path(), &fixture("session.sql"));
        let conn = Connection::open(&db).unwrap();
        for column in ["cost", "tokens_input", "tokens_output"] {
            conn.execute(&format!("ALTER TABLE session DROP COLUMN {column}"), [])
                .unwrap();
        }
        answer_again(&conn, 2);
        let u = session_usage(&SessionRef {
            db,
            session: SESSION.into(),
        })
        .unwrap();
        assert_eq!(u.session_input, Some(30 + 1034 + 200 + 10));
        assert_eq!(u.session_output, Some(15 + 56 + 4));
        assert_eq!(u.context_tokens, Some(1034 + 56 + 4 + 200 + 10));
        assert_eq!(u.cost_usd, Some(0.25));
        assert_eq!(u.model.as_deref(), Some("stand-in"));
    }

    #[test]
    fn an_unknown_session_or_a_bad_file_is_unknown_or_an_error() {
        let u = usage_of(&fixture("session.sql"), "ses_gone");
        assert_eq!(u, Usage::default());
        let dir = tempfile::tempdir().unwrap();
        let bad = dir.path().join("opencode.db");
        std::fs::write(&bad, b"not sqlite").unwrap();
        let r = SessionRef {
            db: bad,
            session: SESSION.into(),
        };
        assert!(session_usage(&r).is_err());
        // Through the adapter: a path that is no session of it is an error, never a panic.
        let agent: &dyn crate::agents::Agent = &crate::agents::opencode::Opencode;
        assert!(agent.session_usage(&r.to_path()).unwrap().is_err());
        assert!(agent
            .session_usage(std::path::Path::new("/tmp/x.jsonl"))
            .unwrap()
            .is_err());
    }
}
