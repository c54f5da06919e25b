//! agentpane: which tmux pane's coding agent is working, needs you, or is stuck — read from the
//! agents' own transcripts. The modules follow the pipeline (docs/design.md):
//! tmux panes → process tree → agent → session record → transcript → events → state → outputs.

pub mod agents;
pub mod alert;
pub mod answer;
pub mod channel;
pub mod cli;
pub mod cmd;
pub mod doctor;
pub mod events;
pub mod evidence;
pub mod exec;
pub mod extract;
pub mod fake_agent;
pub mod limits;
pub mod memory;
pub mod notify;
pub mod paths;
pub mod proctree;
pub mod read;
pub mod remote;
pub mod resolve;
pub mod route;
pub mod scan;
pub mod segment;
pub mod state;
pub mod text;
pub mod tmux;
pub mod transcript;
pub mod usage;
pub mod watch;
pub mod web;

use std::ffi::OsString;

use clap::Parser;

/// Exit codes documented in the README.
pub mod exit {
    /// Success.
    pub const OK: i32 = 0;
    /// The command ran but has nothing to give (no answer, no agents, refused delivery).
    pub const NOTHING: i32 = 1;
    /// Bad input: unreadable file, bad arguments.
    pub const USAGE: i32 = 2;
    /// No tmux server (or tmux missing).
    pub const NO_TMUX: i32 = 3;
    /// Routed text refused for safety: the destination is not, or no longer, the agent the
    /// text is for (a shell, an exited, suspended or replaced agent). Nothing was pasted.
    pub const REFUSED: i32 = 6;
}

/// Runs the CLI with `args` and returns the process exit code. Re-entrant: tests call it.
pub fn run<I, T>(args: I) -> i32
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
    if let Some(kind) = args.first().and_then(|a0| fake_agent::requested(a0)) {
        return fake_agent::run(kind);
    }
    let cli = match cli::Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() {
                exit::USAGE
            } else {
                exit::OK
            };
            let _ = e.print();
            return code;
        }
    };
    match cmd::dispatch(cli) {
        Ok(code) => code,
        Err(err) => {
            if is_broken_pipe(&err) {
                return exit::OK;
            }
            eprintln!("agentpane: {err:#}");
            cmd::exit_code_for(&err)
        }
    }
}

fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
