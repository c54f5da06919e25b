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
    match told(&a) {
        Ok(line) => println!("{line}"),
        Err(lines) => lines.iter().for_each(|l| eprintln!("agentpane: {l}")),
    }
    Ok(code)
}

/// What a person is told: the line saying what was answered, or (`Err`) what is asked and
/// why nothing was typed. Terminal-safe: the request quotes the agent.
fn told(a: &Answered) -> Result<String, Vec<String>> {
    let asked = a
        .request
        .as_ref()
        .map(|r| format!("{} asks {}", a.target, answer::decide::words(r)));
    let safe = |l: String| crate::text::terminal_line(&l);
    match &a.refused {
        Some(why) => Err(asked
            .into_iter()
            .chain([format!("refused, nothing typed: {why}")])
            .map(safe)
            .collect()),
        None => Ok(safe(format!(
            "{}: {}",
            asked.unwrap_or_else(|| a.target.clone()),
            done_words(a)
        ))),
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::request::{PromptKind, Request, RequestSource};
    use crate::text::{assert_terminal_safe, HOSTILE};

    #[test]
    fn what_answer_tells_is_terminal_safe() {
        let request = Request::new(
            PromptKind::Permission,
            "Bash",
            HOSTILE,
            HOSTILE,
            None,
            RequestSource::Log,
        );
        let mut a = Answered {
            pane: "%1".into(),
            target: "main:1.0".into(),
            choice: answer::Choice::Allow,
            always: false,
            request: Some(request.clone()),
            keys: vec!["1".into()],
            refused: None,
            closed: true,
        };
        let done = told(&a).expect("answered");
        assert_terminal_safe(&done);
        assert_eq!(done, "main:1.0 asks Bash: abcdef: allowed once");
        a.refused = Some(answer::decide::Refused::Changed {
            pane: "%1".into(),
            now: answer::decide::words(&request),
        });
        let refused = told(&a).expect_err("refused");
        refused.iter().for_each(|l| assert_terminal_safe(l));
        assert_eq!(
            refused[1],
            "refused, nothing typed: the dialog changed: %1 now asks Bash: abcdef"
        );
    }
}
