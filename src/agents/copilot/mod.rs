//! GitHub Copilot CLI adapter (`@github/copilot`, verified against 1.0.102). Copilot keeps one
//! folder per session, `<COPILOT_HOME or ~/.copilot>/session-state/<session uuid>/`, holding an
//! append-only `events.jsonl` (one `{type, data, id, timestamp, parentId}` record a line, the
//! schema is the package's `copilot-sdk/generated/session-events.d.ts`) and, while a process
//! owns the session, `inuse.<PID>.lock` naming that process. See docs/agents/copilot.md.
//!
//! - [`locate`]: the process (native binary, comm `MainThread`) → its session folder and log.
//! - [`parse`]: one `events.jsonl` line → [`crate::events::Event`]; the pending permission or
//!   question the log itself shows.
//! - [`answer`]: the last answer of the newest turn.
//! - [`screen`]: the approval dialog and question form on screen.
//! - [`log`]: the per-process log (`logs/process-<ms>-<PID>.log`): the session a process
//!   registered and the failed model calls it is retrying, which neither the session log nor
//!   the screen shows.

pub mod answer;
pub mod locate;
pub mod log;
pub mod parse;
pub mod screen;
pub mod usage;

#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};

use crate::agents::locate::{Found, Target, Via};
use crate::agents::{AnswerReader, AnswerStep, Lookup};
use crate::events::{AgentKind, Event, Time};
use crate::state::Source;
use crate::state::{State, Status, Windows};

/// GitHub Copilot CLI.
#[derive(Debug)]
pub struct Copilot;

impl crate::agents::Agent for Copilot {
    fn kind(&self) -> AgentKind {
        AgentKind::Copilot
    }

    fn usage(&self, line: &[u8]) -> Option<crate::usage::Reading> {
        usage::reading(line)
    }

