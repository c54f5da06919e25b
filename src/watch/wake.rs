//! What wakes the watch loop: file events (inotify through `notify`), signals, a remote host's
//! news, nothing else. The loop sleeps in `recv_timeout` until one of these or its next
//! deadline (safety poll, a pending alert), so an idle watcher burns no CPU. A signal is taken
//! before anything queued ahead of it ([`recv`]), and the hosts' news is one wake however
//! much of it comes ([`RemoteWakes`]), so the channel never grows with what a host sends.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use notify::event::ModifyKind;
use notify::{EventKind, RecommendedWatcher, RecursiveMode, Watcher as _};
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM, SIGUSR1};
use signal_hook::iterator::Signals;

use super::log;
use crate::scan::{PaneReport, Scanner};

/// The name of the file the `hook` command touches to wake the watcher.
pub const NUDGE: &str = "nudge";

/// One reason to wake up.
#[derive(Debug)]
pub enum Wake {
    /// Something changed in a watched folder.
    Files(Vec<PathBuf>),
    /// SIGTERM, SIGINT or SIGHUP.
    Signal(i32),
    /// SIGUSR1: log what the loop has done so far.
    Report,
    /// A remote host's view changed (a new document, a link up or down).
    Remote,
}

/// The SIGTERM, SIGINT or SIGHUP that came, if one did: noted before its wake is queued.
#[derive(Debug, Clone, Default)]
pub struct Signalled(Arc<AtomicI32>);

impl Signalled {
    pub fn get(&self) -> Option<i32> {
        Some(self.0.load(Ordering::Acquire)).filter(|s| *s != 0)
    }

    fn set(&self, sig: i32) {
        self.0.store(sig, Ordering::Release);
    }
}

/// Forwards SIGTERM/SIGINT/SIGHUP into the loop's channel; the returned flag tells [`recv`]
/// at once, ahead of the wakes queued before it.
pub fn forward_signals(tx: Sender<Wake>) -> anyhow::Result<Signalled> {
    let mut signals = Signals::new([SIGTERM, SIGINT, SIGHUP])?;
    let signalled = Signalled::default();
    let flag = signalled.clone();
    std::thread::spawn(move || {
        if let Some(sig) = signals.forever().next() {
            flag.set(sig);
            let _ = tx.send(Wake::Signal(sig));
        }
    });
    Ok(signalled)
}

/// The next wake within `timeout`, a signal first: once one came, it is the answer whatever
/// else waits in the channel.
pub fn recv(
    rx: &Receiver<Wake>,
    timeout: Duration,
    signalled: &Signalled,
) -> Result<Wake, RecvTimeoutError> {
    if let Some(sig) = signalled.get() {
        return Ok(Wake::Signal(sig));
    }
    let wake = rx.recv_timeout(timeout)?;
    Ok(signalled.get().map_or(wake, Wake::Signal))
}

/// How the remote links wake the loop: at most one [`Wake::Remote`] waits in the channel,
/// however fast the hosts talk. The loop calls [`RemoteWakes::taken`] before it reads the
/// hosts' views, so news that comes after that read wakes it again.
pub struct RemoteWakes {
    pending: AtomicBool,
    tx: Mutex<Sender<Wake>>,
}

impl RemoteWakes {
    pub fn new(tx: Sender<Wake>) -> Arc<RemoteWakes> {
        Arc::new(RemoteWakes {
            pending: AtomicBool::new(false),
            tx: Mutex::new(tx),
        })
    }

    /// A host's view changed: queue a wake unless one already waits.
    pub fn ring(&self) {
        if !self.pending.swap(true, Ordering::AcqRel) {
            let _ = self
                .tx
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .send(Wake::Remote);
        }
    }

    /// The loop took the wake: the next change queues another.
    pub fn taken(&self) {
        self.pending.store(false, Ordering::Release);
    }
}

/// Forwards SIGUSR1 into the loop's channel as a request to log its counters.
pub fn forward_report_requests(tx: Sender<Wake>) -> anyhow::Result<()> {
    let mut signals = Signals::new([SIGUSR1])?;
    std::thread::spawn(move || {
        for _ in signals.forever() {
            if tx.send(Wake::Report).is_err() {
                break;
            }
        }
    });
    Ok(())
}

