//! `agentpane classify FILE`: the state of one transcript, pure (docs/design.md#cli-contract).

use anyhow::{Context, Result};
use serde::Serialize;

use crate::cli::ClassifyArgs;
use crate::events::{AgentKind, Time};
use crate::state::{Observation, State, Windows};
use crate::transcript;

#[derive(Serialize)]
struct Output {
    agent: AgentKind,
    state: State,
    reason: Option<String>,
    turn_key: Option<String>,
    at: Option<Time>,
    last_activity: Option<Time>,
    resets_at: Option<Time>,
    seen: bool,
}

pub fn run(args: ClassifyArgs) -> Result<i32> {
    let now = parse_now(args.now.as_deref())?;
    let (agent, status) = transcript::classify_file(
        &args.file,
        args.agent,
        now,
        &Windows::default(),
        Observation::default(),
    )?;
    if args.json {
        let out = Output {
            agent,
            state: status.state,
            reason: status.reason,
            turn_key: status.turn_key,
            at: status.at,
            last_activity: status.last_activity,
            resets_at: status.resets_at,
            seen: status.seen,
        };
        println!("{}", serde_json::to_string(&out)?);
    } else {
        println!("{}", line(agent, &status, now));
    }
    Ok(crate::exit::OK)
}

/// `state TAB agent [TAB reason] [TAB age ago]`; the reason (it may quote the model, e.g. a
/// background agent's description) terminal-safe and without tabs.
fn line(agent: AgentKind, status: &crate::state::Status, now: Time) -> String {
    let mut line = format!("{}\t{}", status.state, agent);
    if let Some(reason) = &status.reason {
        line.push_str(&format!("\t{}", crate::text::terminal_line(reason)));
    }
    if let Some(at) = status.at {
        line.push_str(&format!("\t{} ago", crate::text::age(now, at)));
    }
    line
}

/// `--now` or the real clock.
pub fn parse_now(now: Option<&str>) -> Result<Time> {
    match now {
        None => Ok(chrono::Utc::now()),
        Some(s) => chrono::DateTime::parse_from_rfc3339(s)
            .map(|t| t.with_timezone(&chrono::Utc))
            .with_context(|| {
                format!("--now {s:?} is not an RFC 3339 time (e.g. 2026-02-10T21:12:00Z)")
            }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::{assert_terminal_safe, HOSTILE};

    #[test]
    fn the_classify_line_is_terminal_safe() {
        let mut status = crate::state::Status::idle();
        status.state = State::Working;
        status.reason = Some(format!("background agent: {HOSTILE}\tx"));
        let out = line(AgentKind::Claude, &status, chrono::Utc::now());
        assert_terminal_safe(&out);
        assert_eq!(out, "working\tclaude\tbackground agent: abcdef x");
    }
}
