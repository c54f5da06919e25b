//! Who may receive routed text (docs/design.md#delivery). Routed text is model output and may
//! hold shell commands, so it goes nowhere but the input box of the agent process it was meant
//! for. A route records that process when it is accepted or queued — a [`Recipient`]: kind,
//! pid, start time, session — and every paste and every Enter first checks, at that moment,
//! that the pane's terminal still has this very process in its foreground process group.
//! A shell, an agent that exited, was suspended (Ctrl-Z) or replaced, and a program the agent
//! runs in the foreground are all refused with a reason.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::events::AgentKind;
use crate::proctree::procfs::{self, Stat};
use crate::scan::PaneReport;
use crate::tmux::{PaneNow, Tmux, TmuxError};

/// The agent process a route is meant for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Recipient {
    pub kind: AgentKind,
    pub pid: u32,
    /// Clock ticks since boot (`/proc/PID/stat` field 22): with the pid, one process.
    pub start_ticks: u64,
    /// The agent's session (its session id, else its transcript) when it had one: a new
    /// session of the same agent in that pane never asked for the text. Compared with
    /// [`same_session`], so the id of a session not yet written matches its transcript later.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
}

impl std::fmt::Display for Recipient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (pid {})", self.kind, self.pid)
    }
}

/// Why text may not go into a pane now.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// The pane runs no coding agent: nothing is ever typed there.
    #[error(
        "{pane} runs {runs}, not a coding agent: agentpane types only into an agent's input box"
    )]
    NotAnAgent { pane: String, runs: String },
    /// The agent the text was meant for is gone from the pane for good (exited, suspended,
    /// replaced, another session): queued text is held for the human, never re-aimed.
    #[error("{0}")]
    Gone(String),
    /// The agent is there but something else has the terminal (a program it runs in the
    /// foreground): text waits, like for a busy agent.
    #[error("{0}")]
    Away(String),
}

impl Refusal {
    /// Final for this route: a queued message is held, not retried.
    pub fn is_final(&self) -> bool {
        !matches!(self, Refusal::Away(_))
    }
}

/// The session a report's agent is in, to record: its session id (known from the start for
/// agents that keep a session record, before any transcript exists), else its transcript.
fn session_of(report: &PaneReport) -> Option<String> {
    report
        .resolved
        .session_id
        .clone()
        .or_else(|| transcript_of(report))
}

fn transcript_of(report: &PaneReport) -> Option<String> {
    report
        .resolved
        .transcript
        .as_ref()
        .map(|p| p.to_string_lossy().into_owned())
}

/// What a scan knows of the session a pane's agent is in now.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionNow {
    pub id: Option<String>,
    pub transcript: Option<String>,
}

impl SessionNow {
    fn of(report: &PaneReport) -> SessionNow {
        SessionNow {
            id: report.resolved.session_id.clone(),
            transcript: transcript_of(report),
        }
    }

    fn is_known(&self) -> bool {
        self.id.is_some() || self.transcript.is_some()
    }

    /// In words, for a refusal: the id, else the transcript's file name.
    fn name(&self) -> &str {
        self.id
            .as_deref()
            .or(self.transcript.as_deref().map(short))
            .unwrap_or("unknown")
    }
}

/// Whether a recorded session (an id, or a transcript recorded by an older agentpane) is the
/// session the agent is in now: one session has one id and one transcript, and a transcript
/// named `<id>.jsonl` is that id's. A fresh agent whose first turn wrote its transcript is
/// still in the session recorded before it; `/clear` (a new id) is not. `None` when nothing
/// is known of the session now.
pub fn same_session(was: &str, now: &SessionNow) -> Option<bool> {
    if !now.is_known() {
        return None;
    }
    let names_was = [Some(was), stem(was)];
    let names_now = [
        now.id.as_deref(),
        now.transcript.as_deref(),
        now.transcript.as_deref().and_then(stem),
    ];
    Some(
        names_was
            .iter()
            .flatten()
            .any(|w| names_now.iter().flatten().any(|n| n == w)),
    )
}

