//! `agentpane hook` (record one Claude Code hook event) and `agentpane hooks install|uninstall`.

use std::io::{IsTerminal, Read};

use anyhow::{Context, Result};
use chrono::Utc;

use crate::cli::{HookArgs, HooksCommand};
use crate::evidence::hook::{self, HookInput};
use crate::evidence::settings;
use crate::exit;
use crate::paths;

/// Most stdin bytes `hook` keeps; the rest is drained unread.
pub const MAX_STDIN: u64 = 1 << 20;

/// Records one hook event. Runs inside the agent's hook path, so it never fails and never
/// writes to stdout (Claude Code reads hook stdout): problems go to stderr, exit is 0.
pub fn hook(_args: HookArgs) -> Result<i32> {
    if let Err(err) = record_from_stdin() {
        eprintln!("agentpane hook: {err:#}");
    }
    Ok(exit::OK)
}

fn record_from_stdin() -> Result<()> {
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        anyhow::bail!("expects one Claude Code hook event as JSON on stdin");
    }
    let mut lock = stdin.lock();
    let mut buf = Vec::new();
    (&mut lock)
        .take(MAX_STDIN)
        .read_to_end(&mut buf)
        .context("cannot read stdin")?;
    // Drain the rest so the agent never sees a broken pipe.
    let _ = std::io::copy(&mut lock, &mut std::io::sink());
    let Some(input) = HookInput::parse(&buf) else {
        anyhow::bail!("stdin is not a hook event ({} bytes)", buf.len());
    };
    let pane = std::env::var("TMUX_PANE").ok();
    hook::record_event(&paths::state_dir(), &input, pane.as_deref(), Utc::now())?;
    Ok(())
}

/// `hooks install|uninstall [--settings FILE]`.
pub fn hooks(cmd: HooksCommand) -> Result<i32> {
    let now = Utc::now();
    let state_dir = paths::state_dir();
    match cmd {
        HooksCommand::Install { settings: file } => {
            let path = file.unwrap_or_else(settings::default_settings_path);
            let exe = std::env::current_exe()
                .context("cannot find agentpane's own path for the hook command")?;
            let command = settings::hook_command(&exe);
            let out = settings::install_file(&path, &command, &state_dir, now)?;
            if out.changed {
                println!(
                    "installed agentpane hooks ({}) in {}",
                    settings::EVENTS.join(", "),
                    out.path.display()
                );
                if let Some(b) = out.backup {
                    println!("backup: {}", b.display());
                }
                println!("command: {command}");
            } else {
                println!(
                    "agentpane hooks already installed in {}",
                    out.path.display()
                );
            }
        }
        HooksCommand::Uninstall { settings: file } => {
            let path = file.unwrap_or_else(settings::default_settings_path);
            let out = settings::uninstall_file(&path, &state_dir, now)?;
            if out.changed {
                println!("removed agentpane hooks from {}", out.path.display());
                if let Some(b) = out.backup {
                    println!("backup: {}", b.display());
                }
            } else {
                println!("no agentpane hooks in {}", out.path.display());
            }
        }
    }
    Ok(exit::OK)
}
