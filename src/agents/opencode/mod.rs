//! opencode adapter. opencode keeps every session of a user in one SQLite database in WAL mode,
//! `$XDG_DATA_HOME/opencode/opencode.db`, held open by every running opencode: a `session`
//! row per conversation, `message` and `part` rows whose JSON `data` is updated in place. So
//! an opencode "transcript" is a database plus a session id, written
//! `<db path>#<session id>` (e.g. `~/.local/share/opencode/opencode.db#ses_dcc45f…`) wherever
//! agentpane shows or takes a transcript path. See docs/agents/opencode.md.

pub mod answer;
pub mod dialogs;
pub mod locate;
pub mod parse;
pub mod reader;
pub mod runlog;
pub mod store;
pub mod usage;

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::events::{AgentKind, Time};
use crate::state::{Observation, Status, Windows};

/// One opencode session: the database that holds it and its id.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SessionRef {
    pub db: PathBuf,
    pub session: String,
}

impl SessionRef {
    /// Reads `<db>#<session id>`; `None` for any other path (a plain transcript file). The db
    /// must be a `.db` file and the id opencode's `ses_…` form, so a file whose name merely
    /// contains `#` is never mistaken for one.
    pub fn parse(path: &Path) -> Option<SessionRef> {
        let s = path.to_str()?;
        let (db, session) = s.rsplit_once('#')?;
        let valid_id = session.starts_with("ses_")
            && session.len() <= 64
            && session
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_');
        (valid_id && db.ends_with(".db")).then(|| SessionRef {
            db: PathBuf::from(db),
            session: session.to_string(),
        })
    }

    /// The `<db>#<session id>` form.
    pub fn to_path(&self) -> PathBuf {
        let mut s = self.db.clone().into_os_string();
        s.push("#");
        s.push(&self.session);
        PathBuf::from(s)
    }

    /// The files whose change can change the session: the database and its write-ahead log
    /// (opencode commits into the log; a checkpoint moves pages into the database).
    pub fn files(&self) -> [PathBuf; 2] {
        let mut wal = self.db.clone().into_os_string();
        wal.push("-wal");
        [self.db.clone(), PathBuf::from(wal)]
    }
}

/// What differs between opencode and the forks that keep its store (Kilo Code CLI): their
/// names. Everything else — the database's tables, the rows' JSON, the screen — is opencode's.
#[derive(Debug)]
pub struct Flavor {
    pub kind: AgentKind,
    /// The folder under `XDG_DATA_HOME` and the database's name (`opencode` → `opencode.db`).
    pub name: &'static str,
    /// The process names (`comm`) of its native executable.
    pub comms: &'static [&'static str],
    /// Script paths of its npm launcher (`Agent::packages`).
    pub packages: &'static [&'static str],
}

/// opencode itself.
pub const OPENCODE: Flavor = Flavor {
    kind: AgentKind::Opencode,
    name: "opencode",
    comms: &["opencode"],
    packages: &[],
};

impl Flavor {
    /// Whether `path` is one of its databases (`opencode.db`, `opencode-<channel>.db`).
    pub fn names_db(&self, path: &Path) -> bool {
        path.file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with(self.name) && n.ends_with(".db"))
    }

    /// True for a file in its data folder whose changes never mean a session changed:
    /// SQLite's shared-memory index (`-shm`), which every reader of the database writes to,
    /// agentpane's own read-only connection included.
    pub fn never_news(&self, path: &Path) -> bool {
        path.file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with(self.name) && n.ends_with(".db-shm"))
    }
}

/// True for opencode's database shared-memory index (see [`Flavor::never_news`]).
pub fn never_news(path: &Path) -> bool {
    OPENCODE.never_news(path)
}

/// The session `path` names; an error when the caller said the transcript is in a store of
/// this form (`store`: the agent that keeps it, from `--agent opencode`, `--agent kilo`) and
/// `path` is not `<db>#<session id>`.
pub fn session_of(path: &Path, store: Option<AgentKind>) -> Result<Option<SessionRef>> {
    match SessionRef::parse(path) {
        Some(r) => Ok(Some(r)),
        None if store.is_some() => {
            anyhow::bail!(
                "{}: a {} transcript is named `<database path>#<session id>` (as `agentpane resolve` shows it)",
                path.display(),
                store.map_or("", |a| a.name())
            )
        }
        None => Ok(None),
    }
}

