use super::*;
use crate::scan::testkit::{report, t};

fn seg(reports: &[PaneReport]) -> String {
    render(
        DEFAULT_FORMAT,
        &Icons::default(),
        &Counts::of(reports, t(0)),
        t(0),
    )
}

#[test]
fn no_agents_render_nothing() {
    assert_eq!(seg(&[]), "");
}

#[test]
fn idle_and_seen_agents_alone_render_nothing() {
    let mut seen = report(2, 1, State::YourTurn, 0);
    seen.status.seen = true;
    assert_eq!(seg(&[report(1, 1, State::Idle, 0), seen]), "");
}

#[test]
fn counts_show_only_non_zero_states_in_order() {
    let r = [
        report(1, 1, State::Working, 0),
        report(2, 1, State::Working, 0),
        report(3, 2, State::YourTurn, 0),
        report(4, 2, State::Attention, 0),
        report(5, 3, State::Stalled, 0),
        report(6, 3, State::Idle, 0),
    ];
    assert_eq!(seg(&r), "⚡2 ●1 ⚠1 ⏳1");
}

#[test]
fn rate_limit_countdown_follows_attention() {
    let mut limited = report(1, 1, State::Attention, 0);
    limited.status.resets_at = Some(t(41 * 60 - 30));
    let mut past = report(2, 1, State::Attention, 0);
    past.status.resets_at = Some(t(-10));
    assert_eq!(seg(&[limited, past]), "⚠2 ↻41m");
}

#[test]
fn countdown_units() {
    assert_eq!(countdown(t(30), t(0)), "30s");
    assert_eq!(countdown(t(125 * 60), t(0)), "2h05m");
    assert_eq!(countdown(t(-5), t(0)), "0s");
}

#[test]
fn custom_format_and_icons() {
    let icons = Icons::default()
        .with_overrides("working=W, your-turn=Y")
        .unwrap();
    let c = Counts::of(
        &[
            report(1, 1, State::Working, 0),
            report(2, 1, State::YourTurn, 0),
        ],
        t(0),
    );
    assert_eq!(
        render("[{your_turn}|{working}] {waiting}", &icons, &c, t(0)),
        "[Y1|W1]"
    );
    assert_eq!(render("{working_count}/{total}", &icons, &c, t(0)), "1/2");
    assert_eq!(
        render("{working_count}", &icons, &Counts::default(), t(0)),
        ""
    );
    assert_eq!(render("{working} {nope}", &icons, &c, t(0)), "W1 {nope}");
}

#[test]
fn bad_icon_spec_is_an_error() {
    assert!(Icons::default().with_overrides("working").is_err());
    assert!(Icons::default().with_overrides("wroking=x").is_err());
}

#[test]
fn segment_is_always_one_line() {
    let icons = Icons::default().with_overrides("working=a\nb").unwrap();
    let c = Counts::of(&[report(1, 1, State::Working, 0)], t(0));
    assert_eq!(render("{working}\n{reset}", &icons, &c, t(0)), "a b1");
}

#[test]
fn window_takes_the_most_urgent_state() {
    let r = [
        report(1, 1, State::Working, 5),
        report(2, 1, State::YourTurn, 0),
        report(3, 2, State::Working, 0),
    ];
    let w = windows(&r, &Icons::default());
    assert_eq!(w.len(), 2);
    assert_eq!(
        (w[0].window_id.as_str(), w[0].state, w[0].glyph.as_str()),
        ("@1", State::YourTurn, "●")
    );
    assert_eq!(w[0].pane_id, "%2");
    assert_eq!(w[0].panes.len(), 2);
    assert_eq!(w[1].state, State::Working);
}

#[test]
fn seen_your_turn_ranks_below_working() {
    let mut seen = report(1, 1, State::YourTurn, 10);
    seen.status.seen = true;
    let w = windows(&[seen, report(2, 1, State::Working, 0)], &Icons::default());
    assert_eq!(w[0].state, State::Working);
}

#[test]
fn ties_go_to_the_newest_evidence() {
    let r = [
        report(1, 1, State::YourTurn, 0),
        report(2, 1, State::YourTurn, 9),
    ];
    assert_eq!(most_urgent(&r).unwrap().resolved.pane.pane_id, "%2");
    let r = [
        report(2, 1, State::YourTurn, 9),
        report(1, 1, State::YourTurn, 0),
    ];
    assert_eq!(most_urgent(&r).unwrap().resolved.pane.pane_id, "%2");
}

#[test]
fn windows_are_in_tmux_order() {
    let r = [
        report(1, 3, State::Working, 0),
        report(2, 1, State::Working, 0),
    ];
    let w = windows(&r, &Icons::default());
    assert_eq!(w[0].window_index, 1);
    assert_eq!(w[1].window_index, 3);
}
