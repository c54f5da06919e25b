//! `agentpane answer PANE allow|deny [--always] [--request FP] [--client C] [--json]`: decide
//! what a waiting agent asks without switching to it (docs/design.md#deciding-from-anywhere).

use anyhow::Result;
use serde::Serialize;

use super::Context;
use crate::answer::{self, Answered};
use crate::cli::AnswerArgs;
use crate::exit;

/// The `--json` object.
#[derive(Serialize)]
struct Output<'a> {
    /// `answered` or `refused`.
    outcome: &'static str,
    #[serde(flatten)]
    answered: &'a Answered,
    /// Why nothing was typed: `no-dialog`, `already-answered`, `dialog-changed`, …
    #[serde(skip_serializing_if = "Option::is_none")]
    refusal: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
}

pub fn run(args: AnswerArgs, ctx: &Context) -> Result<i32> {
    let tmux = ctx.tmux();
    let a = answer::answer(
        &tmux,
        &args.pane,
        args.choice,
        args.always,
        args.request.as_deref(),
        args.client.as_deref(),
    )?;
    let code = if a.refused.is_some() {
        exit::NOTHING
    } else {
        exit::OK
    };
    if args.json {
        let out = Output {
            outcome: if a.refused.is_some() {
                "refused"
            } else {
                "answered"
            },
            answered: &a,
            refusal: a.refused.as_ref().map(|r| r.kind()),
            reason: a.refused.as_ref().map(ToString::to_string),
        };
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(code);
    }
    let asked = a
        .request
        .as_ref()
        .map(|r| format!("{} asks {}", a.target, answer::decide::words(r)));
    match &a.refused {
        Some(why) => {
            if let Some(asked) = asked {
                eprintln!("agentpane: {asked}");
            }
            eprintln!("agentpane: refused, nothing typed: {why}");
        }
        None => println!(
            "{}: {}",
            asked.unwrap_or_else(|| a.target.clone()),
            done_words(&a)
        ),
    }
    Ok(code)
}

/// What an answer did, in words: `allowed once`, `denied (the dialog is still on screen)`.
pub fn done_words(a: &Answered) -> String {
    let what = match (a.choice, a.always) {
        (answer::Choice::Allow, false) => "allowed once",
        (answer::Choice::Allow, true) => "allowed, don't ask again",
        (answer::Choice::Deny, _) => "denied",
    };
    let closed = if a.closed {
        ""
    } else {
        " (the dialog is still on screen)"
    };
    format!("{what}{closed}")
}
