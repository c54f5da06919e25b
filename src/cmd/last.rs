//! `agentpane last PANE | --transcript FILE`: the clean last answer (docs/design.md#extraction),
//! byte-exact into a pipe or a file or with `--raw`, terminal-safe on a terminal
//! (docs/design.md#terminal-safe-output).

use std::io::IsTerminal;

use anyhow::{bail, Result};
use serde::Serialize;

use super::form::Form;
use super::Context;
use crate::cli::LastArgs;
use crate::events::Answer;
use crate::events::{AgentKind, Time};
use crate::extract;
use crate::extract::cache::AnswerCache;
use crate::route::source::{not_an_agent, pane_answer, pane_screen, report_of, AnswerSource};
use crate::state::State;

#[derive(Serialize)]
struct Output<'a> {
    text: &'a str,
    agent: Option<AgentKind>,
    source: &'static str,
    transcript: Option<&'a std::path::Path>,
    at: Option<Time>,
    key: Option<&'a str>,
    /// The pane's working folder (a review template's `{cwd}` on another host).
    #[serde(skip_serializing_if = "Option::is_none")]
    cwd: Option<&'a str>,
}

pub fn run(args: LastArgs, ctx: &Context) -> Result<i32> {
    let form = Form::of(args.json, args.raw, std::io::stdout().is_terminal());
    let Some(path) = args.transcript.as_deref() else {
        return run_pane(&args, form, ctx);
    };
    let answer = extract::last_answer_from_transcript(path, args.agent)?;
    print_answer(
        answer.as_ref(),
        "transcript",
        Some(path),
        form,
        &path.display().to_string(),
    )
}

/// `last PANE`: the transcript of the pane's agent when one resolves, else the answer on its
/// screen; a pane without an agent is refused. `--screen`: the pane's whole screen.
fn run_pane(args: &LastArgs, form: Form, ctx: &Context) -> Result<i32> {
    let Some(target) = args.pane.as_deref() else {
        bail!("give a pane (`last %3`) or `--transcript FILE`")
    };
    if let crate::remote::Target::Remote(host, pane) =
        crate::remote::split_target(target, &ctx.remote_hosts()?)
    {
        if args.screen {
            bail!(
                "--screen reads a screen on this host only; `last {host}:{pane}` gives its answer"
            );
        }
        return super::remote::last(&host, pane, form);
    }
    let tmux = ctx.tmux();
    let pane = super::remote::local_pane(&tmux, target)?;
    let reports = crate::scan::scan(&tmux, chrono::Utc::now())?;
    let report = report_of(&reports, &pane);
    let found = if args.screen {
        pane_screen(&tmux, &pane, report)?
    } else if let Some(why) = not_an_agent(&tmux, &pane, report) {
        let why = format!("{why}; `last --screen {pane}` prints its screen");
        return refuse(form, Some(&pane), None, "not-an-agent", &why);
    } else {
        let mut cache = AnswerCache::new(1);
        pane_answer(&tmux, &pane, report, &mut cache)?
    };
    let Some(found) = found else {
        return match report.map(|r| &r.status) {
            _ if args.screen => refuse(
                form,
                Some(&pane),
                None,
                "blank",
                &format!("pane {pane}'s screen is blank"),
            ),
            Some(s) if s.state == State::Attention => refuse(
                form,
                Some(&pane),
                None,
                "failed",
                &format!(
                    "pane {pane}'s last turn failed ({}): it has no answer",
                    crate::text::terminal_line(s.reason.as_deref().unwrap_or("error"))
                ),
            ),
            _ => refuse(
                form,
                Some(&pane),
                None,
                "no-answer",
                &format!("no answer in pane {pane} yet"),
            ),
        };
    };
    if form == Form::Json {
        let out = Output {
            text: &found.text,
            agent: found.agent,
            source: found.source.as_str(),
            transcript: found.transcript.as_deref(),
            at: found.at,
            key: found.key.as_deref(),
            cwd: report
                .map(|r| r.resolved.pane.cwd.as_str())
                .filter(|c| !c.is_empty()),
        };
        println!("{}", serde_json::to_string(&out)?);
    } else {
        println!("{}", form.text(&found.text));
        match (&found.transcript, found.source) {
            (Some(t), _) => eprintln!(
                "(source: transcript {})",
                crate::text::terminal_line(&t.display().to_string())
            ),
            (None, AnswerSource::Screen) => eprintln!("(source: pane {pane}'s screen)"),
            (None, _) => eprintln!("(source: pane {pane}, screen capture: no transcript)"),
        }
    }
    Ok(crate::exit::OK)
}

/// What `last --json` prints when there is no answer to give: one JSON document all the same.
#[derive(Serialize)]
struct Refusal<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pane: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    transcript: Option<&'a std::path::Path>,
    /// Always `refused`.
    outcome: &'static str,
    /// `not-an-agent`, `failed`, `no-answer` or `blank` (`--screen`).
    reason: &'static str,
    detail: &'a str,
}

/// No answer to give: `why` on stderr (and as a refusal document under `--json`), exit 1.
fn refuse(
    form: Form,
    pane: Option<&str>,
    transcript: Option<&std::path::Path>,
    reason: &'static str,
    why: &str,
) -> Result<i32> {
    if form == Form::Json {
        let out = Refusal {
            pane,
            transcript,
            outcome: "refused",
            reason,
            detail: why,
        };
        println!("{}", serde_json::to_string(&out)?);
    }
    eprintln!("agentpane: {}", crate::text::terminal_line(why));
    Ok(crate::exit::NOTHING)
}

/// Prints an answer (or the "no answer" message, exit 1).
fn print_answer(
    answer: Option<&Answer>,
    source: &'static str,
    transcript: Option<&std::path::Path>,
    form: Form,
    what: &str,
) -> Result<i32> {
    let Some(answer) = answer else {
        let why = format!("no assistant answer in {what} yet");
        return refuse(form, None, transcript, "no-answer", &why);
    };
    if form == Form::Json {
        let out = Output {
            text: &answer.text,
            agent: Some(answer.agent),
            source,
            transcript,
            at: answer.at,
            key: answer.key.as_deref(),
            cwd: None,
        };
        println!("{}", serde_json::to_string(&out)?);
    } else {
        println!("{}", form.text(&answer.text));
    }
    Ok(crate::exit::OK)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::{assert_terminal_safe, HOSTILE};

    #[test]
    fn on_a_terminal_last_prints_no_escape_sequence() {
        let form = Form::of(false, false, true);
        assert_eq!(form, Form::TerminalSafe);
        assert_terminal_safe(&form.text(HOSTILE));
        assert_eq!(form.text(HOSTILE), "abcdef");
    }

    #[test]
    fn into_a_pipe_or_with_raw_last_is_byte_exact() {
        for form in [Form::of(false, false, false), Form::of(false, true, true)] {
            assert_eq!(form, Form::Exact);
            assert_eq!(form.text(HOSTILE), HOSTILE);
        }
        assert_eq!(Form::of(true, false, true), Form::Json);
    }
}
