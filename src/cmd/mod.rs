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
mod man;
mod menu_fit;
mod notify;
mod panes;
mod pick;
mod relay;
mod remote;
mod route;
mod route_menu;
mod serve;
mod status;
mod statusline;
mod usage;
mod wait;
mod watch;
mod web;

use anyhow::Result;

use crate::cli::{Cli, Command, On, ServerArgs, ServerUse};
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
    let server = match cli.command.server() {
        ServerUse::Talks(after) => cli.server.then(after),
        ServerUse::Own if cli.server.is_set() => {
            anyhow::bail!("demo runs on its own private tmux server; it takes no -L/-S/--host")
        }
        ServerUse::Own | ServerUse::Without => ServerArgs::default(),
    };
    let socket = match (server.socket_name, server.socket_path) {
        (Some(name), _) => Socket::Name(name),
        (None, Some(path)) => Socket::Path(path),
        (None, None) => Socket::Default,
    };
    let ctx = Context {
        socket,
        hosts: server.hosts,
    };
    match cli.command {
        Command::Classify(a) => classify::run(a),
        Command::Last(On { args, .. }) => last::run(args, &ctx),
        Command::Resolve(On { args, .. }) => panes::resolve(args, &ctx),
        Command::Panes(On { args, .. }) => panes::panes(args, &ctx),
        Command::Usage(On { args, .. }) => usage::run(args, &ctx),
        Command::Status(On { args, .. }) => status::status(args, &ctx),
        Command::PaneStatus(On { args, .. }) => status::pane_status(args, &ctx),
        Command::Watch(On { args, .. }) => watch::run(args, &ctx),
        Command::Route(On { args, .. }) => route::route(args, &ctx),
        Command::Relay(On { args, .. }) => relay::relay(args, &ctx),
        Command::Pick(On { args, .. }) => pick::run(args, &ctx),
        Command::Answer(On { args, .. }) => answer::run(args, &ctx),
        Command::RouteMenu(On { args, .. }) => route_menu::menu(args, &ctx),
        Command::RouteQueue(On { args, .. }) => route::queue(args, &ctx),
        Command::Channel(c) => channel::run(c),
        Command::Hook(a) => hooks::hook(a),
        Command::Hooks(c) => hooks::hooks(c),
        Command::Statusline(a) => statusline::run(a),
        Command::Demo(a) => demo::run(a),
        Command::Jump(On { args, .. }) => status::jump(args, &ctx),
        Command::Nudge(_) => watch::nudge(),
        Command::Doctor(On { args, .. }) => doctor::run(args, &ctx),
        Command::Notify(On { args, .. }) => notify::run(args, &ctx),
        Command::Completions(a) => completions::completions(a),
        Command::Man => completions::man(),
        Command::Serve(On { args, .. }) => serve::run(args, &ctx),
        Command::Web(On { args, .. }) => web::run(args, &ctx),
        Command::DeliverStdin(On { args, .. }) => route::deliver_stdin(args, &ctx),
        Command::Focus { pane, .. } => remote::focus(&pane, &ctx.tmux()),
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
