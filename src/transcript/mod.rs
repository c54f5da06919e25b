//! Reading transcripts: backwards from the end for the current state ([`crate::read::reverse`]), forwards
//! from an offset for watch mode ([`follow`]). The cost of [`tail_events`] depends on how far
//! back the deciding event is, never on the file's size.

pub mod follow;
pub mod meter;
pub mod reader;

use std::io::{Read, Seek};
use std::path::Path;

use anyhow::{Context, Result};

use crate::agents;
use crate::events::{AgentKind, Event, EventKind, Time};
use crate::read::reverse::{Line, ReverseLines};
use crate::read::{open_regular, Budget, MAX_LINE};
use crate::state::{self, Observation, Status, Windows};

/// The tail of a transcript as events in file order, ending at the last complete line and
/// starting at the latest decisive main-thread event (or where the budget ran out).
#[derive(Debug, Clone)]
pub struct Tail {
    pub agent: AgentKind,
    pub events: Vec<Event>,
    /// Lines that could not be decoded (partial, invalid UTF-8, not JSON).
    pub skipped: usize,
    pub bytes_read: u64,
}

/// Reads events backwards from the end of `path` until the state is decided.
pub fn tail_events(path: &Path, agent: Option<AgentKind>, budget: Budget) -> Result<Tail> {
    let file = open_regular(path)?;
    tail_events_from(file, agent, budget).with_context(|| format!("cannot read {}", path.display()))
}

/// [`tail_events`] over any seekable source (tests feed prefixes of real files from memory).
pub fn tail_events_from<R: Read + Seek>(
    src: R,
    agent: Option<AgentKind>,
    budget: Budget,
) -> std::io::Result<Tail> {
    let mut lines = ReverseLines::from_reader(src, MAX_LINE)?;
    let mut agent = agent;
    let mut events = Vec::new();
    let mut skipped = 0;
    let mut count = 0;
    let mut open_message: Option<String> = None;
    while let Some(line) = lines.next() {
        let line = line?;
        count += 1;
        let event = match &line {
            Line::Full(bytes) => {
                if agent.is_none() {
                    agent = agents::detect_line(bytes);
                }
                agent.and_then(|kind| agents::parse_line(kind, bytes))
            }
            Line::Huge { head, tail, .. } => match agent {
                Some(kind) => agents::parse_fragments(kind, head, tail),
                None => agents::all().find(|a| a.owns_fragment(head)).and_then(|a| {
                    agent = Some(a.kind());
                    a.parse_fragments(head, tail)
                }),
            },
        };
        match event {
            Some(ev) => {
                let decisive = state::is_decisive(&ev);
                let same_message = open_message.is_some() && ev.message_id == open_message;
                // Results of the message's earlier tools may sit between its lines.
                let inside_message =
                    open_message.is_some() && matches!(ev.kind, EventKind::ToolResult { .. });
                if decisive && !same_message && !inside_message {
                    if let (EventKind::ToolUse { .. }, Some(id)) = (&ev.kind, &ev.message_id) {
                        // Tool uses of one message are split over lines: collect them all.
                        if open_message.is_none() {
                            open_message = Some(id.clone());
                            events.push(ev);
                            continue;
                        }
                    }
                    let turn_start = matches!(ev.kind, EventKind::UserPrompt);
                    let prompt_at = ev.at;
                    events.push(ev);
                    if let Some(kind) = agent {
                        let look = agents::of(kind).look_back();
                        if turn_start && look.written_early {
                            written_early(&mut lines, &mut events, kind, prompt_at, count)?;
                        } else if !turn_start && look.background_agents {
                            background_of_turn(&mut lines, &mut events, kind, budget, count)?;
                        }
                    }
                    break;
                }
                events.push(ev);
            }
            None => skipped += 1,
        }
        if count >= budget.max_lines || lines.bytes_read() >= budget.max_bytes {
            break;
        }
    }
    events.reverse();
    Ok(Tail {
        agent: agent.unwrap_or(agents::UNTOLD),
        events,
        skipped,
        bytes_read: lines.bytes_read(),
    })
}

