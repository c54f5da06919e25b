//! The last answer from a transcript, read backwards: by the agent's own reading of its log
//! where it has one (a database session, a chat log rewritten in place), else record by record
//! through the agent's answer reader (`agents::Agent::answer_reader`).

use std::path::Path;

use anyhow::{Context, Result};
use serde_json::Value;

use crate::agents::{self, AnswerReader, AnswerStep};
use crate::events::AgentKind;
use crate::events::Answer;
use crate::read::reverse::{Line, ReverseLines};
use crate::read::{Budget, MAX_LINE};

/// The clean last answer in `path`, or `None` when the transcript has none (yet).
pub fn last_answer_from_transcript(
    path: &Path,
    agent: Option<AgentKind>,
) -> Result<Option<Answer>> {
    last_answer_within(path, agent, Budget::default())
}

/// [`last_answer_from_transcript`] reading at most `budget` from the end (a table of many
/// panes wants a head quickly, not the answer of an hour-long turn).
pub fn last_answer_within(
    path: &Path,
    agent: Option<AgentKind>,
    budget: Budget,
) -> Result<Option<Answer>> {
    let own = agents::own_reader(path, agent);
    if let Some(answer) = own.and_then(|a| a.last_answer(path, budget)) {
        return answer;
    }
    let file = crate::read::open_regular(path)?;
    let mut lines = ReverseLines::new(file, MAX_LINE)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let mut reader: Option<(AgentKind, Box<dyn AnswerReader>)> = None;
    let mut count = 0;
    while let Some(line) = lines.next() {
        let line = line.with_context(|| format!("cannot read {}", path.display()))?;
        count += 1;
        if count > budget.max_lines || lines.bytes_read() > budget.max_bytes {
            break;
        }
        let Line::Full(bytes) = line else { continue };
        let Ok(value) = serde_json::from_slice::<Value>(&bytes) else {
            continue;
        };
        if reader.is_none() {
            // The agent named, else the first line whose format an agent claims says whose log
            // this is; an agent whose answers agentpane does not read has none.
            let Some(kind) = agent.or_else(|| agents::detect_line(&bytes)) else {
                continue;
            };
            let Some(r) = agents::of(kind).answer_reader() else {
                return Ok(None);
            };
            reader = Some((kind, r));
        }
        let Some((kind, r)) = reader.as_mut() else {
            continue;
        };
        match r.push(&value) {
            AnswerStep::More => {}
            AnswerStep::Failed => return Ok(None),
            AnswerStep::Found(mut answer) => {
                answer.agent = *kind;
                return Ok(Some(answer));
            }
        }
    }
    Ok(reader.and_then(|(kind, r)| {
        r.finish().map(|mut a| {
            a.agent = kind;
            a
        })
    }))
}

#[cfg(test)]
mod tests {
    use crate::agents::gemini::is_log;
    use crate::agents::gemini::tests::{log, now, ANSWER};
    use crate::events::AgentKind;
    use crate::state::{Observation, State, Windows};

    #[test]
    fn the_log_is_recognised() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        std::fs::write(&path, log()[..6].join("\n") + "\n").unwrap();
        assert!(is_log(&path));
        let (agent, s) = crate::transcript::classify_file(
            &path,
            None,
            now(),
            &Windows::default(),
            Observation::default(),
        )
        .unwrap();
        assert_eq!((agent, s.state), (AgentKind::Gemini, State::YourTurn));
        let a = crate::extract::last_answer_from_transcript(&path, None)
            .unwrap()
            .unwrap();
        assert_eq!((a.agent, a.text.as_str()), (AgentKind::Gemini, ANSWER));
    }
}
