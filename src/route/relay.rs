//! Automatic relays between two panes (docs/design.md#loop-guard): when one side's turn ends, its
//! answer goes to the other side, and back, for a bounded number of round trips; then the
//! human is called (ESCALATED) instead of sending. Acknowledgement-only answers ("thanks",
//! "you're welcome", "고마워", "不客气") end the thread instead of starting another lap of
//! politeness. The logic is a pure step function so the watcher and the foreground
//! `agentpane relay` loop run the same code.

use serde::Serialize;

use super::ack::is_acknowledgement;
use super::deliver::is_free;
use crate::scan::PaneReport;
use crate::state::State;

/// One thing the relay wants done after a scan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "action", rename_all = "kebab-case")]
pub enum Action {
    /// Send `text` (the answer, before templating) from `src` to `dst`.
    Route {
        src: String,
        dst: String,
        round: u32,
        text: String,
    },
    /// A turn ended but nothing is sent (no answer text, or the side that was not expected).
    Skip { pane: String, reason: String },
    /// The round limit is reached or an agent failed: stop and call the human.
    Escalate { reason: String },
    /// The thread ended on its own (an acknowledgement, a pane gone).
    Finish { reason: String },
}

/// A relay between panes `a` and `b` (pane ids).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RelayState {
    pub a: String,
    pub b: String,
    /// Round trips allowed before escalating.
    pub max_rounds: u32,
    /// Routes sent so far (two per round trip).
    pub sent: u32,
    /// The side whose turn end is relayed next (`None` until the first one).
    expect: Option<usize>,
    /// The last turn key seen closed per side.
    keys: [Option<String>; 2],
    started: bool,
    /// A route held until its destination is free: (src side, round, text).
    pending: Option<(usize, u32, String)>,
    /// Set once the relay escalated or finished; later steps do nothing.
    pub over: bool,
}

impl RelayState {
    /// A fresh relay; the first [`step`](RelayState::step) only records a baseline, so turns
    /// that ended before the relay started are history, not news.
    pub fn new(a: &str, b: &str, max_rounds: u32) -> RelayState {
        RelayState {
            a: a.to_string(),
            b: b.to_string(),
            max_rounds,
            sent: 0,
            expect: None,
            keys: [None, None],
            started: false,
            pending: None,
            over: false,
        }
    }

    /// A relay that goes on from a recorded point (a registration): the turn keys each side
    /// had closed, the side expected next and the routes sent. Its first step is news, not a
    /// baseline: a turn that ended since was not seen yet, and is relayed.
    pub fn resume(
        a: &str,
        b: &str,
        max_rounds: u32,
        sent: u32,
        keys: [Option<String>; 2],
        expect: Option<usize>,
        pending: Option<Pending>,
    ) -> RelayState {
        RelayState {
            sent,
            keys,
            expect: expect.filter(|e| *e < 2),
            started: true,
            pending: pending
                .filter(|p| p.side < 2)
                .map(|p| (p.side, p.round, p.text)),
            ..RelayState::new(a, b, max_rounds)
        }
    }

    /// The route held for a busy destination, if any (kept in a registration, so a watcher
    /// restart does not lose it).
    pub fn pending(&self) -> Option<Pending> {
        self.pending.as_ref().map(|(side, round, text)| Pending {
            side: *side,
            round: *round,
            text: text.clone(),
        })
    }

    /// The turn key each side was last seen closing (what [`resume`](RelayState::resume)
    /// takes back).
    pub fn keys(&self) -> &[Option<String>; 2] {
        &self.keys
    }

    /// True once the relay has a baseline (its first step, or resumed).
    pub fn started(&self) -> bool {
        self.started
    }

    /// The side whose turn end is relayed next.
    pub fn expect(&self) -> Option<usize> {
        self.expect
    }

    fn pane(&self, side: usize) -> &str {
        if side == 0 {
            &self.a
        } else {
            &self.b
        }
    }

    /// The current round (1-based).
    pub fn round(&self) -> u32 {
        self.sent / 2 + 1
    }

    /// Advances the relay on one scan. `answer` gives the clean last answer of a pane; it is
    /// only called for a turn that just ended on the side whose answer would be sent.
    pub fn step(
        &mut self,
        reports: &[PaneReport],
        answer: &mut dyn FnMut(&PaneReport) -> Option<String>,
    ) -> Vec<Action> {
        let turns: Vec<Turn> = reports.iter().map(Turn::of).collect();
        let mut by_pane = |pane: &str| {
            reports
                .iter()
                .find(|r| r.resolved.pane.pane_id == pane)
                .and_then(&mut *answer)
        };
        self.step_turns(&turns, &mut by_pane)
    }

