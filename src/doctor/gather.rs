//! The edges of `doctor`: everything it reads — one tmux call for the server's version and
//! options, one `list-panes` and one process snapshot for the panes, `/proc/locks` for the
//! watcher, the state folder and Claude Code's settings files. Nothing here decides anything.

use std::collections::BTreeMap;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::agents::claude::settings;
/// What Claude Code's settings hold of agentpane's hooks, for the checks.
pub(super) use crate::agents::claude::settings::{Installed, EVENTS};
use crate::events::{AgentKind, Time};
use crate::paths;
use crate::proctree::procfs;
use crate::resolve::{self, Resolved};
use crate::tmux::{Socket, Tmux, TmuxError};

use super::{
    verified, Facts, HookFacts, HookFileFacts, PaneFacts, RootFrom, Server, ServerOptions,
    StateDirFacts, TmuxFacts, TmuxProblem, WatcherFacts,
};

/// The fields of the one `display-message -p` doctor sends, in [`TmuxFacts`] order.
const SERVER_FORMAT: [&str; 16] = [
    "#{version}",
    "#{socket_path}",
    "#{status-left}",
    "#{status-right}",
    "#{window-status-format}",
    "#{window-status-current-format}",
    "#{@agentpane_plugin}",
    "#{@agentpane_bin}",
    "#{@agentpane_build}",
    "#{@agentpane_build_log}",
    "#{@agentpane-watch}",
    "#{status-left-length}",
    "#{status-right-length}",
    "#{T:status-left}",
    "#{T:status-right}",
    "#{@agentpane_status}",
];

/// Looks at the server `socket` selects, its panes and this user's agentpane files.
pub fn gather(socket: &Socket, now: Time) -> Facts {
    let home = paths::home_dir();
    let state = paths::state_dir();
    let tmux = Tmux::new(socket.clone());
    let server_facts = server(&tmux);
    let (watcher, panes) = match &server_facts {
        Ok(t) => (
            Some(watcher(&state, &t.socket_path)),
            resolve_panes(&tmux, now, &home),
        ),
        Err(_) => (None, Vec::new()),
    };
    Facts {
        now,
        hooks: hooks(&panes, &state),
        hook_files: hook_files(&panes, &home),
        server: match socket {
            Socket::Name(n) => Server::Name(n.clone()),
            Socket::Path(p) => Server::Path(p.clone()),
            Socket::Default if std::env::var_os("TMUX").is_some_and(|t| !t.is_empty()) => {
                Server::Inside
            }
            Socket::Default => Server::Default,
        },
        tmux: server_facts,
        watcher,
        panes,
        state_dir: state_dir(&state),
        verified: verified::verified(),
        hosts: Vec::new(),
        notify: super::notify::NotifyFacts {
            config: crate::notify::Config::read(&tmux, None).ok(),
            notifier: crate::notify::desktop::notifier().is_some(),
        },
        exe: std::env::current_exe().ok(),
        home,
    }
}

fn server(tmux: &Tmux) -> Result<TmuxFacts, TmuxProblem> {
    let out = tmux
        .format(None, &SERVER_FORMAT.join("\u{1f}"))
        .map_err(|e| match e {
            TmuxError::Missing => TmuxProblem::Missing,
            TmuxError::NoServer(which) => TmuxProblem::NoServer(which),
            other => TmuxProblem::Other(other.to_string()),
        })?;
    let mut f = out.split('\u{1f}').map(str::to_string);
    let mut next = || f.next().unwrap_or_default();
    let mut facts = TmuxFacts {
        version: next(),
        socket_path: next(),
        options: ServerOptions {
            status_left: next(),
            status_right: next(),
            window_status_format: next(),
            window_status_current_format: next(),
            plugin: next(),
            plugin_bin: next(),
            build: next(),
            build_log: next(),
            watch: next(),
            status_left_length: next().parse().unwrap_or(0),
            status_right_length: next().parse().unwrap_or(0),
            status_left_width: shown_width(&next()),
            status_right_width: shown_width(&next()),
            segment_width: shown_width(&next()),
            plugin_bin_gone: false,
        },
    };
    let bin = &facts.options.plugin_bin;
    facts.options.plugin_bin_gone = !bin.is_empty() && !Path::new(bin).is_file();
    Ok(facts)
}

