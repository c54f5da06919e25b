//! Evidence beyond transcripts: event order across sources (hooks, session record, pane),
//! the `hook` command's contract, settings.json round trips, and pane prompt detection on
//! recorded captures.

use std::fs;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use agentpane::events::{Event, EventKind, Time};
use agentpane::evidence::hook::{HookEvidence, HookKind, HookRecord};
use agentpane::evidence::{
    detect_prompt, reconcile, PaneEvidence, PromptKind, RecordState, RecordStatus,
};
use agentpane::scan::Source;
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

// ---------------------------------------------------------------- event order

#[test]
fn permission_prompt_then_approval() {
    let events = pending_bash();
    let now = t(5);
    let prompted = hooks(vec![
        rec(HookKind::PreToolUse, t(3)),
        permission_prompt(t(4)),
    ]);
    let (s, src) = reconcile(
        &transcript(&events, now),
        Some(&prompted),
        None,
        None,
        now,
        &w(),
    );
    assert_eq!(
        (s.state, s.reason.as_deref()),
        (State::Waiting, Some("permission: Bash"))
    );
    assert_eq!(src, Source::Hook);

    // Still waiting long after the transcript alone would call the turn quiet.
    let later = t(40 * 60);
    let (s, _) = reconcile(
        &transcript(&events, later),
        Some(&prompted),
        None,
        None,
        later,
        &w(),
    );
    assert_eq!(s.state, State::Waiting);

    // Approved: the tool finishes and PostToolUse fires.
    let mut approved = prompted.clone();
    approved.push(rec(HookKind::PostToolUse, t(30)));
    let now = t(31);
    let (s, src) = reconcile(
        &transcript(&events, now),
        Some(&approved),
        None,
        None,
        now,
        &w(),
    );
    assert_eq!((s.state, src), (State::Working, Source::Hook));
    assert!(s.turn_open);
}

#[test]
fn approval_seen_through_tool_progress_in_the_transcript() {
    let mut events = pending_bash();
    let prompted = hooks(vec![permission_prompt(t(4))]);
    // The approved command runs and reports progress into the transcript.
    events.push(Event::new(EventKind::Progress).at(t(15)));
    let now = t(16);
    let (s, src) = reconcile(
        &transcript(&events, now),
        Some(&prompted),
        None,
        None,
        now,
        &w(),
    );
    assert_eq!((s.state, src), (State::Working, Source::Transcript));
    assert_eq!(s.reason.as_deref(), Some("tool: Bash"));
}

#[test]
fn approval_seen_on_the_pane_ends_the_hook_wait() {
    let events = pending_bash();
    let prompted = hooks(vec![permission_prompt(t(4))]);
    let now = t(60);
    let status = transcript(&events, now);
    let (s, src) = reconcile(
        &status,
        Some(&prompted),
        None,
        Some(&PaneEvidence::NoPrompt),
        now,
        &w(),
    );
    assert_eq!((s.state, src), (State::Working, Source::Pane));
    assert_eq!(s.reason.as_deref(), Some("tool: Bash"));
    // Within the settle window the dialog may simply not be painted yet.
    let now = t(5);
    let status = transcript(&events, now);
    let (s, _) = reconcile(
        &status,
        Some(&prompted),
        None,
        Some(&PaneEvidence::NoPrompt),
        now,
        &w(),
    );
    assert_eq!(s.state, State::Waiting);
}

#[test]
fn hook_evidence_older_than_a_new_user_prompt_yields() {
    let mut events = closed_turn();
    let stopped = hooks(vec![rec(HookKind::Stop, t(11))]);
    events.push(Event::new(EventKind::UserPrompt).at(t(100)).key("u2"));
    let now = t(101);
    let (s, src) = reconcile(
        &transcript(&events, now),
        Some(&stopped),
        None,
        None,
        now,
        &w(),
    );
    assert_eq!((s.state, src), (State::Working, Source::Transcript));
    assert_eq!(s.turn_key.as_deref(), Some("u2"));

    // A permission prompt of the previous turn yields the same way.
    let old_wait = hooks(vec![permission_prompt(t(50))]);
    let (s, src) = reconcile(
        &transcript(&events, now),
        Some(&old_wait),
        None,
        None,
        now,
        &w(),
    );
    assert_eq!((s.state, src), (State::Working, Source::Transcript));
}

