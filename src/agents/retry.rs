//! An agent retrying a failed API call (docs/design.md#evidence-order): what its screen says
//! while it waits between attempts — the error, the attempt, the limit, the seconds to the next
//! try — and the reason agentpane shows for it. Each agent's own pattern lives in its folder;
//! this is the shape they share.

use std::time::Duration;

/// How long an open turn stays quiet before its screen is checked for a retry loop.
pub const RETRY_LOOK: Duration = Duration::from_secs(8);

/// A retry loop, read from an agent's screen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Retrying {
    /// The error in the agent's words: `429 Number of request tokens…`, `API error`,
    /// `quota exceeded for stand-in`.
    pub error: String,
    /// The attempt being waited for (1-based), when shown.
    pub attempt: Option<u32>,
    /// How many attempts the agent makes in all, when shown.
    pub limit: Option<u32>,
    /// Seconds to the next attempt, when shown.
    pub next_in: Option<u64>,
}

impl Retrying {
    /// `rate limit — retrying (attempt 6/10, next in 13 s)`: what failed, in words, then where
    /// the retries stand.
    pub fn reason(&self) -> String {
        let lower = self.error.to_ascii_lowercase();
        let what = if lower.contains("429") || lower.contains("rate limit") {
            "rate limit".to_string()
        } else if lower.contains("529") || lower.contains("overloaded") {
            "API overloaded (529)".to_string()
        } else {
            crate::text::chars(self.error.trim(), 60)
        };
        let mut detail = Vec::new();
        match (self.attempt, self.limit) {
            (Some(a), Some(l)) => detail.push(format!("attempt {a}/{l}")),
            (Some(a), None) => detail.push(format!("attempt {a}")),
            _ => {}
        }
        if let Some(s) = self.next_in {
            detail.push(format!("next in {s} s"));
        }
        if detail.is_empty() {
            format!("{what} — retrying")
        } else {
            format!("{what} — retrying ({})", detail.join(", "))
        }
    }
}

impl Retrying {
    /// Marks `status` as this retry loop: `attention`, its reason, the next attempt as the
    /// reset time (`now` + the seconds shown) and the attempts.
    pub fn mark(&self, status: &mut crate::state::Status, now: crate::events::Time) {
        status.state = crate::state::State::Attention;
        status.reason = Some(self.reason());
        status.resets_at = self
            .next_in
            .and_then(|s| chrono::Duration::try_seconds(s as i64))
            .map(|d| now + d);
        status.retry = Some(crate::state::Retry {
            attempt: self.attempt,
            limit: self.limit,
            next_at: status.resets_at,
        });
    }
}

/// The number in `s` after `prefix` (`"in 13s"` with prefix `"in "` → 13).
pub fn number_after(s: &str, prefix: &str) -> Option<u64> {
    let rest = &s[s.find(prefix)? + prefix.len()..];
    let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
    digits.parse().ok()
}

/// An API error in the words a person acts on, the same for every agent that logs an HTTP
/// status with its message: `quota exceeded` or `rate limit` (429), `auth` (401, 403), `billing`
/// (402), else `api error <code>: <detail>`; without a status, `api error: <detail>`.
/// `message` is the whole error text, `detail` the part after its status code.
pub fn api_error_kind(code: Option<u64>, message: &str, detail: &str) -> String {
    let lower = message.to_ascii_lowercase();
    match code {
        Some(429) if lower.contains("quota") => "quota exceeded".to_string(),
        Some(429) => "rate limit".to_string(),
        Some(401 | 403) => "auth".to_string(),
        Some(402) => "billing".to_string(),
        Some(c) if detail.is_empty() => format!("api error {c}"),
        Some(c) => format!("api error {c}: {}", crate::text::chars(detail, 80)),
        None if detail.is_empty() => "api error".to_string(),
        None => format!("api error: {}", crate::text::chars(detail, 80)),
    }
}

/// Whether `status` is a failed call the agent retries by itself (`retried`: its reason is of
/// such a call) that no retry loop was read for yet, recent enough (`watch`, from its time)
/// that the agent may still be at it: worth a look at its screen.
pub fn may_still_retry(
    status: &crate::state::Status,
    now: crate::events::Time,
    watch: Duration,
    retried: impl Fn(&str) -> bool,
) -> bool {
    status.state == crate::state::State::Attention
        && status.retry.is_none()
        && status.reason.as_deref().is_some_and(retried)
        && crate::state::age(now, status.at) <= watch
}

/// `status` marked as the retry loop `retry` and read from the pane, or as it was when the
/// screen shows none.
pub fn marked(
    retry: Option<Retrying>,
    mut status: crate::state::Status,
    source: crate::state::Source,
    now: crate::events::Time,
) -> (crate::state::Status, crate::state::Source) {
    match retry {
        Some(r) => {
            r.mark(&mut status, now);
            (status, crate::state::Source::Pane)
        }
        None => (status, source),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn retry(error: &str, attempt: Option<u32>, limit: Option<u32>, next: Option<u64>) -> Retrying {
        Retrying {
            error: error.into(),
            attempt,
            limit,
            next_in: next,
        }
    }

    #[test]
    fn the_reason_names_what_failed_and_where_the_retries_stand() {
        let r = retry(
            "429 Number of request tokens has exceeded your per-minute rate limit",
            Some(6),
            Some(10),
            Some(13),
        );
        assert_eq!(
            r.reason(),
            "rate limit — retrying (attempt 6/10, next in 13 s)"
        );
        let r = retry("API error", Some(2), Some(10), Some(3));
        assert_eq!(
            r.reason(),
            "API error — retrying (attempt 2/10, next in 3 s)"
        );
        let r = retry("529 Overloaded", None, None, None);
        assert_eq!(r.reason(), "API overloaded (529) — retrying");
        let r = retry("quota exceeded for stand-in", Some(3), None, Some(6));
        assert_eq!(
            r.reason(),
            "quota exceeded for stand-in — retrying (attempt 3, next in 6 s)"
        );
    }

    #[test]
    fn numbers_are_read_after_their_words() {
        assert_eq!(number_after("retrying in 13s", "in "), Some(13));
        assert_eq!(number_after("attempt #3]", "#"), Some(3));
        assert_eq!(number_after("attempt x", "attempt "), None);
        assert_eq!(number_after("nothing", "in "), None);
    }
}
