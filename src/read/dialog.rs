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

/// One dialog of an agent: its title lines, its options below them (one approving), and what
/// it is about.
#[derive(Debug, Clone, Copy)]
pub struct Dialog {
    /// The title lines it is drawn with (one dialog may have been worded several ways).
    pub titles: &'static [TitleLine],
    /// The title as reported.
    pub shown: &'static str,
    pub kind: PromptKind,
    /// Its options as drawn, in order, without selection marks, read from the lines below its
    /// title only where it draws options (after what it asks about, in its option style):
    /// lines of a command are never options.
    pub options: fn(below: &[&str]) -> Vec<String>,
    /// Whether an option (one of [`Dialog::options`]) approves.
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

/// A dialog's numbered options as it draws them (`› 1. Yes, proceed (y)` / `2. Yes, and don't
/// ask again …` / `3. No, … (esc)`): the lowest run of option lines numbered 1, 2, 3… in
/// order, one of them marked selected, with nothing between two of them but the wrapped rest
/// of a label (indented past the number). Lines above the run — the command or file asked
/// about, even a line of it that reads `1. Yes` — are no options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Numbered<'a> {
    /// Where the run starts in the lines it was read from.
    pub start: usize,
    /// Each option's number and label, in order.
    pub options: Vec<(u32, &'a str)>,
}

/// The numbered options at the bottom of `below` (see [`Numbered`]), if it draws any.
pub fn numbered<'a>(below: &[&'a str]) -> Option<Numbered<'a>> {
    let last = below.iter().rposition(|l| option_number(l).is_some())?;
    let (mut want, _) = option_number(below[last])?;
    let mut options = Vec::new();
    let mut number_col = usize::MAX;
    let mut marked = 0;
    for at in (0..=last).rev() {
        let line = below[at];
        match option_number(line) {
            Some((n, label)) if n == want => {
                options.push((n, label));
                number_col = line.chars().position(|c| c.is_ascii_digit()).unwrap_or(0);
                marked += usize::from(content(line).starts_with(SELECTED));
                want -= 1;
                if want == 0 {
                    options.reverse();
                    return (marked == 1).then_some(Numbered { start: at, options });
                }
            }
            // Out of order: not a list the client drew.
            Some(_) => return None,
            // The rest of the label below, wrapped.
            None if !content(line).is_empty() && indent(line) > number_col => {}
            None => return None,
        }
    }
    None
}

/// The marks a client draws before the selected option of a list.
const SELECTED: [char; 5] = ['❯', '›', '>', '»', '●'];

/// An option line's number and label (`› 1. Yes` → `(1, "Yes")`), borders and selection mark
/// aside.
fn option_number(line: &str) -> Option<(u32, &str)> {
    let l = content(line).trim_start_matches(['❯', '›', '>', '»', '●', '○', ' ']);
    let label = option_label(l)?;
    let n = l.split_once(". ")?.0.parse().ok()?;
    (n > 0).then_some((n, label))
}

/// Leading blanks and borders of a line, in characters.
fn indent(line: &str) -> usize {
    line.chars()
        .take_while(|c| c.is_whitespace() || matches!(c, '│' | '┃' | '▌'))
        .count()
}

/// The labels of a dialog's numbered options (see [`numbered`]); none when it draws none.
pub fn numbered_labels(below: &[&str]) -> Vec<String> {
    numbered(below)
        .map(|n| n.options.iter().map(|(_, l)| l.to_string()).collect())
        .unwrap_or_default()
}

/// The first word of an option's label, lowercase (`No, and tell …` → `no`).
fn first_word(label: &str) -> String {
    label
        .split(|c: char| !c.is_alphanumeric() && c != '\'')
        .find(|w| !w.is_empty())
        .unwrap_or_default()
        .to_lowercase()
}

/// An option label that says yes (`Yes, proceed (y)`, `Approve …`, `Allow once`).
pub fn yes_label(label: &str) -> bool {
    matches!(first_word(label).as_str(), "yes" | "allow" | "approve")
}

/// The choices of a dialog whose options are numbered and chosen by their number (see
/// [`numbered`]): the first plain yes, the first yes that stops asking, the first no — each
/// told by its label's first word, so `Normalise …` is no `no`.
pub fn numbered_choices(below: &[&str]) -> Choices {
    let mut c = Choices::default();
    for (num, label) in numbered(below).map(|n| n.options).unwrap_or_default() {
        let key = Some(vec![num.to_string()]);
        let lower = label.to_lowercase();
        let first = first_word(label);
        let yes = yes_label(label);
        let stays = ["don't ask again", "always", "allow all", "this session"]
            .iter()
            .any(|w| lower.contains(w));
        if (yes || first == "always") && stays {
            c.always = c.always.or(key);
        } else if yes {
            c.allow = c.allow.or(key);
        } else if matches!(first.as_str(), "no" | "reject" | "deny") {
            c.deny = c.deny.or(key);
        }
    }
    c
}

