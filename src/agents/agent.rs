//! The one interface through which the pipeline asks anything of an agent
//! (docs/design.md#adding-an-agent). Each agent's folder implements [`Agent`]; the registry in
//! `agents/registry.rs` lists them, one line each. Every method has a default for agents that do
//! not need it, so an agent agentpane only recognises (no log read) implements nothing but
//! its kind.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Result;

use super::locate::{Found, Target, TranscriptCache};
use super::retry::Retrying;
use crate::events::{AgentKind, Event, Time};
use crate::proctree::ProcTable;
use crate::read::dialog::OnScreen;
use crate::read::request::Request;
use crate::state::Source;
use crate::state::{Status, Windows};

/// What one resolution shares with the locators of every pane it resolves.
pub struct Lookup<'a> {
    pub now: Time,
    pub table: &'a ProcTable,
    /// The home folder to fall back on when a process's environment names none.
    pub home: &'a Path,
    /// Transcript locations found by scanning, kept on disk between processes.
    pub cache: &'a mut TranscriptCache,
    /// What the panes of one resolution share, per agent.
    pub shared: &'a mut super::shared::Shared,
}

/// How an agent's transcript is read backwards for its state.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LookBack {
    /// Records of a turn can be written after its prompt's line (a prompt queued while a turn
    /// ran): a prompt that decides the tail is followed further back.
    pub written_early: bool,
    /// Turns can start subagents in the background: the tail is followed back to the prompt
    /// that opened the turn, to see which of them reported back.
    pub background_agents: bool,
}

/// Everything the pipeline asks of one agent.
pub trait Agent: Sync {
    /// The serialised identity (names, JSON, alert keys).
    fn kind(&self) -> AgentKind;

    // --- Recognising its process -------------------------------------------------------

