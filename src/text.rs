//! Small text helpers shared by every stage: bounding untrusted or long text for events,
//! alerts, tables and menus, and making it safe to print to a person's terminal.

use std::borrow::Cow;

/// Cuts `text` to at most `max` bytes on a character boundary, marking the cut with `…` (the
/// mark included in the bound).
pub fn bounded(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut end = max.saturating_sub('…'.len_utf8());
    while end > 0 && !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

/// At most `max` characters of `text`, the last one replaced by `…` when it was cut.
pub fn chars(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut out: String = text.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// `12s`, `5m`, `3h`, `2d`.
pub fn age(now: chrono::DateTime<chrono::Utc>, at: chrono::DateTime<chrono::Utc>) -> String {
    let secs = (now - at).num_seconds().max(0);
    match secs {
        s if s < 60 => format!("{s}s"),
        s if s < 3600 => format!("{}m", s / 60),
        s if s < 86_400 => format!("{}h", s / 3600),
        s => format!("{}d", s / 86_400),
    }
}

/// `path` with the home folder written `~`.
pub fn tilde(cwd: &str, home: &std::path::Path) -> String {
    let home = home.to_string_lossy();
    match cwd.strip_prefix(home.as_ref()) {
        Some(rest) if home.len() > 1 && (rest.is_empty() || rest.starts_with('/')) => {
            format!("~{rest}")
        }
        _ => cwd.to_string(),
    }
}

/// Joins text blocks: blank blocks dropped, each block's leading/trailing newlines trimmed,
/// blocks separated by one blank line. Block interiors (code fences) stay byte-exact.
pub fn join_blocks<'a>(blocks: impl Iterator<Item = &'a str>) -> String {
    blocks
        .map(|b| b.trim_matches(|c| c == '\n' || c == '\r'))
        .filter(|b| !b.trim().is_empty())
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// `text` as it may reach a person's terminal (docs/design.md#terminal-safe-output): escape
/// sequences (CSI, OSC, DCS, SOS, PM, APC, 7- or 8-bit) removed whole by a terminal's own
/// parser (`vte`), every other control character ([`is_control`]) dropped, `\r\n` and a lone
/// `\r` made `\n`; `\n` and `\t` kept. A sequence left open swallows the rest, as it would
/// in a terminal. Borrowed when there was nothing to clean.
pub fn terminal_safe(text: &str) -> Cow<'_, str> {
    if !text.chars().any(|c| c == '\r' || is_control(c)) {
        return Cow::Borrowed(text);
    }
    let lines = text.replace("\r\n", "\n").replace('\r', "\n");
    let mut kept = Printed(String::with_capacity(lines.len()));
    let mut parser = vte::Parser::new();
    for c in lines.chars() {
        // An 8-bit introducer (CSI, OSC, DCS, SOS, PM, APC, ST) as its 7-bit form, which the
        // parser reads as the same sequence.
        let seven: &[u8] = match c {
            '\u{9b}' => b"\x1b[",
            '\u{9d}' => b"\x1b]",
            '\u{90}' => b"\x1bP",
            '\u{98}' => b"\x1bX",
            '\u{9e}' => b"\x1b^",
            '\u{9f}' => b"\x1b_",
            '\u{9c}' => b"\x1b\\",
            _ => {
                parser.advance(&mut kept, c.encode_utf8(&mut [0; 4]).as_bytes());
                continue;
            }
        };
        parser.advance(&mut kept, seven);
    }
    Cow::Owned(kept.0)
}

/// What a terminal would print of a text: its characters and its newlines and tabs.
struct Printed(String);

impl vte::Perform for Printed {
    fn print(&mut self, c: char) {
        if !is_control(c) {
            self.0.push(c);
        }
    }

    fn execute(&mut self, byte: u8) {
        if byte == b'\n' || byte == b'\t' {
            self.0.push(byte as char);
        }
    }
}

/// [`terminal_safe`] for one cell or line of a table: newlines and tabs become spaces.
pub fn terminal_line(text: &str) -> String {
    terminal_safe(text).replace(['\n', '\t'], " ")
}

/// True for a character no untrusted text may carry to a terminal or an input box: the C0
/// controls but `\n` and `\t`, DEL, the C1 controls (0x9b is a one-byte CSI), and the
/// bidirectional embeddings, overrides and isolates (they reorder what a person reads).
pub fn is_control(c: char) -> bool {
    let u = c as u32;
    (u < 0x20 && c != '\n' && c != '\t')
        || u == 0x7f
        || (0x80..=0x9f).contains(&u)
        || (0x202a..=0x202e).contains(&u)
        || (0x2066..=0x2069).contains(&u)
}

/// Model text that tries each way to command a terminal — a clipboard write (OSC 52), a title
/// change, a screen clear, a bell and an 8-bit CSI — between the letters `a` to `f`.
#[cfg(test)]
pub(crate) const HOSTILE: &str = "a\x1b]52;c;ZXZpbA==\x07b\x1b]0;x\x07c\x1b[2Jd\x07e\u{9b}31mf";

/// Panics when `out` carries anything a terminal acts on.
#[cfg(test)]
pub(crate) fn assert_terminal_safe(out: &str) {
    assert!(
        !out.chars().any(|c| c == '\r' || is_control(c)),
        "control characters reach the terminal: {out:?}"
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{TimeZone, Utc};

    #[test]
    fn terminal_safe_removes_sequences_whole() {
        assert_eq!(terminal_safe(HOSTILE), "abcdef");
        // OSC ended by ST, DCS, a charset switch, 8-bit OSC, DEL, NUL, bidi override.
        let more = "1\x1b]8;;http://x\x1b\\2\x1bPq#0\x1b\\3\x1b(B4\u{9d}0;t\u{9c}5\x7f\0\u{202e}6";
        assert_eq!(terminal_safe(more), "123456");
    }

    #[test]
    fn terminal_safe_keeps_text_newlines_and_tabs() {
        let plain = "검토 完成 ⏺\n\tcode [2J] ]0;x";
        assert!(matches!(terminal_safe(plain), Cow::Borrowed(_)));
        assert_eq!(terminal_safe("a\r\nb\rc"), "a\nb\nc");
        assert_eq!(terminal_line("a\nb\tc\x1b[1md"), "a b cd");
    }

    #[test]
    fn broken_sequences_are_read_as_a_terminal_reads_them() {
        // Unterminated OSC: a terminal takes the rest as its string, and prints none of it.
        assert_eq!(terminal_safe("a\x1b]0;title and more"), "a");
        // A newline inside a CSI is executed and the CSI goes on to its final byte (`y`); an
        // ESC at the end; an ESC before a non-ASCII letter lasts to the next final byte (`a`).
        assert_eq!(terminal_safe("x\x1b[12\ny\x1b"), "x\n");
        assert_eq!(terminal_safe("\x1béab"), "b");
        assert_eq!(terminal_safe("\x1b]0;a\x1b[31mb"), "b");
    }

    #[test]
    fn bounded_cuts_on_char_boundaries_within_the_bound() {
        assert_eq!(bounded("abc", 5), "abc");
        assert_eq!(bounded("héllo wörld", 8), "héll…");
        assert!(bounded("héllo wörld", 8).len() <= 8);
        assert_eq!(bounded("ab", 0), "…");
    }

    #[test]
    fn chars_counts_characters() {
        assert_eq!(chars("héllo", 5), "héllo");
        assert_eq!(chars("abcdef", 4), "abc…");
    }

    #[test]
    fn ages_are_short() {
        let now = Utc.timestamp_opt(1_000_000, 0).unwrap();
        let ago = |s: i64| age(now, now - chrono::Duration::seconds(s));
        assert_eq!(ago(5), "5s");
        assert_eq!(ago(125), "2m");
        assert_eq!(ago(7300), "2h");
        assert_eq!(ago(200_000), "2d");
        assert_eq!(age(now, now + chrono::Duration::seconds(9)), "0s");
    }

    #[test]
    fn home_becomes_tilde() {
        let home = std::path::Path::new("/home/u");
        assert_eq!(tilde("/home/u/src", home), "~/src");
        assert_eq!(tilde("/home/u", home), "~");
        assert_eq!(tilde("/home/user2", home), "/home/user2");
    }
}
