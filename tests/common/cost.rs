//! What a waiting process costs, from /proc: its CPU and, for the watcher, the counters it
//! logs on SIGUSR1 (tests/wait_cost.rs, the real-client suite).

use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use super::{wait_until, TmuxServer, DEADLINE};

/// Kills the child we started when the test ends, pass or fail.
pub struct Reap(pub Child);

impl Drop for Reap {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// CPU used so far by `pid` and the children it reaped (utime + stime + cutime + cstime of
/// /proc/PID/stat), in milliseconds.
pub fn cpu_ms(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .unwrap_or_else(|e| panic!("process {pid} is gone: {e}"));
    // Fields after the command name, which ends at the last ')': state is field 3, utime 14.
    let rest = &stat[stat.rfind(')').expect("stat has a command name") + 2..];
    let fields: Vec<u64> = rest
        .split_whitespace()
        .map(|f| f.parse().unwrap_or(0))
        .collect();
    let ticks: u64 = fields[11..15].iter().sum();
    // SAFETY: sysconf only reads a configuration value.
    let hz = u64::try_from(unsafe { libc::sysconf(libc::_SC_CLK_TCK) }).unwrap_or(100);
    ticks * 1000 / hz.max(1)
}

/// The resident memory of `pid` now (VmRSS of /proc/PID/status), in KiB.
pub fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_else(|e| panic!("process {pid} is gone: {e}"))
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .expect("VmRSS in /proc/PID/status")
}

/// Waits until the process `pid` has settled after its start: no CPU for half a second, or
/// 15 s at most (a busy loop never settles, and then fails its budget).
pub fn settle(pid: u32) {
    let settle_by = Instant::now() + Duration::from_secs(15);
    let mut last = cpu_ms(pid);
    while Instant::now() < settle_by {
        std::thread::sleep(Duration::from_millis(500));
        let now = cpu_ms(pid);
        if now == last {
            break;
        }
        last = now;
    }
}

/// An agentpane command on `server`, quiet, not waited for.
pub fn start(server: &TmuxServer, args: &[&str]) -> Reap {
    let mut cmd = server.agentpane_command(args);
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    Reap(cmd.spawn().expect("start agentpane"))
}

/// The watcher as the plugin starts it (default 5 s safety poll unless `extra` says), without
/// desktop side effects, after its first scan.
pub fn start_watcher(server: &TmuxServer, extra: &[&str]) -> Reap {
    let mut args = vec!["watch", "--no-bell", "--no-notify", "--no-message"];
    args.extend(extra);
    let watch = start(server, &args);
    let snapshot = server.server_dir().join("state.json");
    wait_until(DEADLINE, "the watcher's first scan", || snapshot.exists());
    watch
}

/// The watcher's counters, from the line it logs on SIGUSR1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counters {
    pub wakes: u64,
    pub lists: u64,
    /// Safety polls answered without asking tmux.
    pub quiet_polls: u64,
    pub reads: u64,
    /// Panes reported afresh (their evidence gathered again).
    pub reports: u64,
    /// Resolutions (at start, on news of a new session, at least once a minute).
    pub resolves: u64,
    /// The CPU the watcher and the tmux clients it reaped have used so far, in
    /// microseconds (getrusage: exact, where [`cpu_ms`] counts 10 ms ticks).
    pub cpu_us: u64,
}

/// Asks the watcher for its counters and reads them from its log.
pub fn counters(server: &TmuxServer, watcher: &Reap) -> Counters {
    let log = server.server_dir().join("watch.log");
    let lines = |log: &Path| {
        std::fs::read_to_string(log)
            .unwrap_or_default()
            .lines()
            .filter(|l| l.contains("counters:"))
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    let before = lines(&log).len();
    // SAFETY: kill(2) on the pid of a child we started and have not reaped.
    unsafe { libc::kill(watcher.0.id() as libc::pid_t, libc::SIGUSR1) };
    let mut line = String::new();
    wait_until(DEADLINE, "the watcher's counters", || {
        let all = lines(&log);
        line = all.last().cloned().unwrap_or_default();
        all.len() > before
    });
    let field = |name: &str| -> u64 {
        let at = line
            .find(name)
            .unwrap_or_else(|| panic!("{name} in {line}"))
            + name.len();
        line[at..]
            .trim_start()
            .split(|c: char| !c.is_ascii_digit())
            .next()
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{name} in {line}"))
    };
    Counters {
        wakes: field("wakes"),
        lists: field("tmux list-panes"),
        quiet_polls: field("quiet polls"),
        reads: field("transcript reads"),
        resolves: field("resolutions"),
        reports: field("pane reports"),
        cpu_us: field("cpu"),
    }
}
