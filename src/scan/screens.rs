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
    /// Screens captured ahead for this scan ([`Screens::ahead`]), taken by the next
    /// [`Screens::of`].
    ahead: HashMap<String, Option<String>>,
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
        let mut out = std::mem::take(&mut self.ahead);
        out.retain(|id, _| panes.iter().any(|p| &p.pane_id == id));
        let rest: Vec<&Pane> = panes
            .iter()
            .filter(|p| !out.contains_key(&p.pane_id))
            .copied()
            .collect();
        out.extend(self.take(tmux, &rest));
        self.kept.retain(|id, _| out.contains_key(id));
        out
    }

    /// Captures the screens of `panes` now, for the scan's [`Screens::of`] to use: screens
    /// surely wanted (an agent read from its screen alone) are taken while the rest of the
    /// scan reads processes and logs.
    pub(super) fn ahead(&mut self, tmux: &Tmux, panes: &[&Pane]) {
        let got = self.take(tmux, panes);
        self.ahead.extend(got);
    }

    /// [`Screens::of`] without forgetting the screens of other panes.
    fn take(&mut self, tmux: &Tmux, panes: &[&Pane]) -> HashMap<String, Option<String>> {
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
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::testkit;
    use crate::tmux::{Runner, TmuxError};
    use std::sync::{Arc, Mutex};

    /// A tmux that answers every capture with the pane's id and records which panes it was
    /// asked for.
    struct Capturing(Arc<Mutex<Vec<String>>>);

    impl Runner for Capturing {
        fn run(&self, args: &[String], _stdin: Option<&[u8]>) -> Result<Vec<u8>, TmuxError> {
            let mut out = String::new();
            let mut it = args.iter();
            while let Some(a) = it.next() {
                match a.as_str() {
                    "-t" => {
                        let id = it.next().cloned().unwrap_or_default();
                        self.0.lock().unwrap().push(id.clone());
                        out.push_str(&format!("screen of {id}\n"));
                    }
                    "-p" => {}
                    mark if mark.starts_with("agentpane-capture-") => {
                        out.push_str(mark);
                        out.push('\n');
                    }
                    _ => {}
                }
            }
            Ok(out.into_bytes())
        }
    }

    #[test]
    fn screens_taken_ahead_are_not_captured_again_and_the_rest_are() {
        let asked = Arc::new(Mutex::new(Vec::new()));
        let tmux = Tmux::with_runner(Box::new(Capturing(Arc::clone(&asked))));
        let panes: Vec<Pane> = (1..=3)
            .map(|n| {
                testkit::report(n, 1, crate::state::State::Idle, 0)
                    .resolved
                    .pane
                    .clone()
            })
            .collect();
        let mut screens = Screens::default();
        screens.ahead(&tmux, &[&panes[0], &panes[1]]);
        assert_eq!(*asked.lock().unwrap(), ["%1", "%2"]);
        // The scan then wants %2 and %3: only %3 is captured now.
        let got = screens.of(&tmux, &[&panes[1], &panes[2]]);
        assert_eq!(*asked.lock().unwrap(), ["%1", "%2", "%3"]);
        assert_eq!(got["%2"].as_deref(), Some("screen of %2\n"));
        assert_eq!(got["%3"].as_deref(), Some("screen of %3\n"));
        assert!(
            !got.contains_key("%1"),
            "a screen not wanted is not handed out"
        );
        // Nothing taken ahead lingers into the next scan.
        let again = screens.of(&tmux, &[&panes[0]]);
        assert_eq!(asked.lock().unwrap().last().map(String::as_str), Some("%1"));
        assert_eq!(again["%1"].as_deref(), Some("screen of %1\n"));
    }
}
