//! An agent's approval dialog as its screen draws it: the shape every agent's table of dialogs
//! fills in (`agents::Agent::dialogs`), and the line helpers they share. Recognising one on a
//! captured screen is `evidence::detect_prompt`'s work.

use serde::Serialize;

use crate::events::AgentKind;

pub use super::request::PromptKind;

/// A recognised dialog.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Prompt {
    pub agent: AgentKind,
    pub kind: PromptKind,
    /// The tool the dialog is about, when visible (`Bash`, `Edit`, `Write`; for Codex the
    /// command's program, e.g. `git`, or `edit`).
    pub tool: Option<String>,
    /// The dialog's title line as shown.
    pub title: String,
}

impl Prompt {
    /// The `waiting` reason this dialog stands for: `permission: Bash`, `question`, `plan`.
    pub fn reason(&self) -> String {
        match (self.kind, &self.tool) {
            (PromptKind::Permission, Some(tool)) => format!("permission: {tool}"),
            (PromptKind::Permission, None) => "permission".into(),
            (PromptKind::Question, _) => "question".into(),
            (PromptKind::Plan, _) => "plan".into(),
        }
    }
}

/// How a dialog's title line reads (borders trimmed, see [`content`]).
#[derive(Debug, Clone, Copy)]
pub enum TitleLine {
    /// Exactly this line.
    Is(&'static str),
    /// A question that starts so (`Do you want to make this edit to …?`).
    Asks(&'static str),
}

impl TitleLine {
    /// Whether `line` is this title.
    pub fn matches(self, line: &str) -> bool {
        match self {
            TitleLine::Is(t) => line == t,
            TitleLine::Asks(start) => line.ends_with('?') && line.starts_with(start),
        }
    }
}

/// One dialog of an agent: its title lines, an approving option below them, and what it is
/// about.
#[derive(Debug, Clone, Copy)]
pub struct Dialog {
    /// The title lines it is drawn with (one dialog may have been worded several ways).
    pub titles: &'static [TitleLine],
    /// The title as reported.
    pub shown: &'static str,
    pub kind: PromptKind,
    /// Whether a line below the title (see [`content`]) is one of its approving options.
    pub approves: fn(&str) -> bool,
    /// The tool it is about, from the lines above and below its title.
    pub tool: fn(above: &[&str], below: &[&str]) -> Option<String>,
    /// What it asks about as drawn (the command, the file, the URL), from the lines above and
    /// below its title, without its options.
    pub detail: fn(above: &[&str], below: &[&str]) -> String,
    /// The keys that choose each answer, read from its options (see [`numbered_choices`]).
    pub choices: fn(below: &[&str]) -> Choices,
}

/// The keys (tmux key names, pressed in order) that give each answer to a dialog; `None`
/// where the dialog offers no such answer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Choices {
    /// Allow this once.
    pub allow: Option<Vec<String>>,
    /// Allow, and do not ask again (only where the dialog offers it).
    pub always: Option<Vec<String>>,
    /// Deny.
    pub deny: Option<Vec<String>>,
    /// Where denying passes through a step of the dialog's own (Kilo Code's "Reject
    /// permission" prompt, which asks what to do instead): a line that step shows. The last
    /// deny key goes in only once the screen shows it — typed into the dialog itself, it would
    /// choose whatever option is selected.
    pub deny_step: Option<&'static str>,
    /// The same for `always` (opencode's and Kilo Code's "Always allow" confirmation).
    pub always_step: Option<&'static str>,
}

/// The choices of a dialog whose options are numbered and chosen by their number
/// (`❯ 1. Yes` / `2. Yes, and don't ask again for …` / `3. No, and tell … (esc)`): the first
/// plain yes, the first yes that stops asking, the first no.
pub fn numbered_choices(below: &[&str]) -> Choices {
    let mut c = Choices::default();
    for line in below {
        let l = content(line).trim_start_matches(['❯', '›', '>', '»', '●', '○', ' ']);
        let (Some(label), Some((num, _))) = (option_label(l), l.split_once(". ")) else {
            continue;
        };
        let key = Some(vec![num.to_string()]);
        let lower = label.to_lowercase();
        let yes = ["yes", "allow", "approve"]
            .iter()
            .any(|w| lower.starts_with(w));
        let stays = ["don't ask again", "always", "allow all", "this session"]
            .iter()
            .any(|w| lower.contains(w));
        if (yes || lower.starts_with("always")) && stays {
            c.always = c.always.or(key);
        } else if yes {
            c.allow = c.allow.or(key);
        } else if ["no", "reject", "deny"]
            .iter()
            .any(|w| lower.starts_with(w))
        {
            c.deny = c.deny.or(key);
        }
    }
    c
}

/// For a dialog agentpane does not answer: no keys.
pub fn no_choices(_below: &[&str]) -> Choices {
    Choices::default()
}

/// The lines of `lines` up to the first option, as one text: what a dialog asks about
/// when it draws it under its title.
pub fn detail_below(lines: &[&str]) -> String {
    join_content(
        lines
            .iter()
            .take_while(|l| option_label(content(l)).is_none()),
    )
}

/// What a dialog shows under its title up to its options, its `$ command` lines first: the
/// line a person reads (Codex: `Environment: …`, `Reason: …`, `$ command`).
pub fn command_first(below: &[&str]) -> String {
    let all = detail_below(below);
    let (cmd, rest): (Vec<&str>, Vec<&str>) = all.lines().partition(|l| l.starts_with("$ "));
    cmd.into_iter().chain(rest).collect::<Vec<_>>().join("\n")
}

/// The last `n` lines above a title, as one text.
pub fn detail_above(lines: &[&str], n: usize) -> String {
    join_content(lines[lines.len().saturating_sub(n)..].iter())
}

/// Non-empty lines without their borders, one per line.
pub fn join_content<'a>(lines: impl Iterator<Item = &'a &'a str>) -> String {
    lines
        .map(|l| content(l))
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Lines from the bottom of a capture that are searched for a dialog.
const TAIL_LINES: usize = 80;
/// A dialog's title is at most this many lines above the last painted line.
const MAX_DIALOG_LINES: usize = 40;

/// The bottom of a captured screen (ANSI stripped by the caller), down to its last painted
/// line: where a live dialog is.
pub fn bottom(text: &str) -> Vec<&str> {
    let all: Vec<&str> = text.lines().collect();
    let Some(end) = all.iter().rposition(|l| !l.trim().is_empty()) else {
        return Vec::new();
    };
    all[(end + 1).saturating_sub(TAIL_LINES)..=end].to_vec()
}

/// The lowest live dialog in `lines` (see [`bottom`]) that `titled` recognises by its title
/// line: its answers below the title, and no idle input box under it. The dialog and the
/// title's index.
pub fn lowest<T>(
    lines: &[&str],
    titled: impl Fn(&str) -> Option<(T, &'static Dialog)>,
) -> Option<(T, &'static Dialog, usize)> {
    for i in (0..lines.len()).rev() {
        if lines.len() - i > MAX_DIALOG_LINES {
            break;
        }
        let Some((who, dialog)) = titled(content(lines[i])) else {
            continue;
        };
        let below = &lines[i + 1..];
        if !below.iter().any(|l| (dialog.approves)(content(l))) || below.iter().any(|l| idle_box(l))
        {
            continue;
        }
        return Some((who, dialog, i));
    }
    None
}

/// The agent's input box, a submitted prompt or a busy footer under a title: the title is
/// history, not a live dialog.
fn idle_box(line: &str) -> bool {
    let l = content(line);
    if l.contains("? for shortcuts") || l.contains("esc to interrupt") {
        return true;
    }
    let Some(rest) = ['❯', '›', '>']
        .iter()
        .find_map(|p| l.strip_prefix(*p))
        .map(str::trim_start)
    else {
        return false;
    };
    const LABELS: [&str; 9] = [
        "Yes",
        "No",
        "Approve",
        "Edit",
        "Explain",
        "Switch",
        "View",
        "Cancel",
        "Type here",
    ];
    option_label(l).is_none() && !LABELS.iter().any(|w| rest.starts_with(w))
}

/// A dialog on screen, as one agent reads its own: what it asks and the keys that answer it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OnScreen {
    pub request: crate::read::request::Request,
    pub choices: Choices,
}

/// A question form on screen (`prompt`, recognised in `lines`, the bottom of the screen) as
/// a request: its last painted lines, and no keys — a question is never answered for the
/// person.
pub fn asked(prompt: &Prompt, lines: &[&str]) -> OnScreen {
    use crate::read::request::{Request, RequestSource};
    let painted: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| !content(l).is_empty())
        .collect();
    let text = detail_above(&painted, 12);
    OnScreen {
        request: Request::new(
            prompt.kind,
            prompt.tool.as_deref().unwrap_or_default(),
            &text,
            &text,
            None,
            RequestSource::Screen,
        ),
        choices: Choices::default(),
    }
}

