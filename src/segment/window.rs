//! Per-window summaries (docs/design.md#merging): the most urgent agent state in each window, ties
//! going to the newest evidence, and the per-pane detail behind it.

use std::collections::HashMap;
use std::path::PathBuf;

use serde::Serialize;

use super::Icons;
use crate::events::{AgentKind, Time};
use crate::scan::PaneReport;
use crate::state::Source;
use crate::state::{urgency, State};

/// One agent pane as `pane-status --json` shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PaneDetail {
    pub pane_id: String,
    pub target: String,
    pub agent: Option<AgentKind>,
    pub state: State,
    pub seen: bool,
    pub reason: Option<String>,
    pub turn_key: Option<String>,
    pub at: Option<Time>,
    pub resets_at: Option<Time>,
    pub transcript: Option<PathBuf>,
    pub source: Source,
    pub glyph: String,
    /// Unread channel messages for the member bound to this pane (docs/design.md#channel).
    pub unread: usize,
    /// What the session used (docs/design.md#usage), when the watcher measures it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<crate::usage::Usage>,
    /// The plan windows the session revealed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub limits: Vec<crate::usage::Limit>,
    /// The pane's working folder.
    pub cwd: String,
    /// While `waiting`: what the agent asks (the web page shows it and answers it by its
    /// fingerprint).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request: Option<crate::read::request::Request>,
}

/// One window: its most urgent agent state and its agent panes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WindowSummary {
    pub window_id: String,
    pub target: String,
    pub session: String,
    pub window_index: u32,
    pub name: String,
    pub state: State,
    pub seen: bool,
    /// The pane whose state won.
    pub pane_id: String,
    pub glyph: String,
    pub panes: Vec<PaneDetail>,
}

/// Detail of one report.
pub fn pane_detail(r: &PaneReport, icons: &Icons) -> PaneDetail {
    let s = &r.status;
    PaneDetail {
        pane_id: r.resolved.pane.pane_id.clone(),
        target: r.resolved.pane.target(),
        agent: r.resolved.agent.as_ref().map(|a| a.kind),
        state: s.state,
        seen: s.seen,
        reason: s.reason.clone(),
        turn_key: s.turn_key.clone(),
        at: s.at,
        resets_at: s.resets_at,
        transcript: r.resolved.transcript.clone(),
        source: r.source,
        glyph: icons.glyph(s.state, s.seen).to_string(),
        unread: 0,
        usage: r.usage.as_ref().map(|m| m.usage.clone()),
        limits: r
            .usage
            .as_ref()
            .map(|m| m.limits.clone())
            .unwrap_or_default(),
        cwd: r.resolved.pane.cwd.clone(),
        request: s.request.clone(),
    }
}

/// The most urgent report (urgency, then the newest evidence). `None` when empty.
pub fn most_urgent<'a, I>(reports: I) -> Option<&'a PaneReport>
where
    I: IntoIterator<Item = &'a PaneReport>,
{
    reports.into_iter().max_by(|a, b| rank(a).cmp(&rank(b)))
}

fn rank(r: &PaneReport) -> (u8, Option<Time>) {
    let s = &r.status;
    (urgency(s.state, s.seen), s.at.or(s.last_activity))
}

/// One summary per window that holds at least one agent pane, in tmux order (session, index).
pub fn windows(reports: &[PaneReport], icons: &Icons) -> Vec<WindowSummary> {
    let mut out: Vec<WindowSummary> = by_window(reports)
        .into_iter()
        .filter_map(|members| {
            let top = most_urgent(members.iter().copied())?;
            let pane = &top.resolved.pane;
            Some(WindowSummary {
                window_id: pane.window_id.clone(),
                target: pane.window_target(),
                session: pane.session.clone(),
                window_index: pane.window_index,
                name: pane.window_name.clone(),
                state: top.status.state,
                seen: top.status.seen,
                pane_id: pane.pane_id.clone(),
                glyph: icons.glyph(top.status.state, top.status.seen).to_string(),
                panes: members.iter().map(|r| pane_detail(r, icons)).collect(),
            })
        })
        .collect();
    out.sort_by(|a, b| (&a.session, a.window_index).cmp(&(&b.session, b.window_index)));
    out
}

/// Each window's most urgent report, windows in the order their first pane is reported: what
/// the per-window glyph shows, without the summaries' detail.
pub fn window_tops(reports: &[PaneReport]) -> Vec<&PaneReport> {
    by_window(reports)
        .into_iter()
        .filter_map(most_urgent)
        .collect()
}

/// The reports grouped by window: windows in the order their first pane is reported, panes
/// in report order.
fn by_window(reports: &[PaneReport]) -> Vec<Vec<&PaneReport>> {
    let mut at: HashMap<&str, usize> = HashMap::new();
    let mut groups: Vec<Vec<&PaneReport>> = Vec::new();
    for r in reports {
        let i = *at
            .entry(r.resolved.pane.window_id.as_str())
            .or_insert_with(|| {
                groups.push(Vec::new());
                groups.len() - 1
            });
        groups[i].push(r);
    }
    groups
}
