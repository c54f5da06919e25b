//! Where a Codex process keeps its files: its home, and the session id a rollout's name
//! carries. Shared by the locator and the app-server daemon reader.

use std::path::{Path, PathBuf};

/// The home of a codex process: its `CODEX_HOME`, else `<its HOME>/.codex`, else
/// `fallback_home/.codex`. The second value says which.
pub fn codex_home(pid: u32, fallback_home: &Path) -> (PathBuf, &'static str) {
    crate::agents::locate::agent_root(pid, "CODEX_HOME", ".codex", fallback_home)
}

/// The session id in a rollout name: `rollout-2026-06-05T04-58-20-<uuid>.jsonl`.
pub fn session_id_of(path: &Path) -> Option<String> {
    let stem = path.file_stem()?.to_str()?;
    let id = stem.get(stem.len().checked_sub(36)?..)?;
    (id.chars().all(|c| c.is_ascii_hexdigit() || c == '-') && id.contains('-'))
        .then(|| id.to_string())
}
