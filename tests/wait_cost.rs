//! Every waiting command sleeps while nothing arrives: `channel watch`, `route --wait`, a
//! foreground `relay` and the watcher are each left ~3 s with nothing to do, and the CPU they
//! (and the processes they spawned) used in that window must stay under 50 ms. A busy poll
//! or a watch woken by its own reads uses that in well under a second.
//! (The 60 s figures are in BENCHMARKS.md, from scripts/wait-cost.sh.)

mod common;

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{agentpane_bin, wait_until, FakeAgent, TmuxServer, DEADLINE};

const CODEX_MID_TURN: &str = "codex/derived-prefix/kvsankar-session-01.prefix-L1-7.mid-turn.jsonl";
const ENDS_TURN: &str = "claude/kvsankar-agent-history/session-01.jsonl";
/// The quiet window measured.
const WINDOW: Duration = Duration::from_secs(3);
/// CPU allowed in that window.
const BUDGET_MS: u64 = 50;

/// Kills the child we started when the test ends, pass or fail.
struct Reap(Child);

impl Drop for Reap {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// CPU used so far by `pid` and the children it reaped (utime + stime + cutime + cstime of
/// /proc/PID/stat), in milliseconds.
fn cpu_ms(pid: u32) -> u64 {
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

/// Waits until `child` has settled after its start (no CPU for half a second, or 15 s at
/// most: a busy loop never settles, and then fails below), then asserts that it uses less
/// than [`BUDGET_MS`] over [`WINDOW`] and is still waiting.
fn assert_sleeps(what: &str, child: &mut Child) {
    let pid = child.id();
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
    let before = cpu_ms(pid);
    std::thread::sleep(WINDOW);
    let used = cpu_ms(pid) - before;
    assert!(
        child.try_wait().unwrap().is_none(),
        "{what} ended instead of waiting"
    );
    assert!(
        used < BUDGET_MS,
        "{what} used {used} ms of CPU in {WINDOW:?} with nothing arriving (budget {BUDGET_MS} ms): a busy wait"
    );
}

/// An agentpane command on `server`, quiet, not waited for.
fn start(server: &TmuxServer, args: &[&str]) -> Reap {
    let mut cmd = server.agentpane_command(args);
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    Reap(cmd.spawn().expect("start agentpane"))
}

fn mid_turn_codex(server: &TmuxServer, dir: &str) -> String {
    let pane = server.spawn(&FakeAgent::codex().fixture(CODEX_MID_TURN).in_dir(dir));
    wait_until(DEADLINE, "codex working", || {
        server.agentpane(&["resolve", &pane, "--json"]).json()["state"] == "working"
    });
    pane
}

fn channel(state: &Path, args: &[&str]) -> String {
    let out = Command::new(agentpane_bin())
        .env("AGENTPANE_STATE_DIR", state)
        .env_remove("TMUX_PANE")
        .arg("channel")
        .args(args)
        .output()
        .expect("run agentpane channel");
    assert!(out.status.success(), "channel {args:?}: {out:?}");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

#[test]
fn channel_watch_sleeps_on_a_quiet_channel() {
    let state = tempfile::tempdir().unwrap();
    let id = channel(state.path(), &["new", "--as", "alice"]);
    channel(state.path(), &["join", &id, "--as", "bob"]);
    // bob's own join notice sits in the folder: looking at it must not wake the wait.
    let child = Command::new(agentpane_bin())
        .env("AGENTPANE_STATE_DIR", state.path())
        .args(["channel", "watch", &id, "--as", "bob", "--timeout", "60s"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut child = Reap(child);
    assert_sleeps("channel watch", &mut child.0);
}

#[test]
fn route_wait_sleeps_while_the_destination_works() {
    let server = TmuxServer::start();
    let src = server.new_window(
        "printf 'hand-over\\n'; exec sleep 600",
        &server.work("plain"),
        &[],
    );
    let dst = mid_turn_codex(&server, "dst");
    let mut route = start(
        &server,
        &[
            "route",
            &src,
            &dst,
            "--transform",
            "full-output",
            "--wait",
            "60",
        ],
    );
    assert_sleeps("route --wait", &mut route.0);
}

#[test]
fn foreground_relay_sleeps_while_both_work() {
    let server = TmuxServer::start();
    let a = mid_turn_codex(&server, "a");
    let b = mid_turn_codex(&server, "b");
    let mut relay = start(&server, &["relay", &a, &b, "--foreground"]);
    assert_sleeps("relay --foreground", &mut relay.0);
    // Ctrl-C still ends the sleep, cleanly.
    // SAFETY: kill(2) on the pid of a child we started and have not reaped.
    unsafe { libc::kill(relay.0.id() as libc::pid_t, libc::SIGINT) };
    let deadline = Instant::now() + DEADLINE;
    let status = loop {
        if let Some(status) = relay.0.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "the relay ignored Ctrl-C");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(status.code(), Some(0), "{status:?}");
}

#[test]
fn watcher_sleeps_between_safety_polls() {
    let server = TmuxServer::start();
    server.spawn(&FakeAgent::claude().fixture(ENDS_TURN));
    mid_turn_codex(&server, "busy");
    // A channel with mail in it: the watcher reads channel folders on every scan.
    let state = server.state_dir();
    let id = channel(&state, &["new", "--as", "alice"]);
    channel(&state, &["join", &id, "--as", "bob"]);
    // A long safety poll: what is measured is what wakes the watcher besides it.
    let mut watch = start(
        &server,
        &[
            "watch",
            "--poll",
            "60",
            "--no-bell",
            "--no-notify",
            "--no-message",
        ],
    );
    wait_until(DEADLINE, "the watcher's first scan", || {
        state.join("state.json").exists()
    });
    assert_sleeps("watch", &mut watch.0);
}

#[test]
fn route_wait_delivers_once_the_destination_turn_ends() {
    let server = TmuxServer::start();
    let src = server.new_window(
        "printf 'HAND-OVER-TEXT\\n'; exec sleep 600",
        &server.work("plain"),
        &[],
    );
    let dst = mid_turn_codex(&server, "dst");
    let mut route = start(
        &server,
        &[
            "route",
            &src,
            &dst,
            "--transform",
            "full-output",
            "--wait",
            "120",
        ],
    );
    // Asleep on the transcript's folder; the turn's end wakes it.
    assert_sleeps("route --wait", &mut route.0);
    let end = serde_json::json!({
        "timestamp": "2026-01-01T00:00:00Z",
        "type": "event_msg",
        "payload": {"type": "task_complete", "turn_id": "t1", "last_agent_message": "ok"},
    });
    server.send_line(&dst, &format!("line {end}"));
    let deadline = Instant::now() + DEADLINE;
    let status = loop {
        if let Some(status) = route.0.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "route --wait never delivered");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "{status:?}");
    let screen = server.tmux(&["capture-pane", "-p", "-J", "-t", &dst]);
    assert!(screen.contains("HAND-OVER-TEXT"), "{screen}");
}
