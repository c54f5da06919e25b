//! The findings, as a pure function of the facts: every line says what works (✓) or what is
//! wrong and the command that fixes it (✗), with notes (!) for what is worth knowing.

use std::path::Path;

use super::gather::EVENTS;
use crate::events::AgentKind;
use crate::resolve::Via;
use crate::text::{age, tilde};
use crate::tmux::version_at_least;

use super::verified::{is_verified, versions_of};
use super::{
    Facts, Finding, HookFacts, HookFileFacts, Level, PaneFacts, RootFrom, Server, ServerOptions,
    StateDirFacts, TmuxFacts, TmuxProblem, Topic, WatcherFacts,
};

/// The placeholder the plugin rewrites into the status segment.
const STATUS_PLACEHOLDER: &str = "#{agentpane_status}";
/// The placeholder the plugin rewrites into each window's glyph.
const WINDOW_PLACEHOLDER: &str = "#{agentpane_window_status}";

/// Every finding, in reading order: tmux, the plugin, the formats, the watcher, the panes,
/// hooks, the state folder, versions.
pub fn check(f: &Facts) -> Vec<Finding> {
    let mut out = Vec::new();
    let t = match &f.tmux {
        Ok(t) => Some(t),
        Err(problem) => {
            out.push(tmux_problem(problem, &f.server));
            None
        }
    };
    if let Some(t) = t {
        out.push(tmux_version(&t.version));
        out.push(server(t, &f.server));
        out.push(plugin(&t.options, f));
        out.push(status_format(&t.options));
        out.extend(status_length(&t.options));
        // A plugin without a binary leaves the window placeholders alone and starts no
        // watcher: one cause, said once (by the plugin's finding).
        let o = &t.options;
        let binary = o.plugin.is_empty() || !o.plugin_bin.is_empty() && !o.plugin_bin_gone;
        let follows = |x: &Finding| !binary && x.level == Level::Fix;
        out.extend(Some(window_format(o)).filter(|x| !follows(x)));
        out.extend(
            f.watcher
                .as_ref()
                .map(|w| watcher(w, t, f))
                .filter(|x| !follows(x)),
        );
        if f.panes.is_empty() {
            out.push(ok(
                Topic::Pane,
                "no pane on this server runs a coding agent now",
            ));
        }
        out.extend(f.panes.iter().map(|p| pane(p, f)));
        out.extend(super::notify::checks(&f.notify, &t.version));
    }
    for h in &f.hooks {
        out.extend(hooks(h, f));
    }
    out.extend(f.hook_files.iter().map(|h| hook_file(h, f)));
    out.extend(f.hosts.iter().map(host));
    out.push(state_dir(&f.state_dir, &f.home));
    out.extend(versions(f));
    out
}

/// A remote host: reachable with its agents, or why not and how to see it by hand.
fn host(v: &crate::remote::link::HostView) -> Finding {
    use crate::remote::link::Link;
    match &v.link {
        Link::Up { doc } => ok(
            Topic::Host,
            format!(
                "host {}: agentpane {} there, {} agent pane{}",
                v.host,
                doc.agentpane,
                doc.panes.len(),
                if doc.panes.len() == 1 { "" } else { "s" }
            ),
        ),
        Link::Connecting => note(
            Topic::Host,
            format!("host {}: the watcher is still connecting", v.host),
            None,
        ),
        Link::Down { reason } => fix(
            Topic::Host,
            format!("host {} is unreachable: {reason}", v.host),
            format!(
                "`ssh -o BatchMode=yes {} agentpane serve --once` must print one JSON line \
                 without a prompt: a key in your ssh agent, and this agentpane on the host's PATH",
                v.host
            ),
        ),
    }
}

fn ok(topic: Topic, text: impl Into<String>) -> Finding {
    Finding {
        topic,
        level: Level::Ok,
        text: text.into(),
        fix: None,
    }
}

fn note(topic: Topic, text: impl Into<String>, fix: Option<String>) -> Finding {
    Finding {
        topic,
        level: Level::Note,
        text: text.into(),
        fix,
    }
}

fn fix(topic: Topic, text: impl Into<String>, fix: impl Into<String>) -> Finding {
    Finding {
        topic,
        level: Level::Fix,
        text: text.into(),
        fix: Some(fix.into()),
    }
}

