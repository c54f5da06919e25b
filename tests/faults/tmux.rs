//! tmux killed (gracefully or hard), stuck or missing; panes closing mid-scan; the watcher
//! outliving its server.

use super::*;

// ---------------------------------------------------------------------------------------------
// tmux server killed mid-command, or stuck.

/// A folder with a fake `tmux` that prints `stderr` and exits `code`, or with `hang` never
/// answers.
fn fake_tmux(dir: &Path, stderr: &str, code: i32, hang: bool) -> PathBuf {
    let bin = dir.join("fakebin");
    std::fs::create_dir_all(&bin).unwrap();
    let script = bin.join("tmux");
    let body = if hang {
        "exec sleep 30\n".to_string()
    } else {
        format!("printf '%s\\n' '{stderr}' >&2\nexit {code}\n")
    };
    std::fs::write(&script, format!("#!/bin/sh\n{body}")).unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    bin
}

fn agentpane_with_path(bin: &Path, args: &[&str]) -> common::Run {
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let world = tempfile::tempdir().unwrap();
    let out = common::agentpane_in(world.path())
        .env("PATH", path)
        .args(["-L", "agentpane-test-fake"])
        .args(args)
        .output()
        .unwrap();
    common::Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

#[test]
fn a_server_killed_before_the_command_exits_3() {
    let server = TmuxServer::start();
    server.spawn(&FakeAgent::claude().fixture(CLAUDE_FIXTURE));
    let pid: i32 = server
        .tmux(&["display-message", "-p", "#{pid}"])
        .parse()
        .unwrap();
    // SIGKILL: the socket file stays behind, as after a crash.
    assert!(std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .unwrap()
        .success());
    wait_until(DEADLINE, "the server to be gone", || {
        !server.try_tmux(&["list-sessions"]).status.success()
    });
    for args in [&["panes"][..], &["panes", "--json"], &["resolve", "%1"]] {
        let run = server.agentpane(args);
        assert_eq!(run.code, 3, "{args:?}: {run:?}");
        assert_eq!(run.stdout, "", "{args:?}");
        assert_eq!(run.stderr.trim().lines().count(), 1, "{run:?}");
    }
}

#[test]
fn panes_racing_a_server_kill_exits_0_or_3_and_never_panics() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let server = TmuxServer::start();
    for _ in 0..3 {
        server.spawn(&FakeAgent::claude().fixture(CLAUDE_FIXTURE));
    }
    let runs = std::sync::Arc::new(AtomicUsize::new(0));
    let name = server.name.clone();
    let env = server.env();
    let runner = {
        let runs = runs.clone();
        std::thread::spawn(move || {
            let mut codes = Vec::new();
            // Until the server has been gone for a few runs (bounded).
            while codes.iter().filter(|(c, _)| *c == 3).count() < 3 && codes.len() < 500 {
                let mut cmd = common::agentpane_with_env(&env);
                cmd.args(["-L", &name, "panes", "--json"]);
                let out = cmd.output().unwrap();
                let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
                assert!(!stderr.contains("panicked"), "{stderr}");
                let code = out.status.code().unwrap_or(-1);
                if code == 0 {
                    let _: serde_json::Value = serde_json::from_slice(&out.stdout)
                        .unwrap_or_else(|e| panic!("half-written JSON ({e}): {out:?}"));
                }
                codes.push((code, stderr));
                runs.fetch_add(1, Ordering::Relaxed);
            }
            codes
        })
    };
    wait_until(DEADLINE, "a few runs against the live server", || {
        runs.load(Ordering::Relaxed) >= 3
    });
    server.tmux(&["kill-server"]);
    let codes = runner.join().expect("runner thread");
    assert_eq!(codes[0].0, 0, "{:?}", codes[0]);
    for (code, stderr) in &codes {
        // A client that loses its server mid-command prints `server exited unexpectedly`
        // (exit 2 today, see `a_server_lost_mid_command_exits_3`).
        assert!(
            [0, 3].contains(code) || stderr.contains("server exited"),
            "{code}: {stderr}"
        );
    }
    assert_eq!(codes.last().unwrap().0, 3, "after the kill: no server");
}

/// When the server dies while a tmux client waits for its answer, tmux prints `server exited
/// unexpectedly` (observed with tmux 3.3a: `run-shell 'sleep 3'` + SIGKILL of the server) and
/// exits 1. That is a missing server, not a tmux command error: exit 3.
#[test]
fn a_server_lost_mid_command_exits_3() {
    let dir = tempfile::tempdir().unwrap();
    for msg in ["server exited unexpectedly", "server exited"] {
        let bin = fake_tmux(dir.path(), msg, 1, false);
        for args in [&["panes"][..], &["resolve", "%1"]] {
            let run = agentpane_with_path(&bin, args);
            assert_eq!(run.code, 3, "{msg}: {args:?}: {run:?}");
        }
    }
}