    /// [`step`](RelayState::step) on the few facts it needs per pane.
    pub fn step_turns(
        &mut self,
        turns: &[Turn],
        answer: &mut dyn FnMut(&str) -> Option<String>,
    ) -> Vec<Action> {
        if self.over {
            return Vec::new();
        }
        let find = |id: &str| turns.iter().find(|t| t.pane == id);
        let sides = [find(&self.a), find(&self.b)];
        for (side, turn) in sides.iter().enumerate() {
            if turn.is_none() {
                self.over = true;
                return vec![Action::Finish {
                    reason: format!("pane {} no longer runs an agent", self.pane(side)),
                }];
            }
        }
        let sides = [sides[0].expect("checked"), sides[1].expect("checked")];
        if !self.started {
            self.started = true;
            for (side, t) in sides.iter().enumerate() {
                self.keys[side] = t.closed_key();
            }
            return Vec::new();
        }
        let mut actions = Vec::new();
        if let Some((src, round, text)) = self.pending.take() {
            let dst = 1 - src;
            if is_free(sides[dst].state) {
                // Whatever turn the destination just closed was not a reply to this message.
                self.keys[dst] = sides[dst].closed_key();
                actions.push(Action::Route {
                    src: self.pane(src).to_string(),
                    dst: self.pane(dst).to_string(),
                    round,
                    text,
                });
            } else {
                self.pending = Some((src, round, text));
            }
        }
        for (side, t) in sides.iter().enumerate() {
            if self
                .pending
                .as_ref()
                .is_some_and(|(src, _, _)| 1 - src == side)
            {
                continue;
            }
            let key = t.closed_key();
            if key.is_none() || key == self.keys[side] {
                continue;
            }
            self.keys[side] = key;
            let pane = self.pane(side).to_string();
            if self.expect.is_some_and(|e| e != side) {
                actions.push(Action::Skip {
                    pane,
                    reason: "turn ended out of order (a human spoke to it); not relayed".into(),
                });
                continue;
            }
            if t.state == State::Attention {
                self.over = true;
                actions.push(Action::Escalate {
                    reason: format!(
                        "ESCALATED: {pane} needs attention ({}) in round {}",
                        t.reason.as_deref().unwrap_or("error"),
                        self.round()
                    ),
                });
                return actions;
            }
            let Some(text) = answer(&pane).filter(|t| !t.trim().is_empty()) else {
                actions.push(Action::Skip {
                    pane,
                    reason: "turn ended without an answer text".into(),
                });
                continue;
            };
            if is_acknowledgement(&text) {
                self.over = true;
                actions.push(Action::Finish {
                    reason: format!("{pane} only acknowledged; the thread is done"),
                });
                return actions;
            }
            if self.sent >= self.max_rounds.saturating_mul(2) {
                self.over = true;
                actions.push(Action::Escalate {
                    reason: format!(
                        "ESCALATED: {} round trips between {} and {} without an end; over to you",
                        self.max_rounds, self.a, self.b
                    ),
                });
                return actions;
            }
            let other = 1 - side;
            if is_free(sides[other].state) {
                actions.push(Action::Route {
                    src: pane,
                    dst: self.pane(other).to_string(),
                    round: self.round(),
                    text,
                });
            } else {
                actions.push(Action::Skip {
                    pane: self.pane(other).to_string(),
                    reason: format!(
                        "busy ({}); the answer of {pane} waits for it",
                        sides[other].state
                    ),
                });
                self.pending = Some((side, self.round(), text));
            }
            self.sent += 1;
            self.expect = Some(other);
        }
        actions
    }
}

/// A route held until its destination is free: the side whose answer it is, its round, the
/// answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Pending {
    pub side: usize,
    pub round: u32,
    pub text: String,
}

/// What the relay needs to know about one pane after a scan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Turn {
    pub pane: String,
    pub state: State,
    pub turn_key: Option<String>,
    pub reason: Option<String>,
}

impl Turn {
    /// The facts of one scanned pane.
    pub fn of(r: &PaneReport) -> Turn {
        Turn {
            pane: r.resolved.pane.pane_id.clone(),
            state: r.status.state,
            turn_key: r.status.turn_key.clone(),
            reason: r.status.reason.clone(),
        }
    }

