//! Codex's approval dialogs as its screen draws them, today's and those of the TypeScript
//! Codex before it.

use crate::read::dialog::{
    command_first, content, detail_above, detail_below, no_choices, numbered_choices, numbered_yes,
    option_label, Dialog, PromptKind, TitleLine,
};

/// Its dialogs: run a command, make edits, grant permissions.
pub const DIALOGS: &[Dialog] = &[
    Dialog {
        titles: &[TitleLine::Is(
            "Would you like to run the following command?",
        )],
        shown: "Would you like to run the following command?",
        kind: PromptKind::Permission,
        approves: numbered_yes,
        tool: |_, below| Some(command_program(below).unwrap_or_else(|| "command".into())),
        detail: |_, below| command_first(below),
        choices: numbered_choices,
    },
    Dialog {
        titles: &[TitleLine::Is("Would you like to make the following edits?")],
        shown: "Would you like to make the following edits?",
        kind: PromptKind::Permission,
        approves: numbered_yes,
        tool: |_, _| Some("edit".into()),
        detail: |_, below| detail_below(below),
        choices: numbered_choices,
    },
    Dialog {
        titles: &[TitleLine::Is("Would you like to grant these permissions?")],
        shown: "Would you like to grant these permissions?",
        kind: PromptKind::Permission,
        approves: numbered_yes,
        tool: |_, _| Some("permissions".into()),
        detail: |_, below| detail_below(below),
        choices: numbered_choices,
    },
    // The TypeScript Codex drew the command above the question.
    Dialog {
        titles: &[TitleLine::Is("Allow command?")],
        shown: "Allow command?",
        kind: PromptKind::Permission,
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
        approves: old_yes,
        tool: |_, _| Some("edit".into()),
        detail: |above, _| detail_above(above, 12),
        choices: no_choices,
    },
];

/// The TypeScript Codex's options: numbered, or `Yes (y)` / `[y] Yes`.
fn old_yes(line: &str) -> bool {
    if option_label(line).is_some() {
        return numbered_yes(line);
    }
    let l = line.trim_start_matches(['❯', '›', '>', '»', ' ']);
    l.starts_with("Yes (y)") || l.starts_with("[y] Yes") || l.starts_with("[y] yes")
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

#[cfg(test)]
mod tests {
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
}