/// A transcript's file name without its extension (`/p/abc.jsonl` → `abc`); `None` for a
/// bare id.
fn stem(session: &str) -> Option<&str> {
    let name = short(session);
    let (stem, _) = name.rsplit_once('.')?;
    (name != session && !stem.is_empty()).then_some(stem)
}

/// The report of `pane` in a scan, when an agent runs there.
fn report_of<'a>(reports: &'a [PaneReport], pane: &str) -> Option<&'a PaneReport> {
    reports
        .iter()
        .find(|r| r.resolved.pane.pane_id == pane && r.resolved.agent.is_some())
}

/// Accepts `pane` as a destination: the agent that runs there now, as the scan found it,
/// checked live. Refuses a pane without an agent (naming what runs there) and an agent that
/// is gone (exited, suspended); an agent whose terminal something else has for now is
/// accepted — delivery waits for it as for a busy agent.
pub fn admit(tmux: &Tmux, reports: &[PaneReport], pane: &str) -> Result<Recipient, Refusal> {
    let recipient = of_pane(tmux, reports, pane)?;
    match check(tmux, pane, &recipient, reports) {
        Err(r) if r.is_final() => Err(r),
        _ => Ok(recipient),
    }
}

/// [`of_scan`], and for a pane without an agent a refusal naming what runs there; no live
/// check (a caller that checks next anyway saves a tmux call).
pub fn of_pane(tmux: &Tmux, reports: &[PaneReport], pane: &str) -> Result<Recipient, Refusal> {
    of_scan(reports, pane).map_err(|r| match r {
        Refusal::NotAnAgent { .. } => not_an_agent(tmux, pane),
        other => other,
    })
}

/// The agent a scan found in `pane`, as a [`Recipient`] (its start time read now), without
/// the live look at the terminal that [`admit`] adds; for callers that queue without tmux
/// at hand (channel mail). Delivery checks it all the same.
pub fn of_scan(reports: &[PaneReport], pane: &str) -> Result<Recipient, Refusal> {
    let Some(report) = report_of(reports, pane) else {
        return Err(Refusal::NotAnAgent {
            pane: pane.to_string(),
            runs: "no agent".to_string(),
        });
    };
    let agent = report.resolved.agent.as_ref().expect("filtered on agent");
    let Some(stat) = procfs::stat(agent.pid) else {
        return Err(Refusal::Gone(format!(
            "the {} in {pane} (pid {}) has exited",
            agent.kind, agent.pid
        )));
    };
    Ok(Recipient {
        kind: agent.kind,
        pid: agent.pid,
        start_ticks: stat.start_ticks,
        session: session_of(report),
    })
}

/// The refusal for a pane that runs no agent: what its foreground runs, in words.
fn not_an_agent(tmux: &Tmux, pane: &str) -> Refusal {
    let runs = match tmux.pane_now(pane) {
        Ok(now) if now.dead => "nothing (its program exited)".to_string(),
        Ok(now) if !now.command.is_empty() => now.command,
        _ => "no agent".to_string(),
    };
    Refusal::NotAnAgent {
        pane: pane.to_string(),
        runs,
    }
}

/// Checks, now, that `expected` is the agent in `pane` and has its terminal's foreground;
/// returns what tmux saw of the pane, for [`Tmux::paste_buffer_if`] and
/// [`Tmux::send_enter_if`] to hold it to. `reports` (a recent scan, may be empty) tells which
/// session the agent is in.
pub fn check(
    tmux: &Tmux,
    pane: &str,
    expected: &Recipient,
    reports: &[PaneReport],
) -> Result<PaneNow, Refusal> {
    let now = tmux.pane_now(pane).map_err(|e| gone_pane(pane, &e))?;
    let seen = Seen {
        stat: procfs::stat(expected.pid),
        pane_tty: procfs::tty_device(Path::new(&now.tty)),
        pane_dead: now.dead,
        session: report_of(reports, pane)
            .map(SessionNow::of)
            .unwrap_or_default(),
    };
    judge(pane, expected, &seen).map_err(|r| in_words(r, expected, &seen, &now))?;
    Ok(now)
}

