//! Routed text is untrusted (docs/design.md#sanitising): it came from a model, a screen or a file.
//! Before it reaches a pane it loses every control character that a terminal or an application
//! could act on — above all ESC, so a routed `ESC[201~` cannot end the bracketed paste and type the
//! rest as keystrokes — and the 8-bit C1 controls (0x9b is a one-byte CSI).

/// Cleans `text` for delivery: `\r\n` and lone `\r` become `\n`; ESC, the other C0 controls
/// (except `\n` and `\t`), DEL, the C1 controls and the bidirectional overrides are removed.
pub fn sanitize(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' => {
                if chars.peek() == Some(&'\n') {
                    chars.next();
                }
                out.push('\n');
            }
            '\n' | '\t' => out.push(c),
            c if crate::text::is_control(c) => {}
            c => out.push(c),
        }
    }
    out
}

/// Sanitises raw bytes that may not be UTF-8 (a capture, a command's stdout).
pub fn sanitize_bytes(bytes: &[u8]) -> String {
    sanitize(&String::from_utf8_lossy(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bracketed_paste_end_cannot_be_smuggled() {
        let evil = "look\x1b[201~\nrm -rf ~\n\x1b[200~";
        let clean = sanitize(evil);
        assert!(!clean.contains('\x1b'));
        assert_eq!(clean, "look[201~\nrm -rf ~\n[200~");
    }

    #[test]
    fn osc_c1_csi_and_nul_are_removed() {
        let evil = "a\x1b]52;c;ZXZpbA==\x07b\u{9b}31mc\0d\u{85}e\x7f";
        assert_eq!(sanitize(evil), "a]52;c;ZXZpbA==b31mcde");
    }

    #[test]
    fn newlines_are_normalised_and_tabs_kept() {
        assert_eq!(sanitize("a\r\nb\rc\n\td"), "a\nb\nc\n\td");
    }

    #[test]
    fn bidi_overrides_are_removed_but_unicode_text_kept() {
        assert_eq!(sanitize("검토\u{202e}txt.exe 完成 ⏺"), "검토txt.exe 完成 ⏺");
    }

    #[test]
    fn invalid_utf8_is_replaced_not_fatal() {
        assert_eq!(sanitize_bytes(b"ok\xff\x1b"), "ok\u{fffd}");
    }
}
