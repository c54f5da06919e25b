//! Claude Code's approval dialogs and its question form, as its screen draws them.

use crate::events::AgentKind;
use crate::read::dialog::{
    content, join_content, no_choices, numbered_choices, numbered_labels, option_label, yes_label,
    Dialog, Prompt, PromptKind, TitleLine,
};

/// Its dialogs: run a tool, edit or create a file, allow an action, approve a plan.
pub const DIALOGS: &[Dialog] = &[
    Dialog {
        titles: &[TitleLine::Is("Do you want to proceed?")],
        shown: "Do you want to proceed?",
        kind: PromptKind::Permission,
        options: numbered_labels,
        approves: yes_label,
        tool: header_tool,
        detail: body,
        choices: numbered_choices,
    },
    Dialog {
        titles: &[TitleLine::Asks("Do you want to make this edit to ")],
        shown: "Do you want to make this edit?",
        kind: PromptKind::Permission,
        options: numbered_labels,
        approves: yes_label,
        tool: |_, _| Some("Edit".into()),
        detail: body,
        choices: numbered_choices,
    },
    Dialog {
        titles: &[TitleLine::Asks("Do you want to create ")],
        shown: "Do you want to create this file?",
        kind: PromptKind::Permission,
        options: numbered_labels,
        approves: yes_label,
        tool: |_, _| Some("Write".into()),
        detail: body,
        choices: numbered_choices,
    },
    Dialog {
        titles: &[TitleLine::Asks("Do you want to allow ")],
        shown: "Do you want to allow this?",
        kind: PromptKind::Permission,
        options: numbered_labels,
        approves: yes_label,
        tool: header_tool,
        detail: body,
        choices: numbered_choices,
    },
    Dialog {
        titles: &[TitleLine::Is("Would you like to proceed?")],
        shown: "Would you like to proceed?",
        kind: PromptKind::Plan,
        options: numbered_labels,
        approves: yes_label,
        tool: |_, _| None,
        detail: body,
        choices: no_choices,
    },
];

/// What the dialog shows between its rule line and its title, without the tool's header
/// (`Bash command`): the command and its description, the diff, the URL.
fn body(above: &[&str], _below: &[&str]) -> String {
    let start = rule_below(above);
    let mut lines = above[start..].iter().skip_while(|l| content(l).is_empty());
    let header = lines.next().map(|l| content(l)).unwrap_or_default();
    let rest = join_content(lines);
    match (header_tool_name(header), rest.is_empty()) {
        (Some(_), _) => rest,
        (None, true) => header.to_string(),
        (None, false) => format!("{header}\n{rest}"),
    }
}

/// The first line under the dialog's rule line (at most 12 lines up when there is none).
fn rule_below(above: &[&str]) -> usize {
    above
        .iter()
        .rposition(|l| {
            let t = l.trim();
            t.chars().count() >= 10 && t.chars().all(|c| c == '─' || c == '━')
        })
        .map(|i| i + 1)
        .unwrap_or(above.len().saturating_sub(12))
}

/// Claude draws the tool's header (`Bash command`, `Edit file x`, …) as the first line of
/// the dialog, under a rule line.
fn header_tool(above: &[&str], _below: &[&str]) -> Option<String> {
    let header = above[rule_below(above)..]
        .iter()
        .map(|l| content(l))
        .find(|l| !l.is_empty())?;
    header_tool_name(header).map(str::to_string)
}

/// The tool a dialog's header line names.
fn header_tool_name(header: &str) -> Option<&'static str> {
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
    Some(tool)
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

#[cfg(test)]
mod tests {
    use crate::agents::Agent;
    use crate::read::request::{PromptKind, RequestSource};

    const BASH: &str = "⏺ I'll create the marker file.\n\n────────────────────────────────────────────────\n Bash command\n\n   touch agentpane-tool-ran.txt\n   Create a marker file\n\n Do you want to proceed?\n ❯ 1. Yes\n   2. Yes, and don't ask again for touch commands in /tmp/w/proj\n   3. No, and tell Claude what to do differently (esc)\n";

    #[test]
    fn its_bash_dialog_is_the_pending_calls_dialog() {
        let d = crate::agents::claude::Claude
            .on_screen(BASH)
            .expect("the dialog");
        assert_eq!(d.request.tool, "Bash");
        assert_eq!(d.request.from, RequestSource::Screen);
        assert_eq!(d.request.summary, "touch agentpane-tool-ran.txt");
        assert_eq!(d.choices.allow, Some(vec!["1".to_string()]));
        assert_eq!(d.choices.always, Some(vec!["2".to_string()]));
        assert_eq!(d.choices.deny, Some(vec!["3".to_string()]));
        let logged = crate::agents::claude::request::of_call(&serde_json::json!({
            "type": "tool_use", "id": "t", "name": "Bash",
            "input": {"command": "touch agentpane-tool-ran.txt", "description": "Create a marker file"}
        }));
        assert!(logged.shown_in(&d.request));
        let other = crate::agents::claude::request::of_call(&serde_json::json!({
            "type": "tool_use", "id": "t", "name": "Bash", "input": {"command": "rm -rf /"}
        }));
        assert!(!other.shown_in(&d.request));
    }

    #[test]
    fn its_question_form_is_shown_with_no_keys() {
        let screen = "☐ Database\n\nWhich database?\n\n❯ 1. Postgres\n  2. SQLite\n  3. Type something.\n\nEnter to select · ↑/↓ to navigate · Esc to cancel\n";
        let d = crate::agents::claude::Claude
            .on_screen(screen)
            .expect("the question");
        assert_eq!(d.request.kind, PromptKind::Question);
        assert!(d.request.text.contains("Which database?"));
        assert_eq!(d.choices, Default::default());
    }

    #[test]
    fn lines_of_the_command_are_never_its_options() {
        let command = crate::read::dialog::option_like_command();
        let body: String = command.lines().map(|l| format!("   {l}\n")).collect();
        let screen = BASH.replace("   touch agentpane-tool-ran.txt\n", &body);
        let d = crate::agents::claude::Claude
            .on_screen(&screen)
            .expect("the dialog");
        let keys = crate::read::dialog::single_keys(&d.choices);
        assert_eq!(keys, [Some("1"), Some("2"), Some("3")]);
        assert_eq!(d.options.len(), 3, "{:?}", d.options);
        assert_eq!(d.request.summary, "cat > notes.md <<'EOF'");
        let logged = crate::agents::claude::request::of_call(&serde_json::json!({
            "type": "tool_use", "id": "t", "name": "Bash",
            "input": {"command": command, "description": "Create a marker file"}
        }));
        assert!(logged.shown_in(&d.request), "{:?}", d.request);
    }
}
