//! Command-line types (docs/design.md#cli-contract). No I/O here: parsing only, so the contract can
//! be tested and documented without touching tmux or the disk.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::events::AgentKind;

/// Top-level arguments.
#[derive(Debug, Parser)]
#[command(
    name = "agentpane",
    version,
    about = "Which tmux pane's coding agent is working, needs you, or is stuck — from the agents' own transcripts."
)]
pub struct Cli {
    /// The server flags given before the subcommand (`agentpane -L work status`).
    #[command(flatten)]
    pub server: ServerArgs,
    #[command(subcommand)]
    pub command: Command,
}

/// A subcommand's own arguments and, after them, the server flags.
#[derive(Debug, Args)]
pub struct On<T: Args> {
    #[command(flatten)]
    pub args: T,
    #[command(flatten)]
    pub server: ServerArgs,
}

/// `-L/-S/--host`: the tmux server (and remote hosts) a command talks to. Only commands that
/// talk to tmux take them, before the subcommand or after it.
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = "tmux server")]
pub struct ServerArgs {
    /// tmux socket name, as `tmux -L`.
    #[arg(short = 'L', long = "socket-name", value_name = "NAME")]
    pub socket_name: Option<String>,
    /// tmux socket path, as `tmux -S`.
    #[arg(
        short = 'S',
        long = "socket-path",
        value_name = "PATH",
        conflicts_with = "socket_name"
    )]
    pub socket_path: Option<PathBuf>,
    /// A remote host whose agents to include, as `ssh` names it (repeatable; adds to
    /// `@agentpane-hosts`). Its panes are then `HOST:PANE`.
    #[arg(long = "host", value_name = "HOST")]
    pub hosts: Vec<String>,
}

impl ServerArgs {
    /// Whether any of the flags was given.
    pub fn is_set(&self) -> bool {
        self.socket_name.is_some() || self.socket_path.is_some() || !self.hosts.is_empty()
    }

    /// These flags, then `later`'s (given after the subcommand): a later socket wins, hosts add up.
    pub fn then(self, later: &ServerArgs) -> ServerArgs {
        let later_socket = later.socket_name.is_some() || later.socket_path.is_some();
        let (socket_name, socket_path) = if later_socket {
            (later.socket_name.clone(), later.socket_path.clone())
        } else {
            (self.socket_name, self.socket_path)
        };
        let mut hosts = self.hosts;
        hosts.extend(later.hosts.iter().cloned());
        ServerArgs {
            socket_name,
            socket_path,
            hosts,
        }
    }
}

/// `--agent NAME`: an agent whose log agentpane reads (the registry's names).
fn log_agent() -> impl clap::builder::TypedValueParser<Value = AgentKind> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
    let names = AgentKind::ALL
        .into_iter()
        .filter(|k| crate::agents::reads_log(*k))
        .map(|k| PossibleValue::new(k.name()));
    PossibleValuesParser::new(names).try_map(|name| {
        AgentKind::from_name(&name).ok_or_else(|| format!("unknown agent {name:?}"))
    })
}

/// An agent that takes a hook file from agentpane (`hooks install --agent NAME`).
fn hook_agent() -> impl clap::builder::TypedValueParser<Value = AgentKind> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
    let names = AgentKind::ALL
        .into_iter()
        .filter(|k| {
            crate::agents::of(*k)
                .hook_file(std::path::Path::new("/"), &|_| None)
                .is_some()
        })
        .map(|k| PossibleValue::new(k.name()));
    PossibleValuesParser::new(names).try_map(|name| {
        AgentKind::from_name(&name).ok_or_else(|| format!("unknown agent {name:?}"))
    })
}

