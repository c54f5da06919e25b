//! An unusable or corrupt state folder, and the atomic writer on a full disk.

use super::*;

// ---------------------------------------------------------------------------------------------
// An unusable or corrupt state folder.

/// Runs agentpane on `server` with `AGENTPANE_STATE_DIR` (and XDG) pointed at `state`.
fn agentpane_with_state(server: &TmuxServer, state: &Path, args: &[&str]) -> common::Run {
    let mut cmd = common::agentpane_with_env(&server.env());
    cmd.env("AGENTPANE_STATE_DIR", state)
        .env("XDG_STATE_HOME", state)
        .args(["-L", &server.name])
        .args(args)
        .stdin(std::process::Stdio::null());
    let out = cmd.output().unwrap();
    common::Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

#[test]
fn a_state_folder_that_cannot_exist_degrades_status_and_fails_writers_clearly() {
    let server = TmuxServer::start();
    let pane = server.spawn(&FakeAgent::claude().fixture(CLAUDE_FIXTURE));
    let other = server.spawn(&FakeAgent::codex().in_dir("other"));
    let expected = server.agentpane(&["status"]);
    assert_eq!(expected.code, 0, "{expected:?}");
    let blocker = server.path().join("not-a-folder");
    std::fs::write(&blocker, b"x").unwrap();
    // The status line never shows an error: same segment, exit 0.
    let run = agentpane_with_state(&server, &blocker, &["status"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.stdout, expected.stdout, "{run:?}");
    let run = agentpane_with_state(&server, &blocker, &["pane-status", "--json"]);
    assert_eq!(run.code, 0, "{run:?}");
    // Writers say what is wrong, in one line, and leave the file alone.
    for args in [
        &["watch"][..],
        &[
            "route",
            &pane,
            &other,
            "--transform",
            "full-output",
            "--queue",
        ],
    ] {
        let run = agentpane_with_state(&server, &blocker, args);
        assert!(!run.stderr.contains("panicked"), "{args:?}: {run:?}");
        assert_ne!(run.code, 0, "{args:?}: {run:?}");
        assert!(run.stderr.contains("not-a-folder"), "{args:?}: {run:?}");
    }
    assert_eq!(std::fs::read(&blocker).unwrap(), b"x");
}

#[test]
fn corrupt_state_files_are_skipped_not_fatal() {
    let server = TmuxServer::start();
    server.spawn(&FakeAgent::claude().fixture(CLAUDE_FIXTURE));
    let state = server.state_dir();
    let own = server.server_dir();
    std::fs::create_dir_all(state.join("queue")).unwrap();
    agentpane::paths::ensure_private_dir(&own).unwrap();
    for (dir, name, junk) in [
        (&own, "alerts.json", &b"{\"keys\": [tru"[..]),
        (&own, "observed.json", b"\0\0\xff"),
        (&own, "state.json", b"[]"),
        (&state, "queue/20260101-000000-000-1-0.json", b"{\"id\":"),
        (&state, "journal.jsonl", b"{\"id\":\"x\",\"outc\n\xff\n"),
    ] {
        std::fs::write(dir.join(name), junk).unwrap();
    }
    let run = server.agentpane(&["status"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(!run.stdout.trim().is_empty(), "{run:?}");
    let run = server.agentpane(&["route-queue", "--json"]);
    assert!(!run.stderr.contains("panicked"), "{run:?}");
    let run = server.agentpane(&["route-queue", "--deliver", "--json"]);
    assert!(!run.stderr.contains("panicked"), "{run:?}");
    let mut watcher = spawn_watcher(&server);
    wait_until(DEADLINE, "the watcher's status option", || {
        published_status(&server)
    });
    assert!(watcher.try_wait().unwrap().is_none(), "the watcher runs");
    let _ = std::process::Command::new("kill")
        .args(["-TERM", &watcher.id().to_string()])
        .status();
    let status = watcher.wait().unwrap();
    assert_eq!(status.code(), Some(0));
    // Its memory is whole JSON again.
    let alerts = std::fs::read(own.join("alerts.json")).unwrap();
    serde_json::from_slice::<serde_json::Value>(&alerts)
        .unwrap_or_else(|e| panic!("alerts.json after a clean stop ({e})"));
}

// ---------------------------------------------------------------------------------------------
// Disk full / read-only state dir: atomic writes never leave a partial or corrupt file.

fn leftovers(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect()
}

#[test]
fn atomic_write_where_no_file_can_be_created_fails_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let blocker = dir.path().join("state");
    std::fs::write(&blocker, b"a regular file where the folder should be").unwrap();
    let target = blocker.join("queue.json");
    let err = paths::write_atomic(&target, b"{\"new\":true}").unwrap_err();
    assert!(format!("{err:#}").contains("state"), "{err:#}");
    assert_eq!(
        std::fs::read(&blocker).unwrap(),
        b"a regular file where the folder should be"
    );
    assert!(leftovers(dir.path()).is_empty());
    assert!(paths::ensure_private_dir(&blocker).is_err());
}

#[test]
fn atomic_write_that_cannot_rename_keeps_the_target_and_no_temp() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("alerts.json");
    std::fs::create_dir(&target).unwrap();
    std::fs::write(target.join("keep"), b"x").unwrap();
    assert!(paths::write_atomic(&target, b"new").is_err());
    assert_eq!(std::fs::read(target.join("keep")).unwrap(), b"x");
    assert!(
        leftovers(dir.path()).is_empty(),
        "{:?}",
        leftovers(dir.path())
    );
}

const CHILD_ENV: &str = "AGENTPANE_FAULTS_FULL_DISK_DIR";

/// A full disk, simulated with a 512-byte file size limit (RLIMIT_FSIZE, which binds root
/// too; SIGXFSZ ignored so the write fails with EFBIG). The test re-runs itself in a child
/// process under `ulimit -f 1`.
#[test]
fn atomic_write_on_a_full_disk_keeps_the_old_content() {
    if let Some(dir) = std::env::var_os(CHILD_ENV) {
        let dir = PathBuf::from(dir);
        let target = dir.join("queue.json");
        let big = vec![b'x'; 64 * 1024];
        assert!(
            paths::write_atomic(&target, &big).is_err(),
            "write past the limit"
        );
        assert!(paths::create_exclusive(&dir.join("msg.md"), &big).is_err());
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("queue.json");
    paths::write_atomic(&target, b"{\"old\":true}").unwrap();
    let exe = std::env::current_exe().unwrap();
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg("trap '' XFSZ; ulimit -f 1 && exec \"$0\" --exact state::atomic_write_on_a_full_disk_keeps_the_old_content --test-threads 1")
        .arg(&exe)
        .env(CHILD_ENV, dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "child: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("1 passed"),
        "the child ran the test"
    );
    assert_eq!(std::fs::read(&target).unwrap(), b"{\"old\":true}");
    assert!(
        leftovers(dir.path()).is_empty(),
        "{:?}",
        leftovers(dir.path())
    );
    assert!(
        !dir.path().join("msg.md").exists(),
        "a partial exclusive file is removed"
    );
}

#[test]
fn concurrent_atomic_writes_leave_one_whole_version() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("queue.json");
    let versions: Vec<Vec<u8>> = (0..10u8)
        .map(|i| {
            let mut v = vec![b'a' + i; 100_000];
            v.push(b'\n');
            v
        })
        .collect();
    std::thread::scope(|s| {
        for v in &versions {
            let target = &target;
            s.spawn(move || {
                for _ in 0..5 {
                    paths::write_atomic(target, v).unwrap();
                }
            });
        }
    });
    let got = std::fs::read(&target).unwrap();
    assert!(versions.contains(&got), "a mix of writers ended up on disk");
    assert!(leftovers(dir.path()).is_empty());
}
