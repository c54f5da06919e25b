//! The watcher (docs/design.md#watcher): one per tmux server, woken by file events and a slow
//! safety poll. Each wake-up scans the server, folds the scan through the observation and alert
//! memories, runs the alert engine, publishes tmux options that changed, and writes the snapshot.

pub mod lock;
pub mod log;
pub mod mail;
pub mod publish;
pub mod relays;
pub mod sinks;
pub mod snapshot;
pub mod wake;

use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use crate::alert::{self, Action, Engine};
use crate::events::Time;
use crate::memory::{AlertMemory, Observed};
use crate::notify::dispatch::Dispatcher;
use crate::paths;
use crate::remote::link::{HostView, Links};
use crate::remote::ssh::Ssh;
use crate::scan::{PaneReport, Scanner};
use crate::segment::{self, Icons};
use crate::state::Windows;
use crate::tmux::{Tmux, TmuxError};
use publish::Options;
use sinks::{SinkConfig, Sinks};
use snapshot::{Change, Snapshot};
use wake::{FsWatch, RemoteWakes, Wake};

/// Coalesce a burst of file events for this long before scanning.
const DEBOUNCE: Duration = Duration::from_millis(25);
/// Never scan more often than this, however busy the agents are: a streaming agent writes its
/// log many times a second, and a status line that changes twice a second shows every state
/// a person can act on (the first write after a quiet spell is still read at once).
const MIN_SCAN_GAP: Duration = Duration::from_millis(500);
/// Write the observation memory at most this often while it changes.
const OBSERVED_SAVE_GAP: Duration = Duration::from_secs(10);

/// Everything the watcher is told.
#[derive(Debug, Clone)]
pub struct WatchOptions {
    pub poll: Duration,
    pub exit_after: Option<Duration>,
    pub format: String,
    pub icons: Icons,
    pub alert: alert::Config,
    pub sinks: SinkConfig,
    pub windows: Windows,
    /// When a plan window shows and alerts, and a pane's context alerts.
    pub thresholds: crate::segment::Thresholds,
    /// Channel mail unread this long is pasted into a free agent's pane; `None`: never.
    pub channel_grace: Option<Duration>,
    /// Remote hosts to keep a link to (docs/design.md#remote-hosts).
    pub hosts: Vec<crate::remote::Host>,
}

/// Why the loop ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    Signal(i32),
    ServerGone,
    Deadline,
}

/// Runs the watcher until a signal, the server's end or `exit_after`. Returns the exit code:
/// 0 also when another watcher already serves this server.
pub fn run(opts: WatchOptions) -> Result<i32> {
    let tmux = Tmux::new(opts.sinks.socket.clone());
    let socket_path = tmux.socket_path().context("cannot reach the tmux server")?;
    let dir = paths::trusted_state_dir()?;
    paths::ensure_private_dir(&dir)?;
    // What belongs to this server (pane ids repeat across servers) lives in its own folder.
    let server = paths::server_dir(&dir, &socket_path);
    paths::ensure_private_dir(&server)?;
    log::init(server.join(log::FILE));
    let older = paths::lock_holder(&lock::legacy_lock_path(&dir, &socket_path));
    let Some(lock) = lock::try_lock(&dir, &socket_path)?.filter(|_| older.is_none()) else {
        eprintln!("agentpane: a watcher is already running for the tmux server at {socket_path}");
        return Ok(crate::exit::OK);
    };
    let (tx, rx) = mpsc::channel();
    let signalled = wake::forward_signals(tx.clone())?;
    wake::forward_report_requests(tx.clone())?;
    let remote_wakes = RemoteWakes::new(tx.clone());
    let links = (!opts.hosts.is_empty()).then(|| {
        let wakes = remote_wakes.clone();
        let wake = move || wakes.ring();
        Links::start(&opts.hosts, Ssh::from_env(), std::sync::Arc::new(wake))
    });
    let across = links
        .as_ref()
        .map(|_| relays::Across::start(Tmux::new(opts.sinks.socket.clone()), socket_path.clone()));
    let fs = FsWatch::start(tx, dir.clone(), PathBuf::from(&socket_path))?;
    log::line(&format!(
        "watching tmux server {socket_path} (lock {})",
        lock.path.display()
    ));

    // The page for a phone, when `@agentpane-web` asks for it: it follows the snapshot this
    // loop writes, on threads of its own, and lives as long as the watcher.
    let _web = crate::web::start_for_watcher(
        &tmux,
        &dir,
        &socket_path,
        std::sync::Arc::new(|l: &str| log::line(l)),
    );
    let mut w = Watcher {
        sinks: Sinks::start(opts.sinks.clone()),
        notify: Dispatcher::start(opts.sinks.socket.clone(), log::line),
        engine: Engine::new(opts.alert),
        usage_alerts: Default::default(),
        plan: Default::default(),
        alerts: {
            let mut m = AlertMemory::load(&server);
            m.prune(chrono::Utc::now());
            m
        },
        observed: Observed::load(&server),
        observed_dirty: false,
        observed_saved: Instant::now(),
        published: Options::new(),
        snapshot: None,
        snapshot_due: None,
        links,
        hosts: Vec::new(),
        last_reports: Vec::new(),
        mail: mail::Mail::default(),
        relays: relays::Relays::default(),
        journal_damage_told: 0,
        across,
        scanner: {
            let mut s = Scanner::default();
            s.defer_tool_screens();
            s.meter_usage();
            s
        },
        wakes: Wakes::default(),
        signalled,
        remote_wakes,
        report_due: false,
        watched_for: None,
        folders_due: false,
        folders_missing: Vec::new(),
        hooks_checked: None,
        socket_path: PathBuf::from(&socket_path),
        tmux,
        fs,
        dir,
        server,
        opts,
    };
    let exit = w.main_loop(&rx);
    w.shutdown();
    log::line(&format!("stopped: {exit:?}"));
    drop(lock);
    Ok(crate::exit::OK)
}

