//! What agentpane's own adapter reads about usage from the log (or the session in a database)
//! a released client wrote against its stand-in, which reports known numbers.

use std::path::Path;

use agentpane::events::AgentKind;
use agentpane::usage::{Tally, Usage};

/// The session usage `agent`'s adapter reads from `transcript` (the path `resolve` shows),
/// the window left to the log (never the config).
pub fn of_log(agent: AgentKind, transcript: &str) -> Usage {
    let adapter = agentpane::agents::of(agent);
    let path = Path::new(transcript);
    if let Some(read) = adapter.session_usage(path) {
        return read.unwrap_or_else(|e| panic!("{transcript}: {e:#}"));
    }
    let text = std::fs::read(path).unwrap_or_else(|e| panic!("{transcript}: {e}"));
    let mut t = Tally::default();
    for line in text.split(|&b| b == b'\n') {
        if let Some(r) = adapter.usage(line) {
            t.push(r);
        }
    }
    t.usage(None)
}
