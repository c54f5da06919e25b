//! opencode's permission dialog as its screen draws it (1.18: `△ Permission required`, then
//! `Allow once   Allow always   Reject`).

use crate::read::dialog::{content, join_content, no_choices, Dialog, PromptKind, TitleLine};

/// Its one dialog. It names a kind (`# Shell command`); the database names the tool.
pub const DIALOGS: &[Dialog] = &[Dialog {
    titles: &[
        TitleLine::Is("△ Permission required"),
        TitleLine::Is("Permission required"),
    ],
    shown: "Permission required",
    kind: PromptKind::Permission,
    approves: |line| line.starts_with("Allow once"),
    tool: |_, _| None,
    detail: |_, below| {
        join_content(
            below
                .iter()
                .take_while(|l| !content(l).starts_with("Allow once")),
        )
    },
    // Its options are chosen with arrows from wherever the selection is; agentpane does not
    // press them.
    choices: no_choices,
}];