/// The tmux command line that reaches the server doctor looked at (as doctor was told).
fn tmux(f: &Facts) -> String {
    match &f.server {
        Server::Name(n) => format!("tmux -L {n}"),
        Server::Path(p) => format!("tmux -S {}", p.display()),
        Server::Inside | Server::Default => "tmux".into(),
    }
}

fn tmux_problem(problem: &TmuxProblem, server: &Server) -> Finding {
    match problem {
        TmuxProblem::Missing => fix(
            Topic::Tmux,
            "tmux is not installed (or not on PATH)",
            "install tmux 3.2 or later, e.g. `apt-get install tmux` or `brew install tmux`",
        ),
        TmuxProblem::NoServer(which) => {
            let how = match server {
                Server::Default => {
                    "outside tmux, doctor asks tmux's default server: start tmux, or name \
                     yours with `agentpane -L NAME doctor` / `-S PATH`"
                }
                _ => "start that server, or run doctor from inside tmux",
            };
            fix(
                Topic::Tmux,
                format!("no tmux server is running{which}"),
                how,
            )
        }
        TmuxProblem::Other(e) => fix(
            Topic::Tmux,
            format!("tmux did not answer: {e}"),
            "check that `tmux display-message -p '#{version}'` works in this shell",
        ),
    }
}

fn tmux_version(version: &str) -> Finding {
    let topic = Topic::Tmux;
    if !version_at_least(version, (3, 0)) {
        fix(
            topic,
            format!("tmux {version} has neither menus (3.0) nor popups (3.2)"),
            "upgrade tmux to 3.2 or later",
        )
    } else if !version_at_least(version, (3, 2)) {
        fix(
            topic,
            format!("tmux {version}: prefix + P and prefix + S open popups, which need tmux 3.2"),
            "upgrade tmux to 3.2 or later",
        )
    } else if !version_at_least(version, (3, 3)) {
        ok(
            topic,
            format!("tmux {version}: menus and popups work (popup titles need 3.3)"),
        )
    } else {
        ok(topic, format!("tmux {version}: menus and popups work"))
    }
}

fn server(t: &TmuxFacts, server: &Server) -> Finding {
    let chosen = match server {
        Server::Name(n) => format!("-L {n}"),
        Server::Path(_) => "-S".to_string(),
        Server::Inside => "$TMUX: the server this shell runs in".to_string(),
        Server::Default => "tmux's default server".to_string(),
    };
    ok(
        Topic::Server,
        format!("server {} (chosen by {chosen})", t.socket_path),
    )
}

/// How to load the plugin, for the fixes that need it.
const LOAD_PLUGIN: &str = "add `set -g @plugin 'agentpane/agentpane'` (TPM; then prefix + I) \
     or `run-shell /path/to/agentpane/agentpane.tmux` after the status lines in ~/.tmux.conf, \
     then `tmux source-file ~/.tmux.conf`";

fn plugin(o: &ServerOptions, f: &Facts) -> Finding {
    let topic = Topic::Plugin;
    if o.plugin.is_empty() {
        return fix(
            topic,
            "the agentpane plugin is not loaded on this server",
            LOAD_PLUGIN,
        );
    }
    let dir = tilde(&o.plugin, &f.home);
    if o.plugin_bin_gone {
        return fix(
            topic,
            format!(
                "the plugin's binary {} is gone (cargo clean, or a removed clone?)",
                tilde(&o.plugin_bin, &f.home)
            ),
            format!(
                "`{} run-shell {dir}/agentpane.tmux` (prefix + I with TPM) finds another or \
                 builds its checkout again",
                tmux(f)
            ),
        );
    }
    if !o.plugin_bin.is_empty() {
        return ok(
            topic,
            format!(
                "plugin loaded from {dir}, binary {}",
                tilde(&o.plugin_bin, &f.home)
            ),
        );
    }
    let log = tilde(&o.build_log, &f.home);
    match o.build.as_str() {
        "building" => note(
            topic,
            format!("the plugin is building agentpane in {dir} (log: {log})"),
            Some(
                "wait: the status line, the window glyphs and the watcher start when the \
                 build ends"
                    .into(),
            ),
        ),
        "failed" => fix(
            topic,
            format!("the plugin's build of {dir} failed (log: {log})"),
            format!(
                "read {log}, fix what it says, then press prefix + I (or `{} run-shell \
                 {dir}/agentpane.tmux`) to build again",
                tmux(f)
            ),
        ),
        _ => {
            let exe = f
                .exe
                .as_deref()
                .map_or("/path/to/agentpane".into(), |e| e.display().to_string());
            fix(
                topic,
                format!(
                    "the plugin ({dir}) found no agentpane binary on the tmux server's PATH \
                     and no cargo to build one, so the window glyphs and the watcher wait"
                ),
                format!(
                    "`{tmux} set -g @agentpane-bin {exe}` then `{tmux} run-shell \
                     {dir}/agentpane.tmux`; or install Rust (https://rustup.rs), give the \
                     server its PATH (`{tmux} set-environment -g PATH \"$PATH\"`) and press \
                     prefix + I to build the plugin's checkout",
                    tmux = tmux(f)
                ),
            )
        }
    }
}