fn watcher(state: &Path, socket_path: &str) -> WatcherFacts {
    let lock = crate::watch::lock::lock_path(state, socket_path);
    let pid = paths::lock_holder(&lock);
    let since = pid
        .and_then(procfs::start_ms)
        .and_then(|ms| chrono::DateTime::from_timestamp_millis(ms as i64));
    // This server's own snapshot and log: another server's say nothing about this one.
    let server = paths::server_dir(state, socket_path);
    let snapshot: Option<serde_json::Value> =
        std::fs::read(crate::watch::snapshot::Snapshot::path(&server))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok());
    let last_change = snapshot
        .filter(|s| s["socket_path"] == socket_path)
        .and_then(|s| s["written_at"].as_str()?.parse::<Time>().ok());
    let last_log = pid
        .is_none()
        .then(|| last_line_of(&server.join(crate::watch::log::FILE), socket_path));
    WatcherFacts {
        lock,
        pid,
        since,
        last_change,
        last_log: last_log.flatten(),
    }
}

/// The columns a status-line text takes: its `#[…]` styles take none.
fn shown_width(text: &str) -> usize {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("#[") {
        out.push_str(&rest[..at]);
        rest = rest[at..].find(']').map_or("", |end| &rest[at + end + 1..]);
    }
    out.push_str(rest);
    unicode_width::UnicodeWidthStr::width(out.as_str())
}

/// The last line of the watch log at `path` written by a watcher of the server at
/// `socket_path`, read from its last 2 MiB: the log may hold other servers' watchers too.
fn last_line_of(path: &Path, socket_path: &str) -> Option<String> {
    use std::io::{Read, Seek, SeekFrom};
    let mut f = std::fs::File::open(path).ok()?;
    let len = f.metadata().ok()?.len();
    f.seek(SeekFrom::Start(len.saturating_sub(2 << 20))).ok()?;
    let mut tail = Vec::new();
    f.read_to_end(&mut tail).ok()?;
    last_line_of_server(&String::from_utf8_lossy(&tail), socket_path)
}

/// The last line of `log` by a watcher process (`watch[PID]`) that said it watches the
/// server at `socket_path` (`watching tmux server SOCKET`).
fn last_line_of_server(log: &str, socket_path: &str) -> Option<String> {
    let ours = format!("watching tmux server {socket_path} (");
    let mut watchers: Vec<&str> = Vec::new();
    let mut last = None;
    for line in log.lines() {
        let Some(who) = line
            .split_once(" agentpane watch[")
            .and_then(|(_, rest)| rest.split_once("]:"))
            .map(|(pid, _)| pid)
        else {
            continue;
        };
        if line.contains(" watching tmux server ") {
            // A pid used again by another server's watcher is no longer this server's.
            watchers.retain(|w| *w != who);
            if line.contains(&ours) {
                watchers.push(who);
            }
        }
        if watchers.contains(&who) {
            last = Some(line);
        }
    }
    last.map(str::to_string)
}

fn resolve_panes(tmux: &Tmux, now: Time, home: &Path) -> Vec<PaneFacts> {
    let Ok(all) = crate::scan::resolve_all(tmux, now) else {
        return Vec::new();
    };
    all.iter().filter_map(|r| pane(r, home)).collect::<Vec<_>>()
}

