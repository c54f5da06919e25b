//! Small text helpers shared by every stage: bounding untrusted or long text for events,
//! alerts, tables and menus.

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

#[cfg(test)]
mod tests {
    use super::*;

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
}
