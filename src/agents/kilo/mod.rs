//! Kilo Code CLI adapter. Kilo is a fork of opencode that keeps opencode's store under its own
//! names: one SQLite database (WAL) for every session of a user, `$XDG_DATA_HOME/kilo/kilo.db`
//! (`kilo-<channel>.db` off the release channel), with opencode's `session` / `message` /
//! `part` tables and the same JSON in them, and the shared text log
//! `$XDG_DATA_HOME/kilo/log/opencode.log`. So it is read by opencode's adapter with Kilo's
//! names ([`KILO`]). What it does differently is handled there: a step that called tools
//! finishes `"other"` (opencode: `"tool-calls"`) and the turn goes on; an errored assistant
//! message is deleted when the next prompt is sent (the newest messages then show that turn);
//! a 429 retry is on screen only (an open, empty assistant message: the retry footer is read);
//! Escape during a retry completes the message with neither `finish` nor `error`
//! (interrupted). See docs/agents/kilo.md.

use crate::agents::opencode::Flavor;
use crate::events::AgentKind;

/// Kilo's names. The npm launcher (`node …/@kilocode/cli/bin/kilo`) starts the native
/// executable: `bin/.kilo` once npm's postinstall has copied it there, else the platform
/// package's `bin/kilo`.
pub const KILO: Flavor = Flavor {
    kind: AgentKind::Kilo,
    name: "kilo",
    comms: &["kilo", ".kilo"],
    packages: &["@kilocode/cli/"],
};

/// Kilo Code CLI.
#[derive(Debug)]
pub struct Kilo;

crate::opencode_store_agent!(Kilo, KILO);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agents::opencode::{parse, store};
    use crate::agents::Agent;
    use crate::state::{classify, Observation, State, Windows};
    use std::path::Path;

    /// A recorded dump of the real Kilo 7.7.7 (fixtures/real-clients/kilo-7.7.7/).
    fn fixture(name: &str) -> String {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/real-clients/kilo-7.7.7")
            .join(name);
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    /// The state of the recorded session in `sql`, its newest `keep` messages first cut off
    /// after `keep` messages (all: `usize::MAX`), read 2 s after its last write.
    fn state(sql: &str, keep: usize) -> (State, Option<String>) {
        let dir = tempfile::tempdir().unwrap();
        let db = store::testkit::db_from(dir.path(), sql);
        let conn = rusqlite::Connection::open(&db).unwrap();
        let id: String = conn
            .query_row("SELECT id FROM session", [], |r| r.get(0))
            .unwrap();
        let mut all = store::latest_messages(&db, &id, 100).unwrap().unwrap();
        all.truncate(keep);
        let last = all.iter().map(|m| m.updated_ms).max().unwrap();
        let now =
            chrono::DateTime::from_timestamp_millis(last).unwrap() + chrono::Duration::seconds(2);
        let s = classify(
            &parse::events(&all),
            now,
            &Windows::default(),
            Observation::default(),
        );
        (s.state, s.reason)
    }

    #[test]
    fn each_recorded_kilo_turn_reads_as_the_real_client_showed_it() {
        // hello → answer, RUNBASH → a step finished "other" (Kilo's tool step) → "Tool done.",
        // BADREQ → a 400 (its message deleted by the next prompt: put back from the-400.sql),
        // QUOTA → a 429 retried on screen, interrupted.
        let session = fixture("session.sql");
        assert!(
            !session.contains("APIError"),
            "the next prompt deleted the 400"
        );
        assert_eq!(state(&session, 2), (State::YourTurn, None));
        assert_eq!(
            state(&session, 4).0,
            State::Working,
            "the tool step goes on"
        );
        assert_eq!(state(&session, 5), (State::YourTurn, None));
        let with_400 = format!("{session}\n{}", fixture("the-400.sql"));
        assert_eq!(
            state(&with_400, 7),
            (
                State::Attention,
                Some("api error 400: model stand-in does not exist".into())
            )
        );
        // While Kilo retried the 429: an open, empty assistant message (the retry is in the
        // footer only).
        let retrying = format!("{session}\n{}", fixture("retrying.sql"));
        assert_eq!(state(&retrying, usize::MAX).0, State::Working);
        let retry = crate::agents::opencode::retrying(&fixture("retry-screen.txt")).unwrap();
        assert_eq!(retry.error, "quota exceeded for stand-in");
        // Escape during the retry: completed with neither finish nor error.
        assert_eq!(
            state(&session, usize::MAX),
            (State::YourTurn, Some("interrupted".into()))
        );
    }

    #[test]
    fn a_kilo_permission_dialog_is_opencode_s() {
        let screen = fixture("permission-screen.txt");
        // Kilo draws opencode's dialog: its title and its approving option.
        let d = &Kilo.dialogs()[0];
        let lines: Vec<&str> = screen.lines().map(crate::read::dialog::content).collect();
        assert!(lines.iter().any(|l| d.titles.iter().any(|t| t.matches(l))));
        let title = lines
            .iter()
            .rposition(|l| d.titles.iter().any(|t| t.matches(l)))
            .unwrap();
        let options = (d.options)(&lines[title + 1..]);
        assert!(options.iter().any(|o| (d.approves)(o)), "{screen}");
    }

    #[test]
    fn lines_of_the_command_are_never_its_options() {
        let screen =
            crate::read::dialog::with_option_like_lines(&fixture("permission-screen.txt"), "$ ");
        let d = Kilo.on_screen(&screen).expect("the dialog");
        assert_eq!(d.options, ["Allow once", "Allow always", "Reject"]);
        assert_eq!(
            d.choices.deny,
            Some(vec!["Escape".to_string(), "Enter".to_string()])
        );
        assert!(d
            .request
            .text
            .contains("Allow once   Allow always   Reject"));
    }

    #[test]
    fn kilo_sessions_are_kilo_s_and_opencode_s_stay_opencode_s() {
        let kilo = Path::new("/h/.local/share/kilo/kilo.db#ses_dcc45fdaf");
        let opencode = Path::new("/h/.local/share/opencode/opencode.db#ses_dcc45fdaf");
        assert!(Kilo.owns_path(kilo) && !Kilo.owns_path(opencode));
        let other = crate::agents::opencode::Opencode;
        assert!(other.owns_path(opencode) && !other.owns_path(kilo));
        assert!(Kilo.never_news(Path::new("/h/.local/share/kilo/kilo.db-shm")));
        assert!(!Kilo.never_news(Path::new("/h/.local/share/kilo/kilo.db-wal")));
        assert_eq!(
            Kilo.sources(kilo).unwrap()[1],
            Path::new("/h/.local/share/kilo/kilo.db-wal")
        );
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
        std::fs::rename(store::testkit::db_from(dir.path(), &sql), &kilo).unwrap();
        let path = crate::agents::opencode::SessionRef {
            db: kilo,
            session: "ses_dc9914655ffekSS0W3ahQ00RaQ".into(),
        }
        .to_path();
        let u = Kilo.session_usage(&path).unwrap().unwrap();
        assert_eq!((u.session_input, u.session_output), (Some(30), Some(15)));
        assert_eq!(u.context_tokens, Some(15));
        assert_eq!(u.model.as_deref(), Some("stand-in"));
    }
}
