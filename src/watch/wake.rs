//! What wakes the watch loop: file events (inotify through `notify`), signals, nothing else.
//! The loop sleeps in `recv_timeout` until one of these or its next deadline (safety poll,
//! a pending alert), so an idle watcher burns no CPU.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::mpsc::Sender;

use notify::{EventKind, RecommendedWatcher, RecursiveMode, Watcher as _};
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

use super::log;
use crate::scan::PaneReport;

/// The name of the file the `hook` command touches to wake the watcher.
pub const NUDGE: &str = "nudge";

/// One reason to wake up.
#[derive(Debug)]
pub enum Wake {
    /// Something changed in a watched folder.
    Files(Vec<PathBuf>),
    /// SIGTERM, SIGINT or SIGHUP.
    Signal(i32),
}

/// Forwards SIGTERM/SIGINT/SIGHUP into the loop's channel.
pub fn forward_signals(tx: Sender<Wake>) -> anyhow::Result<()> {
    let mut signals = Signals::new([SIGTERM, SIGINT, SIGHUP])?;
    std::thread::spawn(move || {
        if let Some(sig) = signals.forever().next() {
            let _ = tx.send(Wake::Signal(sig));
        }
    });
    Ok(())
}

/// Is this file event news? Reads (our own included) are not; in the state folder only the
/// nudge file is; in the socket's folder (`/tmp/tmux-UID`, shared by every tmux server of
/// the user, test servers included) only our own server's socket is.
pub fn relevant(kind: &EventKind, paths: &[PathBuf], state_dir: &Path, socket: &Path) -> bool {
    if matches!(kind, EventKind::Access(_)) {
        return false;
    }
    paths.iter().any(|p| {
        if p.parent() == Some(state_dir) {
            p.file_name().is_some_and(|n| n == NUDGE)
        } else if p.parent() == socket.parent() {
            p == socket
        } else {
            true
        }
    })
}

/// The folders worth watching for these reports: each transcript's folder, each Claude
/// root's `sessions/` (live session records; the watcher's own default root too, so a new
/// agent is noticed at once), the state folder (nudges) and the folder of the tmux socket.
pub fn folders(reports: &[PaneReport], state_dir: &Path, socket_path: &Path) -> BTreeSet<PathBuf> {
    let mut out = BTreeSet::new();
    out.insert(state_dir.to_path_buf());
    // A route queued for a busy pane: worth a look at once (its target may be free by now).
    out.insert(state_dir.join("queue"));
    // A relay registered for the watcher to run.
    out.insert(state_dir.join("relays"));
    // Channel mail: new channels and new messages (unread counts, delivery, escalations).
    let channels = state_dir.join("channels");
    if let Ok(entries) = std::fs::read_dir(&channels) {
        out.extend(entries.flatten().map(|e| e.path().join("messages")));
    }
    out.insert(channels);
    if let Some(dir) = socket_path.parent() {
        out.insert(dir.to_path_buf());
    }
    // A new Claude Code session announces itself in `sessions/` before any transcript.
    let own_root = std::env::var_os("CLAUDE_CONFIG_DIR")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| crate::paths::home_dir().join(".claude"));
    out.insert(own_root.join("sessions"));
    for r in reports {
        if let Some(dir) = r.resolved.transcript.as_deref().and_then(Path::parent) {
            out.insert(dir.to_path_buf());
        }
        if let Some(agent) = r.resolved.agent.as_ref() {
            if let Some(root) = agent.root.as_deref() {
                out.insert(root.join("sessions"));
                // opencode's database folder: its first prompt creates the session there.
                if agent.kind == crate::events::AgentKind::Opencode {
                    out.insert(root.to_path_buf());
                }
            }
        }
        // Gemini CLI has no session records: its first log appears in the project's `chats/`.
        if let Some(a) = r.resolved.agent.as_ref() {
            if a.kind == crate::events::AgentKind::Gemini {
                let cwd = &r.resolved.pane.cwd;
                if let Some(p) = a
                    .root
                    .as_deref()
                    .and_then(|root| crate::agents::gemini::locate::project_dir(root, cwd))
                {
                    out.insert(p.join("chats"));
                }
            }
        }
    }
    out.retain(|d| d.is_dir());
    out
}

