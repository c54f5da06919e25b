//! Shared low-level readers, below the agents: the reverse line reader, the read budget, the
//! regular-file open every transcript read goes through, times as agents write them in JSON,
//! and rate-limit reset times in API-error texts. The agents' adapters and the pipeline stages
//! above them both use these; nothing here names an agent or a stage.

pub mod dialog;
pub mod ratelimit;
pub mod request;
pub mod reverse;
pub mod time;

use std::fs::File;
use std::path::Path;

use anyhow::{Context, Result};

/// Lines longer than this are read as head + tail only.
pub const MAX_LINE: usize = 4 * 1024 * 1024;

/// How far back a state read may go before it settles for what it found.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    pub max_bytes: u64,
    pub max_lines: usize,
}

impl Default for Budget {
    fn default() -> Budget {
        Budget {
            max_bytes: 32 * 1024 * 1024,
            max_lines: 50_000,
        }
    }
}

/// Opens a transcript for reading, refusing anything but a regular file: a FIFO or a device
/// would block or never end. (O_NONBLOCK makes the open itself return at once; it changes
/// nothing for regular files.)
pub fn open_regular(path: &Path) -> Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let meta = file
        .metadata()
        .with_context(|| format!("cannot read {}", path.display()))?;
    if !meta.is_file() {
        anyhow::bail!("cannot read {}: not a regular file", path.display());
    }
    Ok(file)
}

/// The last JSON records of a JSONL log, oldest first: back from its end to the first record
/// for which `start` holds (kept), or the 400 records an 8 MiB budget allows (see
/// [`newest_records`]).
pub fn tail_records(
    path: &Path,
    mut start: impl FnMut(&serde_json::Value) -> bool,
) -> Result<Vec<serde_json::Value>> {
    let mut records = Vec::new();
    let budget = Budget {
        max_bytes: 8 * 1024 * 1024,
        max_lines: 400,
    };
    newest_records(path, budget, |v| {
        records.push(v.clone());
        !start(v)
    })?;
    records.reverse();
    Ok(records)
}

/// The JSON records of a JSONL log, newest first, as long as `more` asks for the next and
/// within `budget`; a line that is no JSON, too large or unreadable is skipped.
pub fn newest_records(
    path: &Path,
    budget: Budget,
    mut more: impl FnMut(&serde_json::Value) -> bool,
) -> Result<()> {
    let lines = reverse::ReverseLines::new(open_regular(path)?, MAX_LINE)?;
    for (n, line) in lines.enumerate() {
        if n >= budget.max_lines {
            break;
        }
        let reverse::Line::Full(bytes) = line? else {
            continue;
        };
        let Ok(value) = serde_json::from_slice::<serde_json::Value>(&bytes) else {
            continue;
        };
        if !more(&value) {
            break;
        }
    }
    Ok(())
}
