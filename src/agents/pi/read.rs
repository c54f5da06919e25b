//! The events that decide a pi session's state: its log read backwards from the end to the
//! latest deciding record, as every JSONL log is, with one difference. pi retries a failed
//! API call by itself and appends one error record per attempt (0.73.1: up to 4 for one
//! prompt), so the errors at the end of the log are followed back to the first of them, and
//! all carry its id as their turn key: one failing turn is one alert, however many attempts
//! (docs/design.md#evidence-order).

use std::io::{Read, Seek};
use std::path::Path;

use anyhow::{Context, Result};

use crate::events::{Event, EventKind};
use crate::read::reverse::{Line, ReverseLines};
use crate::read::{open_regular, Budget, MAX_LINE};

/// The deciding tail of the log at `path`, in file order.
pub fn file_events(path: &Path) -> Result<Vec<Event>> {
    let file = open_regular(path)?;
    tail_events(file, Budget::default()).with_context(|| format!("cannot read {}", path.display()))
}

/// [`file_events`] over any seekable source.
pub fn tail_events<R: Read + Seek>(src: R, budget: Budget) -> std::io::Result<Vec<Event>> {
    let mut lines = ReverseLines::from_reader(src, MAX_LINE)?;
    let mut events: Vec<Event> = Vec::new();
    // Error records read so far at the end of the log (indices into `events`).
    let mut errors: Vec<usize> = Vec::new();
    let mut count = 0;
    while let Some(line) = lines.next() {
        count += 1;
        let event = match &line? {
            Line::Full(bytes) => super::parse::parse_line(bytes),
            Line::Huge { head, tail, .. } => super::parse::parse_fragments(head, tail),
        };
        if let Some(ev) = event {
            let decisive = crate::state::is_decisive(&ev);
            let error = matches!(ev.kind, EventKind::ApiError(_));
            if decisive && !error && !errors.is_empty() {
                // The record before the first attempt: the run of errors is complete.
                break;
            }
            if error {
                errors.push(events.len());
            }
            events.push(ev);
            if decisive && !error {
                break;
            }
        }
        if count >= budget.max_lines || lines.bytes_read() >= budget.max_bytes {
            break;
        }
    }
    if let Some(&first) = errors.last() {
        let key = events[first].key.clone();
        for &i in &errors {
            events[i].key.clone_from(&key);
        }
    }
    events.reverse();
    Ok(events)
}
