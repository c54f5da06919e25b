//! The hidden `serve`: what a remote host runs for a watcher elsewhere
//! (docs/design.md#remote-hosts). It prints one JSON document of this host's agent panes
//! ([`crate::remote::doc`]) whenever it changes, and nothing while nothing does: it sleeps on
//! the server's folder of the state folder until the local watcher rewrites its snapshot, and starts that watcher when
//! none runs. It ends when its stdin closes (the ssh connection went away) or stdout breaks.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use anyhow::Result;
use notify::{RecursiveMode, Watcher as _};
use serde::Deserialize;

use super::Context;
use crate::cli::ServeArgs;
use crate::events::AgentKind;
use crate::exit;
use crate::extract::cache::AnswerCache;
use crate::remote::doc::{Document, RemotePane, RemoteRequest, RequestSeen, HEAD_CHARS};
use crate::segment::{pane_detail, PaneDetail};
use crate::state::{State, Windows};
use crate::tmux::Tmux;
use crate::watch::snapshot::Snapshot;

/// Look again this often even without a file event (a watcher that died, a server that
/// came): one file read and one lock probe.
const SAFETY: Duration = Duration::from_secs(30);

enum Ev {
    Changed,
    Gone,
}

/// The part of the watcher's snapshot a remote needs.
#[derive(Deserialize)]
struct SnapshotView {
    socket_path: String,
    panes: Vec<PaneDetailView>,
}

#[derive(Deserialize)]
struct PaneDetailView {
    pane_id: String,
    target: String,
    agent: Option<String>,
    state: State,
    seen: bool,
    reason: Option<String>,
    #[serde(default)]
    turn_key: Option<String>,
    at: Option<crate::events::Time>,
    resets_at: Option<crate::events::Time>,
    #[serde(default)]
    transcript: Option<PathBuf>,
    #[serde(default)]
    usage: Option<crate::usage::Usage>,
    #[serde(default)]
    limits: Vec<crate::usage::Limit>,
    #[serde(default)]
    request: Option<RequestSeen>,
}