/// One placeholder and the two options that may hold it.
struct FormatCheck<'a> {
    topic: Topic,
    placeholder: &'static str,
    options: [(&'static str, &'a str); 2],
    /// The value once the plugin rewrote it (or a hand-written `#(agentpane …)` call).
    rewritten: fn(&str) -> bool,
    /// What a rewritten option shows.
    shows: &'static str,
    /// The finding when neither option shows agentpane.
    absent: Finding,
}

const NOT_REWRITTEN: &str = "the plugin has not rewritten it: load the plugin after the status \
     lines in ~/.tmux.conf (the TPM `run` line or `run-shell …/agentpane.tmux` at the end), \
     then `tmux source-file ~/.tmux.conf`";

/// The raw placeholder (the plugin never ran after it was set), the rewritten segment, or
/// neither.
fn format_finding(c: FormatCheck) -> Finding {
    if let Some((name, _)) = c.options.iter().find(|(_, v)| v.contains(c.placeholder)) {
        let text = format!(
            "{name} still holds {}, which tmux shows as nothing",
            c.placeholder
        );
        return fix(c.topic, text, NOT_REWRITTEN);
    }
    match c.options.iter().find(|(_, v)| (c.rewritten)(v)) {
        Some((name, _)) => ok(c.topic, format!("{name} shows {}", c.shows)),
        None => c.absent,
    }
}

fn status_format(o: &ServerOptions) -> Finding {
    format_finding(FormatCheck {
        topic: Topic::StatusFormat,
        placeholder: STATUS_PLACEHOLDER,
        options: [
            ("status-right", &o.status_right),
            ("status-left", &o.status_left),
        ],
        rewritten: shows_segment,
        shows: "the agentpane segment",
        absent: fix(
            Topic::StatusFormat,
            "neither status-right nor status-left shows agentpane",
            "add `set -g status-right '#{agentpane_status} %H:%M'` above the plugin line in \
             ~/.tmux.conf, then `tmux source-file ~/.tmux.conf`",
        ),
    })
}

/// A status option that shows the segment: the plugin's, or a hand-written
/// `#(agentpane status)` call.
fn shows_segment(v: &str) -> bool {
    v.contains("#{@agentpane_status}") || v.contains("agentpane") && v.contains(" status")
}

/// The columns the segment should have at least: a few states and a host.
const SEGMENT_ROOM: usize = 20;

/// tmux cuts status-right at status-right-length (40 unless set) and status-left at
/// status-left-length, silently: a note when the side showing the segment leaves it less
/// than [`SEGMENT_ROOM`] columns (or less than it takes now).
fn status_length(o: &ServerOptions) -> Option<Finding> {
    let sides = [
        (
            "status-right",
            &o.status_right,
            o.status_right_length,
            o.status_right_width,
        ),
        (
            "status-left",
            &o.status_left,
            o.status_left_length,
            o.status_left_width,
        ),
    ];
    let (name, _, length, width) = sides.into_iter().find(|(_, v, _, _)| shows_segment(v))?;
    let rest = width.saturating_sub(o.segment_width);
    let room = length.saturating_sub(rest);
    if room >= SEGMENT_ROOM.max(o.segment_width) {
        return None;
    }
    let enough = (rest + SEGMENT_ROOM)
        .max(o.segment_width + rest)
        .div_ceil(10)
        * 10;
    Some(note(
        Topic::StatusFormat,
        format!(
            "{name}-length is {length}: the rest of {name} takes {rest} columns and leaves the \
             agentpane segment {room}; tmux cuts what does not fit"
        ),
        Some(format!(
            "add `set -g {name}-length {enough}` to ~/.tmux.conf, then `tmux source-file \
             ~/.tmux.conf`"
        )),
    ))
}

