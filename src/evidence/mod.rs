//! Evidence beyond transcripts (docs/design.md#evidence-order): what Claude Code's hooks
//! reported, what the live session record says, and what the pane shows — and the pure
//! [`reconcile`] that folds them onto a transcript's [`Status`](crate::state::Status).
//!
//! Data flow: `agentpane hook` (inside the agent's hook path) writes [`HookEvidence`] files;
//! the scanner reads them together with the session record ([`RecordStatus`]) and, when it
//! captured the pane, [`PaneEvidence`]; [`reconcile`] decides. Rate-limit reset times are read in
//! [`crate::read::ratelimit`].

pub mod hook;
pub mod pane;
pub mod reconcile;
pub mod record;

pub use hook::{HookEvidence, HookInput, HookKind, HookRecord};
pub use pane::{detect_prompt, PaneEvidence, Prompt, PromptKind};
pub use reconcile::reconcile;
pub use record::{RecordState, RecordStatus};

pub(crate) use crate::text::bounded;

#[cfg(test)]
mod tests {
    use super::bounded;

    #[test]
    fn bounded_cuts_on_char_boundaries() {
        assert_eq!(bounded("short", 10), "short");
        let cut = bounded("ääääääää", 7);
        assert!(cut.len() <= 7, "{cut}");
        assert!(cut.ends_with('…'));
    }
}
