//! What Claude Code's screen says that its transcript does not: the retry loop of a failed API
//! call. Both pinned releases print it above the input box while they wait:
//! `✻ API error · Retrying in 11s · attempt 6/10` (2.1.197) and
//! `✻ 429 Number of request tokens … · retrying in 13s · attempt 6/10` (2.1.332).

use crate::agents::retry::{number_after, Retrying};

/// Lines from the bottom that can hold the retry line (it sits above the input box and its
/// footer).
const NEAR_BOTTOM: usize = 12;

/// The retry loop on screen, if Claude Code is waiting to retry a failed request.
pub fn retrying(screen: &str) -> Option<Retrying> {
    let clean = strip_ansi_escapes::strip_str(screen);
    let line = clean
        .lines()
        .rev()
        .filter(|l| !l.trim().is_empty())
        .take(NEAR_BOTTOM)
        .find(|l| {
            let lower = l.to_ascii_lowercase();
            lower.contains(" · retrying in ") && lower.contains(" · attempt ")
        })?;
    let parts: Vec<&str> = line.split(" · ").map(str::trim).collect();
    let error = parts
        .first()?
        .trim_start_matches(|c: char| !c.is_alphanumeric())
        .trim();
    let retry = parts
        .iter()
        .find(|p| p.to_ascii_lowercase().starts_with("retrying in "))?;
    let attempt = parts.iter().find(|p| p.starts_with("attempt "))?;
    let (n, of) = attempt["attempt ".len()..].split_once('/')?;
    Some(Retrying {
        error: error.to_string(),
        attempt: n.trim().parse().ok(),
        limit: of
            .trim()
            .chars()
            .take_while(|c| c.is_ascii_digit())
            .collect::<String>()
            .parse()
            .ok(),
        next_in: number_after(&retry.to_ascii_lowercase(), "in "),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_releases_retry_line_is_read() {
        let old = include_str!("../../../fixtures/real-clients/claude-2.1.197/retry-screen.txt");
        assert_eq!(
            retrying(old),
            Some(Retrying {
                error: "API error".into(),
                attempt: Some(6),
                limit: Some(10),
                next_in: Some(16),
            })
        );
        let new = include_str!("../../../fixtures/real-clients/claude-2.1.332/retry-screen.txt");
        let r = retrying(new).expect("the 2.1.332 retry line");
        assert_eq!(
            r.reason(),
            "rate limit — retrying (attempt 6/10, next in 18 s)"
        );
    }

    #[test]
    fn an_answer_that_mentions_retrying_is_not_a_retry_loop() {
        assert_eq!(
            retrying("⏺ The client keeps retrying in 5s with an attempt counter.\n❯ \n"),
            None
        );
        // Scrolled far up: not the current state.
        let mut screen = String::from("✻ API error · Retrying in 2s · attempt 2/10\n");
        for i in 0..20 {
            screen.push_str(&format!("⏺ line {i}\n"));
        }
        assert_eq!(retrying(&screen), None);
    }
}
