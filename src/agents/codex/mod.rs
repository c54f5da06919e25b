//! Codex adapter.

pub mod daemon;
pub mod locate;
pub mod parse;
pub mod screen;
