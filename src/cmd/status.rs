//! `status` (the status-line segment), `pane-status` (per window) and the hidden `jump`.
//! Both segments degrade to empty output: a status line never shows an error wall.

use anyhow::{Context as _, Result};
use serde::Deserialize;

use super::Context;
use crate::cli::{JumpArgs, PaneStatusArgs, StatusArgs};
use crate::exit;
use crate::memory::{remembered_scan, remembered_scan_in};
use crate::remote::link::HostView;
use crate::segment::{self, Counts, Icons};
use crate::state::{urgency, State, Windows};
use crate::tmux::TmuxError;

/// Icons from the flag, else `$AGENTPANE_ICONS`; a bad spec is reported on stderr and the
/// defaults are used (the status line must still render).
pub(crate) fn icons(flag: Option<&str>) -> Icons {
    let spec = flag
        .map(str::to_string)
        .or_else(|| std::env::var("AGENTPANE_ICONS").ok())
        .unwrap_or_default();
    Icons::default().with_overrides(&spec).unwrap_or_else(|e| {
        eprintln!("agentpane: ignoring icons: {e}");
        Icons::default()
    })
}

/// The segment format from the flag, else `$AGENTPANE_STATUS_FORMAT`, else the default.
pub(crate) fn format(flag: Option<&str>) -> String {
    flag.map(str::to_string)
        .or_else(|| std::env::var("AGENTPANE_STATUS_FORMAT").ok())
        .filter(|f| !f.is_empty())
        .unwrap_or_else(|| segment::DEFAULT_FORMAT.to_string())
}

pub fn status(args: StatusArgs, ctx: &Context) -> Result<i32> {
    let icons = icons(args.icons.as_deref());
    let format = format(args.format.as_deref());
    let now = chrono::Utc::now();
    let tmux = ctx.tmux();
    // A state folder others could write to is not read: the segment is empty (`doctor` says
    // why), never a count someone else made up.
    let dir = crate::paths::state_dir();
    if crate::paths::distrusted_folder(&dir).is_some() {
        return Ok(exit::OK);
    }
    // `--scan` lists the panes first: that call tells the server's socket path too.
    let scanned = args
        .scan
        .then(|| remembered_scan(&tmux, now, &Windows::default()));
    // Only the snapshot of the watcher serving this very server: another server's panes and
    // hosts are not this one's. No server: nothing.
    let Ok(socket) = tmux.socket_path() else {
        return Ok(exit::OK);
    };
    let watched = watched(&dir, &socket);
    let mut counts = match (scanned, &watched) {
        (Some(reports), _) => Counts::of(&reports.unwrap_or_default(), now),
        (None, Some((w, _))) => w.counts(now),
        // No agents, a failing scan: all render as nothing, exit 0.
        (None, None) => {
            let server = crate::paths::server_dir(&dir, &socket);
            let reports =
                remembered_scan_in(&server, &tmux, now, &Windows::default()).unwrap_or_default();
            Counts::of(&reports, now)
        }
    };
    // The hosts the watcher keeps, as it last saw them: a status line never waits on ssh.
    let hosts = watched.map(|(_, hosts)| hosts).unwrap_or_default();
    let mut extra = crate::remote::status_parts(&hosts, &icons, &mut counts, now);
    let plan = crate::limits::all_current(&dir, now);
    extra.push((
        "limit",
        segment::limit_token(&plan, args.limit_threshold, &icons.reset, now),
    ));
    let line = segment::render_with(&format, &icons, &counts, &extra, now);
    if !line.is_empty() {
        println!("{line}");
    }
    Ok(exit::OK)
}

/// What the watcher serving this server last saw, as it wrote it (`state.json`).
#[derive(Deserialize)]
struct Watched {
    pid: u32,
    socket_path: String,
    panes: Vec<WatchedPane>,
}

#[derive(Deserialize)]
struct WatchedPane {
    state: State,
    seen: bool,
    resets_at: Option<crate::events::Time>,
}

