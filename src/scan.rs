//! One scan: one `list-panes`, one process snapshot, each agent pane resolved and classified.
//! Everything the outputs (segment, pane-status, watcher, routing) read comes from here.

use std::path::Path;

use serde::Serialize;

pub use crate::evidence::Source;
use crate::evidence::{self, PaneEvidence, RecordStatus};

use crate::events::Time;
use crate::resolve::{Resolved, Resolver};
use crate::state::{Observation, Status, Windows};
use crate::tmux::{Pane, Tmux, TmuxError};

/// One agent pane with its state.
#[derive(Debug, Clone, Serialize)]
pub struct PaneReport {
    pub resolved: Resolved,
    pub status: Status,
    pub source: Source,
}

/// Scans the server: every pane that runs an agent, resolved and classified at `now` from
/// all evidence (transcript, hooks, session record, and the pane when it can matter).
pub fn scan(tmux: &Tmux, now: Time) -> Result<Vec<PaneReport>, TmuxError> {
    Ok(reports_of(resolve_all(tmux, now)?, tmux, now))
}

/// The agent panes among `resolved`, classified from all evidence.
fn reports_of(
    resolved: impl IntoIterator<Item = Resolved>,
    tmux: &Tmux,
    now: Time,
) -> Vec<PaneReport> {
    let state_dir = crate::paths::state_dir();
    resolved
        .into_iter()
        .filter(|r| r.agent.is_some())
        .map(|r| with_evidence(report(r, now), tmux, &state_dir, now))
        .collect()
}

/// Resolutions kept between scans by a long-running caller (the watcher). Resolving — the
/// process-table snapshot, session records, open files — is most of a scan's cost, and it only
/// changes when the panes change (`list-panes` includes each pane's current command), an agent
/// exits, or a session/transcript file appears; a transcript append or the safety poll reuses
/// it. Stale after [`RESOLVE_MAX_AGE`] whatever happens.
#[derive(Debug, Default)]
pub struct ResolveCache {
    panes: Vec<Pane>,
    resolved: Vec<Resolved>,
    at: Option<std::time::Instant>,
    stale: bool,
    /// How many times it resolved (for tests and the log).
    resolves: u64,
}

/// A cached resolution is redone at least this often.
pub const RESOLVE_MAX_AGE: std::time::Duration = std::time::Duration::from_secs(60);

impl ResolveCache {
    /// The next scan resolves afresh (a session record or a new transcript appeared).
    pub fn invalidate(&mut self) {
        self.stale = true;
    }

    /// True when `path` is a transcript some pane already resolved to.
    pub fn knows(&self, path: &Path) -> bool {
        self.resolved
            .iter()
            .any(|r| r.transcript.as_deref() == Some(path))
    }

    /// [`scan`] reusing the last resolution when nothing that decides it changed.
    pub fn scan(&mut self, tmux: &Tmux, now: Time) -> Result<Vec<PaneReport>, TmuxError> {
        let panes = tmux.list_panes()?;
        let young = self.at.is_some_and(|t| t.elapsed() < RESOLVE_MAX_AGE);
        let alive = self
            .resolved
            .iter()
            .filter_map(|r| r.agent.as_ref())
            .all(|a| Path::new(&format!("/proc/{}", a.pid)).exists());
        let same = panes.len() == self.panes.len()
            && panes.iter().zip(&self.panes).all(|(a, b)| a.same_pane(b));
        let awaited = self.resolved.iter().any(awaits_transcript);
        if self.stale || !young || !alive || !same || awaited {
            self.resolved = resolve_panes(&panes, now);
            self.at = Some(std::time::Instant::now());
            self.stale = false;
            self.resolves += 1;
        } else {
            // Titles change without deciding anything the resolution holds; keep them current.
            for (r, p) in self.resolved.iter_mut().zip(&panes) {
                r.pane.title.clone_from(&p.title);
            }
        }
        self.panes = panes;
        Ok(reports_of(self.resolved.iter().cloned(), tmux, now))
    }
}

/// A pane resolved before its agent's transcript existed. Claude Code writes the transcript
/// at the first prompt, in a project folder the watcher did not watch (it may not even exist
/// yet), and 2.1.197 can set its record to `waiting` for a permission prompt just before that;
/// Codex's daemon writes a new session's first rollout in a dated folder under `sessions/`
/// that nothing watched. No later file event would tell the cache, which would then miss the
/// first turn until [`RESOLVE_MAX_AGE`] (a minute, seen with Codex 0.171). Such a pane is
/// resolved afresh at every scan until its transcript appears. Gemini CLI writes its chat log
/// at start (and is read from its title before that); opencode's sessions live in the
/// database the watcher already watches; agents whose logs agentpane does not read never get
/// one.
fn awaits_transcript(r: &Resolved) -> bool {
    use crate::events::AgentKind;
    r.transcript.is_none()
        && r.agent
            .as_ref()
            .is_some_and(|a| matches!(a.kind, AgentKind::Claude | AgentKind::Codex))
}

