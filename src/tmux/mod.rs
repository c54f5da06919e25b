//! The tmux seam: every tmux call goes through [`Tmux`], which runs commands on one selected
//! server through a swappable [`Runner`] with a timeout. Tests use a private `-L` server or a
//! fake runner; nothing here ever touches a server it was not pointed at.

mod buffers;
mod clients;
mod options;
mod panes;

pub use buffers::{escape_format, PaneNow, MAX_CAPTURE_LINES};
pub use clients::ClientNow;
pub use options::{OptionChange, Scope};
pub use panes::{Pane, PANE_FORMAT};

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::Duration;

use crate::exec::{self, ExecError};

/// Which tmux server to talk to, with tmux's own meaning of `-L` and `-S`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Socket {
    /// `$TMUX` when inside tmux, else tmux's default server.
    #[default]
    Default,
    /// `-L NAME`.
    Name(String),
    /// `-S PATH`.
    Path(PathBuf),
}

impl Socket {
    /// The global flags that select this server (the same for tmux and agentpane).
    pub fn args(&self) -> Vec<String> {
        match self {
            Socket::Default => Vec::new(),
            Socket::Name(n) => vec!["-L".into(), n.clone()],
            Socket::Path(p) => vec!["-S".into(), p.to_string_lossy().into_owned()],
        }
    }
}

/// Why a tmux call failed.
#[derive(Debug, thiserror::Error)]
pub enum TmuxError {
    #[error("tmux is not installed (install it, e.g. `apt-get install tmux`)")]
    Missing,
    #[error("no tmux server is running{0}")]
    NoServer(String),
    #[error("tmux: {0}")]
    Command(String),
    #[error(transparent)]
    Exec(ExecError),
}

/// Runs one tmux command line (without the program name) and returns its stdout.
pub trait Runner: Send + Sync {
    fn run(&self, args: &[String], stdin: Option<&[u8]>) -> Result<Vec<u8>, TmuxError>;
}

/// The real runner: spawns `tmux` with the socket flags and a timeout.
#[derive(Debug, Clone)]
pub struct ProcessRunner {
    pub socket: Socket,
    pub timeout: Duration,
}

impl Runner for ProcessRunner {
    fn run(&self, args: &[String], stdin: Option<&[u8]>) -> Result<Vec<u8>, TmuxError> {
        // `-u`: without a UTF-8 locale (cron, systemd, `env -i`) tmux rewrites control
        // characters in its output — our `list-panes` field separator among them — and
        // mangles non-ASCII names.
        let mut all = vec!["-u".to_string()];
        all.extend(self.socket.args());
        all.extend(args.iter().cloned());
        match exec::run("tmux", &all, stdin, self.timeout) {
            Ok(out) => Ok(out.stdout),
            Err(ExecError::NotFound { .. }) => Err(TmuxError::Missing),
            Err(ExecError::Failed { stderr, .. }) => Err(classify_failure(&self.socket, stderr)),
            Err(e) => Err(TmuxError::Exec(e)),
        }
    }
}

/// A combined listing's panes and the socket path of its last line (only the last: a pane's
/// title is the server's to print, and may look like anything).
fn split_socket(out: &str) -> (&str, Option<&str>) {
    let body = out.strip_suffix('\n').unwrap_or(out);
    let (head, last) = match body.rfind('\n') {
        Some(i) => (&body[..=i], &body[i + 1..]),
        None => ("", body),
    };
    match last.strip_prefix(SOCKET_MARK) {
        Some(socket) if !socket.is_empty() => (head, Some(socket)),
        _ => (out, None),
    }
}

/// The captures in `out`, each ended by its pane's line of `marks`.
fn split_captures(out: &str, ids: &[&str], marks: &[String]) -> HashMap<String, String> {
    let mut found = HashMap::new();
    let mut screen = String::new();
    let mut next = ids.iter().zip(marks);
    let mut expected = next.next();
    for line in out.split_inclusive('\n') {
        match expected {
            Some((id, mark)) if line.trim_end_matches('\n') == mark => {
                found.insert(id.to_string(), std::mem::take(&mut screen));
                expected = next.next();
            }
            _ => screen.push_str(line),
        }
    }
    found
}

fn classify_failure(socket: &Socket, stderr: String) -> TmuxError {
    let lower = stderr.to_ascii_lowercase();
    if lower.contains("no server running")
        || lower.contains("server exited")
        || lower.contains("error connecting to")
        || lower.contains("no such file or directory") && lower.contains("connect")
    {
        let which = match socket {
            Socket::Default => String::new(),
            Socket::Name(n) => format!(" on socket name `{n}`"),
            Socket::Path(p) => format!(" at `{}`", p.display()),
        };
        TmuxError::NoServer(which)
    } else {
        TmuxError::Command(stderr)
    }
}

