//! `watch`: the background watcher (see `crate::watch`).

use std::time::Duration;

use anyhow::{bail, Result};

use super::status::{format, icons};
use super::Context;
use crate::cli::WatchArgs;
use crate::watch::sinks::{alert_command, SinkConfig};
use crate::watch::{self, WatchOptions};

fn seconds(name: &str, secs: f64) -> Result<Duration> {
    if !secs.is_finite() || secs < 0.0 {
        bail!("--{name} must be a non-negative number of seconds, not {secs}");
    }
    Ok(Duration::from_secs_f64(secs))
}

pub fn run(args: WatchArgs, ctx: &Context) -> Result<i32> {
    if args.replace {
        end_running_watcher(ctx)?;
    }
    let poll = seconds("poll", args.poll)?.max(Duration::from_millis(100));
    let exit_after = args
        .exit_after
        .map(|s| seconds("exit-after", s))
        .transpose()?;
    let opts = WatchOptions {
        poll,
        exit_after,
        format: format(args.format.as_deref()),
        icons: icons(args.icons.as_deref()),
        alert: crate::alert::Config {
            delay: seconds("alert-delay", args.alert_delay)?,
            machine: args.alert_machine,
        },
        sinks: SinkConfig {
            socket: ctx.socket.clone(),
            message: !args.no_message,
            bell: !args.no_bell,
            // A channel list in @agentpane-notify hands the desktop to the notify module.
            notifier: if args.no_notify || crate::notify::config::lists_channels(&ctx.tmux()) {
                None
            } else {
                crate::notify::desktop::notifier()
            },
            command: args.alert_command.as_deref().and_then(alert_command),
            timeout: seconds("alert-timeout", args.alert_timeout)?,
        },
        windows: Default::default(),
        thresholds: crate::segment::Thresholds::new(args.limit_threshold, args.context_threshold)
            .map_err(anyhow::Error::msg)?,
        channel_grace: (!args.no_channel_delivery)
            .then(|| seconds("channel-grace", args.channel_grace))
            .transpose()?,
        hosts: ctx.remote_hosts()?,
    };
    watch::run(opts)
}

/// How long the watcher being replaced may take to clear its options and exit.
const REPLACE_WAIT: Duration = Duration::from_secs(10);

/// Sends SIGTERM to the watcher holding this server's lock and waits until it let go (it
/// clears its tmux options first, so the new watcher's are not wiped after it set them).
/// A watcher of an older agentpane (its lock at the top of the state folder) is ended too.
fn end_running_watcher(ctx: &Context) -> Result<()> {
    let socket = ctx.tmux().socket_path()?;
    let state = crate::paths::state_dir();
    for lock in [
        crate::watch::lock::lock_path(&state, &socket),
        crate::watch::lock::legacy_lock_path(&state, &socket),
    ] {
        let Some(pid) = crate::paths::lock_holder(&lock) else {
            continue;
        };
        if pid == std::process::id() {
            continue;
        }
        let pid = i32::try_from(pid)?;
        // SAFETY: kill(2) with a pid from /proc/locks and a valid signal number.
        unsafe { libc::kill(pid, libc::SIGTERM) };
        if crate::paths::FileLock::acquire_within(&lock, REPLACE_WAIT)?.is_none() {
            bail!("the watcher pid {pid} did not stop within {REPLACE_WAIT:?}");
        }
    }
    Ok(())
}

/// Touches the state folder's nudge file, which a running watcher watches: it rescans at once
/// (e.g. to acknowledge the pane the user just switched to). Quiet and exit 0 either way.
pub fn nudge() -> Result<i32> {
    let dir = crate::paths::state_dir();
    if crate::paths::ensure_private_dir(&dir).is_ok() {
        let _ = crate::paths::write_atomic(&crate::watch::nudge_path(&dir), b"focus\n");
    }
    Ok(crate::exit::OK)
}