#[test]
fn stale_session_record_is_ignored() {
    // The turn closed long ago; a record updated 10 min ago says "waiting".
    let events = closed_turn();
    let now = t(10 + 12 * 60);
    let status = transcript(&events, now);
    let stale = record(RecordState::Waiting, Some("permission"), t(10 + 2 * 60));
    let (s, src) = reconcile(&status, None, Some(&stale), None, now, &w());
    assert_eq!((s.state, src), (State::YourTurn, Source::Transcript));

    // A fresh record that is older than the transcript's deciding event is ignored too.
    let mut events = pending_bash();
    events.push(
        Event::new(EventKind::ToolResult {
            ids: vec!["toolu_1".into()],
        })
        .at(t(20)),
    );
    let now = t(21);
    let older = record(RecordState::Idle, None, t(15));
    let (s, src) = reconcile(
        &transcript(&events, now),
        None,
        Some(&older),
        None,
        now,
        &w(),
    );
    assert_eq!((s.state, src), (State::Working, Source::Transcript));
}

#[test]
fn a_fresh_idle_record_never_resurrects_an_old_completion() {
    let events = closed_turn();
    let now = t(10 + 3 * 3600);
    let status = transcript(&events, now);
    assert_eq!(status.state, State::Idle);
    let touched = record(RecordState::Idle, None, now - chrono::Duration::seconds(5));
    let (s, src) = reconcile(&status, None, Some(&touched), None, now, &w());
    assert_eq!((s.state, src), (State::Idle, Source::Transcript));
}

#[test]
fn fresh_session_record_counts() {
    let events = pending_bash();
    let now = t(30);
    let status = transcript(&events, now);
    let waiting = record(RecordState::Waiting, Some("permission"), t(3));
    let (s, src) = reconcile(&status, None, Some(&waiting), None, now, &w());
    assert_eq!((s.state, src), (State::Waiting, Source::SessionRecord));
    assert_eq!(s.reason.as_deref(), Some("permission: Bash"));

    let asked = record(RecordState::Waiting, Some("input needed"), t(3));
    let (s, _) = reconcile(&status, None, Some(&asked), None, now, &w());
    assert_eq!(s.reason.as_deref(), Some("input needed"));

    // A text-only answer still settling; the record already says idle.
    let events = vec![
        Event::new(EventKind::UserPrompt).at(t(0)),
        Event::new(EventKind::AssistantText { closes: None })
            .at(t(10))
            .key("a"),
    ];
    let now = t(11);
    let idle = record(RecordState::Idle, None, t(11));
    let (s, src) = reconcile(
        &transcript(&events, now),
        None,
        Some(&idle),
        None,
        now,
        &w(),
    );
    assert_eq!((s.state, src), (State::YourTurn, Source::SessionRecord));
    assert_eq!(s.turn_key.as_deref(), Some("a"));

    // A newer hook event beats an older record, and the other way round.
    let stop = hooks(vec![rec(
        HookKind::Stop,
        t(11) + chrono::Duration::milliseconds(500),
    )]);
    let busy = record(RecordState::Busy, None, t(11));
    let now = t(12);
    let (s, src) = reconcile(
        &transcript(&events, now),
        Some(&stop),
        Some(&busy),
        None,
        now,
        &w(),
    );
    assert_eq!((s.state, src), (State::YourTurn, Source::Hook));
    let busy_later = record(RecordState::Busy, None, t(12));
    let (s, src) = reconcile(
        &transcript(&events, now),
        Some(&stop),
        Some(&busy_later),
        None,
        now,
        &w(),
    );
    assert_eq!((s.state, src), (State::Working, Source::SessionRecord));
}

