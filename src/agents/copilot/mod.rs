//! GitHub Copilot CLI adapter (`@github/copilot`, verified against 1.0.102). Copilot keeps one
//! folder per session, `<COPILOT_HOME or ~/.copilot>/session-state/<session uuid>/`, holding an
//! append-only `events.jsonl` (one `{type, data, id, timestamp, parentId}` record a line, the
//! schema is the package's `copilot-sdk/generated/session-events.d.ts`) and, while a process
//! owns the session, `inuse.<PID>.lock` naming that process. See docs/agents/copilot.md.
//!
//! - [`locate`]: the process (native binary, comm `MainThread`) → its session folder and log.
//! - [`parse`]: one `events.jsonl` line → [`crate::events::Event`]; the pending permission or
//!   question the log itself shows.
//! - [`answer`]: the last answer of the newest turn.
//! - [`screen`]: the approval dialog and question form on screen.
//! - [`log`]: the per-process log (`logs/process-<ms>-<PID>.log`): the session a process
//!   registered and the failed model calls it is retrying, which neither the session log nor
//!   the screen shows.

pub mod answer;
pub mod locate;
pub mod log;
pub mod parse;
pub mod screen;

#[cfg(test)]
mod tests;

#[cfg(test)]
pub(crate) mod testkit {
    //! The recorded real-client fixtures (fixtures/real-clients/copilot-1.0.102).

    /// The text of a fixture file.
    pub fn fixture(name: &str) -> String {
        let path = format!(
            "{}/fixtures/real-clients/copilot-1.0.102/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    /// A fixture's lines.
    pub fn lines(name: &str) -> Vec<String> {
        fixture(name).lines().map(str::to_string).collect()
    }
}