/// A refusal from [`judge`], completed with what has the pane instead of the agent, when
/// something has: tmux names the terminal's foreground group leader, which is not the agent
/// while the agent still has its terminal (it may be the shell that started it).
fn in_words(r: Refusal, expected: &Recipient, seen: &Seen, now: &PaneNow) -> Refusal {
    match r {
        // A suspended agent's refusal already says what to do.
        Refusal::Gone(why) if seen.agent_in_front(expected) || seen.stopped() => Refusal::Gone(why),
        Refusal::Away(why) => Refusal::Away(format!("{why}{}", foreground_name(now))),
        Refusal::Gone(why) => Refusal::Gone(format!("{why}{}", foreground_name(now))),
        other => other,
    }
}

fn gone_pane(pane: &str, e: &TmuxError) -> Refusal {
    Refusal::Gone(format!("pane {pane} is gone ({e})"))
}

/// `; bash has the pane now`, from tmux's view of the pane's foreground.
fn foreground_name(now: &PaneNow) -> String {
    if now.command.is_empty() {
        String::new()
    } else {
        format!("; {} has the pane now", now.command)
    }
}

/// What was observed of a pane and the recorded agent process at one moment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    /// The recorded pid's `/proc/PID/stat` (`None`: no such process).
    pub stat: Option<Stat>,
    /// The pane's terminal device, in `stat`'s `tty_nr` encoding.
    pub pane_tty: Option<u64>,
    pub pane_dead: bool,
    /// The session the pane's agent is in per the latest scan.
    pub session: SessionNow,
}

impl Seen {
    /// The recorded process is alive, on the pane's terminal and in its foreground.
    fn agent_in_front(&self, expected: &Recipient) -> bool {
        !self.pane_dead
            && self.stat.is_some_and(|s| {
                s.start_ticks == expected.start_ticks
                    && !matches!(s.state, 'Z' | 'X')
                    && !s.stopped()
                    && s.in_foreground()
                    && self.pane_tty == Some(s.tty_nr)
            })
    }

    fn stopped(&self) -> bool {
        self.stat.is_some_and(|s| s.stopped())
    }
}

/// The rule, on observed values: text may go in only while the recorded process (same pid,
/// same start) is alive, not stopped, on the pane's terminal, and in its foreground group,
/// and its session is the one the route was made for.
pub fn judge(pane: &str, expected: &Recipient, seen: &Seen) -> Result<(), Refusal> {
    let who = expected;
    if seen.pane_dead {
        return Err(Refusal::Gone(format!(
            "the {who} in {pane} has exited (the pane is dead)"
        )));
    }
    let stat = match seen.stat {
        Some(s) if s.start_ticks == expected.start_ticks => s,
        Some(_) | None => {
            return Err(Refusal::Gone(format!("the {who} in {pane} has exited")));
        }
    };
    if stat.state == 'Z' || stat.state == 'X' {
        return Err(Refusal::Gone(format!("the {who} in {pane} has exited")));
    }
    if seen.pane_tty.is_none() || seen.pane_tty != Some(stat.tty_nr) {
        return Err(Refusal::Gone(format!(
            "the {who} no longer runs on {pane}'s terminal"
        )));
    }
    if stat.stopped() {
        return Err(Refusal::Gone(format!(
            "the {who} in {pane} is suspended (Ctrl-Z); bring it back with `fg`, then route again"
        )));
    }
    if !stat.in_foreground() {
        return Err(Refusal::Away(format!(
            "the {who} in {pane} is not in the foreground of its terminal"
        )));
    }
    if let Some(was) = &expected.session {
        if same_session(was, &seen.session) == Some(false) {
            return Err(Refusal::Gone(format!(
                "the {who} in {pane} is in another session now (it was {}, it is {}): the new session never asked for this",
                short(was),
                seen.session.name()
            )));
        }
    }
    Ok(())
}