#[test]
fn a_stuck_tmux_times_out_with_one_line_and_no_panic() {
    let dir = tempfile::tempdir().unwrap();
    let bin = fake_tmux(dir.path(), "", 0, true);
    let started = Instant::now();
    let run = agentpane_with_path(&bin, &["panes"]);
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "the tmux timeout holds: {:?}",
        started.elapsed()
    );
    assert_ne!(run.code, 0, "{run:?}");
    assert!(!run.stderr.contains("panicked"), "{run:?}");
    assert_eq!(run.stderr.trim().lines().count(), 1, "{run:?}");
    assert!(run.stderr.contains("tmux"), "{run:?}");
}

#[test]
fn tmux_missing_exits_3() {
    let dir = tempfile::tempdir().unwrap();
    let out = common::agentpane_in(dir.path())
        .env("PATH", dir.path())
        .args(["-L", "agentpane-test-nothing", "panes"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("not installed"), "{stderr}");
}

// ---------------------------------------------------------------------------------------------
// The watcher when its server dies hard.

#[test]
fn the_watcher_exits_cleanly_when_its_server_is_killed_hard() {
    let server = TmuxServer::start();
    server.spawn(&FakeAgent::claude().fixture(CLAUDE_FIXTURE));
    server.spawn(&FakeAgent::codex().fixture(CODEX_FIXTURE).in_dir("other"));
    let mut watcher = spawn_watcher(&server);
    wait_until(DEADLINE, "the watcher's status option", || {
        published_status(&server)
    });
    let pid = server.tmux(&["display-message", "-p", "#{pid}"]);
    // SIGKILL: no clean shutdown, the socket file stays behind.
    assert!(std::process::Command::new("kill")
        .args(["-9", &pid])
        .status()
        .unwrap()
        .success());
    let end = Instant::now() + DEADLINE;
    let status = loop {
        if let Some(s) = watcher.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > end {
            let _ = watcher.kill();
            panic!("the watcher outlived its server");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut stderr = String::new();
    watcher
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(status.code(), Some(0), "{stderr}");
}

// ---------------------------------------------------------------------------------------------
// A pane closed between list and the next call.

/// A fake tmux: `list-panes` answers with `listing`; every call naming a pane with `-t` fails
/// as tmux does for a pane that closed.
struct ClosedPanes {
    listing: String,
}

impl Runner for ClosedPanes {
    fn run(&self, args: &[String], _stdin: Option<&[u8]>) -> Result<Vec<u8>, TmuxError> {
        match args.first().map(String::as_str) {
            Some("list-panes") => Ok(self.listing.clone().into_bytes()),
            _ => {
                let target = args
                    .iter()
                    .skip_while(|a| *a != "-t")
                    .nth(1)
                    .cloned()
                    .unwrap_or_default();
                Err(TmuxError::Command(format!("can't find pane: {target}")))
            }
        }
    }
}

fn pane_line(id: &str, pid: u32) -> String {
    PANE_FORMAT
        .replace("#{pane_id}", id)
        .replace("#{pane_pid}", &pid.to_string())
        .replace("#{session_name}", "main")
        .replace("#{window_index}", "1")
        .replace("#{window_name}", "w")
        .replace("#{pane_index}", "0")
        .replace("#{pane_current_path}", "/nonexistent")
        .replace("#{pane_active}", "1")
        .replace("#{window_active}", "1")
        .replace("#{session_attached}", "0")
        .replace("#{pane_dead}", "0")
        .replace("#{window_id}", "@1")
        .replace("#{pane_current_command}", "claude")
        .replace("#{pane_tty}", "/dev/pts/0")
        .replace("#{pane_title}", "a title")
}

/// A pid that is certainly not running: a child that has exited and been reaped.
fn dead_pid() -> u32 {
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    pid
}

#[test]
fn a_pane_whose_process_is_gone_is_skipped_by_a_scan() {
    let listing = format!(
        "{}\n{}\n%7\u{1f}trunc",
        pane_line("%5", dead_pid()),
        pane_line("%6", std::process::id())
    );
    let tmux = Tmux::with_runner(Box::new(ClosedPanes { listing }));
    let reports = agentpane::scan::scan(&tmux, now()).expect("a scan never fails on a dead pane");
    assert!(reports.is_empty(), "no agent anywhere: {reports:?}");
    let all = agentpane::scan::resolve_all(&tmux, now()).unwrap();
    assert_eq!(all.len(), 2, "the truncated line is skipped, the rest kept");
}

#[test]
fn a_pane_closed_between_list_and_lookup_is_not_found_not_an_error() {
    let tmux = Tmux::with_runner(Box::new(ClosedPanes {
        listing: pane_line("%5", dead_pid()),
    }));
    assert!(agentpane::scan::find_pane(&tmux, "%5").unwrap().is_none());
    assert!(agentpane::scan::resolve_target(&tmux, "%5", now())
        .unwrap()
        .is_none());
}

/// `display-message` still sees the pane, the following `list-panes` no longer does.
struct VanishingAfterLookup;

impl Runner for VanishingAfterLookup {
    fn run(&self, args: &[String], _stdin: Option<&[u8]>) -> Result<Vec<u8>, TmuxError> {
        match args.first().map(String::as_str) {
            Some("display-message") => Ok(b"%9\n".to_vec()),
            Some("list-panes") => Ok(pane_line("%1", dead_pid()).into_bytes()),
            _ => Err(TmuxError::Command("unexpected".into())),
        }
    }
}

#[test]
fn a_pane_closed_between_lookup_and_list_is_not_found() {
    let tmux = Tmux::with_runner(Box::new(VanishingAfterLookup));
    assert!(agentpane::scan::find_pane(&tmux, "%9").unwrap().is_none());
}

#[test]
fn panes_while_panes_close_always_prints_whole_json() {
    let server = TmuxServer::start();
    let mut panes = Vec::new();
    for i in 0..4 {
        let agent = if i % 2 == 0 {
            FakeAgent::claude().fixture(CLAUDE_FIXTURE)
        } else {
            FakeAgent::codex().fixture(CODEX_FIXTURE)
        };
        panes.push(server.spawn(&agent.in_dir(&format!("p{i}"))));
    }
    let name = server.name.clone();
    let env = server.env();
    let killer = {
        let panes = panes.clone();
        let server_name = name.clone();
        std::thread::spawn(move || {
            for pane in panes {
                std::thread::sleep(Duration::from_millis(60));
                let _ = std::process::Command::new("tmux")
                    .args(["-L", &server_name, "kill-pane", "-t", &pane])
                    .output();
            }
        })
    };
    let mut counts = Vec::new();
    for _ in 0..15 {
        let mut cmd = common::agentpane_with_env(&env);
        cmd.args(["-L", &name, "panes", "--json"]);
        let out = cmd.output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{stderr}");
        let rows: serde_json::Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {out:?}"));
        counts.push(rows.as_array().map_or(0, Vec::len));
    }
    killer.join().unwrap();
    let last = server.agentpane(&["panes", "--json"]);
    assert_eq!(last.json(), serde_json::json!([]), "{counts:?}");
}

/// Every screen a scan needs comes back from one tmux call, each cut at its own mark, also
/// for pane ids `display-message`'s strftime would pad (`%5`, `%12`: a mark holding the pane
/// id came back as `   %5` and matched nothing, so no screen was seen); a pane that closed
/// just before leaves the others alone.
#[test]
fn many_screens_come_back_from_one_call() {
    let server = TmuxServer::start();
    let panes: Vec<String> = (0..13)
        .map(|i| {
            server.new_window(
                &format!("printf 'screen-{i}\\n'; exec sleep 600"),
                &server.work("plain"),
                &[],
            )
        })
        .collect();
    for (i, pane) in panes.iter().enumerate() {
        wait_until(DEADLINE, "the pane's text", || {
            server
                .tmux(&["capture-pane", "-p", "-t", pane])
                .contains(&format!("screen-{i}"))
        });
    }
    let tmux = agentpane::tmux::Tmux::new(agentpane::tmux::Socket::Name(server.name.clone()));
    let ids: Vec<&str> = panes.iter().map(String::as_str).collect();
    let got = tmux.capture_panes(&ids);
    for (i, pane) in panes.iter().enumerate() {
        let screen = got
            .get(pane)
            .unwrap_or_else(|| panic!("no screen for {pane}"));
        assert!(
            screen.contains(&format!("screen-{i}\n")),
            "{pane}: {screen}"
        );
        assert!(!screen.contains("agentpane-capture"), "{pane}: {screen}");
    }
    server.tmux(&["kill-pane", "-t", &panes[3]]);
    let got = tmux.capture_panes(&ids);
    assert!(!got.contains_key(&panes[3]));
    assert_eq!(got.len(), panes.len() - 1, "the rest one by one");
}