/// The subcommands. Those that talk to tmux carry their own [`ServerArgs`] (`status -L work`).
#[derive(Debug, Subcommand)]
pub enum Command {
    /// State of one transcript file (pure: no tmux, no memory).
    Classify(ClassifyArgs),
    /// The clean last answer of a pane's agent, or of a transcript file.
    Last(On<LastArgs>),
    /// The chain pane → agent process → session record → transcript.
    Resolve(On<ResolveArgs>),
    /// All agent panes with their state.
    Panes(On<PanesArgs>),
    /// What each agent pane's session used (context, tokens, cost) and every plan window.
    Usage(On<UsageArgs>),
    /// The status-line segment (empty when there are no agents).
    Status(On<StatusArgs>),
    /// The most urgent state per window, and per-pane detail.
    PaneStatus(On<PaneStatusArgs>),
    /// Background watcher: tmux options, alerts, routing queue, relays.
    Watch(On<WatchArgs>),
    /// Hand one pane's answer to another pane.
    Route(On<RouteArgs>),
    /// Relay answers between two panes for a bounded number of rounds.
    Relay(On<RelayArgs>),
    /// Pick an agent pane, most urgent first: jump there, route into it, read its last answer.
    Pick(On<PickArgs>),
    /// Allow or deny what a waiting agent asks, without switching to its pane.
    Answer(On<AnswerArgs>),
    /// Open a tmux menu of agent panes to route PANE's answer to.
    #[command(hide = true)]
    RouteMenu(On<RouteMenuArgs>),
    /// The routing queue: what waits, what was held and why; show, re-issue or drop a message.
    RouteQueue(On<RouteQueueArgs>),
    /// A typed file mailbox between agents.
    #[command(subcommand)]
    Channel(ChannelCommand),
    /// Record one Claude Code hook event (reads JSON on stdin; always exits 0).
    Hook(HookArgs),
    /// Install or remove agentpane's Claude Code hooks (or, with --agent, another agent's).
    #[command(subcommand)]
    Hooks(HooksCommand),
    /// Claude Code's status-line command: keeps the plan windows and session usage it is
    /// given (JSON on stdin), then runs your own status-line command on the same input.
    Statusline(StatuslineArgs),
    /// A self-contained show on its own private tmux server (takes no -L/-S).
    Demo(DemoArgs),
    /// Switch the client to the most urgent agent pane (the plugin's jump key).
    #[command(hide = true)]
    Jump(On<JumpArgs>),
    /// Wake the watcher now (the plugin's focus hooks: acknowledge a looked-at pane at once).
    #[command(hide = true)]
    Nudge(ServerArgs),
    /// Check the setup — tmux, plugin, watcher, every agent pane, hooks — and say what to fix.
    Doctor(On<DoctorArgs>),
    /// Notifications: `notify test [CHANNEL]` sends a sample to the channels of
    /// `@agentpane-notify` (or the one named).
    Notify(On<NotifyArgs>),
    /// Shell completions (bash, zsh, fish, elvish, powershell) on stdout.
    Completions(CompletionsArgs),
    /// The man page (roff) on stdout: `agentpane man > agentpane.1`.
    Man,
    /// Stream this host's agent panes as JSON documents (what a remote watcher runs over ssh).
    Serve(On<ServeArgs>),
    /// A page for a phone's browser: every agent pane live, its last answer, Allow/Deny and a
    /// reply box. Prints the page's URL (with its secret) first.
    Web(On<WebArgs>),
    /// Deliver text read on stdin into PANE's agent, with every delivery rule (what `route`
    /// runs over ssh for a pane on this host).
    #[command(hide = true)]
    DeliverStdin(On<DeliverStdinArgs>),
    /// Make PANE the current pane of its window and session (what a remote picker runs).
    #[command(hide = true)]
    Focus {
        /// The pane.
        pane: String,
        #[command(flatten)]
        server: ServerArgs,
    },
}

/// What a subcommand does with `-L/-S/--host`.
#[derive(Debug)]
pub enum ServerUse<'a> {
    /// It talks to the user's tmux server: these flags (given after the subcommand) choose it.
    Talks(&'a ServerArgs),
    /// It talks to no tmux server: flags before the subcommand are accepted and unused, so one
    /// prefix (`agentpane -L work …`) fits every command.
    Without,
    /// It runs its own private server: the flags are refused, never silently ignored.
    Own,
}