/// Is this file event news? Only a change someone made: a write (`IN_MODIFY`), a file
/// created, moved or deleted, or a lost event queue. Opening, reading and closing are not,
/// not even a close after opening for writing: every write already showed as a modify, and
/// SQLite's read-only connection opens opencode's `-wal` and `-shm` read-write and closes
/// them without writing. Nor is a change of attributes (SQLite running as root `fchown`s
/// those files at every open; a `touch` writes nothing). So reading an agent's store never
/// wakes the reader. Files no agent writes news to ([`crate::agents::never_news`]) never
/// are; in the state folder only the nudge file is; in the socket's folder
/// (`/tmp/tmux-UID`, shared by every tmux server of the user, test servers included) only
/// our own server's socket is.
pub fn relevant(kind: &EventKind, paths: &[PathBuf], state_dir: &Path, socket: &Path) -> bool {
    if !is_change(kind) {
        return false;
    }
    paths.iter().any(|p| {
        if crate::agents::never_news(p) {
            false
        } else if p.parent() == Some(state_dir) {
            p.file_name().is_some_and(|n| n == NUDGE)
        } else if p.parent() == socket.parent() {
            p == socket
        } else {
            true
        }
    })
}

/// True for an event that changed a file: a write, a create, a move or a delete (or a lost
/// queue); an open, a read, a close or an attribute change is none, so reading a file never
/// wakes whoever watches it.
pub fn is_change(kind: &EventKind) -> bool {
    match kind {
        EventKind::Access(_) | EventKind::Modify(ModifyKind::Metadata(_)) => false,
        EventKind::Create(_)
        | EventKind::Remove(_)
        | EventKind::Modify(_)
        | EventKind::Any
        | EventKind::Other => true,
    }
}

/// Tells `scanner` what a burst of file events means. The nudge (a tmux hook: focus or panes
/// changed; an agent's hook) asks for the panes and a fresh resolution; the rest of the state
/// folder (queued routes, relays, channel mail) and the tmux socket are read by the caller
/// after its scan and change nothing a scan reads; anything else is for
/// [`Scanner::note`]: a known transcript's file marks that transcript, any other file a
/// fresh resolution.
pub fn note(scanner: &mut Scanner, paths: &[PathBuf], state_dir: &Path, socket: &Path) {
    for p in paths {
        if p.parent() == Some(state_dir) && p.file_name().is_some_and(|n| n == NUDGE) {
            scanner.invalidate();
            scanner.list_panes();
        } else if p != socket && !p.starts_with(state_dir) {
            scanner.note(p);
        }
    }
}

/// The files of the transcripts `reports` found since the scan before (`before`; none at
/// the first, which reads everything anyway) that lie in `added`, folders just watched: what
/// was written to them between the scan that read them and the watch sent no event (Cline CLI
/// writes its first turn's session into a new folder and ends the turn within a second).
pub fn unwatched_writes(
    reports: &[PaneReport],
    before: &[PaneReport],
    added: &[PathBuf],
) -> Vec<PathBuf> {
    if before.is_empty() {
        return Vec::new();
    }
    let known: Vec<&Path> = before
        .iter()
        .filter_map(|r| r.resolved.transcript.as_deref())
        .collect();
    reports
        .iter()
        .filter_map(|r| r.resolved.transcript.as_deref())
        .filter(|t| !known.contains(t))
        .flat_map(crate::agents::sources)
        .filter(|f| f.parent().is_some_and(|d| added.iter().any(|a| a == d)))
        .collect()
}

/// The folders worth watching for these reports: each transcript's folder (for an opencode
/// session, its database's), the folders where each agent's new sessions show up
/// ([`crate::agents::folders`]; the watcher's own default Claude root's `sessions/` too, so a
/// new agent is noticed at once), the state folder (nudges) and the folder of the tmux
/// socket.
pub fn folders(reports: &[PaneReport], state_dir: &Path, socket_path: &Path) -> BTreeSet<PathBuf> {
    wanted_folders(reports, state_dir, socket_path).0
}

