//! One scan: one `list-panes`, one process snapshot, each agent pane resolved and classified.
//! Everything the outputs (segment, pane-status, watcher, routing) read comes from here.
//!
//! A one-shot caller scans afresh ([`scan`]); a long-running one keeps what it learnt between
//! scans in a [`Scanner`] (`scanner.rs`), so a wake does only what changed calls for. The
//! evidence beside the transcripts (hooks, session records, screens) is folded in
//! `evidence.rs`, screens captured in one tmux call and kept while quiet in `screens.rs`.

mod evidence;
mod probe;
mod scanner;
mod screens;

use std::sync::Arc;

use serde::Serialize;

use crate::state::Source;
pub use evidence::{with_evidence, SUSPENDED};
pub use scanner::{Counters, Scanner, RESOLVE_MAX_AGE};

use crate::events::Time;
use crate::proctree::Skeleton;
use crate::resolve::{Resolved, Resolver};
use crate::state::{Observation, Status, Windows};
use crate::tmux::{Pane, Tmux, TmuxError};
use crate::transcript::reader::{Depth, Reader};
use evidence::evidence_all;
use screens::Screens;

/// One agent pane with its state. The resolution is shared: a long-running caller keeps the
/// same one from scan to scan, and a report is copied at every wake.
#[derive(Debug, Clone, Serialize)]
pub struct PaneReport {
    pub resolved: Arc<Resolved>,
    pub status: Status,
    pub source: Source,
    /// What the session used and the plan windows it revealed, for a caller that shows
    /// them (docs/design.md#usage); `None` otherwise or when unknown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<Arc<crate::usage::Metered>>,
}

/// Scans the server: every pane that runs an agent, resolved and classified at `now` from
/// all evidence (transcript, hooks, session record, and the pane when it can matter).
pub fn scan(tmux: &Tmux, now: Time) -> Result<Vec<PaneReport>, TmuxError> {
    // tmux takes a while to list the panes (their folders and commands come from /proc): the
    // process table is read meanwhile.
    let (panes, skeleton) = std::thread::scope(|s| {
        let skeleton = s.spawn(Skeleton::take);
        let panes = tmux.list_panes();
        (panes, skeleton.join())
    });
    let panes = panes?;
    let skeleton = skeleton.unwrap_or_else(|_| Skeleton::take());
    let mut reader = Reader::default();
    let resolver = Resolver::from_skeleton(&panes, skeleton, now);
    // An agent read from its screen alone is sure to have it looked at: those screens are
    // captured (one tmux call, waited for on another thread) while the panes resolve.
    let screen_only: Vec<&Pane> = panes
        .iter()
        .filter(|p| {
            resolver
                .agent_kind(p)
                .is_some_and(|k| !crate::agents::reads_log(k))
        })
        .collect();
    let mut screens = Screens::default();
    let resolved = std::thread::scope(|s| {
        let ahead = (!screen_only.is_empty()).then(|| {
            s.spawn(|| {
                let mut screens = Screens::default();
                screens.ahead(tmux, &screen_only);
                screens
            })
        });
        let resolved = resolve_by(resolver, &panes, &mut reader);
        if let Some(Ok(taken)) = ahead.map(|h| h.join()) {
            screens = taken;
        }
        resolved
    });
    Ok(reports_of(
        resolved.into_iter().map(Arc::new),
        tmux,
        now,
        &mut reader,
        &mut screens,
        Depth::Window,
    ))
}

/// The agent panes among `resolved`, classified from all evidence: transcripts through
/// `reader` (opencode's sessions in one pass per database, looked at to `depth`), the
/// screens that can matter in one tmux call.
fn reports_of(
    resolved: impl IntoIterator<Item = Arc<Resolved>>,
    tmux: &Tmux,
    now: Time,
    reader: &mut Reader,
    screens: &mut Screens,
    depth: Depth,
) -> Vec<PaneReport> {
    let agents: Vec<Arc<Resolved>> = resolved.into_iter().filter(|r| r.agent.is_some()).collect();
    reader.read_ahead(
        agents.iter().filter_map(|r| {
            let kind = r.agent.as_ref().map(|a| a.kind);
            Some((r.transcript.as_deref()?, kind))
        }),
        depth,
    );
    let reports = agents
        .into_iter()
        .map(|r| report_with(r, now, reader))
        .collect();
    evidence_all(reports, tmux, &crate::paths::state_dir(), now, screens)
}

/// Every pane on the server resolved (agent or not), with one `list-panes` and one process
/// snapshot.
pub fn resolve_all(tmux: &Tmux, now: Time) -> Result<Vec<Resolved>, TmuxError> {
    let panes = tmux.list_panes()?;
    Ok(resolve_panes(&panes, now))
}

/// Resolves the given panes against one fresh process snapshot.
pub fn resolve_panes(panes: &[Pane], now: Time) -> Vec<Resolved> {
    resolve_with(panes, now, &mut Reader::default())
}

/// [`resolve_panes`] reading agents' databases through the reader's connections.
fn resolve_with(panes: &[Pane], now: Time, reader: &mut Reader) -> Vec<Resolved> {
    resolve_by(Resolver::for_panes(panes, now), panes, reader)
}

/// Resolves `panes` with `resolver`, reading agents' databases through the reader's
/// connections.
fn resolve_by(resolver: Resolver, panes: &[Pane], reader: &mut Reader) -> Vec<Resolved> {
    let mut resolver = resolver.with_shared(reader.stores().lend());
    let out = resolver.resolve_all(panes);
    reader.stores().give_back(resolver.finish());
    out
}

