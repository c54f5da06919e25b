//! `agentpane doctor` on a private server: a healthy setup (the README's lines, the plugin,
//! its watcher, hooks, a Claude Code pane) is all ✓ and exits 0; each broken setup exits 1
//! and names the fix.

mod common;
mod live;

use common::{
    agentpane_bin, agentpane_without_server, wait_until, FakeAgent, Run, TmuxServer, CLAUDE_ANSWER,
    DEADLINE,
};
use live::Live;

/// A Claude Code version the real-client suite verifies (tests/real/clients.txt).
const VERIFIED_CLAUDE: &str = "2.1.332";

fn plugin() -> String {
    concat!(env!("CARGO_MANIFEST_DIR"), "/agentpane.tmux").to_string()
}

/// The README's status lines, then the plugin (`status` and window lines first, as they must
/// be), and the watcher it starts.
fn load_plugin(server: &TmuxServer, status_right: &str) {
    for (k, v) in [
        ("status-right", status_right),
        ("window-status-format", "#I:#W#{agentpane_window_status}"),
        (
            "window-status-current-format",
            "#I:#W#{agentpane_window_status}",
        ),
        ("@agentpane-bin", agentpane_bin()),
        ("@agentpane-notify", "off"),
    ] {
        server.tmux(&["set", "-g", k, v]);
    }
    server.tmux(&["run-shell", &plugin()]);
}

/// Everything as the README says, with `hooks`, and a verified Claude Code that answered.
fn setup(hooks: bool) -> (TmuxServer, String) {
    let server = TmuxServer::start();
    // The harness made the folder with the umask's mode; agentpane makes it 0700.
    std::fs::set_permissions(
        server.state_dir(),
        std::os::unix::fs::PermissionsExt::from_mode(0o700),
    )
    .unwrap();
    if hooks {
        let run = server.agentpane(&["hooks", "install"]);
        assert_eq!(run.code, 0, "{run:?}");
    }
    load_plugin(&server, "#{agentpane_status} %H:%M");
    wait_until(DEADLINE, "the plugin's watcher", || {
        server.watcher_pid().is_some()
    });
    let pane = server.spawn(
        &FakeAgent::claude()
            .fixture(CLAUDE_ANSWER)
            .env("AGENTPANE_FAKE_VERSION", VERIFIED_CLAUDE),
    );
    (server, pane)
}

fn doctor(server: &TmuxServer) -> Run {
    server.agentpane(&["doctor"])
}

/// Runs doctor on a broken setup: exit 1, and the ✗ lines with their fixes, which must
/// contain every one of `expected`.
fn to_fix(server: &TmuxServer, expected: &[&str]) -> String {
    let run = doctor(server);
    assert_eq!(run.code, 1, "{}", run.stdout);
    let fixes = fixes(&run);
    for e in expected {
        assert!(fixes.contains(e), "`{e}` not in:\n{fixes}");
    }
    fixes
}

/// The ✗ lines of a run, each with its fix line.
fn fixes(run: &Run) -> String {
    let lines: Vec<&str> = run.stdout.lines().collect();
    let mut out = String::new();
    for (i, l) in lines.iter().enumerate() {
        if l.starts_with('✗') {
            out.push_str(l);
            out.push('\n');
            if let Some(fix) = lines
                .get(i + 1)
                .filter(|n| n.trim_start().starts_with("fix:"))
            {
                out.push_str(fix);
                out.push('\n');
            }
        }
    }
    out
}

