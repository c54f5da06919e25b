//! The delivery side door (docs/design.md#delivery): named paste buffers, bracketed paste, a
//! separate Enter key, bounded captures and escaped messages. Routed text only ever travels on
//! stdin or as a plain argument, never through a shell or a format string.

use super::{Tmux, TmuxError};

/// Most scrollback lines a capture ever asks for.
pub const MAX_CAPTURE_LINES: u32 = 2000;

impl Tmux {
    /// `load-buffer -b NAME -`: the text arrives on stdin, so its size and content never touch
    /// the command line.
    pub fn load_buffer(&self, name: &str, data: &[u8]) -> Result<(), TmuxError> {
        self.cmd_stdin(&["load-buffer", "-b", name, "-"], data)
            .map(|_| ())
    }

    /// `paste-buffer -p -d -b NAME -t PANE`: bracketed paste (when the application asked for
    /// it, newlines inside never submit), and the buffer is deleted afterwards.
    pub fn paste_buffer(&self, name: &str, pane: &str) -> Result<(), TmuxError> {
        self.cmd(&["paste-buffer", "-p", "-d", "-b", name, "-t", pane])
            .map(|_| ())
    }

    /// `paste-buffer` as [`Tmux::paste_buffer`], but only while the pane still runs what
    /// `expect` saw: tmux checks the pane's pid, that it is alive, and the name of its
    /// terminal's foreground process group in the same command that pastes, so no other
    /// program can take the foreground between the check and the paste. `Ok(false)`: the pane
    /// changed, nothing was pasted, and the buffer is deleted.
    pub fn paste_buffer_if(
        &self,
        name: &str,
        pane: &str,
        expect: &PaneNow,
    ) -> Result<bool, TmuxError> {
        let paste = format!("paste-buffer -p -d -b {name} -t {pane}");
        let refused = format!("delete-buffer -b {name} ; display-message -p {REFUSED_MARK}");
        self.run_if(pane, expect, &paste, &refused)
    }

    /// Presses Enter as [`Tmux::send_enter`], only while the pane still runs what `expect`
    /// saw (see [`Tmux::paste_buffer_if`]); `Ok(false)` when it does not.
    pub fn send_enter_if(&self, pane: &str, expect: &PaneNow) -> Result<bool, TmuxError> {
        let enter = format!("send-keys -t {pane} Enter");
        let refused = format!("display-message -p {REFUSED_MARK}");
        self.run_if(pane, expect, &enter, &refused)
    }

    /// Presses `key` (a tmux key name, `C-u`) `times` times, only while the pane still runs
    /// what `expect` saw (see [`Tmux::paste_buffer_if`]); `Ok(false)` when it does not.
    pub fn send_keys_if(
        &self,
        pane: &str,
        expect: &PaneNow,
        key: &str,
        times: usize,
    ) -> Result<bool, TmuxError> {
        let keys = format!("send-keys -N {} -t {pane} {key}", times.max(1));
        let refused = format!("display-message -p {REFUSED_MARK}");
        self.run_if(pane, expect, &keys, &refused)
    }

    fn run_if(
        &self,
        pane: &str,
        expect: &PaneNow,
        then: &str,
        otherwise: &str,
    ) -> Result<bool, TmuxError> {
        if !command_safe(pane) || !then.split(' ').all(command_safe) {
            return Err(TmuxError::Command(format!(
                "refusing an unusual target or buffer name in `{then}`"
            )));
        }
        let condition = expect.condition();
        let out = self.cmd(&["if-shell", "-F", "-t", pane, &condition, then, otherwise])?;
        Ok(!out.contains(REFUSED_MARK))
    }

    /// What runs in `pane` right now: its pid, terminal, whether it is dead, and the name of
    /// its terminal's foreground process group.
    pub fn pane_now(&self, pane: &str) -> Result<PaneNow, TmuxError> {
        let out = self.cmd(&[
            "display-message",
            "-p",
            "-t",
            pane,
            "#{pane_pid}\u{1f}#{pane_tty}\u{1f}#{pane_dead}\u{1f}#{pane_current_command}",
        ])?;
        let line = out.trim_end_matches('\n');
        let f: Vec<&str> = line.splitn(4, '\u{1f}').collect();
        match f.as_slice() {
            [pid, tty, dead, command] => Ok(PaneNow {
                pane_pid: pid
                    .parse()
                    .map_err(|_| TmuxError::Command(format!("no pane `{pane}`")))?,
                tty: tty.to_string(),
                dead: *dead == "1",
                command: command.to_string(),
            }),
            _ => Err(TmuxError::Command(format!("no pane `{pane}`"))),
        }
    }

    /// Deletes a named buffer; a missing buffer is not an error.
    pub fn delete_buffer(&self, name: &str) {
        let _ = self.cmd(&["delete-buffer", "-b", name]);
    }

    /// Presses Enter in `pane`, as its own key press.
    pub fn send_enter(&self, pane: &str) -> Result<(), TmuxError> {
        self.cmd(&["send-keys", "-t", pane, "Enter"]).map(|_| ())
    }

