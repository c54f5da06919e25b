//! Codex adapter.

pub mod daemon;
pub mod home;
pub mod locate;
pub mod parse;
pub mod screen;