fn window_format(o: &ServerOptions) -> Finding {
    format_finding(FormatCheck {
        topic: Topic::WindowFormat,
        placeholder: WINDOW_PLACEHOLDER,
        options: [
            ("window-status-format", &o.window_status_format),
            (
                "window-status-current-format",
                &o.window_status_current_format,
            ),
        ],
        rewritten: |v| v.contains("@agentpane_window_status") || v.contains("pane-status --window"),
        shows: "each window's agent state",
        absent: note(
            Topic::WindowFormat,
            "the window formats show no agent state (optional)",
            Some(
                "add `setw -g window-status-format '#I:#W#{agentpane_window_status}'` (and the \
                 same for window-status-current-format) above the plugin line"
                    .into(),
            ),
        ),
    })
}

fn watcher(w: &WatcherFacts, t: &TmuxFacts, f: &Facts) -> Finding {
    let topic = Topic::Watcher;
    if t.options.watch == "off" {
        return ok(
            topic,
            "no watcher (@agentpane-watch off): the status line runs agentpane at each refresh",
        );
    }
    let lock = tilde(&w.lock.to_string_lossy(), &f.home);
    if let Some(pid) = w.pid {
        let since = w
            .since
            .map(|s| format!(", running for {}", age(f.now, s)))
            .unwrap_or_default();
        let change = w
            .last_change
            .map(|c| format!(", last change published {} ago", age(f.now, c)))
            .unwrap_or_default();
        return ok(
            topic,
            format!("watcher pid {pid} (lock {lock}){since}{change}"),
        );
    }
    let log = w
        .last_log
        .as_deref()
        .map(|l| format!("; the last line of watch.log: {l}"))
        .unwrap_or_default();
    let start = if t.options.plugin.is_empty() {
        format!(
            "load the plugin, which starts it ({LOAD_PLUGIN}); or run `agentpane -S {} watch` \
             in the background",
            t.socket_path
        )
    } else {
        format!(
            "`{} run-shell {}/agentpane.tmux` starts it again",
            tmux(f),
            tilde(&t.options.plugin, &f.home)
        )
    };
    fix(
        topic,
        format!("no watcher runs for this server (its lock {lock} is free){log}"),
        start,
    )
}

fn pane(p: &PaneFacts, f: &Facts) -> Finding {
    let topic = Topic::Pane;
    let version = p
        .version
        .as_deref()
        .map(|v| format!(" {v}"))
        .unwrap_or_default();
    let head = format!(
        "{} {} {}{version} pid {}",
        p.pane_id, p.target, p.kind, p.pid
    );
    let Some(root) = p.root.as_deref() else {
        return ok(
            topic,
            format!(
                "{head}: read from the screen only (agentpane reads no {} files)",
                p.kind
            ),
        );
    };
    let from = match &p.root_from {
        RootFrom::Override(var) => format!(" (${var})"),
        RootFrom::AgentHome => match &p.agent_home {
            Some(h) if h != &f.home => format!(" (its HOME {}, not yours)", h.display()),
            _ => String::new(),
        },
        RootFrom::Unreadable => " (a guess: its environment is unreadable)".to_string(),
        RootFrom::Default | RootFrom::NotRead => String::new(),
    };
    let root_text = format!("{}{from}", tilde(&root.to_string_lossy(), &f.home));
    let session = p
        .session_id
        .as_deref()
        .map(|s| format!(" → session {}", s.get(..8).unwrap_or(s)))
        .unwrap_or_default();
    if let Some(t) = &p.transcript {
        return ok(
            topic,
            format!(
                "{head}: {root_text}{session} → {} (via {})",
                tilde(&t.to_string_lossy(), &f.home),
                p.via.as_str()
            ),
        );
    }
    if p.session_id.is_some() && p.via != Via::Ambiguous {
        return ok(
            topic,
            format!("{head}: {root_text}{session} → no conversation yet"),
        );
    }
    let (cause, remedy) = cause(p, root, f);
    fix(
        topic,
        format!(
            "{head}: {root_text} → broke at: {}; likely cause: {cause}",
            p.last_step
        ),
        remedy,
    )
}