    /// The visible screen with its colours and attributes (`capture-pane -p -e -J`): which
    /// option of a dialog is selected shows only there.
    pub fn capture_styled(&self, pane: &str) -> Result<String, TmuxError> {
        self.cmd(&["capture-pane", "-p", "-e", "-J", "-t", pane])
    }

    /// `capture-pane -p -J` of the visible screen plus up to `lines` of scrollback (capped at
    /// [`MAX_CAPTURE_LINES`]); wrapped lines are joined.
    pub fn capture(&self, pane: &str, lines: u32) -> Result<String, TmuxError> {
        let start = format!("-{}", lines.min(MAX_CAPTURE_LINES));
        self.cmd(&["capture-pane", "-p", "-J", "-S", &start, "-t", pane])
    }

    /// The `%N` id of any pane target (`work:2.1`, `=work:2`, `%3`).
    pub fn pane_id(&self, target: &str) -> Result<String, TmuxError> {
        let out = self.cmd(&["display-message", "-p", "-t", target, "#{pane_id}"])?;
        let id = out.trim();
        if id.starts_with('%') {
            Ok(id.to_string())
        } else {
            Err(TmuxError::Command(format!("no pane `{target}`")))
        }
    }

    /// The server's socket path: identifies the server so a queued `%3` is never delivered
    /// into another server's `%3`.
    /// Asked once per handle (a `list-panes` may have told it already).
    pub fn socket_path(&self) -> Result<String, TmuxError> {
        if let Some(socket) = self.socket.get() {
            return Ok(socket.clone());
        }
        let socket = self
            .cmd(&["display-message", "-p", "#{socket_path}"])?
            .trim()
            .to_string();
        if !socket.is_empty() {
            let _ = self.socket.set(socket.clone());
        }
        Ok(socket)
    }

    /// Shows `text` in the status line of the clients viewing `target` (or all, when `None`).
    /// `text` is escaped for tmux formats first, so routed or user text cannot expand formats.
    pub fn display_message(&self, target: Option<&str>, text: &str) -> Result<(), TmuxError> {
        let escaped = escape_format(text);
        let mut args = vec!["display-message"];
        if let Some(t) = target {
            args.extend(["-t", t]);
        }
        args.push(&escaped);
        self.cmd(&args).map(|_| ())
    }
}

/// What the `else` branch of a conditional delivery prints.
const REFUSED_MARK: &str = "agentpane-guard-refused";

/// A word tmux's command parser takes as it is (pane ids, buffer names, tmux commands).
fn command_safe(word: &str) -> bool {
    !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "%-_.:@".contains(c))
}

/// What runs in a pane at one moment, as tmux reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaneNow {
    /// The pane's first process.
    pub pane_pid: u32,
    /// `/dev/pts/N`.
    pub tty: String,
    pub dead: bool,
    /// `#{pane_current_command}`: the name of the terminal's foreground process group leader.
    pub command: String,
}

impl PaneNow {
    /// A tmux format that is `1` while the pane shows the same pid, is alive, and has a
    /// foreground group of the same name. A name tmux's format syntax cannot hold literally
    /// (`#`, `,`, `{`, `}`) is left out of the comparison; the pid and liveness remain.
    pub fn condition(&self) -> String {
        let plain = !self
            .command
            .chars()
            .any(|c| "#,{}".contains(c) || c.is_control());
        if plain {
            format!(
                "#{{==:#{{pane_pid}}/#{{pane_dead}}/#{{pane_current_command}},{}/0/{}}}",
                self.pane_pid, self.command
            )
        } else {
            format!("#{{==:#{{pane_pid}}/#{{pane_dead}},{}/0}}", self.pane_pid)
        }
    }
}

/// Escapes `#` (tmux's format introducer) and drops control characters, so `text` shows
/// literally wherever tmux expands formats (display-message, menu item names).
pub fn escape_format(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '#' => out.push_str("##"),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_escape_doubles_hashes_and_drops_controls() {
        assert_eq!(
            escape_format("#{pane_id} #(rm -rf ~)"),
            "##{pane_id} ##(rm -rf ~)"
        );
        assert_eq!(escape_format("a\nb\x1b[1m"), "a b [1m");
    }

    #[test]
    fn the_paste_condition_names_pid_liveness_and_foreground_command() {
        let now = PaneNow {
            pane_pid: 42,
            tty: "/dev/pts/3".into(),
            dead: false,
            command: "claude".into(),
        };
        assert_eq!(
            now.condition(),
            "#{==:#{pane_pid}/#{pane_dead}/#{pane_current_command},42/0/claude}"
        );
        let odd = PaneNow {
            command: "a,b}".into(),
            ..now
        };
        assert_eq!(odd.condition(), "#{==:#{pane_pid}/#{pane_dead},42/0}");
        assert!(command_safe("%12") && command_safe("agentpane-20261130-133012-123-4242-0"));
        assert!(!command_safe("%1;rm") && !command_safe("a b") && !command_safe(""));
    }
}
