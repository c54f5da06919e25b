//! Agent versions: the ones verified in CI (the pins of `tests/real/clients.txt`, embedded at
//! build time so the list has one home) and the one a running agent is.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::events::AgentKind;

/// The pinned real clients, as the real-client suite installs them.
const CLIENTS: &str = include_str!("../../tests/real/clients.txt");

/// One verified agent version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Verified {
    /// The agent's name (`claude`, `codex`, …).
    pub agent: String,
    pub version: String,
}

/// The verified versions.
pub fn verified() -> Vec<Verified> {
    parse(CLIENTS)
}

/// Parses `agent version npm-package` lines; `#` comments and blank lines are skipped.
fn parse(text: &str) -> Vec<Verified> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            Some(Verified {
                agent: f.next()?.to_string(),
                version: f.next()?.to_string(),
            })
        })
        .collect()
}

/// The versions of `kind` verified, in list order.
pub fn versions_of(list: &[Verified], kind: AgentKind) -> Vec<&str> {
    list.iter()
        .filter(|v| v.agent == kind.name())
        .map(|v| v.version.as_str())
        .collect()
}

/// Whether `version` of `kind` is one of the verified ones (`0.171.0-linux-x64` counts as
/// `0.171.0`).
pub fn is_verified(list: &[Verified], kind: AgentKind, version: &str) -> bool {
    versions_of(list, kind).contains(&release(version))
}

/// The leading `1.2.3` of a version string.
fn release(version: &str) -> &str {
    let end = version
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(version.len());
    version[..end].trim_end_matches('.')
}

/// The version of the agent program at one of `paths` (its executable, its script): the
/// `package.json` of the npm package it lives in (`…/node_modules/@openai/codex/…`), or a
/// native install's `versions/<version>` file.
pub fn from_install(kind: AgentKind, paths: &[PathBuf]) -> Option<String> {
    paths.iter().find_map(|p| from_path(kind, p))
}

fn from_path(kind: AgentKind, path: &Path) -> Option<String> {
    let parent = path.parent()?;
    if parent.file_name().is_some_and(|n| n == "versions") {
        let name = path.file_name()?.to_str()?;
        if name.starts_with(|c: char| c.is_ascii_digit()) && name.contains('.') {
            return Some(name.to_string());
        }
    }
    parent.ancestors().take(8).find_map(|dir| {
        let text = std::fs::read_to_string(dir.join("package.json")).ok()?;
        let v: serde_json::Value = serde_json::from_str(&text).ok()?;
        let name = v.get("name")?.as_str()?;
        let unscoped = name.rsplit('/').next().unwrap_or(name);
        unscoped
            .starts_with(kind.name())
            .then(|| v.get("version")?.as_str().map(str::to_string))?
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pinned_clients_are_the_verified_versions() {
        let list = verified();
        assert!(is_verified(&list, AgentKind::Claude, "2.1.332"));
        assert!(is_verified(&list, AgentKind::Codex, "0.171.0-linux-x64"));
        assert!(!is_verified(&list, AgentKind::Codex, "0.172.0"));
        assert!(!is_verified(
            &list,
            AgentKind::Claude,
            "0.0.0-agentpane-fake"
        ));
        for kind in [
            AgentKind::Claude,
            AgentKind::Codex,
            AgentKind::Gemini,
            AgentKind::Opencode,
        ] {
            assert!(!versions_of(&list, kind).is_empty(), "{kind} has a pin");
        }
    }

    #[test]
    fn comments_and_blank_lines_are_not_versions() {
        let list = parse("# agent version package\n\nclaude 1.2.3 pkg\n  codex 0.1.0 p \n");
        assert_eq!(
            list,
            vec![
                Verified {
                    agent: "claude".into(),
                    version: "1.2.3".into()
                },
                Verified {
                    agent: "codex".into(),
                    version: "0.1.0".into()
                },
            ]
        );
    }

    #[test]
    fn an_npm_install_says_its_version_in_its_package_json() {
        let dir = tempfile::tempdir().unwrap();
        let pkg = dir.path().join("node_modules/@openai/codex-linux-x64");
        let exe = pkg.join("vendor/x86_64/codex/codex");
        std::fs::create_dir_all(exe.parent().unwrap()).unwrap();
        std::fs::write(
            pkg.join("package.json"),
            r#"{"name":"@openai/codex","version":"0.171.0-linux-x64"}"#,
        )
        .unwrap();
        // A package of another name on the way up is not the agent's.
        std::fs::write(
            exe.parent().unwrap().join("package.json"),
            r#"{"name":"vendored-helper","version":"9.9.9"}"#,
        )
        .unwrap();
        assert_eq!(
            from_install(AgentKind::Codex, &[exe]).as_deref(),
            Some("0.171.0-linux-x64")
        );
    }

    #[test]
    fn a_native_install_is_named_by_its_version() {
        let exe = PathBuf::from("/home/u/.local/share/claude/versions/2.1.197");
        assert_eq!(
            from_install(AgentKind::Claude, &[exe]).as_deref(),
            Some("2.1.197")
        );
        let other = PathBuf::from("/usr/local/bin/claude");
        assert_eq!(from_install(AgentKind::Claude, &[other]), None);
    }
}