#[test]
fn idle_prompt_after_completion_is_not_a_new_completion() {
    // The transcript already shows the completion.
    let events = closed_turn();
    let stopped = hooks(vec![rec(HookKind::Stop, t(11))]);
    let mut idled = stopped.clone();
    idled.push(HookRecord {
        notification_type: Some("idle_prompt".into()),
        message: Some("Claude is waiting for your input".into()),
        ..rec(HookKind::IdlePrompt, t(71))
    });
    let now = t(72);
    let status = transcript(&events, now);
    let before = reconcile(&status, Some(&stopped), None, None, now, &w());
    let after = reconcile(&status, Some(&idled), None, None, now, &w());
    assert_eq!(before, after);
    assert_eq!(after.0.state, State::YourTurn);
    assert_eq!(after.0.at, Some(t(10)));
    assert_eq!(after.0.turn_key.as_deref(), Some("a-final"));

    // The transcript is still settling; the Stop hook closes; the idle prompt changes nothing.
    let settling = vec![
        Event::new(EventKind::UserPrompt).at(t(0)),
        Event::new(EventKind::AssistantText { closes: None })
            .at(t(10))
            .key("a2"),
    ];
    let now = t(11);
    let (s1, src) = reconcile(
        &transcript(&settling, now),
        Some(&stopped),
        None,
        None,
        now,
        &w(),
    );
    assert_eq!(
        (s1.state, src, s1.at),
        (State::YourTurn, Source::Hook, Some(t(10)))
    );
    let now = t(72);
    let (s2, _) = reconcile(
        &transcript(&settling, now),
        Some(&idled),
        None,
        None,
        now,
        &w(),
    );
    assert_eq!(
        (s2.state, s2.at, s2.turn_key),
        (State::YourTurn, s1.at, s1.turn_key)
    );
}

#[test]
fn stop_then_user_prompt_submit_is_working() {
    let events = closed_turn();
    let ev = hooks(vec![
        rec(HookKind::Stop, t(11)),
        rec(HookKind::UserPromptSubmit, t(50)),
    ]);
    let now = t(51);
    let (s, src) = reconcile(&transcript(&events, now), Some(&ev), None, None, now, &w());
    assert_eq!((s.state, src), (State::Working, Source::Hook));
    assert!(s.turn_open);
    assert_eq!(s.turn_key, None, "a new turn, not the closed one");
}

#[test]
fn elicitation_waits_for_a_question_and_session_end_is_idle() {
    let events = pending_bash();
    let now = t(6);
    let asked = hooks(vec![HookRecord {
        notification_type: Some("elicitation_dialog".into()),
        ..rec(HookKind::Elicitation, t(5))
    }]);
    let (s, _) = reconcile(
        &transcript(&events, now),
        Some(&asked),
        None,
        None,
        now,
        &w(),
    );
    assert_eq!(
        (s.state, s.reason.as_deref()),
        (State::Waiting, Some("question"))
    );

    let ended = hooks(vec![rec(HookKind::SessionEnd, t(5))]);
    let (s, src) = reconcile(
        &transcript(&events, now),
        Some(&ended),
        None,
        None,
        now,
        &w(),
    );
    assert_eq!((s.state, src), (State::Idle, Source::Hook));
    assert!(!s.turn_open);
}

#[test]
fn a_close_never_hides_attention() {
    let events = vec![
        Event::new(EventKind::UserPrompt).at(t(0)),
        Event::new(EventKind::ApiError(agentpane::events::ApiError {
            kind: "rate_limit".into(),
            text: "You've hit your session limit · resets 9:50pm".into(),
            resets_at: Some(t(3600)),
        }))
        .at(t(5)),
    ];
    let now = t(7);
    let ev = hooks(vec![rec(HookKind::Stop, t(6))]);
    let (s, src) = reconcile(&transcript(&events, now), Some(&ev), None, None, now, &w());
    assert_eq!((s.state, src), (State::Attention, Source::Transcript));
    assert_eq!(s.resets_at, Some(t(3600)));
}

