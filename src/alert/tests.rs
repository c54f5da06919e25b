// Tests pass short-lived report slices; cloning into them reads better than from_ref.
#![allow(clippy::cloned_ref_to_slice_refs)]

use super::*;
use crate::scan::testkit::{focused, report, t};

struct Run {
    engine: Engine,
    mem: AlertMemory,
}

impl Run {
    fn new() -> Run {
        Run {
            engine: Engine::new(Config::default()),
            mem: AlertMemory::default(),
        }
    }

    fn step(&mut self, reports: &[PaneReport], now: i64) -> Vec<Action> {
        self.engine.step(reports, t(now), &mut self.mem)
    }

    fn delivered(&mut self, reports: &[PaneReport], now: i64) -> Vec<String> {
        self.step(reports, now)
            .into_iter()
            .filter_map(|a| match a {
                Action::Deliver(a) => Some(a.pane),
                _ => None,
            })
            .collect()
    }
}

#[test]
fn first_scan_is_history_and_never_alarms() {
    let mut run = Run::new();
    let done = report(1, 1, State::YourTurn, -100);
    assert!(run.step(&[done.clone()], 0).is_empty());
    assert!(run.delivered(&[done.clone()], 5).is_empty());
    assert!(run.delivered(&[done], 50).is_empty());
}

#[test]
fn turn_end_alerts_once_after_the_delay() {
    let mut run = Run::new();
    run.step(&[report(1, 1, State::Working, 0)], 0);
    let done = report(1, 1, State::YourTurn, 10);
    assert!(
        run.delivered(&[done.clone()], 10).is_empty(),
        "waits for the delay"
    );
    assert_eq!(run.engine.next_due(), Some(t(11)));
    assert_eq!(run.delivered(&[done.clone()], 11), ["%1"]);
    assert!(run.delivered(&[done.clone()], 12).is_empty());
    assert!(run.delivered(&[done], 300).is_empty());
}

#[test]
fn a_quick_follow_up_cancels_the_pending_alert() {
    let mut run = Run::new();
    run.step(&[report(1, 1, State::Working, 0)], 0);
    run.step(&[report(1, 1, State::YourTurn, 10)], 10);
    assert!(run
        .delivered(&[report(1, 1, State::Working, 10)], 10)
        .is_empty());
    assert_eq!(run.engine.next_due(), None);
    assert!(run
        .delivered(&[report(1, 1, State::Working, 10)], 12)
        .is_empty());
}

#[test]
fn restart_with_remembered_keys_does_not_replay() {
    let mut run = Run::new();
    run.step(&[report(1, 1, State::Working, 0)], 0);
    let done = report(1, 1, State::YourTurn, 10);
    run.step(&[done.clone()], 10);
    assert_eq!(run.delivered(&[done.clone()], 11), ["%1"]);
    let mut restarted = Run {
        engine: Engine::new(Config::default()),
        mem: run.mem.clone(),
    };
    restarted.step(&[report(1, 1, State::Working, 0)], 20);
    assert!(restarted.delivered(&[done.clone()], 21).is_empty());
    assert!(restarted.delivered(&[done], 30).is_empty());
}

#[test]
fn interrupted_and_seen_turns_never_alarm() {
    let mut run = Run::new();
    run.step(&[], 0);
    let mut interrupted = report(1, 1, State::YourTurn, 10);
    interrupted.status.reason = Some("interrupted".into());
    let mut seen = report(2, 1, State::YourTurn, 10);
    seen.status.seen = true;
    run.step(&[interrupted.clone(), seen.clone()], 10);
    assert!(run.delivered(&[interrupted, seen], 20).is_empty());
}

#[test]
fn waiting_attention_and_stalled_alert_too() {
    for state in [State::Waiting, State::Attention, State::Stalled] {
        let mut run = Run::new();
        run.step(&[], 0);
        run.step(&[report(1, 1, state, 5)], 5);
        assert_eq!(
            run.delivered(&[report(1, 1, state, 5)], 6),
            ["%1"],
            "{state}"
        );
    }
}

#[test]
fn several_turns_in_one_scan_alert_only_the_newest() {
    let mut run = Run::new();
    run.step(&[], 0);
    let r = [
        report(1, 1, State::YourTurn, 3),
        report(2, 2, State::YourTurn, 9),
        report(3, 3, State::Attention, 5),
    ];
    run.step(&r, 10);
    assert_eq!(run.delivered(&r, 11), ["%2"]);
    assert!(run.delivered(&r, 20).is_empty());
}