/// Folds hook, session-record and pane evidence onto a transcript report
/// (docs/design.md#evidence-order). The pane is captured only when its screen can change the
/// answer: a pending tool call (a permission dialog may be up), a wait to confirm, or no transcript
/// at all.
pub fn with_evidence(report: PaneReport, tmux: &Tmux, state_dir: &Path, now: Time) -> PaneReport {
    let PaneReport {
        resolved,
        status,
        source,
    } = report;
    let hook = resolved
        .transcript
        .as_deref()
        .and_then(|t| evidence::hook::load_for_transcript(state_dir, t));
    let record = resolved
        .record
        .as_ref()
        .and_then(RecordStatus::from_session_record);
    let pending_tool = status.turn_open
        && status
            .reason
            .as_deref()
            .is_some_and(|r| r.starts_with("tool"));
    let waiting_elsewhere = hook
        .as_ref()
        .and_then(|h| h.latest_decisive())
        .is_some_and(|h| h.kind == evidence::HookKind::PermissionPrompt)
        || record
            .as_ref()
            .is_some_and(|r| r.state == evidence::RecordState::Waiting);
    let no_transcript = source == Source::None;
    // Agents retry a failed request (429, 5xx) with little or nothing of it in their logs: a
    // quiet open turn is worth a look at the screen (docs/design.md#evidence-order).
    let quiet_turn = status.turn_open
        && resolved
            .agent
            .as_ref()
            .is_some_and(|a| crate::agents::shows_retries(a.kind))
        && crate::state::age(now, status.last_activity) >= crate::agents::retry::RETRY_LOOK;
    let pane = (pending_tool || waiting_elsewhere || no_transcript || quiet_turn)
        .then(|| capture(tmux, &resolved.pane.pane_id))
        .flatten();
    let pane_evidence = pane
        .as_deref()
        .map(|text| evidence::detect_prompt(text).unwrap_or(PaneEvidence::NoPrompt));
    let (mut status, mut source) = evidence::reconcile(
        &status,
        hook.as_ref(),
        record.as_ref(),
        pane_evidence.as_ref(),
        now,
        &Windows::default(),
    );
    if quiet_turn && status.turn_open && status.state != crate::state::State::Waiting {
        let retry = resolved.agent.as_ref().and_then(|a| {
            pane.as_deref()
                .and_then(|screen| crate::agents::retrying(a.kind, screen))
        });
        if let Some(retry) = retry {
            status.state = crate::state::State::Attention;
            status.reason = Some(retry.reason());
            status.resets_at = retry
                .next_in
                .and_then(|s| chrono::Duration::try_seconds(s as i64))
                .map(|d| now + d);
            status.retry = Some(crate::state::Retry {
                attempt: retry.attempt,
                limit: retry.limit,
                next_at: status.resets_at,
            });
            source = Source::Pane;
        }
    }
    if resolved
        .agent
        .as_ref()
        .is_some_and(|a| a.kind == crate::events::AgentKind::Gemini)
    {
        // Gemini CLI logs a tool call only once it is complete: its title (from the scan's
        // one `list-panes`) says the rest.
        let id = resolved.pane.pane_id.as_str();
        (status, source) = crate::agents::gemini::pane::refine(
            status,
            source,
            Some(resolved.pane.title.as_str()),
            || pane.clone().or_else(|| capture(tmux, id)),
            now,
            &Windows::default(),
        );
    }
    if source == Source::None {
        if let Some(text) = pane.as_deref() {
            // No log to read: the screen is all there is (marked `source: pane`).
            if busy_footer(text) {
                status.state = crate::state::State::Working;
                status.turn_open = true;
            }
            source = Source::Pane;
        }
    }
    // Stopped by Ctrl-Z: whatever its log says, it does nothing and takes no input until the
    // person brings it back (docs/design.md#delivery).
    if resolved
        .agent
        .as_ref()
        .and_then(|a| crate::proctree::procfs::stat(a.pid))
        .is_some_and(|s| s.stopped())
    {
        status.reason = Some(SUSPENDED.to_string());
    }
    PaneReport {
        resolved,
        status,
        source,
    }
}

/// The reason shown for an agent stopped by Ctrl-Z.
pub const SUSPENDED: &str = "suspended (Ctrl-Z)";

/// The visible part of a pane, or `None` when it vanished.
fn capture(tmux: &Tmux, pane_id: &str) -> Option<String> {
    tmux.cmd(&["capture-pane", "-p", "-J", "-t", pane_id]).ok()
}

/// Claude Code, Codex and opencode show "esc (to) interrupt" while a turn runs.
fn busy_footer(text: &str) -> bool {
    let clean = strip_ansi_escapes::strip_str(text);
    clean
        .lines()
        .rev()
        .filter(|l| !l.trim().is_empty())
        .take(8)
        .any(|l| {
            let l = l.to_ascii_lowercase();
            // opencode 1.18 writes "esc interrupt" (then "esc again to interrupt").
            l.contains("esc to interrupt") || l.contains("esc interrupt")
        })
}