/// Why a chain that found the agent found no session, and what to do: the likeliest first.
fn cause(p: &PaneFacts, root: &Path, f: &Facts) -> (String, String) {
    let root = root.display();
    let resolve = format!(
        "`agentpane resolve {}` shows every step; if the agent has been used in this pane, \
         report it with that output",
        p.pane_id
    );
    if p.via == Via::Ambiguous {
        return (
            format!(
                "several {} sessions started together in this folder, and agentpane shows none \
                 rather than a neighbour's",
                p.kind
            ),
            "restart one of them, or run each in its own folder".into(),
        );
    }
    let unverified = p
        .version
        .as_deref()
        .filter(|v| !is_verified(&f.verified, p.kind, v));
    match &p.root_from {
        RootFrom::Unreadable => {
            return (
                format!(
                    "agentpane cannot read pid {}'s environment: it runs as another user, so \
                     its HOME and config folder are unknown",
                    p.pid
                ),
                "run the agent as yourself, or run agentpane as the agent's user".into(),
            )
        }
        RootFrom::Override(var) if !p.root_exists => {
            return (
                format!("the agent's ${var} (a config folder override) names {root}, which does not exist"),
                format!("check ${var} where the agent was started: it must be the folder the agent writes to"),
            )
        }
        RootFrom::AgentHome if !p.root_exists => {
            let home = p
                .agent_home
                .as_deref()
                .map_or("?".into(), |h| h.display().to_string());
            return (
                format!(
                    "the agent runs with another HOME ({home}; yours is {}) and {root} does \
                     not exist there — a container, a chroot or another machine's files?",
                    f.home.display()
                ),
                "start the agent with the HOME (or config folder) it really writes to".into(),
            );
        }
        _ => {}
    }
    if let Some(v) = unverified {
        let known = versions_of(&f.verified, p.kind).join(", ");
        return (
            format!(
                "{} {v} was never verified (verified: {known}); it may keep its sessions \
                 elsewhere",
                p.kind
            ),
            resolve,
        );
    }
    match &p.root_from {
        RootFrom::Override(var) => (
            format!(
                "the agent's ${var} ({root}) holds no session of pid {}",
                p.pid
            ),
            format!("check that ${var} is set the same for the agent and its files; {resolve}"),
        ),
        RootFrom::AgentHome if p.agent_home.as_deref() != Some(f.home.as_path()) => (
            format!(
                "the agent runs with another HOME, and {root} holds no session of pid {}",
                p.pid
            ),
            resolve,
        ),
        _ => (
            format!("{root} holds no session of pid {} yet", p.pid),
            resolve,
        ),
    }
}

fn hooks(h: &HookFacts, f: &Facts) -> Vec<Finding> {
    let topic = Topic::Hooks;
    let file = tilde(&h.settings.to_string_lossy(), &f.home);
    let install = if h.default {
        "agentpane hooks install".to_string()
    } else {
        format!(
            "agentpane hooks install --settings {}",
            h.settings.display()
        )
    };
    let users = h.panes.join(", ");
    let found = match &h.found {
        Ok(found) => found,
        Err(e) => {
            return vec![fix(
                topic,
                format!("cannot read {file}: {e}"),
                format!("make {file} valid JSON, then `{install}`"),
            )]
        }
    };
    let mut out = Vec::new();
    if found.events.is_empty() {
        let text = if users.is_empty() {
            format!("no agentpane hooks in {file}")
        } else {
            format!("no agentpane hooks in {file}, which Claude Code in {users} reads")
        };
        let why = format!(
            "`{install}`: Claude Code's hooks tell permission waits apart from long tool runs"
        );
        // Optional (installing agentpane never needs them): a note saying what they add.
        out.push(note(topic, text, Some(why)));
        return out;
    }
    if found.events.len() < EVENTS.len() {
        let missing: Vec<&str> = EVENTS
            .iter()
            .filter(|e| !found.events.contains(e))
            .copied()
            .collect();
        out.push(fix(
            topic,
            format!("{file} lacks agentpane's {} hooks", missing.join(", ")),
            format!("`{install}` adds them"),
        ));
    } else if !h.command_exists {
        out.push(fix(
            topic,
            format!(
                "the hooks in {file} run `{}`, which does not exist",
                found.command.as_deref().unwrap_or("?")
            ),
            format!("`{install}` points them at this binary"),
        ));
    } else {
        out.push(ok(
            topic,
            format!(
                "hooks installed in {file} ({} events{})",
                found.events.len(),
                if users.is_empty() {
                    String::new()
                } else {
                    format!("; Claude Code in {users} reads it")
                }
            ),
        ));
    }
    for (pane, theirs) in &h.elsewhere {
        out.push(fix(
            topic,
            format!(
                "hook events of Claude Code in {pane} go to {} (its environment), but the \
                 watcher reads {}",
                theirs.display(),
                f.state_dir.path.display()
            ),
            format!(
                "start that agent with AGENTPANE_STATE_DIR={} (or with your HOME)",
                f.state_dir.path.display()
            ),
        ));
    }
    out
}

