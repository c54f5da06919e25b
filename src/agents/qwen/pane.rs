//! Qwen Code's state from its log, refined by its pane title and, when that can change the
//! answer, its screen (docs/agents/qwen.md#what-the-screen-adds):
//!
//! - a pending `functionCall` waits for approval under `✳︎`, runs under `◐︎`;
//! - a failed call (`api_error`) under `◐︎` is being retried: silently at first (the spinner
//!   only), then with a countdown on screen, which is `attention` (`rate limit — retrying`);
//! - a failed call under an idle title whose error line is gone from the screen was
//!   cancelled by the person (Escape during the retries writes nothing): `interrupted`;
//! - the input box: whether it holds text (a prompt Escape put back) to clear before a paste.

use super::screen::{retrying, title_state, Title};
use crate::state::Source;
use crate::state::{State, Status};

/// Whether the screen can change what the log and the title say.
pub fn wants_screen(status: &Status, title: &str) -> bool {
    status.state == State::Attention
        && matches!(title_state(title), Some(Title::Working | Title::Idle))
}

/// Folds the title (and, when [`wants_screen`], the screen) onto the log's reading.
pub fn refine(
    status: Status,
    source: Source,
    title: Option<&str>,
    screen: &mut dyn FnMut() -> Option<String>,
    now: crate::events::Time,
) -> (Status, Source) {
    let Some(title) = title.and_then(title_state) else {
        return (status, source);
    };
    let mut s = status;
    match title {
        Title::Approval if s.turn_open => {
            // The log holds the call and nothing after it until it ran.
            let tool = s
                .reason
                .as_deref()
                .and_then(|r| r.strip_prefix("tool: "))
                .map(str::to_string);
            s.state = State::Waiting;
            s.reason = Some(tool.map_or("permission".into(), |t| format!("permission: {t}")));
            s.seen = false;
            (s, Source::Pane)
        }
        Title::Working if s.state == State::Attention => {
            // The client is retrying the failed call: attention once it counts down on
            // screen, working while it retries in silence.
            match screen().as_deref().and_then(retrying) {
                Some(retry) => retry.mark(&mut s, now),
                None => {
                    s.state = State::Working;
                    s.reason = Some("retrying".into());
                    s.resets_at = None;
                }
            }
            s.turn_open = true;
            (s, Source::Pane)
        }
        Title::Idle if s.state == State::Attention => {
            // An older turn's error may stand just above the box once the cancelled prompt
            // left the history: a rate limit's line must name its 429.
            let code = matches!(s.reason.as_deref(), Some("rate limit" | "quota exceeded"))
                .then_some("429");
            if screen().is_some_and(|text| shows_error(&text, code)) {
                return (s, source);
            }
            // The error is gone from the screen: the person cancelled the retries.
            s.state = State::YourTurn;
            s.reason = Some("interrupted".into());
            s.resets_at = None;
            s.retry = None;
            (s, Source::Pane)
        }
        _ => (s, source),
    }
}

/// Lines above the input box that can hold the failed turn's error line.
const ABOVE_BOX: usize = 8;

/// Whether the lines just above the input box show an error (`✕ [API Error: …]`, naming
/// `code` when given): a final error, or one being retried; after Escape cancelled the
/// retries, neither is left.
fn shows_error(screen: &str, code: Option<&str>) -> bool {
    let clean = strip_ansi_escapes::strip_str(screen);
    let lines: Vec<&str> = clean
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let end = input_box(&lines).map_or(lines.len(), |(top, _)| top);
    lines[end.saturating_sub(ABOVE_BOX)..end]
        .iter()
        .any(|l| l.starts_with('✕') && code.map_or(true, |c| l.contains(c)))
}

/// The input box among a screen's non-empty trimmed lines: (index of its top rule, its
/// lines). The box is the last pair of full-width rules; its first line starts with `>`.
fn input_box<'a>(lines: &[&'a str]) -> Option<(usize, Vec<&'a str>)> {
    let rule = |l: &str| l.chars().count() >= 20 && l.chars().all(|c| c == '─');
    let bottom = lines.iter().rposition(|l| rule(l))?;
    let top = lines[..bottom].iter().rposition(|l| rule(l))?;
    let inside = lines[top + 1..bottom].to_vec();
    inside
        .first()
        .is_some_and(|l| l.starts_with('>'))
        .then_some((top, inside))
}

/// The placeholder an empty input box shows.
const PLACEHOLDER: &str = "Type your message";

