//! `agentpane last PANE | --transcript FILE`: the clean last answer (SPEC §4, §12).

use anyhow::{bail, Result};
use serde::Serialize;

use super::classify::agent_kind;
use super::Context;
use crate::cli::LastArgs;
use crate::events::{AgentKind, Time};
use crate::extract::{self, Answer};

#[derive(Serialize)]
struct Output<'a> {
    text: &'a str,
    agent: AgentKind,
    source: &'static str,
    transcript: Option<&'a std::path::Path>,
    at: Option<Time>,
    key: Option<&'a str>,
}

pub fn run(args: LastArgs, _ctx: &Context) -> Result<i32> {
    let Some(path) = args.transcript.as_deref() else {
        bail!("`last PANE` needs the pane resolver; use `last --transcript FILE`")
    };
    let answer = extract::last_answer_from_transcript(path, args.agent.map(agent_kind))?;
    print_answer(
        answer.as_ref(),
        "transcript",
        Some(path),
        args.json,
        &path.display().to_string(),
    )
}

/// Prints an answer (or the "no answer" message, exit 1).
fn print_answer(
    answer: Option<&Answer>,
    source: &'static str,
    transcript: Option<&std::path::Path>,
    json: bool,
    what: &str,
) -> Result<i32> {
    let Some(answer) = answer else {
        eprintln!("agentpane: no assistant answer in {what} yet");
        return Ok(crate::exit::NOTHING);
    };
    if json {
        let out = Output {
            text: &answer.text,
            agent: answer.agent,
            source,
            transcript,
            at: answer.at,
            key: answer.key.as_deref(),
        };
        println!("{}", serde_json::to_string(&out)?);
    } else {
        println!("{}", answer.text);
    }
    Ok(crate::exit::OK)
}
