//! What a long-running caller keeps between scans, and how a wake's work follows what
//! changed (docs/design.md#watcher).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use super::probe::Probes;
use super::screens::Screens;
use super::{reports_of, resolve_with, PaneReport};
use crate::events::Time;
use crate::resolve::Resolved;
use crate::tmux::{Pane, Tmux, TmuxError};
use crate::transcript::reader::{Depth, Reader};

/// What a long-running caller (the watcher, a wait, the picker) keeps between scans, so that
/// each scan does only the work that what changed calls for:
///
/// - the resolutions (process snapshot, session records, open files: most of a scan's cost),
///   redone only when the panes change (`list-panes` includes each pane's current command),
///   an agent exits, a file that is no known transcript appears or changes, or
///   [`RESOLVE_MAX_AGE`] passed;
/// - the transcripts' events ([`Reader`]): a log is read again only once it changed, an
///   opencode session once its rows did;
/// - the screens captured, kept while their window shows no new output;
/// - the last reports: after a write to known transcripts ([`Scanner::note`]) only their
///   panes are read again, without asking tmux; tmux is asked (`list-panes`) at the safety
///   poll, after a nudge (tmux hooks: focus and pane changes) and when something unknown
///   changed ([`Scanner::list_panes`], [`Scanner::invalidate`]).
#[derive(Debug, Default)]
pub struct Scanner {
    panes: Vec<Pane>,
    resolved: Vec<Arc<Resolved>>,
    /// Each file a resolved transcript is read from → those transcripts.
    sources: HashMap<PathBuf, Vec<PathBuf>>,
    reports: Vec<PaneReport>,
    at: Option<Instant>,
    /// Resolve afresh at the next scan.
    stale: bool,
    /// Ask tmux for the panes at the next scan.
    list: bool,
    /// The safety poll is due: ask tmux only when the probes say it may have news.
    poll: bool,
    /// The panes' foregrounds as of the last `list-panes`.
    probes: Probes,
    /// The last scan answered the safety poll (listed, or found nothing that calls for it).
    last_polled: bool,
    /// tmux tells of focus and pane changes (the plugin's hooks nudge): only then may a
    /// safety poll trust the probes, which cannot see a focus change.
    hooked: bool,
    /// Transcripts written since the last scan.
    touched: HashSet<PathBuf>,
    reader: Reader,
    screens: Screens,
    /// The panes whose pending tool call's screen is due a look, and when.
    looks: Vec<(String, Time)>,
    /// When tmux was last listed (the titles are that fresh).
    titles_listed: Option<Time>,
    /// A title-read agent wrote its log within [`TITLE_GAP`] of the last listing: a listing
    /// is owed when the gap ends.
    titles_owed: bool,
    counters: Counters,
    last_full: bool,
}

/// What a [`Scanner`] did so far.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Counters {
    /// Scans asked for.
    pub scans: u64,
    /// `tmux list-panes` calls.
    pub lists: u64,
    /// Safety polls answered without asking tmux (nothing changed that it could tell).
    pub quiet_polls: u64,
    /// Resolutions of every pane.
    pub resolves: u64,
    /// Transcripts read from disk (log files, opencode sessions).
    pub reads: u64,
    /// Panes reported afresh (their evidence gathered and settled again).
    pub reports: u64,
}

/// How long a tool call is pending before a long-running caller that defers tool screens
/// looks at its screen ([`Scanner::defer_tool_screens`]).
pub const TOOL_LOOK: chrono::Duration = chrono::Duration::milliseconds(500);

/// A title-read agent's log writes list tmux for its title at most this often.
pub const TITLE_GAP: chrono::Duration = chrono::Duration::seconds(1);

/// A cached resolution is redone at least this often.
pub const RESOLVE_MAX_AGE: std::time::Duration = std::time::Duration::from_secs(60);

impl Scanner {
    /// The next scan resolves afresh (a session record or a new transcript appeared).
    pub fn invalidate(&mut self) {
        self.stale = true;
    }

    /// The next scan asks tmux for the panes (a nudge).
    pub fn list_panes(&mut self) {
        self.list = true;
    }

    /// The safety poll: the next scan asks tmux for the panes when a pane's foreground
    /// changed or an agent pane had output lately ([`Probes::news`]); otherwise it asks
    /// nothing.
    pub fn poll(&mut self) {
        self.poll = true;
    }

