//! The terminal channel: a desktop notification drawn by the user's own terminal emulator.
//! The escape sequence (OSC 777, OSC 9 or OSC 99, per client terminal) is written straight to
//! each tmux client's terminal (`#{client_tty}`), the way the client itself writes: through an
//! SSH session it crosses to the laptop, and no pane needs `allow-passthrough` (tmux would pass
//! a pane's sequence only to the clients showing that pane, the very ones that need none). A
//! client whose terminal is itself tmux (nested) gets it wrapped in tmux's DCS passthrough.
//! Sent to the clients attached to the pane's session, never to one showing that pane.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;

use anyhow::{bail, Result};

use super::config::Osc;
use super::Notification;
use crate::tmux::{Tmux, TmuxError};

/// One attached client, as this channel needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Client {
    pub tty: String,
    pub session: String,
    /// The pane it shows.
    pub pane: String,
    /// `#{client_termname}`: the client's `TERM`.
    pub termname: String,
    /// `#{client_termtype}`: what the terminal says it is (tmux ≥ 3.3), e.g. `iTerm2 3.5.0`.
    pub termtype: String,
}

const FORMAT: &str =
    "#{client_tty}\u{1f}#{session_name}\u{1f}#{pane_id}\u{1f}#{client_termname}\u{1f}#{client_termtype}\u{1f}#{client_flags}";

/// The clients attached now, control-mode clients (they have no terminal) left out.
pub fn clients(tmux: &Tmux) -> Result<Vec<Client>, TmuxError> {
    Ok(parse(&tmux.cmd(&["list-clients", "-F", FORMAT])?))
}

fn parse(out: &str) -> Vec<Client> {
    out.lines()
        .filter_map(|line| match line.split('\u{1f}').collect::<Vec<_>>()[..] {
            [tty, session, pane, termname, termtype, flags]
                if tty.starts_with("/dev/") && !flags.split(',').any(|f| f == "control-mode") =>
            {
                Some(Client {
                    tty: tty.into(),
                    session: session.into(),
                    pane: pane.into(),
                    termname: termname.into(),
                    termtype: termtype.into(),
                })
            }
            _ => None,
        })
        .collect()
}

/// The clients that get `n`: attached to its session, not showing its pane.
pub fn recipients<'a>(clients: &'a [Client], n: &Notification) -> Vec<&'a Client> {
    // An account's alert (a plan window) belongs to no pane: every client gets it.
    let anywhere = n.pane.is_empty();
    clients
        .iter()
        .filter(|c| anywhere || (c.session == n.session() && c.pane != n.pane))
        .collect()
}

/// The sequences a client's terminal understands: the configured ones, else by its name.
pub fn pick(configured: &[Osc], c: &Client) -> Vec<Osc> {
    if !configured.is_empty() {
        return configured.to_vec();
    }
    let name = c.termname.to_ascii_lowercase();
    let kind = c.termtype.to_ascii_lowercase();
    if name.contains("kitty") || kind.starts_with("kitty") {
        vec![Osc::N99]
    } else if kind.starts_with("iterm2") {
        vec![Osc::N9]
    } else if ["wezterm", "ghostty", "foot", "rxvt"]
        .iter()
        .any(|t| kind.starts_with(t) || name.contains(t))
    {
        vec![Osc::N777]
    } else {
        vec![Osc::N777, Osc::N9]
    }
}

/// One sequence; `title` and `body` must be clean (no control characters).
pub fn sequence(osc: Osc, title: &str, body: &str) -> String {
    // `;` ends OSC 777's title; a body on one line reads best in a notification bubble.
    let title = title.replace(';', ",");
    let body = body.replace('\n', " · ");
    match osc {
        Osc::N777 => format!("\x1b]777;notify;{title};{body}\x1b\\"),
        Osc::N9 => format!("\x1b]9;{title}: {body}\x1b\\"),
        Osc::N99 => format!(
            "\x1b]99;i=agentpane:d=0:p=title;{title}\x1b\\\x1b]99;i=agentpane:d=1:p=body;{body}\x1b\\"
        ),
    }
}

/// `seq` so that a tmux running in the client's terminal passes it on (its ESCs doubled).
pub fn passthrough(seq: &str) -> String {
    format!("\x1bPtmux;{}\x1b\\", seq.replace('\x1b', "\x1b\x1b"))
}

/// True when the client's terminal is itself tmux (a nested tmux).
fn nested(c: &Client) -> bool {
    c.termname.starts_with("tmux") || c.termname.starts_with("screen")
}

