//! Evidence beyond transcripts: event order across sources (hooks, session record, pane),
//! the `hook` command's contract, settings.json round trips, and pane prompt detection on
//! recorded captures.

mod common;

use std::fs;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use agentpane::events::{Event, EventKind, Time};
use agentpane::evidence::hook::{HookEvidence, HookKind, HookRecord};
use agentpane::evidence::{
    detect_prompt, reconcile, PaneEvidence, PromptKind, RecordState, RecordStatus,
};
use agentpane::state::Source;
use agentpane::state::{classify, Observation, State, Status, Windows};
use chrono::TimeZone;
use serde_json::Value;

// ---------------------------------------------------------------- helpers

fn t(secs: i64) -> Time {
    chrono::Utc
        .timestamp_opt(1_780_000_000 + secs, 0)
        .single()
        .unwrap()
}

fn w() -> Windows {
    Windows::default()
}

fn transcript(events: &[Event], now: Time) -> Status {
    classify(events, now, &w(), Observation::default())
}

/// A human prompt at 0, then a tool call at 2 that has no result yet.
fn pending_bash() -> Vec<Event> {
    vec![
        Event::new(EventKind::UserPrompt).at(t(0)).key("u1"),
        Event::new(EventKind::ToolUse {
            ids: vec!["toolu_1".into()],
            names: vec!["Bash".into()],
        })
        .at(t(2))
        .key("a1"),
    ]
}

/// A turn that closed with an end-turn answer at 10.
fn closed_turn() -> Vec<Event> {
    vec![
        Event::new(EventKind::UserPrompt).at(t(0)).key("u1"),
        Event::new(EventKind::AssistantText { closes: Some(true) })
            .at(t(10))
            .key("a-final"),
    ]
}

fn rec(kind: HookKind, at: Time) -> HookRecord {
    HookRecord {
        kind,
        at,
        message: None,
        tool: None,
        notification_type: None,
    }
}

fn hooks(records: Vec<HookRecord>) -> HookEvidence {
    let mut ev = HookEvidence::new("sess-1", t(0));
    for r in records {
        ev.push(r);
    }
    ev
}

fn permission_prompt(at: Time) -> HookRecord {
    HookRecord {
        message: Some("Claude needs your permission to use Bash".into()),
        notification_type: Some("permission_prompt".into()),
        ..rec(HookKind::PermissionPrompt, at)
    }
}

fn record(state: RecordState, waiting_for: Option<&str>, at: Time) -> RecordStatus {
    RecordStatus {
        state,
        waiting_for: waiting_for.map(str::to_string),
        updated_at: Some(at),
        session_id: Some("sess-1".into()),
    }
}

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/panes")
        .join(rel)
}

fn agentpane(args: &[&str], env: &[(&str, &Path)], stdin: &[u8]) -> (Output, Duration) {
    let world = tempfile::tempdir().unwrap();
    let mut cmd = common::agentpane_in(world.path());
    cmd.args(args)
        .env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("XDG_STATE_HOME")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let started = Instant::now();
    let mut child = cmd.spawn().unwrap();
    let mut pipe = child.stdin.take().unwrap();
    let data = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = pipe.write_all(&data);
    });
    let out = child.wait_with_output().unwrap();
    let elapsed = started.elapsed();
    writer.join().unwrap();
    (out, elapsed)
}

struct Home {
    dir: tempfile::TempDir,
}

impl Home {
    fn new() -> Home {
        Home {
            dir: tempfile::tempdir().unwrap(),
        }
    }
    fn state(&self) -> PathBuf {
        self.dir.path().join("state")
    }
    fn env(&self) -> Vec<(&'static str, PathBuf)> {
        vec![
            ("AGENTPANE_STATE_DIR", self.state()),
            ("HOME", self.dir.path().to_path_buf()),
        ]
    }
    fn run(&self, args: &[&str], stdin: &[u8]) -> (Output, Duration) {
        let env = self.env();
        let refs: Vec<(&str, &Path)> = env.iter().map(|(k, v)| (*k, v.as_path())).collect();
        agentpane(args, &refs, stdin)
    }
}

#[path = "hooks/command.rs"]
mod command;
#[path = "hooks/order.rs"]
mod order;
#[path = "hooks/panes.rs"]
mod panes;
#[path = "hooks/settings.rs"]
mod settings;
#[path = "hooks/statusline.rs"]
mod statusline;

mod totality {
    use super::*;
    use agentpane::evidence::hook::HookInput;
    use agentpane::read::ratelimit::{countdown, parse_reset};
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn parsers_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400),
                               text in "(resets|reset at|resets in|Do you want to proceed\\?|❯ 1\\. Yes|\"resetsAt\":|[0-9:apm ,()/A-Za-z\n]){0,12}",
                               offset_h in -12i32..14) {
            let now = t(0);
            let off = chrono::FixedOffset::east_opt(offset_h * 3600).unwrap();
            let _ = HookInput::parse(&bytes).and_then(|i| i.record(now));
            let lossy = String::from_utf8_lossy(&bytes);
            let _ = parse_reset(&lossy, now, off);
            let _ = detect_prompt(&lossy);
            if let Some(at) = parse_reset(&text, now, off) {
                prop_assert!(!countdown(at, now).contains('-'));
            }
            let _ = detect_prompt(&text);
        }
    }
}