/// Decodes one line read backwards (a huge line from its head and tail).
fn decode(line: &Line, kind: AgentKind) -> Option<Event> {
    match line {
        Line::Full(bytes) => agents::parse_line(kind, bytes),
        Line::Huge { head, tail, .. } => agents::parse_fragments(kind, head, tail),
    }
}

/// File order is not event order: Claude Code 2.1.197 can write a session's first reply and
/// its turn end before the prompt that asked for it. When the deciding event is a prompt,
/// reading goes on (every record, so the tail stays a suffix of the file) over the records
/// just before it that are stamped later than it, up to the first deciding record that is
/// not; `state::classify` puts them after the prompt.
fn written_early<R: Read + Seek>(
    lines: &mut ReverseLines<R>,
    events: &mut Vec<Event>,
    kind: AgentKind,
    prompt_at: Option<Time>,
    mut count: usize,
) -> std::io::Result<()> {
    const LOOK_BACK: usize = 256;
    let Some(prompt_at) = prompt_at else {
        return Ok(());
    };
    let limit = count + LOOK_BACK;
    let mut read = Vec::new();
    let mut moved = false;
    for line in lines.by_ref() {
        count += 1;
        if let Some(ev) = decode(&line?, kind) {
            let later = ev.at.is_some_and(|at| at > prompt_at);
            if !later && state::is_decisive(&ev) {
                break;
            }
            moved |= later;
            read.push(ev);
        }
        if count >= limit {
            break;
        }
    }
    // Nothing written early: the usual case keeps the tail as short as before.
    if moved {
        events.extend(read);
    }
    Ok(())
}

/// Past the deciding event, back to the human prompt that opened the turn (every record, so
/// the tail stays a suffix of the file): the subagents the turn started in the background
/// and those that reported back (a turn whose subagent still runs is not over). Only kept
/// when the turn started one.
fn background_of_turn<R: Read + Seek>(
    lines: &mut ReverseLines<R>,
    events: &mut Vec<Event>,
    kind: AgentKind,
    budget: Budget,
    mut count: usize,
) -> std::io::Result<()> {
    let mut read = Vec::new();
    let mut launched = false;
    // Not a `for` loop: the body asks the reader how far it has read.
    #[allow(clippy::while_let_on_iterator)]
    while let Some(line) = lines.next() {
        count += 1;
        if let Some(ev) = decode(&line?, kind) {
            let start = matches!(ev.kind, EventKind::UserPrompt) && !ev.sidechain;
            launched |= matches!(ev.kind, EventKind::BackgroundStart { .. });
            read.push(ev);
            if start {
                break;
            }
        }
        if count >= budget.max_lines || lines.bytes_read() >= budget.max_bytes {
            break;
        }
    }
    if launched {
        events.extend(read);
    }
    Ok(())
}

/// The state of one transcript at `now` (docs/design.md#reading-transcripts, #states).
pub fn classify_file(
    path: &Path,
    agent: Option<AgentKind>,
    now: Time,
    windows: &Windows,
    obs: Observation,
) -> Result<(AgentKind, Status)> {
    if let Some(found) = agents::stores::classify(path, agent, now, windows, obs)? {
        return Ok(found);
    }
    let (kind, events) = file_events(path, agent)?;
    Ok((kind, state::classify(&events, now, windows, obs)))
}

/// The events that decide the state of a log file (not a database session): the tail a
/// backward read stops at, or what the agent's own reading of its log gives.
pub fn file_events(path: &Path, agent: Option<AgentKind>) -> Result<(AgentKind, Vec<Event>)> {
    let own = agents::own_reader(path, agent);
    if let Some((kind, events)) = own.and_then(|a| Some((a.kind(), a.file_events(path)?))) {
        return Ok((kind, events?));
    }
    let tail = tail_events(path, agent, Budget::default())?;
    Ok((tail.agent, tail.events))
}