fn pane(r: &Resolved, home: &Path) -> Option<PaneFacts> {
    let agent = r.agent.as_ref()?;
    let env = procfs::environ(agent.pid);
    let root_from = match resolve::config_root(agent.kind, agent.pid, home) {
        None => RootFrom::NotRead,
        Some(_) if env.is_none() => RootFrom::Unreadable,
        // opencode's locator says the same words for its data folder.
        Some((_, crate::agents::locate::FROM_AGENT_HOME)) => RootFrom::AgentHome,
        Some((_, from)) if from.starts_with("default") => RootFrom::Default,
        Some((_, var)) => RootFrom::Override(var.to_string()),
    };
    let last_step = match r.steps.as_slice() {
        [.., before, last] if last.starts_with("transcript:") => before.clone(),
        [.., last] => last.clone(),
        [] => String::new(),
    };
    Some(PaneFacts {
        pane_id: r.pane.pane_id.clone(),
        target: r.pane.target(),
        kind: agent.kind,
        pid: agent.pid,
        version: version(agent.kind, agent.pid, r),
        root_exists: agent.root.as_deref().is_some_and(Path::is_dir),
        root: agent.root.clone(),
        root_from,
        agent_home: env
            .as_ref()
            .and_then(|e| e.get("HOME"))
            .filter(|h| !h.is_empty())
            .map(PathBuf::from),
        agent_state_dir: env
            .as_ref()
            .and_then(|e| paths::state_dir_in(|k| e.get(k).map(PathBuf::from))),
        session_id: r.session_id.clone(),
        transcript: r.transcript.clone(),
        via: r.via,
        last_step,
    })
}

/// The agent's version: what its live session record says (Claude Code), else its install.
fn version(kind: AgentKind, pid: u32, r: &Resolved) -> Option<String> {
    if let Some(v) = r.record.as_ref().and_then(|rec| rec.version.clone()) {
        return Some(v);
    }
    let mut paths: Vec<PathBuf> = std::fs::read_link(format!("/proc/{pid}/exe"))
        .into_iter()
        .collect();
    let cwd = procfs::cwd(pid).unwrap_or_default();
    // A runner's script (`node …/bin/codex.js`): the arguments that are files.
    paths.extend(
        procfs::cmdline(pid)
            .unwrap_or_default()
            .iter()
            .skip(1)
            .filter(|a| !a.starts_with('-'))
            .map(|a| cwd.join(a))
            .filter(|p| p.is_file()),
    );
    verified::from_install(kind, &paths)
}

/// The Claude Code config roots in use (or this user's default one), and agentpane's hooks
/// in each.
fn hooks(panes: &[PaneFacts], state: &Path) -> Vec<HookFacts> {
    let default = settings::default_settings_path();
    let mut by_file: BTreeMap<PathBuf, Vec<&PaneFacts>> = BTreeMap::new();
    for p in panes.iter().filter(|p| p.kind == AgentKind::Claude) {
        if let Some(root) = &p.root {
            by_file
                .entry(root.join("settings.json"))
                .or_default()
                .push(p);
        }
    }
    if by_file.is_empty() {
        by_file.insert(default.clone(), Vec::new());
    }
    by_file
        .into_iter()
        .map(|(file, users)| {
            let found = settings::installed_file(&file).map_err(|e| format!("{e:#}"));
            let command_exists = found
                .as_ref()
                .ok()
                .and_then(|i| i.command.as_deref())
                .and_then(settings::hook_program)
                .is_some_and(|p| program_exists(&p));
            HookFacts {
                default: file == default,
                found,
                command_exists,
                panes: users.iter().map(|p| p.pane_id.clone()).collect(),
                elsewhere: users
                    .iter()
                    .filter_map(|p| {
                        let theirs = p.agent_state_dir.as_ref()?;
                        (theirs != state).then(|| (p.pane_id.clone(), theirs.clone()))
                    })
                    .collect(),
                settings: file,
            }
        })
        .collect()
}

/// The hook file each running agent that takes one would load (from its own `HOME` and
/// environment), whether it is there, and which of its panes it tied to their session.
fn hook_files(panes: &[PaneFacts], home: &Path) -> Vec<HookFileFacts> {
    let mut by_file: BTreeMap<PathBuf, HookFileFacts> = BTreeMap::new();
    for p in panes {
        let env = procfs::environ(p.pid).unwrap_or_default();
        let their_home = p.agent_home.as_deref().unwrap_or(home);
        let Some(file) =
            crate::agents::of(p.kind).hook_file(their_home, &|k| env.get(k).map(str::to_string))
        else {
            continue;
        };
        let facts = by_file
            .entry(file.path.clone())
            .or_insert_with(|| HookFileFacts {
                agent: p.kind,
                installed: file.path.is_file(),
                path: file.path,
                panes: Vec::new(),
                unlinked: Vec::new(),
            });
        facts.panes.push(p.pane_id.clone());
        // Its record names the session (the log may not exist yet): a session id either way.
        let linked = p.via == resolve::Via::SessionRecord
            || (p.via == resolve::Via::None && p.session_id.is_some());
        if !linked {
            facts.unlinked.push(p.pane_id.clone());
        }
    }
    by_file.into_values().collect()
}

