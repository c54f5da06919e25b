//! What pi's screen says that its log cannot (captured with `tmux capture-pane -p -J`; see
//! fixtures/real-clients/pi-0.73.1). 0.73.1 draws, right above its input box:
//! - `⠙ Working...` while a turn runs (a braille spinner, then the working message);
//! - `⠋ Retrying (1/3) in 2s... (escape to cancel)` while it waits to retry a failed call
//!   (`auto_retry_start`; 2, 4, 8 s), under the failed attempt's `Error: 429 …` line;
//! - `Error: Retry failed after 3 attempts: …` once it gives up, `Error: …` for an error it
//!   does not retry, `Operation aborted` after Escape.
//!
//! An approval exists only when an extension asks for one: `ctx.ui.select(title, options)`
//! (and `ctx.ui.confirm`, which is a select of `Yes` / `No`) replaces the input box with a
//! bordered selector — the title, the options (`→ ` before the chosen one) and the footer
//! `↑↓ navigate  enter select  escape/ctrl+c cancel` — with `Working...` still spinning above.

use crate::agents::retry::{number_after, Retrying};
use crate::agents::screen::{after_spinner, near_bottom, spinning};
use crate::events::AgentKind;
use crate::read::dialog::{content, join_content, Choices, Dialog, Prompt, PromptKind, TitleLine};

/// Lines (not blank) from the bottom that can hold the status line: the input box and its two
/// rules, the folder and the usage lines, and a selector of a few options above them.
const NEAR_BOTTOM: usize = 16;

/// The dialog of the permission gate pi ships as an example extension
/// (`examples/extensions/permission-gate.ts`: `⚠️ Dangerous command:`, the command,
/// `Allow?`, then `→ Yes` / `No`), which only ever asks about `bash`.
pub const DIALOGS: &[Dialog] = &[Dialog {
    titles: &[
        TitleLine::Is("⚠️ Dangerous command:"),
        TitleLine::Is("⚠ Dangerous command:"),
    ],
    shown: "Dangerous command",
    kind: PromptKind::Permission,
    options: |below| {
        gate_options(below)
            .map(|(_, label)| label.to_string())
            .collect()
    },
    approves: |option| option == "Yes",
    tool: |_, _| Some("bash".to_string()),
    detail: gate_command,
    choices: selector_choices,
}];

/// Where the gate asks: its lowest `Allow?` line (a line of the command may read so too).
fn gate_question(below: &[&str]) -> Option<usize> {
    below.iter().rposition(|l| content(l) == "Allow?")
}

/// The command the gate asks about: the lines under its title, up to its `Allow?`.
fn gate_command(_above: &[&str], below: &[&str]) -> String {
    join_content(below[..gate_question(below).unwrap_or(below.len())].iter())
}

/// The gate's options, drawn under its `Allow?` and above the selector's footer: whether each
/// is the chosen one (`→ `), and its label.
fn gate_options<'a>(below: &[&'a str]) -> impl Iterator<Item = (bool, &'a str)> + 'a {
    let from = gate_question(below).map_or(below.len(), |at| at + 1);
    below[from..]
        .iter()
        .map(|l| content(l))
        .filter(|l| !l.is_empty())
        .take_while(|l| !selector_footer(l))
        .map(|l| match l.strip_prefix('→') {
            Some(chosen) => (true, chosen.trim()),
            None => (false, l),
        })
        .collect::<Vec<_>>()
        .into_iter()
}

/// The keys of pi's selector (`ctx.ui.select`): `→ ` marks the chosen option, the arrows
/// move it, Enter takes it; Escape cancels, which the gate takes as No ("Blocked by user").
/// Allow is offered only when the screen shows where `Yes` is from the chosen option.
fn selector_choices(below: &[&str]) -> Choices {
    let options: Vec<(bool, &str)> = gate_options(below).collect();
    let chosen = options.iter().position(|(c, _)| *c);
    let yes = options.iter().position(|(_, label)| *label == "Yes");
    let allow = chosen.zip(yes).map(|(from, to)| {
        let step = if to < from { "Up" } else { "Down" };
        let mut keys = vec![step.to_string(); from.abs_diff(to)];
        keys.push("Enter".to_string());
        keys
    });
    Choices {
        allow,
        always: None,
        deny: Some(vec!["Escape".to_string()]),
        deny_step: None,
        always_step: None,
    }
}

/// Whether the screen shows a turn running (`⠙ Working...`).
pub fn working(screen: &str) -> bool {
    spinning(screen, NEAR_BOTTOM, |t| t.starts_with("Working"))
}

/// The retry loop on screen, if pi waits to retry a failed API call.
pub fn retrying(screen: &str) -> Option<Retrying> {
    let lines = near_bottom(screen, NEAR_BOTTOM);
    let at = lines.iter().rposition(|l| {
        after_spinner(l).is_some_and(|t| t.starts_with("Retrying (") && t.contains(") in "))
    })?;
    let line = after_spinner(&lines[at])?;
    let inner = &line["Retrying (".len()..line.find(')')?];
    let (attempt, limit) = inner.split_once('/')?;
    let error = lines[..at]
        .iter()
        .rev()
        .find_map(|l| l.strip_prefix("Error: "))
        .unwrap_or("API error")
        .to_string();
    Some(Retrying {
        error,
        attempt: attempt.trim().parse().ok(),
        limit: limit.trim().parse().ok(),
        next_in: number_after(line, ") in "),
    })
}

/// Whether a line is the footer of pi's selector.
fn selector_footer(line: &str) -> bool {
    line.starts_with("↑↓ navigate") && line.contains("select") && line.contains("cancel")
}

/// A selector an extension opened (other than [`DIALOGS`]): pi's own chrome around any title.
/// While a tool call waits it stands for an approval; the log names the tool.
pub fn selector(lines: &[&str]) -> Option<Prompt> {
    let tail: Vec<&str> = lines
        .iter()
        .map(|l| content(l))
        .filter(|l| !l.is_empty())
        .collect();
    let tail = &tail[tail.len().saturating_sub(NEAR_BOTTOM)..];
    let footer = tail.iter().rposition(|l| selector_footer(l))?;
    let rule = |l: &&str| l.chars().all(|c| c == '─');
    let top = tail[..footer].iter().rposition(rule)?;
    let body = &tail[top + 1..footer];
    if !body.iter().any(|l| l.starts_with("→ ")) {
        return None;
    }
    Some(Prompt {
        agent: AgentKind::Pi,
        kind: PromptKind::Permission,
        tool: None,
        title: body.first().map(|t| crate::text::chars(t, 60))?,
    })
}

/// The `waiting` reason of an approval on screen, read without the log (a pane whose log is
/// not known): the permission gate's is about `bash`, any other selector's tool is unknown.
pub fn approval(screen: &str) -> Option<String> {
    let clean = strip_ansi_escapes::strip_str(screen);
    let lines: Vec<&str> = clean.lines().collect();
    let p = selector(&lines)?;
    let gate = DIALOGS
        .iter()
        .find(|d| d.titles.iter().any(|t| t.matches(&p.title)));
    Some(match gate.and_then(|d| (d.tool)(&[], &[])) {
        Some(tool) => format!("permission: {tool}"),
        None => "permission".to_string(),
    })
}