#[test]
fn old_hook_completion_reads_idle() {
    let events = vec![Event::new(EventKind::UserPrompt).at(t(0))];
    let ev = hooks(vec![rec(HookKind::Stop, t(10))]);
    let now = t(10 + 21 * 60);
    let (s, _) = reconcile(&transcript(&events, now), Some(&ev), None, None, now, &w());
    assert_eq!(s.state, State::Idle);
}

#[test]
fn approval_prompt_on_the_pane_turns_a_pending_tool_into_waiting() {
    let events = pending_bash();
    let screen =
        fs::read_to_string(fixture("claude/claudeless-2.1.12-permission-bash.txt")).unwrap();
    let pane = detect_prompt(&screen).unwrap();
    // Long after the transcript alone would read quiet.
    for now in [t(20), t(10 * 60)] {
        let (s, src) = reconcile(
            &transcript(&events, now),
            None,
            None,
            Some(&pane),
            now,
            &w(),
        );
        assert_eq!((s.state, src), (State::Waiting, Source::Pane), "{now}");
        assert_eq!(s.reason.as_deref(), Some("permission: Bash"));
    }
    // A dialog on screen never reopens a closed turn.
    let now = t(20);
    let (s, src) = reconcile(
        &transcript(&closed_turn(), now),
        None,
        None,
        Some(&pane),
        now,
        &w(),
    );
    assert_eq!((s.state, src), (State::YourTurn, Source::Transcript));
}

#[test]
fn codex_approval_on_the_pane_names_the_command() {
    let events = vec![
        Event::new(EventKind::TurnStart).at(t(0)),
        Event::new(EventKind::ToolUse {
            ids: vec!["call_1".into()],
            names: vec!["shell".into()],
        })
        .at(t(1)),
    ];
    let screen = fs::read_to_string(fixture("codex/codex-tui-approval-exec.txt")).unwrap();
    let pane = detect_prompt(&screen).unwrap();
    let now = t(30);
    let (s, src) = reconcile(
        &transcript(&events, now),
        None,
        None,
        Some(&pane),
        now,
        &w(),
    );
    assert_eq!((s.state, src), (State::Waiting, Source::Pane));
    assert_eq!(s.reason.as_deref(), Some("permission: echo"));
}

#[test]
fn exited_agent_is_idle() {
    let now = t(5);
    let (s, src) = reconcile(
        &transcript(&pending_bash(), now),
        Some(&hooks(vec![permission_prompt(t(4))])),
        None,
        Some(&PaneEvidence::Exited),
        now,
        &w(),
    );
    assert_eq!(
        (s.state, s.reason.as_deref(), src),
        (State::Idle, Some("exited"), Source::Pane)
    );
}

#[test]
fn nothing_but_the_transcript_keeps_it() {
    let now = t(11);
    let status = transcript(&closed_turn(), now);
    assert_eq!(
        reconcile(&status, None, None, None, now, &w()),
        (status.clone(), Source::Transcript)
    );
    let none = Status::idle();
    assert_eq!(
        reconcile(&none, None, None, None, now, &w()).1,
        Source::None
    );
}

// ---------------------------------------------------------------- pane fixtures

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/panes")
        .join(rel)
}

