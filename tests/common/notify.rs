//! What the notification tests share: tmux options set at once, where a notification says a
//! pane is, and a real tmux client in a pseudo-terminal of the test's own that collects every
//! byte its terminal gets (the terminal channel's OSC sequences).

use std::fs::File;
use std::io::Read;
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command};
use std::sync::{Arc, Mutex};

use super::{wait_until, TmuxServer, DEADLINE};

/// Sets global options of `server`.
pub fn options(server: &TmuxServer, opts: &[(&str, &str)]) {
    for (k, v) in opts {
        server.tmux(&["set-option", "-g", k, v]);
    }
}

/// `session:window.pane` and the folder, as a notification names them.
pub fn place(server: &TmuxServer, pane: &str) -> (String, String) {
    let out = server.tmux(&[
        "display-message",
        "-p",
        "-t",
        pane,
        "#{session_name}:#{window_index}.#{pane_index}\u{1f}#{pane_current_path}",
    ]);
    let (target, folder) = out.split_once('\u{1f}').unwrap();
    let home = server.home().to_string_lossy().into_owned();
    let folder = match folder.strip_prefix(&home) {
        Some(rest) => format!("~{rest}"),
        None => folder.to_string(),
    };
    (target.to_string(), folder)
}

/// The watcher's log.
pub fn watch_log(server: &TmuxServer) -> String {
    std::fs::read_to_string(server.server_dir().join("watch.log")).unwrap_or_default()
}

/// A real tmux client attached to `main` in a pseudo-terminal of the test's own: every byte
/// it (or anyone) writes to its terminal is collected. Killed by its pid on drop.
pub struct PtyClient {
    child: Child,
    out: Arc<Mutex<Vec<u8>>>,
}

impl PtyClient {
    /// `tmux attach -t main` to `server`, its terminal called `term`.
    pub fn attach(server: &TmuxServer, term: &str) -> PtyClient {
        let mut cmd = Command::new("tmux");
        cmd.env_remove("TMUX").env_remove("TMUX_PANE");
        for (k, v) in server.env() {
            cmd.env(k, v);
        }
        cmd.env("TERM", term).args([
            "-L",
            &server.name,
            "-f",
            "/dev/null",
            "attach",
            "-t",
            "main",
        ]);
        PtyClient::run(server, cmd)
    }

    /// `cmd` in a new pseudo-terminal, once `server` has a client.
    pub fn run(server: &TmuxServer, mut cmd: Command) -> PtyClient {
        let (mut master, mut slave) = (0, 0);
        let size = libc::winsize {
            ws_row: 40,
            ws_col: 120,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        // SAFETY: valid out-pointers; no name buffer, no termios, a valid size.
        let rc = unsafe {
            libc::openpty(
                &mut master,
                &mut slave,
                std::ptr::null_mut(),
                std::ptr::null(),
                &size,
            )
        };
        assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
        // SAFETY: openpty returned two fresh descriptors that we now own.
        let (mut master, slave) = unsafe { (File::from_raw_fd(master), File::from_raw_fd(slave)) };
        cmd.stdin(slave.try_clone().unwrap())
            .stdout(slave.try_clone().unwrap())
            .stderr(slave.try_clone().unwrap());
        let tty = slave.as_raw_fd();
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            cmd.pre_exec(move || {
                libc::setsid();
                libc::ioctl(tty, libc::TIOCSCTTY, 0);
                Ok(())
            });
        }
        let child = cmd.spawn().expect("start a tmux client");
        drop(slave);
        let out = Arc::new(Mutex::new(Vec::new()));
        let sink = out.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = master.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        });
        wait_until(DEADLINE, "the client attached", || {
            !server
                .tmux(&["list-clients", "-F", "#{client_tty}"])
                .is_empty()
        });
        PtyClient { child, out }
    }

    /// What the terminal got (its OSC sequences) and the watcher's log, for a failure.
    pub fn told(&self, server: &TmuxServer) -> String {
        let out = String::from_utf8_lossy(&self.out.lock().unwrap()).into_owned();
        let oscs: Vec<&str> = out
            .split("\x1b]")
            .skip(1)
            .map(|s| &s[..s.len().min(120)])
            .collect();
        format!("OSC sequences: {oscs:?}\nwatch.log:\n{}", watch_log(server))
    }

    /// How often `needle` reached the terminal.
    pub fn count(&self, needle: &str) -> usize {
        let out = self.out.lock().unwrap();
        out.windows(needle.len())
            .filter(|w| *w == needle.as_bytes())
            .count()
    }
}

impl Drop for PtyClient {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
