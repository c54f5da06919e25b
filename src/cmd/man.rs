//! The man page: clap_mangen's sections for the top-level command, then one list of the
//! subcommands (each one's flags are in `agentpane COMMAND --help`; there are no per-command
//! pages to point at) and the exit status.

use anyhow::{Context, Result};
use clap::CommandFactory;
use roff::{bold, roman, Roff};

use crate::cli::Cli;
use crate::exit;

/// What each exit code means, for EXIT STATUS (the README's exit-code table says the same).
const EXIT_STATUS: &[(i32, &str)] = &[
    (exit::OK, "Success (`status` and `hook` always exit 0)."),
    (
        exit::NOTHING,
        "Nothing to give: no answer yet, the destination is busy, a channel rule refused the \
         message; for `doctor`, something needs a fix.",
    ),
    (
        exit::USAGE,
        "Bad input: an unreadable file, an unknown pane or channel, bad arguments.",
    ),
    (exit::NO_TMUX, "No tmux server, or tmux is missing."),
    (crate::channel::exit::TIMEOUT, "`channel watch` timed out."),
    (
        crate::channel::exit::ESCALATED,
        "`channel send` hit the round limit: the thread was closed with ESCALATED.",
    ),
    (
        exit::REFUSED,
        "Routed text refused for safety: the destination is not a coding agent, or its agent \
         exited, was suspended or replaced. Nothing was pasted.",
    ),
];

/// The whole page, roff.
pub fn page() -> Result<Vec<u8>> {
    let cmd = Cli::command();
    let man = clap_mangen::Man::new(cmd.clone());
    let mut out = Vec::new();
    man.render_title(&mut out)
        .and_then(|()| man.render_name_section(&mut out))
        .and_then(|()| man.render_synopsis_section(&mut out))
        .and_then(|()| man.render_description_section(&mut out))
        .and_then(|()| man.render_options_section(&mut out))
        .and_then(|()| extra_sections(&cmd).to_writer(&mut out))
        .and_then(|()| man.render_version_section(&mut out))
        .context("cannot render the man page")?;
    Ok(out)
}

/// SUBCOMMANDS (the visible ones, named as they are typed) and EXIT STATUS.
fn extra_sections(cmd: &clap::Command) -> Roff {
    let mut roff = Roff::new();
    roff.control("SH", ["SUBCOMMANDS"]);
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        roff.control("TP", []);
        roff.text([bold(format!("{} {}", cmd.get_name(), sub.get_name()))]);
        if let Some(about) = sub.get_about() {
            roff.text([roman(about.to_string())]);
        }
    }
    roff.control("PP", []);
    roff.text([
        roman("Each command's arguments and flags: "),
        bold(format!("{} COMMAND --help", cmd.get_name())),
        roman("."),
    ]);
    roff.control("SH", ["EXIT STATUS"]);
    for (code, meaning) in EXIT_STATUS {
        roff.control("TP", []);
        roff.text([bold(code.to_string())]);
        roff.text([roman(*meaning)]);
    }
    roff
}
