//! Kimi Code's approval dialog as 2.1.0 draws it (fixtures/real-clients/kimi-2.1.0/
//! approval-screen.txt), between two rules below the transcript:
//!
//! ```text
//!   ▶ Run this command?
//!   cwd: /tmp/proj
//!   $ touch hello.txt
//!   ▶ 1. Approve once
//!     2. Approve for this session
//!     3. Reject
//!     4. Reject with feedback
//!   ↑/↓ select · 1/2/3/4 choose · ↵ confirm
//! ```
//!
//! A digit chooses its option at once.

use crate::read::dialog::{content, Choices, Dialog, PromptKind, TitleLine};

/// The mark before the title and before the selected option.
const MARK: char = '▶';

/// Its approval dialogs: a command to run, and any other question it asks the same way.
pub const DIALOGS: &[Dialog] = &[
    Dialog {
        titles: &[TitleLine::Is("▶ Run this command?")],
        shown: "Run this command?",
        kind: PromptKind::Permission,
        options,
        approves,
        tool: |_, _| Some("Bash".to_string()),
        detail: command,
        choices,
    },
    Dialog {
        titles: &[TitleLine::Asks("▶ ")],
        shown: "Approve?",
        kind: PromptKind::Permission,
        options,
        approves,
        tool: |_, _| None,
        detail: command,
        choices,
    },
];

/// An option line's number and label (`▶ 1. Approve once` → `(1, "Approve once")`).
fn option(line: &str) -> Option<(u32, &str)> {
    let l = content(line).trim_start_matches([MARK, ' ']);
    let (num, label) = l.split_once(". ")?;
    let n: u32 = num.parse().ok()?;
    (n > 0 && n < 10).then_some((n, label.trim()))
}

/// The numbered options under the title, in order.
fn numbered<'a>(below: &[&'a str]) -> Vec<(u32, &'a str)> {
    let Some(from) = below
        .iter()
        .position(|l| option(l).is_some_and(|(n, _)| n == 1))
    else {
        return Vec::new();
    };
    below[from..].iter().map_while(|l| option(l)).collect()
}

fn options(below: &[&str]) -> Vec<String> {
    numbered(below)
        .into_iter()
        .map(|(_, l)| l.to_string())
        .collect()
}

fn approves(option: &str) -> bool {
    option.starts_with("Approve")
}

/// What it asks about: the lines under the title up to its options, the `cwd:` line aside,
/// a command without its `$ ` prompt.
fn command(_above: &[&str], below: &[&str]) -> String {
    below
        .iter()
        .map(|l| content(l))
        .take_while(|l| option(l).is_none())
        .filter(|l| !l.is_empty() && !l.starts_with("cwd: "))
        .map(|l| l.strip_prefix("$ ").unwrap_or(l))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The digit of each answer: `Approve once`, `Approve for this session`, `Reject`.
fn choices(below: &[&str]) -> Choices {
    let mut c = Choices::default();
    for (n, label) in numbered(below) {
        let key = Some(vec![n.to_string()]);
        if label == "Approve once" {
            c.allow = c.allow.or(key);
        } else if label.starts_with("Approve for this session") {
            c.always = c.always.or(key);
        } else if label == "Reject" {
            c.deny = c.deny.or(key);
        }
    }
    c
}

/// The `waiting` reason of a dialog read from the screen: `permission: Bash`.
pub fn reason(request: &crate::read::request::Request) -> String {
    match (request.kind, request.tool.as_str()) {
        (PromptKind::Permission, "") => "permission".into(),
        (PromptKind::Permission, tool) => format!("permission: {tool}"),
        (PromptKind::Question, _) => "question".into(),
        (PromptKind::Plan, _) => "plan".into(),
    }
}

/// Whether a turn runs: its spinner line (`⠹ Working…`) near the bottom.
pub fn working(screen: &str) -> bool {
    let clean = strip_ansi_escapes::strip_str(screen);
    let lines: Vec<&str> = clean.lines().filter(|l| !l.trim().is_empty()).collect();
    lines.iter().rev().take(NEAR_BOTTOM).any(|l| {
        content(l).split_once(' ').is_some_and(|(spin, rest)| {
            spin.chars().all(|c| ('\u{2800}'..='\u{28ff}').contains(&c))
                && rest.starts_with("Working")
        })
    })
}

/// Lines (not blank) from the bottom that can hold the spinner: the input box, the footer and
/// a queued prompt or two.
const NEAR_BOTTOM: usize = 10;

/// The retry wait it draws above its input box (`🌗 Retrying (8/10) · APIProviderRateLimitError ·
/// in 37s`, the error's status and text on the line under it), if any.
pub fn retrying(screen: &str) -> Option<crate::agents::retry::Retrying> {
    use crate::agents::retry::number_after;
    let clean = strip_ansi_escapes::strip_str(screen);
    let lines: Vec<&str> = clean.lines().filter(|l| !l.trim().is_empty()).collect();
    let from = lines.len().saturating_sub(NEAR_BOTTOM);
    let at = (from..lines.len()).rev().find(|i| {
        let l = content(lines[*i]);
        l.contains("Retrying (") && l.contains(" · ")
    })?;
    let line = content(lines[at]);
    let error = lines
        .get(at + 1)
        .map(|l| content(l))
        .and_then(|l| l.split_once(" · ").map(|(_, text)| text.trim().to_string()))
        .unwrap_or_else(|| line.split(" · ").nth(1).unwrap_or_default().to_string());
    Some(crate::agents::retry::Retrying {
        error,
        attempt: number_after(line, "Retrying (").and_then(|n| u32::try_from(n).ok()),
        limit: number_after(line, "/").and_then(|n| u32::try_from(n).ok()),
        next_in: number_after(line, "· in "),
    })
}
