//! `agentpane hook` (record one Claude Code hook event) and `agentpane hooks
//! install|uninstall`: Claude Code's settings, or with `--agent` the file an agent loads by
//! itself (`Agent::hook_file`).

use std::io::{IsTerminal, Read};

use anyhow::{Context, Result};
use chrono::Utc;

use crate::agents::claude::settings;
use crate::agents::HookFile;
use crate::cli::{HookArgs, HooksCommand};
use crate::events::AgentKind;
use crate::evidence::hook::{self, HookInput};
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

/// `hooks install|uninstall [--settings FILE | --agent NAME]`.
pub fn hooks(cmd: HooksCommand) -> Result<i32> {
    let now = Utc::now();
    let state_dir = paths::state_dir();
    match cmd {
        HooksCommand::Install {
            agent: Some(kind), ..
        } => install_agent_file(kind)?,
        HooksCommand::Uninstall {
            agent: Some(kind), ..
        } => uninstall_agent_file(kind)?,
        HooksCommand::Install {
            settings: file,
            no_statusline,
            ..
        } => {
            let path = file.unwrap_or_else(settings::default_settings_path);
            let exe = std::env::current_exe()
                .context("cannot find agentpane's own path for the hook command")?;
            let command = settings::hook_command(&exe);
            let program = (!no_statusline).then(|| settings::status_line_program(&exe));
            let out = settings::install_file(&path, &command, program.as_deref(), &state_dir, now)?;
            if let Some(note) = &out.note {
                eprintln!("agentpane: {note}");
            }
            if out.changed {
                println!(
                    "installed agentpane hooks ({}) in {}",
                    settings::EVENTS.join(", "),
                    out.path.display()
                );
                if program.is_some() && out.note.is_none() {
                    println!(
                        "status line: agentpane statusline keeps the plan windows, then runs \
                         your own status-line command"
                    );
                }
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
        HooksCommand::Uninstall { settings: file, .. } => {
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

/// The hook file of `kind` for this user (`--agent` only offers agents that have one).
fn agent_file(kind: AgentKind) -> Result<HookFile> {
    let home = paths::home_dir();
    crate::agents::of(kind)
        .hook_file(&home, &|k| std::env::var(k).ok())
        .with_context(|| format!("agentpane has no hooks for {kind}"))
}

/// Whether `existing` (what is at a hook file's path) is agentpane's: it starts with the
/// first line of agentpane's text, which marks every version of the file agentpane wrote.
fn written_by_agentpane(existing: &[u8], file: &HookFile) -> bool {
    let marker = file.text.lines().next().unwrap_or_default();
    !marker.is_empty() && existing.split(|b| *b == b'\n').next() == Some(marker.as_bytes())
}

/// What is at `file`'s path: `None` when nothing; an error when something agentpane did not
/// write is there (the user's own file of that name), which agentpane never replaces or
/// removes; `verb` says what was refused.
fn existing_agent_file(file: &HookFile, verb: &str) -> Result<Option<Vec<u8>>> {
    let path = &file.path;
    match std::fs::read(path) {
        Ok(b) if written_by_agentpane(&b, file) => Ok(Some(b)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
        Ok(_) => anyhow::bail!(
            "{} was not written by agentpane (it lacks the first line `{}`): not {verb}; move \
             it away and run this again",
            path.display(),
            file.text.lines().next().unwrap_or_default()
        ),
    }
}

/// Writes `kind`'s hook file (an extension the agent loads by itself); idempotent. Replaces
/// only a file agentpane wrote.
fn install_agent_file(kind: AgentKind) -> Result<()> {
    let file = agent_file(kind)?;
    let path = &file.path;
    if existing_agent_file(&file, "replaced")?.is_some_and(|b| b == file.text.as_bytes()) {
        println!(
            "agentpane's {} already installed: {}",
            file.what,
            path.display()
        );
        return Ok(());
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    paths::write_atomic(path, file.text.as_bytes())?;
    println!("installed agentpane's {}: {}", file.what, path.display());
    println!("{kind} sessions started from now on are tied to their panes; restart running ones");
    Ok(())
}

/// Removes `kind`'s hook file, if it is agentpane's; refuses one agentpane did not write.
fn uninstall_agent_file(kind: AgentKind) -> Result<()> {
    let file = agent_file(kind)?;
    let path = &file.path;
    match existing_agent_file(&file, "removed")? {
        None => println!("no agentpane {} at {}", file.what, path.display()),
        Some(_) => {
            std::fs::remove_file(path)
                .with_context(|| format!("cannot remove {}", path.display()))?;
            println!("removed agentpane's {}: {}", file.what, path.display());
        }
    }
    Ok(())
}