struct Watcher {
    opts: WatchOptions,
    tmux: Tmux,
    /// The state folder (shared by every server: queue, relays, channels, nudges).
    dir: PathBuf,
    /// This server's own folder in it ([`paths::server_dir`]).
    server: PathBuf,
    socket_path: PathBuf,
    fs: FsWatch,
    sinks: Sinks,
    /// The notification channels (docs/design.md#notifications).
    notify: Dispatcher,
    engine: Engine,
    /// Plan-window and context alerts, once each.
    usage_alerts: crate::alert::UsageAlerts,
    /// The plan windows `agentpane statusline` keeps, read again when they change.
    plan: crate::limits::Watched,
    alerts: AlertMemory,
    observed: Observed,
    observed_dirty: bool,
    observed_saved: Instant,
    published: Options,
    /// The snapshot last written, and when.
    snapshot: Option<(Snapshot, Instant)>,
    /// A change to the panes' detail not written yet: written by then.
    snapshot_due: Option<Instant>,
    /// The links to remote hosts, when hosts are configured.
    links: Option<Links>,
    /// The hosts' views as of the last scan.
    hosts: Vec<HostView>,
    /// The last scan's reports (what a remote's wake publishes with).
    last_reports: Vec<PaneReport>,
    mail: mail::Mail,
    relays: relays::Relays,
    /// The last damaged journal line logged (lines are only ever added to the journal).
    journal_damage_told: usize,
    /// The relays with a side on another host (their own thread), when hosts are configured.
    across: Option<relays::Across>,
    scanner: Scanner,
    wakes: Wakes,
    /// The signal that came, seen before any wake queued ahead of it.
    signalled: wake::Signalled,
    /// The hosts' news, one wake at a time.
    remote_wakes: std::sync::Arc<RemoteWakes>,
    /// SIGUSR1 came while a wake was being settled: log the counters after its scan.
    report_due: bool,
    /// The resolution the watched folders were last worked out for.
    watched_for: Option<u64>,
    /// Something changed in the state folder (a new channel): work the folders out again.
    folders_due: bool,
    /// The folders agents will write to that did not exist when the folders were worked
    /// out: looked for at each safety poll that lists tmux.
    folders_missing: Vec<PathBuf>,
    /// When tmux was last asked whether the plugin's hooks nudge this watcher.
    hooks_checked: Option<Instant>,
}

/// The CPU this process and the children it has reaped (tmux clients) have used, from
/// getrusage(2): to the microsecond, where `/proc/PID/stat` counts 10 ms clock ticks, too
/// coarse to tell a few safety polls apart.
fn cpu_used() -> Duration {
    let used = |who| {
        // SAFETY: an all-zero rusage is a valid value of the plain C struct.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: getrusage only writes the struct it is given.
        if unsafe { libc::getrusage(who, &mut ru) } != 0 {
            return Duration::ZERO;
        }
        let time = |t: libc::timeval| {
            let us = u64::try_from(t.tv_sec).unwrap_or(0) * 1_000_000
                + u64::try_from(t.tv_usec).unwrap_or(0);
            Duration::from_micros(us)
        };
        time(ru.ru_utime) + time(ru.ru_stime)
    };
    used(libc::RUSAGE_SELF) + used(libc::RUSAGE_CHILDREN)
}

