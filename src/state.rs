//! Classification (docs/design.md#states): a pure function of normalised events, a clock and the
//! freshness windows. It never reads the clock or the disk; callers pass both in.

use std::collections::HashSet;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::events::{Event, EventKind, Time};

/// What an agent session is doing, from the human's point of view.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum State {
    /// The agent is busy with a turn.
    Working,
    /// Blocked inside a turn on a human decision (permission, question).
    Waiting,
    /// The turn is over; control is back with the human.
    YourTurn,
    /// An open turn went quiet after this monitor saw it working.
    Stalled,
    /// API error, rate limit, auth, refusal.
    Attention,
    /// Nothing recent.
    Idle,
    /// No agent in the pane.
    None,
}

impl State {
    /// The name used on the command line and in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            State::Working => "working",
            State::Waiting => "waiting",
            State::YourTurn => "your-turn",
            State::Stalled => "stalled",
            State::Attention => "attention",
            State::Idle => "idle",
            State::None => "none",
        }
    }
}

impl std::fmt::Display for State {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Freshness windows (docs/design.md#freshness; defaults are Agent Island 1.7.1's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Windows {
    /// Semantic activity this recent counts as "active right now".
    pub active: Duration,
    /// An open turn stays `working` this long after its last event.
    pub open_turn: Duration,
    /// An open turn this monitor saw working is `stalled` until this long after its last event.
    pub stalled: Duration,
    /// A closed turn is `your-turn` this long.
    pub your_turn: Duration,
    /// Attention expires after this long (unless a rate-limit reset is still ahead).
    pub attention: Duration,
    /// Local activity within this long after a completion is bookkeeping, not the human.
    pub grace: Duration,
    /// A text-only message without stop reason closes the turn after this much quiet.
    pub settle: Duration,
}

impl Default for Windows {
    fn default() -> Windows {
        Windows {
            active: Duration::from_secs(18),
            open_turn: Duration::from_secs(5 * 60),
            stalled: Duration::from_secs(15 * 60),
            your_turn: Duration::from_secs(20 * 60),
            attention: Duration::from_secs(30 * 60),
            grace: Duration::from_secs(25),
            settle: Duration::from_secs(3),
        }
    }
}

/// What a monitor knows about a session besides its transcript (empty for one-shot
/// `classify`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Observation {
    /// The monitor saw this turn `working` (turn key matched).
    pub seen_working: bool,
    /// The newest write to the session's subagent transcripts: an open turn whose own
    /// transcript is quiet is alive while a subagent it started still writes.
    pub subagent_life: Option<Time>,
}

/// The classification of one session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Status {
    pub state: State,
    /// Why, when there is more to say: `interrupted`, `tool: Bash`, `rate_limit`, …
    pub reason: Option<String>,
    /// The turn (or deciding record) this state belongs to.
    pub turn_key: Option<String>,
    /// Semantic time of the deciding event.
    pub at: Option<Time>,
    /// The latest semantic or progress activity of the turn.
    pub last_activity: Option<Time>,
    /// When a rate limit resets, if known.
    pub resets_at: Option<Time>,
    /// The turn is open (the agent owes an answer).
    pub turn_open: bool,
    /// The human came back after the turn closed (only meaningful for `your-turn`).
    pub seen: bool,
    /// The agent is retrying a failed API call (read from its screen): where the retries
    /// stand.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry: Option<Retry>,
    /// While `waiting`: what the agent asks the human to decide, in full
    /// (docs/design.md#deciding-from-anywhere).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request: Option<crate::read::request::Request>,
    /// The open turn's deciding event is the model's text without a stop reason: the answer
    /// is written, the turn closes once the log has been quiet for the settle window.
    #[serde(skip)]
    pub settling: bool,
}

/// Where an agent's retries of a failed API call stand.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Retry {
    /// The attempt being waited for, when the agent shows it.
    pub attempt: Option<u32>,
    /// How many attempts it makes in all, when it shows it.
    pub limit: Option<u32>,
    /// When the next attempt starts, when it says.
    pub next_at: Option<Time>,
}

impl Status {
    /// A status with nothing known.
    pub fn idle() -> Status {
        Status {
            state: State::Idle,
            reason: None,
            turn_key: None,
            at: None,
            last_activity: None,
            resets_at: None,
            turn_open: false,
            seen: false,
            retry: None,
            request: None,
            settling: false,
        }
    }
}

