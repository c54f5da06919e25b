//! `notify test [CHANNEL]`: a sample notification on each configured channel (or the one
//! named), at once and once, so a user sees the setup work; exit 1 with the reason when a
//! channel fails.

use std::sync::Arc;

use anyhow::{bail, Result};

use super::Context;
use crate::cli::{NotifyAction, NotifyArgs};
use crate::notify::dispatch::{deliver, Job};
use crate::notify::{hostname, terminal, Config, Notification};

fn quiet_log(_: &str) {}

pub fn run(args: NotifyArgs, ctx: &Context) -> Result<i32> {
    let NotifyAction::Test = args.action;
    let tmux = ctx.tmux();
    let config = Config::read(&tmux, None)?;
    for p in &config.problems {
        eprintln!("agentpane: {p}");
    }
    let channels = match args.channel {
        Some(c) => vec![c],
        None => config.channels.clone(),
    };
    if channels.is_empty() {
        bail!(
            "no notification channel is on: name one (agentpane notify test ntfy) or list them, \
             e.g. tmux set -g @agentpane-notify 'terminal ntfy'"
        );
    }
    let job = Job {
        note: Notification::sample(&hostname()),
        clients: Arc::new(terminal::clients(&tmux).unwrap_or_default()),
        config: Arc::new(config),
        test: true,
    };
    let mut failed = 0;
    for channel in channels {
        match deliver(channel, &job, &ctx.socket, quiet_log) {
            Ok(done) => println!("✓ {}: {done}", channel.name()),
            Err(e) => {
                failed += 1;
                println!("✗ {}: {e:#}", channel.name());
            }
        }
    }
    Ok(if failed == 0 {
        crate::exit::OK
    } else {
        crate::exit::NOTHING
    })
}
