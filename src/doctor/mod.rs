//! `agentpane doctor`: is this setup working, and if not, what to do. The facts are gathered at
//! the edges (`gather.rs`: tmux, `/proc`, the state folder, Claude Code's settings), the
//! findings are a pure function of them (`checks.rs`), so every diagnosis is unit-tested
//! without tmux.

mod checks;
mod gather;
mod notify;
pub mod verified;

use std::path::PathBuf;

use serde::Serialize;

use crate::events::{AgentKind, Time};
use crate::resolve::Via;
use gather::Installed;

pub use checks::check;
pub use gather::gather;

/// How a finding reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Level {
    /// Works.
    Ok,
    /// Worth knowing, nothing to fix.
    Note,
    /// Something to fix: doctor exits 1.
    Fix,
}

impl Level {
    /// The mark at the start of the line.
    pub fn mark(self) -> &'static str {
        match self {
            Level::Ok => "✓",
            Level::Note => "!",
            Level::Fix => "✗",
        }
    }
}

/// What a finding is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Topic {
    Tmux,
    Server,
    Plugin,
    StatusFormat,
    WindowFormat,
    Watcher,
    Pane,
    Hooks,
    StateDir,
    Versions,
    /// A remote host of `@agentpane-hosts`.
    Host,
    /// A notification channel of `@agentpane-notify`.
    Notify,
    /// The page for a phone (`@agentpane-web`).
    Web,
}

/// One line of the report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    pub topic: Topic,
    pub level: Level,
    pub text: String,
    /// What to do, for [`Level::Fix`] (and some notes).
    pub fix: Option<String>,
}

/// Everything doctor looked at.
#[derive(Debug, Clone)]
pub struct Facts {
    pub now: Time,
    /// This user's home.
    pub home: PathBuf,
    /// This agentpane binary, for the commands a fix names.
    pub exe: Option<PathBuf>,
    pub server: Server,
    pub tmux: Result<TmuxFacts, TmuxProblem>,
    /// `None` when the server could not be reached.
    pub watcher: Option<WatcherFacts>,
    pub panes: Vec<PaneFacts>,
    pub hooks: Vec<HookFacts>,
    /// The hook files (extensions) of the agents that take one, for the agents running now.
    pub hook_files: Vec<HookFileFacts>,
    pub state_dir: StateDirFacts,
    /// The versions verified in CI (`tests/real/clients.txt`).
    pub verified: Vec<verified::Verified>,
    /// The remote hosts' links (docs/design.md#remote-hosts), as the caller found them.
    pub hosts: Vec<crate::remote::link::HostView>,
    /// The notification channels turned on.
    pub notify: notify::NotifyFacts,
}

/// How the tmux server was chosen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Server {
    /// `-L NAME`.
    Name(String),
    /// `-S PATH`.
    Path(PathBuf),
    /// The server of `$TMUX` (doctor runs inside tmux).
    Inside,
    /// tmux's default server.
    Default,
}

/// Why the server could not be asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TmuxProblem {
    Missing,
    NoServer(String),
    Other(String),
}

/// The server's answers, from one `display-message -p`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TmuxFacts {
    pub version: String,
    pub socket_path: String,
    pub options: ServerOptions,
}

/// The options doctor reads (global values; empty when unset).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ServerOptions {
    pub status_left: String,
    pub status_right: String,
    pub window_status_format: String,
    pub window_status_current_format: String,
    /// `@agentpane_plugin`: the plugin's folder, set each time the plugin runs.
    pub plugin: String,
    /// `@agentpane_bin`: the binary the plugin uses (empty: it found none).
    pub plugin_bin: String,
    /// That binary is no longer there (`cargo clean`, a removed clone).
    pub plugin_bin_gone: bool,
    /// `@agentpane_build`: `building` or `failed` while the plugin builds its checkout.
    pub build: String,
    /// `@agentpane_build_log`: that build's log.
    pub build_log: String,
    /// `@agentpane-watch` (the user's setting).
    pub watch: String,
    /// `status-left-length` and `status-right-length`: tmux cuts each side there.
    pub status_left_length: usize,
    pub status_right_length: usize,
    /// The columns status-left and status-right take now, expanded.
    pub status_left_width: usize,
    pub status_right_width: usize,
    /// The columns the agentpane segment (`@agentpane_status`) takes now.
    pub segment_width: usize,
}

/// The watcher of the server: its lock and what it last wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WatcherFacts {
    pub lock: PathBuf,
    /// The process holding the lock.
    pub pid: Option<u32>,
    pub since: Option<Time>,
    /// When it last published a change for this server (`state.json`).
    pub last_change: Option<Time>,
    /// The last line this server's watchers wrote to `watch.log`.
    pub last_log: Option<String>,
}

/// Where an agent's config root came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RootFrom {
    /// A variable such as `CLAUDE_CONFIG_DIR` in the agent's environment.
    Override(String),
    /// Its own `HOME`.
    AgentHome,
    /// Its environment names neither: this user's home.
    Default,
    /// Its environment cannot be read (another user): this user's home, a guess.
    Unreadable,
    /// agentpane reads no files of this agent (amp, aider).
    NotRead,
}

/// One agent pane and its resolution chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaneFacts {
    pub pane_id: String,
    pub target: String,
    pub kind: AgentKind,
    pub pid: u32,
    pub version: Option<String>,
    pub root: Option<PathBuf>,
    pub root_from: RootFrom,
    pub root_exists: bool,
    /// The agent's own `HOME`.
    pub agent_home: Option<PathBuf>,
    /// Where the agent's `agentpane hook` writes (its environment's state folder).
    pub agent_state_dir: Option<PathBuf>,
    pub session_id: Option<String>,
    pub transcript: Option<PathBuf>,
    pub via: Via,
    /// The chain's step before the transcript: where a broken chain broke.
    pub last_step: String,
}

/// agentpane's hooks in one Claude Code config root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookFacts {
    pub settings: PathBuf,
    /// True for this user's default settings file (`hooks install` needs no `--settings`).
    pub default: bool,
    pub found: Result<Installed, String>,
    /// The installed hook command's program exists.
    pub command_exists: bool,
    /// Panes whose Claude Code uses this root.
    pub panes: Vec<String>,
    /// Those panes' state folders that differ from this one's (hook events lost).
    pub elsewhere: Vec<(String, PathBuf)>,
}

/// An agent's hook file (`hooks install --agent NAME`: an extension it loads by itself) where
/// the panes of that agent would load it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookFileFacts {
    pub agent: AgentKind,
    pub path: PathBuf,
    /// It is there.
    pub installed: bool,
    /// The panes of that agent that would load it.
    pub panes: Vec<String>,
    /// Those of them whose session was not tied to their process by it (started before it
    /// was installed, or without it).
    pub unlinked: Vec<String>,
}

/// The state folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateDirFacts {
    pub path: PathBuf,
    pub exists: bool,
    pub symlink: bool,
    pub is_dir: bool,
    pub mode: u32,
    pub ours: bool,
    /// Folders and files inside it that agentpane refuses to act on, and why (the first few).
    pub untrusted: Vec<(PathBuf, crate::paths::Distrust)>,
}

/// The report as `doctor --json` prints it.
#[derive(Debug, Serialize)]
pub struct Report<'a> {
    /// No finding needs a fix.
    pub ok: bool,
    pub socket_path: Option<&'a str>,
    pub findings: &'a [Finding],
}

/// True when nothing needs a fix.
pub fn all_good(findings: &[Finding]) -> bool {
    findings.iter().all(|f| f.level != Level::Fix)
}
