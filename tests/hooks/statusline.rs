//! `agentpane statusline`: what Claude Code's status-line input says is kept, and the user's
//! own status-line command runs on the same input, its output and exit status unchanged.

use super::*;

fn input() -> Vec<u8> {
    fs::read(common::real_client_fixture(
        "claude-2.1.332/statusline-rate-limits.json",
    ))
    .unwrap()
}

fn saved(home: &Home) -> Value {
    let path = home.state().join("limits/claude.json");
    serde_json::from_slice(&fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display())))
        .unwrap()
}

/// A user status-line command that keeps its stdin in `got` and says something.
fn user_command(home: &Home) -> (String, PathBuf) {
    let got = home.dir.path().join("got");
    let cmd = format!(
        "cat > '{}'; printf 'my line: %s' \"$(echo ok)\"; echo ' done' >&2; exit 3",
        got.display()
    );
    (cmd, got)
}

#[test]
fn the_users_command_gets_the_same_input_and_its_output_and_exit_are_the_status_lines() {
    let home = Home::new();
    let (cmd, got) = user_command(&home);
    let (out, _) = home.run(&["statusline", "--then", &cmd], &input());
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "my line: ok");
    assert_eq!(fs::read(&got).unwrap(), input(), "stdin passed unchanged");
    let v = saved(&home);
    let limits = v["limits"].as_array().unwrap();
    assert_eq!(limits.len(), 2, "{v}");
    assert_eq!(limits[0]["name"], "5h");
    assert_eq!(limits[0]["used_percent"], 62.0);
    assert_eq!(limits[0]["window_minutes"], 300);
    assert_eq!(limits[0]["resets_at"], "2026-12-07T04:06:01Z");
    assert_eq!(limits[1]["name"], "7d");
    assert_eq!(limits[1]["used_percent"], 21.0);
    let session = &v["sessions"]["a9e1eeeb-5b30-4fef-8858-ecbba7985264"]["usage"];
    assert_eq!(session["context_tokens"], 6000);
    assert_eq!(session["cost_usd"], 0.008039999999999999);
}

#[test]
fn without_a_command_of_the_users_it_prints_nothing_and_keeps_the_input() {
    let home = Home::new();
    let (out, _) = home.run(&["statusline"], &input());
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(out.stdout.is_empty());
    assert_eq!(saved(&home)["limits"].as_array().unwrap().len(), 2);
}

#[test]
fn a_failing_save_never_breaks_the_status_line() {
    let home = Home::new();
    // The state folder is a file: nothing can be saved there.
    fs::write(home.state(), b"not a folder").unwrap();
    let (cmd, got) = user_command(&home);
    let (out, _) = home.run(&["statusline", "--then", &cmd], &input());
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "my line: ok");
    assert_eq!(fs::read(&got).unwrap(), input());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("agentpane statusline:"),
        "{out:?}"
    );
}

#[test]
fn bad_or_oversized_input_is_passed_on_whole_and_not_kept() {
    let home = Home::new();
    let (cmd, got) = user_command(&home);
    for input in [b"not json".to_vec(), vec![b'x'; (1 << 20) + 5000]] {
        let (out, _) = home.run(&["statusline", "--then", &cmd], &input);
        assert_eq!(out.status.code(), Some(3), "{:?}", out.stderr);
        assert_eq!(String::from_utf8_lossy(&out.stdout), "my line: ok");
        assert_eq!(fs::read(&got).unwrap(), input);
    }
    let kept = fs::read(home.state().join("limits/claude.json"))
        .ok()
        .map(|b| serde_json::from_slice::<Value>(&b).unwrap());
    assert!(
        kept.as_ref()
            .map_or(true, |v| v["limits"].as_array().unwrap().is_empty()),
        "{kept:?}"
    );
}

