//! Reading an agent's screen, what several agents share: the lines near its bottom, a
//! spinner's text, and what a pane whose log is not known shows. Each agent's own words (its
//! dialogs, its spinner's label) stay in its folder.

use crate::state::{Source, State, Status};

/// The last `n` lines of the screen that are not blank, trimmed, without colours.
pub fn near_bottom(screen: &str, n: usize) -> Vec<String> {
    let clean = strip_ansi_escapes::strip_str(screen);
    let lines: Vec<String> = clean
        .lines()
        .map(|l| l.trim().to_string())
        .filter(|l| !l.is_empty())
        .collect();
    let from = lines.len().saturating_sub(n);
    lines[from..].to_vec()
}

/// The text after a braille spinner (`⠙ Working...` → `Working...`), if `line` starts with one.
pub fn after_spinner(line: &str) -> Option<&str> {
    let mut chars = line.chars();
    let first = chars.next()?;
    ('\u{2800}'..='\u{28FF}')
        .contains(&first)
        .then(|| chars.as_str().trim_start())
}

/// Whether one of the last `n` lines of the screen is a spinner whose text `says` holds.
pub fn spinning(screen: &str, n: usize, says: impl Fn(&str) -> bool) -> bool {
    near_bottom(screen, n)
        .iter()
        .any(|l| after_spinner(l).is_some_and(&says))
}

/// What the screen `shown` says of a pane whose log is not known: a dialog (`waiting_on`: the
/// `waiting` reason of the one it shows) or a running turn (`working`), each an open turn read
/// from the pane; else `status` as it was.
pub fn without_log(
    mut status: Status,
    source: Source,
    shown: Option<String>,
    waiting_on: impl Fn(&str) -> Option<String>,
    working: impl Fn(&str) -> bool,
) -> (Status, Source) {
    let Some(shown) = shown else {
        return (status, source);
    };
    if let Some(reason) = waiting_on(&shown) {
        status.state = State::Waiting;
        status.reason = Some(reason);
    } else if working(&shown) {
        status.state = State::Working;
    } else {
        return (status, source);
    }
    status.turn_open = true;
    (status, Source::Pane)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bottom_is_its_last_painted_lines_trimmed_and_plain() {
        let screen = "top\n\n  \x1b[31mred\x1b[0m  \n\n  last \n   \n";
        assert_eq!(near_bottom(screen, 2), vec!["red", "last"]);
        assert_eq!(near_bottom(screen, 9), vec!["top", "red", "last"]);
        assert!(near_bottom("", 3).is_empty());
    }

    #[test]
    fn a_spinner_line_gives_its_text() {
        assert_eq!(after_spinner("⠙ Working..."), Some("Working..."));
        assert_eq!(after_spinner("Working..."), None);
        assert_eq!(after_spinner(""), None);
        let working = |t: &str| t.starts_with("Working");
        assert!(spinning("⠙ Working...\n> \n", 2, working));
        assert!(
            !spinning("⠙ Working...\n> \nfooter\n", 2, working),
            "too far up"
        );
        assert!(!spinning("⠙ Thinking\n", 2, working));
    }

    #[test]
    fn an_unlogged_pane_reads_its_dialog_then_its_spinner() {
        let asks = |s: &str| s.contains("Allow?").then(|| "permission: Bash".to_string());
        let runs = |s: &str| s.contains("⠙");
        let idle = Status::idle();
        let (s, src) = without_log(
            idle.clone(),
            Source::None,
            Some("Allow? ⠙".into()),
            asks,
            runs,
        );
        assert_eq!(
            (s.state, s.reason.as_deref(), s.turn_open, src),
            (State::Waiting, Some("permission: Bash"), true, Source::Pane)
        );
        let (s, src) = without_log(
            idle.clone(),
            Source::None,
            Some("⠙ Working".into()),
            asks,
            runs,
        );
        assert_eq!(
            (s.state, s.turn_open, src),
            (State::Working, true, Source::Pane)
        );
        let (s, src) = without_log(idle.clone(), Source::None, Some("> ".into()), asks, runs);
        assert_eq!((s, src), (idle.clone(), Source::None));
        let (s, src) = without_log(idle.clone(), Source::None, None, asks, runs);
        assert_eq!((s, src), (idle, Source::None));
    }
}