#[test]
fn prompt_detection_on_recorded_captures() {
    let cases: &[(&str, Option<(PromptKind, &str)>)] = &[
        (
            "claude/aoe-2.1.2-permission-bash.txt",
            Some((PromptKind::Permission, "permission: Bash")),
        ),
        (
            "claude/aoe-2.1.2-question-checkbox.txt",
            Some((PromptKind::Question, "question")),
        ),
        ("claude/aoe-2.1.2-running-thinking.txt", None),
        (
            "claude/claudeless-2.1.12-permission-bash.txt",
            Some((PromptKind::Permission, "permission: Bash")),
        ),
        (
            "claude/claudeless-2.1.12-permission-edit.txt",
            Some((PromptKind::Permission, "permission: Edit")),
        ),
        (
            "claude/claudeless-2.1.12-permission-write.txt",
            Some((PromptKind::Permission, "permission: Write")),
        ),
        ("claude/claudeless-2.1.12-trust-prompt.txt", None),
        ("claude/claudeless-2.1.12-after-response.txt", None),
        ("claude/reconstructed-prose-proceed.txt", None),
        ("claude/reconstructed-prose-proceed-line.txt", None),
        (
            "codex/codex-tui-approval-exec.txt",
            Some((PromptKind::Permission, "permission: echo")),
        ),
        (
            "codex/codex-tui-approval-exec-2025.txt",
            Some((PromptKind::Permission, "permission: echo")),
        ),
        (
            "codex/codex-tui-approval-patch.txt",
            Some((PromptKind::Permission, "permission: edit")),
        ),
        (
            "codex/reconstructed-ts-allow-command.txt",
            Some((PromptKind::Permission, "permission: npm")),
        ),
        ("codex/reconstructed-prose-would-you-like.txt", None),
    ];
    let listed: Vec<&str> = cases.iter().map(|c| c.0).collect();
    for dir in ["claude", "codex"] {
        for entry in fs::read_dir(fixture(dir)).unwrap().flatten() {
            let rel = format!("{dir}/{}", entry.file_name().to_string_lossy());
            assert!(
                listed.contains(&rel.as_str()),
                "fixture {rel} has no expectation"
            );
        }
    }
    for (file, want) in cases {
        let text = fs::read_to_string(fixture(file)).unwrap();
        let got = detect_prompt(&text).map(|e| match e {
            PaneEvidence::Prompt(p) => (p.kind, p.reason()),
            other => panic!("{file}: {other:?}"),
        });
        let want = want.map(|(k, r)| (k, r.to_string()));
        assert_eq!(got, want, "{file}");
    }
}

#[test]
fn prompt_detection_survives_ansi_and_box_borders() {
    let text = fs::read_to_string(fixture("claude/claudeless-2.1.12-permission-edit.txt")).unwrap();
    let colored: String = text
        .lines()
        .map(|l| format!("\x1b[38;5;246m{l}\x1b[0m\n"))
        .collect();
    assert!(matches!(
        detect_prompt(&colored),
        Some(PaneEvidence::Prompt(_))
    ));
    let boxed = "│ Bash command                              │\n│   rm -rf build                            │\n│ Do you want to proceed?                   │\n│ ❯ 1. Yes                                  │\n│   2. No, and tell Claude what to do differently (esc) │\n";
    let Some(PaneEvidence::Prompt(p)) = detect_prompt(boxed) else {
        panic!("boxed dialog not recognised");
    };
    assert_eq!(p.reason(), "permission: Bash");
    for prose in [
        "I will proceed with the refactor now.\n",
        "Do you want to proceed? Let me know.\n1. Yes\n",
        "Should we proceed?\n❯ 1. Yes\n",
        "",
    ] {
        assert_eq!(detect_prompt(prose), None, "{prose:?}");
    }
}

// ---------------------------------------------------------------- the `hook` command

fn agentpane(args: &[&str], env: &[(&str, &Path)], stdin: &[u8]) -> (Output, Duration) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_agentpane"));
    cmd.args(args)
        .env_remove("TMUX")
        .env_remove("TMUX_PANE")
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

#[test]
fn hook_with_garbage_stdin_exits_zero_quickly_and_silently() {
    let home = Home::new();
    let inputs: [&[u8]; 6] = [
        b"",
        b"not json",
        b"\xff\xfe\x00garbage",
        b"{\"hook_event_name\":\"Stop\"}",
        b"{\"session_id\":\"../../etc/passwd\",\"hook_event_name\":\"Stop\"}",
        b"[1,2,3]",
    ];
    for input in inputs {
        let (out, elapsed) = home.run(&["hook"], input);
        assert_eq!(out.status.code(), Some(0), "{input:?}");
        assert!(
            out.stdout.is_empty(),
            "stdout must stay empty: {:?}",
            out.stdout
        );
        assert!(elapsed < Duration::from_secs(5), "{elapsed:?}");
    }
    let evidence = home.state().join("evidence");
    let files = fs::read_dir(&evidence).map(|d| d.count()).unwrap_or(0);
    assert_eq!(files, 0, "nothing recorded from bad input");
}