pub fn run(args: ServeArgs, ctx: &Context) -> Result<i32> {
    let tmux = ctx.tmux();
    let dir = crate::paths::state_dir();
    let mut out = std::io::stdout().lock();
    // Answers are read again only when a transcript changed.
    let mut answers = AnswerCache::new(64);
    if args.once {
        let socket = tmux.socket_path().ok();
        let doc = current(&tmux, &dir, socket.as_deref(), false, &mut answers);
        writeln!(out, "{}", doc.to_line())?;
        return Ok(exit::OK);
    }
    crate::paths::ensure_private_dir(&dir)?;
    let (tx, rx) = mpsc::channel();
    let gone = tx.clone();
    std::thread::spawn(move || {
        let mut sink = [0u8; 512];
        let mut stdin = std::io::stdin();
        while matches!(stdin.read(&mut sink), Ok(n) if n > 0) {}
        let _ = gone.send(Ev::Gone);
    });
    let mut watcher = notify::recommended_watcher(move |res: notify::Result<notify::Event>| {
        // Only a change of the snapshot (the one folder watched is the server's): reading it
        // (as this loop does) is no news.
        if res.is_ok_and(|ev| {
            crate::watch::wake::is_change(&ev.kind)
                && ev
                    .paths
                    .iter()
                    .any(|p| p.file_name() == Some(Snapshot::FILE.as_ref()))
        }) {
            let _ = tx.send(Ev::Changed);
        }
    })?;
    let mut socket: Option<String> = None;
    let mut last: Option<Document> = None;
    loop {
        if socket.is_none() {
            socket = tmux.socket_path().ok();
            // The snapshot is in the server's own folder, known once the server is.
            if let Some(s) = &socket {
                let server = crate::paths::server_dir(&dir, s);
                crate::paths::ensure_private_dir(&server)?;
                watcher.watch(&server, RecursiveMode::NonRecursive)?;
            }
        }
        let doc = current(&tmux, &dir, socket.as_deref(), true, &mut answers);
        if last.as_ref() != Some(&doc) {
            if writeln!(out, "{}", doc.to_line())
                .and_then(|()| out.flush())
                .is_err()
            {
                return Ok(exit::OK);
            }
            last = Some(doc);
        }
        match rx.recv_timeout(SAFETY) {
            Ok(Ev::Gone) | Err(mpsc::RecvTimeoutError::Disconnected) => return Ok(exit::OK),
            Ok(Ev::Changed) | Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
        // A burst of writes is one change.
        std::thread::sleep(Duration::from_millis(20));
        while let Ok(ev) = rx.try_recv() {
            if matches!(ev, Ev::Gone) {
                return Ok(exit::OK);
            }
        }
    }
}

/// This host's document now: the watcher's snapshot when one serves this server, else a scan
/// of its own (and, when `start` is set, the watcher is started so later changes arrive). Each
/// pane carries the head of its last answer, read from its transcript.
fn current(
    tmux: &Tmux,
    dir: &Path,
    socket: Option<&str>,
    start: bool,
    answers: &mut AnswerCache,
) -> Document {
    let Some(socket) = socket.filter(|s| crate::watch::server_alive(Path::new(s))) else {
        return Document::new(Vec::new(), Some("no tmux server on this host".into()));
    };
    if crate::watch::running(dir, socket) {
        let server = crate::paths::server_dir(dir, socket);
        if let Some(panes) = read_snapshot(&Snapshot::path(&server), socket, answers) {
            return Document::new(panes, None);
        }
    } else if start {
        start_watcher(tmux, socket);
    }
    let now = chrono::Utc::now();
    let mut reports =
        crate::memory::remembered_scan(tmux, now, &Windows::default()).unwrap_or_default();
    crate::scan::measure_usage(&mut reports);
    let icons = crate::segment::Icons::default();
    let details: Vec<PaneDetail> = reports.iter().map(|r| pane_detail(r, &icons)).collect();
    Document::new(
        details
            .iter()
            .filter(|d| d.state != State::None)
            .map(|d| {
                RemotePane::from_detail(d, answer_head(answers, d.transcript.as_deref(), d.agent))
            })
            .collect(),
        None,
    )
}

/// The head of the last answer in `transcript`, as the picker shows a local one.
fn answer_head(
    answers: &mut AnswerCache,
    transcript: Option<&Path>,
    agent: Option<AgentKind>,
) -> Option<String> {
    let answer = answers.get_or_extract(transcript?, agent).ok()??;
    Some(answer.head(HEAD_CHARS))
}

fn read_snapshot(
    path: &PathBuf,
    socket: &str,
    answers: &mut AnswerCache,
) -> Option<Vec<RemotePane>> {
    let data = std::fs::read(path).ok()?;
    let snap: SnapshotView = serde_json::from_slice(&data).ok()?;
    if snap.socket_path != socket {
        return None;
    }
    Some(
        snap.panes
            .into_iter()
            .filter(|p| p.state != State::None)
            .map(|p| RemotePane {
                answer_head: answer_head(
                    answers,
                    p.transcript.as_deref(),
                    p.agent.as_deref().and_then(AgentKind::from_name),
                ),
                pane_id: p.pane_id,
                target: p.target,
                agent: p.agent,
                state: p.state,
                seen: p.seen,
                reason: p.reason,
                turn_key: p.turn_key,
                at: p.at,
                resets_at: p.resets_at,
                usage: p.usage,
                limits: p.limits,
                request: p.request.map(RemoteRequest::from),
            })
            .collect(),
    )
}

/// Starts this server's watcher the way the tmux plugin does (`run-shell -b`), so it lives on
/// with the server rather than with this connection.
pub(super) fn start_watcher(tmux: &Tmux, socket: &str) {
    let Ok(exe) = std::env::current_exe() else {
        return;
    };
    let line = format!(
        "{} -S {} watch >/dev/null 2>&1",
        quote(&exe.to_string_lossy()),
        quote(socket)
    );
    let _ = tmux.cmd(&["run-shell", "-b", &line]);
}

/// `'…'` for sh.
fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}