/// A dialog drawn as a header line (`? Shell  mkdir x`, found by `header`), what it asks about,
/// a title line (found by `title`) and numbered options chosen by their number, at the bottom
/// of `screen` (ANSI stripped here): as a request about `tool`, with its keys.
pub fn headed(
    screen: &str,
    tool: &str,
    header: impl Fn(&str) -> bool,
    title: impl Fn(&str) -> bool,
) -> Option<OnScreen> {
    use crate::read::request::{Request, RequestSource};
    let clean = strip_ansi_escapes::strip_str(screen);
    let lines: Vec<&str> = bottom(&clean)
        .into_iter()
        .map(|l| content(l).trim_matches(['╭', '╰', '╮', '╯', '│']).trim())
        .filter(|l| !l.is_empty() && !l.chars().all(|c| "─╭╮╰╯│ ".contains(c)))
        .collect();
    let at = lines
        .iter()
        .rposition(|l| title(l))
        .filter(|at| lines.len() - at <= MAX_DIALOG_LINES)?;
    let below = &lines[at + 1..];
    if !below.iter().any(|l| option_label(l).is_some()) || below.iter().any(|l| idle_box(l)) {
        return None;
    }
    let from = lines[..at]
        .iter()
        .rposition(|l| header(l))
        .filter(|h| at - h <= 12)
        .unwrap_or(at.saturating_sub(4));
    let detail = lines[from..at].join("\n");
    let text = format!("{detail}\n{}", lines[at]);
    // Without a tool given, the header's word after its mark names it (`? Shell  …`).
    let named = lines[from].split_whitespace().nth(1).unwrap_or_default();
    let tool = if tool.is_empty() && header(lines[from]) {
        named
    } else {
        tool
    };
    Some(OnScreen {
        request: Request::new(
            PromptKind::Permission,
            tool,
            lines
                .get(from + 1)
                .filter(|_| from + 1 < at)
                .unwrap_or(&lines[at]),
            &text,
            None,
            RequestSource::Screen,
        ),
        choices: numbered_choices(below),
    })
}

