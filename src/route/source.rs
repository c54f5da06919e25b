//! Where a pane's answer comes from: its agent's transcript when one resolves (through the
//! cache), else the screen (the capture fallback). Callers learn which source served.

use std::path::PathBuf;

use anyhow::Result;
use serde::Serialize;

use crate::events::{AgentKind, Time};
use crate::extract::cache::AnswerCache;
use crate::extract::capture;
use crate::scan::PaneReport;
use crate::tmux::{Tmux, MAX_CAPTURE_LINES};

/// Which source served an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum AnswerSource {
    Transcript,
    Pane,
    /// Another host's agentpane read it (transcript or screen, there).
    Remote,
}

impl AnswerSource {
    /// `transcript` or `pane`.
    pub fn as_str(self) -> &'static str {
        match self {
            AnswerSource::Transcript => "transcript",
            AnswerSource::Pane => "pane",
            AnswerSource::Remote => "remote",
        }
    }
}

/// A pane's last answer with its provenance.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PaneAnswer {
    pub text: String,
    pub agent: Option<AgentKind>,
    pub source: AnswerSource,
    pub transcript: Option<PathBuf>,
    pub at: Option<Time>,
    pub key: Option<String>,
}

/// The last answer of `pane_id`: from the transcript of its report when there is one (an
/// unreadable transcript falls back to the screen), else from a bounded capture.
pub fn pane_answer(
    tmux: &Tmux,
    pane_id: &str,
    report: Option<&PaneReport>,
    cache: &mut AnswerCache,
) -> Result<Option<PaneAnswer>> {
    let agent = report.and_then(|r| r.resolved.agent.as_ref().map(|a| a.kind));
    if report.is_some_and(no_conversation_yet) {
        return Ok(None);
    }
    if let Some(path) = report.and_then(|r| r.resolved.transcript.as_ref()) {
        if let Ok(found) = cache.get_or_extract(path, agent) {
            return Ok(found.map(|a| PaneAnswer {
                text: a.text,
                agent: Some(a.agent),
                source: AnswerSource::Transcript,
                transcript: Some(path.clone()),
                at: a.at,
                key: a.key,
            }));
        }
    }
    let screen = tmux.capture(pane_id, MAX_CAPTURE_LINES)?;
    Ok(
        capture::last_answer(screen.as_bytes(), agent).map(|text| PaneAnswer {
            text,
            agent,
            source: AnswerSource::Pane,
            transcript: None,
            at: None,
            key: None,
        }),
    )
}

/// A live session record names the session, and that session has no transcript: nothing
/// was asked or answered yet (Claude Code writes the transcript at the first prompt). The
/// screen then holds only the start-up banner and the input box, never an answer.
fn no_conversation_yet(report: &PaneReport) -> bool {
    let r = &report.resolved;
    r.transcript.is_none()
        && r.record
            .as_ref()
            .is_some_and(|rec| rec.session_id.is_some())
}

/// The report of `pane_id` in a scan, if its pane runs an agent.
pub fn report_of<'a>(reports: &'a [PaneReport], pane_id: &str) -> Option<&'a PaneReport> {
    reports.iter().find(|r| r.resolved.pane.pane_id == pane_id)
}