impl Watched {
    fn counts(&self, now: crate::events::Time) -> Counts {
        let mut counts = Counts::default();
        for p in &self.panes {
            counts.add(p.state, p.seen, p.resets_at, now);
        }
        counts
    }
}

/// The snapshot of the watcher that serves the server at `socket`, in its folder of the
/// state folder `dir`, when one runs: a status bar outside tmux that asks `status` then gets
/// what the tmux status line shows, for one tmux call and no scan. It counts only when the
/// process holding this server's watcher lock wrote it for this server (a watcher that
/// crashed leaves its last snapshot behind). With the hosts it keeps.
fn watched(dir: &std::path::Path, socket: &str) -> Option<(Watched, Vec<HostView>)> {
    let holder = crate::paths::lock_holder(&crate::watch::lock::lock_path(dir, socket))?;
    let server = crate::paths::server_dir(dir, socket);
    let bytes =
        crate::paths::read_trusted(&crate::watch::snapshot::Snapshot::path(&server)).ok()?;
    let watched: Watched = serde_json::from_slice(&bytes).ok()?;
    (watched.pid == holder && watched.socket_path == socket)
        .then(|| (watched, super::remote::hosts_in(&bytes)))
}

pub fn pane_status(args: PaneStatusArgs, ctx: &Context) -> Result<i32> {
    let icons = icons(args.icons.as_deref());
    let tmux = ctx.tmux();
    let now = chrono::Utc::now();
    let window = match args.window.as_deref() {
        Some(id) if id.starts_with('@') => Some(id.to_string()),
        Some(target) => match tmux.format(Some(target), "#{window_id}") {
            Ok(id) => Some(id),
            Err(TmuxError::NoServer(_) | TmuxError::Missing) => return Ok(exit::OK),
            Err(e) => return Err(e).with_context(|| format!("no tmux window `{target}`")),
        },
        None => None,
    };
    let reports = match remembered_scan(&tmux, now, &Windows::default()) {
        Ok(r) => r,
        Err(TmuxError::NoServer(_) | TmuxError::Missing) if !args.json => return Ok(exit::OK),
        Err(e) => return Err(e.into()),
    };
    let mut summaries = segment::windows(&reports, &icons);
    if let Some(id) = &window {
        summaries.retain(|w| &w.window_id == id);
    }
    if args.json {
        // Channel mail per pane of this server, for the popup detail.
        let socket = tmux.socket_path().unwrap_or_default();
        let unread = crate::channel::pane_members(&socket).unwrap_or_default();
        for pane in summaries.iter_mut().flat_map(|w| w.panes.iter_mut()) {
            pane.unread = unread
                .iter()
                .filter(|m| m.pane == pane.pane_id)
                .map(|m| m.unread)
                .sum();
        }
        println!("{}", serde_json::to_string_pretty(&summaries)?);
    } else if window.is_some() {
        if let Some(glyph) = summaries
            .first()
            .map(|w| w.glyph.as_str())
            .filter(|g| !g.is_empty())
        {
            println!("{glyph}");
        }
    } else {
        for w in &summaries {
            let seen = if w.state == State::YourTurn && w.seen {
                ", seen"
            } else {
                ""
            };
            println!("{}\t{}\t{}{seen}\t{}", w.target, w.glyph, w.state, w.name);
        }
    }
    Ok(exit::OK)
}

/// Switches to the most urgent agent pane that needs the user (your-turn or worse).
pub fn jump(args: JumpArgs, ctx: &Context) -> Result<i32> {
    let tmux = ctx.tmux();
    let now = chrono::Utc::now();
    let reports = remembered_scan(&tmux, now, &Windows::default())?;
    let needs_you = reports
        .iter()
        .filter(|r| urgency(r.status.state, r.status.seen) >= urgency(State::Stalled, false));
    let Some(top) = segment::most_urgent(needs_you) else {
        super::client::tell(
            &tmux,
            args.client.as_deref(),
            "agentpane: no agent needs you",
        );
        return Ok(exit::NOTHING);
    };
    super::client::switch_to(&tmux, args.client.as_deref(), &top.resolved.pane)?;
    Ok(exit::OK)
}