/// How urgent a state is, for merging (higher wins). `your-turn` already seen ranks below
/// `working` (docs/design.md#states).
pub fn urgency(state: State, seen: bool) -> u8 {
    match state {
        State::Attention => 8,
        State::Waiting => 7,
        State::YourTurn if !seen => 6,
        State::Stalled => 5,
        State::Working => 4,
        State::YourTurn => 3,
        State::Idle => 2,
        State::None => 1,
    }
}

/// Most urgent first, then the newest evidence, then the target: the order of the picker and
/// the web page. Each side is `(state, seen, at, target)`.
pub fn urgent_first(
    a: (State, bool, Option<Time>, &str),
    b: (State, bool, Option<Time>, &str),
) -> std::cmp::Ordering {
    urgency(b.0, b.1)
        .cmp(&urgency(a.0, a.1))
        .then(b.2.cmp(&a.2))
        .then(a.3.cmp(b.3))
}

/// The decisive main-thread event, found walking backwards from the end.
#[derive(Debug)]
enum Decision {
    Open {
        reason: Option<String>,
    },
    /// Blocked on the human inside an open turn.
    Waiting {
        reason: String,
    },
    Closed,
    SettleClose,
    Interrupted,
    Attention {
        reason: String,
        resets_at: Option<Time>,
    },
}

/// True when `event` alone decides a session's state (used by readers to stop early). Tool
/// uses need the later results, which a backward reader has already seen.
pub fn is_decisive(event: &Event) -> bool {
    !event.sidechain
        && !matches!(
            event.kind,
            EventKind::Meta | EventKind::Progress | EventKind::LocalCommand | EventKind::TurnEnd
        )
}

/// Classifies a session from its events in file order (usually the tail a reader collected).
pub fn classify(events: &[Event], now: Time, windows: &Windows, obs: Observation) -> Status {
    let ordered = chronological(events);
    let events: &[Event] = &ordered;
    let status = classify_turn(events, now, windows, obs);
    // A turn that closed while a subagent it started still runs in the background is not
    // over: the subagent reports back and a new turn answers (Claude Code's async `Agent`).
    let closed = !status.turn_open
        && status.at.is_some()
        && matches!(status.state, State::YourTurn | State::Idle)
        && status.reason.is_none();
    match pending_background(events) {
        Some((launch, description)) if closed => {
            let since = events
                .iter()
                .position(|e| std::ptr::eq(e, launch))
                .unwrap_or(0);
            let life = events[since..]
                .iter()
                .filter(|e| !e.sidechain)
                .fold(launch.at, |t, e| max_time(t, e.at));
            let reason = Some(format!("background agent: {description}"));
            open(launch, reason, life, now, windows, obs)
        }
        _ => status,
    }
}

/// File order is not event order: Claude Code 2.1.197 can write a session's first reply and
/// its turn end before the prompt that asked for it. When the last deciding event is a
/// prompt, the records before it stamped later than it (back to the first deciding record
/// that is not) happened after it: they are moved after it.
fn chronological(events: &[Event]) -> std::borrow::Cow<'_, [Event]> {
    use std::borrow::Cow;
    let Some(d) = events.iter().rposition(is_decisive) else {
        return Cow::Borrowed(events);
    };
    let (EventKind::UserPrompt, Some(prompt_at)) = (&events[d].kind, events[d].at) else {
        return Cow::Borrowed(events);
    };
    let mut early = Vec::new();
    for (i, ev) in events[..d].iter().enumerate().rev() {
        if ev.at.is_some_and(|at| at > prompt_at) {
            early.push(i);
        } else if is_decisive(ev) {
            break;
        }
    }
    if early.is_empty() {
        return Cow::Borrowed(events);
    }
    early.reverse();
    let mut out: Vec<Event> = events
        .iter()
        .enumerate()
        .filter(|(i, _)| early.binary_search(i).is_err())
        .map(|(_, e)| e.clone())
        .collect();
    out.extend(early.iter().map(|&i| events[i].clone()));
    Cow::Owned(out)
}

