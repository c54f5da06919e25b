//! Extraction (docs/design.md#extraction): the clean last answer of an agent.

pub mod cache;
pub mod capture;
pub mod transcript;

use serde::Serialize;

use crate::events::{AgentKind, Time};

pub use self::transcript::{last_answer_from_transcript, last_answer_within};

/// A clean final answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Answer {
    pub text: String,
    pub agent: AgentKind,
    pub at: Option<Time>,
    /// The message id / turn id it came from.
    pub key: Option<String>,
}

impl Answer {
    /// The first non-blank line, at most `max` characters (for tables and menus).
    pub fn head(&self, max: usize) -> String {
        let line = self
            .text
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .unwrap_or("");
        crate::text::chars(line, max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(text: &str) -> Answer {
        Answer {
            text: text.into(),
            agent: AgentKind::Claude,
            at: None,
            key: None,
        }
    }

    #[test]
    fn head_is_the_first_non_blank_line_bounded() {
        assert_eq!(answer("\n\n  Done.\nmore").head(60), "Done.");
        assert_eq!(answer("abcdef").head(4), "abc…");
        assert_eq!(answer("héllo").head(5), "héllo");
    }
}
