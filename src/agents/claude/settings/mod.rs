//! `agentpane hooks install|uninstall`: adds agentpane's hook entries to Claude Code's
//! `settings.json` and takes exactly those away again.
//!
//! The edit is a pure function on the JSON value (key order kept by serde_json's
//! `preserve_order`); the file side backs the original up, writes atomically, keeps the
//! file's permissions and follows a symlinked settings file to its target. What `install`
//! had to create (the `hooks` object, an event's array) is remembered in
//! `<state>/hooks-install.json`, so `uninstall` removes empty containers only when install
//! made them, and the file returns to its original JSON value.

mod status_line;

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::events::Time;
use crate::paths;

/// The hook events agentpane listens to.
pub const EVENTS: [&str; 7] = [
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "Notification",
    "Stop",
    "SessionEnd",
];

/// The install record's file name in the state folder.
pub const RECORD_FILE: &str = "hooks-install.json";

/// The command line agentpane installs: the full path of this executable, shell-quoted when
/// needed, and ` hook`.
pub fn hook_command(exe: &Path) -> String {
    format!("{} hook", shell_quote(&exe.to_string_lossy()))
}

/// True for a command `install` wrote (by any agentpane path): one word whose basename is
/// `agentpane`, then exactly `hook`.
pub fn is_our_command(command: &str) -> bool {
    hook_program(command).is_some_and(|p| p.rsplit('/').next() == Some("agentpane"))
}

/// The program of a `PROGRAM hook` command line, unquoted: what the hook runs.
pub fn hook_program(command: &str) -> Option<String> {
    let program = command.trim().strip_suffix(" hook")?.trim_end();
    match program
        .strip_prefix('\'')
        .and_then(|p| p.strip_suffix('\''))
    {
        Some(inner) => Some(inner.replace("'\\''", "'")),
        None if program.contains(char::is_whitespace) => None,
        None => Some(program.to_string()),
    }
}

fn shell_quote(s: &str) -> String {
    let plain = !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-+,:@%".contains(&b));
    if plain {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// Containers `install` created in one settings file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Created {
    /// The top-level `hooks` object.
    #[serde(default)]
    pub hooks_object: bool,
    /// Event arrays (`hooks.Stop`, …).
    #[serde(default)]
    pub event_arrays: Vec<String>,
}

impl Created {
    fn merge(&mut self, other: &Created) {
        self.hooks_object |= other.hooks_object;
        for e in &other.event_arrays {
            if !self.event_arrays.contains(e) {
                self.event_arrays.push(e.clone());
            }
        }
    }
}

/// Adds one hook group running `command` to each of [`EVENTS`]. An event that already has
/// an agentpane entry keeps it (its command is updated to `command` when the binary moved).
/// Returns whether anything changed and which containers were created.
pub fn install(settings: &mut Value, command: &str) -> Result<(bool, Created)> {
    let root = settings
        .as_object_mut()
        .context("settings.json is not a JSON object")?;
    let mut created = Created::default();
    if !root.contains_key("hooks") {
        root.insert("hooks".into(), Value::Object(Map::new()));
        created.hooks_object = true;
    }
    let hooks = root
        .get_mut("hooks")
        .and_then(Value::as_object_mut)
        .context("\"hooks\" in settings.json is not an object")?;
    let mut changed = created.hooks_object;
    for event in EVENTS {
        if !hooks.contains_key(event) {
            hooks.insert(event.into(), Value::Array(Vec::new()));
            created.event_arrays.push(event.into());
        }
        let groups = hooks
            .get_mut(event)
            .and_then(Value::as_array_mut)
            .with_context(|| format!("\"hooks.{event}\" in settings.json is not an array"))?;
        let mut found = false;
        for hook in groups.iter_mut().flat_map(group_hooks_mut) {
            if hook_command_of(hook).is_some_and(is_our_command) {
                found = true;
                if hook_command_of(hook) != Some(command) {
                    hook["command"] = Value::String(command.into());
                    changed = true;
                }
            }
        }
        if !found {
            groups.push(serde_json::json!({
                "matcher": "",
                "hooks": [{ "type": "command", "command": command }]
            }));
            changed = true;
        }
    }
    Ok((changed, created))
}

/// Removes every agentpane hook entry, the groups left empty by that, and — when `created`
/// says install made them — the event arrays and `hooks` object left empty. Returns whether
/// anything changed.
pub fn uninstall(settings: &mut Value, created: Option<&Created>) -> Result<bool> {
    let Some(root) = settings.as_object_mut() else {
        bail!("settings.json is not a JSON object");
    };
    let Some(hooks) = root.get_mut("hooks").and_then(Value::as_object_mut) else {
        return Ok(false);
    };
    let mut changed = false;
    let events: Vec<String> = hooks.keys().cloned().collect();
    for event in events {
        let Some(groups) = hooks.get_mut(&event).and_then(Value::as_array_mut) else {
            continue;
        };
        groups.retain_mut(|group| {
            let Some(list) = group.get_mut("hooks").and_then(Value::as_array_mut) else {
                return true;
            };
            let before = list.len();
            list.retain(|h| !hook_command_of(h).is_some_and(is_our_command));
            if list.len() == before {
                return true;
            }
            changed = true;
            !list.is_empty()
        });
        let made_by_install = created.is_some_and(|c| c.event_arrays.contains(&event));
        if groups.is_empty() && made_by_install {
            hooks.shift_remove(&event);
            changed = true;
        }
    }
    if hooks.is_empty() && created.is_some_and(|c| c.hooks_object) {
        root.shift_remove("hooks");
        changed = true;
    }
    Ok(changed)
}

/// agentpane's hooks found in one settings value.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Installed {
    /// The [`EVENTS`] that run an agentpane `hook` command.
    pub events: Vec<&'static str>,
    /// That command (the first one found).
    pub command: Option<String>,
}

