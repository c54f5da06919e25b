//! Event order across hook, session record, pane and transcript.

use super::*;

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