/// The state of a session at `now` from its newest messages (one consistent read).
pub fn classify(r: &SessionRef, now: Time, windows: &Windows, obs: Observation) -> Result<Status> {
    let messages = store::latest_messages(&r.db, &r.session, store::STATE_MESSAGES)?
        .with_context(|| format!("no session {} in {}", r.session, r.db.display()))?;
    Ok(crate::state::classify(
        &parse::events(&messages),
        now,
        windows,
        obs,
    ))
}

/// The error opencode is retrying, from its footer: `■■■⬝⬝ quota exceeded for stand-in
/// [retrying in 6s attempt #3]   esc interrupt`. Only the bottom lines count (the footer).
pub fn retrying(screen: &str) -> Option<crate::agents::retry::Retrying> {
    use crate::agents::retry::number_after;
    let clean = strip_ansi_escapes::strip_str(screen);
    let line = clean
        .lines()
        .rev()
        .filter(|l| !l.trim().is_empty())
        .take(3)
        .find(|l| l.contains("[retrying in "))?;
    let at = line.find("[retrying in ")?;
    let message = line[..at]
        .trim()
        .trim_start_matches(|c: char| !c.is_alphanumeric())
        .trim();
    let bracket = &line[at..line[at..].find(']').map_or(line.len(), |e| at + e)];
    (!message.is_empty()).then(|| crate::agents::retry::Retrying {
        error: crate::text::chars(message, 80),
        attempt: number_after(bracket, "#").and_then(|n| u32::try_from(n).ok()),
        limit: None,
        next_in: number_after(bracket, "retrying in "),
    })
}

/// Implements [`crate::agents::Agent`] for `$agent`, a store of opencode's form named by
/// `$flavor` (opencode itself, and its forks: `agents/kilo`).
#[macro_export]
#[doc(hidden)]
macro_rules! opencode_store_agent {
    ($agent:ty, $flavor:expr) => {
        impl $crate::agents::Agent for $agent {
            fn kind(&self) -> $crate::events::AgentKind {
                $flavor.kind
            }

            fn packages(&self) -> &'static [&'static str] {
                $flavor.packages
            }

            fn root(
                &self,
                pid: u32,
                home: &std::path::Path,
            ) -> Option<(std::path::PathBuf, &'static str)> {
                Some($crate::agents::opencode::locate::data_root(
                    &$flavor, pid, home,
                ))
            }

            fn locate(
                &self,
                t: &$crate::agents::locate::Target,
                cx: &mut $crate::agents::Lookup,
                steps: &mut Vec<String>,
            ) -> $crate::agents::locate::Found {
                let argv = cx.table.get(t.pid).map_or(&[][..], |p| &p.argv[..]);
                $crate::agents::opencode::locate::locate(
                    &$flavor,
                    t,
                    cx.table,
                    argv,
                    cx.shared.of::<$crate::agents::opencode::locate::Shared>(),
                    steps,
                )
            }

            fn folders(&self, root: &std::path::Path, _cwd: &str) -> Vec<std::path::PathBuf> {
                // The database folder: the first prompt creates the session there.
                vec![root.to_path_buf()]
            }

            fn never_news(&self, path: &std::path::Path) -> bool {
                $flavor.never_news(path)
            }

            fn sources(&self, transcript: &std::path::Path) -> Option<Vec<std::path::PathBuf>> {
                $crate::agents::opencode::SessionRef::parse(transcript)
                    .filter(|s| $crate::agents::opencode::owns(&$flavor, s))
                    .map(|s| s.files().to_vec())
            }

            fn owns_path(&self, path: &std::path::Path) -> bool {
                $crate::agents::opencode::SessionRef::parse(path)
                    .is_some_and(|s| $crate::agents::opencode::owns(&$flavor, &s))
            }

            fn reads_log(&self) -> bool {
                true
            }

            fn last_answer(
                &self,
                path: &std::path::Path,
                _budget: $crate::read::Budget,
            ) -> Option<anyhow::Result<Option<$crate::events::Answer>>> {
                Some(
                    $crate::agents::opencode::session_of(path, Some(self.kind())).and_then(|s| {
                        match s {
                            Some(session) => {
                                $crate::agents::opencode::answer::last_answer(&session, self.kind())
                            }
                            None => Ok(None),
                        }
                    }),
                )
            }

            fn session_usage(
                &self,
                path: &std::path::Path,
            ) -> Option<anyhow::Result<$crate::usage::Usage>> {
                Some(
                    $crate::agents::opencode::session_of(path, Some(self.kind())).and_then(|s| {
                        match s {
                            Some(session) => {
                                $crate::agents::opencode::usage::session_usage(&session)
                            }
                            None => Ok($crate::usage::Usage::default()),
                        }
                    }),
                )
            }

            fn dialogs(&self) -> &'static [$crate::read::dialog::Dialog] {
                $crate::agents::opencode::dialogs::DIALOGS
            }

            fn styled_dialogs(&self) -> bool {
                true
            }

            fn on_screen(&self, screen: &str) -> Option<$crate::read::dialog::OnScreen> {
                $crate::agents::opencode::dialogs::on_screen(
                    screen,
                    self.kind() == $crate::events::AgentKind::Opencode,
                )
            }

            fn shows_retries(&self) -> bool {
                true
            }

            fn retrying(&self, screen: &str) -> Option<$crate::agents::retry::Retrying> {
                $crate::agents::opencode::retrying(screen)
            }

            fn enter_delay(&self) -> std::time::Duration {
                // It takes a paste asynchronously (it first checks whether it is a file path).
                std::time::Duration::from_millis(300)
            }
        }
    };
}