/// Which of agentpane's hooks `settings` holds.
pub fn installed(settings: &Value) -> Installed {
    let mut out = Installed::default();
    let Some(hooks) = settings.get("hooks").and_then(Value::as_object) else {
        return out;
    };
    for event in EVENTS {
        let ours = hooks
            .get(event)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|group| group.get("hooks").and_then(Value::as_array))
            .flatten()
            .filter_map(hook_command_of)
            .find(|c| is_our_command(c));
        if let Some(command) = ours {
            out.events.push(event);
            out.command.get_or_insert_with(|| command.to_string());
        }
    }
    out
}

/// [`installed`] for the settings file at `path` (none there: nothing installed).
pub fn installed_file(path: &Path) -> Result<Installed> {
    Ok(installed(&SettingsFile::read(path)?.value))
}

fn group_hooks_mut(group: &mut Value) -> impl Iterator<Item = &mut Value> {
    group
        .get_mut("hooks")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
}

fn hook_command_of(hook: &Value) -> Option<&str> {
    hook.get("command").and_then(Value::as_str)
}

/// What a file-level install or uninstall did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// The file written (a symlink's target).
    pub path: PathBuf,
    pub changed: bool,
    /// The copy of the original, when there was one to keep.
    pub backup: Option<PathBuf>,
    /// What was left undone, for the user.
    pub note: Option<String>,
}

/// `$CLAUDE_CONFIG_DIR/settings.json`, else `~/.claude/settings.json`.
pub fn default_settings_path() -> PathBuf {
    match std::env::var_os("CLAUDE_CONFIG_DIR").filter(|v| !v.is_empty()) {
        Some(dir) => PathBuf::from(dir).join("settings.json"),
        None => paths::home_dir().join(".claude").join("settings.json"),
    }
}

/// The `PROGRAM statusline` part of agentpane's status-line command for the executable at
/// `exe` (shell-quoted when needed).
pub fn status_line_program(exe: &Path) -> String {
    shell_quote(&exe.to_string_lossy())
}

/// Installs `command` into the settings file at `path`, and with `status_line` (agentpane's
/// program, [`status_line_program`]) its status-line command in front of the user's; the
/// install record lives in `state_dir`. A status line agentpane cannot wrap (one that runs no
/// command) is left as it is and said in [`Outcome::note`].
pub fn install_file(
    path: &Path,
    command: &str,
    status_line: Option<&str>,
    state_dir: &Path,
    now: Time,
) -> Result<Outcome> {
    let file = SettingsFile::read(path)?;
    let mut value = file.value.clone();
    let (mut changed, created) = install(&mut value, command)
        .with_context(|| format!("cannot add hooks to {}", file.path.display()))?;
    let mut note = None;
    if let Some(program) = status_line {
        match status_line::install(&mut value, program) {
            Ok(c) => changed |= c,
            Err(e) => note = Some(format!("status line not wrapped: {e:#}")),
        }
    }
    if !changed {
        return Ok(Outcome {
            path: file.path,
            changed: false,
            backup: None,
            note,
        });
    }
    let mut records = Records::load(state_dir);
    let key = file.path.to_string_lossy().into_owned();
    records.0.entry(key).or_default().merge(&created);
    // Record first: a crash between the two writes leaves a record that only makes a
    // later uninstall tidier, never a file whose containers cannot be attributed.
    records.save(state_dir)?;
    let backup = file.write(&value, now)?;
    Ok(Outcome {
        path: file.path,
        changed: true,
        backup,
        note,
    })
}

