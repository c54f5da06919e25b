//! Claude adapter.

pub mod locate;
pub mod parse;
pub mod record;
