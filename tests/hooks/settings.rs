//! settings.json round trips through `hooks install|uninstall`.

use super::*;

const USER_SETTINGS: &str = r#"{
  "model": "opus",
  "permissions": {
    "allow": [
      "Bash(npm test:*)"
    ],
    "deny": []
  },
  "hooks": {
    "Stop": [
      {
        "matcher": "",
        "hooks": [
          {
            "type": "command",
            "command": "notify-send 'Claude finished'"
          }
        ]
      }
    ],
    "PreToolUse": [
      {
        "matcher": "Bash",
        "hooks": [
          {
            "type": "command",
            "command": "~/.claude/guard.sh",
            "timeout": 5
          }
        ]
      }
    ]
  },
  "statusLine": {
    "type": "command",
    "command": "~/.claude/statusline.sh"
  },
  "alwaysThinkingEnabled": true
}
"#;

fn backups(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().contains(".agentpane-backup-"))
        .collect();
    v.sort();
    v
}

fn ours(v: &Value, event: &str) -> usize {
    v["hooks"][event]
        .as_array()
        .map(|groups| {
            groups
                .iter()
                .flat_map(|g| g["hooks"].as_array().cloned().unwrap_or_default())
                .filter(|h| {
                    h["command"]
                        .as_str()
                        .is_some_and(|c| c.ends_with("agentpane hook"))
                })
                .count()
        })
        .unwrap_or(0)
}

#[test]
fn install_keeps_user_hooks_and_uninstall_restores_the_file() {
    let home = Home::new();
    let claude = home.dir.path().join("claude");
    fs::create_dir_all(&claude).unwrap();
    let settings = claude.join("settings.json");
    fs::write(&settings, USER_SETTINGS).unwrap();
    fs::set_permissions(&settings, fs::Permissions::from_mode(0o644)).unwrap();
    let file = settings.to_str().unwrap();

    let (out, _) = home.run(&["hooks", "install", "--settings", file], b"");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let installed = fs::read_to_string(&settings).unwrap();
    let v: Value = serde_json::from_str(&installed).unwrap();
    for event in agentpane::agents::claude::settings::EVENTS {
        assert_eq!(ours(&v, event), 1, "{event}");
    }
    // User hooks untouched, in place, first.
    assert_eq!(
        v["hooks"]["Stop"][0]["hooks"][0]["command"],
        "notify-send 'Claude finished'"
    );
    assert_eq!(v["hooks"]["PreToolUse"][0]["matcher"], "Bash");
    assert_eq!(v["hooks"]["PreToolUse"][0]["hooks"][0]["timeout"], 5);
    // Unrelated keys and their order kept.
    let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "model",
            "permissions",
            "hooks",
            "statusLine",
            "alwaysThinkingEnabled"
        ]
    );
    // Backup is the original, byte for byte.
    let b = backups(&claude);
    assert_eq!(b.len(), 1);
    assert_eq!(fs::read_to_string(&b[0]).unwrap(), USER_SETTINGS);
    let mode = fs::metadata(&settings).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o644, "permissions kept");

    // Install twice = once.
    let (out, _) = home.run(&["hooks", "install", "--settings", file], b"");
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains("already installed"));
    assert_eq!(fs::read_to_string(&settings).unwrap(), installed);
    assert_eq!(backups(&claude).len(), 1, "no backup when nothing changes");

    // Uninstall restores the original, here byte for byte (same layout).
    let (out, _) = home.run(&["hooks", "uninstall", "--settings", file], b"");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(fs::read_to_string(&settings).unwrap(), USER_SETTINGS);
    // Uninstall again: nothing to do.
    let (out, _) = home.run(&["hooks", "uninstall", "--settings", file], b"");
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(fs::read_to_string(&settings).unwrap(), USER_SETTINGS);
}

#[test]
fn uninstall_restores_the_value_of_an_oddly_formatted_file() {
    let home = Home::new();
    let settings = home.dir.path().join("settings.json");
    let original = "{\"hooks\":{\"Notification\":[]},\"env\":{\"B\":\"2\",\"A\":\"1\"}}";
    fs::write(&settings, original).unwrap();
    let file = settings.to_str().unwrap();
    home.run(&["hooks", "install", "--settings", file], b"");
    home.run(&["hooks", "install", "--settings", file], b"");
    home.run(&["hooks", "uninstall", "--settings", file], b"");
    let after = fs::read_to_string(&settings).unwrap();
    let before: Value = serde_json::from_str(original).unwrap();
    let now: Value = serde_json::from_str(&after).unwrap();
    assert_eq!(now, before);
    // The user's empty Notification array stays; install-created arrays are gone.
    assert_eq!(now["hooks"]["Notification"], serde_json::json!([]));
    assert_eq!(
        serde_json::to_string(&now).unwrap(),
        serde_json::to_string(&before).unwrap(),
        "key order kept"
    );
}