#[test]
fn the_installed_status_line_runs_the_users_and_uninstall_restores_it() {
    let home = Home::new();
    let settings = home.dir.path().join("settings.json");
    let (user, got) = user_command(&home);
    let original = serde_json::json!({
        "model": "opus",
        "statusLine": {"type": "command", "command": user, "padding": 0},
    });
    let text = serde_json::to_string_pretty(&original).unwrap() + "\n";
    fs::write(&settings, &text).unwrap();
    let file = settings.to_str().unwrap();
    let (out, _) = home.run(&["hooks", "install", "--settings", file], b"");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let v: Value = serde_json::from_slice(&fs::read(&settings).unwrap()).unwrap();
    let line = v["statusLine"]["command"].as_str().unwrap().to_string();
    assert!(line.contains(" statusline --then "), "{line}");
    assert_eq!(v["statusLine"]["padding"], 0);
    let again = fs::read(&settings).unwrap();
    home.run(&["hooks", "install", "--settings", file], b"");
    assert_eq!(fs::read(&settings).unwrap(), again, "install twice = once");

    // Claude Code runs the setting's command with `sh -c`.
    let mut sh = std::process::Command::new("sh");
    sh.arg("-c")
        .arg(&line)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in home.env() {
        sh.env(k, v);
    }
    let mut child = sh.spawn().unwrap();
    child.stdin.take().unwrap().write_all(&input()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "my line: ok");
    assert_eq!(fs::read(&got).unwrap(), input());
    assert_eq!(saved(&home)["limits"][0]["used_percent"], 62.0);

    let (out, _) = home.run(&["hooks", "uninstall", "--settings", file], b"");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(fs::read_to_string(&settings).unwrap(), text);
}

#[test]
fn no_statusline_leaves_the_setting_alone() {
    let home = Home::new();
    let settings = home.dir.path().join("settings.json");
    fs::write(&settings, "{}\n").unwrap();
    let file = settings.to_str().unwrap();
    let (out, _) = home.run(
        &["hooks", "install", "--no-statusline", "--settings", file],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let v: Value = serde_json::from_slice(&fs::read(&settings).unwrap()).unwrap();
    assert!(v.get("statusLine").is_none(), "{v}");
}

/// The recorded input with its 5h window at `used` % and resetting at `reset` (Unix seconds),
/// the 7d one a day later, handed to `statusline` in `tmux`'s world.
fn capture(tmux: &common::TmuxServer, used: f64, reset: i64) {
    let mut v: Value = serde_json::from_slice(&input()).unwrap();
    v["rate_limits"]["five_hour"]["used_percentage"] = used.into();
    v["rate_limits"]["five_hour"]["resets_at"] = reset.into();
    v["rate_limits"]["seven_day"]["resets_at"] = (reset + 86400).into();
    let mut cmd = common::agentpane_with_env(&tmux.env());
    cmd.arg("statusline")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(v.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
}

#[test]
fn the_status_segment_shows_the_tightest_plan_window_once_past_its_threshold() {
    let tmux = common::TmuxServer::start();
    capture(&tmux, 62.0, chrono::Utc::now().timestamp() + 4250);

    let run = tmux.agentpane(&["status", "--scan"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.stdout.trim(), "5h 62% ↻1h10m", "{run:?}");
    let run = tmux.agentpane(&["status", "--scan", "--limit-threshold", "70"]);
    assert_eq!(run.stdout.trim(), "", "{run:?}");
}

#[test]
fn the_watcher_shows_the_plan_window_and_alerts_once_when_it_crosses_its_threshold() {
    let tmux = common::TmuxServer::start();
    let watch = common::Watch::start(&tmux, &["--limit-threshold", "60"]);
    let segment = || tmux.tmux(&["show-option", "-gqv", "@agentpane_status"]);
    let reset = chrono::Utc::now().timestamp() + 4250;
    capture(&tmux, 40.0, reset);
    capture(&tmux, 62.0, reset);
    common::wait_until_else(
        Duration::from_secs(20),
        "the plan window in the segment",
        || segment().trim().starts_with("5h 62% ↻"),
        segment,
    );
    common::wait_until(Duration::from_secs(20), "the plan alert", || {
        !watch.alerts().is_empty()
    });
    capture(&tmux, 75.0, reset);
    common::wait_until(Duration::from_secs(20), "75% in the segment", || {
        segment().trim().starts_with("5h 75% ↻")
    });
    // The alert command runs apart from the scan: a second alert would land within this.
    let end = Instant::now() + Duration::from_millis(1500);
    while Instant::now() < end {
        assert_eq!(watch.alerts().len(), 1, "{:?}", watch.alerts());
        std::thread::sleep(Duration::from_millis(100));
    }
    let alerts = watch.alerts();
    assert!(
        alerts[0]["key"]
            .as_str()
            .is_some_and(|k| k.starts_with("limit|claude|5h|")),
        "{alerts:?}"
    );
    assert_eq!(alerts[0]["usage"]["name"], "5h");
    assert!(
        alerts[0]["reason"]
            .as_str()
            .is_some_and(|r| r.starts_with("plan window 5h at 62%")),
        "{alerts:?}"
    );
}
