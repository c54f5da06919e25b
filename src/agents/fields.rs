//! Shared helpers for reading transcript records leniently.

use serde_json::Value;

use crate::events::Time;

/// Parses an RFC 3339 timestamp field.
pub fn time(v: Option<&Value>) -> Option<Time> {
    rfc3339(v?.as_str()?)
}

/// Parses an RFC 3339 timestamp.
pub fn rfc3339(s: &str) -> Option<Time> {
    chrono::DateTime::parse_from_rfc3339(s)
        .ok()
        .map(|t| t.with_timezone(&chrono::Utc))
}

/// A string field.
pub fn str_of<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key)?.as_str()
}

pub use crate::text::bounded;

/// The first `"key":"value"` string in a fragment of a JSON line too large to parse (used for
/// the head or tail of huge lines). Returns `None` when the key is absent or cut off.
pub fn scan_str<'a>(fragment: &'a [u8], key: &str) -> Option<&'a str> {
    let needle = format!("\"{key}\":\"");
    let hay = fragment;
    let start = find(hay, needle.as_bytes())? + needle.len();
    let rest = &hay[start..];
    let end = rest.iter().position(|&b| b == b'"')?;
    std::str::from_utf8(&rest[..end]).ok()
}

/// The RFC 3339 time of the first `"key":"…"` in a fragment (a huge line's tail, where the
/// envelope's `timestamp` comes last).
pub fn scan_time(fragment: &[u8], key: &str) -> Option<Time> {
    scan_str(fragment, key)
        .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
        .map(|t| t.with_timezone(&chrono::Utc))
}

/// Every `"key":"value"` string in a fragment.
pub fn scan_all<'a>(fragment: &'a [u8], key: &str) -> Vec<&'a str> {
    let mut out = Vec::new();
    let mut hay = fragment;
    let needle = format!("\"{key}\":\"");
    while let Some(pos) = find(hay, needle.as_bytes()) {
        let rest = &hay[pos + needle.len()..];
        let Some(end) = rest.iter().position(|&b| b == b'"') else {
            break;
        };
        if let Ok(s) = std::str::from_utf8(&rest[..end]) {
            out.push(s);
        }
        hay = &rest[end..];
    }
    out
}

/// True when the fragment contains `"key":true`.
pub fn scan_true(fragment: &[u8], key: &str) -> bool {
    find(fragment, format!("\"{key}\":true").as_bytes()).is_some()
}

/// True when `line` holds `needle` anywhere: a cheap test before decoding a line that may say
/// nothing of interest.
pub fn contains(line: &[u8], needle: &[u8]) -> bool {
    memchr::memmem::find(line, needle).is_some()
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() {
        return None;
    }
    memchr::memmem::find(hay, needle)
}

/// A rate-limit reset time in an API-error text, read relative to the record's own time.
pub fn reset_time(text: &str, at: Option<Time>) -> Option<Time> {
    let at = at?;
    crate::read::ratelimit::parse_reset(text, at, crate::read::ratelimit::local_offset(at))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scans_fragments() {
        let frag =
            br#"{"type":"user","message":{"content":[{"tool_use_id":"a1"},{"tool_use_id":"b2"#;
        assert_eq!(scan_str(frag, "type"), Some("user"));
        assert_eq!(scan_all(frag, "tool_use_id"), vec!["a1"]);
        assert!(!scan_true(frag, "isSidechain"));
    }
}
