//! Where a pane's answer comes from: its agent's transcript when one resolves (through the
//! cache), else the screen (the capture fallback). Callers learn which source served. A pane
//! that runs no agent has no answer: its screen is read only when asked for ([`pane_screen`]).

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
    /// An answer block found on an agent's screen (the capture fallback).
    Pane,
    /// The pane's whole screen, asked for with `--screen`.
    Screen,
    /// Another host's agentpane read it (transcript or screen, there).
    Remote,
}

impl AnswerSource {
    /// `transcript`, `pane`, `screen` or `remote`.
    pub fn as_str(self) -> &'static str {
        match self {
            AnswerSource::Transcript => "transcript",
            AnswerSource::Pane => "pane",
            AnswerSource::Screen => "screen",
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
/// unreadable transcript falls back to the screen), else from a bounded capture. `None` for a
/// pane that runs no agent (no report): a shell's screen is no answer.
pub fn pane_answer(
    tmux: &Tmux,
    pane_id: &str,
    report: Option<&PaneReport>,
    cache: &mut AnswerCache,
) -> Result<Option<PaneAnswer>> {
    let Some((report, agent)) = report.and_then(|r| Some((r, r.resolved.agent.as_ref()?.kind)))
    else {
        return Ok(None);
    };
    if no_conversation_yet(report) {
        return Ok(None);
    }
    if let Some(path) = report.resolved.transcript.as_ref() {
        if let Ok(found) = cache.get_or_extract(path, Some(agent)) {
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
        capture::last_answer(screen.as_bytes(), Some(agent)).map(|text| PaneAnswer {
            text,
            agent: Some(agent),
            source: AnswerSource::Pane,
            transcript: None,
            at: None,
            key: None,
        }),
    )
}

/// The whole screen of `pane_id`, ANSI stripped (`--screen`: asked for, never the default);
/// `None` when it is blank.
pub fn pane_screen(
    tmux: &Tmux,
    pane_id: &str,
    report: Option<&PaneReport>,
) -> Result<Option<PaneAnswer>> {
    let screen = capture::strip_ansi(tmux.capture(pane_id, MAX_CAPTURE_LINES)?.as_bytes());
    Ok((!screen.trim().is_empty()).then(|| PaneAnswer {
        text: screen,
        agent: report.and_then(|r| r.resolved.agent.as_ref().map(|a| a.kind)),
        source: AnswerSource::Screen,
        transcript: None,
        at: None,
        key: None,
    }))
}

/// `%0 runs bash, not a coding agent` for a pane that runs no agent (no report), what every
/// command that wants its answer says; `None` for an agent's pane.
pub fn not_an_agent(tmux: &Tmux, pane_id: &str, report: Option<&PaneReport>) -> Option<String> {
    if report.is_some_and(|r| r.resolved.agent.is_some()) {
        return None;
    }
    let command = tmux
        .format(Some(pane_id), "#{pane_current_command}")
        .unwrap_or_default();
    Some(not_an_agent_words(pane_id, command.trim()))
}

/// The words of [`not_an_agent`] for a pane running `command` (tmux's `pane_current_command`).
fn not_an_agent_words(pane_id: &str, command: &str) -> String {
    let command = crate::text::terminal_line(command);
    if command.is_empty() {
        format!("{pane_id} runs no coding agent")
    } else {
        format!("{pane_id} runs {command}, not a coding agent")
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shell_pane_is_named_by_what_runs_there() {
        assert_eq!(
            not_an_agent_words("%0", "bash"),
            "%0 runs bash, not a coding agent"
        );
        assert_eq!(not_an_agent_words("%0", ""), "%0 runs no coding agent");
        let hostile = not_an_agent_words("%0", "vi\x1b]0;x\x07");
        assert!(hostile.starts_with("%0 runs vi"), "{hostile}");
        assert!(!hostile.contains('\x1b'), "{hostile}");
    }
}