#[test]
fn a_healthy_setup_is_all_ticks_and_exits_0() {
    let (server, pane) = setup(true);
    let run = doctor(&server);
    assert_eq!(run.code, 0, "{}", run.stdout);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines.last(), Some(&"all good"));
    for line in &lines[..lines.len() - 1] {
        assert!(line.starts_with('✓'), "not a ✓: {line}\n{}", run.stdout);
    }
    for expected in [
        "tmux 3.",
        &format!(
            "server {}",
            server.tmux(&["display-message", "-p", "#{socket_path}"])
        ),
        "plugin loaded from",
        "status-right shows the agentpane segment",
        "window-status-format shows each window's agent state",
        "watcher pid",
        &format!("{pane} main:"),
        &format!("claude {VERIFIED_CLAUDE} pid"),
        "(via session-record)",
        "hooks installed in",
        "(mode 0700, yours)",
        &format!("claude {VERIFIED_CLAUDE}: verified in CI"),
    ] {
        assert!(
            run.stdout.contains(expected),
            "`{expected}` missing:\n{}",
            run.stdout
        );
    }
    let json = server.agentpane(&["doctor", "--json"]).json();
    assert_eq!(json["ok"], true);
    assert!(json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .all(|f| f["level"] == "ok"));
}

#[test]
fn no_watcher_is_named_with_its_last_words_and_how_to_start_it() {
    let (server, _) = setup(true);
    // The watcher the plugin started for this test's server ends.
    let pid = server.watcher_pid().unwrap();
    let kill = std::process::Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    wait_until(DEADLINE, "the watcher to let go of its lock", || {
        server.watcher_pid().is_none()
    });
    // Lines of another server's watcher after it (an older agentpane kept one log for all).
    let mut log = std::fs::OpenOptions::new()
        .append(true)
        .open(server.server_dir().join("watch.log"))
        .unwrap();
    std::io::Write::write_all(
        &mut log,
        b"2026-01-01T00:00:00.000Z agentpane watch[1]: watching tmux server /tmp/other (lock x)\n\
          2026-01-01T00:00:01.000Z agentpane watch[1]: scan failed: another server's words\n",
    )
    .unwrap();
    let start = format!(
        "fix: `tmux -L {} run-shell {}/agentpane.tmux` starts it again",
        server.name,
        env!("CARGO_MANIFEST_DIR")
    );
    // The log's last line says how it ended.
    let fixes = to_fix(
        &server,
        &[
            "✗ no watcher runs for this server",
            "stopped: Signal",
            &start,
        ],
    );
    assert_eq!(fixes.matches('✗').count(), 1, "{fixes}");
    assert!(!fixes.contains("another server's words"), "{fixes}");
    let json = server.agentpane(&["doctor", "--json"]).json();
    assert_eq!(json["ok"], false);
    let watcher = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["topic"] == "watcher")
        .unwrap();
    assert_eq!(watcher["level"], "fix");
}

#[test]
fn placeholders_missing_or_loaded_too_early_are_named() {
    // No placeholder at all.
    let server = TmuxServer::start();
    load_plugin(&server, "%H:%M");
    to_fix(
        &server,
        &[
            "✗ neither status-right nor status-left shows agentpane",
            "fix: add `set -g status-right '#{agentpane_status} %H:%M'`",
        ],
    );

    // The placeholder set after the plugin ran: never rewritten.
    server.tmux(&["set", "-g", "status-right", "#{agentpane_status} %H:%M"]);
    to_fix(
        &server,
        &[
            "✗ status-right still holds #{agentpane_status}",
            "load the plugin after the status lines",
        ],
    );
}