/// The inotify side: keeps the set of watched folders in step with the reports.
pub struct FsWatch {
    watcher: RecommendedWatcher,
    watched: BTreeSet<PathBuf>,
}

impl FsWatch {
    /// Starts the watcher thread, forwarding events [`relevant`] for the tmux server at
    /// `socket`.
    pub fn start(tx: Sender<Wake>, state_dir: PathBuf, socket: PathBuf) -> anyhow::Result<FsWatch> {
        let watcher =
            notify::recommended_watcher(move |res: notify::Result<notify::Event>| match res {
                Ok(ev) if relevant(&ev.kind, &ev.paths, &state_dir, &socket) => {
                    let _ = tx.send(Wake::Files(ev.paths));
                }
                Ok(_) => {}
                Err(e) => log::line(&format!("file watch error: {e}")),
            })?;
        Ok(FsWatch {
            watcher,
            watched: BTreeSet::new(),
        })
    }

    /// Watches exactly `wanted` (non-recursively). A folder that cannot be watched is logged
    /// and left to the safety poll.
    pub fn update(&mut self, wanted: BTreeSet<PathBuf>) {
        for gone in self.watched.difference(&wanted) {
            let _ = self.watcher.unwatch(gone);
        }
        let mut now_watched = BTreeSet::new();
        for dir in wanted {
            if self.watched.contains(&dir) {
                now_watched.insert(dir);
                continue;
            }
            match self.watcher.watch(&dir, RecursiveMode::NonRecursive) {
                Ok(()) => {
                    now_watched.insert(dir);
                }
                Err(e) => log::line(&format!("cannot watch {}: {e}", dir.display())),
            }
        }
        self.watched = now_watched;
    }

    /// Folders watched now.
    pub fn watched(&self) -> &BTreeSet<PathBuf> {
        &self.watched
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use notify::event::{AccessKind, ModifyKind};

    #[test]
    fn reads_and_own_state_files_are_not_news() {
        let state = Path::new("/s");
        let sock = Path::new("/tmp/tmux-0/work");
        let modify = EventKind::Modify(ModifyKind::Any);
        assert!(!relevant(
            &EventKind::Access(AccessKind::Any),
            &["/t/a.jsonl".into()],
            state,
            sock
        ));
        assert!(!relevant(&modify, &["/s/state.json".into()], state, sock));
        assert!(!relevant(
            &modify,
            &["/s/.alerts.json.1.tmp".into()],
            state,
            sock
        ));
        assert!(relevant(&modify, &["/s/nudge".into()], state, sock));
        assert!(relevant(&modify, &["/t/a.jsonl".into()], state, sock));
    }

    #[test]
    fn only_our_own_socket_is_news_in_the_socket_folder() {
        let state = Path::new("/s");
        let sock = Path::new("/tmp/tmux-0/work");
        let remove = EventKind::Remove(notify::event::RemoveKind::Any);
        assert!(relevant(&remove, &[sock.into()], state, sock));
        for other in ["/tmp/tmux-0/test-123", "/tmp/tmux-0/test-123.lock"] {
            assert!(!relevant(&remove, &[other.into()], state, sock), "{other}");
        }
    }

    #[test]
    fn folders_cover_state_socket_and_transcripts() {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("state");
        let tdir = dir.path().join("proj");
        std::fs::create_dir_all(&state).unwrap();
        std::fs::create_dir_all(&tdir).unwrap();
        let mut r = crate::segment::testkit::report(1, 1, crate::state::State::Working, 0);
        r.resolved.transcript = Some(tdir.join("x.jsonl"));
        let f = folders(&[r], &state, &dir.path().join("sock"));
        assert!(f.contains(&state) && f.contains(&tdir) && f.contains(dir.path()));
    }

    #[test]
    fn an_opencode_pane_without_a_session_yet_watches_the_database_folder() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data/opencode");
        std::fs::create_dir_all(&data).unwrap();
        let mut r = crate::segment::testkit::report(1, 1, crate::state::State::Idle, 0);
        r.resolved.transcript = None;
        r.resolved.agent = Some(crate::resolve::AgentProcess {
            kind: crate::events::AgentKind::Opencode,
            pid: 1,
            started: 0,
            root: Some(data.clone()),
            command: String::new(),
        });
        let f = folders(&[r], dir.path(), &dir.path().join("sock"));
        assert!(f.contains(&data), "{f:?}");
    }
}