/// Why the loop woke up, counted (logged on SIGUSR1 and at the end).
#[derive(Debug, Default, Clone, Copy)]
struct Wakes {
    /// File events that were news.
    files: u64,
    /// The safety poll or a pending alert's time.
    timer: u64,
    /// A remote host's view changed.
    remote: u64,
}

impl Watcher {
    fn main_loop(&mut self, rx: &Receiver<Wake>) -> Exit {
        let started = Instant::now();
        // The safety poll keeps its own time: file wakes come and go, the poll still asks
        // tmux every `poll` (a busy agent writing all the time must not starve it).
        let mut next_poll = Instant::now() + self.opts.poll;
        loop {
            if let Some(sig) = self.signalled.get() {
                return Exit::Signal(sig);
            }
            match self.scan_once() {
                Ok(()) => {}
                Err(TmuxError::NoServer(_) | TmuxError::Missing) => return Exit::ServerGone,
                // A server still reading its configuration has no session yet: no panes, and
                // nothing to say (the plugin starts the watcher from there).
                Err(TmuxError::Command(e)) if e == "no current target" => {}
                Err(e) => log::line(&format!("scan failed: {e}")),
            }
            if std::mem::take(&mut self.report_due) {
                self.report();
            }
            let last_scan = Instant::now();
            if self.scanner.last_scan_polled() {
                next_poll = last_scan + self.opts.poll;
            }
            // Sleep until news, the safety poll, a pending alert or the deadline.
            let mut timeout = next_poll.saturating_duration_since(last_scan);
            if let Some(due) = self.snapshot_due {
                timeout = timeout.min(due.saturating_duration_since(last_scan));
            }
            // A pending alert, or a pending tool call's screen due a look.
            for due in [self.engine.next_due(), self.scanner.next_look()]
                .into_iter()
                .flatten()
            {
                let until = (due - chrono::Utc::now())
                    .to_std()
                    .unwrap_or(Duration::ZERO);
                timeout = timeout.min(until);
            }
            if let Some(limit) = self.opts.exit_after {
                match limit.checked_sub(started.elapsed()) {
                    Some(left) => timeout = timeout.min(left),
                    None => return Exit::Deadline,
                }
            }
            let deadline = Instant::now() + timeout;
            loop {
                let left = deadline.saturating_duration_since(Instant::now());
                match wake::recv(rx, left, &self.signalled) {
                    Ok(Wake::Signal(sig)) => return Exit::Signal(sig),
                    Ok(Wake::Report) => {
                        self.report();
                        continue;
                    }
                    // A remote's news changes the segment and the snapshot only: published
                    // at once, with the last local scan, no scan of its own.
                    Ok(Wake::Remote) => {
                        self.remote_wakes.taken();
                        self.wakes.remote += 1;
                        let now = chrono::Utc::now();
                        let plan = self.plan_windows(&self.last_reports.clone(), now);
                        if let Err(e) = self.publish(&self.last_reports.clone(), &plan, now) {
                            log::line(&format!("cannot publish: {e}"));
                        }
                        self.write_snapshot(&self.last_reports.clone(), now);
                        // Relays across hosts step on the host's news too.
                        if let Some(across) = &self.across {
                            across.send(&self.last_reports, &self.hosts);
                        }
                        continue;
                    }
                    Ok(Wake::Files(paths)) => {
                        if self.server_gone(&paths) {
                            return Exit::ServerGone;
                        }
                        self.wakes.files += 1;
                        self.note_files(&paths);
                        if let Some(exit) = self.settle(rx, last_scan) {
                            return exit;
                        }
                    }
                    Err(RecvTimeoutError::Timeout) => {
                        if !server_alive(&self.socket_path) {
                            return Exit::ServerGone;
                        }
                        self.wakes.timer += 1;
                    }
                    Err(RecvTimeoutError::Disconnected) => return Exit::Signal(0),
                }
                break;
            }
            if Instant::now() >= next_poll {
                self.scanner.poll();
            }
        }
    }

    fn note_files(&mut self, paths: &[PathBuf]) {
        wake::note(&mut self.scanner, paths, &self.dir, &self.socket_path);
        self.folders_due |= paths.iter().any(|p| p.starts_with(&self.dir));
    }