#[test]
fn a_pane_whose_agent_uses_another_home_names_its_hooks_and_state_folder() {
    let (server, _) = setup(true);
    let other = server.path().join("otherhome");
    std::fs::create_dir_all(&other).unwrap();
    // Started from a shell with another HOME and none of this user's agentpane or Claude
    // Code overrides.
    let pane = server.spawn(
        &FakeAgent::claude()
            .in_dir("elsewhere")
            .fixture(CLAUDE_ANSWER)
            .env("AGENTPANE_FAKE_VERSION", VERIFIED_CLAUDE)
            .env("HOME", other.to_str().unwrap())
            .env("CLAUDE_CONFIG_DIR", "")
            .env("AGENTPANE_STATE_DIR", "")
            .env("XDG_STATE_HOME", ""),
    );
    let run = doctor(&server);
    // Its chain works (agentpane reads the agent's own HOME) and says whose HOME it is.
    let chain = run
        .stdout
        .lines()
        .find(|l| l.contains(&format!("{pane} main:")))
        .unwrap();
    assert!(chain.starts_with('✓'), "{chain}");
    assert!(
        chain.contains(&format!("(its HOME {}, not yours)", other.display())),
        "{chain}"
    );
    // But its Claude Code reads another settings file, where no hooks are (a note: hooks
    // are optional).
    let settings = other.join(".claude/settings.json");
    let note = format!(
        "! no agentpane hooks in {}, which Claude Code in {pane} reads\n    fix: `agentpane hooks install --settings {}`",
        settings.display(),
        settings.display()
    );
    assert!(
        run.stdout.contains(&note),
        "`{note}` not in:\n{}",
        run.stdout
    );

    // That fix done, the hook events would land in the agent's own state folder.
    let run = server.agentpane(&["hooks", "install", "--settings", settings.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{run:?}");
    to_fix(
        &server,
        &[
            &format!(
                "✗ hook events of Claude Code in {pane} go to {}",
                other.join(".local/state/agentpane").display()
            ),
            &format!(
                "start that agent with AGENTPANE_STATE_DIR={}",
                server.state_dir().display()
            ),
        ],
    );
}

#[test]
fn a_working_install_without_hooks_passes_with_a_note_naming_the_install_command() {
    // The README's install never mentions hooks: they are optional.
    let (server, pane) = setup(false);
    let settings = server.claude_dir().join("settings.json");
    let run = doctor(&server);
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert_eq!(fixes(&run), "", "{}", run.stdout);
    let note = format!(
        "! no agentpane hooks in {}, which Claude Code in {pane} reads\n    fix: `agentpane hooks install`",
        settings.display()
    );
    assert!(
        run.stdout.contains(&note),
        "`{note}` not in:\n{}",
        run.stdout
    );
    assert!(run.stdout.ends_with("all good\n"), "{}", run.stdout);
}

#[test]
fn hooks_naming_a_binary_that_is_gone_are_caught() {
    // `hooks install` writes the path of the binary that ran it; that binary is then removed
    // (`cargo clean`, the clone deleted).
    let server = TmuxServer::start();
    let gone = server.path().join("clone/target/release/agentpane");
    std::fs::create_dir_all(gone.parent().unwrap()).unwrap();
    std::fs::copy(agentpane_bin(), &gone).unwrap();
    let install = std::process::Command::new(&gone)
        .env_remove("TMUX")
        .envs(server.env())
        .args(["-L", &server.name, "hooks", "install"])
        .output()
        .unwrap();
    assert!(install.status.success(), "{install:?}");
    std::fs::remove_file(&gone).unwrap();
    let settings = server.claude_dir().join("settings.json");
    to_fix(
        &server,
        &[
            &format!(
                "✗ the hooks in {} run `{} hook`, which does not exist",
                settings.display(),
                gone.display()
            ),
            "fix: `agentpane hooks install` points them at this binary",
        ],
    );
}

/// The plugin files alone, in a folder of their own: a checkout with no binary and nothing
/// to build.
fn plugin_without_binary(server: &TmuxServer) -> std::path::PathBuf {
    let root = server.path().join("plugin");
    std::fs::create_dir_all(root.join("tmux")).unwrap();
    for file in ["agentpane.tmux", "tmux/agentpane.tmux"] {
        std::fs::copy(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(file),
            root.join(file),
        )
        .unwrap();
    }
    root.join("agentpane.tmux")
}

#[test]
fn no_binary_is_one_finding_with_its_fix() {
    let path = "/usr/local/bin:/usr/bin:/bin";
    assert!(
        path.split(':')
            .all(|d| !std::path::Path::new(d).join("agentpane").exists()),
        "agentpane is on {path}"
    );
    let server = TmuxServer::start_with(&[("PATH", path)]);
    std::fs::set_permissions(
        server.state_dir(),
        std::os::unix::fs::PermissionsExt::from_mode(0o700),
    )
    .unwrap();
    for (k, v) in [
        ("status-right", "#{agentpane_status} %H:%M"),
        ("window-status-format", "#I:#W#{agentpane_window_status}"),
        (
            "window-status-current-format",
            "#I:#W#{agentpane_window_status}",
        ),
    ] {
        server.tmux(&["set", "-g", k, v]);
    }
    server.tmux(&[
        "run-shell",
        plugin_without_binary(&server).to_str().unwrap(),
    ]);
    let fixes = to_fix(
        &server,
        &[
            "✗ the plugin (",
            "found no agentpane binary",
            "@agentpane-bin",
        ],
    );
    assert_eq!(fixes.matches('✗').count(), 1, "{fixes}");
}

#[test]
fn a_status_right_length_too_short_for_the_segment_is_a_note() {
    let server = TmuxServer::start();
    // tmux's default status-right-length (40) and its default title and date beside the
    // segment.
    load_plugin(
        &server,
        "#{agentpane_status} \"#{=21:pane_title}\" %H:%M %d-%b-%y",
    );
    server.tmux(&["select-pane", "-T", "a title of twenty-one"]);
    let run = doctor(&server);
    let note = run
        .stdout
        .lines()
        .find(|l| l.starts_with("! status-right-length is 40"))
        .unwrap_or_else(|| panic!("no note on status-right-length:\n{}", run.stdout));
    assert!(note.contains("tmux cuts what does not fit"), "{note}");
    assert!(run.stdout.contains("fix: add `set -g status-right-length"));
}

#[test]
fn without_a_server_the_json_is_still_one_document() {
    let run = agentpane_without_server(&["doctor", "--json"]);
    assert_eq!(run.code, 1, "{run:?}");
    let json = run.json();
    assert_eq!(json["ok"], false);
    assert_eq!(json["socket_path"], serde_json::Value::Null);
    let first = &json["findings"][0];
    assert_eq!(
        (first["topic"].as_str(), first["level"].as_str()),
        (Some("tmux"), Some("fix"))
    );
    assert!(
        first["text"].as_str().unwrap().contains("no tmux server"),
        "{first}"
    );
}

#[test]
fn prefix_h_shows_the_report_in_the_pane() {
    // The plugin's binary need not be on the shell's PATH: the key runs the one it found.
    let live = Live::start(&[]);
    live.keys(&["C-b", "H"]);
    let shown = live.wait_screen("the report", |s| {
        s.contains("all good") || s.contains("to fix")
    });
    let server = format!(
        "✓ server {}",
        live.server
            .tmux(&["display-message", "-p", "#{socket_path}"])
    );
    assert!(shown.contains(&server), "{shown}");
    assert!(shown.contains("✓ plugin loaded from"), "{shown}");
    live.keys(&["q"]);
    live.wait_screen("the pane again", |s| !s.contains("✓ plugin loaded from"));
    live.assert_clean();
}

#[test]
fn a_plugin_binary_that_is_gone_is_one_finding() {
    let server = TmuxServer::start();
    std::fs::set_permissions(
        server.state_dir(),
        std::os::unix::fs::PermissionsExt::from_mode(0o700),
    )
    .unwrap();
    load_plugin(&server, "#{agentpane_status} %H:%M");
    // The plugin uses a binary that `cargo clean` then removes.
    let gone = server.path().join("clone/target/release/agentpane");
    std::fs::create_dir_all(gone.parent().unwrap()).unwrap();
    std::fs::copy(agentpane_bin(), &gone).unwrap();
    server.tmux(&["set", "-g", "@agentpane-bin", gone.to_str().unwrap()]);
    server.tmux(&["run-shell", &plugin()]);
    std::fs::remove_file(&gone).unwrap();
    let fixes = to_fix(
        &server,
        &[
            &format!("✗ the plugin's binary {} is gone", gone.display()),
            &format!(
                "fix: `tmux -L {} run-shell {}/agentpane.tmux`",
                server.name,
                env!("CARGO_MANIFEST_DIR")
            ),
        ],
    );
    assert_eq!(fixes.matches('✗').count(), 1, "{fixes}");
}