/// [`folders`], and the folders an agent's next session or log will appear in that do not
/// exist yet: nothing inside a folder that is not watched can wake the caller, so it looks
/// whether one of them has appeared at its safety polls, and works the folders out again
/// when one has (not at every poll: an agent that is not installed never makes its
/// folder).
pub fn wanted_folders(
    reports: &[PaneReport],
    state_dir: &Path,
    socket_path: &Path,
) -> (BTreeSet<PathBuf>, Vec<PathBuf>) {
    let mut out = BTreeSet::new();
    out.insert(state_dir.to_path_buf());
    // A route queued for a busy pane: worth a look at once (its target may be free by now).
    out.insert(state_dir.join("queue"));
    // A relay registered for the watcher to run.
    out.insert(state_dir.join("relays"));
    // Plan windows an agent's status line reported (`agentpane statusline`).
    out.insert(crate::limits::dir(state_dir));
    // Channel mail: new channels and new messages (unread counts, delivery, escalations).
    let channels = state_dir.join("channels");
    if let Ok(entries) = std::fs::read_dir(&channels) {
        out.extend(entries.flatten().map(|e| e.path().join("messages")));
    }
    out.insert(channels);
    if let Some(dir) = socket_path.parent() {
        out.insert(dir.to_path_buf());
    }
    // What agents write to: where a new session announces itself before any pane of it is
    // resolved, and each agent's folders.
    let mut agents: BTreeSet<PathBuf> = crate::agents::announced_in(&crate::paths::home_dir())
        .into_iter()
        .collect();
    for r in reports {
        if let Some(t) = r.resolved.transcript.as_deref() {
            let files = crate::agents::sources(t);
            agents.extend(
                files
                    .iter()
                    .filter_map(|f| f.parent())
                    .map(Path::to_path_buf),
            );
        }
        if let Some(a) = r.resolved.agent.as_ref() {
            agents.extend(crate::agents::folders(
                a.kind,
                a.root.as_deref(),
                &r.resolved.pane.cwd,
            ));
        }
    }
    let missing = agents.iter().filter(|d| !d.is_dir()).cloned().collect();
    out.extend(agents);
    out.retain(|d| d.is_dir());
    (out, missing)
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
    /// Watches `wanted` and nothing else; the folders it had not watched before.
    pub fn update(&mut self, wanted: BTreeSet<PathBuf>) -> Vec<PathBuf> {
        let added: Vec<PathBuf> = wanted.difference(&self.watched).cloned().collect();
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
        added
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
    fn a_signal_comes_before_the_wakes_queued_ahead_of_it() {
        let (tx, rx) = std::sync::mpsc::channel();
        for _ in 0..10_000 {
            tx.send(Wake::Remote).unwrap();
        }
        let signalled = Signalled::default();
        let wait = Duration::from_millis(10);
        assert!(matches!(recv(&rx, wait, &signalled), Ok(Wake::Remote)));
        signalled.set(SIGTERM);
        tx.send(Wake::Signal(SIGTERM)).unwrap();
        assert!(matches!(
            recv(&rx, wait, &signalled),
            Ok(Wake::Signal(SIGTERM))
        ));
    }

    #[test]
    fn however_fast_hosts_talk_one_remote_wake_waits() {
        let (tx, rx) = std::sync::mpsc::channel();
        let wakes = RemoteWakes::new(tx);
        for _ in 0..10_000 {
            wakes.ring();
        }
        assert_eq!(rx.try_iter().count(), 1);
        wakes.ring();
        assert_eq!(rx.try_iter().count(), 0, "still not taken");
        wakes.taken();
        wakes.ring();
        wakes.ring();
        assert_eq!(rx.try_iter().count(), 1);
    }

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
    fn reading_opencode_s_database_is_not_news_writing_it_is() {
        use notify::event::{AccessMode, CreateKind, DataChange, MetadataKind, RemoveKind};
        let state = Path::new("/s");
        let sock = Path::new("/tmp/tmux-0/work");
        let data = Path::new("/h/.local/share/opencode");
        let (db, wal, shm) = (
            data.join("opencode.db"),
            data.join("opencode.db-wal"),
            data.join("opencode.db-shm"),
        );
        // What one read-only open, read and close did (inotifywait, as root): opened,
        // `fchown`ed, read and closed all three, "after writing" the -wal and -shm.
        let read = [
            EventKind::Access(AccessKind::Open(AccessMode::Any)),
            EventKind::Access(AccessKind::Read),
            EventKind::Access(AccessKind::Close(AccessMode::Write)),
            EventKind::Access(AccessKind::Close(AccessMode::Read)),
            EventKind::Modify(ModifyKind::Metadata(MetadataKind::Any)),
        ];
        for kind in &read {
            for f in [&db, &wal, &shm] {
                assert!(
                    !relevant(kind, std::slice::from_ref(f), state, sock),
                    "{kind:?} {f:?}"
                );
            }
        }
        // A commit: opencode writes the -wal (and, through SQLite's index, the -shm).
        let write = EventKind::Modify(ModifyKind::Data(DataChange::Any));
        assert!(relevant(&write, std::slice::from_ref(&wal), state, sock));
        assert!(
            relevant(&write, std::slice::from_ref(&db), state, sock),
            "a checkpoint"
        );
        assert!(!relevant(&write, std::slice::from_ref(&shm), state, sock));
        for kind in [
            EventKind::Create(CreateKind::File),
            EventKind::Remove(RemoveKind::File),
        ] {
            assert!(
                relevant(&kind, std::slice::from_ref(&wal), state, sock),
                "{kind:?}"
            );
            assert!(
                !relevant(&kind, std::slice::from_ref(&shm), state, sock),
                "{kind:?}"
            );
        }
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
        let mut r = crate::scan::testkit::report(1, 1, crate::state::State::Working, 0);
        std::sync::Arc::make_mut(&mut r.resolved).transcript = Some(tdir.join("x.jsonl"));
        let f = folders(&[r], &state, &dir.path().join("sock"));
        assert!(f.contains(&state) && f.contains(&tdir) && f.contains(dir.path()));
    }

    #[test]
    fn files_written_into_a_folder_before_it_was_watched_are_read_again() {
        // A Cline session's folder is new with its first turn: its record and conversation,
        // written on after the scan that found them, are read again once the folder is
        // watched; files in folders watched all along are not.
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("state");
        let sessions = dir.path().join("data/sessions");
        let session = sessions.join("1_aaaaa");
        std::fs::create_dir_all(&state).unwrap();
        std::fs::create_dir_all(&session).unwrap();
        let messages = session.join("1_aaaaa.messages.json");
        let mut r = crate::scan::testkit::report(1, 1, crate::state::State::Working, 0);
        std::sync::Arc::make_mut(&mut r.resolved).transcript = Some(messages.clone());
        let (tx, _rx) = std::sync::mpsc::channel();
        let mut fs = FsWatch::start(tx, state.clone(), dir.path().join("sock")).unwrap();
        let before = [state.clone(), sessions.clone()].into_iter().collect();
        assert_eq!(fs.update(before), vec![sessions.clone(), state.clone()]);
        let before = [crate::scan::testkit::report(
            1,
            1,
            crate::state::State::Idle,
            0,
        )];
        let reports = [r];
        let added = fs.update(folders(&reports, &state, &dir.path().join("sock")));
        assert!(added.contains(&session), "{added:?}");
        let again = unwatched_writes(&reports, &before, &added);
        assert_eq!(again, vec![messages, session.join("1_aaaaa.json")]);
        // Not a transcript found before, nor at the first scan.
        assert!(unwatched_writes(&reports, &reports, &added).is_empty());
        assert!(unwatched_writes(&reports, &[], &added).is_empty());
        let added = fs.update(folders(&reports, &state, &dir.path().join("sock")));
        assert!(
            unwatched_writes(&reports, &before, &added).is_empty(),
            "{added:?}"
        );
    }

    /// An idle pane of `kind` (its root `root`) that has no log yet.
    fn without_a_log(kind: crate::events::AgentKind, root: &Path) -> PaneReport {
        let mut r = crate::scan::testkit::report(1, 1, crate::state::State::Idle, 0);
        let resolved = std::sync::Arc::make_mut(&mut r.resolved);
        resolved.transcript = None;
        resolved.agent = Some(crate::resolve::AgentProcess {
            kind,
            pid: 1,
            started: 0,
            root: Some(root.to_path_buf()),
            command: String::new(),
        });
        r
    }

    #[test]
    fn an_opencode_pane_without_a_session_yet_watches_the_database_folder() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data/opencode");
        std::fs::create_dir_all(&data).unwrap();
        let r = without_a_log(crate::events::AgentKind::Opencode, &data);
        let f = folders(&[r], dir.path(), &dir.path().join("sock"));
        assert!(f.contains(&data), "{f:?}");
    }

    #[test]
    fn a_folder_an_agent_has_not_made_yet_is_named_as_missing_until_it_exists() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("copilot-home");
        let reports = [without_a_log(crate::events::AgentKind::Copilot, &root)];
        let sock = dir.path().join("sock");
        let (watched, missing) = wanted_folders(&reports, dir.path(), &sock);
        let sessions =
            crate::agents::folders(crate::events::AgentKind::Copilot, Some(&root), "/").remove(0);
        assert!(missing.contains(&sessions), "{missing:?}");
        assert!(!watched.contains(&sessions));
        std::fs::create_dir_all(&sessions).unwrap();
        let (watched, missing) = wanted_folders(&reports, dir.path(), &sock);
        assert!(watched.contains(&sessions) && !missing.contains(&sessions));
    }
}