/// Removes agentpane's hooks from the settings file at `path`.
pub fn uninstall_file(path: &Path, state_dir: &Path, now: Time) -> Result<Outcome> {
    if !path.exists() {
        return Ok(Outcome {
            path: path.to_path_buf(),
            changed: false,
            backup: None,
            note: None,
        });
    }
    let file = SettingsFile::read(path)?;
    let mut records = Records::load(state_dir);
    let key = file.path.to_string_lossy().into_owned();
    let mut value = file.value.clone();
    let changed = uninstall(&mut value, records.0.get(&key))
        .with_context(|| format!("cannot remove hooks from {}", file.path.display()))?;
    let changed = status_line::uninstall(&mut value) | changed;
    let backup = if changed {
        file.write(&value, now)?
    } else {
        None
    };
    if records.0.remove(&key).is_some() {
        records.save(state_dir)?;
    }
    Ok(Outcome {
        path: file.path,
        changed,
        backup,
        note: None,
    })
}

/// The install records of every settings file, keyed by path.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Records(BTreeMap<String, Created>);

impl Records {
    fn load(state_dir: &Path) -> Records {
        fs::read(state_dir.join(RECORD_FILE))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default()
    }

    fn save(&self, state_dir: &Path) -> Result<()> {
        let path = state_dir.join(RECORD_FILE);
        if self.0.is_empty() {
            return match fs::remove_file(&path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    Err(e).with_context(|| format!("cannot remove {}", path.display()))
                }
                _ => Ok(()),
            };
        }
        paths::ensure_private_dir(state_dir)?;
        let data = serde_json::to_vec_pretty(self).context("cannot encode install record")?;
        paths::write_atomic(&path, &data)
    }
}

/// A settings file as read: where it really is, its bytes, its value, its layout.
struct SettingsFile {
    path: PathBuf,
    original: Option<Vec<u8>>,
    value: Value,
    mode: Option<u32>,
}

impl SettingsFile {
    fn read(path: &Path) -> Result<SettingsFile> {
        let real = match fs::canonicalize(path) {
            Ok(p) => p,
            Err(_) if !path.exists() => path.to_path_buf(),
            Err(e) => return Err(e).with_context(|| format!("cannot resolve {}", path.display())),
        };
        let original = match fs::read(&real) {
            Ok(bytes) => Some(bytes),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", real.display())),
        };
        let value = match original.as_deref() {
            Some(b) if !b.iter().all(u8::is_ascii_whitespace) => serde_json::from_slice(b)
                .with_context(|| {
                    format!(
                        "{} is not valid JSON; fix it (or pass --settings FILE) and retry",
                        real.display()
                    )
                })?,
            _ => Value::Object(Map::new()),
        };
        let mode = fs::metadata(&real)
            .ok()
            .map(|m| m.permissions().mode() & 0o7777);
        Ok(SettingsFile {
            path: real,
            original,
            value,
            mode,
        })
    }

    /// Backs up the original (when there is one) and replaces the file with `value`, in the
    /// original's indentation and permissions. Returns the backup path.
    fn write(&self, value: &Value, now: Time) -> Result<Option<PathBuf>> {
        let dir = self
            .path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        if !dir.exists() {
            fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        }
        let backup = match &self.original {
            Some(bytes) => Some(self.backup(bytes, now)?),
            None => None,
        };
        let indent = self
            .original
            .as_deref()
            .and_then(detect_indent)
            .unwrap_or_else(|| b"  ".to_vec());
        let mut out = Vec::new();
        let formatter = serde_json::ser::PrettyFormatter::with_indent(&indent);
        let mut ser = serde_json::Serializer::with_formatter(&mut out, formatter);
        value
            .serialize(&mut ser)
            .context("cannot encode settings")?;
        let trailing_newline = self
            .original
            .as_deref()
            .map_or(true, |b| b.ends_with(b"\n"));
        if trailing_newline {
            out.push(b'\n');
        }
        paths::write_atomic(&self.path, &out)?;
        if let Some(mode) = self.mode {
            fs::set_permissions(&self.path, fs::Permissions::from_mode(mode)).with_context(
                || format!("cannot restore permissions of {}", self.path.display()),
            )?;
        }
        Ok(backup)
    }