    /// The turn key of a turn that is closed now (your-turn or attention), if any.
    pub fn closed_key(&self) -> Option<String> {
        match self.state {
            State::YourTurn | State::Attention => self.turn_key.clone(),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn turn(pane: &str, state: State, key: &str) -> Turn {
        Turn {
            pane: pane.into(),
            state,
            turn_key: Some(key.into()),
            reason: None,
        }
    }

    /// Runs one scan where `a` and `b` are in the given states/keys.
    fn scan(
        relay: &mut RelayState,
        a: (State, &str),
        b: (State, &str),
        answers: &[(&str, &str)],
    ) -> Vec<Action> {
        let turns = [turn("%1", a.0, a.1), turn("%2", b.0, b.1)];
        let mut answer = |p: &str| {
            answers
                .iter()
                .find(|(pane, _)| *pane == p)
                .map(|(_, t)| t.to_string())
        };
        relay.step_turns(&turns, &mut answer)
    }

    fn routes(actions: &[Action]) -> Vec<(String, String, u32)> {
        actions
            .iter()
            .filter_map(|a| match a {
                Action::Route {
                    src, dst, round, ..
                } => Some((src.clone(), dst.clone(), *round)),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn first_scan_is_a_baseline_then_turns_alternate_and_rounds_count() {
        use State::{Working as W, YourTurn as Y};
        let mut r = RelayState::new("%1", "%2", 2);
        let ans = [("%1", "Question from A?"), ("%2", "Answer from B.")];
        // A finished before the relay started: history, not news.
        assert!(scan(&mut r, (Y, "a0"), (Y, "b0"), &ans).is_empty());
        assert!(scan(&mut r, (W, "a0"), (Y, "b0"), &ans).is_empty());
        let step = scan(&mut r, (Y, "a1"), (Y, "b0"), &ans);
        assert_eq!(routes(&step), [("%1".into(), "%2".into(), 1)]);
        // Same key again: nothing new.
        assert!(scan(&mut r, (Y, "a1"), (W, "b0"), &ans).is_empty());
        let step = scan(&mut r, (Y, "a1"), (Y, "b1"), &ans);
        assert_eq!(routes(&step), [("%2".into(), "%1".into(), 1)]);
        let step = scan(&mut r, (Y, "a2"), (Y, "b1"), &ans);
        assert_eq!(routes(&step), [("%1".into(), "%2".into(), 2)]);
        let step = scan(&mut r, (Y, "a2"), (Y, "b2"), &ans);
        assert_eq!(routes(&step), [("%2".into(), "%1".into(), 2)]);
        assert_eq!(r.sent, 4);
        // Two round trips done: the next answer goes to the human, not to B.
        let step = scan(&mut r, (Y, "a3"), (Y, "b2"), &ans);
        assert!(routes(&step).is_empty());
        assert!(
            matches!(&step[..], [Action::Escalate { reason }] if reason.starts_with("ESCALATED"))
        );
        assert!(r.over);
        assert!(
            scan(&mut r, (Y, "a4"), (Y, "b3"), &ans).is_empty(),
            "over means over"
        );
    }

    #[test]
    fn acknowledgement_ends_the_thread_without_relaying() {
        use State::YourTurn as Y;
        let mut r = RelayState::new("%1", "%2", 3);
        scan(&mut r, (Y, "a0"), (Y, "b0"), &[]);
        let step = scan(
            &mut r,
            (Y, "a1"),
            (Y, "b0"),
            &[("%1", "Please check lib.rs")],
        );
        assert_eq!(routes(&step).len(), 1);
        let step = scan(
            &mut r,
            (Y, "a1"),
            (Y, "b1"),
            &[("%2", "고마워, 도움이 됐어")],
        );
        assert!(routes(&step).is_empty());
        assert!(matches!(&step[..], [Action::Finish { .. }]));
        assert!(r.over);
    }

    #[test]
    fn out_of_order_turns_and_missing_answers_are_skipped() {
        use State::YourTurn as Y;
        let mut r = RelayState::new("%1", "%2", 3);
        scan(&mut r, (Y, "a0"), (Y, "b0"), &[]);
        let step = scan(&mut r, (Y, "a1"), (Y, "b0"), &[("%1", "Do X")]);
        assert_eq!(routes(&step).len(), 1);
        // A human talks to A again before B answered: A's new turn is not relayed.
        let step = scan(&mut r, (Y, "a2"), (Y, "b0"), &[("%1", "Also Y")]);
        assert!(matches!(&step[..], [Action::Skip { pane, .. }] if pane == "%1"));
        // B ends a turn but has no answer text: skipped, relay still expects B.
        let step = scan(&mut r, (Y, "a2"), (Y, "b1"), &[]);
        assert!(matches!(&step[..], [Action::Skip { pane, .. }] if pane == "%2"));
        let step = scan(&mut r, (Y, "a2"), (Y, "b2"), &[("%2", "X done in a.rs")]);
        assert_eq!(routes(&step), [("%2".into(), "%1".into(), 1)]);
    }

    #[test]
    fn a_busy_destination_holds_the_route_and_its_own_turn_is_not_a_reply() {
        use State::{Working as W, YourTurn as Y};
        let mut r = RelayState::new("%1", "%2", 3);
        let ans = [("%1", "Question from A?"), ("%2", "Unrelated B work.")];
        scan(&mut r, (Y, "a0"), (W, "b0"), &ans);
        let step = scan(&mut r, (Y, "a1"), (W, "b0"), &ans);
        assert!(routes(&step).is_empty());
        assert!(matches!(&step[..], [Action::Skip { pane, .. }] if pane == "%2"));
        assert!(scan(&mut r, (Y, "a1"), (W, "b0"), &ans).is_empty());
        // B finishes its unrelated turn: now free, A's answer goes out; B's turn is no reply.
        let step = scan(&mut r, (Y, "a1"), (Y, "b1"), &ans);
        assert_eq!(routes(&step), [("%1".into(), "%2".into(), 1)]);
        assert!(scan(&mut r, (Y, "a1"), (W, "b1"), &ans).is_empty());
        let step = scan(&mut r, (Y, "a1"), (Y, "b2"), &[("%2", "Reply to A.")]);
        assert_eq!(routes(&step), [("%2".into(), "%1".into(), 1)]);
    }

    #[test]
    fn a_resumed_relay_sends_what_ended_since_and_nothing_it_sent_before() {
        use State::YourTurn as Y;
        let ans = [("%1", "Question from A?"), ("%2", "Answer from B.")];
        // Recorded at registration: A had closed a0, B b0. A turn that ended before the
        // first step is news (no baseline is taken).
        let mut r = RelayState::resume(
            "%1",
            "%2",
            3,
            0,
            [Some("a0".into()), Some("b0".into())],
            None,
            None,
        );
        let step = scan(&mut r, (Y, "a1"), (Y, "b0"), &ans);
        assert_eq!(routes(&step), [("%1".into(), "%2".into(), 1)]);
        // What it records, taken back after a restart: the same turn is not sent again.
        let (keys, expect, sent) = (r.keys().clone(), r.expect(), r.sent);
        let mut again = RelayState::resume("%1", "%2", 3, sent, keys, expect, r.pending());
        assert!(scan(&mut again, (Y, "a1"), (Y, "b0"), &ans).is_empty());
        let step = scan(&mut again, (Y, "a1"), (Y, "b1"), &ans);
        assert_eq!(routes(&step), [("%2".into(), "%1".into(), 1)]);
        // A route held for a busy destination survives a restart and goes out once.
        let mut r = RelayState::resume("%1", "%2", 3, 0, [None, None], None, None);
        let step = scan(&mut r, (Y, "a1"), (State::Working, "b0"), &ans);
        assert!(routes(&step).is_empty());
        let held = r.pending().expect("held");
        let mut again = RelayState::resume(
            "%1",
            "%2",
            3,
            r.sent,
            r.keys().clone(),
            r.expect(),
            Some(held),
        );
        let step = scan(&mut again, (Y, "a1"), (Y, "b1"), &ans);
        assert_eq!(routes(&step), [("%1".into(), "%2".into(), 1)]);
        assert!(again.pending().is_none());
        assert!(scan(&mut again, (Y, "a1"), (Y, "b1"), &ans).is_empty());
    }

    #[test]
    fn attention_escalates_and_a_vanished_pane_finishes() {
        use State::{Attention as X, YourTurn as Y};
        let mut r = RelayState::new("%1", "%2", 3);
        scan(&mut r, (Y, "a0"), (Y, "b0"), &[]);
        let step = scan(&mut r, (X, "a1"), (Y, "b0"), &[("%1", "rate limited")]);
        assert!(matches!(&step[..], [Action::Escalate { .. }]));
        let mut r = RelayState::new("%1", "%2", 3);
        let step = r.step_turns(&[turn("%1", Y, "a0")], &mut |_| None);
        assert!(matches!(&step[..], [Action::Finish { reason }] if reason.contains("%2")));
    }
}