/// The newest background subagent started in the current turn (after the last human
/// prompt) that has not reported back.
fn pending_background(events: &[Event]) -> Option<(&Event, &str)> {
    let turn_start = events
        .iter()
        .rposition(|e| !e.sidechain && e.kind == EventKind::UserPrompt)
        .map_or(0, |i| i + 1);
    let mut running: Vec<(&Event, &str, &str)> = Vec::new();
    for ev in events[turn_start..].iter().filter(|e| !e.sidechain) {
        match &ev.kind {
            EventKind::BackgroundStart {
                agent, description, ..
            } => running.push((ev, agent, description)),
            EventKind::BackgroundDone { agent: Some(id) } => {
                match running.iter().position(|(_, a, _)| a == id) {
                    Some(i) => {
                        running.remove(i);
                    }
                    None if !running.is_empty() => {
                        running.remove(0);
                    }
                    None => {}
                }
            }
            EventKind::BackgroundDone { agent: None } if !running.is_empty() => {
                running.remove(0);
            }
            _ => {}
        }
    }
    running.last().map(|(ev, _, d)| (*ev, *d))
}

fn classify_turn(events: &[Event], now: Time, windows: &Windows, obs: Observation) -> Status {
    // Every tool result in the tail: a result always follows its tool use, and parallel tool
    // calls of one message may see results land between the message's lines.
    let results: HashSet<&str> = events
        .iter()
        .filter(|e| !e.sidechain)
        .filter_map(|e| match &e.kind {
            EventKind::ToolResult { ids } | EventKind::BackgroundStart { ids, .. } => Some(ids),
            _ => None,
        })
        .flatten()
        .map(String::as_str)
        .collect();
    let mut life: Option<Time> = None;
    let mut local: Option<Time> = None;
    let mut ended_by_record: Option<&Event> = None;
    let mut decided: Option<(&Event, Decision)> = None;

    for ev in events.iter().rev() {
        if ev.sidechain {
            life = max_time(life, ev.at);
            continue;
        }
        let decision = match &ev.kind {
            EventKind::Meta => continue,
            EventKind::Progress => {
                life = max_time(life, ev.at);
                continue;
            }
            EventKind::LocalCommand => {
                local = max_time(local, ev.at);
                continue;
            }
            EventKind::TurnEnd => {
                if ended_by_record.is_none() {
                    ended_by_record = Some(ev);
                }
                continue;
            }
            EventKind::ToolResult { .. }
            | EventKind::BackgroundStart { .. }
            | EventKind::BackgroundDone { .. } => Decision::Open { reason: None },
            EventKind::ToolUse { .. } => {
                // Every pending tool of this API message, which may span several lines.
                let pending: Vec<&str> = events
                    .iter()
                    .filter(|e| {
                        std::ptr::eq(*e, ev)
                            || (e.message_id.is_some() && e.message_id == ev.message_id)
                    })
                    .filter_map(|e| match &e.kind {
                        EventKind::ToolUse { ids, names } => Some(ids.iter().zip(names)),
                        _ => None,
                    })
                    .flatten()
                    .filter(|(id, _)| !results.contains(id.as_str()))
                    .map(|(_, name)| name.as_str())
                    .collect();
                let reason = (!pending.is_empty()).then(|| format!("tool: {}", pending.join(", ")));
                Decision::Open { reason }
            }
            EventKind::AwaitingHuman { ids, reason } => {
                if !ids.is_empty() && ids.iter().all(|id| results.contains(id.as_str())) {
                    Decision::Open { reason: None }
                } else {
                    Decision::Waiting {
                        reason: reason.clone(),
                    }
                }
            }
            EventKind::AssistantText { closes: Some(true) } => Decision::Closed,
            EventKind::AssistantText {
                closes: Some(false),
            } => Decision::Open { reason: None },
            EventKind::AssistantText { closes: None } => Decision::SettleClose,
            EventKind::AssistantOther | EventKind::UserPrompt | EventKind::TurnStart => {
                Decision::Open { reason: None }
            }
            EventKind::Recovering => Decision::Open {
                reason: Some("recovering".into()),
            },
            EventKind::Compaction => Decision::Open {
                reason: Some("compacting".into()),
            },
            EventKind::Interrupted => Decision::Interrupted,
            EventKind::ApiError(err) => Decision::Attention {
                reason: err.kind.clone(),
                resets_at: err.resets_at,
            },
            EventKind::Refusal => Decision::Attention {
                reason: "refused".into(),
                resets_at: None,
            },
        };
        decided = Some((ev, decision));
        break;
    }

    // A turn-end record (stop hook summary, turn duration, task_complete) after the decisive
    // event closes the turn at once, whatever the assistant line said.
    if let Some(end) = ended_by_record {
        let closes_open_turn = match &decided {
            Some((
                ev,
                Decision::Open { .. }
                | Decision::Waiting { .. }
                | Decision::SettleClose
                | Decision::Closed,
            )) => ev.at.is_none() || end.at.is_none() || ev.at <= end.at,
            None => true,
            _ => false,
        };
        if closes_open_turn {
            let key_source = decided.as_ref().map(|(ev, _)| *ev).unwrap_or(end);
            let mut s = closed(key_source, end.at, local, now, windows);
            if s.turn_key.is_none() {
                s.turn_key = end.key.clone();
            }
            return s;
        }
    }

    let Some((ev, decision)) = decided else {
        return Status::idle();
    };
    match decision {
        Decision::Closed => closed(ev, ev.at, local, now, windows),
        Decision::SettleClose => {
            let quiet_since = max_time(ev.at, life);
            if age(now, quiet_since) >= windows.settle {
                closed(ev, ev.at, local, now, windows)
            } else {
                let mut s = open(ev, None, life, now, windows, obs);
                s.settling = true;
                s
            }
        }
        Decision::Open { reason } => open(ev, reason, life, now, windows, obs),
        Decision::Waiting { reason } => {
            // Nothing is written while a person decides: the wait does not go quiet like a
            // working turn; it lasts as long as attention does.
            let mut s = open(ev, Some(reason.clone()), life, now, windows, obs);
            if age(now, s.last_activity) <= windows.attention {
                s.state = State::Waiting;
                s.reason = Some(reason);
            }
            s
        }
        Decision::Interrupted => {
            let mut s = closed(ev, ev.at, local, now, windows);
            if s.state == State::YourTurn {
                s.reason = Some("interrupted".into());
            }
            s
        }
        Decision::Attention { reason, resets_at } => {
            let mut s = base(ev, State::Attention);
            s.reason = Some(reason);
            s.resets_at = resets_at;
            let expired = match resets_at {
                Some(reset) => reset <= now,
                None => age(now, ev.at) > windows.attention,
            };
            if expired {
                s.state = State::Idle;
            }
            s
        }
    }
}

