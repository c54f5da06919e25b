//! The last answer of an opencode session: the text parts of the newest assistant message that
//! ended a turn (`finish: "stop"`, or any finish opencode does not continue after). A turn that ended in an error or an abort has no
//! answer — the answer of an earlier turn is never handed on as if it answered the latest
//! prompt. Text is byte-exact (code blocks included); opencode's own synthetic or ignored text
//! parts are left out.

use anyhow::Result;

use super::parse::time_ms;
use super::store::{self, MessageRow};
use super::SessionRef;
use crate::events::AgentKind;
use crate::events::Answer;

/// The answer of `session`, or `None` when it has none (yet, or its last turn failed).
pub fn last_answer(session: &SessionRef, agent: AgentKind) -> Result<Option<Answer>> {
    Ok(store::last_turn_end(&session.db, &session.session)?
        .as_ref()
        .and_then(|m| answer_of(m, agent)))
}

/// The answer a finished assistant message carries, if it is one.
pub fn answer_of(m: &MessageRow, agent: AgentKind) -> Option<Answer> {
    m.finish.as_deref()?;
    if m.error_name.is_some() || super::parse::step_continues(m) {
        return None;
    }
    let text = m
        .parts
        .iter()
        .filter(|p| p.kind == "text" && !p.hidden)
        .filter_map(|p| p.text.as_deref())
        .map(|t| t.trim_matches(|c| c == '\n' || c == '\r'))
        .filter(|t| !t.trim().is_empty())
        .collect::<Vec<_>>()
        .join("\n\n");
    (!text.is_empty()).then(|| Answer {
        text,
        agent,
        at: m.completed_ms.and_then(time_ms),
        key: Some(m.id.clone()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agents::opencode::store::testkit;

    const SESSION: &str = "ses_dcc45fdafffevJwm88T7RhVzyq";

    fn answers_in_order(sql: &str) -> Vec<Option<String>> {
        let dir = tempfile::tempdir().unwrap();
        let db = testkit::db_from(dir.path(), sql);
        store::latest_messages(&db, SESSION, 100)
            .unwrap()
            .unwrap()
            .iter()
            .filter(|m| m.role == "assistant" && m.completed_ms.is_some())
            .filter(|m| m.finish.as_deref() != Some("tool-calls"))
            .map(|m| answer_of(m, AgentKind::Opencode).map(|a| a.text))
            .collect()
    }

    #[test]
    fn answers_are_byte_exact_and_failed_turns_have_none() {
        let got = answers_in_order(&testkit::fixture("session.sql"));
        let first = got[0].as_deref().unwrap();
        assert_eq!(
            first,
            "Here is the answer.\n\n```sh\necho  \"hi\"\t$x\n```\nDone."
        );
        assert_eq!(got[1].as_deref(), Some("Tool done."));
        // The interrupted ones (during a retry, mid-stream) and the 400/401 errors: none.
        assert_eq!(&got[2..4], &[None, None]);
        assert_eq!(got.last().unwrap(), &None);
    }

    #[test]
    fn the_session_s_last_answer_is_none_after_a_failed_turn() {
        let dir = tempfile::tempdir().unwrap();
        let db = testkit::db_from(dir.path(), &testkit::fixture("session.sql"));
        let r = SessionRef {
            db,
            session: SESSION.into(),
        };
        assert_eq!(last_answer(&r, AgentKind::Opencode).unwrap(), None);
    }

    #[test]
    fn a_step_finished_unknown_is_no_answer_yet() {
        // The state side of this session is read in parse.rs (the turn continues).
        let dir = tempfile::tempdir().unwrap();
        let db = testkit::db_from(dir.path(), &testkit::fixture("unknown-finish.sql"));
        let r = SessionRef {
            db,
            session: "ses_dcc1975e1ffel1i4bnDPC2h7UL".into(),
        };
        assert_eq!(last_answer(&r, AgentKind::Opencode).unwrap(), None);
    }
}
