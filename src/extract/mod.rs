//! Extraction (docs/design.md#extraction): the clean last answer of an agent.

pub mod cache;
pub mod capture;
pub mod transcript;

pub use self::transcript::{last_answer_from_transcript, last_answer_within};