/// A handle on one tmux server.
pub struct Tmux {
    runner: Box<dyn Runner>,
    /// The server's socket path once a call told it: it names the server for as long as
    /// this handle lives (the path follows from how the server was chosen).
    socket: OnceLock<String>,
}

/// What the socket-path line of a combined `list-panes` call begins with.
const SOCKET_MARK: &str = "agentpane-socket:";

impl Tmux {
    /// The real server selected by `socket`, with a 2 s timeout per call.
    pub fn new(socket: Socket) -> Tmux {
        Tmux::with_runner(Box::new(ProcessRunner {
            socket,
            timeout: Duration::from_secs(2),
        }))
    }

    /// Any runner (tests pass a fake).
    pub fn with_runner(runner: Box<dyn Runner>) -> Tmux {
        Tmux {
            runner,
            socket: OnceLock::new(),
        }
    }

    /// Runs a raw tmux command and returns stdout as (lossy) text.
    pub fn cmd(&self, args: &[&str]) -> Result<String, TmuxError> {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        let out = self.runner.run(&args, None)?;
        Ok(String::from_utf8_lossy(&out).into_owned())
    }

    /// Runs a raw tmux command feeding `stdin`.
    pub fn cmd_stdin(&self, args: &[&str], stdin: &[u8]) -> Result<String, TmuxError> {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        let out = self.runner.run(&args, Some(stdin))?;
        Ok(String::from_utf8_lossy(&out).into_owned())
    }

    /// Every pane on the server: one `list-panes -a` call, which also asks the server's
    /// socket path the first time (most callers want it next, and a tmux call costs a
    /// process).
    pub fn list_panes(&self) -> Result<Vec<Pane>, TmuxError> {
        let mut args = vec!["list-panes", "-a", "-F", PANE_FORMAT];
        let ask = self.socket.get().is_none();
        let mark = format!("{SOCKET_MARK}#{{socket_path}}");
        if ask {
            args.extend([";", "display-message", "-p", &mark]);
        }
        let out = self.cmd(&args)?;
        let (listing, socket) = if ask {
            split_socket(&out)
        } else {
            (out.as_str(), None)
        };
        if let Some(socket) = socket {
            let _ = self.socket.set(socket.to_string());
        }
        Ok(panes::parse_list(listing))
    }

    /// The visible part of each pane (`capture-pane -p -J`), all in one tmux call: each
    /// capture is followed by a line only this call prints, which tells where it ends. A pane
    /// that vanished is missing from the answer (tmux stops a command sequence at the first
    /// failure, so then the rest are captured one by one).
    pub fn capture_panes(&self, ids: &[&str]) -> HashMap<String, String> {
        static CALLS: AtomicU64 = AtomicU64::new(0);
        if ids.is_empty() {
            return HashMap::new();
        }
        let nonce = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let mark = format!(
            "agentpane-capture-{}-{}-{nonce}",
            std::process::id(),
            CALLS.fetch_add(1, Ordering::Relaxed)
        );
        // Numbered, not named by pane: `display-message` runs its text through strftime, and
        // `%3` is no pane id there.
        let marks: Vec<String> = (0..ids.len()).map(|i| format!("{mark}-{i}")).collect();
        let mut args: Vec<&str> = Vec::new();
        for (id, m) in ids.iter().zip(&marks) {
            if !args.is_empty() {
                args.push(";");
            }
            args.extend([
                "capture-pane",
                "-p",
                "-J",
                "-t",
                id,
                ";",
                "display-message",
                "-p",
                m,
            ]);
        }
        match self.cmd(&args) {
            Ok(out) => split_captures(&out, ids, &marks),
            Err(_) => ids
                .iter()
                .filter_map(|id| {
                    let screen = self.cmd(&["capture-pane", "-p", "-J", "-t", id]).ok()?;
                    Some((id.to_string(), screen))
                })
                .collect(),
        }
    }
}

