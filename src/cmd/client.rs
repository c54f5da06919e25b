//! What the key bindings need from the tmux client that pressed the key: which client it is,
//! a one-line message on it, switching it to a pane, and menus and popups that stay open as
//! long as the person keeps them open.
//!
//! The bindings run agentpane with `run-shell -b` (formats such as `#{pane_id}` are expanded
//! there, unlike in `display-popup`'s command), so agentpane talks to tmux as a command-line
//! client: `display-menu` and `display-popup` then block until the menu or popup closes, and
//! must not be cut off by the usual per-call timeout.

use std::time::Duration;

use anyhow::{Context as _, Result};

use crate::tmux::{Pane, ProcessRunner, Socket, Tmux};

/// How long a menu or popup may stay open.
const OVERLAY_TIMEOUT: Duration = Duration::from_secs(24 * 3600);

/// A tmux handle whose calls may block until a menu or popup closes.
pub fn overlay_tmux(socket: &Socket) -> Tmux {
    Tmux::with_runner(Box::new(ProcessRunner {
        socket: socket.clone(),
        timeout: OVERLAY_TIMEOUT,
    }))
}

/// The client showing `pane` (the most recently active one when several do): the client a
/// key binding that passed `#{pane_id}` came from.
pub fn client_showing(tmux: &Tmux, pane: &str) -> Option<String> {
    let out = tmux
        .cmd(&[
            "list-clients",
            "-F",
            "#{client_activity}\u{1f}#{pane_id}\u{1f}#{client_name}",
        ])
        .ok()?;
    out.lines()
        .filter_map(|l| {
            let mut f = l.split('\u{1f}');
            let activity: u64 = f.next()?.parse().ok()?;
            let shown = f.next()?;
            let name = f.next()?;
            (shown == pane && !name.is_empty()).then(|| (activity, name.to_string()))
        })
        .max()
        .map(|(_, name)| name)
}

/// One status-line message on `client` (tmux picks a client when there is none). Failures are
/// ignored: there is nowhere better to report them.
pub fn tell(tmux: &Tmux, client: Option<&str>, text: &str) {
    let mut argv = vec!["display-message"];
    if let Some(c) = client {
        argv.extend(["-c", c]);
    }
    // `-l` (3.4+) is not there on 3.2/3.3: escape the text for tmux formats instead.
    let text = crate::tmux::escape_format(text);
    argv.push(&text);
    let _ = tmux.cmd(&argv);
}

/// How a key-bound command ends: `Ok(Some(why))` (nothing to do) and errors are told on
/// `client` in one status-line message, so a key never leaves an error view behind.
pub fn finish(tmux: &Tmux, client: Option<&str>, result: Result<Option<String>>) -> Result<i32> {
    match result {
        Ok(None) => Ok(crate::exit::OK),
        Ok(Some(nothing)) => {
            tell(tmux, client, &format!("agentpane: {nothing}"));
            Ok(crate::exit::NOTHING)
        }
        Err(e) => {
            tell(tmux, client, &format!("agentpane: {e:#}"));
            Err(e)
        }
    }
}

/// Switches `client` (or the current client) to `pane`: its session, window and pane.
pub fn switch_to(tmux: &Tmux, client: Option<&str>, pane: &Pane) -> Result<()> {
    tmux.switch_to(client, &pane.pane_id)
        .with_context(|| format!("cannot switch to {}", pane.target()))
}

/// True when this server's `display-popup` takes `-T title` (tmux 3.3 and later).
pub fn popup_takes_title(tmux: &Tmux) -> bool {
    tmux.cmd(&["display-message", "-p", "#{version}"])
        .map(|v| crate::tmux::version_at_least(v.trim(), (3, 3)))
        .unwrap_or(false)
}
