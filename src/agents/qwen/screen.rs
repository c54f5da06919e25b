//! What Qwen Code's pane says that its log cannot: whether a pending tool call waits for
//! approval or runs (the log writes the call, then nothing until its result), and a retry
//! loop's countdown.
//!
//! The title is `<status><base>`: the status is `◐︎ ` (U+25D0 and the text-style selector
//! U+FE0E, then a space) while the model responds or a tool runs, `✳︎ ` (U+2733 U+FE0E) while
//! a tool waits for confirmation, nothing when idle; the base is `Qwen - <folder>`, or the
//! session's name, or `$CLI_TITLE` (0.24.4 `titleStatusPrefix`, `formatSessionWindowTitle`).
//! Outside a multiplexer it is padded with spaces to 80 characters; on exit it is emptied.
//! `ui.hideWindowTitle` or `ui.showStatusInTitle: false` turn the status off.

use crate::agents::retry::{number_after, Retrying};

/// Responding, or a tool running.
pub const WORKING_GLYPH: char = '\u{25D0}';
/// A tool call waiting for the person's confirmation.
pub const APPROVAL_GLYPH: char = '\u{2733}';
/// The variation selector (text style) the client puts after each glyph.
const TEXT_STYLE: char = '\u{FE0E}';

/// The state Qwen Code puts in the pane title.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Title {
    /// `◐︎ …`: the model is responding or a tool runs.
    Working,
    /// `✳︎ …`: a tool call waits for approval.
    Approval,
    /// `Qwen - <folder>` with no status: waiting for the person.
    Idle,
}

/// Reads a pane title; `None` when it carries no status and is not the default `Qwen - …`
/// base (a named session, `$CLI_TITLE`, the status turned off, another program's title):
/// then the title says nothing either way.
pub fn title_state(title: &str) -> Option<Title> {
    let t = title.trim();
    let mut chars = t.chars();
    let first = chars.next()?;
    let status = chars
        .as_str()
        .strip_prefix(TEXT_STYLE)
        .is_some_and(|r| r.starts_with(' '));
    match first {
        WORKING_GLYPH if status => Some(Title::Working),
        APPROVAL_GLYPH if status => Some(Title::Approval),
        _ if t.starts_with("Qwen - ") => Some(Title::Idle),
        _ => None,
    }
}

/// Lines from the bottom that can hold the retry countdown (it sits above the input box, its
/// two rules and a two-line footer).
const NEAR_BOTTOM: usize = 12;

/// The retry countdown on screen, if Qwen Code waits to retry a rate-limited request. 0.24.4
/// shows, once its inner back-off (seven attempts over ~95 s, the spinner only) gave up:
/// `✕ [API Error: 429 <message>] (Retrying in 59s… (attempt 1/10))` and below it
/// `↻ Retrying in 59 seconds… (attempt 1/10)` (`startRetryCountdown`; the second line is
/// translated with the UI language, the first is not). The countdown starts at 60 s.
pub fn retrying(screen: &str) -> Option<Retrying> {
    let tail = crate::agents::screen::near_bottom(screen, NEAR_BOTTOM);
    let at = tail
        .iter()
        .rposition(|l| l.contains("Retrying in ") && l.contains("(attempt "))?;
    let line = tail[at].as_str();
    let (attempt, limit) = line[line.find("(attempt ")? + "(attempt ".len()..]
        .split_once('/')
        .map(|(a, l)| {
            let digits = |s: &str| -> Option<u32> {
                s.trim()
                    .chars()
                    .take_while(char::is_ascii_digit)
                    .collect::<String>()
                    .parse()
                    .ok()
            };
            (digits(a), digits(l))
        })?;
    // The error is the `✕` line the hint belongs to (the same line or just above).
    let error = tail[..=at]
        .iter()
        .rev()
        .take(3)
        .find_map(|l| l.strip_prefix('✕'))
        .map(error_of)
        .filter(|e| !e.is_empty())
        .unwrap_or_else(|| "Rate limit exceeded".to_string());
    Some(Retrying {
        error,
        attempt,
        limit,
        next_in: number_after(line, "Retrying in "),
    })
}