    /// Whether tmux's hooks tell of focus and pane changes. Without them every safety poll
    /// asks tmux for the panes, as a focus change leaves no trace in /proc or a terminal.
    pub fn set_hooked(&mut self, hooked: bool) {
        self.hooked = hooked;
    }

    /// A file in a watched folder changed: a file a known transcript is read from marks that
    /// transcript for the next scan; anything else (a session record, a new transcript) may
    /// change which transcript a pane reads, and the next scan resolves afresh. So does a
    /// change to the database of an opencode pane still waiting for its first session.
    pub fn note(&mut self, path: &Path) {
        let waiting_here = || {
            self.resolved.iter().any(|r| {
                r.transcript.is_none()
                    && r.agent.as_ref().is_some_and(|a| {
                        crate::agents::reads_log(a.kind) && a.root.as_deref() == path.parent()
                    })
            })
        };
        match self.sources.get(path) {
            Some(transcripts) if !waiting_here() => {
                self.touched.extend(transcripts.iter().cloned())
            }
            _ => self.stale = true,
        }
    }

    /// The next scan resolves every pane afresh: a folder an agent had not made when the panes
    /// were resolved has appeared, and what it already holds (a new database, a first log)
    /// never sent a file event.
    pub fn resolve_afresh(&mut self) {
        self.stale = true;
    }

    /// A pending tool call's screen is looked at only once the call has been pending for
    /// [`TOOL_LOOK`], at the scan after [`Scanner::next_look`] (the caller wakes for it): a
    /// busy agent's tool calls, answered within it, cost no capture each.
    pub fn defer_tool_screens(&mut self) {
        self.screens.tool_look = Some(TOOL_LOOK);
    }

    /// Each report carries what its session used, measured as its log grows
    /// (docs/design.md#usage): for a caller that shows it.
    pub fn meter_usage(&mut self) {
        self.reader.meter_usage();
    }

    /// [`Scanner::meter_usage`], a big log's first read done on a worker thread so that no
    /// scan waits for it; `done` is told its transcript when it finished (the caller notes
    /// it, [`Scanner::note`], and the pane's next report carries the totals).
    pub fn meter_usage_aside(&mut self, done: crate::transcript::meter::ReadDone) {
        self.reader.meter_usage_aside(done);
    }

    /// When the scanner has a look due (a pending tool call's screen, titles owed a
    /// listing): the caller scans by then.
    pub fn next_look(&self) -> Option<Time> {
        let titles = self
            .titles_owed
            .then(|| self.titles_listed.map(|t| t + TITLE_GAP))
            .flatten();
        self.looks.iter().map(|(_, due)| *due).chain(titles).min()
    }

    /// What was done so far.
    pub fn counters(&self) -> Counters {
        Counters {
            reads: self.reader.reads(),
            ..self.counters
        }
    }

    /// True when the last scan asked tmux for the panes (the watched folders may change).
    pub fn last_scan_listed(&self) -> bool {
        self.last_full
    }

    /// True when the last scan answered the safety poll: it asked tmux for the panes, or
    /// the probes found nothing that calls for it.
    pub fn last_scan_polled(&self) -> bool {
        self.last_polled
    }

    /// [`scan`], doing only what changed since the last scan calls for.
    pub fn scan(&mut self, tmux: &Tmux, now: Time) -> Result<Vec<PaneReport>, TmuxError> {
        self.counters.scans += 1;
        self.refresh(tmux, now)?;
        self.look_at_tools(tmux, now);
        Ok(self.reports.clone())
    }

