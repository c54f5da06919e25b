//! Codex's approval dialogs as its screen draws them, today's and those of the TypeScript
//! Codex before it.

use crate::read::dialog::{
    command_first, content, detail_above, detail_below, no_choices, numbered_choices,
    numbered_labels, yes_label, Dialog, PromptKind, TitleLine,
};

/// Its dialogs: run a command, make edits, grant permissions.
pub const DIALOGS: &[Dialog] = &[
    Dialog {
        titles: &[TitleLine::Is(
            "Would you like to run the following command?",
        )],
        shown: "Would you like to run the following command?",
        kind: PromptKind::Permission,
        options: numbered_labels,
        approves: yes_label,
        tool: |_, below| Some(command_program(below).unwrap_or_else(|| "command".into())),
        detail: |_, below| command_first(below),
        choices: numbered_choices,
    },
    Dialog {
        titles: &[TitleLine::Is("Would you like to make the following edits?")],
        shown: "Would you like to make the following edits?",
        kind: PromptKind::Permission,
        options: numbered_labels,
        approves: yes_label,
        tool: |_, _| Some("edit".into()),
        detail: |_, below| detail_below(below),
        choices: numbered_choices,
    },
    Dialog {
        titles: &[TitleLine::Is("Would you like to grant these permissions?")],
        shown: "Would you like to grant these permissions?",
        kind: PromptKind::Permission,
        options: numbered_labels,
        approves: yes_label,
        tool: |_, _| Some("permissions".into()),
        detail: |_, below| detail_below(below),
        choices: numbered_choices,
    },
    // The TypeScript Codex drew the command above the question.
    Dialog {
        titles: &[TitleLine::Is("Allow command?")],
        shown: "Allow command?",
        kind: PromptKind::Permission,
        options: old_options,
        approves: old_yes,
        tool: |above, _| {
            Some(
                command_program(&above[above.len().saturating_sub(12)..])
                    .unwrap_or_else(|| "command".into()),
            )
        },
        detail: |above, _| detail_above(above, 12),
        choices: no_choices,
    },
    Dialog {
        titles: &[
            TitleLine::Is("Allow changes?"),
            TitleLine::Is("Apply changes?"),
        ],
        shown: "Allow changes?",
        kind: PromptKind::Permission,
        options: old_options,
        approves: old_yes,
        tool: |_, _| Some("edit".into()),
        detail: |above, _| detail_above(above, 12),
        choices: no_choices,
    },
];

/// The TypeScript Codex's options, under its title (the command is above it): numbered, or
/// every line as drawn (`❯ Yes (y)`, `[y] Yes`).
fn old_options(below: &[&str]) -> Vec<String> {
    let numbered = numbered_labels(below);
    if !numbered.is_empty() {
        return numbered;
    }
    below
        .iter()
        .map(|l| content(l).trim_start_matches(['❯', '›', '>', '»', ' ']))
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect()
}

/// Its approving option: a plain yes, or `Yes (y)` / `[y] Yes`.
fn old_yes(label: &str) -> bool {
    yes_label(label) || label.starts_with("[y] Yes") || label.starts_with("[y] yes")
}

/// The program of its `$ command` line, e.g. `git` for `$ git push`.
fn command_program(lines: &[&str]) -> Option<String> {
    lines.iter().find_map(|l| {
        let cmd = content(l).strip_prefix("$ ")?;
        let program = cmd.split_whitespace().next()?;
        let name = program.rsplit('/').next().unwrap_or(program);
        (!name.is_empty()).then(|| crate::text::bounded(name, 64))
    })
}

/// The command dialog as Codex 0.171 draws it, asking about `command` for `reason` (its
/// approval overlay: the title, `Environment:` and `Reason:`, the command — `$ ` before its
/// first line, each further line as written — then its options, `›` before the selected one,
/// and the key hint), for the fake Codex and tests.
pub fn drawn_run(command: &str, reason: &str) -> String {
    let mut lines = command.lines();
    let first = lines.next().unwrap_or_default();
    let rest: String = lines.map(|l| format!("  {l}\n")).collect();
    let program = first.split_whitespace().next().unwrap_or_default();
    format!(
        "  Would you like to run the following command?\n\n  Environment: local\n  Reason: \
         {reason}\n\n  $ {first}\n{rest}\n› 1. Yes, proceed (y)\n  2. Yes, and don't ask again \
         for commands that start with `{program}` (p)\n  3. No, and tell Codex what to do \
         differently (esc)\n\n  Press enter to confirm or esc to cancel\n"
    )
}

#[cfg(test)]
mod tests {
    use super::drawn_run;
    use crate::agents::Agent;

    #[test]
    fn its_command_dialog_reads_the_command_first_with_numbered_keys() {
        let screen = "  Would you like to run the following command?\n\n  Environment: local\n  Reason: the mock needs it\n\n  $ touch approved.txt\n\n› 1. Yes, proceed (y)\n  2. Yes, and don't ask again for commands that start with `touch approved.txt` (p)\n  3. No, and tell Codex what to do differently (esc)\n\n  Press enter to confirm or esc to cancel\n";
        let d = crate::agents::codex::Codex
            .on_screen(screen)
            .expect("the dialog");
        assert_eq!(d.request.tool, "touch");
        assert_eq!(d.request.summary, "$ touch approved.txt");
        assert_eq!(d.choices.allow, Some(vec!["1".to_string()]));
        assert_eq!(d.choices.always, Some(vec!["2".to_string()]));
        assert_eq!(d.choices.deny, Some(vec!["3".to_string()]));
    }

    #[test]
    fn lines_of_the_command_are_never_its_options() {
        let command = crate::read::dialog::option_like_command();
        let d = crate::agents::codex::Codex
            .on_screen(&drawn_run(&command, "write the notes"))
            .expect("the dialog");
        // The options Codex draws, not `1. Normalise …` (once read as "no") nor `2. Yes …`.
        let keys = crate::read::dialog::single_keys(&d.choices);
        assert_eq!(keys, [Some("1"), Some("2"), Some("3")]);
        assert_eq!(d.options.len(), 3, "{:?}", d.options);
        assert!(d.options[2].starts_with("No, and tell Codex"));
        // The command is read whole, its lines together, above what else the dialog says.
        assert_eq!(d.request.summary, "$ cat > notes.md <<'EOF'");
        assert!(
            d.request
                .text
                .starts_with(&format!("$ {command}\nEnvironment: local")),
            "{}",
            d.request.text
        );
    }

    #[test]
    fn a_command_of_several_lines_is_the_logged_call_s() {
        let command = "cat > notes.md <<'EOF'\nhello\nEOF";
        let call = serde_json::json!({"type": "response_item", "payload": {
            "type": "function_call", "name": "exec_command", "call_id": "c1",
            "arguments": serde_json::json!({"cmd": command, "justification": "write the notes"})
                .to_string()}});
        let logged = crate::agents::codex::request::pending(&[call]).expect("pending");
        let shown = crate::agents::codex::Codex
            .on_screen(&drawn_run(command, "write the notes"))
            .expect("the dialog");
        assert!(logged.shown_in(&shown.request), "{:?}", shown.request);
    }

    #[test]
    fn a_dialog_whose_options_are_not_drawn_yet_has_none() {
        // Only the command, holding option-like lines: no live dialog, no keys.
        let command = crate::read::dialog::option_like_command();
        let partial: String = drawn_run(&command, "write the notes")
            .lines()
            .take_while(|l| !l.starts_with("› 1."))
            .map(|l| format!("{l}\n"))
            .collect();
        assert_eq!(crate::agents::codex::Codex.on_screen(&partial), None);
    }
}
