//! Pane screens captured for a scan, in one tmux call, and kept while their window is quiet.

use std::collections::HashMap;

use crate::tmux::{Pane, Tmux};

/// Pane screens captured, each kept while its window shows no output newer than the capture
/// (tmux's `window_activity`, whole seconds: a capture is reused only when that output came
/// in an earlier second than the capture started). A screen that cannot have changed is not
/// captured again: for an agent read from its screen alone, that was a tmux call per pane
/// at every safety poll.
#[derive(Debug, Default)]
pub struct Screens {
    kept: HashMap<String, KeptScreen>,
    /// A pending tool call's screen is wanted only once the call has been pending this long
    /// (a long-running caller that looks again then); `None`: at once.
    pub(super) tool_look: Option<chrono::Duration>,
}

#[derive(Debug)]
struct KeptScreen {
    pane_pid: u32,
    /// When the capture started, seconds since the epoch.
    at: i64,
    text: Option<String>,
}

impl Screens {
    /// The screens of `panes`: kept ones that cannot have changed, the rest captured in one
    /// tmux call. A pane that vanished has none.
    pub(super) fn of(&mut self, tmux: &Tmux, panes: &[&Pane]) -> HashMap<String, Option<String>> {
        let started = chrono::Utc::now().timestamp();
        let (keep, capture): (Vec<&Pane>, Vec<&Pane>) = panes.iter().partition(|p| {
            self.kept
                .get(&p.pane_id)
                .is_some_and(|k| k.pane_pid == p.pane_pid && p.activity.is_some_and(|a| a < k.at))
        });
        let mut captured = tmux.capture_panes(
            &capture
                .iter()
                .map(|p| p.pane_id.as_str())
                .collect::<Vec<_>>(),
        );
        let mut out: HashMap<String, Option<String>> = keep
            .iter()
            .map(|p| (p.pane_id.clone(), self.kept[&p.pane_id].text.clone()))
            .collect();
        for p in capture {
            let text = captured.remove(&p.pane_id);
            self.kept.insert(
                p.pane_id.clone(),
                KeptScreen {
                    pane_pid: p.pane_pid,
                    at: started,
                    text: text.clone(),
                },
            );
            out.insert(p.pane_id.clone(), text);
        }
        self.kept.retain(|id, _| out.contains_key(id));
        out
    }
}
