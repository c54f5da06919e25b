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
use crate::route::source::{pane_answer, report_of};
use crate::state::State;

#[derive(Serialize)]
struct Output<'a> {
    text: &'a str,
    agent: Option<AgentKind>,
    source: &'static str,
    transcript: Option<&'a std::path::Path>,
    at: Option<Time>,
    key: Option<&'a str>,
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

/// `last PANE`: the transcript of the pane's agent when one resolves, else the screen.
fn run_pane(args: &LastArgs, form: Form, ctx: &Context) -> Result<i32> {
    let Some(target) = args.pane.as_deref() else {
        bail!("give a pane (`last %3`) or `--transcript FILE`")
    };
    if let crate::remote::Target::Remote(host, pane) =
        crate::remote::split_target(target, &ctx.remote_hosts()?)
    {
        return super::remote::last(&host, pane, form);
    }
    let tmux = ctx.tmux();
    let pane = tmux.pane_id(target)?;
    let reports = crate::scan::scan(&tmux, chrono::Utc::now())?;
    let mut cache = AnswerCache::new(1);
    let found = pane_answer(&tmux, &pane, report_of(&reports, &pane), &mut cache)?;
    let Some(found) = found else {
        match report_of(&reports, &pane).map(|r| &r.status) {
            Some(s) if s.state == State::Attention => eprintln!(
                "agentpane: pane {pane}'s last turn failed ({}): it has no answer",
                crate::text::terminal_line(s.reason.as_deref().unwrap_or("error"))
            ),
            _ => eprintln!("agentpane: no answer in pane {pane} yet"),
        }
        return Ok(crate::exit::NOTHING);
    };
    if form == Form::Json {
        let out = Output {
            text: &found.text,
            agent: found.agent,
            source: found.source.as_str(),
            transcript: found.transcript.as_deref(),
            at: found.at,
            key: found.key.as_deref(),
        };
        println!("{}", serde_json::to_string(&out)?);
    } else {
        println!("{}", form.text(&found.text));
        match &found.transcript {
            Some(t) => eprintln!(
                "(source: transcript {})",
                crate::text::terminal_line(&t.display().to_string())
            ),
            None => eprintln!("(source: pane {pane}, screen capture: no transcript)"),
        }
    }
    Ok(crate::exit::OK)
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
        eprintln!(
            "agentpane: no assistant answer in {} yet",
            crate::text::terminal_line(what)
        );
        return Ok(crate::exit::NOTHING);
    };
    if form == Form::Json {
        let out = Output {
            text: &answer.text,
            agent: Some(answer.agent),
            source,
            transcript,
            at: answer.at,
            key: answer.key.as_deref(),
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
