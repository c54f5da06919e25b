//! What the pane shows (docs/design.md#evidence-order, source 4): an approval dialog on screen, or
//! no agent at all. Screen text is the weakest evidence, so recognition is strict: a known dialog
//! title as a whole line, answer options below it, the dialog at the bottom of the screen, and no
//! idle input box under it. Prose that merely mentions "proceed" never matches.

use serde::Serialize;

use crate::events::AgentKind;

/// Lines from the bottom of the capture that are searched.
const TAIL_LINES: usize = 80;
/// A dialog's title is at most this many lines above the last painted line.
const MAX_DIALOG_LINES: usize = 40;

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

/// Evidence from one look at the pane.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "pane")]
pub enum PaneEvidence {
    /// A known dialog is on screen.
    Prompt(Prompt),
    /// The pane was captured and shows no known dialog.
    NoPrompt,
    /// The agent process is gone from the pane.
    Exited,
}

/// Recognises an agent's approval dialog or question in captured pane text (ANSI escapes
/// are stripped here). `None` when no known dialog is on screen; a caller that captured the
/// pane and got `None` passes [`PaneEvidence::NoPrompt`] to reconciliation.
pub fn detect_prompt(captured_text: &str) -> Option<PaneEvidence> {
    let clean;
    let text = if captured_text.contains('\x1b') {
        clean = strip_ansi_escapes::strip_str(captured_text);
        clean.as_str()
    } else {
        captured_text
    };
    let all: Vec<&str> = text.lines().collect();
    let end = all.iter().rposition(|l| !l.trim().is_empty())? + 1;
    let lines = &all[end.saturating_sub(TAIL_LINES)..end];

    for i in (0..lines.len()).rev() {
        if lines.len() - i > MAX_DIALOG_LINES {
            break;
        }
        let Some(title) = Title::match_line(content(lines[i])) else {
            continue;
        };
        let below = &lines[i + 1..];
        if !below.iter().any(|l| title.is_option(content(l))) || below.iter().any(|l| idle_box(l)) {
            continue;
        }
        return Some(PaneEvidence::Prompt(title.prompt(&lines[..i], below)));
    }
    detect_question(lines).map(PaneEvidence::Prompt)
}

/// A line without the box-drawing border some versions draw around dialogs.
fn content(line: &str) -> &str {
    line.trim()
        .trim_start_matches(['│', '┃', '▌'])
        .trim_end_matches(['│', '┃'])
        .trim()
}

