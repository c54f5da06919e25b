//! Sleeping until the panes may have changed, for `route --wait` and a foreground `relay`:
//! woken by file events in the folders the watcher watches (transcripts, session records, the
//! tmux socket's folder; see `crate::watch::wake`), a slow safety re-check, a deadline or a
//! signal. Never a timer that rescans the server several times a second: that cost a few
//! percent of a core for as long as the wait lasted (see BENCHMARKS.md, "Waiting commands").

use std::path::PathBuf;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use anyhow::Result;
use chrono::Utc;

use crate::scan::{PaneReport, Scanner};
use crate::tmux::{Tmux, TmuxError};
use crate::watch::wake::{self, FsWatch, Wake};

/// Re-check this often even without a file event: an agent that exits or a screen-only state
/// (a pane without a transcript) leaves no file behind. The watcher's default poll.
pub const SAFETY_POLL: Duration = Duration::from_secs(5);
/// Coalesce a burst of file events (an append is often several writes) into one scan.
const DEBOUNCE: Duration = Duration::from_millis(25);

/// Why [`PaneWait::sleep`] returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Woke {
    /// A watched file changed.
    News,
    /// The limit or the safety re-check passed.
    Quiet,
    /// SIGINT, SIGTERM or SIGHUP (only when started with `signals`).
    Signal,
}

/// The file watch and the resolutions kept between scans.
pub struct PaneWait {
    rx: Receiver<Wake>,
    /// Keeps the channel open when neither the file watch nor the signals hold a sender.
    _tx: Sender<Wake>,
    fs: Option<FsWatch>,
    resolutions: Scanner,
    state_dir: PathBuf,
    socket_path: PathBuf,
    /// When the safety re-check asks tmux again, however many file events came meanwhile.
    next_poll: Instant,
}

impl PaneWait {
    /// Starts watching for the tmux server at `socket_path`; with `signals`, SIGINT, SIGTERM
    /// and SIGHUP end a sleep instead of the process. Without a file watch (inotify refused)
    /// it still works, on the safety re-check alone.
    pub fn start(socket_path: &str, signals: bool) -> Result<PaneWait> {
        let (tx, rx) = mpsc::channel();
        if signals {
            wake::forward_signals(tx.clone())?;
        }
        let state_dir = crate::paths::state_dir();
        let socket_path = PathBuf::from(socket_path);
        let fs = match FsWatch::start(tx.clone(), state_dir.clone(), socket_path.clone()) {
            Ok(fs) => Some(fs),
            Err(e) => {
                eprintln!("agentpane: no file watch ({e}); re-checking every {SAFETY_POLL:?}");
                None
            }
        };
        Ok(PaneWait {
            rx,
            _tx: tx,
            fs,
            resolutions: Scanner::default(),
            state_dir,
            socket_path,
            next_poll: Instant::now() + SAFETY_POLL,
        })
    }

    /// Watches the folders that matter for `reports`.
    pub fn watch(&mut self, reports: &[PaneReport]) {
        if let Some(fs) = &mut self.fs {
            fs.update(wake::folders(reports, &self.state_dir, &self.socket_path));
        }
    }

    /// Scans the server, doing only what changed calls for (as the watcher does), and
    /// watches what the new reports point at.
    pub fn scan(&mut self, tmux: &Tmux) -> Result<Vec<PaneReport>, TmuxError> {
        if Instant::now() >= self.next_poll {
            self.resolutions.poll();
        }
        let reports = self.resolutions.scan(tmux, Utc::now())?;
        if self.resolutions.last_scan_polled() {
            self.next_poll = Instant::now() + SAFETY_POLL;
        }
        if self.resolutions.last_scan_listed() {
            self.watch(&reports);
        }
        Ok(reports)
    }

    /// Sleeps until a watched file changes, a signal, `limit` or the safety re-check.
    pub fn sleep(&mut self, limit: Duration) -> Woke {
        let poll_in = self.next_poll.saturating_duration_since(Instant::now());
        let deadline = Instant::now() + limit.min(poll_in);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            return match self.rx.recv_timeout(left) {
                Ok(Wake::Signal(_)) => Woke::Signal,
                Ok(Wake::Report | Wake::Remote) => continue,
                Ok(Wake::Files(paths)) => {
                    self.note(&paths);
                    self.settle()
                }
                Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => Woke::Quiet,
            };
        }
    }

    /// Drains the rest of a burst.
    fn settle(&mut self) -> Woke {
        let until = Instant::now() + DEBOUNCE;
        loop {
            let left = until.saturating_duration_since(Instant::now());
            match self.rx.recv_timeout(left) {
                Ok(Wake::Signal(_)) => return Woke::Signal,
                Ok(Wake::Report | Wake::Remote) => {}
                Ok(Wake::Files(paths)) => self.note(&paths),
                Err(_) => return Woke::News,
            }
        }
    }

    /// What the file events mean for the next scan ([`wake::note`]).
    fn note(&mut self, paths: &[PathBuf]) {
        wake::note(
            &mut self.resolutions,
            paths,
            &self.state_dir,
            &self.socket_path,
        );
    }
}
