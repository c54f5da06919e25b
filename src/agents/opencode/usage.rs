//! A session's usage from opencode's database (Kilo's too): every assistant message row holds
//! `modelID`, `cost` (in dollars, as opencode prices it) and `tokens {input, output, reasoning,
//! cache {read, write}}` (`input` without the cached tokens), updated in place while it
//! streams, so each request is one row and counts once. One read-only statement sums them:
//! in = input + cache read + cache write, out = output + reasoning (as opencode's own `stats`
//! sums them). The context in use is what opencode's sidebar shows: the five counts of the
//! newest assistant message that produced output. The window is not in the database.

use anyhow::{Context, Result};
use rusqlite::Connection;

use super::store::Db;
use super::SessionRef;
use crate::usage::{Reading, Tally, Usage};

/// The one statement: the sums over the session's assistant messages, then the model of the
/// newest one and the context of the newest one that produced output.
const QUERY: &str = "\
    WITH a AS (SELECT time_created, id, \
                 json_extract(data, '$.modelID') AS model, \
                 coalesce(json_extract(data, '$.cost'), 0) AS cost, \
                 json_type(data, '$.cost') IN ('integer', 'real') AS priced, \
                 coalesce(json_extract(data, '$.tokens.input'), 0) AS input, \
                 coalesce(json_extract(data, '$.tokens.output'), 0) AS output, \
                 coalesce(json_extract(data, '$.tokens.reasoning'), 0) AS reasoning, \
                 coalesce(json_extract(data, '$.tokens.cache.read'), 0) AS read, \
                 coalesce(json_extract(data, '$.tokens.cache.write'), 0) AS write \
               FROM message WHERE session_id = ?1 \
               AND json_extract(data, '$.role') = 'assistant') \
    SELECT CAST(total(input + read + write) AS INTEGER), \
           CAST(total(output + reasoning) AS INTEGER), \
           total(cost), max(priced), \
           (SELECT model FROM a ORDER BY time_created DESC, id DESC LIMIT 1), \
           (SELECT CAST(input + output + reasoning + read + write AS INTEGER) FROM a \
              WHERE output > 0 ORDER BY time_created DESC, id DESC LIMIT 1) \
    FROM a";

/// The usage of `session`, read in one transaction of a fresh read-only connection.
pub fn session_usage(session: &SessionRef) -> Result<Usage> {
    Db::open(&session.db)?.read(|tx, db| {
        usage_in(tx, &session.session)
            .with_context(|| format!("{} is not an opencode database", db.display()))
    })
}

/// [`session_usage`] inside a read of the database.
pub fn usage_in(tx: &Connection, session: &str) -> rusqlite::Result<Usage> {
    let (input, output, cost, priced, model, context) =
        tx.prepare_cached(QUERY)?.query_row([session], |r| {
            Ok((
                r.get::<_, Option<i64>>(0)?,
                r.get::<_, Option<i64>>(1)?,
                r.get::<_, Option<f64>>(2)?,
                r.get::<_, Option<bool>>(3)?,
                r.get::<_, Option<String>>(4)?,
                r.get::<_, Option<i64>>(5)?,
            ))
        })?;
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
    fn the_recorded_session_sums_its_assistant_messages() {
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

    #[test]
    fn cached_tokens_and_cost_are_counted_and_a_message_rewritten_counts_once() {
        let dir = tempfile::tempdir().unwrap();
        let db = db_from(dir.path(), &fixture("session.sql"));
        let conn = Connection::open(&db).unwrap();
        let newest = "(SELECT id FROM message WHERE session_id = ?1 \
                       AND json_extract(data, '$.role') = 'assistant' \
                       AND json_extract(data, '$.tokens.output') > 0 \
                       ORDER BY time_created DESC, id DESC LIMIT 1)";
        // opencode updates the row in place as the request goes on: written twice here.
        for cost in [0.01, 0.25] {
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
        let u = session_usage(&SessionRef {
            db,
            session: SESSION.into(),
        })
        .unwrap();
        assert_eq!(u.session_input, Some(30 + 1034 + 200 + 10));
        assert_eq!(u.session_output, Some(15 + 56 + 4));
        assert_eq!(u.context_tokens, Some(1034 + 56 + 4 + 200 + 10));
        assert_eq!(u.cost_usd, Some(0.25));
    }

    #[test]
    fn kilo_keeps_the_same_rows() {
        let sql = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/fixtures/real-clients/kilo-7.7.7/session.sql"
        ))
        .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let kilo = dir.path().join("kilo.db");
        std::fs::rename(db_from(dir.path(), &sql), &kilo).unwrap();
        let path = SessionRef {
            db: kilo,
            session: "ses_dc9914655ffekSS0W3ahQ00RaQ".into(),
        }
        .to_path();
        let agent = crate::agents::of(crate::events::AgentKind::Kilo);
        let u = agent.session_usage(&path).unwrap().unwrap();
        assert_eq!((u.session_input, u.session_output), (Some(30), Some(15)));
        assert_eq!(u.context_tokens, Some(15));
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
        let agent = crate::agents::of(crate::events::AgentKind::Opencode);
        assert!(agent.session_usage(&r.to_path()).unwrap().is_err());
        assert!(agent
            .session_usage(std::path::Path::new("/tmp/x.jsonl"))
            .unwrap()
            .is_err());
    }
}
