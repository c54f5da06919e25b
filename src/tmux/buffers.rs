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

    /// Deletes a named buffer; a missing buffer is not an error.
    pub fn delete_buffer(&self, name: &str) {
        let _ = self.cmd(&["delete-buffer", "-b", name]);
    }

    /// Presses Enter in `pane`, as its own key press.
    pub fn send_enter(&self, pane: &str) -> Result<(), TmuxError> {
        self.cmd(&["send-keys", "-t", pane, "Enter"]).map(|_| ())
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
    pub fn socket_path(&self) -> Result<String, TmuxError> {
        Ok(self
            .cmd(&["display-message", "-p", "#{socket_path}"])?
            .trim()
            .to_string())
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
}