/// Every pane on the server resolved (agent or not), with one `list-panes` and one process
/// snapshot.
pub fn resolve_all(tmux: &Tmux, now: Time) -> Result<Vec<Resolved>, TmuxError> {
    let panes = tmux.list_panes()?;
    Ok(resolve_panes(&panes, now))
}

/// Resolves the given panes against one fresh process snapshot.
pub fn resolve_panes(panes: &[Pane], now: Time) -> Vec<Resolved> {
    let mut resolver = Resolver::for_panes(panes, now);
    let out = panes.iter().map(|p| resolver.resolve(p)).collect();
    resolver.finish();
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
    let agent = resolved.agent.as_ref().map(|a| a.kind);
    let classified = resolved.transcript.as_deref().and_then(|path| {
        let classify =
            |obs| crate::transcript::classify_file(path, agent, now, &Windows::default(), obs).ok();
        let first = classify(Observation::default())?;
        // A Claude turn whose transcript is quiet may have a subagent at work: its own
        // transcript's writes keep the turn alive (looked at only for an open turn).
        let (_, status) = &first;
        if agent == Some(crate::events::AgentKind::Claude) && status.turn_open {
            let life = crate::agents::claude::subagent_life(path);
            if life.is_some_and(|l| Some(l) > status.last_activity) {
                return classify(Observation {
                    subagent_life: life,
                    ..Observation::default()
                });
            }
        }
        Some(first)
    });
    let (status, source) = match classified {
        Some((_, status)) => (status, Source::Transcript),
        None => (Status::idle(), Source::None),
    };
    PaneReport {
        resolved,
        status,
        source,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// A tmux that answers `list-panes` with whatever the test put in.
    struct Panes(Arc<Mutex<String>>);

    impl crate::tmux::Runner for Panes {
        fn run(&self, args: &[String], _stdin: Option<&[u8]>) -> Result<Vec<u8>, TmuxError> {
            match args.first().map(String::as_str) {
                Some("list-panes") => Ok(self.0.lock().unwrap().clone().into_bytes()),
                _ => Ok(Vec::new()),
            }
        }
    }

    fn line(command: &str) -> String {
        pane_line(std::process::id(), command, "title")
    }

    /// One `list-panes` line for pane `%1` of process `pid`.
    fn pane_line(pid: u32, command: &str, title: &str) -> String {
        let f = [
            "%1",
            &pid.to_string(),
            "main",
            "0",
            "w",
            "0",
            "/tmp",
            "1",
            "1",
            "0",
            "0",
            "@1",
            command,
            title,
        ];
        format!("{}\n", f.join("\u{1f}"))
    }

    #[test]
    fn a_pane_without_its_transcript_yet_is_resolved_again() {
        // The watcher's view of Claude Code 2.1.197 whose record said `waiting` (permission)
        // just before its first transcript was written: reusing that resolution kept the pane
        // `idle` in the watcher, unalerted, for up to a minute.
        let mut r = crate::segment::testkit::report(1, 1, crate::state::State::Idle, 0).resolved;
        assert!(!awaits_transcript(&r), "a transcript: reuse");
        r.transcript = None;
        assert!(awaits_transcript(&r), "no transcript yet: resolve again");
        r.agent.as_mut().unwrap().kind = crate::events::AgentKind::Codex;
        assert!(
            awaits_transcript(&r),
            "Codex writes its first rollout at the first prompt"
        );
        r.agent.as_mut().unwrap().kind = crate::events::AgentKind::Gemini;
        assert!(!awaits_transcript(&r), "Gemini CLI is read from its title");
        r.agent.as_mut().unwrap().kind = crate::events::AgentKind::Aider;
        assert!(
            !awaits_transcript(&r),
            "an agent whose log is not read has none to wait for"
        );
        r.agent = None;
        assert!(!awaits_transcript(&r), "no agent: nothing to wait for");
    }

    #[test]
    fn resolutions_are_reused_until_something_that_decides_them_changes() {
        let out = Arc::new(Mutex::new(line("bash")));
        let tmux = Tmux::with_runner(Box::new(Panes(Arc::clone(&out))));
        let now = chrono::Utc::now();
        let mut cache = ResolveCache::default();
        cache.scan(&tmux, now).unwrap();
        cache.scan(&tmux, now).unwrap();
        assert_eq!(cache.resolves, 1, "same panes: reused");
        cache.invalidate();
        cache.scan(&tmux, now).unwrap();
        assert_eq!(cache.resolves, 2, "invalidated: resolved again");
        *out.lock().unwrap() = line("claude");
        cache.scan(&tmux, now).unwrap();
        assert_eq!(
            cache.resolves, 3,
            "the pane's command changed: resolved again"
        );
        cache.scan(&tmux, now).unwrap();
        assert_eq!(cache.resolves, 3);
    }
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
