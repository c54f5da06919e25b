//! An agent's approval dialog as its screen draws it: the shape every agent's table of dialogs
//! fills in (`agents::Agent::dialogs`), and the line helpers they share. Recognising one on a
//! captured screen is `evidence::detect_prompt`'s work.

use serde::Serialize;

use crate::events::AgentKind;

/// What kind of decision the dialog asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PromptKind {
    /// Run a tool / command / edit?
    Permission,
    /// A question with choices (Claude's AskUserQuestion).
    Question,
    /// Approve a plan (Claude's plan mode exit).
    Plan,
}

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
    fn titles_match_whole_lines_or_questions() {
        assert!(TitleLine::Is("Allow command?").matches("Allow command?"));
        assert!(!TitleLine::Is("Allow command?").matches("Allow command? yes"));
        let asks = TitleLine::Asks("Do you want to create ");
        assert!(asks.matches("Do you want to create notes.md?"));
        assert!(!asks.matches("Do you want to create notes.md"));
    }
}