/// An option line: optional selector, then `N.` and the label.
fn option_label(line: &str) -> Option<&str> {
    let l = line.trim_start_matches(['❯', '›', '>', '»', ' ']);
    let (num, rest) = l.split_once(". ")?;
    (!num.is_empty() && num.len() <= 2 && num.bytes().all(|b| b.is_ascii_digit()))
        .then(|| rest.trim())
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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Title {
    ClaudeProceed,
    ClaudeEdit,
    ClaudeCreate,
    ClaudeAllow,
    ClaudePlan,
    CodexCommand,
    CodexEdits,
    CodexPermissions,
    CodexOldCommand,
    CodexOldChanges,
    /// opencode 1.18: `△ Permission required`, then `Allow once   Allow always   Reject`.
    OpencodePermission,
}

impl Title {
    fn match_line(line: &str) -> Option<Title> {
        let title = match line {
            "Do you want to proceed?" => Title::ClaudeProceed,
            "Would you like to proceed?" => Title::ClaudePlan,
            "Would you like to run the following command?" => Title::CodexCommand,
            "Would you like to make the following edits?" => Title::CodexEdits,
            "Would you like to grant these permissions?" => Title::CodexPermissions,
            "Allow command?" => Title::CodexOldCommand,
            "Allow changes?" | "Apply changes?" => Title::CodexOldChanges,
            "△ Permission required" | "Permission required" => Title::OpencodePermission,
            l if l.ends_with('?') && l.starts_with("Do you want to make this edit to ") => {
                Title::ClaudeEdit
            }
            l if l.ends_with('?') && l.starts_with("Do you want to create ") => Title::ClaudeCreate,
            l if l.ends_with('?') && l.starts_with("Do you want to allow ") => Title::ClaudeAllow,
            _ => return None,
        };
        Some(title)
    }

    fn agent(self) -> AgentKind {
        match self {
            Title::ClaudeProceed
            | Title::ClaudeEdit
            | Title::ClaudeCreate
            | Title::ClaudeAllow
            | Title::ClaudePlan => AgentKind::Claude,
            Title::OpencodePermission => AgentKind::Opencode,
            Title::CodexCommand
            | Title::CodexEdits
            | Title::CodexPermissions
            | Title::CodexOldCommand
            | Title::CodexOldChanges => AgentKind::Codex,
        }
    }

    /// An approving answer option of this dialog.
    fn is_option(self, line: &str) -> bool {
        let old_codex = matches!(self, Title::CodexOldCommand | Title::CodexOldChanges);
        if self == Title::OpencodePermission {
            return line.starts_with("Allow once");
        }
        if let Some(label) = option_label(line) {
            return label.starts_with("Yes") || label.starts_with("Approve");
        }
        let l = line.trim_start_matches(['❯', '›', '>', '»', ' ']);
        old_codex
            && (l.starts_with("Yes (y)") || l.starts_with("[y] Yes") || l.starts_with("[y] yes"))
    }

    fn prompt(self, above: &[&str], below: &[&str]) -> Prompt {
        let kind = if self == Title::ClaudePlan {
            PromptKind::Plan
        } else {
            PromptKind::Permission
        };
        let tool = match self {
            Title::ClaudeProceed | Title::ClaudeAllow => claude_header_tool(above),
            Title::ClaudeEdit => Some("Edit".into()),
            Title::ClaudeCreate => Some("Write".into()),
            Title::ClaudePlan => None,
            Title::CodexCommand => {
                Some(codex_command_program(below).unwrap_or_else(|| "command".into()))
            }
            // The TypeScript Codex drew the command above the question.
            Title::CodexOldCommand => Some(
                codex_command_program(&above[above.len().saturating_sub(12)..])
                    .unwrap_or_else(|| "command".into()),
            ),
            Title::CodexEdits | Title::CodexOldChanges => Some("edit".into()),
            Title::CodexPermissions => Some("permissions".into()),
            // The dialog names a kind (`# Shell command`); the database names the tool.
            Title::OpencodePermission => None,
        };
        let title = match self {
            Title::ClaudeProceed => "Do you want to proceed?",
            Title::ClaudeEdit => "Do you want to make this edit?",
            Title::ClaudeCreate => "Do you want to create this file?",
            Title::ClaudeAllow => "Do you want to allow this?",
            Title::ClaudePlan => "Would you like to proceed?",
            Title::CodexCommand => "Would you like to run the following command?",
            Title::CodexEdits => "Would you like to make the following edits?",
            Title::CodexPermissions => "Would you like to grant these permissions?",
            Title::CodexOldCommand => "Allow command?",
            Title::CodexOldChanges => "Allow changes?",
            Title::OpencodePermission => "Permission required",
        };
        Prompt {
            agent: self.agent(),
            kind,
            tool,
            title: title.into(),
        }
    }
}

/// Claude draws the tool's header (`Bash command`, `Edit file x`, …) as the first line of
/// the dialog, under a rule line.
fn claude_header_tool(above: &[&str]) -> Option<String> {
    let start = above
        .iter()
        .rposition(|l| {
            let t = l.trim();
            t.chars().count() >= 10 && t.chars().all(|c| c == '─' || c == '━')
        })
        .map(|i| i + 1)
        .unwrap_or(above.len().saturating_sub(12));
    let header = above[start..]
        .iter()
        .map(|l| content(l))
        .find(|l| !l.is_empty())?;
    let tool = match header {
        h if h.starts_with("Bash command") => "Bash",
        h if h.starts_with("Edit file") => "Edit",
        h if h.starts_with("Create file") => "Write",
        h if h.starts_with("Read file") => "Read",
        h if h.starts_with("Fetch") => "WebFetch",
        h if h.starts_with("Web Search") => "WebSearch",
        h if h.starts_with("Edit notebook") => "NotebookEdit",
        _ => return None,
    };
    Some(tool.into())
}

/// The program of Codex's `$ command` line, e.g. `git` for `$ git push`.
fn codex_command_program(below: &[&str]) -> Option<String> {
    below.iter().find_map(|l| {
        let cmd = content(l).strip_prefix("$ ")?;
        let program = cmd.split_whitespace().next()?;
        let name = program.rsplit('/').next().unwrap_or(program);
        (!name.is_empty()).then(|| super::bounded(name, 64))
    })
}

/// Claude's AskUserQuestion: numbered choices above an `Enter to select · … · Esc to cancel`
/// footer on the last painted lines.
fn detect_question(lines: &[&str]) -> Option<Prompt> {
    let painted: Vec<&str> = lines
        .iter()
        .rev()
        .map(|l| l.trim())
        .filter(|l| !l.is_empty())
        .take(12)
        .collect();
    let footer = painted.first()?;
    if !(footer.starts_with("Enter to select") && footer.contains("Esc to cancel")) {
        return None;
    }
    painted[1..]
        .iter()
        .any(|l| option_label(l).is_some())
        .then(|| Prompt {
            agent: AgentKind::Claude,
            kind: PromptKind::Question,
            tool: Some("AskUserQuestion".into()),
            title: "question".into(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prompt(text: &str) -> Option<Prompt> {
        match detect_prompt(text)? {
            PaneEvidence::Prompt(p) => Some(p),
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn opencode_permission_dialog_is_a_permission_prompt() {
        let screen =
            include_str!("../../fixtures/real-clients/opencode-1.18.33/permission-screen.txt");
        let p = prompt(screen).expect("the dialog is recognised");
        assert_eq!(p.agent, AgentKind::Opencode);
        assert_eq!(p.kind, PromptKind::Permission);
        assert_eq!(p.reason(), "permission");
        // Answered: the title scrolled away with the options.
        let answered: String = screen
            .lines()
            .filter(|l| !l.contains("Allow once"))
            .map(|l| format!("{l}\n"))
            .collect();
        assert_eq!(prompt(&answered), None);
    }

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
    fn ansi_is_stripped() {
        let text = "\x1b[1m Bash command\x1b[0m\n\n   ls\n\n Do you want to proceed?\n \x1b[36m❯ 1. Yes\x1b[0m\n   2. No\n";
        let p = prompt(text).unwrap();
        assert_eq!(p.reason(), "permission: Bash");
    }

    #[test]
    fn title_far_above_the_bottom_is_scrollback() {
        let mut text = String::from("Do you want to proceed?\n❯ 1. Yes\n  2. No\n");
        for i in 0..60 {
            text.push_str(&format!("line {i}\n"));
        }
        assert!(detect_prompt(&text).is_none());
    }

    #[test]
    fn markdown_list_above_idle_input_is_not_a_dialog() {
        let text = "⏺ Here is the plan.\n\nDo you want to proceed?\n1. Yes\n2. No\n\n────────\n❯ \n────────\n  ? for shortcuts\n";
        assert!(detect_prompt(text).is_none());
    }
}