    fn refresh(&mut self, tmux: &Tmux, now: Time) -> Result<(), TmuxError> {
        let young = self.at.is_some_and(|t| t.elapsed() < RESOLVE_MAX_AGE);
        // A pane waiting for its first log is resolved afresh while its terminal shows life:
        // an agent writes as it draws (its start, a prompt typed). Left quiet (a session
        // opened and never used), it costs nothing until it draws or the minute is up.
        let awaited = self
            .resolved
            .iter()
            .any(|r| awaits_transcript(r) && !super::probe::quiet(&r.pane.tty, now.timestamp()));
        // A log write of an agent read from its title too lists tmux for the fresh titles,
        // at most once per TITLE_GAP: a write sooner is read with the last titles, and the
        // listing is owed till the gap ends (the caller wakes for it, `next_look`).
        let written = self.touched_panes().any(|r| {
            r.agent
                .as_ref()
                .is_some_and(|a| crate::agents::reads_title(a.kind))
        });
        let gap_open = self.titles_listed.is_some_and(|t| now - t < TITLE_GAP);
        self.titles_owed |= written && gap_open;
        let titles = (written || self.titles_owed) && !gap_open;
        // The safety poll asks tmux only when the probes say it may have news, and always
        // when no hook tells of focus changes.
        let mut quiet_poll = false;
        if std::mem::take(&mut self.poll) && !self.list {
            if !self.hooked || self.probes.news(&self.resolved, now.timestamp()) {
                self.list = true;
            } else {
                quiet_poll = true;
            }
        }
        // A log write of an agent read from its title too needs the panes' fresh titles,
        // not every pane read again.
        let titles_only = titles && !(self.list || self.stale || !young || awaited);
        self.last_full = self.list || self.stale || !young || awaited || titles;
        self.last_polled = self.last_full || quiet_poll;
        if !self.last_full {
            if quiet_poll {
                self.counters.quiet_polls += 1;
                self.reclassify_aging(tmux, now);
            }
            self.rescan_touched(tmux, now);
            return Ok(());
        }
        let panes = tmux.list_panes()?;
        self.counters.lists += 1;
        self.titles_listed = Some(now);
        self.titles_owed = false;
        self.probes = Probes::take(&panes);
        let alive = self
            .resolved
            .iter()
            .filter_map(|r| r.agent.as_ref())
            .all(|a| Path::new(&format!("/proc/{}", a.pid)).exists());
        let same = panes.len() == self.panes.len()
            && panes.iter().zip(&self.panes).all(|(a, b)| a.same_pane(b));
        let mut retitled = HashSet::new();
        let resolves = self.stale || !young || !alive || !same || awaited;
        if resolves {
            self.resolved = resolve_with(&panes, now, &mut self.reader)
                .into_iter()
                .map(Arc::new)
                .collect();
            self.sources = sources_of(&self.resolved);
            self.at = Some(Instant::now());
            self.stale = false;
            self.counters.resolves += 1;
        } else {
            // Titles and activity change without deciding anything the resolution holds.
            for (r, p) in self.resolved.iter_mut().zip(&panes) {
                if r.pane != *p {
                    if r.pane.title != p.title {
                        retitled.insert(p.pane_id.clone());
                    }
                    Arc::make_mut(r).pane.clone_from(p);
                }
            }
        }
        self.panes = panes;
        self.list = false;
        if titles_only && !resolves {
            self.retitle(retitled, tmux, now);
            return Ok(());
        }
        self.touched.clear();
        let live: HashSet<&Path> = self
            .resolved
            .iter()
            .filter_map(|r| r.transcript.as_deref())
            .collect();
        self.reader.retain(&live);
        self.counters.reports += self.resolved.len() as u64;
        self.reports = reports_of(
            self.resolved.iter().cloned(),
            tmux,
            now,
            &mut self.reader,
            &mut self.screens,
            Depth::Window,
        );
        Ok(())
    }

    fn touched_panes(&self) -> impl Iterator<Item = &Arc<Resolved>> {
        self.resolved.iter().filter(|r| {
            r.transcript
                .as_ref()
                .is_some_and(|t| self.touched.contains(t))
        })
    }

    /// After a listing for titles alone: the panes of the transcripts written since the last
    /// scan and those whose title moved are read again; the other reports take their pane's
    /// fresh listing (focus, activity) as it is.
    fn retitle(&mut self, retitled: HashSet<String>, tmux: &Tmux, now: Time) {
        let fresh: HashMap<&str, &Arc<Resolved>> = self
            .resolved
            .iter()
            .map(|r| (r.pane.pane_id.as_str(), r))
            .collect();
        for report in &mut self.reports {
            if let Some(r) = fresh.get(report.resolved.pane.pane_id.as_str()) {
                report.resolved = Arc::clone(r);
            }
        }
        let again: Vec<Arc<Resolved>> = self
            .resolved
            .iter()
            .filter(|r| {
                retitled.contains(&r.pane.pane_id)
                    || r.transcript
                        .as_ref()
                        .is_some_and(|t| self.touched.contains(t))
            })
            .cloned()
            .collect();
        self.touched.clear();
        self.replace_reports(again, tmux, now);
    }