    fn packages(&self) -> &'static [&'static str] {
        // `node …/@github/copilot/npm-loader.js`; `node …/.bin/copilot` is known by its name.
        // Either hands over to its native child (`…/copilot-linux-x64/copilot`, comm
        // `MainThread`), which owns the session.
        &["@github/copilot/"]
    }

    fn root(&self, pid: u32, home: &Path) -> Option<(PathBuf, &'static str)> {
        Some(locate::copilot_home(pid, home))
    }

    fn shows_retries(&self) -> bool {
        // Not on its screen (only its usual `Working` spinner) but in its per-process log:
        // a quiet open turn is worth a look there.
        true
    }

    fn retrying_aside(
        &self,
        pid: u32,
        root: &Path,
        since: crate::events::Time,
    ) -> Option<crate::agents::retry::Retrying> {
        log::retrying(&log::tail_of(root, pid)?, since)
    }

    fn locate(&self, t: &Target, _cx: &mut Lookup, steps: &mut Vec<String>) -> Found {
        let mut found = Found::default();
        let Some(session) = locate::find(t.root, t.pid) else {
            steps.push(format!(
                "session: no {}/{}/*/inuse.{}.hold held open nor lock naming the pid",
                t.root.display(),
                locate::SESSION_STATE,
                t.pid
            ));
            return found;
        };
        found.via = match session.via {
            locate::Via::HeldOpen => Via::OpenFile,
            // A file in the session folder names the pid, as a session record does.
            locate::Via::LockFile => Via::SessionRecord,
        };
        found.session_id = Some(session.id);
        if session.events.is_file() {
            found.transcript = Some(session.events);
        } else {
            steps.push(format!(
                "session {}: no {} yet (it is written from the first prompt)",
                session.dir.display(),
                locate::EVENTS_FILE
            ));
        }
        found
    }

    fn awaits_transcript(&self) -> bool {
        // `events.jsonl` appears at the first prompt, inside a session folder.
        true
    }

    fn folders(&self, root: &Path, cwd: &str) -> Vec<PathBuf> {
        // New session folders appear in `session-state/`; a live session in this folder that
        // has no log yet gets its `events.jsonl` at the first prompt.
        let mut out = vec![root.join(locate::SESSION_STATE)];
        out.extend(locate::awaiting_log(root, cwd));
        out
    }

    fn owns_record(&self, record: &serde_json::Map<String, serde_json::Value>) -> bool {
        // `{type, data, id, timestamp, parentId}` with a dotted type (`abort` the one without).
        record.get("data").is_some_and(serde_json::Value::is_object)
            && record.contains_key("parentId")
            && record
                .get("type")
                .and_then(serde_json::Value::as_str)
                .is_some_and(|t| t.contains('.') || t == "abort")
    }

    fn owns_fragment(&self, head: &[u8]) -> bool {
        // The envelope's `type` comes first, then `data`.
        crate::agents::fields::scan_str(head, "type").is_some_and(|t| t.contains('.'))
            && head.starts_with(br#"{"type":""#)
            && head.windows(7).any(|w| w == br#""data":"#)
    }

    fn reads_log(&self) -> bool {
        true
    }

    fn parse_line(&self, line: &[u8]) -> Option<Event> {
        parse::parse_line(line)
    }

    fn parse_fragments(&self, head: &[u8], tail: &[u8]) -> Option<Event> {
        parse::parse_fragments(head, tail)
    }

    fn answer_reader(&self) -> Option<Box<dyn AnswerReader>> {
        Some(Box::new(Answers))
    }

    fn wants_screen(&self, status: &Status, _title: &str, _now: Time) -> bool {
        // Only a tool call the log shows no approval for yet: the dialog may be up before
        // its `permission.requested` is written.
        status.turn_open && status.state == State::Working && status.reason.is_some()
    }

    fn refine(
        &self,
        status: Status,
        source: Source,
        _title: Option<&str>,
        screen: &mut dyn FnMut() -> Option<String>,
        _now: Time,
        _windows: &Windows,
    ) -> (Status, Source) {
        if !(status.turn_open && status.state == State::Working && status.reason.is_some()) {
            return (status, source);
        }
        match screen().as_deref().and_then(screen::dialog) {
            Some(d) => {
                let mut s = status;
                s.state = State::Waiting;
                s.reason = Some(d.reason());
                (s, Source::Pane)
            }
            None => (status, source),
        }
    }

    fn logs_requests(&self) -> bool {
        true
    }

    fn pending_request(&self, transcript: &Path) -> Option<crate::read::request::Request> {
        let records = crate::read::tail_records(transcript, |_| false).ok()?;
        parse::pending(&records).map(|p| p.request())
    }

    fn on_screen(&self, screen: &str) -> Option<crate::read::dialog::OnScreen> {
        let d = screen::dialog(screen)?;
        let (choices, options) = match d.kind {
            screen::DialogKind::Permission => (screen::choices(screen), screen::options(screen)),
            // A question is shown, never answered for the person.
            screen::DialogKind::Question => Default::default(),
        };
        Some(crate::read::dialog::OnScreen {
            request: d.request(),
            choices,
            options,
        })
    }

    fn enter_delay(&self) -> std::time::Duration {
        // An Enter right after the paste submits it (1.0.102, tried by hand); the default
        // pause is kept as margin.
        std::time::Duration::from_millis(150)
    }
}

/// The last answer, read newest first ([`answer::step`]).
struct Answers;

impl AnswerReader for Answers {
    fn push(&mut self, record: &serde_json::Value) -> AnswerStep {
        match answer::step(record) {
            answer::Step::Answer(a) => AnswerStep::Found(a.into_answer(AgentKind::Copilot)),
            answer::Step::None => AnswerStep::Failed,
            answer::Step::Continue => AnswerStep::More,
        }
    }

    fn finish(self: Box<Self>) -> Option<crate::events::Answer> {
        None
    }
}

#[cfg(test)]
pub(crate) mod testkit {
    //! The recorded real-client fixtures (fixtures/real-clients/copilot-1.0.102).

    /// The text of a fixture file.
    pub fn fixture(name: &str) -> String {
        let path = format!(
            "{}/fixtures/real-clients/copilot-1.0.102/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    /// A fixture's lines.
    pub fn lines(name: &str) -> Vec<String> {
        fixture(name).lines().map(str::to_string).collect()
    }
}