fn base(ev: &Event, state: State) -> Status {
    Status {
        state,
        reason: None,
        turn_key: ev.key.clone().or_else(|| ev.message_id.clone()),
        at: ev.at,
        last_activity: ev.at,
        resets_at: None,
        turn_open: false,
        seen: false,
        retry: None,
        request: None,
        settling: false,
    }
}

fn closed(
    ev: &Event,
    closed_at: Option<Time>,
    local: Option<Time>,
    now: Time,
    windows: &Windows,
) -> Status {
    let mut s = base(ev, State::YourTurn);
    s.at = closed_at.or(ev.at);
    if age(now, s.at) > windows.your_turn {
        s.state = State::Idle;
    }
    // The human ran local commands well after the completion: they have seen it.
    if let (Some(l), Some(at)) = (local, s.at) {
        if l > at + chrono::Duration::from_std(windows.grace).unwrap_or_default() {
            s.seen = true;
        }
    }
    s
}

fn open(
    ev: &Event,
    reason: Option<String>,
    life: Option<Time>,
    now: Time,
    windows: &Windows,
    obs: Observation,
) -> Status {
    let mut s = base(ev, State::Working);
    s.turn_open = true;
    s.reason = reason;
    s.last_activity = max_time(max_time(ev.at, life), obs.subagent_life);
    let quiet = age(now, s.last_activity);
    if quiet > windows.open_turn {
        if obs.seen_working && quiet <= windows.stalled {
            s.state = State::Stalled;
        } else {
            s.state = State::Idle;
            s.reason = Some("quiet".into());
        }
    }
    s
}

/// The later of two optional times.
pub fn max_time(a: Option<Time>, b: Option<Time>) -> Option<Time> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.max(y)),
        (x, None) => x,
        (None, y) => y,
    }
}

/// How long ago `at` was; unknown or future times count as "just now".
pub fn age(now: Time, at: Option<Time>) -> Duration {
    at.and_then(|t| (now - t).to_std().ok())
        .unwrap_or(Duration::ZERO)
}

/// Which evidence decided a pane's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Source {
    Hook,
    SessionRecord,
    Transcript,
    Pane,
    None,
}

impl Source {
    /// The name used in JSON and on screen.
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Hook => "hook",
            Source::SessionRecord => "session-record",
            Source::Transcript => "transcript",
            Source::Pane => "pane",
            Source::None => "none",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{TimeZone, Utc};

