//! `agentpane statusline [--then COMMAND]`: the status-line command `hooks install` gives
//! Claude Code. It keeps what the input says about plan windows and the session
//! (`crate::limits`), then runs the user's own status-line command, unchanged, on the same
//! input, and its output is the status line. Saving never fails the status line: a problem is
//! one line on stderr.

use std::io::{IsTerminal, Read};

use anyhow::{Context, Result};
use chrono::Utc;

use crate::cli::{status_line_agents, StatuslineArgs};
use crate::events::AgentKind;
use crate::{exec, exit, limits, paths};

/// Most stdin bytes read as the input to keep; a longer input is passed on whole but not kept.
pub const MAX_INPUT: u64 = 1 << 20;

/// Runs the status line.
pub fn run(args: StatuslineArgs) -> Result<i32> {
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        anyhow::bail!(
            "expects the JSON Claude Code gives its status-line command on stdin; \
             `agentpane hooks install` sets it up"
        );
    }
    let mut head = Vec::new();
    let read = (&mut stdin.lock()).take(MAX_INPUT).read_to_end(&mut head);
    let whole = read.is_ok() && (head.len() as u64) < MAX_INPUT;
    let agent = args.agent.or_else(|| status_line_agents().next());
    match (agent, whole) {
        (Some(agent), true) => {
            if let Err(err) = keep(agent, &head) {
                eprintln!("agentpane statusline: {err:#}");
            }
        }
        (Some(_), false) => eprintln!(
            "agentpane statusline: the input is over {MAX_INPUT} bytes or unreadable: not kept"
        ),
        (None, _) => {}
    }
    let Some(command) = args.then else {
        let _ = std::io::copy(&mut stdin.lock(), &mut std::io::sink());
        return Ok(exit::OK);
    };
    exec::run_shell_through(&command, head, std::io::stdin())
        .with_context(|| format!("cannot run your status-line command `{command}`"))
}

/// Adds what `input` says to `agent`'s file in the state folder.
fn keep(agent: AgentKind, input: &[u8]) -> Result<()> {
    let now = Utc::now();
    let Some(capture) = crate::agents::of(agent).status_line(input, now) else {
        return Ok(());
    };
    let state = paths::trusted_state_dir()?;
    paths::ensure_private_dir(&state)?;
    if !limits::record(&state, agent, capture, now)? {
        eprintln!("agentpane statusline: another capture held the file: this one not kept");
    }
    Ok(())
}