/// Whether the session `s` is in a database of `flavor` (named after it).
pub fn owns(flavor: &Flavor, s: &SessionRef) -> bool {
    flavor.names_db(&s.db)
}

/// opencode.
#[derive(Debug)]
pub struct Opencode;

crate::opencode_store_agent!(Opencode, OPENCODE);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_retry_in_the_footer_names_the_error() {
        let screen =
            include_str!("../../../fixtures/real-clients/opencode-1.18.33/retry-footer.txt");
        let r = retrying(screen).expect("the footer's retry");
        assert_eq!(r.error, "quota exceeded for stand-in");
        assert_eq!((r.attempt, r.limit, r.next_in), (Some(3), None, Some(6)));
        assert_eq!(
            r.reason(),
            "quota exceeded for stand-in — retrying (attempt 3, next in 6 s)"
        );
        let mut scrolled = screen.replace("[retrying", "[was retrying");
        scrolled.push_str("\n  ┃  Build · Stand-in\n");
        assert_eq!(retrying(&scrolled), None);
        assert_eq!(retrying(""), None);
    }

    #[test]
    fn session_refs_round_trip_and_reject_plain_paths() {
        let r = SessionRef::parse(Path::new(
            "/h/.local/share/opencode/opencode.db#ses_dcc45fdaf",
        ))
        .unwrap();
        assert_eq!(r.db, Path::new("/h/.local/share/opencode/opencode.db"));
        assert_eq!(r.session, "ses_dcc45fdaf");
        assert_eq!(
            r.to_path(),
            Path::new("/h/.local/share/opencode/opencode.db#ses_dcc45fdaf")
        );
        assert_eq!(
            r.files()[1],
            Path::new("/h/.local/share/opencode/opencode.db-wal")
        );
        for plain in [
            "/p/a.jsonl",
            "/p/notes#1.jsonl",
            "/p/x.db#1",
            "/p/x.txt#ses_a",
            "/p/x.db#ses_a/b",
        ] {
            assert_eq!(SessionRef::parse(Path::new(plain)), None, "{plain}");
        }
    }
}
