//! opencode's permission dialog as its screen draws it (1.18: `△ Permission required`, then
//! `Allow once   Allow always   Reject`), and the keys that answer it.

use crate::read::dialog::{
    command_first, content, no_choices, Choices, Dialog, OnScreen, PromptKind, TitleLine,
};

/// Its one dialog. It names a kind (`# Shell command`); the database names the tool.
pub const DIALOGS: &[Dialog] = &[Dialog {
    titles: &[
        TitleLine::Is("△ Permission required"),
        TitleLine::Is("Permission required"),
    ],
    shown: "Permission required",
    kind: PromptKind::Permission,
    options: |below| {
        options_line(below).map_or_else(Vec::new, |_| OPTIONS.map(str::to_string).to_vec())
    },
    approves: |option| option == OPTIONS[0],
    tool: |_, _| None,
    // What it asks is drawn above its options line: a line of the command that reads
    // `Allow once` is part of the command.
    detail: |_, below| command_first(&below[..options_line(below).unwrap_or(below.len())]),
    // Its options are chosen with arrows from the selected one, which only the screen's
    // colours show: see [`on_screen`].
    choices: no_choices,
}];

/// Its options, left to right.
const OPTIONS: [&str; 3] = ["Allow once", "Allow always", "Reject"];

/// Where its options are drawn: the lowest line that holds all three, in order, and nothing
/// but its key hints after them (a command's line is never its options line).
fn options_line(below: &[&str]) -> Option<usize> {
    below.iter().rposition(|l| {
        let l = content(l);
        let Some(rest) = l.strip_prefix(OPTIONS[0]) else {
            return false;
        };
        let Some((gap, rest)) = rest.split_once(OPTIONS[1]) else {
            return false;
        };
        let Some((gap2, _hints)) = rest.split_once(OPTIONS[2]) else {
            return false;
        };
        gap.trim().is_empty() && gap2.trim().is_empty()
    })
}

/// The line the confirmation of "Allow always" shows (`△ Always allow`, the patterns it will
/// allow, `Confirm   Cancel` with Confirm selected).
pub const ALWAYS_STEP: &str = "Always allow";

/// The line Kilo Code's reject step shows (`△ Reject permission`, then `Tell Kilo what to do
/// differently`, a text box, `enter confirm  esc cancel`).
pub const REJECT_STEP: &str = "Reject permission";

/// Its dialog on `screen` (with colours, `capture-pane -e`, for the keys): allowing moves from
/// the selected option to the wanted one and presses Enter, and is not offered when the
/// selection cannot be told; "Allow always" asks to confirm, so its Enter is followed by
/// another once the confirmation is up (Confirm is selected there). Denying is Escape where it rejects (`escape_rejects`: opencode);
/// elsewhere (Kilo Code) Escape opens the reject step, whose Enter with its text box left
/// empty rejects (its Escape would go back to the dialog, the call still open).
pub fn on_screen(screen: &str, escape_rejects: bool) -> Option<OnScreen> {
    let mut d = crate::read::dialog::on_screen(DIALOGS, screen)?;
    if still_drawn(&d.request.text) {
        return None;
    }
    let moves = |to: usize| {
        let from = selected(screen)?;
        let key = if to >= from { "Right" } else { "Left" };
        let mut keys = vec![key.to_string(); to.abs_diff(from)];
        keys.push("Enter".to_string());
        Some(keys)
    };
    d.choices = Choices {
        allow: moves(0),
        always: moves(1).map(|mut keys| {
            keys.push("Enter".to_string());
            keys
        }),
        always_step: Some(ALWAYS_STEP),
        // opencode 1.18.33 rejects with Escape. Kilo Code 7.7.7's Escape (or Reject) asks
        // what to do instead; Enter there, nothing written, rejects the call.
        deny: Some(if escape_rejects {
            vec!["Escape".to_string()]
        } else {
            vec!["Escape".to_string(), "Enter".to_string()]
        }),
        deny_step: (!escape_rejects).then_some(REJECT_STEP),
    };
    Some(d)
}

/// A shell command's dialog drawn so far as its kind and folder, the command still to come
/// (opencode 1.18.33's first frame, caught in CI): a request without its command would ask
/// the person to allow they know not what.
fn still_drawn(text: &str) -> bool {
    text.lines().any(|l| l == "# Shell command") && !text.lines().any(|l| l.starts_with("$ "))
}

