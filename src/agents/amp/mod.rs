//! Amp: recognised by its process; agentpane reads no log of it (its CLI keeps its threads on
//! Amp's servers, none on disk), so a pane of it is read from its screen.

/// Amp.
#[derive(Debug)]
pub struct Amp;

impl crate::agents::Agent for Amp {
    fn kind(&self) -> crate::events::AgentKind {
        crate::events::AgentKind::Amp
    }
}