/// `[API Error: 429 <message>] (Retrying in …)` → `429 <message>`.
fn error_of(line: &str) -> String {
    let e = line.split(" (Retrying in ").next().unwrap_or(line).trim();
    let e = e.split("Retrying in ").next().unwrap_or(e).trim();
    let e = e
        .strip_prefix("[API Error:")
        .map_or(e, |inner| inner.trim_end_matches(']'));
    e.trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    const STATES: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/real-clients/qwen-0.24.4/states"
    );

    fn state(name: &str, file: &str) -> String {
        std::fs::read_to_string(format!("{STATES}/{name}/{file}")).expect(name)
    }

    #[test]
    fn the_recorded_titles_read_as_their_states() {
        for (name, want) in [
            ("01-fresh", Some(Title::Idle)),
            ("02-answer-during", Some(Title::Working)),
            ("03-answer-done", Some(Title::Idle)),
            ("05-slow-streaming", Some(Title::Working)),
            ("23-approval-pending", Some(Title::Approval)),
            ("24-approved-running", Some(Title::Working)),
            ("29-quota-retry-countdown", Some(Title::Working)),
            ("31-approval-pending-2", Some(Title::Approval)),
            ("32-approval-refused", Some(Title::Idle)),
            // After exit the client empties the title.
            ("33-quit", None),
        ] {
            assert_eq!(title_state(&state(name, "title.txt")), want, "{name}");
        }
    }

    #[test]
    fn only_a_status_glyph_or_the_default_base_counts() {
        assert_eq!(title_state("my-session-name"), None);
        assert_eq!(title_state("◐ half moon notes"), None);
        assert_eq!(title_state("✳︎ named-session"), Some(Title::Approval));
        // Padded to 80 columns outside a multiplexer.
        assert_eq!(
            title_state(&format!("{:<80}", "Qwen - demo")),
            Some(Title::Idle)
        );
    }

    #[test]
    fn the_first_retries_show_no_countdown() {
        for name in ["26-quota-retrying", "27-quota-retrying-2"] {
            assert_eq!(retrying(&state(name, "screen.txt")), None, "{name}");
        }
    }

    #[test]
    fn the_recorded_countdown_is_read() {
        let want = |next| Retrying {
            error: "429 Rate limit reached for mock-model".into(),
            attempt: Some(1),
            limit: Some(10),
            next_in: Some(next),
        };
        let first = state("28-quota-retry-countdown-first", "screen.txt");
        assert_eq!(retrying(&first), Some(want(60)));
        let later = state("29-quota-retry-countdown", "screen.txt");
        assert_eq!(retrying(&later), Some(want(59)));
        assert_eq!(
            want(59).reason(),
            "rate limit — retrying (attempt 1/10, next in 59 s)"
        );
    }

    #[test]
    fn the_countdown_is_read_with_its_error() {
        // The hint on its own line under a plain error, as the template allows.
        let screen = "  > QUOTA please\n\n  ✕ 429 Rate limit reached for mock-model\n    \
                      Retrying in 52s… (attempt 1/10)\n\n────\n>   Type your message\n────\n  \
                      ➜ demo · mock-model\n";
        assert_eq!(
            retrying(screen),
            Some(Retrying {
                error: "429 Rate limit reached for mock-model".into(),
                attempt: Some(1),
                limit: Some(10),
                next_in: Some(52),
            })
        );
        let own_line = "  Retrying in 7 seconds… (attempt 3/10)\n>   Type\n";
        let r = retrying(own_line).expect("countdown");
        assert_eq!(
            r.reason(),
            "rate limit — retrying (attempt 3/10, next in 7 s)"
        );
        // An answer that talks about retrying is no countdown.
        assert_eq!(retrying("  ◆︎ The client keeps retrying in 5s.\n"), None);
    }
}