impl Command {
    /// How this subcommand uses the server flags.
    pub fn server(&self) -> ServerUse<'_> {
        match self {
            Command::Last(On { server, .. })
            | Command::Resolve(On { server, .. })
            | Command::Panes(On { server, .. })
            | Command::Usage(On { server, .. })
            | Command::Status(On { server, .. })
            | Command::PaneStatus(On { server, .. })
            | Command::Watch(On { server, .. })
            | Command::Route(On { server, .. })
            | Command::Relay(On { server, .. })
            | Command::Pick(On { server, .. })
            | Command::Answer(On { server, .. })
            | Command::RouteMenu(On { server, .. })
            | Command::RouteQueue(On { server, .. })
            | Command::Jump(On { server, .. })
            | Command::Nudge(server)
            | Command::Doctor(On { server, .. })
            | Command::Notify(On { server, .. })
            | Command::Serve(On { server, .. })
            | Command::Web(On { server, .. })
            | Command::DeliverStdin(On { server, .. })
            | Command::Focus { server, .. } => ServerUse::Talks(server),
            Command::Classify(_)
            | Command::Channel(_)
            | Command::Hook(_)
            | Command::Hooks(_)
            | Command::Statusline(_)
            | Command::Completions(_)
            | Command::Man => ServerUse::Without,
            Command::Demo(_) => ServerUse::Own,
        }
    }
}

/// `web [--listen ADDR:PORT] [--qr] [--new-secret] [--allow-host NAME]... | --url`.
#[derive(Debug, Args)]
pub struct WebArgs {
    /// Where to listen (port 0: any free port, printed). Another address than loopback
    /// reaches the page from the network: prefer an SSH tunnel or `tailscale serve`.
    #[arg(long, value_name = "ADDR:PORT", default_value = crate::web::DEFAULT_LISTEN)]
    pub listen: std::net::SocketAddr,
    /// Print the URL as a QR code too, for a phone's camera.
    #[arg(long)]
    pub qr: bool,
    /// Replace the secret: every page opened with the old URL stops working.
    #[arg(long)]
    pub new_secret: bool,
    /// Another name the page may be reached by (a `tailscale serve` name such as
    /// `box.tail1234.ts.net`, a LAN address); repeatable.
    #[arg(long, value_name = "NAME")]
    pub allow_host: Vec<String>,
    /// Print the URL of the page already served for this tmux server (by `agentpane web` or
    /// the watcher), and exit.
    #[arg(long, conflicts_with_all = ["listen", "allow_host"])]
    pub url: bool,
}

/// `serve [--once]`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Print one document and exit.
    #[arg(long)]
    pub once: bool,
}

/// `deliver-stdin PANE [--no-submit] [--wait SECS | --queue] [--json] [--id ID] | --check`.
#[derive(Debug, Args)]
pub struct DeliverStdinArgs {
    /// Destination pane on this host.
    pub dst: String,
    /// Where the text came from (for messages): `HOST:PANE`.
    #[arg(long, value_name = "LABEL", default_value = "remote")]
    pub from: String,
    /// Paste without pressing Enter.
    #[arg(long)]
    pub no_submit: bool,
    /// Wait up to SECS for the destination to be free.
    #[arg(long, value_name = "SECS", conflicts_with = "queue")]
    pub wait: Option<f64>,
    /// Queue for the watcher when the destination is busy.
    #[arg(long)]
    pub queue: bool,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
    /// The sender's message id: this host delivers one id at most once (a retry after a
    /// dropped connection is answered, never pasted again).
    #[arg(long, value_name = "ID")]
    pub id: Option<String>,
    /// Only check that PANE runs an agent that could take text (reads no stdin): exit 0, or
    /// 6 with the reason.
    #[arg(long, conflicts_with_all = ["wait", "queue", "id"])]
    pub check: bool,
}

/// What `notify` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum NotifyAction {
    /// Send a sample notification.
    Test,
}

/// `notify test [CHANNEL]`.
#[derive(Debug, Args)]
pub struct NotifyArgs {
    #[arg(value_enum)]
    pub action: NotifyAction,
    /// One channel (terminal, desktop, ntfy, webhook), on or not in `@agentpane-notify`;
    /// default: those it lists.
    #[arg(value_parser = crate::notify::Channel::parse)]
    pub channel: Option<crate::notify::Channel>,
}