/// Which option is selected: the one drawn in a style of its own (the other two share
/// theirs). `None` without colours, or when no one option stands out.
fn selected(screen: &str) -> Option<usize> {
    let line = screen
        .lines()
        .rev()
        .find(|l| OPTIONS.iter().all(|o| l.contains(o)))?;
    let styles: Vec<&str> = OPTIONS
        .iter()
        .map(|o| {
            let before = &line[..line.find(o).unwrap_or(0)];
            before.rfind('\x1b').map_or("", |at| &before[at..])
        })
        .collect();
    if styles.iter().any(|s| s.is_empty()) {
        return None;
    }
    let odd: Vec<usize> = (0..3)
        .filter(|&i| styles.iter().filter(|s| **s == styles[i]).count() == 1)
        .collect();
    match odd.as_slice() {
        // One stands out and the other two agree.
        [one] => Some(*one),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The options line of 1.18.33 as `capture-pane -e` shows it, `sel` selected.
    fn line(sel: usize) -> String {
        let on = |o: &str| format!("\x1b[48;5;215m \x1b[38;5;232m{o}\x1b[38;5;15m \x1b[48;5;234m");
        let off = |o: &str| format!("  \x1b[38;5;8m{o}\x1b[38;5;15m ");
        let parts: Vec<String> = OPTIONS
            .iter()
            .enumerate()
            .map(|(i, o)| if i == sel { on(o) } else { off(o) })
            .collect();
        format!(
            "  ┃ {}   ctrl+f fullscreen  ⇆ select  enter confirm\n",
            parts.join("")
        )
    }

    fn screen(sel: usize) -> String {
        format!(
            "  ┃  △ Permission required\n  ┃    # Shell command\n  ┃\n  ┃  $ echo hello\n  ┃\n{}",
            line(sel)
        )
    }

    #[test]
    fn the_selected_option_is_the_one_drawn_apart() {
        for sel in 0..3 {
            assert_eq!(selected(&screen(sel)), Some(sel));
        }
        // Without colours there is no telling.
        let plain = strip_ansi_escapes::strip_str(screen(0));
        assert_eq!(selected(&plain), None);
    }

    #[test]
    fn allowing_moves_from_the_selection_and_rejecting_is_escape() {
        let d = on_screen(&screen(0), true).expect("the dialog");
        assert_eq!(d.request.summary, "$ echo hello");
        assert_eq!(d.choices.allow, Some(vec!["Enter".to_string()]));
        let keys = |k: &[&str]| Some(k.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert_eq!(d.choices.always, keys(&["Right", "Enter", "Enter"]));
        assert_eq!(d.choices.always_step, Some(ALWAYS_STEP));
        assert_eq!(d.choices.deny, keys(&["Escape"]));
        // Kilo Code: Escape opens its reject step, Enter there rejects.
        let kilo = on_screen(&screen(0), false).unwrap().choices;
        assert_eq!(kilo.deny, keys(&["Escape", "Enter"]));
        assert_eq!(kilo.deny_step, Some(REJECT_STEP));
        assert_eq!(d.choices.deny_step, None);
        let d = on_screen(&screen(2), true).unwrap();
        assert_eq!(d.choices.allow, keys(&["Left", "Left", "Enter"]));
        // The same request whatever is selected, with colours or without.
        let plain = strip_ansi_escapes::strip_str(screen(1));
        let p = on_screen(&plain, true).unwrap();
        assert_eq!(p.request, d.request);
        assert_eq!(p.choices.allow, None);
        assert_eq!(p.choices.deny, keys(&["Escape"]));
    }

    #[test]
    fn a_shell_dialog_before_its_command_is_drawn_asks_nothing_yet() {
        let first_frame = format!(
            "  ┃  △ Permission required\n  ┃    # Shell command\n  ┃\n  ┃  /tmp/work/proj\n  ┃\n{}",
            line(0)
        );
        assert!(on_screen(&first_frame, true).is_none());
        assert!(on_screen(&screen(0), true).is_some());
    }

    #[test]
    fn the_recorded_dialog_reads_its_command() {
        let screen =
            include_str!("../../../fixtures/real-clients/opencode-1.18.33/permission-screen.txt");
        let d = on_screen(screen, true).expect("the dialog");
        assert_eq!(d.request.summary, "$ echo hello");
    }

    #[test]
    fn lines_of_the_command_are_never_its_options() {
        let command = crate::read::dialog::option_like_command();
        let asks: String = command
            .lines()
            .enumerate()
            .map(|(i, l)| format!("  ┃  {}{l}\n", if i == 0 { "$ " } else { "" }))
            .collect();
        for sel in 0..3 {
            let screen = screen(sel).replace("  ┃  $ echo hello\n", &asks);
            let d = on_screen(&screen, true).expect("the dialog");
            assert_eq!(d.options, OPTIONS.map(str::to_string).to_vec());
            assert_eq!(selected(&screen), Some(sel));
            assert_eq!(d.choices.deny, Some(vec!["Escape".to_string()]));
            // The command is read whole, up to the options line it draws.
            assert!(
                crate::read::request::squash(&d.request.text)
                    .contains(&crate::read::request::squash(&command)),
                "{}",
                d.request.text
            );
        }
    }
}
