//! Cline CLI's approval dialog as its screen draws it (3.0.65, with `--auto-approve false`;
//! fixtures/real-clients/cline-3.0.65/pending/screen.txt), in place of its input box:
//!
//! ```text
//!  Cline needs permission
//!
//!  Approve tool call?
//!
//!  run_commands
//!
//!    $ rm -rf scratch
//!
//!   [y] Approve   [n] Deny
//! ```
//!
//! `y` approves, `n` denies (Escape denies too).

use crate::read::dialog::{content, join_content, Choices, Dialog, PromptKind, TitleLine};

/// Its one approval dialog.
pub const DIALOGS: &[Dialog] = &[Dialog {
    titles: &[TitleLine::Is("Approve tool call?")],
    shown: "Approve tool call?",
    kind: PromptKind::Permission,
    options,
    approves: |option| option == "Approve",
    tool: |_, below| first_line(below).map(str::to_string),
    detail: |_, below| {
        let end = keys_line(below).unwrap_or(below.len());
        let from = below
            .iter()
            .position(|l| !content(l).is_empty())
            .map_or(end, |i| i + 1)
            .min(end);
        join_content(below[from..end].iter())
    },
    choices,
}];

/// The tool's name: the first line under the title.
fn first_line<'a>(below: &[&'a str]) -> Option<&'a str> {
    let end = keys_line(below)?;
    below[..end]
        .iter()
        .map(|l| content(l))
        .find(|l| !l.is_empty())
}

/// Where its key line (`[y] Approve   [n] Deny`) is.
fn keys_line(below: &[&str]) -> Option<usize> {
    below.iter().position(|l| content(l).starts_with("[y] "))
}

/// `[k] Label` pairs of its key line.
fn keyed(below: &[&str]) -> Vec<(String, String)> {
    let Some(at) = keys_line(below) else {
        return Vec::new();
    };
    content(below[at])
        .split('[')
        .filter_map(|part| {
            let (key, label) = part.split_once(']')?;
            let label = label.trim();
            (key.chars().count() == 1 && !label.is_empty())
                .then(|| (key.to_string(), label.to_string()))
        })
        .collect()
}

fn options(below: &[&str]) -> Vec<String> {
    keyed(below).into_iter().map(|(_, label)| label).collect()
}

fn choices(below: &[&str]) -> Choices {
    let key = |label: &str| {
        keyed(below)
            .into_iter()
            .find(|(_, l)| l == label)
            .map(|(k, _)| vec![k])
    };
    Choices {
        allow: key("Approve"),
        deny: key("Deny"),
        ..Choices::default()
    }
}
