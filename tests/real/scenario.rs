//! Steps of the scenario every verified agent passes, shared by the real-client suites: what
//! differs from agent to agent (how it starts, what its stand-in answers) is the caller's.

use crate::common::TmuxServer;

use super::{wait_for, STEP};

/// Routing out: `pane`'s last answer, routed to a new inbox agent, arrives there byte for
/// byte as `answer`. The inbox pane, for later steps to route to.
pub fn routes_out(tmux: &TmuxServer, pane: &str, answer: &str, label: &str) -> String {
    let (sink, file) = tmux.inbox_agent("sink");
    let routed = tmux.agentpane(&["route", pane, &sink]);
    assert_eq!(routed.code, 0, "{label}: {routed:?}");
    wait_for(STEP, "the routed answer in the sink", || {
        let got = std::fs::read_to_string(&file).unwrap_or_default();
        (got == format!("{answer}\n")).then_some(())
    });
    sink
}

/// A failed turn has no answer to hand on: `last` finds none, and a route from `pane` to
/// `sink` is refused.
pub fn nothing_to_hand_on(tmux: &TmuxServer, pane: &str, sink: &str, label: &str) {
    let none = tmux.agentpane(&["last", pane]);
    assert_eq!(none.code, 1, "{label}: {none:?}");
    let route_none = tmux.agentpane(&["route", pane, sink]);
    assert_eq!(route_none.code, 1, "{label}: {route_none:?}");
}
