//! Aider: recognised by its process; agentpane reads no log of it, so a pane of it is read
//! from its screen.

/// Aider.
#[derive(Debug)]
pub struct Aider;

impl crate::agents::Agent for Aider {
    fn kind(&self) -> crate::events::AgentKind {
        crate::events::AgentKind::Aider
    }
}
