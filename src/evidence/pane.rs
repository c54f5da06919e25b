//! What the pane shows (docs/design.md#evidence-order, source 4): an approval dialog on screen, or
//! no agent at all. Screen text is the weakest evidence, so recognition is strict: a known dialog
//! title as a whole line, answer options below it, the dialog at the bottom of the screen, and no
//! idle input box under it. Prose that merely mentions "proceed" never matches. The dialogs are
//! each agent's own (`agents::Agent::dialogs`); this is how any of them is found on a screen.

use serde::Serialize;

use crate::agents::{self, Agent};
use crate::read::dialog::{bottom, lowest, Dialog};
pub use crate::read::dialog::{Prompt, PromptKind};

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
    let lines = bottom(text);
    if lines.is_empty() {
        return None;
    }
    let lines = lines.as_slice();
    if let Some((agent, dialog, i)) = lowest(lines, dialog_titled) {
        return Some(PaneEvidence::Prompt(Prompt {
            agent: agent.kind(),
            kind: dialog.kind,
            tool: (dialog.tool)(&lines[..i], &lines[i + 1..]),
            title: dialog.shown.into(),
        }));
    }
    agents::all()
        .find_map(|a| a.question(lines))
        .map(PaneEvidence::Prompt)
}

/// The agent and dialog whose title `line` is.
fn dialog_titled(line: &str) -> Option<(&'static dyn Agent, &'static Dialog)> {
    agents::all().find_map(|a| {
        a.dialogs()
            .iter()
            .find(|d| d.titles.iter().any(|t| t.matches(line)))
            .map(|d| (a, d))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::AgentKind;

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
