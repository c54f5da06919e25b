//! One file per subcommand; [`dispatch`] maps the parsed CLI onto them.

mod answer;
mod channel;
mod classify;
mod client;
mod completions;
mod demo;
mod doctor;
mod form;
mod hooks;
mod last;
mod menu_fit;
mod panes;
mod pick;
mod relay;
mod remote;
mod route;
mod route_menu;
mod serve;
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
    /// `--host` flags (remote hosts besides `@agentpane-hosts`).
    pub hosts: Vec<String>,
}

impl Context {
    /// A handle on the selected tmux server.
    pub fn tmux(&self) -> Tmux {
        Tmux::new(self.socket.clone())
    }

    /// The configured remote hosts: `--host` (a bad name is an error), then
    /// `@agentpane-hosts` (read only when a tmux server answers; a bad name there is said on
    /// stderr and left out, so one typo never stops local panes from working).
    pub fn remote_hosts(&self) -> Result<Vec<crate::remote::Host>> {
        let mut hosts = crate::remote::hosts_from(self.hosts.iter().map(String::as_str), "")?;
        let option = self
            .tmux()
            .cmd(&["show-option", "-gqv", "@agentpane-hosts"])
            .unwrap_or_default();
        for name in option.split_whitespace() {
            match crate::remote::Host::parse(name) {
                Ok(h) if !hosts.contains(&h) => hosts.push(h),
                Ok(_) => {}
                Err(e) => eprintln!("agentpane: @agentpane-hosts: {e:#}"),
            }
        }
        Ok(hosts)
    }
}

/// Runs the command and returns its exit code.
pub fn dispatch(cli: Cli) -> Result<i32> {
    let socket = match (cli.socket_name, cli.socket_path) {
        (Some(name), _) => Socket::Name(name),
        (None, Some(path)) => Socket::Path(path),
        (None, None) => Socket::Default,
    };
    let ctx = Context {
        socket,
        hosts: cli.hosts,
    };
    match cli.command {
        Command::Classify(a) => classify::run(a),
        Command::Last(a) => last::run(a, &ctx),
        Command::Resolve(a) => panes::resolve(a, &ctx),
        Command::Panes(a) => panes::panes(a, &ctx),
        Command::Status(a) => status::status(a, &ctx),
        Command::PaneStatus(a) => status::pane_status(a, &ctx),
        Command::Watch(a) => watch::run(a, &ctx),
        Command::Route(a) => route::route(a, &ctx),
        Command::Relay(a) => relay::relay(a, &ctx),
        Command::Pick(a) => pick::run(a, &ctx),
        Command::Answer(a) => answer::run(a, &ctx),
        Command::RouteMenu(a) => route_menu::menu(a, &ctx),
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
        Command::Serve(a) => serve::run(a, &ctx),
        Command::DeliverStdin(a) => route::deliver_stdin(a, &ctx),
        Command::Focus { pane } => remote::focus(&pane, &ctx.tmux()),
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