    fn backup(&self, bytes: &[u8], now: Time) -> Result<PathBuf> {
        let name = self
            .path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "settings.json".into());
        let stamp = now.format("%Y%m%dT%H%M%SZ");
        for n in 0..100 {
            let suffix = if n == 0 {
                String::new()
            } else {
                format!("-{n}")
            };
            let path = self
                .path
                .with_file_name(format!("{name}.agentpane-backup-{stamp}{suffix}"));
            match paths::create_exclusive(&path, bytes) {
                Ok(()) => return Ok(path),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => {
                    return Err(e)
                        .with_context(|| format!("cannot write backup {}", path.display()))
                }
            }
        }
        bail!(
            "cannot find a free backup name next to {}",
            self.path.display()
        )
    }
}

/// The indentation of the first indented line (spaces or tabs), if any.
fn detect_indent(bytes: &[u8]) -> Option<Vec<u8>> {
    let text = std::str::from_utf8(bytes).ok()?;
    let line = text.lines().skip(1).find(|l| !l.trim().is_empty())?;
    let indent: Vec<u8> = line
        .bytes()
        .take_while(|b| *b == b' ' || *b == b'\t')
        .collect();
    (!indent.is_empty() && indent.len() <= 8).then_some(indent)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const CMD: &str = "/opt/bin/agentpane hook";

    #[test]
    fn recognises_our_commands_only() {
        assert!(is_our_command("/opt/bin/agentpane hook"));
        assert!(is_our_command("agentpane hook"));
        assert!(is_our_command("'/home/me/my tools/agentpane' hook"));
        assert!(!is_our_command("agentpane hooks install"));
        assert!(!is_our_command("notify-send agentpane hook"));
        assert!(!is_our_command("/opt/bin/not-agentpane hook"));
        assert!(!is_our_command("echo done"));
        let quoted = hook_command(Path::new("/home/me/it's here/agentpane"));
        assert!(is_our_command(&quoted), "{quoted}");
        assert_eq!(
            hook_command(Path::new("/usr/bin/agentpane")),
            "/usr/bin/agentpane hook"
        );
    }

    #[test]
    fn install_into_empty_object_then_uninstall_restores_it() {
        let mut v = json!({});
        let (changed, created) = install(&mut v, CMD).unwrap();
        assert!(changed);
        assert!(created.hooks_object);
        assert_eq!(created.event_arrays.len(), EVENTS.len());
        assert_eq!(v["hooks"]["Stop"][0]["hooks"][0]["command"], CMD);
        assert!(uninstall(&mut v, Some(&created)).unwrap());
        assert_eq!(v, json!({}));
    }

    #[test]
    fn installed_lists_our_events_and_command_only() {
        let mut v = json!({"hooks": {"Stop": [{"hooks": [{"command": "echo done"}]}]}});
        assert_eq!(installed(&v), Installed::default());
        install(&mut v, CMD).unwrap();
        let found = installed(&v);
        assert_eq!(found.events, EVENTS.to_vec());
        assert_eq!(found.command.as_deref(), Some(CMD));
        v["hooks"]["Stop"] = json!([{"hooks": [{"command": "echo done"}]}]);
        assert!(!installed(&v).events.contains(&"Stop"));
    }

    #[test]
    fn uninstall_without_record_keeps_empty_containers() {
        let mut v = json!({});
        install(&mut v, CMD).unwrap();
        uninstall(&mut v, None).unwrap();
        assert_eq!(v["hooks"]["Stop"], json!([]));
    }

    #[test]
    fn moved_binary_updates_in_place() {
        let mut v = json!({});
        install(&mut v, CMD).unwrap();
        let (changed, _) = install(&mut v, "/new/agentpane hook").unwrap();
        assert!(changed);
        assert_eq!(v["hooks"]["Stop"].as_array().unwrap().len(), 1);
        assert_eq!(
            v["hooks"]["Stop"][0]["hooks"][0]["command"],
            "/new/agentpane hook"
        );
    }

    #[test]
    fn rejects_unexpected_shapes() {
        assert!(install(&mut json!([]), CMD).is_err());
        assert!(install(&mut json!({"hooks": []}), CMD).is_err());
        assert!(install(&mut json!({"hooks": {"Stop": {}}}), CMD).is_err());
    }

    #[test]
    fn indent_detection() {
        assert_eq!(
            detect_indent(b"{\n    \"a\": 1\n}\n"),
            Some(b"    ".to_vec())
        );
        assert_eq!(detect_indent(b"{\n\t\"a\": 1\n}"), Some(b"\t".to_vec()));
        assert_eq!(detect_indent(b"{\"a\":1}"), None);
    }
}
