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

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{TimeZone, Utc};

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
