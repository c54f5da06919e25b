//! What droid's screen says that its log cannot (captured with `tmux capture-pane -p -J`; see
//! fixtures/real-clients/droid-0.225.1). 0.225.2 draws, above its input box:
//! - `⠇ Streaming...  (Press ESC to stop)` while a turn runs (a braille spinner first);
//! - `⠃ Retrying the model request (attempt 2)...  (Press ESC to stop)` while it tries a
//!   failed call again (a 429 or 5xx; about 20 s in all), writing nothing to its log until it
//!   gives up;
//! - an approval in place of the input box: `Command to approve · medium risk`, `↳ <command>`,
//!   `Why this needs approval: …`, then a bordered list (`Yes, allow` / `Yes, and always allow
//!   medium impact commands (…)` / `No, cancel`; the chosen one in bold) and the footer
//!   `↑↓ navigate   Enter select   Esc cancel …`. The arrows stop at either end of the list.

use crate::agents::retry::{number_after, Retrying};
use crate::agents::screen::{after_spinner, near_bottom, spinning};
use crate::read::dialog::{content, yes_label, Choices, Dialog, PromptKind, TitleLine};

/// The tool droid runs shell commands with.
pub const SHELL_TOOL: &str = "Execute";

/// Lines (not blank) from the bottom that can hold the status line: the input box, its footer
/// and the mode line.
const NEAR_BOTTOM: usize = 8;

/// The command approval, by each title 0.225.2 composes (`Command to approve`, allow- or
/// denylisted, then the risk the model gave).
pub const DIALOGS: &[Dialog] = &[Dialog {
    titles: &[
        TitleLine::Is("Command to approve"),
        TitleLine::Is("Command to approve · low risk"),
        TitleLine::Is("Command to approve · medium risk"),
        TitleLine::Is("Command to approve · high risk"),
        TitleLine::Is("Command to approve (allowlisted) · low risk"),
        TitleLine::Is("Command to approve (allowlisted) · medium risk"),
        TitleLine::Is("Command to approve (allowlisted) · high risk"),
        TitleLine::Is("Command to approve (denylisted) · low risk"),
        TitleLine::Is("Command to approve (denylisted) · medium risk"),
        TitleLine::Is("Command to approve (denylisted) · high risk"),
    ],
    shown: "Command to approve",
    kind: PromptKind::Permission,
    options,
    approves: yes_label,
    tool: |_, _| Some(SHELL_TOOL.to_string()),
    detail: command,
    choices,
}];

/// The options in the bordered list under the title: the lines between its top and bottom
/// rules.
fn options(below: &[&str]) -> Vec<String> {
    let Some(top) = below.iter().position(|l| l.trim_start().starts_with('╭')) else {
        return Vec::new();
    };
    below[top + 1..]
        .iter()
        .take_while(|l| !l.trim_start().starts_with('╰'))
        .map(|l| content(l))
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect()
}

/// The command asked about: the `↳ ` line and what follows it, up to the reason or the list.
fn command(_above: &[&str], below: &[&str]) -> String {
    let Some(from) = below.iter().position(|l| l.trim_start().starts_with("↳ ")) else {
        return String::new();
    };
    below[from..]
        .iter()
        .map(|l| l.trim())
        .take_while(|l| !l.starts_with("Why this needs approval") && !l.starts_with('╭'))
        .map(|l| l.strip_prefix("↳ ").unwrap_or(l))
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The keys of the list: the arrows stop at its top, so Up as many times as there are options
/// reaches the first from anywhere; Enter takes the chosen one; Escape cancels (`No`).
fn choices(below: &[&str]) -> Choices {
    let options = options(below);
    let to = |at: usize| {
        let mut keys = vec!["Up".to_string(); options.len()];
        keys.extend((0..at).map(|_| "Down".to_string()));
        keys.push("Enter".to_string());
        keys
    };
    let allow = options.iter().position(|o| o == "Yes, allow");
    let always = options
        .iter()
        .position(|o| yes_label(o) && o.to_lowercase().contains("always"));
    Choices {
        allow: allow.map(to),
        always: always.map(to),
        deny: Some(vec!["Escape".to_string()]),
        deny_step: None,
        always_step: None,
    }
}

/// Whether the screen shows a turn running (a spinner with `Press ESC to stop`).
pub fn working(screen: &str) -> bool {
    spinning(screen, NEAR_BOTTOM, |t| t.contains("Press ESC to stop"))
}

/// The retry loop on screen, if droid tries a failed API call again.
pub fn retrying(screen: &str) -> Option<Retrying> {
    const RETRY: &str = "Retrying the model request (attempt ";
    let lines = near_bottom(screen, NEAR_BOTTOM);
    let line = lines
        .iter()
        .rev()
        .find_map(|l| after_spinner(l).filter(|t| t.starts_with(RETRY)))?;
    Some(Retrying {
        // The screen does not say what failed; droid retries rate limits and server errors.
        error: "API error".to_string(),
        attempt: number_after(line, RETRY).and_then(|n| u32::try_from(n).ok()),
        limit: None,
        next_in: None,
    })
}