    /// Reads again the panes whose pending tool call is due its screen, then works out when
    /// the next is due.
    fn look_at_tools(&mut self, tmux: &Tmux, now: Time) {
        let Some(look) = self.screens.tool_look else {
            return;
        };
        let due: HashSet<&str> = self
            .looks
            .iter()
            .filter(|(_, at)| *at <= now)
            .map(|(id, _)| id.as_str())
            .collect();
        if !due.is_empty() {
            // Still the same pending call (no write since, or the log would have been read
            // again and the call found answered or younger): its screen now.
            let again: Vec<Arc<Resolved>> = self
                .reports
                .iter()
                .filter(|r| due.contains(r.resolved.pane.pane_id.as_str()))
                .filter(|r| super::evidence::pending_tool(&r.status))
                .map(|r| {
                    let mut r = Resolved::clone(&r.resolved);
                    r.pane.activity = None;
                    Arc::new(r)
                })
                .collect();
            self.replace_reports(again, tmux, now);
        }
        self.looks = self
            .reports
            .iter()
            .filter_map(|r| {
                let due = super::evidence::tool_look_due(&r.status, now, look)?;
                Some((r.resolved.pane.pane_id.clone(), due))
            })
            .collect();
    }

    /// At a quiet poll, classifies again the panes whose state can change with time alone:
    /// an open turn goes quiet (stalled, idle), a retry's wait or a rate limit's reset runs
    /// out. Nothing wrote to their logs or terminals lately (the probes said so), so their
    /// kept screens still hold; the other reports stay as they are.
    fn reclassify_aging(&mut self, tmux: &Tmux, now: Time) {
        let aging: Vec<Arc<Resolved>> = self
            .reports
            .iter()
            .filter(|r| {
                let s = &r.status;
                s.turn_open || s.retry.is_some() || s.resets_at.is_some()
            })
            .map(|r| Arc::clone(&r.resolved))
            .collect();
        self.replace_reports(aging, tmux, now);
    }

    /// Reads the panes of the transcripts written since the last scan again; the other
    /// reports stay as they are.
    fn rescan_touched(&mut self, tmux: &Tmux, now: Time) {
        if self.touched.is_empty() {
            return;
        }
        // tmux was not asked: the panes' last output is unknown, so no kept screen is
        // trusted for them.
        let touched: Vec<Arc<Resolved>> = self
            .touched_panes()
            .map(|r| {
                let mut r = Resolved::clone(r);
                r.pane.activity = None;
                Arc::new(r)
            })
            .collect();
        // Sessions sharing a database are all touched by a write to it; the reader reads
        // only those whose rows moved, and the others keep their reports.
        let mark = |reader: &Reader, r: &Resolved| {
            r.transcript.as_deref().and_then(|t| reader.read_mark(t))
        };
        let before: Vec<Option<u64>> = touched.iter().map(|r| mark(&self.reader, r)).collect();
        self.reader.prepare(
            touched.iter().filter_map(|r| r.transcript.as_deref()),
            Depth::Newest,
        );
        let changed: Vec<Arc<Resolved>> = touched
            .into_iter()
            .zip(before)
            .filter(|(r, before)| before.is_none() || mark(&self.reader, r) != *before)
            .map(|(r, _)| r)
            .collect();
        self.replace_reports(changed, tmux, now);
        self.touched.clear();
    }

    /// Reports `panes` afresh in place of their last reports.
    fn replace_reports(&mut self, panes: Vec<Arc<Resolved>>, tmux: &Tmux, now: Time) {
        if panes.is_empty() {
            return;
        }
        self.counters.reports += panes.len() as u64;
        let fresh = reports_of(
            panes,
            tmux,
            now,
            &mut self.reader,
            &mut self.screens,
            Depth::Newest,
        );
        for new in fresh {
            let id = &new.resolved.pane.pane_id;
            if let Some(old) = self
                .reports
                .iter_mut()
                .find(|r| &r.resolved.pane.pane_id == id)
            {
                *old = new;
            }
        }
    }
}