#[test]
fn user_reply_retracts_a_delivered_alert() {
    let mut run = Run::new();
    run.step(&[], 0);
    run.step(&[report(1, 1, State::YourTurn, 5)], 5);
    run.step(&[report(1, 1, State::YourTurn, 5)], 6);
    let actions = run.step(&[report(1, 1, State::Working, 30)], 30);
    assert!(
        matches!(&actions[..], [Action::Retract(a)] if a.pane == "%1"),
        "{actions:?}"
    );
    assert_eq!(run.engine.shown().count(), 0);
}

#[test]
fn focusing_the_pane_acknowledges_and_marks_seen() {
    let mut run = Run::new();
    run.step(&[], 0);
    let done = report(1, 1, State::YourTurn, 5);
    run.step(&[done.clone()], 5);
    run.step(&[done.clone()], 6);
    let actions = run.step(&[focused(done.clone())], 8);
    assert!(
        matches!(&actions[..], [Action::Acknowledge(a)] if a.pane == "%1"),
        "{actions:?}"
    );
    let mut again = [done];
    run.mem.apply_seen(&mut again);
    assert!(again[0].status.seen);
}

#[test]
fn a_turn_ending_in_the_focused_pane_is_seen_without_alarm() {
    let mut run = Run::new();
    run.step(&[], 0);
    let done = report(1, 1, State::YourTurn, 5);
    assert!(run.delivered(&[focused(done.clone())], 5).is_empty());
    assert!(
        run.delivered(&[done.clone()], 9).is_empty(),
        "leaving the pane does not alarm"
    );
    assert!(run.mem.is_seen(&alert_key(&done)));
}

#[test]
fn closed_pane_retracts_and_cancels() {
    let mut run = Run::new();
    run.step(&[], 0);
    run.step(&[report(1, 1, State::YourTurn, 5)], 5);
    run.step(&[report(1, 1, State::YourTurn, 5)], 6);
    run.step(
        &[
            report(1, 1, State::YourTurn, 5),
            report(2, 1, State::YourTurn, 7),
        ],
        7,
    );
    assert_eq!(run.engine.next_due(), Some(t(8)));
    let actions = run.step(&[], 20);
    assert_eq!(actions.len(), 1);
    assert!(matches!(&actions[0], Action::Retract(a) if a.pane == "%1"));
    assert_eq!(run.engine.next_due(), None);
}

#[test]
fn a_new_turn_after_a_delivered_one_alerts_again() {
    let mut run = Run::new();
    run.step(&[], 0);
    run.step(&[report(1, 1, State::YourTurn, 5)], 5);
    assert_eq!(
        run.delivered(&[report(1, 1, State::YourTurn, 5)], 6),
        ["%1"]
    );
    run.step(&[report(1, 1, State::Working, 20)], 20);
    run.step(&[report(1, 1, State::YourTurn, 40)], 40);
    assert_eq!(
        run.delivered(&[report(1, 1, State::YourTurn, 40)], 41),
        ["%1"]
    );
}

#[test]
fn alert_json_has_the_documented_fields() {
    let a = alert_of(&report(1, 1, State::YourTurn, 5), "k".into(), t(9));
    let v = serde_json::to_value(&a).unwrap();
    for field in ["agent", "pane", "state", "reason", "turn_key", "at"] {
        assert!(v.get(field).is_some(), "{field}");
    }
    assert_eq!(v["state"], "your-turn");
    assert_eq!(a.message(), "claude in s:1.1: your turn");
}

#[test]
fn the_alert_line_is_terminal_safe_and_its_json_exact() {
    let mut r = report(1, 1, State::Attention, 5);
    r.status.reason = Some(format!("api error: {}", crate::text::HOSTILE));
    std::sync::Arc::make_mut(&mut r.resolved).pane.session = "s\x1b]0;x\x07".into();
    let a = alert_of(&r, "k".into(), t(9));
    let line = a.message();
    crate::text::assert_terminal_safe(&line);
    assert_eq!(line, "claude in s:1.1: attention (api error: abcdef)");
    assert_eq!(a.reason.as_deref(), r.status.reason.as_deref());
}

#[test]
fn machine_driven_sessions_alert_only_when_asked() {
    let machine = |r: PaneReport| {
        let mut r = r;
        std::sync::Arc::make_mut(&mut r.resolved).machine_driven = true;
        r
    };
    let mut run = Run::new();
    run.step(&[machine(report(1, 1, State::Working, 0))], 0);
    let done = machine(report(1, 1, State::YourTurn, 10));
    assert!(run.delivered(&[done.clone()], 10).is_empty());
    assert!(
        run.delivered(&[done.clone()], 12).is_empty(),
        "codex exec is not alarmed"
    );

    let mut opted_in = Run {
        engine: Engine::new(Config {
            machine: true,
            ..Config::default()
        }),
        mem: AlertMemory::default(),
    };
    opted_in.step(&[machine(report(1, 1, State::Working, 0))], 0);
    opted_in.step(&[done.clone()], 10);
    assert_eq!(opted_in.delivered(&[done], 12), ["%1"]);
}