/// The lowest live dialog of `dialogs` on `screen` (ANSI stripped here), read as a request.
pub fn on_screen(dialogs: &'static [Dialog], screen: &str) -> Option<OnScreen> {
    use crate::read::request::{Request, RequestSource};
    let clean = strip_ansi_escapes::strip_str(screen);
    let lines = bottom(&clean);
    let ((), dialog, i) = lowest(&lines, |line| {
        dialogs
            .iter()
            .find(|d| d.titles.iter().any(|t| t.matches(line)))
            .map(|d| ((), d))
    })?;
    let (above, below) = (&lines[..i], &lines[i + 1..]);
    let tool = (dialog.tool)(above, below).unwrap_or_default();
    let detail = (dialog.detail)(above, below);
    let title = content(lines[i]);
    let text = if detail.is_empty() {
        title.to_string()
    } else {
        format!("{detail}\n{title}")
    };
    let summary = if detail.is_empty() {
        title
    } else {
        detail.as_str()
    };
    Some(OnScreen {
        request: Request::new(
            dialog.kind,
            &tool,
            summary,
            &text,
            None,
            RequestSource::Screen,
        ),
        choices: (dialog.choices)(below),
    })
}

/// A line without the box-drawing border some versions draw around dialogs.
pub fn content(line: &str) -> &str {
    line.trim()
        .trim_start_matches(['│', '┃', '▌'])
        .trim_end_matches(['│', '┃'])
        .trim()
}