/// How many lines the input box holds that the person did not type for this paste (a prompt
/// Escape put back), 0 when it is empty or not on screen.
pub fn held_lines(screen: &str) -> usize {
    let clean = strip_ansi_escapes::strip_str(screen);
    let lines: Vec<&str> = clean
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let Some((_, inside)) = input_box(&lines) else {
        return 0;
    };
    let first = inside[0].trim_start_matches('>').trim();
    let first = first.trim_matches(|c: char| c == '\u{200B}' || c.is_whitespace());
    if first.is_empty() || first.starts_with(PLACEHOLDER) {
        return 0;
    }
    inside.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::Windows;

    const STATES: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/real-clients/qwen-0.24.4/states"
    );

    fn state(name: &str, file: &str) -> String {
        std::fs::read_to_string(format!("{STATES}/{name}/{file}")).expect(name)
    }

    /// The state `classify` reads from a recorded log, refined by its recorded title and
    /// screen.
    fn read(name: &str) -> (Status, Source) {
        let log = state(name, "chat.jsonl");
        let events: Vec<_> = log
            .lines()
            .filter_map(|l| super::super::parse::parse_line(l.as_bytes()))
            .collect();
        let last = events.iter().filter_map(|e| e.at).max().expect("times");
        let now = last + chrono::Duration::seconds(2);
        let status = crate::state::classify(&events, now, &Windows::default(), Default::default());
        let title = state(name, "title.txt");
        let screen = state(name, "screen.txt");
        refine(
            status,
            Source::Transcript,
            Some(&title),
            &mut || Some(screen.clone()),
            now,
        )
    }

    #[test]
    fn the_recorded_states_read_as_a_person_saw_them() {
        let (s, _) = read("03-answer-done");
        assert_eq!(s.state, State::YourTurn);
        let (s, src) = read("23-approval-pending");
        assert_eq!(
            (s.state, s.reason.as_deref(), src),
            (
                State::Waiting,
                Some("permission: run_shell_command"),
                Source::Pane
            )
        );
        let (s, _) = read("24-approved-running");
        assert_eq!(
            (s.state, s.reason.as_deref()),
            (State::Working, Some("tool: run_shell_command"))
        );
        let (s, _) = read("06-interrupted");
        assert_eq!(
            (s.state, s.reason.as_deref()),
            (State::YourTurn, Some("interrupted"))
        );
        let (s, _) = read("09-badreq");
        assert_eq!(
            (s.state, s.reason.as_deref()),
            (
                State::Attention,
                Some("api error 400: model mock-model does not exist")
            )
        );
        let (s, _) = read("32-approval-refused");
        assert_eq!(
            (s.state, s.reason.as_deref()),
            (State::YourTurn, Some("interrupted"))
        );
    }

    #[test]
    fn a_rate_limit_is_working_while_retried_in_silence_then_attention_with_its_countdown() {
        for name in ["26-quota-retrying", "27-quota-retrying-2"] {
            let (s, _) = read(name);
            assert_eq!(
                (s.state, s.reason.as_deref(), s.turn_open),
                (State::Working, Some("retrying"), true),
                "{name}"
            );
        }
        let (s, src) = read("29-quota-retry-countdown");
        assert_eq!(s.state, State::Attention);
        assert_eq!(
            s.reason.as_deref(),
            Some("rate limit — retrying (attempt 1/10, next in 59 s)")
        );
        assert!(s.resets_at.is_some() && s.retry.is_some());
        assert_eq!(src, Source::Pane);
        // One turn: every attempt's record carries the same key.
        let (first, _) = read("26-quota-retrying");
        assert_eq!(first.turn_key, s.turn_key);
        assert!(s
            .turn_key
            .as_deref()
            .is_some_and(|k| k.ends_with("########2")));
    }

    #[test]
    fn escape_during_the_retries_is_interrupted_not_attention() {
        let (s, src) = read("30-quota-cancelled");
        assert_eq!(
            (s.state, s.reason.as_deref(), src),
            (State::YourTurn, Some("interrupted"), Source::Pane)
        );
    }

    #[test]
    fn an_older_turns_error_above_the_box_does_not_keep_a_cancelled_retry() {
        let screen = "  > BADREQ now\n  ✕ [API Error: 400 model mock-model does not exist] \
                      (Press Ctrl+Y to retry)\n\n────────────────────────\n> QUOTA please \u{200B}\n\
                      ────────────────────────\n  ➜ proj · mock-model\n";
        assert!(shows_error(screen, None));
        assert!(!shows_error(screen, Some("429")));
    }

    #[test]
    fn the_screen_is_read_only_for_a_failed_call() {
        let mut s = Status::idle();
        s.state = State::Attention;
        assert!(wants_screen(&s, "◐\u{FE0E} Qwen - demo"));
        assert!(wants_screen(&s, "Qwen - demo"));
        assert!(!wants_screen(&s, "my title"));
        s.state = State::Working;
        assert!(!wants_screen(&s, "✳\u{FE0E} Qwen - demo"));
    }

    #[test]
    fn the_box_holds_the_prompt_escape_put_back() {
        assert_eq!(held_lines(&state("06-interrupted", "screen.txt")), 1);
        assert_eq!(held_lines(&state("30-quota-cancelled", "screen.txt")), 1);
        assert_eq!(held_lines(&state("07-after-ctrl-u", "screen.txt")), 0);
        assert_eq!(held_lines(&state("03-answer-done", "screen.txt")), 0);
        assert_eq!(held_lines(&state("23-approval-pending", "screen.txt")), 0);
        assert_eq!(held_lines(""), 0);
    }
}