/// Each file the transcripts of `resolved` are read from, with those transcripts.
fn sources_of(resolved: &[Arc<Resolved>]) -> HashMap<PathBuf, Vec<PathBuf>> {
    let mut out: HashMap<PathBuf, Vec<PathBuf>> = HashMap::new();
    for t in resolved.iter().filter_map(|r| r.transcript.as_deref()) {
        for source in crate::agents::sources(t) {
            out.entry(source).or_default().push(t.to_path_buf());
        }
    }
    out
}

/// A pane resolved before its agent's transcript existed, where no file event may tell the
/// cache that it appeared (each agent says why in `Agent::awaits_transcript`: a log written
/// at the first prompt in a folder nobody watched, or under a project folder registered only
/// at start). Reusing that resolution missed the first turn until [`RESOLVE_MAX_AGE`], a
/// minute; such a pane is resolved afresh at every scan until its transcript appears, while
/// its terminal shows life (the scan checks that). Agents whose sessions live where the
/// watcher already watches, or whose logs agentpane does not read, do not await one.
fn awaits_transcript(r: &Resolved) -> bool {
    r.transcript.is_none()
        && r.agent
            .as_ref()
            .is_some_and(|a| crate::agents::of(a.kind).awaits_transcript())
}

#[cfg(test)]
mod tests {
    use super::super::testkit::pane_line;
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

    #[test]
    fn a_pane_without_its_transcript_yet_is_resolved_again() {
        // The watcher's view of Claude Code 2.1.197 whose record said `waiting` (permission)
        // just before its first transcript was written: reusing that resolution kept the pane
        // `idle` in the watcher, unalerted, for up to a minute.
        let mut r = Resolved::clone(
            &crate::scan::testkit::report(1, 1, crate::state::State::Idle, 0).resolved,
        );
        assert!(!awaits_transcript(&r), "a transcript: reuse");
        r.transcript = None;
        assert!(awaits_transcript(&r), "no transcript yet: resolve again");
        r.agent.as_mut().unwrap().kind = crate::events::AgentKind::Codex;
        assert!(
            awaits_transcript(&r),
            "Codex writes its first rollout at the first prompt"
        );
        r.agent.as_mut().unwrap().kind = crate::events::AgentKind::Gemini;
        assert!(
            awaits_transcript(&r),
            "Gemini CLI writes its first log a moment after it starts"
        );
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
        let mut cache = Scanner::default();
        let resolves = |c: &Scanner| c.counters().resolves;
        cache.scan(&tmux, now).unwrap();
        cache.list_panes();
        cache.scan(&tmux, now).unwrap();
        assert_eq!(resolves(&cache), 1, "same panes: reused");
        cache.invalidate();
        cache.scan(&tmux, now).unwrap();
        assert_eq!(resolves(&cache), 2, "invalidated: resolved again");
        *out.lock().unwrap() = line("claude");
        cache.scan(&tmux, now).unwrap();
        assert_eq!(resolves(&cache), 2, "tmux not asked: nothing known changed");
        cache.list_panes();
        cache.scan(&tmux, now).unwrap();
        assert_eq!(
            resolves(&cache),
            3,
            "the pane's command changed: resolved again"
        );
        cache.list_panes();
        cache.scan(&tmux, now).unwrap();
        assert_eq!(resolves(&cache), 3);
        assert_eq!(cache.counters().lists, 5);
    }

