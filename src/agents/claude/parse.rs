//! claude transcript line → event.

use crate::events::Event;

/// Parses one line.
pub fn parse_line(_line: &[u8]) -> Option<Event> {
    None
}