#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Print one JSON object: `ok` and the findings.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Args)]
pub struct ClassifyArgs {
    /// The transcript (JSONL) to classify.
    pub file: PathBuf,
    /// Which agent wrote it (default: detected from the content). An opencode session is
    /// named `<opencode.db path>#<session id>`.
    #[arg(long, value_parser = log_agent())]
    pub agent: Option<AgentKind>,
    /// The clock, as RFC 3339 (default: now).
    #[arg(long, value_name = "RFC3339")]
    pub now: Option<String>,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct LastArgs {
    /// A tmux pane target (`%3`, `work:2.1`).
    #[arg(required_unless_present = "transcript", conflicts_with = "transcript")]
    pub pane: Option<String>,
    /// Read this transcript instead of a pane's.
    #[arg(long, value_name = "FILE")]
    pub transcript: Option<PathBuf>,
    /// Which agent wrote the transcript (default: detected).
    #[arg(long, value_parser = log_agent())]
    pub agent: Option<AgentKind>,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Print the answer byte-exact even to a terminal (escape sequences included); into a pipe
    /// or a file it always is.
    #[arg(long, conflicts_with = "json")]
    pub raw: bool,
    /// Print the pane's whole screen instead (any pane, a shell's too); never the default.
    #[arg(long, conflicts_with = "transcript")]
    pub screen: bool,
}

#[derive(Debug, Args)]
pub struct AnswerArgs {
    /// A tmux pane target (`%3`, `work:2.1`), or `HOST:%3` for a pane on a remote host (that
    /// host answers, with its own rules).
    pub pane: String,
    /// Allow once, or deny.
    #[arg(value_enum)]
    pub choice: crate::answer::Choice,
    /// With `allow`: and do not ask again, where the agent's dialog offers that.
    #[arg(long)]
    pub always: bool,
    /// The fingerprint of the request you were shown (`panes --json`'s
    /// `request.fingerprint`): refused unless the pane still asks exactly that.
    #[arg(long, value_name = "FINGERPRINT")]
    pub request: Option<String>,
    /// The tmux client you answer from (`#{client_name}` or its terminal), when it shows the
    /// pane answered — e.g. a popup over it: its keys are yours, not someone typing there.
    #[arg(long, value_name = "CLIENT")]
    pub client: Option<String>,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ResolveArgs {
    /// A tmux pane target (default: every agent pane).
    pub pane: Option<String>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct PanesArgs {
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct UsageArgs {
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct StatusArgs {
    /// Format with {working} {waiting} {your_turn} {stalled} {attention} {idle} and icons.
    #[arg(long)]
    pub format: Option<String>,
    /// Icon overrides, `working=⚡,your-turn=●,…` (default: `$AGENTPANE_ICONS`).
    #[arg(long, value_name = "NAME=GLYPH,…")]
    pub icons: Option<String>,
    /// Scan the panes even when a watcher serves this server (by default its last view is
    /// used: what the tmux status line shows, without a scan).
    #[arg(long)]
    pub scan: bool,
    /// `{limit}` shows the tightest plan window once its use reaches this percent.
    #[arg(long, default_value_t = 50.0, value_name = "PERCENT")]
    pub limit_threshold: f64,
}

#[derive(Debug, Args)]
pub struct PaneStatusArgs {
    /// Only this window (any tmux window target).
    #[arg(long, value_name = "TARGET")]
    pub window: Option<String>,
    /// Print JSON with per-pane detail.
    #[arg(long)]
    pub json: bool,
    /// Icon overrides, `working=⚡,your-turn=●,…` (default: `$AGENTPANE_ICONS`).
    #[arg(long, value_name = "NAME=GLYPH,…")]
    pub icons: Option<String>,
}

#[derive(Debug, Args)]
pub struct WatchArgs {
    /// Run this shell command (`sh -c`) for each alert, with the alert as one JSON object on stdin.
    #[arg(long, value_name = "CMD")]
    pub alert_command: Option<String>,
    /// Safety poll interval in seconds.
    #[arg(long, default_value_t = 5.0)]
    pub poll: f64,
    /// Stop after this many seconds (for tests and benchmarks).
    #[arg(long, hide = true)]
    pub exit_after: Option<f64>,
    /// Status segment format (as `agentpane status --format`).
    #[arg(long)]
    pub format: Option<String>,
    /// Icon overrides (as `agentpane status --icons`).
    #[arg(long, value_name = "NAME=GLYPH,…")]
    pub icons: Option<String>,
    /// `{limit}` shows, and an alert says, when a plan window's use reaches this percent.
    #[arg(long, default_value_t = 50.0, value_name = "PERCENT")]
    pub limit_threshold: f64,
    /// An alert says when a pane's context fills past this percent.
    #[arg(long, default_value_t = 80.0, value_name = "PERCENT")]
    pub context_threshold: f64,
    /// Seconds a new state must hold before it is alerted.
    #[arg(long, default_value_t = 1.0, value_name = "SECS")]
    pub alert_delay: f64,
    /// Seconds the alert command may run before it is killed.
    #[arg(long, default_value_t = 10.0, value_name = "SECS")]
    pub alert_timeout: f64,
    /// Do not ring the bell in the alerting pane's window.
    #[arg(long)]
    pub no_bell: bool,
    /// Do not send desktop notifications (D-Bus notification service, `osascript` on macOS).
    #[arg(long)]
    pub no_notify: bool,
    /// Do not show alerts with `display-message`.
    #[arg(long)]
    pub no_message: bool,
    /// Also alert for sessions a program drives (Codex `exec`, MCP, subagents).
    #[arg(long)]
    pub alert_machine: bool,
    /// Seconds channel mail stays unread before it is pasted into a free agent's pane.
    #[arg(long, default_value_t = 10.0, value_name = "SECS")]
    pub channel_grace: f64,
    /// Never paste channel mail into panes (unread counts are still shown).
    #[arg(long)]
    pub no_channel_delivery: bool,
    /// End the watcher already serving this server and take over (the plugin, after it
    /// rebuilt agentpane, so the new binary runs).
    #[arg(long, hide = true)]
    pub replace: bool,
}

/// How the routed text is made from the source pane.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum Transform {
    /// The clean last answer.
    #[default]
    Raw,
    /// The source pane's screen and scrollback, as text.
    FullOutput,
    /// The answer shortened.
    Summary,
    /// The answer rewritten by `$AGENTPANE_AI_COMMAND`.
    Ai,
}

#[derive(Debug, Args)]
pub struct RouteArgs {
    /// Source pane.
    pub src: String,
    /// Destination pane.
    pub dst: String,
    /// What is sent: the clean last answer (raw), the source pane's screen (full-output), the
    /// answer shortened (summary), or the answer rewritten by `$AGENTPANE_AI_COMMAND` (ai).
    #[arg(long, value_enum, default_value_t = Transform::Raw)]
    pub transform: Transform,
    /// Send the source pane's whole screen instead of its answer (a shell's too); never the
    /// default.
    #[arg(long)]
    pub screen: bool,
    /// Built-in template name (review, continue, ask) or a template file.
    #[arg(long, value_name = "NAME|FILE")]
    pub template: Option<String>,
    /// Text for `{instruction}` in the template.
    #[arg(long, value_name = "TEXT")]
    pub instruction: Option<String>,
    /// Press Enter after pasting (default).
    #[arg(long, overrides_with = "no_submit")]
    pub submit: bool,
    /// Paste without pressing Enter.
    #[arg(long)]
    pub no_submit: bool,
    /// Wait up to SECS for the destination to be free.
    #[arg(long, value_name = "SECS", conflicts_with = "queue")]
    pub wait: Option<f64>,
    /// Queue for the watcher when the destination is busy.
    #[arg(long)]
    pub queue: bool,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
    /// Report through tmux display-message instead of stdout (for key bindings).
    #[arg(long, hide = true)]
    pub notify: bool,
}

/// `route-menu [PANE]`: the `prefix + R` menu (hidden; the plugin binds it).
#[derive(Debug, Args)]
pub struct RouteMenuArgs {
    /// The pane whose answer is routed (default: the current pane).
    pub pane: Option<String>,
}

/// `pick`: the picker (the plugin opens it in a popup with `--popup`).
#[derive(Debug, Args)]
pub struct PickArgs {
    /// The pane you came from: what `r` routes (default: the current pane).
    #[arg(long, value_name = "PANE")]
    pub from: Option<String>,
    /// The tmux client that Enter switches (the plugin passes `#{client_name}`).
    #[arg(long, value_name = "CLIENT")]
    pub client: Option<String>,
    /// Open on this pane's whole last answer; q closes.
    #[arg(long, value_name = "PANE")]
    pub answer: Option<String>,
    /// Open in a tmux popup on the client instead of this terminal (for key bindings).
    #[arg(long)]
    pub popup: bool,
    /// Open on what the most urgent waiting pane asks: y allows it once, n denies it.
    #[arg(long, conflicts_with = "answer")]
    pub decide: bool,
}

/// `route-queue [--deliver | --show ID | --requeue ID [--to PANE] | --drop ID]`: the routing
/// queue. Without an action it lists waiting messages and held ones with the reason.
#[derive(Debug, Args)]
pub struct RouteQueueArgs {
    /// Deliver queued messages whose destination is free now (the watcher does it too).
    #[arg(long, conflicts_with_all = ["show", "requeue", "drop"])]
    pub deliver: bool,
    /// Print the text of a queued or held message.
    #[arg(long, value_name = "ID", conflicts_with_all = ["requeue", "drop"])]
    pub show: Option<String>,
    /// Re-issue a held (or queued) message for the agent that runs in its pane now — or in
    /// `--to PANE` — delivered at once when that agent is free, else queued for it.
    #[arg(long, value_name = "ID", conflicts_with = "drop")]
    pub requeue: Option<String>,
    /// With `--requeue`: the pane to send it to instead.
    #[arg(long, value_name = "PANE", requires = "requeue")]
    pub to: Option<String>,
    /// Delete a held (or queued) message for good.
    #[arg(long, value_name = "ID")]
    pub drop: Option<String>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct RelayArgs {
    /// First pane.
    pub a: String,
    /// Second pane.
    pub b: String,
    /// Round trips before escalating to the human.
    #[arg(long, default_value_t = 3)]
    pub rounds: u32,
    /// Template wrapping each relayed answer (review, continue, ask or a file).
    #[arg(long, value_name = "NAME|FILE")]
    pub template: Option<String>,
    /// Run here in the foreground even when a watcher could run the relay.
    #[arg(long, conflicts_with = "stop")]
    pub foreground: bool,
    /// Stop the relay between A and B that the watcher runs.
    #[arg(long)]
    pub stop: bool,
}

#[derive(Debug, Subcommand)]
pub enum ChannelCommand {
    /// Create a channel; prints its id.
    New {
        #[arg(long = "as", value_name = "NAME")]
        name: String,
    },
    /// Join a channel.
    Join {
        id: String,
        #[arg(long = "as", value_name = "NAME")]
        name: String,
    },
    /// Send a message (TEXT, or `-` for stdin).
    Send {
        id: String,
        #[arg(long = "as", value_name = "NAME")]
        name: String,
        #[arg(long, value_name = "NAME|all")]
        to: String,
        #[arg(long = "type", value_name = "TYPE")]
        kind: String,
        #[arg(long)]
        thread: Option<String>,
        #[arg(long)]
        json: bool,
        text: String,
    },
    /// Wait for unread messages from others, print them, exit 0.
    Watch {
        id: String,
        #[arg(long = "as", value_name = "NAME")]
        name: String,
        #[arg(long, value_name = "DUR", default_value = "8h")]
        timeout: String,
        /// Print the messages as a JSON array.
        #[arg(long)]
        json: bool,
    },
    /// List messages.
    List {
        id: String,
        #[arg(long)]
        json: bool,
    },
    /// Close a thread.
    Close {
        id: String,
        #[arg(long)]
        thread: String,
        #[arg(long)]
        reason: String,
        #[arg(long = "as", value_name = "NAME")]
        name: Option<String>,
    },
    /// Install the Claude Code skill that teaches agents the channel.
    InstallSkill {
        /// Skills folder (default: ~/.claude/skills).
        #[arg(long)]
        dir: Option<PathBuf>,
    },
}

#[derive(Debug, Args)]
pub struct HookArgs {}

/// `statusline [--then COMMAND] [--agent NAME]`.
#[derive(Debug, Args)]
pub struct StatuslineArgs {
    /// Your own status-line command, run as the agent runs it (`sh -c COMMAND`) on the same
    /// stdin; its output and exit status are the status line's.
    #[arg(long, value_name = "COMMAND", allow_hyphen_values = true)]
    pub then: Option<String>,
    /// The agent whose status line this is (default: the one agent that has one, claude).
    #[arg(long, value_parser = status_line_agent())]
    pub agent: Option<AgentKind>,
}

/// The agents that run a status-line command (`--agent` of `statusline`).
fn status_line_agent() -> impl clap::builder::TypedValueParser<Value = AgentKind> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
    let names = status_line_agents().map(|k| PossibleValue::new(k.name()));
    PossibleValuesParser::new(names).try_map(|name| {
        AgentKind::from_name(&name).ok_or_else(|| format!("unknown agent {name:?}"))
    })
}

/// The agents that run a status-line command, in registry order.
pub fn status_line_agents() -> impl Iterator<Item = AgentKind> {
    AgentKind::ALL.into_iter().filter(|k| {
        crate::agents::of(*k)
            .status_line(b"{}", chrono::DateTime::UNIX_EPOCH)
            .is_some()
    })
}

#[derive(Debug, Subcommand)]
pub enum HooksCommand {
    /// Add agentpane's hooks to Claude Code's settings.json (idempotent, with a backup), or
    /// with --agent pi its pi extension (~/.pi/agent/extensions/agentpane.ts).
    Install {
        /// Claude Code's settings file to edit (default: `$CLAUDE_CONFIG_DIR/settings.json`,
        /// else ~/.claude/settings.json).
        #[arg(long, value_name = "FILE", conflicts_with = "agent")]
        settings: Option<PathBuf>,
        /// The agent whose hooks to install, when not Claude Code's.
        #[arg(long, value_parser = hook_agent())]
        agent: Option<AgentKind>,
        /// Leave Claude Code's `statusLine` alone (by default `agentpane statusline` is put in
        /// front of your status-line command, to keep the plan windows it is given).
        #[arg(long, conflicts_with = "agent")]
        no_statusline: bool,
    },
    /// Remove exactly what `install` added.
    Uninstall {
        /// Claude Code's settings file to edit (default: `$CLAUDE_CONFIG_DIR/settings.json`,
        /// else ~/.claude/settings.json).
        #[arg(long, value_name = "FILE", conflicts_with = "agent")]
        settings: Option<PathBuf>,
        /// The agent whose hooks to remove, when not Claude Code's.
        #[arg(long, value_parser = hook_agent())]
        agent: Option<AgentKind>,
    },
}

#[derive(Debug, Args)]
pub struct JumpArgs {
    /// The tmux client to switch (the plugin passes `#{client_name}`).
    #[arg(long, value_name = "CLIENT")]
    pub client: Option<String>,
}

#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Keep the demo server running until Enter/EOF instead of the scripted run.
    #[arg(long)]
    pub keep: bool,
    /// Seconds the scripted show runs.
    #[arg(long, default_value_t = 20.0)]
    pub seconds: f64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    fn parse(args: &[&str]) -> (ServerArgs, Option<ServerArgs>) {
        let cli = Cli::try_parse_from([&["agentpane"][..], args].concat()).unwrap();
        let after = match cli.command.server() {
            ServerUse::Talks(s) => Some(s.clone()),
            ServerUse::Without | ServerUse::Own => None,
        };
        (cli.server, after)
    }

    #[test]
    fn a_socket_after_the_subcommand_wins_and_hosts_add_up() {
        let (before, after) = parse(&[
            "-L", "a", "--host", "h1", "status", "-S", "/p", "--host", "h2",
        ]);
        let both = before.then(&after.unwrap());
        assert_eq!(both.socket_name, None);
        assert_eq!(both.socket_path, Some(PathBuf::from("/p")));
        assert_eq!(both.hosts, ["h1", "h2"]);
        let (before, after) = parse(&["-L", "a", "status"]);
        let both = before.then(&after.unwrap());
        assert_eq!(both.socket_name.as_deref(), Some("a"));
    }

    #[test]
    fn commands_without_tmux_take_no_server_flag_after_them() {
        for args in [
            &["classify", "f", "-L", "a"][..],
            &["demo", "-L", "a"],
            &["man", "--host", "h"],
        ] {
            assert!(
                Cli::try_parse_from([&["agentpane"][..], args].concat()).is_err(),
                "{args:?}"
            );
        }
        let (before, after) = parse(&["-L", "a", "classify", "f"]);
        assert!(before.is_set() && after.is_none());
    }
}
