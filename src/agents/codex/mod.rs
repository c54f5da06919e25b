//! Codex adapter.

pub mod locate;
pub mod parse;
