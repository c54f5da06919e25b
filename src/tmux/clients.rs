//! The clients attached to the server: which pane each shows and when it last received a key.

use super::{Tmux, TmuxError};

/// One attached client, as tmux sees it now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientNow {
    /// `#{client_name}` (usually its terminal).
    pub name: String,
    /// `#{client_tty}`.
    pub tty: String,
    /// The pane it shows: its session's current window's active pane.
    pub pane: String,
    /// When it last received a key (or attached), in whole seconds since the epoch: tmux keeps
    /// the time exactly but shows only the seconds (`#{client_activity}`).
    pub activity: i64,
}

const FORMAT: &str = "#{client_name}\u{1f}#{client_tty}\u{1f}#{pane_id}\u{1f}#{client_activity}";

impl Tmux {
    /// Every client attached to a session.
    pub fn clients(&self) -> Result<Vec<ClientNow>, TmuxError> {
        Ok(parse(&self.cmd(&["list-clients", "-F", FORMAT])?))
    }

    /// Switches `client` (else tmux's choice: the current or most recently active client) to
    /// `pane` (`%N`): its session, its window and the pane itself.
    pub fn switch_to(&self, client: Option<&str>, pane: &str) -> Result<(), TmuxError> {
        let mut cmd: Vec<&str> = vec!["switch-client"];
        if let Some(c) = client {
            cmd.extend(["-c", c]);
        }
        cmd.extend([
            "-t",
            pane,
            ";",
            "select-window",
            "-t",
            pane,
            ";",
            "select-pane",
            "-t",
            pane,
        ]);
        self.cmd(&cmd).map(drop)
    }
}

/// The lines of `list-clients -F FORMAT`; a line that does not parse is left out.
fn parse(out: &str) -> Vec<ClientNow> {
    out.lines()
        .filter_map(|line| {
            let f: Vec<&str> = line.split('\u{1f}').collect();
            match f.as_slice() {
                [name, tty, pane, activity] if pane.starts_with('%') => Some(ClientNow {
                    name: name.to_string(),
                    tty: tty.to_string(),
                    pane: pane.to_string(),
                    activity: activity.parse().ok()?,
                }),
                _ => None,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_client_with_its_pane_and_last_key() {
        let out = "/dev/pts/3\u{1f}/dev/pts/3\u{1f}%4\u{1f}1796225556\n\
                   web\u{1f}\u{1f}%0\u{1f}1796225001\n\
                   broken line\n\
                   /dev/pts/9\u{1f}/dev/pts/9\u{1f}\u{1f}1796225556\n";
        let clients = parse(out);
        assert_eq!(clients.len(), 2);
        assert_eq!(
            clients[0],
            ClientNow {
                name: "/dev/pts/3".into(),
                tty: "/dev/pts/3".into(),
                pane: "%4".into(),
                activity: 1_796_225_556,
            }
        );
        assert_eq!(clients[1].name, "web");
    }
}