    /// Logs what the loop has done: its wakes and the scans' work.
    fn report(&self) {
        let c = self.scanner.counters();
        log::line(&format!(
            "counters: wakes {} (files {}, timer {}, remote {}), scans {}, tmux list-panes {}, \
             quiet polls {}, resolutions {}, transcript reads {}, pane reports {}, cpu {} us",
            self.wakes.files + self.wakes.timer + self.wakes.remote,
            self.wakes.files,
            self.wakes.timer,
            self.wakes.remote,
            c.scans,
            c.lists,
            c.quiet_polls,
            c.resolves,
            c.reads,
            c.reports,
            cpu_used().as_micros()
        ));
    }

    /// Drains a burst of file events (debounce, and at most one scan per MIN_SCAN_GAP).
    fn settle(&mut self, rx: &Receiver<Wake>, last_scan: Instant) -> Option<Exit> {
        let gap_left = MIN_SCAN_GAP.saturating_sub(last_scan.elapsed());
        let until = Instant::now() + DEBOUNCE.max(gap_left);
        loop {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return None;
            }
            match wake::recv(rx, left, &self.signalled) {
                Ok(Wake::Signal(sig)) => return Some(Exit::Signal(sig)),
                // Counted after the scan this wake is for, never half way through it.
                Ok(Wake::Report) => self.report_due = true,
                // The scan this wake is for publishes the remote's news too.
                Ok(Wake::Remote) => self.remote_wakes.taken(),
                Ok(Wake::Files(paths)) if self.server_gone(&paths) => {
                    return Some(Exit::ServerGone)
                }
                Ok(Wake::Files(paths)) => self.note_files(&paths),
                Err(RecvTimeoutError::Timeout) => return None,
                Err(RecvTimeoutError::Disconnected) => return Some(Exit::Signal(0)),
            }
        }
    }

    fn server_gone(&self, paths: &[PathBuf]) -> bool {
        paths.iter().any(|p| p == &self.socket_path) && !server_alive(&self.socket_path)
    }

    fn scan_once(&mut self) -> Result<(), TmuxError> {
        if !self
            .hooks_checked
            .is_some_and(|t| t.elapsed() < crate::scan::RESOLVE_MAX_AGE)
        {
            self.scanner.set_hooked(nudge_hooks_set(&self.tmux));
            self.hooks_checked = Some(Instant::now());
        }
        let now = chrono::Utc::now();
        let mut reports = self.scanner.scan(&self.tmux, now)?;
        let plan = self.plan_windows(&reports, now);
        self.observed.apply(&mut reports, now, &self.opts.windows);
        self.alerts.apply_seen(&mut reports);
        self.observed_dirty |= self.observed.observe(&reports, now);

        let before = self.alerts.clone();
        let actions = self.engine.step(&reports, now, &mut self.alerts);
        self.alerts.apply_seen(&mut reports);
        for action in actions {
            match action {
                Action::Deliver(a) => {
                    let folder = reports
                        .iter()
                        .find(|r| r.resolved.pane.pane_id == a.pane)
                        .map_or("", |r| r.resolved.pane.cwd.as_str());
                    self.notify.send(&a, folder);
                    self.sinks.send(a);
                }
                Action::Retract(a) => log::line(&format!("retracted {}", a.key)),
                Action::Acknowledge(a) => log::line(&format!("acknowledged {}", a.key)),
            }
        }

        let measured: Vec<_> = reports
            .iter()
            .filter_map(|r| r.usage.as_ref().map(|m| (r, &m.usage)))
            .collect();
        for a in self
            .usage_alerts
            .step(&plan, &measured, self.opts.thresholds, now)
        {
            self.sinks.send(a);
        }

        self.publish(&reports, &plan, now)?;
        self.remember(now, &before);
        self.write_snapshot(&reports, now);
        // What to watch follows the resolutions and the state folder's channels: worked
        // out again when one of them changed, or at a safety poll while a folder an agent
        // will write to does not exist yet; not at every wake.
        let resolutions = self.scanner.counters().resolves;
        let appeared =
            self.scanner.last_scan_listed() && self.folders_missing.iter().any(|d| d.is_dir());
        if appeared {
            // Its first files were written before it was watched: the next scan (the next
            // safety poll at the latest) resolves the panes with them.
            self.scanner.resolve_afresh();
        }
        if self.folders_due || appeared || self.watched_for != Some(resolutions) {
            let (folders, missing) = wake::wanted_folders(&reports, &self.dir, &self.socket_path);
            let added = self.fs.update(folders);
            for file in wake::unwatched_writes(&reports, &self.last_reports, &added) {
                self.scanner.note(&file);
            }
            self.watched_for = Some(resolutions);
            self.folders_due = false;
            self.folders_missing = missing;
        }
        self.after_scan(&reports);
        self.last_reports = reports;
        Ok(())
    }

    /// After every scan, with the fresh reports: channel mail (unread counts, mail nobody read
    /// queued for a free agent, escalations told to the human), registered relays, then
    /// queued routes whose
    /// destination became free are delivered (docs/design.md#routing; at most one per destination
    /// per scan, never twice).
    fn after_scan(&mut self, reports: &[PaneReport]) {
        let now = chrono::Utc::now();
        let server = self.socket_path.to_string_lossy().into_owned();
        let (changes, lines) = self
            .mail
            .step(reports, &server, now, self.opts.channel_grace);
        for line in lines {
            log::line(&line);
        }
        if let Err(e) = self.tmux.set_options(&changes) {
            log::line(&format!("unread counts not published: {e}"));
        }
        for text in self.mail.escalations(&mut self.alerts, now) {
            log::line(&text);
            if let Err(e) = self.tmux.display_message(None, &text) {
                log::line(&format!("escalation not shown: {e}"));
            }
        }
        for line in self
            .relays
            .step(&self.tmux, reports, &server, &[], relays::Which::Local)
        {
            log::line(&line);
        }
        if let Some(across) = &self.across {
            across.send(reports, &self.hosts);
        }
        let pass = crate::route::deliver_queued(&self.tmux, reports);
        for damaged in pass.damaged {
            if damaged.line > self.journal_damage_told {
                self.journal_damage_told = damaged.line;
                log::line(&damaged.to_string());
            }
        }
        for d in pass.delivered {
            log::line(&format!(
                "queued route {} {} → {}: {:?}{}",
                d.id,
                d.src,
                d.dst,
                d.outcome,
                d.detail
                    .as_deref()
                    .map(|x| format!(" ({x})"))
                    .unwrap_or_default()
            ));
            // A held message leaves the queue, so this is said once per message.
            if let Some(text) = d.held_notice() {
                if let Err(e) = self.tmux.display_message(None, &text) {
                    log::line(&format!("held route not shown: {e}"));
                }
            }
        }
    }

    /// Every plan window once, tightest first: those Claude Code's status line gave, and those
    /// the sessions' logs reveal (Codex's).
    fn plan_windows(&mut self, reports: &[PaneReport], now: Time) -> Vec<crate::usage::Limit> {
        let kept = self.plan.current(&self.dir, now);
        let logged = reports
            .iter()
            .filter_map(|r| r.usage.as_ref())
            .flat_map(|m| m.limits.iter());
        crate::usage::merge_limits(kept.iter().chain(logged))
    }

    fn publish(
        &mut self,
        reports: &[PaneReport],
        plan: &[crate::usage::Limit],
        now: Time,
    ) -> Result<(), TmuxError> {
        if let Some(links) = &self.links {
            let views = links.views();
            for v in &views {
                let was = self.hosts.iter().find(|o| o.host == v.host);
                if was.map(|o| std::mem::discriminant(&o.link))
                    != Some(std::mem::discriminant(&v.link))
                {
                    log::line(&format!("host {}: {}", v.host, link_word(&v.link)));
                }
            }
            self.hosts = views;
        }
        let limit = crate::segment::limit_token(
            plan,
            self.opts.thresholds.limit,
            &self.opts.icons.reset,
            now,
        );
        let wanted = publish::desired_with_hosts(
            reports,
            &self.hosts,
            (&limit, self.opts.thresholds.context),
            self.engine.shown(),
            &self.opts.format,
            &self.opts.icons,
            now,
        );
        let changes = publish::diff(&self.published, &wanted);
        match self.tmux.set_options(&changes) {
            Ok(()) => self.published = wanted,
            Err(e @ (TmuxError::NoServer(_) | TmuxError::Missing)) => return Err(e),
            // Keep the old view: the next scan retries what did not land.
            Err(e) => log::line(&format!("cannot set tmux options: {e}")),
        }
        Ok(())
    }

    fn remember(&mut self, now: Time, before: &AlertMemory) {
        if &self.alerts != before {
            self.alerts.prune(now);
            if let Err(e) = self.alerts.save(&self.server) {
                log::line(&format!("cannot save alert memory: {e:#}"));
            }
        }
        if self.observed_dirty && self.observed_saved.elapsed() >= OBSERVED_SAVE_GAP {
            self.save_observed(now);
        }
    }

    fn save_observed(&mut self, now: Time) {
        match self.observed.save(&self.server, now) {
            Ok(()) => self.observed_dirty = false,
            Err(e) => log::line(&format!("cannot save observations: {e:#}")),
        }
        self.observed_saved = Instant::now();
    }

    /// Writes the snapshot of `reports` when it changed: at once when what `status` counts
    /// did, else once [`snapshot::DETAIL_GAP`] passed since the last write (the loop wakes
    /// for it then).
    fn write_snapshot(&mut self, reports: &[PaneReport], now: Time) {
        let panes: Vec<segment::PaneDetail> = reports
            .iter()
            .map(|r| segment::pane_detail(r, &self.opts.icons))
            .collect();
        let snap = Snapshot {
            pid: std::process::id(),
            socket_path: self.socket_path.to_string_lossy().into_owned(),
            written_at: now,
            status: self
                .published
                .get(&(crate::tmux::Scope::Global, publish::STATUS.to_string()))
                .cloned()
                .unwrap_or_default(),
            limits: crate::usage::merge_limits(panes.iter().flat_map(|p| &p.limits)),
            panes,
            alerts: self.engine.shown().cloned().collect(),
            hosts: self.hosts.clone(),
        };
        let change = self
            .snapshot
            .as_ref()
            .map_or(Change::Counted, |(old, _)| old.change(&snap));
        let now_i = Instant::now();
        match change {
            Change::None => {
                self.snapshot_due = None;
                return;
            }
            Change::Detail => {
                let due = self
                    .snapshot
                    .as_ref()
                    .map_or(now_i, |(_, at)| *at + snapshot::DETAIL_GAP);
                if now_i < due {
                    self.snapshot_due = Some(due);
                    return;
                }
            }
            Change::Counted => {}
        }
        self.snapshot_due = None;
        match snap.write(&self.server) {
            Ok(()) => self.snapshot = Some((snap, now_i)),
            Err(e) => log::line(&format!(
                "cannot write {}: {e:#}",
                Snapshot::path(&self.server).display()
            )),
        }
    }

    /// Clears what this watcher published (a stale segment is worse than none), saves the
    /// memories and lets queued alerts finish.
    fn shutdown(mut self) {
        self.report();
        let now = chrono::Utc::now();
        let _ = self.tmux.set_options(&publish::clear_all(&self.published));
        if self.observed_dirty {
            self.save_observed(now);
        }
        let _ = self.alerts.save(&self.server);
        let _ = std::fs::remove_file(Snapshot::path(&self.server));
        if let Some(links) = self.links.take() {
            links.stop();
        }
        self.sinks.finish();
        self.notify.finish();
    }
}

