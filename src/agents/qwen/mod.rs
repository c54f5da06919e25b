//! Qwen Code adapter (`@qwen-code/qwen-code`, checked against 0.24.4): which processes are
//! it and where their chat log is ([`locate`]), what each log record means ([`parse`]), the
//! last answer ([`answer`]) and what its pane title and screen add ([`screen`]).
//! docs/agents/qwen.md describes the format as the released client writes it. Not yet wired
//! into the pipeline.

pub mod answer;
pub mod locate;
pub mod parse;
pub mod screen;

#[cfg(test)]
mod tests;

/// The key (tmux name) that clears Qwen Code's input box before routed text is typed. After
/// Escape cancels a turn the client puts the cancelled prompt back in the box, with the
/// cursor at its end, and typed text would be appended to it.
///
/// `C-u` deletes to the start of the line, and at a line's start joins it to the line above
/// (0.24.4 `kill_line_left`), so [`clear_presses`] of it empty any prompt. The others are
/// unsafe: `C-c` empties the box but also arms "press Ctrl+C again to exit" (a second one
/// quits); Escape on an empty box opens the rewind dialog on the second press. Verified on
/// the real client: fixtures/real-clients/qwen-0.24.4/states/06-interrupted → 07-after-ctrl-u.
pub const CLEAR_INPUT_KEY: &str = "C-u";

/// How many [`CLEAR_INPUT_KEY`] presses empty a box holding `text` (two per line: one clears
/// the line, one joins it to the line above; extra presses on an empty box do nothing).
pub fn clear_presses(text: &str) -> usize {
    2 * text.lines().count().max(1)
}
