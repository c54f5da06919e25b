//! What every request and event stream of one web server reads: the latest snapshot and the
//! secret, with a version that streams wait on. One follower thread keeps it current from the
//! watcher's `state.json` (a file event, not a poll of tmux), however many pages are open.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Condvar, Mutex};
use std::time::Duration;

use notify::{RecursiveMode, Watcher as _};

use super::view::Snap;

/// Event streams open at once at most; a new one closes the oldest.
pub const MAX_STREAMS: usize = 16;
/// Read the files again this often even without a file event (a watcher that restarted).
const SAFETY: Duration = Duration::from_secs(30);

/// The shared state.
pub struct Feed {
    inner: Mutex<Inner>,
    changed: Condvar,
    streams: Mutex<VecDeque<Arc<AtomicBool>>>,
}

struct Inner {
    version: u64,
    snap: Arc<Snap>,
    /// The raw snapshot last published, to skip a rewrite that changed nothing.
    raw: Vec<u8>,
    secret: Arc<String>,
    /// Whether the watcher's snapshot was found (else the page says no watcher runs).
    watched: bool,
}

impl Feed {
    pub fn new(secret: String) -> Arc<Feed> {
        Arc::new(Feed {
            inner: Mutex::new(Inner {
                version: 0,
                snap: Arc::new(Snap::default()),
                raw: Vec::new(),
                secret: Arc::new(secret),
                watched: false,
            }),
            changed: Condvar::new(),
            streams: Mutex::new(VecDeque::new()),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The latest snapshot, its version, and whether a watcher wrote it.
    pub fn snap(&self) -> (u64, Arc<Snap>, bool) {
        let i = self.lock();
        (i.version, i.snap.clone(), i.watched)
    }

    pub fn secret(&self) -> Arc<String> {
        self.lock().secret.clone()
    }

    /// Publishes the snapshot file's bytes `raw` (`None`: no snapshot); wakes the streams
    /// when it changed.
    pub fn publish(&self, raw: Option<Vec<u8>>, socket: &str) {
        let parsed = raw.as_deref().and_then(|r| {
            serde_json::from_slice::<Snap>(r)
                .ok()
                .filter(|s| s.socket_path == socket && alive(s.pid))
        });
        let mut i = self.lock();
        let watched = parsed.is_some();
        let raw = raw.filter(|_| watched).unwrap_or_default();
        if raw == i.raw && watched == i.watched {
            return;
        }
        i.snap = Arc::new(parsed.unwrap_or_default());
        i.raw = raw;
        i.watched = watched;
        i.version += 1;
        drop(i);
        self.changed.notify_all();
    }

    /// Replaces the secret (the file changed); open streams end at their next wake.
    pub fn set_secret(&self, secret: String) {
        let mut i = self.lock();
        if *i.secret == secret {
            return;
        }
        i.secret = Arc::new(secret);
        i.version += 1;
        drop(i);
        self.changed.notify_all();
    }

    /// Waits until the version passes `seen` or `timeout` passes; the version then.
    pub fn wait(&self, seen: u64, timeout: Duration) -> u64 {
        let i = self.lock();
        let (i, _) = self
            .changed
            .wait_timeout_while(i, timeout, |i| i.version == seen)
            .unwrap_or_else(|e| e.into_inner());
        i.version
    }

    /// Registers a new event stream: its flag, set when it must end (the oldest of more than
    /// [`MAX_STREAMS`]).
    pub fn open_stream(&self) -> Arc<AtomicBool> {
        let flag = Arc::new(AtomicBool::new(false));
        let mut s = self.streams.lock().unwrap_or_else(|e| e.into_inner());
        s.retain(|f| !f.load(Ordering::Relaxed) && Arc::strong_count(f) > 1);
        while s.len() >= MAX_STREAMS {
            if let Some(old) = s.pop_front() {
                old.store(true, Ordering::Relaxed);
            }
        }
        s.push_back(flag.clone());
        drop(s);
        // Wake the one told to end.
        self.lock().version += 1;
        self.changed.notify_all();
        flag
    }
}

/// Keeps `feed` current for the tmux server at `socket`: its snapshot in `state_dir`'s
/// server folder and the secret in `state_dir/web`, read at every file event there (and
/// every [`SAFETY`]). Runs on a thread of its own until the process ends.
pub fn follow(feed: Arc<Feed>, state_dir: &Path, socket: &str) -> anyhow::Result<()> {
    let server = crate::paths::server_dir(state_dir, socket);
    let web = super::secret::path(state_dir)
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| state_dir.to_path_buf());
    crate::paths::ensure_private_dir(&server)?;
    crate::paths::ensure_private_dir(&web)?;
    let snapshot: PathBuf = server.join(SNAPSHOT);
    let (tx, rx) = mpsc::channel::<()>();
    let mut watcher = notify::recommended_watcher(move |res: notify::Result<notify::Event>| {
        if res.is_ok_and(|ev| {
            matches!(
                ev.kind,
                notify::EventKind::Create(_)
                    | notify::EventKind::Modify(_)
                    | notify::EventKind::Remove(_)
            ) && ev.paths.iter().any(|p| {
                p.file_name()
                    .is_some_and(|n| n == SNAPSHOT || n == "secret")
            })
        }) {
            let _ = tx.send(());
        }
    })?;
    watcher.watch(&server, RecursiveMode::NonRecursive)?;
    watcher.watch(&web, RecursiveMode::NonRecursive)?;
    let state_dir = state_dir.to_path_buf();
    let socket = socket.to_string();
    std::thread::Builder::new()
        .name("web-follow".into())
        .spawn(move || {
            let _keep = watcher;
            loop {
                feed.publish(crate::paths::read_trusted(&snapshot).ok(), &socket);
                if let Some(s) = super::secret::read(&state_dir) {
                    feed.set_secret(s);
                }
                match rx.recv_timeout(SAFETY) {
                    Err(mpsc::RecvTimeoutError::Disconnected) => return,
                    _ => {
                        // A burst of events is one change.
                        std::thread::sleep(Duration::from_millis(20));
                        while rx.try_recv().is_ok() {}
                    }
                }
            }
        })?;
    Ok(())
}

/// The snapshot's file name (as the watcher writes it).
const SNAPSHOT: &str = "state.json";

/// Whether process `pid` lives (a watcher that died leaves its last snapshot behind).
pub fn alive(pid: u32) -> bool {
    let Ok(pid) = i32::try_from(pid) else {
        return false;
    };
    // SAFETY: signal 0 only asks whether the process exists.
    pid > 0
        && (unsafe { libc::kill(pid, 0) } == 0
            || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(socket: &str, pid: u32) -> Vec<u8> {
        serde_json::json!({"pid": pid, "socket_path": socket, "panes": []})
            .to_string()
            .into_bytes()
    }

    #[test]
    fn only_a_live_watchers_snapshot_of_this_server_counts_and_a_change_wakes_waiters() {
        let feed = Feed::new("s".into());
        let me = std::process::id();
        feed.publish(Some(raw("/tmp/other", me)), "/tmp/mine");
        assert!(!feed.snap().2, "another server's snapshot");
        feed.publish(Some(raw("/tmp/mine", u32::MAX - 1)), "/tmp/mine");
        assert!(!feed.snap().2, "a dead watcher's snapshot");
        let (v0, _, _) = feed.snap();
        let waiter = {
            let feed = feed.clone();
            std::thread::spawn(move || feed.wait(v0, Duration::from_secs(10)))
        };
        feed.publish(Some(raw("/tmp/mine", me)), "/tmp/mine");
        assert!(feed.snap().2);
        assert!(waiter.join().unwrap() > v0, "woken by the change");
        let (v1, _, _) = feed.snap();
        feed.publish(Some(raw("/tmp/mine", me)), "/tmp/mine");
        assert_eq!(feed.snap().0, v1, "the same bytes are no change");
        feed.set_secret("t".into());
        assert!(feed.snap().0 > v1, "a new secret wakes the streams");
        assert_eq!(*feed.secret(), "t");
    }

    #[test]
    fn a_stream_past_the_limit_ends_the_oldest() {
        let feed = Feed::new("s".into());
        let first = feed.open_stream();
        let rest: Vec<_> = (0..MAX_STREAMS).map(|_| feed.open_stream()).collect();
        assert!(first.load(Ordering::Relaxed));
        assert!(rest.iter().all(|f| !f.load(Ordering::Relaxed)));
    }
}