/// For a dialog agentpane does not answer: no keys.
pub fn no_choices(_below: &[&str]) -> Choices {
    Choices::default()
}

/// The lines of `lines` above its numbered options (see [`numbered`]; all of them when it
/// draws none), as one text: what a dialog asks about when it draws it under its title.
pub fn detail_below(lines: &[&str]) -> String {
    let end = numbered(lines).map_or(lines.len(), |n| n.start);
    join_content(lines[..end].iter())
}

/// What a dialog shows under its title up to its options, its command first: the `$ ` line
/// and every line under it (the rest of a command of several lines), then the lines above it
/// (Codex: `Environment: …`, `Reason: …`, then `$ command`), so the command reads as one.
pub fn command_first(below: &[&str]) -> String {
    let all = detail_below(below);
    let lines: Vec<&str> = all.lines().collect();
    let at = lines.iter().position(|l| l.starts_with("$ ")).unwrap_or(0);
    lines[at..]
        .iter()
        .chain(&lines[..at])
        .copied()
        .collect::<Vec<_>>()
        .join("\n")
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
        let options = (dialog.options)(below);
        let approving = options.iter().any(|o| (dialog.approves)(o));
        // An input box under the dialog is drawn below its options: a line of the command
        // above them (a quoted `> note`) is none.
        let from = options
            .first()
            .and_then(|o| below.iter().rposition(|l| content(l).contains(o.as_str())))
            .unwrap_or(0);
        if !approving || below[from..].iter().any(|l| idle_box(l)) {
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
    /// Its options as drawn, in order (see [`Dialog::options`]): with the request, what makes
    /// it the same dialog from one look to the next.
    pub options: Vec<String>,
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
        options: Vec::new(),
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
    let trim = |l: &str| {
        content(l)
            .trim_matches(['╭', '╰', '╮', '╯', '│'])
            .trim()
            .to_string()
    };
    // The painted lines as drawn (their indents tell a wrapped option apart), and trimmed.
    let raw: Vec<&str> = bottom(&clean)
        .into_iter()
        .filter(|l| {
            let t = trim(l);
            !t.is_empty() && !t.chars().all(|c| "─╭╮╰╯│ ".contains(c))
        })
        .collect();
    let lines: Vec<&str> = raw
        .iter()
        .map(|l| content(l).trim_matches(['╭', '╰', '╮', '╯', '│']).trim())
        .collect();
    let at = lines
        .iter()
        .rposition(|l| title(l))
        .filter(|at| lines.len() - at <= MAX_DIALOG_LINES)?;
    let below = &raw[at + 1..];
    if numbered(below).is_none() || below.iter().any(|l| idle_box(l)) {
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
        options: numbered_labels(below),
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
        options: (dialog.options)(below),
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

/// Lines of a command that read like options: no dialog may take any of them for one.
#[cfg(test)]
pub const OPTION_LIKE: &[&str] = &[
    "1. Normalise the paths before comparing them",
    "2. Yes, keep the symlinks",
    "1. Yes",
    "2. No",
    "Allow once",
    "Reject",
    "❯ Yes",
    "→ No",
    "Allow?",
    "Allow once   Allow always   Reject",
    "> a quoted note",
];

/// A command of several lines whose first line is short: a heredoc holding [`OPTION_LIKE`].
#[cfg(test)]
pub fn option_like_command() -> String {
    format!("cat > notes.md <<'EOF'\n{}\nEOF", OPTION_LIKE.join("\n"))
}

/// `screen` with the [`OPTION_LIKE`] lines drawn under its last line holding `line` (a line
/// of the command it asks about), with that line's indent and borders: a command that holds
/// them.
#[cfg(test)]
pub fn with_option_like_lines(screen: &str, line: &str) -> String {
    let lines: Vec<&str> = screen.lines().collect();
    let at = lines
        .iter()
        .rposition(|l| l.contains(line))
        .expect("the command's line");
    let prefix = &lines[at][..lines[at].find(line).unwrap_or(0)];
    let mut out: Vec<String> = lines[..=at].iter().map(|l| l.to_string()).collect();
    out.extend(OPTION_LIKE.iter().map(|l| format!("{prefix}{l}")));
    out.extend(lines[at + 1..].iter().map(|l| l.to_string()));
    out.join("\n") + "\n"
}

/// The single keys of `choices` for allow, always and deny, for tests to compare at once.
#[cfg(test)]
pub fn single_keys(choices: &Choices) -> [Option<&str>; 3] {
    [&choices.allow, &choices.always, &choices.deny].map(|keys| match keys.as_deref() {
        Some([key]) => Some(key.as_str()),
        _ => None,
    })
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
            options: numbered_labels,
            approves: yes_label,
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
