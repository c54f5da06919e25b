//! Claude Code's `statusLine` setting under `hooks install`: agentpane's `statusline` command
//! takes its place and runs the user's own command after it (`PROGRAM statusline --then
//! 'USER COMMAND'`), so `hooks uninstall` finds the user's command, byte for byte, in the
//! setting itself. Pure edits of the settings value.

use anyhow::{bail, Result};
use serde_json::{json, Value};

/// The setting's key in settings.json.
pub const KEY: &str = "statusLine";

/// agentpane's status-line command: `program` (already shell-quoted) `statusline`, then the
/// user's own command when there is one.
pub fn command(program: &str, user: Option<&str>) -> String {
    match user {
        Some(u) => format!("{program} statusline --then {}", shell_quote_always(u)),
        None => format!("{program} statusline"),
    }
}

/// For a command [`command`] wrote (by any agentpane path): `Some(the user's command)`, or
/// `Some(None)` when it runs agentpane's alone. `None` for any other command.
pub fn ours(command: &str) -> Option<Option<String>> {
    let words = words(command)?;
    let program = words.first()?;
    if program.rsplit('/').next() != Some("agentpane") || words.get(1)? != "statusline" {
        return None;
    }
    match &words[2..] {
        [] => Some(None),
        [then, user] if then == "--then" => Some(Some(user.clone())),
        _ => None,
    }
}

/// Puts agentpane's command (`program`, shell-quoted) in the setting: in place of the user's
/// command (kept after `--then`), or as the whole setting when there is none; a command of
/// agentpane's already there gets `program` (the binary moved). A setting that runs no
/// command (another `type`) is an error, left as it is. Whether anything changed.
pub fn install(settings: &mut Value, program: &str) -> Result<bool> {
    let Some(root) = settings.as_object_mut() else {
        bail!("settings.json is not a JSON object");
    };
    let Some(line) = root.get_mut(KEY) else {
        root.insert(
            KEY.into(),
            json!({"type": "command", "command": command(program, None)}),
        );
        return Ok(true);
    };
    let Some(current) = line.get("command").and_then(Value::as_str) else {
        bail!("\"{KEY}\" in settings.json runs no command: left as it is");
    };
    let wanted = match ours(current) {
        Some(user) => command(program, user.as_deref()),
        None => command(program, Some(current)),
    };
    if current == wanted {
        return Ok(false);
    }
    line["command"] = Value::String(wanted);
    Ok(true)
}

/// Takes agentpane's command out of the setting: the user's command back in its place, or
/// the whole setting away when it ran agentpane's alone. Whether anything changed.
pub fn uninstall(settings: &mut Value) -> bool {
    let Some(root) = settings.as_object_mut() else {
        return false;
    };
    let Some(user) = root
        .get(KEY)
        .and_then(|l| l.get("command"))
        .and_then(Value::as_str)
        .and_then(ours)
    else {
        return false;
    };
    match user {
        Some(user) => root[KEY]["command"] = Value::String(user),
        None => {
            root.shift_remove(KEY);
        }
    }
    true
}

/// `s` in single quotes (`'` written `'\''`), whatever it holds: read back by [`words`].
fn shell_quote_always(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// The words of a command line written by [`command`]: plain words, single-quoted parts and
/// backslash-escaped characters. `None` for anything else a shell would expand.
fn words(line: &str) -> Option<Vec<String>> {
    let mut out = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' => out.extend(word.take()),
            '\'' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next()? {
                        '\'' => break,
                        c => w.push(c),
                    }
                }
            }
            '\\' => word.get_or_insert_with(String::new).push(chars.next()?),
            c if c.is_ascii_alphanumeric() || "/._-+,:@%".contains(c) => {
                word.get_or_insert_with(String::new).push(c)
            }
            _ => return None,
        }
    }
    out.extend(word);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const ME: &str = "/opt/bin/agentpane";

    #[test]
    fn the_users_command_comes_back_byte_for_byte() {
        for user in [
            "~/.claude/statusline.sh",
            "bash -c 'echo \"$PWD\" | cut -c1-20'",
            "printf '%s' it\\'s; echo done",
            "line one\nline two\t'quoted'",
            "",
        ] {
            let c = command(ME, Some(user));
            assert_eq!(ours(&c), Some(Some(user.to_string())), "{c}");
            let quoted = command("'/home/me/my tools/agentpane'", Some(user));
            assert_eq!(ours(&quoted), Some(Some(user.to_string())), "{quoted}");
        }
        assert_eq!(ours(&command(ME, None)), Some(None));
    }

    #[test]
    fn other_commands_are_not_ours() {
        for other in [
            "~/.claude/statusline.sh",
            "agentpane status",
            "/opt/bin/not-agentpane statusline",
            "agentpane statusline --then",
            "agentpane statusline; rm -rf x",
            "agentpane statusline --then 'unclosed",
            "agentpane statusline --other 'x'",
        ] {
            assert_eq!(ours(other), None, "{other}");
        }
    }

    #[test]
    fn install_wraps_then_uninstall_restores_and_install_is_idempotent() {
        let original =
            json!({"statusLine": {"type": "command", "command": "~/sl.sh", "padding": 0}});
        let mut v = original.clone();
        assert!(install(&mut v, ME).unwrap());
        assert_eq!(
            v["statusLine"]["command"],
            "/opt/bin/agentpane statusline --then '~/sl.sh'"
        );
        assert_eq!(v["statusLine"]["padding"], 0);
        assert!(!install(&mut v, ME).unwrap(), "twice = once");
        assert!(install(&mut v, "/new/agentpane").unwrap(), "moved binary");
        assert_eq!(
            v["statusLine"]["command"],
            "/new/agentpane statusline --then '~/sl.sh'"
        );
        assert!(uninstall(&mut v));
        assert_eq!(v, original);
        assert!(!uninstall(&mut v));
    }

    #[test]
    fn without_a_status_line_ours_is_added_alone_and_removed_whole() {
        let original = json!({"model": "opus"});
        let mut v = original.clone();
        assert!(install(&mut v, ME).unwrap());
        assert_eq!(
            v["statusLine"],
            json!({"type": "command", "command": "/opt/bin/agentpane statusline"})
        );
        assert!(uninstall(&mut v));
        assert_eq!(v, original);
    }

    #[test]
    fn a_setting_that_runs_no_command_is_left_alone() {
        let mut v = json!({"statusLine": {"type": "static"}});
        assert!(install(&mut v, ME).is_err());
        assert_eq!(v, json!({"statusLine": {"type": "static"}}));
        assert!(install(&mut json!([]), ME).is_err());
    }
}