    #[test]
    fn a_quiet_poll_classifies_open_turns_again_without_asking_tmux() {
        // A Codex turn in progress (its prompt is the log's last line), seen a minute after
        // its last write, then again ten minutes after it: the open turn went quiet.
        let log = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(
            "fixtures/real/codex/derived-prefix/kvsankar-session-01.prefix-L1-7.mid-turn.jsonl",
        );
        let last: Time = "2026-06-05T04:58:23.506Z".parse().unwrap();
        let mut r = Resolved::clone(
            &crate::scan::testkit::report(1, 1, crate::state::State::Idle, 0).resolved,
        );
        r.agent.as_mut().unwrap().kind = crate::events::AgentKind::Codex;
        r.transcript = Some(log);
        let calls = Arc::new(Mutex::new(String::new()));
        let tmux = Tmux::with_runner(Box::new(Panes(Arc::clone(&calls))));
        let start = |hooked| {
            let mut scanner = Scanner {
                hooked,
                at: Some(Instant::now()),
                ..Scanner::default()
            };
            scanner.resolved = vec![Arc::new(r.clone())];
            scanner.probes = Probes::take(&[r.pane.clone()]);
            scanner.reports = reports_of(
                scanner.resolved.clone(),
                &tmux,
                last + chrono::Duration::minutes(1),
                &mut scanner.reader,
                &mut scanner.screens,
                Depth::Window,
            );
            assert_eq!(
                scanner.reports[0].status.state,
                crate::state::State::Working
            );
            scanner
        };
        let later = last + chrono::Duration::minutes(10);
        let mut cache = start(true);
        let quiet = |c: &mut Scanner| c.scan(&tmux, later).unwrap()[0].status.state;
        assert_eq!(
            quiet(&mut cache),
            crate::state::State::Working,
            "no poll: the last report stands"
        );
        cache.poll();
        assert_ne!(quiet(&mut cache), crate::state::State::Working);
        let c = cache.counters();
        assert_eq!((c.lists, c.quiet_polls), (0, 1), "{c:?}");
        assert!(cache.last_scan_polled() && !cache.last_scan_listed());
        // Without the focus hooks the poll asks tmux.
        let mut unhooked = start(false);
        unhooked.poll();
        unhooked.scan(&tmux, later).unwrap();
        assert_eq!(unhooked.counters().lists, 1);
    }

    #[test]
    fn a_title_read_agents_log_write_lists_tmux_and_reads_that_pane_alone() {
        // Two Gemini CLI panes, one writing its chat log: the listing brings the fresh
        // titles; the writer's pane is read again, the other only takes its fresh listing.
        let dir = tempfile::tempdir().unwrap();
        let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/real-clients/gemini-0.61.0/session.jsonl");
        let logs = [dir.path().join("one.jsonl"), dir.path().join("two.jsonl")];
        for l in &logs {
            std::fs::copy(&fixture, l).unwrap();
        }
        let log = &logs[0];
        let one = line("gemini");
        let two = one.replacen("%1", "%2", 1);
        let out = Arc::new(Mutex::new(format!("{one}{two}")));
        let tmux = Tmux::with_runner(Box::new(Panes(Arc::clone(&out))));
        let now = chrono::Utc::now();
        let mut cache = Scanner::default();
        cache.scan(&tmux, now).unwrap();
        cache.resolved = cache
            .panes
            .iter()
            .zip(&logs)
            .map(|(p, log)| {
                let mut r = Resolved::clone(
                    &crate::scan::testkit::report(1, 1, crate::state::State::Idle, 0).resolved,
                );
                r.pane = p.clone();
                let agent = r.agent.as_mut().unwrap();
                agent.kind = crate::events::AgentKind::Gemini;
                agent.pid = std::process::id();
                r.transcript = Some(log.clone());
                Arc::new(r)
            })
            .collect();
        cache.sources = sources_of(&cache.resolved);
        cache.reports = cache
            .resolved
            .iter()
            .map(|r| PaneReport {
                resolved: Arc::clone(r),
                status: crate::state::Status::idle(),
                source: crate::state::Source::None,
                usage: None,
            })
            .collect();
        let sentinel = crate::state::State::Attention;
        cache.reports[1].status.state = sentinel;
        *out.lock().unwrap() = format!(
            "{}{}",
            one.replace("title", "✦  Working… (tmp)"),
            two.replace("title", "moved")
        );
        let later = now + TITLE_GAP;
        cache.note(log);
        let before = cache.counters();
        let reports = cache.scan(&tmux, later).unwrap();
        let after = cache.counters();
        assert_eq!(after.lists, before.lists + 1, "titles come from tmux");
        assert_eq!(after.resolves, before.resolves, "nothing to resolve again");
        assert_ne!(reports[0].source, crate::state::Source::None, "read again");
        assert_eq!(reports[0].resolved.pane.title, "✦  Working… (tmp)");
        assert_ne!(
            reports[1].status.state, sentinel,
            "its title moved: read again"
        );
        // A write with no title moving reads the writer's pane alone.
        // A write within the gap reads the log with the last titles; the listing is owed
        // till the gap ends.
        cache.note(log);
        let soon = later + chrono::Duration::milliseconds(300);
        cache.scan(&tmux, soon).unwrap();
        assert_eq!(
            cache.counters().lists,
            after.lists,
            "within the gap: no listing"
        );
        assert_eq!(cache.next_look(), Some(later + TITLE_GAP));
        // The owed listing, with no title moving, reads no pane again.
        cache.reports[1].status.state = sentinel;
        let reports = cache.scan(&tmux, later + TITLE_GAP).unwrap();
        assert_eq!(cache.counters().lists, after.lists + 1, "the owed listing");
        assert_eq!(cache.next_look(), None);
        assert_eq!(reports[1].status.state, sentinel, "not read again");
        assert_eq!(reports[1].resolved.pane.title, "moved", "its fresh listing");
    }