#[test]
fn hook_records_evidence_and_nudges_the_watcher() {
    let home = Home::new();
    let event = br#"{"session_id":"0d4b1c3e-1a2b","transcript_path":"/p/t.jsonl","cwd":"/w","permission_mode":"default","hook_event_name":"Notification","message":"Claude needs your permission to use Bash","notification_type":"permission_prompt"}"#;
    let mut env = home.env();
    env.push(("TMUX_PANE", PathBuf::from("%7")));
    let refs: Vec<(&str, &Path)> = env.iter().map(|(k, v)| (*k, v.as_path())).collect();
    let (out, _) = agentpane(&["hook"], &refs, event);
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty());
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let ev: HookEvidence = serde_json::from_slice(
        &fs::read(home.state().join("evidence/0d4b1c3e-1a2b.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(ev.pane.as_deref(), Some("%7"));
    assert_eq!(ev.transcript_path.as_deref(), Some(Path::new("/p/t.jsonl")));
    let p = ev.get(HookKind::PermissionPrompt).unwrap();
    assert_eq!(
        p.message.as_deref(),
        Some("Claude needs your permission to use Bash")
    );
    let nudge: Value =
        serde_json::from_slice(&fs::read(home.state().join("nudge")).unwrap()).unwrap();
    assert_eq!(nudge["session_id"], "0d4b1c3e-1a2b");
    assert_eq!(nudge["kind"], "permission-prompt");
    assert_eq!(nudge["pane"], "%7");
    let mode = fs::metadata(home.state().join("evidence"))
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o700);
}

#[test]
fn hook_keeps_huge_tool_events_bounded() {
    let home = Home::new();
    let big = "x".repeat(3 << 20);
    let event = format!(
        r#"{{"session_id":"s-big","hook_event_name":"PostToolUse","tool_name":"Read","message":"{}","tool_response":{{"content":"{big}"}}}}"#,
        "m".repeat(5000)
    );
    let (out, _) = home.run(&["hook"], event.as_bytes());
    assert_eq!(out.status.code(), Some(0));
    let bytes = fs::read(home.state().join("evidence/s-big.json")).unwrap();
    assert!(bytes.len() < 4096, "evidence stays small: {}", bytes.len());
    let ev: HookEvidence = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(
        ev.get(HookKind::PostToolUse).unwrap().tool.as_deref(),
        Some("Read")
    );
}

#[test]
fn concurrent_hooks_of_one_session_lose_no_event() {
    let home = Home::new();
    let events = [
        r#"{"session_id":"s-par","hook_event_name":"UserPromptSubmit"}"#,
        r#"{"session_id":"s-par","hook_event_name":"PreToolUse","tool_name":"Bash"}"#,
        r#"{"session_id":"s-par","hook_event_name":"PostToolUse","tool_name":"Bash"}"#,
        r#"{"session_id":"s-par","hook_event_name":"Notification","notification_type":"idle_prompt"}"#,
        r#"{"session_id":"s-par","hook_event_name":"Stop"}"#,
    ];
    let env = home.env();
    std::thread::scope(|scope| {
        for event in events {
            let env = &env;
            scope.spawn(move || {
                let refs: Vec<(&str, &Path)> = env.iter().map(|(k, v)| (*k, v.as_path())).collect();
                let (out, _) = agentpane(&["hook"], &refs, event.as_bytes());
                assert_eq!(out.status.code(), Some(0));
            });
        }
    });
    let ev: HookEvidence =
        serde_json::from_slice(&fs::read(home.state().join("evidence/s-par.json")).unwrap())
            .unwrap();
    let mut kinds: Vec<HookKind> = ev.events.iter().map(|r| r.kind).collect();
    kinds.sort();
    assert_eq!(
        kinds,
        [
            HookKind::UserPromptSubmit,
            HookKind::PreToolUse,
            HookKind::PostToolUse,
            HookKind::IdlePrompt,
            HookKind::Stop
        ]
    );
    let leftovers: Vec<_> = fs::read_dir(home.state().join("evidence"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(
        leftovers.len(),
        1,
        "no lock or temp files left: {leftovers:?}"
    );
}

// ---------------------------------------------------------------- settings.json round trips

const USER_SETTINGS: &str = r#"{
  "model": "opus",
  "permissions": {
    "allow": [
      "Bash(npm test:*)"
    ],
    "deny": []
  },
  "hooks": {
    "Stop": [
      {
        "matcher": "",
        "hooks": [
          {
            "type": "command",
            "command": "notify-send 'Claude finished'"
          }
        ]
      }
    ],
    "PreToolUse": [
      {
        "matcher": "Bash",
        "hooks": [
          {
            "type": "command",
            "command": "~/.claude/guard.sh",
            "timeout": 5
          }
        ]
      }
    ]
  },
  "statusLine": {
    "type": "command",
    "command": "~/.claude/statusline.sh"
  },
  "alwaysThinkingEnabled": true
}
"#;

fn backups(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().contains(".agentpane-backup-"))
        .collect();
    v.sort();
    v
}

fn ours(v: &Value, event: &str) -> usize {
    v["hooks"][event]
        .as_array()
        .map(|groups| {
            groups
                .iter()
                .flat_map(|g| g["hooks"].as_array().cloned().unwrap_or_default())
                .filter(|h| {
                    h["command"]
                        .as_str()
                        .is_some_and(|c| c.ends_with("agentpane hook"))
                })
                .count()
        })
        .unwrap_or(0)
}

#[test]
fn install_keeps_user_hooks_and_uninstall_restores_the_file() {
    let home = Home::new();
    let claude = home.dir.path().join("claude");
    fs::create_dir_all(&claude).unwrap();
    let settings = claude.join("settings.json");
    fs::write(&settings, USER_SETTINGS).unwrap();
    fs::set_permissions(&settings, fs::Permissions::from_mode(0o644)).unwrap();
    let file = settings.to_str().unwrap();

    let (out, _) = home.run(&["hooks", "install", "--settings", file], b"");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let installed = fs::read_to_string(&settings).unwrap();
    let v: Value = serde_json::from_str(&installed).unwrap();
    for event in agentpane::evidence::settings::EVENTS {
        assert_eq!(ours(&v, event), 1, "{event}");
    }
    // User hooks untouched, in place, first.
    assert_eq!(
        v["hooks"]["Stop"][0]["hooks"][0]["command"],
        "notify-send 'Claude finished'"
    );
    assert_eq!(v["hooks"]["PreToolUse"][0]["matcher"], "Bash");
    assert_eq!(v["hooks"]["PreToolUse"][0]["hooks"][0]["timeout"], 5);
    // Unrelated keys and their order kept.
    let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "model",
            "permissions",
            "hooks",
            "statusLine",
            "alwaysThinkingEnabled"
        ]
    );
    // Backup is the original, byte for byte.
    let b = backups(&claude);
    assert_eq!(b.len(), 1);
    assert_eq!(fs::read_to_string(&b[0]).unwrap(), USER_SETTINGS);
    let mode = fs::metadata(&settings).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o644, "permissions kept");

    // Install twice = once.
    let (out, _) = home.run(&["hooks", "install", "--settings", file], b"");
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains("already installed"));
    assert_eq!(fs::read_to_string(&settings).unwrap(), installed);
    assert_eq!(backups(&claude).len(), 1, "no backup when nothing changes");

    // Uninstall restores the original, here byte for byte (same layout).
    let (out, _) = home.run(&["hooks", "uninstall", "--settings", file], b"");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(fs::read_to_string(&settings).unwrap(), USER_SETTINGS);
    // Uninstall again: nothing to do.
    let (out, _) = home.run(&["hooks", "uninstall", "--settings", file], b"");
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(fs::read_to_string(&settings).unwrap(), USER_SETTINGS);
}

