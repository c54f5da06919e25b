//! `completions SHELL` and the hidden `man`: generated from the clap definition in
//! `crate::cli`, so they never drift from the real flags.

use std::io::Write;

use anyhow::{Context, Result};
use clap::CommandFactory;

use crate::cli::{Cli, CompletionsArgs};
use crate::exit;

pub fn completions(args: CompletionsArgs) -> Result<i32> {
    let mut out = Vec::new();
    clap_complete::generate(args.shell, &mut Cli::command(), "agentpane", &mut out);
    emit(&out)
}

pub fn man() -> Result<i32> {
    let mut out = Vec::new();
    clap_mangen::Man::new(Cli::command())
        .render(&mut out)
        .context("cannot render the man page")?;
    emit(&out)
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