    fn t(secs: i64) -> Time {
        Utc.timestamp_opt(1_800_000_000 + secs, 0).unwrap()
    }

    fn ev(kind: EventKind, secs: i64) -> Event {
        Event::new(kind).at(t(secs)).key("turn")
    }

    fn ask(ids: &[&str], secs: i64) -> Event {
        ev(
            EventKind::AwaitingHuman {
                ids: ids.iter().map(|s| s.to_string()).collect(),
                reason: "permission: bash (touch a)".into(),
            },
            secs,
        )
    }

    fn result(ids: &[&str], secs: i64) -> Event {
        ev(
            EventKind::ToolResult {
                ids: ids.iter().map(|s| s.to_string()).collect(),
            },
            secs,
        )
    }

    fn tool(secs: i64) -> Event {
        ev(
            EventKind::ToolUse {
                ids: vec!["call".into()],
                names: vec!["bash".into()],
            },
            secs,
        )
    }

    fn state_of(events: &[Event], now: i64) -> Status {
        classify(events, t(now), &Windows::default(), Observation::default())
    }

    #[test]
    fn a_question_put_to_the_human_is_waiting_with_its_reason() {
        let events = [ev(EventKind::UserPrompt, 0), tool(1), ask(&["r1"], 2)];
        let s = state_of(&events, 3);
        assert_eq!(s.state, State::Waiting);
        assert_eq!(s.reason.as_deref(), Some("permission: bash (touch a)"));
        assert!(s.turn_open);
        assert_eq!(s.turn_key.as_deref(), Some("turn"));
    }

    #[test]
    fn progress_after_the_question_keeps_it_waiting() {
        let events = [
            ev(EventKind::UserPrompt, 0),
            ask(&["r1"], 2),
            ev(EventKind::Progress, 3),
        ];
        assert_eq!(state_of(&events, 4).state, State::Waiting);
    }

    #[test]
    fn the_answer_to_the_question_means_working_again() {
        let events = [
            ev(EventKind::UserPrompt, 0),
            ask(&["r1"], 2),
            result(&["r1"], 5),
        ];
        let s = state_of(&events, 6);
        assert_eq!(s.state, State::Working);
        assert_eq!(s.reason, None);
    }

    #[test]
    fn waiting_lasts_until_every_question_is_answered() {
        let events = [ev(EventKind::UserPrompt, 0), ask(&["r1", "r2"], 2)];
        assert_eq!(state_of(&events, 3).state, State::Waiting);
        // A result that arrived before the question was put (read in a tail) answers it.
        let answered = [
            ev(EventKind::UserPrompt, 0),
            result(&["r1", "r2"], 1),
            ask(&["r1", "r2"], 2),
        ];
        assert_eq!(state_of(&answered, 3).state, State::Working);
    }

    #[test]
    fn a_wait_outlasts_the_open_turn_window_but_not_attentions() {
        let events = [ev(EventKind::UserPrompt, 0), ask(&["r1"], 2)];
        let w = Windows::default();
        let ten_min = 2 + w.open_turn.as_secs() as i64 * 2;
        assert_eq!(state_of(&events, ten_min).state, State::Waiting);
        let late = 3 + w.attention.as_secs() as i64;
        let s = state_of(&events, late);
        assert_eq!(s.state, State::Idle);
        assert_eq!(s.reason.as_deref(), Some("quiet"));
    }

    #[test]
    fn an_interrupt_or_an_error_after_the_question_decides() {
        let stopped = [
            ev(EventKind::UserPrompt, 0),
            ask(&["r1"], 2),
            ev(EventKind::Interrupted, 3),
        ];
        let s = state_of(&stopped, 4);
        assert_eq!(
            (s.state, s.reason.as_deref()),
            (State::YourTurn, Some("interrupted"))
        );
        let failed = [
            ev(EventKind::UserPrompt, 0),
            ask(&["r1"], 2),
            ev(
                EventKind::ApiError(crate::events::ApiError {
                    kind: "rate limit".into(),
                    text: "429".into(),
                    resets_at: None,
                }),
                3,
            ),
        ];
        assert_eq!(state_of(&failed, 4).state, State::Attention);
    }

    #[test]
    fn a_turn_end_record_after_the_question_closes_the_turn() {
        let events = [
            ev(EventKind::UserPrompt, 0),
            ask(&["r1"], 2),
            ev(EventKind::TurnEnd, 3),
        ];
        assert_eq!(state_of(&events, 4).state, State::YourTurn);
    }
}
