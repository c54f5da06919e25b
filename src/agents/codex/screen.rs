//! What Codex's screen says that its rollout does not: the retry loop of a failed request.
//! Codex 0.171 writes nothing to the rollout while it retries (only the final
//! `task_complete` with its error); its status line reads
//! `• Server is busy, reconnecting 3/5 (4s • esc to interrupt)` with the last error below it:
//! `└ Exceeded retry limit, last status: 429 Too Many Requests`.

use crate::agents::retry::Retrying;

/// Lines from the bottom that can hold the status line (above the input box and footer).
const NEAR_BOTTOM: usize = 12;

/// The retry loop on screen, if Codex is reconnecting after a failed request.
pub fn retrying(screen: &str) -> Option<Retrying> {
    let clean = strip_ansi_escapes::strip_str(screen);
    let lines: Vec<&str> = clean.lines().filter(|l| !l.trim().is_empty()).collect();
    let bottom = &lines[lines.len().saturating_sub(NEAR_BOTTOM)..];
    let at = bottom.iter().position(|l| {
        l.trim_start().starts_with('•')
            && l.to_ascii_lowercase().contains("reconnecting")
            && l.contains("esc to interrupt")
    })?;
    let line = bottom[at];
    let word = line.to_ascii_lowercase().find("reconnecting")?;
    let counts: String = line[word + "reconnecting".len()..]
        .trim_start_matches(['.', ' ', '…'])
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '/')
        .collect();
    let (attempt, limit) = counts.split_once('/')?;
    let headline = line[..word]
        .trim_start()
        .trim_start_matches('•')
        .trim()
        .trim_end_matches(',');
    let headline = if headline.is_empty() {
        "connection lost"
    } else {
        headline
    };
    // The last error, when Codex shows it under the status line.
    let error = bottom
        .get(at + 1)
        .map(|l| l.trim_start())
        .and_then(|l| l.strip_prefix('└'))
        .map(str::trim)
        .filter(|e| !e.is_empty())
        .unwrap_or(headline);
    Some(Retrying {
        error: crate::text::chars(error, 80),
        attempt: attempt.parse().ok(),
        limit: limit.parse().ok(),
        next_in: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reconnect_line_and_its_error_are_read() {
        let screen = include_str!("../../../fixtures/real-clients/codex-0.171.0/retry-screen.txt");
        let r = retrying(screen).expect("the reconnect line");
        assert_eq!((r.attempt, r.limit), (Some(3), Some(5)));
        assert_eq!(
            r.error,
            "Exceeded retry limit, last status: 429 Too Many Requests"
        );
        assert_eq!(r.reason(), "rate limit — retrying (attempt 3/5)");
    }

    #[test]
    fn an_answer_or_a_finished_turn_is_no_retry_loop() {
        assert_eq!(
            retrying("• The client is reconnecting 3/5 times, see docs\n› Ask Codex\n"),
            None
        );
        assert_eq!(
            retrying("■ exceeded retry limit, last status: 429 Too Many Requests\n› Ask Codex to do anything\n"),
            None
        );
        let busy = "• Working (4s • esc to interrupt)\n› \n";
        assert_eq!(retrying(busy), None);
        // A dropped stream: `Reconnecting... 2/5` with no error line under it.
        let r = retrying("• Reconnecting... 2/5 (1s • esc to interrupt)\n› \n").expect("bare");
        assert_eq!((r.attempt, r.limit), (Some(2), Some(5)));
        assert_eq!(r.reason(), "connection lost — retrying (attempt 2/5)");
    }
}