#[test]
fn uninstall_restores_the_value_of_an_oddly_formatted_file() {
    let home = Home::new();
    let settings = home.dir.path().join("settings.json");
    let original = "{\"hooks\":{\"Notification\":[]},\"env\":{\"B\":\"2\",\"A\":\"1\"}}";
    fs::write(&settings, original).unwrap();
    let file = settings.to_str().unwrap();
    home.run(&["hooks", "install", "--settings", file], b"");
    home.run(&["hooks", "install", "--settings", file], b"");
    home.run(&["hooks", "uninstall", "--settings", file], b"");
    let after = fs::read_to_string(&settings).unwrap();
    let before: Value = serde_json::from_str(original).unwrap();
    let now: Value = serde_json::from_str(&after).unwrap();
    assert_eq!(now, before);
    // The user's empty Notification array stays; install-created arrays are gone.
    assert_eq!(now["hooks"]["Notification"], serde_json::json!([]));
    assert_eq!(
        serde_json::to_string(&now).unwrap(),
        serde_json::to_string(&before).unwrap(),
        "key order kept"
    );
}

#[test]
fn install_creates_a_missing_file_and_uninstall_empties_it() {
    let home = Home::new();
    let claude = home.dir.path().join("cfg");
    let (out, _) = {
        let mut env = home.env();
        env.push(("CLAUDE_CONFIG_DIR", claude.clone()));
        let refs: Vec<(&str, &Path)> = env.iter().map(|(k, v)| (*k, v.as_path())).collect();
        agentpane(&["hooks", "install"], &refs, b"")
    };
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let settings = claude.join("settings.json");
    let v: Value = serde_json::from_slice(&fs::read(&settings).unwrap()).unwrap();
    assert_eq!(ours(&v, "SessionEnd"), 1);
    assert!(backups(&claude).is_empty(), "nothing to back up");
    let (out, _) = home.run(
        &[
            "hooks",
            "uninstall",
            "--settings",
            settings.to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(0));
    let v: Value = serde_json::from_slice(&fs::read(&settings).unwrap()).unwrap();
    assert_eq!(v, serde_json::json!({}));
}

#[test]
fn symlinked_settings_stay_a_symlink() {
    let home = Home::new();
    let dotfiles = home.dir.path().join("dotfiles");
    fs::create_dir_all(&dotfiles).unwrap();
    let target = dotfiles.join("claude-settings.json");
    fs::write(&target, "{\n  \"model\": \"sonnet\"\n}\n").unwrap();
    let link = home.dir.path().join("settings.json");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let (out, _) = home.run(
        &["hooks", "install", "--settings", link.to_str().unwrap()],
        b"",
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    let v: Value = serde_json::from_slice(&fs::read(&target).unwrap()).unwrap();
    assert_eq!(ours(&v, "Stop"), 1);
    assert_eq!(v["model"], "sonnet");
}

#[test]
fn invalid_settings_are_refused_untouched() {
    let home = Home::new();
    let settings = home.dir.path().join("settings.json");
    fs::write(&settings, "{ \"model\": \"opus\", }").unwrap();
    let (out, _) = home.run(
        &["hooks", "install", "--settings", settings.to_str().unwrap()],
        b"",
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not valid JSON"), "{err}");
    assert_eq!(
        fs::read_to_string(&settings).unwrap(),
        "{ \"model\": \"opus\", }"
    );
    assert!(backups(home.dir.path()).is_empty());
}

// ---------------------------------------------------------------- totality

mod totality {
    use super::*;
    use agentpane::evidence::hook::HookInput;
    use agentpane::evidence::{countdown, parse_reset};
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