/// The pane a tmux target (`%3`, `work:2.1`, `=work:2`) names; `Ok(None)` when the server
/// has no such pane.
pub fn find_pane(tmux: &Tmux, target: &str) -> Result<Option<Pane>, TmuxError> {
    let id = match tmux.cmd(&["display-message", "-p", "-t", target, "#{pane_id}"]) {
        Ok(out) => out.trim().to_string(),
        Err(TmuxError::Command(msg)) if msg.contains("can't find") => return Ok(None),
        Err(e) => return Err(e),
    };
    if id.is_empty() {
        return Ok(None);
    }
    Ok(tmux.list_panes()?.into_iter().find(|p| p.pane_id == id))
}

/// One pane by target, resolved; `Ok(None)` when there is no such pane.
pub fn resolve_target(tmux: &Tmux, target: &str, now: Time) -> Result<Option<Resolved>, TmuxError> {
    let Some(pane) = find_pane(tmux, target)? else {
        return Ok(None);
    };
    Ok(resolve_panes(std::slice::from_ref(&pane), now).pop())
}

/// Classifies a resolved pane's transcript at `now` (no observation memory). Without a
/// transcript, or when it cannot be read (deleted mid-scan), the state is `idle` with
/// source `none`.
pub fn report(resolved: Resolved, now: Time) -> PaneReport {
    report_with(Arc::new(resolved), now, &mut Reader::default())
}

/// [`report`] reading the transcript through `reader`.
fn report_with(resolved: Arc<Resolved>, now: Time, reader: &mut Reader) -> PaneReport {
    let agent = resolved.agent.as_ref().map(|a| a.kind);
    let classified = resolved.transcript.as_deref().and_then(|path| {
        let mut classify = |obs| {
            reader
                .classify(path, agent, now, &Windows::default(), obs)
                .ok()
        };
        let first = classify(Observation::default())?;
        // A turn whose transcript is quiet may have a subagent at work: its own log's
        // writes keep the turn alive (looked at only for an open turn).
        let (_, status) = &first;
        if status.turn_open {
            let life = agent.and_then(|a| crate::agents::of(a).side_life(path));
            if life.is_some_and(|l| Some(l) > status.last_activity) {
                return classify(Observation {
                    subagent_life: life,
                    ..Observation::default()
                });
            }
        }
        Some(first)
    });
    let usage = match (&classified, resolved.transcript.as_deref()) {
        (Some((kind, _)), Some(path)) => {
            let pid = resolved.agent.as_ref().map(|a| a.pid);
            reader.usage(path, *kind, pid).map(Arc::new)
        }
        _ => None,
    };
    let (status, source) = match classified {
        Some((_, status)) => (status, Source::Transcript),
        None => (Status::idle(), Source::None),
    };
    PaneReport {
        resolved,
        status,
        source,
        usage,
    }
}

/// Fills in what each pane's session used, its log read forward once (a one-shot command
/// that shows usage; the watcher follows the logs instead).
pub fn measure_usage(reports: &mut [PaneReport]) {
    let home = crate::paths::home_dir();
    for r in reports.iter_mut().filter(|r| r.usage.is_none()) {
        let (Some(path), Some(agent)) = (r.resolved.transcript.as_deref(), &r.resolved.agent)
        else {
            continue;
        };
        r.usage = crate::transcript::meter::measure(path, agent.kind, Some(agent.pid), &home)
            .map(Arc::new);
    }
}

#[cfg(test)]
pub(crate) mod testkit;

#[cfg(test)]
mod tests {
    use super::testkit::pane_line;
    use super::*;
    use std::sync::{Arc, Mutex};

    /// A tmux that lists one pane and records every command it is asked to run.
    struct Counting {
        listing: String,
        calls: Arc<Mutex<Vec<String>>>,
    }

    impl crate::tmux::Runner for Counting {
        fn run(&self, args: &[String], _stdin: Option<&[u8]>) -> Result<Vec<u8>, TmuxError> {
            self.calls.lock().unwrap().push(args.join(" "));
            match args.first().map(String::as_str) {
                Some("list-panes") => Ok(self.listing.clone().into_bytes()),
                _ => Ok(Vec::new()),
            }
        }
    }

    #[test]
    fn a_gemini_pane_is_read_from_the_one_list_panes_call() {
        // A process that looks like Gemini CLI, with no chat log: its title alone decides.
        let home = tempfile::tempdir().unwrap();
        let mut child = std::process::Command::new("bash")
            .args(["-c", "exec -a gemini sleep 600"])
            .env("HOME", home.path())
            .spawn()
            .unwrap();
        let pid = child.id();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while !std::fs::read(format!("/proc/{pid}/cmdline"))
            .is_ok_and(|c| c.starts_with(b"gemini\0"))
        {
            assert!(
                std::time::Instant::now() < deadline,
                "the stand-in never started"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let calls = Arc::new(Mutex::new(Vec::new()));
        let tmux = Tmux::with_runner(Box::new(Counting {
            listing: pane_line(pid, "gemini", "✦  Working… (tmp)"),
            calls: Arc::clone(&calls),
        }));
        let reports = scan(&tmux, chrono::Utc::now()).unwrap();
        let _ = child.kill();
        let _ = child.wait();
        assert_eq!(reports.len(), 1, "{reports:?}");
        assert_eq!(reports[0].status.state, crate::state::State::Working);
        let calls = calls.lock().unwrap();
        assert!(
            calls.iter().all(|c| !c.starts_with("display-message")),
            "one tmux call per scan reads every title: {calls:?}"
        );
        assert_eq!(
            calls.iter().filter(|c| c.starts_with("list-panes")).count(),
            1
        );
    }
}