#[test]
fn install_creates_a_missing_file_and_uninstall_empties_it() {
    let home = Home::new();
    let claude = home.dir.path().join("cfg");
    let (out, _) = {
        let mut env = home.env();
        env.push(("CLAUDE_CONFIG_DIR", claude.clone()));
        let refs: Vec<(&str, &Path)> = env.iter().map(|(k, v)| (*k, v.as_path())).collect();
        agentpane(&["hooks", "install"], &refs, b"")
    };
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let settings = claude.join("settings.json");
    let v: Value = serde_json::from_slice(&fs::read(&settings).unwrap()).unwrap();
    assert_eq!(ours(&v, "SessionEnd"), 1);
    assert!(backups(&claude).is_empty(), "nothing to back up");
    let (out, _) = home.run(
        &[
            "hooks",
            "uninstall",
            "--settings",
            settings.to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(0));
    let v: Value = serde_json::from_slice(&fs::read(&settings).unwrap()).unwrap();
    assert_eq!(v, serde_json::json!({}));
}

#[test]
fn symlinked_settings_stay_a_symlink() {
    let home = Home::new();
    let dotfiles = home.dir.path().join("dotfiles");
    fs::create_dir_all(&dotfiles).unwrap();
    let target = dotfiles.join("claude-settings.json");
    fs::write(&target, "{\n  \"model\": \"sonnet\"\n}\n").unwrap();
    let link = home.dir.path().join("settings.json");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let (out, _) = home.run(
        &["hooks", "install", "--settings", link.to_str().unwrap()],
        b"",
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    let v: Value = serde_json::from_slice(&fs::read(&target).unwrap()).unwrap();
    assert_eq!(ours(&v, "Stop"), 1);
    assert_eq!(v["model"], "sonnet");
}

#[test]
fn invalid_settings_are_refused_untouched() {
    let home = Home::new();
    let settings = home.dir.path().join("settings.json");
    fs::write(&settings, "{ \"model\": \"opus\", }").unwrap();
    let (out, _) = home.run(
        &["hooks", "install", "--settings", settings.to_str().unwrap()],
        b"",
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not valid JSON"), "{err}");
    assert_eq!(
        fs::read_to_string(&settings).unwrap(),
        "{ \"model\": \"opus\", }"
    );
    assert!(backups(home.dir.path()).is_empty());
}

#[test]
fn pi_s_extension_is_installed_once_and_removed_and_claude_code_s_settings_stay_untouched() {
    let home = Home::new();
    let file = home.dir.path().join(".pi/agent/extensions/agentpane.ts");
    let (out, _) = home.run(&["hooks", "install", "--agent", "pi"], b"");
    assert!(out.status.success(), "{out:?}");
    let text = std::fs::read_to_string(&file).expect("the extension is written");
    assert!(text.contains("session_start") && text.contains("session_shutdown"));
    assert_eq!(text, agentpane::agents::pi::extension::SOURCE);
    let (again, _) = home.run(&["hooks", "install", "--agent", "pi"], b"");
    assert!(String::from_utf8_lossy(&again.stdout).contains("already installed"));
    assert!(
        !home.dir.path().join(".claude/settings.json").exists(),
        "--agent pi leaves Claude Code's settings alone"
    );
    let (out, _) = home.run(&["hooks", "uninstall", "--agent", "pi"], b"");
    assert!(out.status.success(), "{out:?}");
    assert!(!file.exists());
    // An agent that takes no hook file from agentpane is refused by name.
    let (out, _) = home.run(&["hooks", "install", "--agent", "codex"], b"");
    assert_eq!(out.status.code(), Some(2), "{out:?}");
}

#[test]
fn pi_s_extension_replaces_and_removes_only_a_file_agentpane_wrote() {
    let home = Home::new();
    let file = home.dir.path().join(".pi/agent/extensions/agentpane.ts");
    fs::create_dir_all(file.parent().unwrap()).unwrap();
    // The user's own extension of that name: neither overwritten nor deleted.
    let mine = "// my own pi extension\nexport default function (pi: any) {}\n";
    fs::write(&file, mine).unwrap();
    for verb in ["install", "uninstall"] {
        let (out, _) = home.run(&["hooks", verb, "--agent", "pi"], b"");
        assert_eq!(out.status.code(), Some(2), "{verb}: {out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(&format!(
                "{} was not written by agentpane (it lacks the first line `// agentpane's pi \
                 extension, written by `agentpane hooks install --agent pi` and removed by`)",
                file.display()
            )),
            "{verb}: {err}"
        );
        assert!(
            err.contains("move it away and run this again"),
            "{verb}: {err}"
        );
        assert_eq!(fs::read_to_string(&file).unwrap(), mine, "{verb}");
    }
    assert!(backups(file.parent().unwrap()).is_empty());
    // One an earlier agentpane wrote (its first line, another body): replaced, then removed.
    let first = agentpane::agents::pi::extension::SOURCE
        .lines()
        .next()
        .unwrap();
    fs::write(&file, format!("{first}\n// an older version\n")).unwrap();
    let (out, _) = home.run(&["hooks", "install", "--agent", "pi"], b"");
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        fs::read_to_string(&file).unwrap(),
        agentpane::agents::pi::extension::SOURCE
    );
    let (out, _) = home.run(&["hooks", "uninstall", "--agent", "pi"], b"");
    assert!(out.status.success(), "{out:?}");
    assert!(!file.exists());
}