/// Compares a tmux `#{version}` (`3.3a`, `3.2`, `next-3.6`) with `(major, minor)`; a version
/// it cannot read (a distribution's own naming) counts as new.
pub fn version_at_least(version: &str, want: (u32, u32)) -> bool {
    let v = version.trim_start_matches("next-");
    let mut parts = v.split('.');
    let number = |s: Option<&str>| -> Option<u32> {
        let digits: String = s?.chars().take_while(char::is_ascii_digit).collect();
        digits.parse().ok()
    };
    match (number(parts.next()), number(parts.next())) {
        (Some(major), Some(minor)) => (major, minor) >= want,
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn captures_split_at_their_marks_only() {
        let marks = ["m-1-0".to_string(), "m-1-1".to_string()];
        // The first screen ends in blank lines and holds a line that merely looks like a
        // mark of another call; the second is empty.
        let out = "one\nm-0-0\n\n\nm-1-0\nm-1-1\n";
        let got = split_captures(out, &["%1", "%2"], &marks);
        assert_eq!(got["%1"], "one\nm-0-0\n\n\n");
        assert_eq!(got["%2"], "");
        let cut = split_captures("one\nm-1-0\ntwo\n", &["%1", "%2"], &marks);
        assert_eq!(cut.len(), 1, "a capture without its mark is missing");
    }

    #[test]
    fn the_socket_path_is_only_the_last_lines() {
        let pane = "%1\u{1f}42\u{1f}title agentpane-socket:/tmp/evil";
        let out = format!("{pane}\n%2\u{1f}43\u{1f}x\n{SOCKET_MARK}/tmp/tmux-0/default\n");
        let (listing, socket) = split_socket(&out);
        assert_eq!(socket, Some("/tmp/tmux-0/default"));
        assert_eq!(listing, format!("{pane}\n%2\u{1f}43\u{1f}x\n"));
        // A runner that printed the listing alone: all of it is panes, no socket.
        let plain = format!("{pane}\n");
        assert_eq!(split_socket(&plain), (plain.as_str(), None));
        let evil = format!("{SOCKET_MARK}/tmp/a\n%1\u{1f}42\u{1f}t\n");
        assert_eq!(split_socket(&evil), (evil.as_str(), None));
        assert_eq!(split_socket(""), ("", None));
    }

    /// A server that lists one pane and says its socket path when asked; every call it got.
    struct OnePane(std::sync::Arc<std::sync::Mutex<Vec<String>>>);

    impl Runner for OnePane {
        fn run(&self, args: &[String], _stdin: Option<&[u8]>) -> Result<Vec<u8>, TmuxError> {
            self.0.lock().unwrap().push(args.join(" "));
            let mut out = String::new();
            if args.first().map(String::as_str) == Some("list-panes") {
                out.push_str(
                    "%1\u{1f}42\u{1f}s\u{1f}0\u{1f}w\u{1f}0\u{1f}/tmp\u{1f}1\u{1f}1\u{1f}1",
                );
                out.push_str("\u{1f}0\u{1f}@1\u{1f}sh\u{1f}/dev/pts/1\u{1f}1\u{1f}t\n");
            }
            if let Some(mark) = args.iter().find(|a| a.contains("#{socket_path}")) {
                out.push_str(&mark.replace("#{socket_path}", "/tmp/tmux-1/work"));
                out.push('\n');
            }
            Ok(out.into_bytes())
        }
    }

    #[test]
    fn the_listing_tells_the_socket_path_so_asking_it_next_costs_no_call() {
        let calls = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let tmux = Tmux::with_runner(Box::new(OnePane(calls.clone())));
        let panes = tmux.list_panes().unwrap();
        assert_eq!((panes.len(), panes[0].title.as_str()), (1, "t"));
        assert_eq!(tmux.socket_path().unwrap(), "/tmp/tmux-1/work");
        assert_eq!(
            calls.lock().unwrap().len(),
            1,
            "{:?}",
            calls.lock().unwrap()
        );
        // Known once, never asked again.
        tmux.list_panes().unwrap();
        assert!(!calls.lock().unwrap()[1].contains("socket_path"));
        // Asked first on its own, it is not asked in the listing either.
        let calls = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let tmux = Tmux::with_runner(Box::new(OnePane(calls.clone())));
        assert_eq!(tmux.socket_path().unwrap(), "/tmp/tmux-1/work");
        assert_eq!(tmux.list_panes().unwrap().len(), 1);
        assert!(!calls.lock().unwrap()[1].contains("socket_path"));
    }

    #[test]
    fn popup_titles_need_tmux_3_3() {
        assert!(!version_at_least("3.2a", (3, 3)));
        assert!(!version_at_least("3.2", (3, 3)));
        assert!(version_at_least("3.3a", (3, 3)));
        assert!(version_at_least("3.5", (3, 3)));
        assert!(version_at_least("next-3.6", (3, 3)));
        assert!(version_at_least("openbsd-7.5", (3, 3)));
    }
}