    /// A tmux that records every command it is asked to run and answers nothing.
    struct Recording(Arc<Mutex<Vec<String>>>);

    impl crate::tmux::Runner for Recording {
        fn run(&self, args: &[String], _stdin: Option<&[u8]>) -> Result<Vec<u8>, TmuxError> {
            self.0.lock().unwrap().push(args.join(" "));
            Ok(Vec::new())
        }
    }

    #[test]
    fn a_pending_tool_calls_screen_is_looked_at_once_it_has_waited() {
        // Claude Code's turn on a tool call (the log's last line is its tool use): a caller
        // that defers tool screens captures none at once, then one when the look is due.
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("s.jsonl");
        let fixture = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("fixtures/real/claude/marot-spotter/short.jsonl"),
        )
        .unwrap();
        let prefix: Vec<&str> = fixture.lines().take(10).collect();
        std::fs::write(&log, prefix.join("\n") + "\n").unwrap();
        let written: Time = "2026-02-10T21:12:01.669Z".parse().unwrap();
        let mut r = Resolved::clone(
            &crate::scan::testkit::report(1, 1, crate::state::State::Idle, 0).resolved,
        );
        r.transcript = Some(log);
        let calls = Arc::new(Mutex::new(Vec::new()));
        let tmux = Tmux::with_runner(Box::new(Recording(Arc::clone(&calls))));
        let captures = || {
            calls
                .lock()
                .unwrap()
                .iter()
                .filter(|c| c.starts_with("capture-pane"))
                .count()
        };
        let mut cache = Scanner {
            at: Some(Instant::now()),
            ..Scanner::default()
        };
        cache.defer_tool_screens();
        cache.resolved = vec![Arc::new(r)];
        let soon = written + chrono::Duration::milliseconds(100);
        cache.reports = reports_of(
            cache.resolved.clone(),
            &tmux,
            soon,
            &mut cache.reader,
            &mut cache.screens,
            Depth::Window,
        );
        assert!(cache.reports[0].status.turn_open, "{:?}", cache.reports[0]);
        assert_eq!(captures(), 0, "a call just made: no screen yet");
        cache.scan(&tmux, soon).unwrap();
        let due = cache.next_look().expect("a look is due");
        assert_eq!(due, written + TOOL_LOOK);
        assert_eq!(captures(), 0);
        cache.scan(&tmux, due).unwrap();
        assert_eq!(captures(), 1, "the call waited: its screen");
        assert_eq!(cache.next_look(), None);
        cache
            .scan(&tmux, due + chrono::Duration::seconds(1))
            .unwrap();
        assert_eq!(captures(), 1, "looked at once");
        // A caller that does not defer looks at once.
        let mut at_once = Scanner {
            resolved: cache.resolved.clone(),
            ..Scanner::default()
        };
        reports_of(
            at_once.resolved.clone(),
            &tmux,
            soon,
            &mut at_once.reader,
            &mut at_once.screens,
            Depth::Window,
        );
        assert_eq!(captures(), 2);
    }

    #[test]
    fn a_file_that_is_no_known_transcript_resolves_afresh() {
        let out = Arc::new(Mutex::new(line("bash")));
        let tmux = Tmux::with_runner(Box::new(Panes(Arc::clone(&out))));
        let now = chrono::Utc::now();
        let mut cache = Scanner::default();
        cache.scan(&tmux, now).unwrap();
        cache.note(Path::new("/somewhere/new.jsonl"));
        cache.scan(&tmux, now).unwrap();
        let c = cache.counters();
        assert_eq!((c.lists, c.resolves), (2, 2), "{c:?}");
        cache.scan(&tmux, now).unwrap();
        assert_eq!(cache.counters().lists, 2, "nothing new: tmux not asked");
    }
}