    /// Fragments of the script path a runtime (`node …`) runs for this agent
    /// (`@openai/codex/`): how an npm install is recognised when the executable is `node`. An
    /// entry without `/` is the title the program gives its process (`process.title`), which
    /// then is its whole command line.
    fn packages(&self) -> &'static [&'static str] {
        &[]
    }

    // --- Its sessions and transcript ---------------------------------------------------

    /// Where the agent running as `pid` keeps its sessions, read from its own environment,
    /// and which setting said so. `None` for an agent whose log agentpane does not read.
    fn root(&self, _pid: u32, _home: &Path) -> Option<(PathBuf, &'static str)> {
        None
    }

    /// The session and transcript of the process `t` describes (never a neighbour's).
    fn locate(&self, _t: &Target, _cx: &mut Lookup, _steps: &mut Vec<String>) -> Found {
        Found::default()
    }

    /// Whether a pane resolved before its transcript existed is resolved again at every scan
    /// (the first log appears where no file watch looks).
    fn awaits_transcript(&self) -> bool {
        false
    }

    /// A session a program drives, not a person: shown but not alarmed by default.
    fn machine_driven(&self, _transcript: &Path) -> bool {
        false
    }

    /// Folders a file watch should see besides the transcript's own (`root`: from
    /// [`Agent::root`]; `cwd`: the pane's folder): where a new session shows up first.
    fn folders(&self, _root: &Path, _cwd: &str) -> Vec<PathBuf> {
        Vec::new()
    }

    /// Folders where a new session of this agent announces itself before any pane of it has
    /// been resolved, for a watch to see from its start (`home`: the watcher's own home, with
    /// its own environment).
    fn announced_in(&self, _home: &Path) -> Vec<PathBuf> {
        Vec::new()
    }

    /// True for a file whose changes never mean a session changed, though it sits in a folder
    /// the watch sees (a database's shared-memory index, written by every reader).
    fn never_news(&self, _path: &Path) -> bool {
        false
    }

    /// The files whose change can change what `transcript` reads, when it is not a plain
    /// file of its own (a session in a database). `None`: the file itself.
    fn sources(&self, _transcript: &Path) -> Option<Vec<PathBuf>> {
        None
    }

    // --- Reading its log -----------------------------------------------------------------

    /// Whether `path` names a transcript in this agent's own form (a session in its database,
    /// its chat log), so a file given without `--agent` is read by the right adapter.
    fn owns_path(&self, _path: &Path) -> bool {
        false
    }

    /// Whether one JSON record is of this agent's log format (for a log given without
    /// `--agent`). Checked in registry order; the first agent that claims it wins.
    fn owns_record(&self, _record: &serde_json::Map<String, serde_json::Value>) -> bool {
        false
    }

    /// Whether a line too large to decode (`head`: its first bytes) is of this agent's log
    /// format. Checked in registry order, like [`Agent::owns_record`].
    fn owns_fragment(&self, _head: &[u8]) -> bool {
        false
    }

    /// Whether agentpane reads this agent's session log at all; without one, a pane of it
    /// is read from its screen alone.
    fn reads_log(&self) -> bool {
        false
    }

    /// One line of its JSONL transcript as an event.
    fn parse_line(&self, _line: &[u8]) -> Option<Event> {
        None
    }

    /// A line too large to decode (its head and tail only) as an event.
    fn parse_fragments(&self, _head: &[u8], _tail: &[u8]) -> Option<Event> {
        None
    }

    /// How far back past the deciding event its tail is followed.
    fn look_back(&self) -> LookBack {
        LookBack::default()
    }

    /// The events that decide the state of `path` when its log is not read as a JSONL tail
    /// (a chat log rewritten in place); `None` for a JSONL tail. Sessions in a database are
    /// read through [`super::Stores`].
    fn file_events(&self, _path: &Path) -> Option<Result<Vec<Event>>> {
        None
    }

    /// The newest sign of life outside the transcript while a turn is open (a background
    /// subagent's own log).
    fn side_life(&self, _transcript: &Path) -> Option<Time> {
        None
    }

    /// The last answer in `path`, by the agent's own reading of its log.
    fn last_answer(
        &self,
        _path: &Path,
        _budget: crate::read::Budget,
    ) -> Option<Result<Option<crate::events::Answer>>> {
        None
    }

    /// One record of a JSONL log, newest first, on the way to the last answer; `None` for an
    /// agent that has its own [`Agent::last_answer`] or none at all.
    fn answer_reader(&self) -> Option<Box<dyn AnswerReader>> {
        None
    }

    // --- What its session used (docs/design.md#usage) --------------------------------------

    /// What one line of its JSONL log says about usage (tokens, model, cost, plan windows);
    /// `None` for a line that says nothing about it.
    fn usage(&self, _line: &[u8]) -> Option<crate::usage::Reading> {
        None
    }

    /// The session's usage when its log is not an append-only JSONL file (a session in a
    /// database, a chat log rewritten in place); `None` for a JSONL log read by
    /// [`Agent::usage`].
    fn session_usage(&self, _path: &Path) -> Option<Result<crate::usage::Usage>> {
        None
    }

    /// What one input of its status-line command says (the JSON the agent pipes to the
    /// command a user configures, which `agentpane statusline` wraps): the plan windows and
    /// the session's usage, seen at `now`. `None`, whatever the input, for an agent that runs
    /// no status-line command.
    fn status_line(&self, _input: &[u8], _now: Time) -> Option<crate::limits::StatusLine> {
        None
    }

    /// The context window of `model` when the log does not state it: from the agent's own
    /// config (the process `pid`, its home `home`), else a small table of the agent's known
    /// models. `None` when unknown: never guessed.
    fn context_window(&self, _model: &str, _pid: Option<u32>, _home: &Path) -> Option<u64> {
        None
    }

    // --- Its screen and title ------------------------------------------------------------

    /// Whether it shows a retry loop on its screen that [`Agent::retrying`] reads.
    fn shows_retries(&self) -> bool {
        false
    }

    /// The retry loop its screen shows, if it is waiting to retry a failed API call.
    fn retrying(&self, _screen: &str) -> Option<Retrying> {
        None
    }

    /// The retry loop of the open turn that started at `since`, when the agent records it
    /// neither in its session log nor on its screen but in a file of its own beside them (a
    /// per-process log); `pid` and `root` are its process and [`Agent::root`]. Asked only for
    /// a quiet open turn whose screen shows no retry.
    fn retrying_aside(&self, _pid: u32, _root: &Path, _since: Time) -> Option<Retrying> {
        None
    }

    /// Whether its pane title carries state, so reading its log again needs a fresh
    /// `list-panes`.
    fn reads_title(&self) -> bool {
        false
    }

    /// Whether its screen can change what `status` says, given its title.
    fn wants_screen(&self, _status: &Status, _title: &str, _now: Time) -> bool {
        false
    }

    /// Refines a state read from the log with the title and, when it asks, the screen.
    fn refine(
        &self,
        status: Status,
        source: Source,
        _title: Option<&str>,
        _screen: &mut dyn FnMut() -> Option<String>,
        _now: Time,
        _windows: &Windows,
    ) -> (Status, Source) {
        (status, source)
    }

    /// The approval dialogs its screen draws.
    fn dialogs(&self) -> &'static [crate::read::dialog::Dialog] {
        &[]
    }

    /// A question it asks on screen in a form of its own, not a titled dialog (`lines`: the
    /// bottom of the screen).
    fn question(&self, _lines: &[&str]) -> Option<crate::read::dialog::Prompt> {
        None
    }

    /// A line of its screen that belongs to a tool's output box, beyond the marks every agent
    /// shares (`⎿`, `└`).
    fn tool_line(&self, _trimmed: &str, _first: char) -> bool {
        false
    }

    // --- What it asks, and how it is answered (docs/design.md#deciding-from-anywhere) -----

    /// Whether its log records each decision it waits on until it is answered, so that a
    /// request its log no longer shows pending has been answered.
    fn logs_requests(&self) -> bool {
        false
    }

    /// The decision its log `transcript` shows pending, in full ([`Agent::logs_requests`]).
    fn pending_request(&self, _transcript: &Path) -> Option<Request> {
        None
    }

    /// Whether [`Agent::on_screen`] needs the screen with its colours (`capture-pane -e`) to
    /// tell the keys: a dialog whose options are chosen by arrows from the selected one.
    fn styled_dialogs(&self) -> bool {
        false
    }

    /// The dialog on its screen, read as a request, with the keys that give each answer: one
    /// of its [`Agent::dialogs`], else its [`Agent::question`] (shown, never answered).
    fn on_screen(&self, screen: &str) -> Option<OnScreen> {
        crate::read::dialog::on_screen(self.dialogs(), screen).or_else(|| {
            let clean = strip_ansi_escapes::strip_str(screen);
            let lines = crate::read::dialog::bottom(&clean);
            let asked = self.question(&lines)?;
            Some(crate::read::dialog::asked(&asked, &lines))
        })
    }

    // --- Typing into it ---------------------------------------------------------------------

    /// Pause between a paste and Enter, so its input box has taken the paste as a paste.
    fn enter_delay(&self) -> Duration {
        Duration::from_millis(150)
    }

    /// Whether an Enter may be taken as a newline, so delivery checks that it submitted and
    /// presses it again while [`Agent::input_pending`] (an Enter on an empty box does nothing).
    fn resubmits(&self) -> bool {
        false
    }

    /// Whether its input box still holds text.
    fn input_pending(&self, _screen: &str) -> bool {
        false
    }

    /// The key (tmux name) that empties its input box and how many presses it takes, when
    /// `screen` shows the box holding text a paste must not be appended to (a cancelled
    /// prompt the agent put back). Delivery presses it before the paste, under the same
    /// checks as the paste.
    fn clear_input(&self, _screen: &str) -> Option<(&'static str, usize)> {
        None
    }

    // --- Hooks it takes from agentpane ------------------------------------------------------

    /// The file `agentpane hooks install --agent NAME` writes for this agent (an extension
    /// it loads by itself) and `uninstall` removes, for the user whose home is `home` and
    /// whose environment `var` reads; `None` for an agent that takes no such file.
    fn hook_file(&self, _home: &Path, _var: &dyn Fn(&str) -> Option<String>) -> Option<HookFile> {
        None
    }
}

/// A file of agentpane's that an agent loads by itself (see [`Agent::hook_file`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookFile {
    /// Where it goes.
    pub path: PathBuf,
    /// Its whole content.
    pub text: &'static str,
    /// What it is, for messages.
    pub what: &'static str,
}

/// Reads a JSONL log's records newest first until one answers (see [`Agent::answer_reader`]).
pub trait AnswerReader {
    /// One record; what it means for the answer.
    fn push(&mut self, record: &serde_json::Value) -> AnswerStep;
    /// The answer collected when the records ran out.
    fn finish(self: Box<Self>) -> Option<crate::events::Answer>;
}

/// What one record means on the way back to the last answer.
pub enum AnswerStep {
    /// Keep reading.
    More,
    /// This is the answer.
    Found(crate::events::Answer),
    /// The newest turn failed: it has no answer, and an older one must not stand in.
    Failed,
}

/// The ids of sessions other live processes own (never a pane's own), for locators that keep
/// neighbours apart by claims.
pub type Claims = HashSet<String>;
