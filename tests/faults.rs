//! Fault tests (docs/design.md#reliability): what a transcript, a pane, a tmux server or the disk
//! can throw at agentpane. Each test names the fault it injects; none may end in a panic, a lost
//! file or a wrong exit code.
//!
//! One module per kind of fault: `transcripts`, `tmux`, `state`, `routes`; `props` holds the
//! property tests on real fixtures cut at random points, with random block sizes, CRLF line
//! ends, NULs and junk (`PROPTEST_CASES=N` raises their case count). Every bug these tests found
//! was fixed; the tests stay as regressions.

mod common;

use std::io::{Cursor, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use agentpane::agents;
use agentpane::events::{AgentKind, Event, Time};
use agentpane::paths;
use agentpane::read::reverse::{Line, ReverseLines};
use agentpane::read::Budget;
use agentpane::state::{classify, Observation, Windows};
use agentpane::tmux::{Runner, Tmux, TmuxError, PANE_FORMAT};
use agentpane::transcript::follow::Follower;
use agentpane::transcript::{classify_file, tail_events_from};
use common::{fixture, wait_until, FakeAgent, TmuxServer, DEADLINE};
use proptest::prelude::*;

const CLAUDE_FIXTURE: &str = "claude/marot-spotter/short.jsonl";
const CODEX_FIXTURE: &str = "codex/kvsankar-agent-history/session-01.jsonl";

fn append(path: &Path, data: &[u8]) {
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(path)
        .expect("open for append");
    f.write_all(data).expect("append");
}

fn now() -> Time {
    chrono::Utc::now()
}

/// `agentpane watch` on `server` in the background, quiet (no bell, notifier or message).
fn spawn_watcher(server: &TmuxServer) -> std::process::Child {
    let mut cmd = common::agentpane_with_env(&server.env());
    cmd.args(["-L", &server.name, "watch", "--poll", "0.5"])
        .args(["--no-notify", "--no-bell", "--no-message"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start watcher")
}

/// The watcher has published a non-empty `@agentpane_status`.
fn published_status(server: &TmuxServer) -> bool {
    let out = server.try_tmux(&["show", "-gv", "@agentpane_status"]);
    out.status.success() && !out.stdout.trim_ascii().is_empty()
}

#[path = "faults/props.rs"]
mod props;
#[path = "faults/routes.rs"]
mod routes;
#[path = "faults/state.rs"]
mod state;
#[path = "faults/tmux.rs"]
mod tmux;
#[path = "faults/transcripts.rs"]
mod transcripts;
