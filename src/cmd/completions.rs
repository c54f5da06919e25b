//! `completions SHELL` and `man`: generated from the clap definition in `crate::cli`, so they
//! never drift from the real flags.

use std::io::Write;

use anyhow::{Context, Result};
use clap::CommandFactory;

use crate::cli::{Cli, CompletionsArgs};
use crate::exit;

pub fn completions(args: CompletionsArgs) -> Result<i32> {
    let mut out = Vec::new();
    clap_complete::generate(
        args.shell,
        &mut visible(&Cli::command()),
        "agentpane",
        &mut out,
    );
    emit(&out)
}

/// `cmd` without its hidden subcommands and flags, at every level. clap_complete's generators
/// offer everything `get_subcommands` returns, hidden or not, and clap has no way to remove a
/// subcommand: so the tree is rebuilt from what `--help` shows.
pub fn visible(cmd: &clap::Command) -> clap::Command {
    let mut out = clap::Command::new(cmd.get_name().to_owned())
        .args(cmd.get_arguments().filter(|a| !a.is_hide_set()).cloned())
        .subcommands(
            cmd.get_subcommands()
                .filter(|s| !s.is_hide_set())
                .map(visible),
        );
    if let Some(about) = cmd.get_about() {
        out = out.about(about.clone());
    }
    if let Some(version) = cmd.get_version() {
        out = out.version(version.to_owned());
    }
    if cmd.is_subcommand_required_set() {
        out = out.subcommand_required(true);
    }
    out
}

pub fn man() -> Result<i32> {
    emit(&super::man::page()?)
}

/// Writes to stdout; a closed pipe (`agentpane man | head`) is not an error.
fn emit(bytes: &[u8]) -> Result<i32> {
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(bytes).and_then(|()| stdout.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(e).context("cannot write to stdout")
        }
        _ => Ok(exit::OK),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hidden_anywhere(cmd: &clap::Command) -> Vec<String> {
        let mut found: Vec<String> = cmd
            .get_arguments()
            .filter(|a| a.is_hide_set())
            .map(|a| a.get_id().to_string())
            .collect();
        for sub in cmd.get_subcommands() {
            if sub.is_hide_set() {
                found.push(sub.get_name().to_owned());
            }
            found.extend(hidden_anywhere(sub));
        }
        found
    }

    #[test]
    fn the_completion_tree_keeps_every_visible_command_and_nothing_hidden() {
        let full = Cli::command();
        assert!(
            !hidden_anywhere(&full).is_empty(),
            "the CLI hides something"
        );
        let shown = visible(&full);
        assert_eq!(hidden_anywhere(&shown), Vec::<String>::new());
        let names = |c: &clap::Command| -> Vec<String> {
            c.get_subcommands()
                .filter(|s| !s.is_hide_set())
                .map(|s| s.get_name().to_owned())
                .collect()
        };
        assert_eq!(names(&shown), names(&full));
        shown.clone().debug_assert();
    }
}