fn retrying(pane: u32, at: i64) -> PaneReport {
    let mut r = report(pane, 1, State::Attention, at);
    r.status.reason = Some("rate limit — retrying (attempt 2/5)".into());
    r.status.retry = Some(crate::state::Retry {
        attempt: Some(2),
        limit: Some(5),
        next_at: None,
    });
    r
}

fn gave_up(pane: u32, at: i64) -> PaneReport {
    let mut r = report(pane, 1, State::Attention, at);
    r.status.reason = Some("quota exceeded".into());
    r
}

#[test]
fn a_turn_that_retries_then_gives_up_is_alerted_once() {
    let mut run = Run::new();
    run.step(&[report(1, 1, State::Working, 0)], 0);
    run.step(&[retrying(1, 10)], 10);
    assert_eq!(run.delivered(&[retrying(1, 10)], 11), ["%1"]);
    // Each attempt, and the final error under the agent's own id, is the same turn.
    assert!(run.delivered(&[retrying(1, 30)], 30).is_empty());
    let actions = run.step(&[gave_up(1, 70)], 70);
    assert!(actions.is_empty(), "{actions:?}");
    assert!(run.delivered(&[gave_up(1, 70)], 80).is_empty());
    // What is on display says why now.
    let shown: Vec<_> = run.engine.shown().collect();
    assert_eq!(shown[0].reason.as_deref(), Some("quota exceeded"));
    // The next turn is news again.
    run.step(&[report(1, 1, State::Working, 90)], 90);
    run.step(&[gave_up(1, 100)], 100);
    assert_eq!(run.delivered(&[gave_up(1, 100)], 101), ["%1"]);
}

#[test]
fn a_retry_attempt_in_flight_keeps_the_turn_alerted_until_it_gives_up() {
    // Between two attempts the turn reads working under the same turn key: the alert stays
    // on display, and the agent's final error under its own id is that turn's.
    let mut run = Run::new();
    run.step(&[report(1, 1, State::Working, 0)], 0);
    let retry = retrying(1, 10);
    run.step(&[retry.clone()], 10);
    assert_eq!(run.delivered(&[retry.clone()], 11), ["%1"]);
    let mut attempt = report(1, 1, State::Working, 20);
    attempt.status.turn_key.clone_from(&retry.status.turn_key);
    let actions = run.step(&[attempt], 20);
    assert!(actions.is_empty(), "nothing retracted: {actions:?}");
    assert_eq!(run.engine.shown().count(), 1);
    let actions = run.step(&[gave_up(1, 70)], 70);
    assert!(actions.is_empty(), "{actions:?}");
    assert!(run.delivered(&[gave_up(1, 70)], 80).is_empty());
    // A new prompt (another turn key) after the retries is its own turn.
    run.step(&[retrying(1, 90)], 90);
    run.step(&[report(1, 1, State::Working, 95)], 95);
    run.step(&[gave_up(1, 100)], 100);
    assert_eq!(run.delivered(&[gave_up(1, 100)], 101), ["%1"]);
}

#[test]
fn retries_that_end_before_the_delay_deliver_one_alert_with_the_final_reason() {
    let mut run = Run::new();
    run.step(&[report(1, 1, State::Working, 0)], 0);
    run.step(&[retrying(1, 10)], 10);
    assert!(run.step(&[gave_up(1, 10)], 10).is_empty());
    let actions = run.step(&[gave_up(1, 10)], 11);
    assert!(
        matches!(&actions[..], [Action::Deliver(a)] if a.reason.as_deref() == Some("quota exceeded")),
        "{actions:?}"
    );
    assert!(run.delivered(&[gave_up(1, 10)], 20).is_empty());
}

#[test]
fn a_retrying_turn_seen_in_its_pane_is_not_alerted_again_when_it_gives_up() {
    let mut run = Run::new();
    run.step(&[report(1, 1, State::Working, 0)], 0);
    run.step(&[retrying(1, 10)], 10);
    assert_eq!(run.delivered(&[retrying(1, 10)], 11), ["%1"]);
    run.step(&[focused(retrying(1, 20))], 20);
    assert!(run.delivered(&[gave_up(1, 70)], 70).is_empty());
    assert!(run.delivered(&[gave_up(1, 70)], 75).is_empty());
}
