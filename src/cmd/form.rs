//! How an answer is printed: one JSON object, byte-exact, or terminal-safe on a terminal
//! (docs/design.md#terminal-safe-output). `last` picks the form; a remote `last` prints in it.

use std::borrow::Cow;

/// How `last` prints an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Form {
    /// One JSON object (JSON escapes control characters itself).
    Json,
    /// The text byte-exact: into a pipe or a file, or with `--raw`.
    Exact,
    /// The text without escape sequences: on a terminal.
    TerminalSafe,
}

impl Form {
    /// The form for these flags, stdout being a `terminal` or not.
    pub(super) fn of(json: bool, raw: bool, terminal: bool) -> Form {
        match (json, raw || !terminal) {
            (true, _) => Form::Json,
            (false, true) => Form::Exact,
            (false, false) => Form::TerminalSafe,
        }
    }

    /// `text` as this form prints it (JSON aside).
    pub(super) fn text(self, text: &str) -> Cow<'_, str> {
        match self {
            Form::TerminalSafe => crate::text::terminal_safe(text),
            Form::Json | Form::Exact => Cow::Borrowed(text),
        }
    }
}
