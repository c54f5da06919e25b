//! Extraction (SPEC §4): the clean last answer of an agent.

pub mod transcript;

use serde::Serialize;

use crate::events::{AgentKind, Time};

pub use self::transcript::last_answer_from_transcript;

/// A clean final answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Answer {
    pub text: String,
    pub agent: AgentKind,
    pub at: Option<Time>,
    /// The message id / turn id it came from.
    pub key: Option<String>,
}