/// How a host's link reads in the log.
fn link_word(link: &crate::remote::link::Link) -> String {
    use crate::remote::link::Link;
    match link {
        Link::Connecting => "connecting".into(),
        Link::Up { doc } => match &doc.note {
            Some(note) => format!("up ({} panes; {note})", doc.panes.len()),
            None => format!("up ({} panes)", doc.panes.len()),
        },
        Link::Down { reason } => format!("down: {reason}"),
    }
}

/// True while a tmux server accepts connections on `socket` (a killed server may leave its
/// socket file behind; connecting tells without spawning tmux).
pub fn server_alive(socket: &Path) -> bool {
    std::os::unix::net::UnixStream::connect(socket).is_ok()
}

/// True when a watcher serves the tmux server at `socket_path` (it holds the lock).
pub fn running(state_dir: &Path, socket_path: &str) -> bool {
    matches!(lock::try_lock(state_dir, socket_path), Ok(None))
}

/// True when the server's hooks run `agentpane nudge` on a focus change (the plugin sets
/// them, beside the pane hooks): then a focus change wakes the watcher, and its safety poll
/// need not ask tmux to notice one.
fn nudge_hooks_set(tmux: &Tmux) -> bool {
    tmux.cmd(&["show-hooks", "-g"]).is_ok_and(|hooks| {
        hooks
            .lines()
            .any(|l| l.starts_with("session-window-changed[") && l.contains(" nudge"))
    })
}

/// The state folder's nudge file (the `hook` command touches it to wake the watcher).
pub fn nudge_path(state_dir: &Path) -> PathBuf {
    state_dir.join(wake::NUDGE)
}
