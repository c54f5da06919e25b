//! One file per subcommand; [`dispatch`] maps the parsed CLI onto them.

mod answer;
mod channel;
mod classify;
mod client;
mod completions;
mod demo;
mod doctor;
mod hooks;
mod last;
mod panes;
mod pick;
mod route;
mod status;
mod wait;
mod watch;

use anyhow::Result;

use crate::cli::{Cli, Command};
use crate::exit;
use crate::tmux::{Socket, Tmux, TmuxError};

/// What every subcommand may need from the top-level flags.
#[derive(Debug, Clone, Default)]
pub struct Context {
    pub socket: Socket,
}

impl Context {
    /// A handle on the selected tmux server.
    pub fn tmux(&self) -> Tmux {
        Tmux::new(self.socket.clone())
    }
}

/// Runs the command and returns its exit code.
pub fn dispatch(cli: Cli) -> Result<i32> {
    let socket = match (cli.socket_name, cli.socket_path) {
        (Some(name), _) => Socket::Name(name),
        (None, Some(path)) => Socket::Path(path),
        (None, None) => Socket::Default,
    };
    let ctx = Context { socket };
    match cli.command {
        Command::Classify(a) => classify::run(a),
        Command::Last(a) => last::run(a, &ctx),
        Command::Resolve(a) => panes::resolve(a, &ctx),
        Command::Panes(a) => panes::panes(a, &ctx),
        Command::Status(a) => status::status(a, &ctx),
        Command::PaneStatus(a) => status::pane_status(a, &ctx),
        Command::Watch(a) => watch::run(a, &ctx),
        Command::Route(a) => route::route(a, &ctx),
        Command::Relay(a) => route::relay(a, &ctx),
        Command::Pick(a) => pick::run(a, &ctx),
        Command::Answer(a) => answer::run(a, &ctx),
        Command::RouteMenu(a) => route::menu(a, &ctx),
        Command::RouteQueue(a) => route::queue(a, &ctx),
        Command::Channel(c) => channel::run(c),
        Command::Hook(a) => hooks::hook(a),
        Command::Hooks(c) => hooks::hooks(c),
        Command::Demo(a) => demo::run(a, &ctx),
        Command::Jump(a) => status::jump(a, &ctx),
        Command::Nudge => watch::nudge(),
        Command::Doctor(a) => doctor::run(a, &ctx),
        Command::Completions(a) => completions::completions(a),
        Command::Man => completions::man(),
    }
}

/// Maps an error to its documented exit code.
pub fn exit_code_for(err: &anyhow::Error) -> i32 {
    for cause in err.chain() {
        if let Some(t) = cause.downcast_ref::<TmuxError>() {
            if matches!(t, TmuxError::Missing | TmuxError::NoServer(_)) {
                return exit::NO_TMUX;
            }
        }
    }
    exit::USAGE
}
