//! What the agents' tests share: the recordings of the released clients
//! (fixtures/real-clients/<client>-<version>/), cutting a log at a line, and reading its
//! last answer as the pipeline does.

use std::path::Path;

use super::agent::{AnswerReader, AnswerStep};

/// The file `name` recorded from the real `client` (`pi-0.73.1`), whole.
pub fn recorded(client: &str, name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/real-clients")
        .join(client)
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The first `n` lines of `log`, each ending in a newline.
pub fn first_lines(log: &str, n: usize) -> String {
    log.lines().take(n).map(|l| format!("{l}\n")).collect()
}

/// The line number (1-based) of the first line of `log` that holds `needle`.
pub fn line_of(log: &str, needle: &str) -> usize {
    match log.lines().position(|l| l.contains(needle)) {
        Some(i) => i + 1,
        None => panic!("no line holds {needle}"),
    }
}

/// The text of the last answer `reader` finds in `records`, read newest first as the
/// pipeline reads a log; `None` when the newest turn failed or there is none.
pub fn last_answer<'a>(
    mut reader: Box<dyn AnswerReader>,
    records: impl DoubleEndedIterator<Item = &'a serde_json::Value>,
) -> Option<String> {
    for v in records.rev() {
        match reader.push(v) {
            AnswerStep::Found(a) => return Some(a.text),
            AnswerStep::Failed => return None,
            AnswerStep::More => {}
        }
    }
    reader.finish().map(|a| a.text)
}

/// The JSON records of a JSONL log.
pub fn records(log: &str) -> Vec<serde_json::Value> {
    log.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}