/// All the bytes for one client.
pub fn bytes_for(configured: &[Osc], c: &Client, n: &Notification) -> Vec<u8> {
    let seq: String = pick(configured, c)
        .into_iter()
        .map(|o| sequence(o, &n.title, &n.body))
        .collect();
    if nested(c) { passthrough(&seq) } else { seq }.into_bytes()
}

/// Writes `bytes` to a client's terminal in one write; never waits on a stalled terminal.
pub fn write_tty(tty: &str, bytes: &[u8]) -> Result<()> {
    if !tty.starts_with("/dev/") {
        bail!("{tty:?} is not a terminal");
    }
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        // O_NOCTTY: the watcher must not adopt the client's terminal as its own.
        .custom_flags(libc::O_NOCTTY | libc::O_NONBLOCK)
        .open(tty)?;
    f.write_all(bytes)?;
    Ok(())
}

/// Sends `n` to the clients `to`; the number reached, or why none was.
pub fn send(to: &[&Client], configured: &[Osc], n: &Notification) -> Result<usize> {
    if to.is_empty() {
        bail!("no tmux client to show it (none attached, or each shows the pane itself)");
    }
    let mut reached = 0;
    let mut first_error = None;
    for c in to {
        match write_tty(&c.tty, &bytes_for(configured, c, n)) {
            Ok(()) => reached += 1,
            Err(e) => {
                first_error.get_or_insert_with(|| format!("{}: {e}", c.tty));
            }
        }
    }
    match first_error {
        Some(e) if reached == 0 => bail!("{e}"),
        _ => Ok(reached),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn client(pane: &str, termname: &str, termtype: &str) -> Client {
        Client {
            tty: "/dev/pts/7".into(),
            session: "work".into(),
            pane: pane.into(),
            termname: termname.into(),
            termtype: termtype.into(),
        }
    }

    #[test]
    fn parse_skips_control_clients_and_lines_without_a_tty() {
        let out =
            "/dev/pts/3\u{1f}work\u{1f}%1\u{1f}xterm-256color\u{1f}\u{1f}attached,focused,UTF-8\n\
                   \u{1f}work\u{1f}%1\u{1f}\u{1f}\u{1f}attached,control-mode\n\
                   /dev/pts/4\u{1f}work\u{1f}%1\u{1f}\u{1f}\u{1f}attached,control-mode\n\
                   junk\n";
        assert_eq!(
            parse(out),
            [client("%1", "xterm-256color", "")].map(|mut c| {
                c.tty = "/dev/pts/3".into();
                c
            })
        );
    }

    #[test]
    fn only_clients_of_the_session_not_showing_the_pane() {
        let mut n = Notification::sample("box");
        n.target = "work:1.0".into();
        n.pane = "%5".into();
        let mut other = client("%2", "xterm", "");
        other.session = "play".into();
        let clients = [client("%5", "xterm", ""), client("%6", "xterm", ""), other];
        let got = recipients(&clients, &n);
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].pane, "%6");
        // A plan window's alert is the account's, not a pane's: every client hears it.
        n.target = String::new();
        n.pane = String::new();
        assert_eq!(recipients(&clients, &n).len(), 3);
    }

    #[test]
    fn sequences_per_terminal() {
        assert_eq!(
            sequence(Osc::N777, "claude; waiting", "npm test\nbox w:1.0"),
            "\x1b]777;notify;claude, waiting;npm test · box w:1.0\x1b\\"
        );
        assert_eq!(sequence(Osc::N9, "t", "b"), "\x1b]9;t: b\x1b\\");
        assert!(sequence(Osc::N99, "t", "b").starts_with("\x1b]99;i=agentpane:d=0:p=title;t\x1b\\"));
        assert_eq!(pick(&[], &client("%1", "xterm-kitty", "")), [Osc::N99]);
        assert_eq!(
            pick(&[], &client("%1", "xterm-256color", "iTerm2 3.5.0")),
            [Osc::N9]
        );
        assert_eq!(pick(&[], &client("%1", "foot", "")), [Osc::N777]);
        assert_eq!(
            pick(&[], &client("%1", "xterm-256color", "")),
            [Osc::N777, Osc::N9]
        );
        assert_eq!(
            pick(&[Osc::N9], &client("%1", "xterm-kitty", "")),
            [Osc::N9]
        );
    }

    #[test]
    fn a_nested_tmux_gets_the_sequence_through_its_passthrough() {
        let mut n = Notification::sample("box");
        n.title = "t".into();
        n.body = "b".into();
        let bytes = bytes_for(&[Osc::N9], &client("%1", "tmux-256color", ""), &n);
        assert_eq!(bytes, b"\x1bPtmux;\x1b\x1b]9;t: b\x1b\x1b\\\x1b\\");
    }
}