/// A program path that exists, or a bare name found on `PATH`.
fn program_exists(program: &str) -> bool {
    if program.contains('/') {
        return Path::new(program).is_file();
    }
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(program).is_file()))
}

fn state_dir(path: &Path) -> StateDirFacts {
    let meta = std::fs::symlink_metadata(path).ok();
    StateDirFacts {
        path: path.to_path_buf(),
        exists: meta.is_some(),
        symlink: meta.as_ref().is_some_and(|m| m.file_type().is_symlink()),
        is_dir: meta.as_ref().is_some_and(|m| m.is_dir()),
        mode: meta.as_ref().map_or(0, |m| m.permissions().mode() & 0o7777),
        ours: meta.as_ref().is_some_and(|m| m.uid() == paths::euid()),
        untrusted: if meta.as_ref().is_some_and(|m| m.is_dir()) {
            untrusted_inside(path)
        } else {
            Vec::new()
        },
    }
}

/// The first few folders and files under the state folder `root` that agentpane refuses to
/// act on ([`paths::Distrust`]); symlinks are not followed.
fn untrusted_inside(root: &Path) -> Vec<(PathBuf, paths::Distrust)> {
    const SHOWN: usize = 3;
    const LOOKED_AT: usize = 10_000;
    let me = paths::euid();
    let mut found = Vec::new();
    let mut todo = vec![root.to_path_buf()];
    let mut seen = 0;
    while let Some(dir) = todo.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            seen += 1;
            let Ok(meta) = entry.metadata() else { continue };
            // Only folders and files hold what agentpane acts on (ssh's control sockets and
            // symlinks, which agentpane refuses itself, are left out).
            if !meta.is_dir() && !meta.is_file() {
                continue;
            }
            if let Some(why) = paths::Distrust::of(meta.uid(), meta.mode(), me) {
                found.push((entry.path(), why));
            }
            if meta.is_dir() {
                todo.push(entry.path());
            }
            if found.len() >= SHOWN || seen >= LOOKED_AT {
                return found;
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: &str = "\
2026-01-01T00:00:00.000Z agentpane watch[10]: watching tmux server /tmp/tmux-1/default (lock l)
2026-01-01T00:00:01.000Z agentpane watch[20]: watching tmux server /tmp/tmux-1/work (lock m)
2026-01-01T00:00:02.000Z agentpane watch[10]: stopped: Signal(15)
2026-01-01T00:00:03.000Z agentpane watch[20]: scan failed: tmux: boom

2026-01-01T00:00:04.000Z agentpane watch[20]: stopped: ServerGone
";

    #[test]
    fn the_last_watch_log_line_quoted_is_this_servers() {
        assert_eq!(
            last_line_of_server(LOG, "/tmp/tmux-1/default").as_deref(),
            Some("2026-01-01T00:00:02.000Z agentpane watch[10]: stopped: Signal(15)")
        );
        assert!(last_line_of_server(LOG, "/tmp/tmux-1/work")
            .unwrap()
            .ends_with("stopped: ServerGone"));
        assert_eq!(last_line_of_server(LOG, "/tmp/tmux-1/other"), None);
        // The pid, used again by another server's watcher, is no longer this server's.
        let again = format!(
            "{LOG}2026-01-01T00:00:05.000Z agentpane watch[10]: watching tmux server /x (lock n)\n\
             2026-01-01T00:00:06.000Z agentpane watch[10]: stopped: Deadline\n"
        );
        assert!(last_line_of_server(&again, "/tmp/tmux-1/default")
            .unwrap()
            .ends_with("stopped: Signal(15)"));
    }

    #[test]
    fn status_line_styles_take_no_columns() {
        assert_eq!(shown_width("#[fg=red]●1#[default] ✋2 %H"), 9);
        assert_eq!(shown_width("ab#[unclosed"), 2);
    }
}
