//! agentpane's pi extension (`extension.ts` beside this file): the link from a pi process to
//! its session log that pi itself does not give (see [`super::locate`]). `agentpane hooks
//! install --agent pi` writes it where pi loads extensions from by itself, `uninstall`
//! removes it. It records `{pid, sessionFile, cwd, reason, time}` at each `session_start`
//! (startup, `/new`, `/resume`, `/fork`, `/reload`) into `<agentpane state>/pi/<pid>.json`
//! and removes the record at `session_shutdown` when pi quits; it never sees the
//! conversation and runs nothing. Its first line marks the file as agentpane's: `install`
//! replaces and `uninstall` removes only a file that starts with it, so it stays the same in
//! every version.

use std::path::Path;

use crate::agents::HookFile;

/// The extension's source, as written.
pub const SOURCE: &str = include_str!("extension.ts");

/// Its file name in pi's extensions folder.
pub const FILE_NAME: &str = "agentpane.ts";

/// Where it goes for the user whose home is `home` and environment `var`:
/// `$PI_CODING_AGENT_DIR/extensions/agentpane.ts`, else `~/.pi/agent/extensions/agentpane.ts`.
pub fn hook_file(home: &Path, var: &dyn Fn(&str) -> Option<String>) -> HookFile {
    let agent_dir = var("PI_CODING_AGENT_DIR")
        .filter(|d| !d.is_empty())
        .map(|d| match d.strip_prefix("~/") {
            Some(rest) => home.join(rest),
            None => d.into(),
        })
        .unwrap_or_else(|| home.join(".pi/agent"));
    HookFile {
        path: agent_dir.join("extensions").join(FILE_NAME),
        text: SOURCE,
        what: "pi extension (records each pi process's session file)",
    }
}

#[cfg(test)]
mod tests {
    /// The first line every version of the extension has had: files written by an earlier
    /// agentpane are still recognised as agentpane's.
    #[test]
    fn the_first_line_marks_the_file_as_agentpane_s() {
        assert_eq!(
            super::SOURCE.lines().next(),
            Some(
                "// agentpane's pi extension, written by `agentpane hooks install --agent pi` \
                 and removed by"
            )
        );
    }
}
