//! Claude Code's approval dialogs and its question form, as its screen draws them.

use crate::events::AgentKind;
use crate::read::dialog::{
    content, numbered_yes, option_label, Dialog, Prompt, PromptKind, TitleLine,
};

/// Its dialogs: run a tool, edit or create a file, allow an action, approve a plan.
pub const DIALOGS: &[Dialog] = &[
    Dialog {
        titles: &[TitleLine::Is("Do you want to proceed?")],
        shown: "Do you want to proceed?",
        kind: PromptKind::Permission,
        approves: numbered_yes,
        tool: header_tool,
    },
    Dialog {
        titles: &[TitleLine::Asks("Do you want to make this edit to ")],
        shown: "Do you want to make this edit?",
        kind: PromptKind::Permission,
        approves: numbered_yes,
        tool: |_, _| Some("Edit".into()),
    },
    Dialog {
        titles: &[TitleLine::Asks("Do you want to create ")],
        shown: "Do you want to create this file?",
        kind: PromptKind::Permission,
        approves: numbered_yes,
        tool: |_, _| Some("Write".into()),
    },
    Dialog {
        titles: &[TitleLine::Asks("Do you want to allow ")],
        shown: "Do you want to allow this?",
        kind: PromptKind::Permission,
        approves: numbered_yes,
        tool: header_tool,
    },
    Dialog {
        titles: &[TitleLine::Is("Would you like to proceed?")],
        shown: "Would you like to proceed?",
        kind: PromptKind::Plan,
        approves: numbered_yes,
        tool: |_, _| None,
    },
];

/// Claude draws the tool's header (`Bash command`, `Edit file x`, …) as the first line of
/// the dialog, under a rule line.
fn header_tool(above: &[&str], _below: &[&str]) -> Option<String> {
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

/// Its AskUserQuestion: numbered choices above an `Enter to select · … · Esc to cancel`
/// footer on the last painted lines.
pub fn question(lines: &[&str]) -> Option<Prompt> {
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