/// An option line: optional selector, then `N.` and the label.
pub fn option_label(line: &str) -> Option<&str> {
    let l = line.trim_start_matches(['❯', '›', '>', '»', ' ']);
    let (num, rest) = l.split_once(". ")?;
    (!num.is_empty() && num.len() <= 2 && num.bytes().all(|b| b.is_ascii_digit()))
        .then(|| rest.trim())
}

/// A numbered option whose label says yes (`1. Yes`, `› 1. Approve …`).
pub fn numbered_yes(line: &str) -> bool {
    option_label(line).is_some_and(|l| l.starts_with("Yes") || l.starts_with("Approve"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn option_labels() {
        assert_eq!(option_label(" ❯ 1. Yes"), Some("Yes"));
        assert_eq!(
            option_label("› 1. Yes, proceed (y)"),
            Some("Yes, proceed (y)")
        );
        assert_eq!(option_label("2026. was a year"), None);
        assert_eq!(option_label("no number"), None);
    }

    #[test]
    fn numbered_choices_read_yes_always_and_no_by_their_labels() {
        let claude = [
            " ❯ 1. Yes",
            "   2. Yes, and don't ask again for touch commands in /w",
            "   3. No, and tell Claude what to do differently (esc)",
        ];
        let c = numbered_choices(&claude);
        assert_eq!(c.allow, Some(vec!["1".to_string()]));
        assert_eq!(c.always, Some(vec!["2".to_string()]));
        assert_eq!(c.deny, Some(vec!["3".to_string()]));
        // Without a "don't ask again" option there is no `always`.
        let two = ["│ ❯ 1. Yes │", "│   2. No (esc) │"];
        let c = numbered_choices(&two);
        assert_eq!(c.allow, Some(vec!["1".to_string()]));
        assert_eq!(c.always, None);
        assert_eq!(c.deny, Some(vec!["2".to_string()]));
        // Edits: allowing all edits this session is an `always`.
        let edit = [
            "❯ 1. Yes",
            "  2. Yes, allow all edits during this session (shift+tab)",
            "  3. No",
        ];
        assert_eq!(numbered_choices(&edit).always, Some(vec!["2".to_string()]));
        // Prose is no option.
        assert_eq!(
            numbered_choices(&["Yes I think so", "2026. was a year"]),
            Choices::default()
        );
    }

    #[test]
    fn a_dialog_on_screen_is_read_as_a_request_with_its_keys() {
        const D: &[Dialog] = &[Dialog {
            titles: &[TitleLine::Is(
                "Would you like to run the following command?",
            )],
            shown: "run?",
            kind: PromptKind::Permission,
            approves: numbered_yes,
            tool: |_, _| Some("shell".into()),
            detail: |_, below| detail_below(below),
            choices: numbered_choices,
        }];
        let screen = "\x1b[1m• Ran ls\x1b[0m\n\n  Would you like to run the following command?\n\n  $ touch a.txt\n\n› 1. Yes, proceed (y)\n  2. Yes, and don't ask again for this command (p)\n  3. No, and tell Codex what to do differently (esc)\n\n  Press enter to confirm or esc to cancel\n";
        let d = on_screen(D, screen).expect("the dialog");
        assert_eq!(d.request.tool, "shell");
        assert_eq!(d.request.summary, "$ touch a.txt");
        assert!(d
            .request
            .text
            .ends_with("Would you like to run the following command?"));
        assert_eq!(d.choices.allow, Some(vec!["1".to_string()]));
        assert_eq!(d.choices.deny, Some(vec!["3".to_string()]));
        // Answered: the input box is back under the old title.
        let answered = format!("{screen}\n› \n  ? for shortcuts\n");
        assert_eq!(on_screen(D, &answered), None);
        assert_eq!(on_screen(D, ""), None);
    }

    #[test]
    fn titles_match_whole_lines_or_questions() {
        assert!(TitleLine::Is("Allow command?").matches("Allow command?"));
        assert!(!TitleLine::Is("Allow command?").matches("Allow command? yes"));
        let asks = TitleLine::Asks("Do you want to create ");
        assert!(asks.matches("Do you want to create notes.md?"));
        assert!(!asks.matches("Do you want to create notes.md"));
    }
}