/// The last path component of a session (a transcript path is long).
fn short(session: &str) -> &str {
    session.rsplit('/').next().unwrap_or(session)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stat(state: char, pgrp: i32, tpgid: i32) -> Stat {
        Stat {
            state,
            pgrp,
            tty_nr: 34816,
            tpgid,
            start_ticks: 555,
        }
    }

    fn claude() -> Recipient {
        Recipient {
            kind: AgentKind::Claude,
            pid: 100,
            start_ticks: 555,
            session: Some("s-1".into()),
        }
    }

    fn seen(stat: Option<Stat>) -> Seen {
        Seen {
            stat,
            pane_tty: Some(34816),
            pane_dead: false,
            session: now(Some("s-1"), None),
        }
    }

    fn now(id: Option<&str>, transcript: Option<&str>) -> SessionNow {
        SessionNow {
            id: id.map(str::to_string),
            transcript: transcript.map(str::to_string),
        }
    }

    fn verdict(s: &Seen) -> Result<(), Refusal> {
        judge("%5", &claude(), s)
    }

    #[test]
    fn the_same_agent_in_the_foreground_may_receive() {
        assert_eq!(verdict(&seen(Some(stat('S', 100, 100)))), Ok(()));
        assert_eq!(verdict(&seen(Some(stat('R', 100, 100)))), Ok(()));
        // A session not known at the time of the route (none yet) or now does not refuse.
        let unknown = Seen {
            session: SessionNow::default(),
            ..seen(Some(stat('S', 100, 100)))
        };
        assert_eq!(verdict(&unknown), Ok(()));
    }

    #[test]
    fn an_exited_or_replaced_process_is_gone() {
        let r = verdict(&seen(None)).unwrap_err();
        assert!(r.is_final() && r.to_string().contains("has exited"), "{r}");
        let reused = Stat {
            start_ticks: 999,
            ..stat('S', 100, 100)
        };
        assert!(verdict(&seen(Some(reused))).unwrap_err().is_final());
        let zombie = stat('Z', 100, 100);
        assert!(verdict(&seen(Some(zombie))).unwrap_err().is_final());
        let dead = Seen {
            pane_dead: true,
            ..seen(Some(stat('S', 100, 100)))
        };
        assert!(verdict(&dead).unwrap_err().is_final());
    }

    #[test]
    fn a_suspended_agent_is_gone_and_says_how_to_come_back() {
        // Ctrl-Z: the job is stopped and the shell's group (7) has the terminal.
        let r = verdict(&seen(Some(stat('T', 100, 7)))).unwrap_err();
        assert!(r.is_final());
        assert!(r.to_string().contains("suspended (Ctrl-Z)"), "{r}");
    }

    #[test]
    fn a_foreground_program_of_the_agent_makes_it_away_not_gone() {
        let r = verdict(&seen(Some(stat('S', 100, 200)))).unwrap_err();
        assert!(!r.is_final(), "{r}");
    }

    #[test]
    fn another_terminal_or_another_session_is_gone() {
        let moved = Seen {
            pane_tty: Some(1),
            ..seen(Some(stat('S', 100, 100)))
        };
        assert!(verdict(&moved).unwrap_err().is_final());
        let no_tty = Seen {
            pane_tty: None,
            ..seen(Some(stat('S', 100, 100)))
        };
        assert!(verdict(&no_tty).unwrap_err().is_final());
        let cleared = Seen {
            session: now(None, Some("/x/s-2.jsonl")),
            ..seen(Some(stat('S', 100, 100)))
        };
        let r = verdict(&cleared).unwrap_err();
        assert!(r.is_final() && r.to_string().contains("s-2.jsonl"), "{r}");
    }

    #[test]
    fn a_session_id_recorded_before_the_first_turn_is_the_session_of_its_transcript() {
        let front = seen(Some(stat('S', 100, 100)));
        // Recorded as `s-1` while no transcript existed; the first turn wrote `s-1.jsonl`.
        for session in [
            now(Some("s-1"), Some("/r/projects/-w/s-1.jsonl")),
            now(None, Some("/r/projects/-w/s-1.jsonl")),
        ] {
            let s = Seen {
                session,
                ..front.clone()
            };
            assert_eq!(verdict(&s), Ok(()), "{s:?}");
        }
        // A recipient recorded with its transcript (an older agentpane) is the same session
        // as that transcript's id.
        let older = Recipient {
            session: Some("/r/projects/-w/s-1.jsonl".into()),
            ..claude()
        };
        assert_eq!(judge("%5", &older, &front), Ok(()));
    }

    #[test]
    fn a_new_session_after_the_recorded_one_is_refused_before_and_after_its_first_turn() {
        let front = seen(Some(stat('S', 100, 100)));
        for session in [
            now(Some("s-2"), None),
            now(Some("s-2"), Some("/r/projects/-w/s-2.jsonl")),
            now(None, Some("/r/projects/-w/s-2.jsonl")),
        ] {
            let s = Seen {
                session,
                ..front.clone()
            };
            let r = verdict(&s).unwrap_err();
            assert!(r.is_final() && r.to_string().contains("it is s-2"), "{r}");
            assert!(r.to_string().contains("it was s-1"), "{r}");
        }
        let older = Recipient {
            session: Some("/r/projects/-w/s-1.jsonl".into()),
            ..claude()
        };
        let cleared = Seen {
            session: now(Some("s-2"), None),
            ..front
        };
        assert!(judge("%5", &older, &cleared).unwrap_err().is_final());
    }

    #[test]
    fn a_refusal_names_what_has_the_pane_only_when_the_agent_does_not() {
        let pane = PaneNow {
            pane_pid: 7,
            tty: "/dev/pts/3".into(),
            dead: false,
            // The group leader tmux names: the shell that started the agent.
            command: "bash".into(),
        };
        let cleared = Seen {
            session: now(Some("s-2"), None),
            ..seen(Some(stat('S', 100, 100)))
        };
        let r = verdict(&cleared).unwrap_err();
        let said = in_words(r, &claude(), &cleared, &pane).to_string();
        assert!(!said.contains("bash"), "{said}");
        assert!(said.contains("another session"), "{said}");
        let exited = seen(None);
        let r = verdict(&exited).unwrap_err();
        let said = in_words(r, &claude(), &exited, &pane).to_string();
        assert!(
            said.ends_with("has exited; bash has the pane now"),
            "{said}"
        );
        let away = seen(Some(stat('S', 100, 200)));
        let r = verdict(&away).unwrap_err();
        let said = in_words(r, &claude(), &away, &pane).to_string();
        assert!(said.ends_with("; bash has the pane now"), "{said}");
    }

    #[test]
    fn recipients_round_trip_and_older_fields_default() {
        let json = serde_json::to_string(&claude()).unwrap();
        assert_eq!(
            json,
            r#"{"kind":"claude","pid":100,"start_ticks":555,"session":"s-1"}"#
        );
        let back: Recipient =
            serde_json::from_str(r#"{"kind":"codex","pid":1,"start_ticks":2}"#).unwrap();
        assert_eq!(back.session, None);
    }

    #[test]
    fn the_refusal_for_a_shell_names_it() {
        let r = Refusal::NotAnAgent {
            pane: "%2".into(),
            runs: "bash".into(),
        };
        assert_eq!(
            r.to_string(),
            "%2 runs bash, not a coding agent: agentpane types only into an agent's input box"
        );
        assert!(r.is_final());
    }
}