/// An agent's hook file (an extension it loads): without it, its panes' sessions can only be
/// guessed.
fn hook_file(h: &HookFileFacts, f: &Facts) -> Finding {
    let topic = Topic::Hooks;
    let file = tilde(&h.path.to_string_lossy(), &f.home);
    let agent = h.agent;
    let install = format!("agentpane hooks install --agent {agent}");
    if !h.installed {
        return fix(
            topic,
            format!(
                "{agent} in {} runs without agentpane's {agent} extension ({file}): nothing else \
                 ties its session log to its pane",
                h.panes.join(", ")
            ),
            format!("`{install}`, then restart {agent} there"),
        );
    }
    if h.unlinked.is_empty() {
        return ok(topic, format!("agentpane's {agent} extension: {file}"));
    }
    note(
        topic,
        format!(
            "{agent} in {} started before agentpane's {agent} extension ({file}) was installed",
            h.unlinked.join(", ")
        ),
        Some(format!(
            "restart {agent} there to tie its session to its pane"
        )),
    )
}

fn state_dir(s: &StateDirFacts, home: &Path) -> Finding {
    let topic = Topic::StateDir;
    let path = tilde(&s.path.to_string_lossy(), home);
    if !s.exists {
        return note(
            topic,
            format!("state folder {path} does not exist yet (the first scan creates it)"),
            None,
        );
    }
    if s.symlink {
        return fix(
            topic,
            format!("state folder {path} is a symlink, which agentpane refuses"),
            format!("replace it by a real folder: `rm {path} && mkdir -m 700 {path}`"),
        );
    }
    if !s.is_dir {
        return fix(
            topic,
            format!("state folder {path} is not a folder"),
            "move it away; agentpane creates the folder (mode 0700)",
        );
    }
    if !s.ours {
        return fix(
            topic,
            format!("state folder {path} belongs to another user: agentpane refuses it"),
            format!("`chown -R \"$USER\" {path}`, or set AGENTPANE_STATE_DIR to a folder of yours"),
        );
    }
    if s.mode & 0o022 != 0 {
        return fix(
            topic,
            format!(
                "state folder {path} is writable by others (mode {:04o}): agentpane refuses it",
                s.mode
            ),
            format!("`chmod 700 {path}`"),
        );
    }
    if let Some((inside, why)) = s.untrusted.first() {
        let inside = tilde(&inside.to_string_lossy(), home);
        let more = match s.untrusted.len() {
            1 => String::new(),
            n => format!(" (and {} more)", n - 1),
        };
        return fix(
            topic,
            format!("{inside} {}: agentpane refuses it{more}", why.problem()),
            why.fix(Path::new(&inside)),
        );
    }
    if s.mode & 0o077 != 0 {
        return fix(
            topic,
            format!(
                "state folder {path} is open to others (mode {:04o}); it holds routed text",
                s.mode
            ),
            format!("`chmod 700 {path}`"),
        );
    }
    ok(topic, format!("state folder {path} (mode 0700, yours)"))
}

/// The agent versions seen, each against the verified ones.
fn versions(f: &Facts) -> Vec<Finding> {
    let topic = Topic::Versions;
    let mut seen: Vec<(AgentKind, Option<&str>)> = Vec::new();
    for p in f.panes.iter().filter(|p| p.root_from != RootFrom::NotRead) {
        let v = (p.kind, p.version.as_deref());
        if !seen.contains(&v) {
            seen.push(v);
        }
    }
    seen.into_iter()
        .map(|(kind, version)| {
            let known = versions_of(&f.verified, kind).join(", ");
            match version {
                Some(v) if is_verified(&f.verified, kind, v) => {
                    ok(topic, format!("{kind} {v}: verified in CI"))
                }
                Some(v) => note(
                    topic,
                    format!("{kind} {v}: not verified (verified: {known})"),
                    Some(
                        "usually fine; if its panes read wrong, `agentpane resolve PANE` shows \
                         where, and a report with it helps"
                            .into(),
                    ),
                ),
                None => note(
                    topic,
                    format!("{kind}: version unknown (verified: {known})"),
                    None,
                ),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests;
