//! `agentpane answer PANE allow|deny [--always] [--request FP] [--client C] [--json]`: decide
//! what a waiting agent asks without switching to it (docs/design.md#deciding-from-anywhere).

use anyhow::Result;
use serde::Serialize;

use super::Context;
use crate::answer::{self, Answered};
use crate::cli::AnswerArgs;
use crate::exit;
use crate::remote::call::{self, RemoteAnswered};
use crate::remote::doc::RemoteRequest;
use crate::remote::ssh::Ssh;
use crate::remote::{split_target, Host, Target};

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
    if let Target::Remote(host, pane) = split_target(&args.pane, &ctx.remote_hosts()?) {
        return run_remote(&args, &host, pane);
    }
    let tmux = ctx.tmux();
    let a = answer::answer(
        &tmux,
        &args.pane,
        args.choice,
        args.always,
        args.request.as_deref(),
        args.client.as_deref(),
    )?;
    let code = exit_code(a.refused.is_some());
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
    tell(told(&a));
    Ok(code)
}

/// `answer HOST:PANE`: the host answers with its own rules; told as a local answer is (its
/// JSON object with `host` added, its target named `HOST:TARGET`, the same exit codes).
fn run_remote(args: &AnswerArgs, host: &Host, pane: &str) -> Result<i32> {
    let a = call::answer(
        &Ssh::from_env(),
        host,
        pane,
        args.choice == answer::Choice::Allow,
        args.always,
        args.request.as_deref(),
    )?;
    let code = exit_code(a.refused.is_some());
    if args.json {
        let mut json = a.json.clone();
        if let Some(obj) = json.as_object_mut() {
            obj.insert("host".into(), host.as_str().into());
        }
        println!("{}", serde_json::to_string_pretty(&json)?);
        return Ok(code);
    }
    tell(told_remote(host, args.choice, args.always, &a));
    Ok(code)
}

/// An answer's exit code: refused is "nothing done".
fn exit_code(refused: bool) -> i32 {
    if refused {
        exit::NOTHING
    } else {
        exit::OK
    }
}

/// Prints what an answer tells: its line on stdout, or why it was refused on stderr.
fn tell(told: Result<String, Vec<String>>) {
    match told {
        Ok(line) => println!("{line}"),
        Err(lines) => lines.iter().for_each(|l| eprintln!("agentpane: {l}")),
    }
}

/// The one line the picker tells after `y`/`n` on `pane` (a local pane or `HOST:PANE`), held
/// to the request it showed (`shown`).
pub fn decide_line(
    tmux: &crate::tmux::Tmux,
    hosts: &[Host],
    pane: &str,
    choice: answer::Choice,
    shown: &str,
    client: Option<&str>,
) -> String {
    let told = match split_target(pane, hosts) {
        Target::Remote(host, id) => call::answer(
            &Ssh::from_env(),
            &host,
            id,
            choice == answer::Choice::Allow,
            false,
            Some(shown),
        )
        .map(|a| {
            let target = format!("{host}:{}", a.target);
            let why = a.refused.map(|(_, why)| why);
            (target, why, words_for(choice, false, a.closed))
        }),
        Target::Local(_) => {
            answer::answer(tmux, pane, choice, false, Some(shown), client).map(|a| {
                let why = a.refused.as_ref().map(ToString::to_string);
                (a.target.clone(), why, done_words(&a))
            })
        }
    };
    match told {
        Ok((_, Some(why), _)) => format!("refused, nothing typed: {why}"),
        Ok((target, None, done)) => format!("{target}: {done}"),
        Err(e) => format!("{e:#}"),
    }
}

/// What a person is told of a host's answer, as [`told`] tells a local one.
fn told_remote(
    host: &Host,
    choice: answer::Choice,
    always: bool,
    a: &RemoteAnswered,
) -> Result<String, Vec<String>> {
    let target = format!("{host}:{}", a.target);
    let request = a.request.as_ref().map(RemoteRequest::to_request);
    said(
        &target,
        request.as_ref(),
        a.refused.as_ref().map(|(_, why)| why.clone()),
        &words_for(choice, always, a.closed),
    )
}

/// What a person is told: the line saying what was answered, or (`Err`) what is asked and
/// why nothing was typed. Terminal-safe: the request quotes the agent.
fn told(a: &Answered) -> Result<String, Vec<String>> {
    said(
        &a.target,
        a.request.as_ref(),
        a.refused.as_ref().map(ToString::to_string),
        &done_words(a),
    )
}

/// The lines of [`told`]: `target asks …: done`, or what is asked and why nothing was typed.
fn said(
    target: &str,
    request: Option<&crate::read::request::Request>,
    refused: Option<String>,
    done: &str,
) -> Result<String, Vec<String>> {
    let asked = request.map(|r| format!("{target} asks {}", answer::decide::words(r)));
    let safe = |l: String| crate::text::terminal_line(&l);
    match refused {
        Some(why) => Err(asked
            .into_iter()
            .chain([format!("refused, nothing typed: {why}")])
            .map(safe)
            .collect()),
        None => Ok(safe(format!(
            "{}: {done}",
            asked.unwrap_or_else(|| target.to_string()),
        ))),
    }
}

/// What an answer did, in words: `allowed once`, `denied (the dialog is still on screen)`.
pub fn done_words(a: &Answered) -> String {
    words_for(a.choice, a.always, a.closed)
}

/// [`done_words`] of a choice, `always`, and whether the dialog closed.
fn words_for(choice: answer::Choice, always: bool, closed: bool) -> String {
    let what = match (choice, always) {
        (answer::Choice::Allow, false) => "allowed once",
        (answer::Choice::Allow, true) => "allowed, don't ask again",
        (answer::Choice::Deny, _) => "denied",
    };
    let closed = if closed {
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
