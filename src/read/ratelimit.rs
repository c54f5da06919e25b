//! Rate-limit reset times (docs/design.md#states, attention): parsed from the agents' API-error
//! texts and rate-limit records, and the countdown shown in the status segment (`⏳ 41m`).
//! Pure: the clock and the local UTC offset are parameters.

use chrono::{Datelike, Duration, FixedOffset, NaiveDate, NaiveTime, TimeZone, Utc};

use super::time::{epoch_time, json_time};
use crate::events::Time;

/// Finds when a rate limit resets in `text`, relative to `now` (the time the text was
/// written, for transcript lines). Understands, case-insensitively:
/// - Claude's "You've hit your session limit · resets 9:50pm", "resets 9pm (Europe/Berlin)",
///   "resets Jun 12, 3pm", "resets at 21:50", "resets in 2h 5m";
/// - JSON fields `resetsAt` / `resets_at` / `resetAt` (RFC 3339, epoch seconds or ms) and
///   Codex's `resets_in_seconds`.
///
/// A clock time without a date is its next occurrence after `now`. Times without a zone
/// (or with a named zone, which Claude prints for the machine's own zone) are read in
/// `local_offset`; `UTC`/`GMT` are honoured.
pub fn parse_reset(text: &str, now: Time, local_offset: FixedOffset) -> Option<Time> {
    let lower = text.to_ascii_lowercase();
    json_field(text, &lower, now).or_else(|| phrase(&lower, now, local_offset))
}

/// `⏳ 41m`, `⏳ 2h05m`, `⏳ 3d04h` until `resets_at`; empty once it has passed. Minutes
/// round up, so a pending reset never reads `0m`.
pub fn countdown(resets_at: Time, now: Time) -> String {
    let secs = (resets_at - now).num_seconds();
    if secs <= 0 {
        return String::new();
    }
    let minutes = (secs + 59) / 60;
    if minutes < 60 {
        format!("⏳ {minutes}m")
    } else if minutes < 24 * 60 {
        format!("⏳ {}h{:02}m", minutes / 60, minutes % 60)
    } else {
        let hours = (minutes + 59) / 60;
        format!("⏳ {}d{:02}h", hours / 24, hours % 24)
    }
}

/// `"resets_in_seconds": 123`, `"resetsAt": …` and friends.
fn json_field(text: &str, lower: &str, now: Time) -> Option<Time> {
    if let Some(v) = json_value_after(text, lower, "\"resets_in_seconds\"") {
        let secs: f64 = v.as_f64().or_else(|| v.as_str()?.trim().parse().ok())?;
        if secs.is_finite() && (0.0..=1e9).contains(&secs) {
            return Some(now + Duration::milliseconds((secs * 1000.0) as i64));
        }
    }
    [
        "\"resetsat\"",
        "\"resets_at\"",
        "\"resetat\"",
        "\"reset_at\"",
    ]
    .iter()
    .find_map(|key| json_time(&json_value_after(text, lower, key)?))
}

/// The JSON scalar after `key:` (key matched case-insensitively; value read from `text`).
fn json_value_after(text: &str, lower: &str, key: &str) -> Option<serde_json::Value> {
    let pos = lower.find(key)? + key.len();
    let rest = text[pos..].trim_start().strip_prefix(':')?.trim_start();
    let end = if let Some(body) = rest.strip_prefix('"') {
        1 + body.find('"')? + 1
    } else {
        rest.find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len())
    };
    serde_json::from_str(&rest[..end]).ok()
}

/// "resets …" in prose.
fn phrase(lower: &str, now: Time, offset: FixedOffset) -> Option<Time> {
    let mut from = 0;
    while let Some(pos) = lower[from..].find("reset") {
        let start = from + pos;
        from = start + 5;
        // A word of its own: not the tail of "presets".
        if lower[..start]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric())
        {
            continue;
        }
        let mut c = Cursor::new(&lower[start..]);
        if !(c.word("resets") || c.word("reset")) {
            continue;
        }
        c.spaces();
        if c.word("in") {
            c.spaces();
            if let Some(d) = c.duration() {
                return Some(now + d);
            }
            continue;
        }
        let _ = c.word("at") || c.word("on");
        c.spaces();
        if let Some(t) = c.datetime(now, offset) {
            return Some(t);
        }
    }
    None
}

const MONTHS: [&str; 12] = [
    "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
];

/// A tiny cursor over lowercase ASCII-ish text.
struct Cursor<'a> {
    s: &'a str,
}

impl<'a> Cursor<'a> {
    fn new(s: &'a str) -> Cursor<'a> {
        Cursor { s }
    }

    fn spaces(&mut self) {
        self.s = self.s.trim_start_matches([' ', '\t']);
    }

    /// Consumes `w` when it is followed by a non-letter.
    fn word(&mut self, w: &str) -> bool {
        match self.s.strip_prefix(w) {
            Some(rest) if !rest.starts_with(|c: char| c.is_ascii_alphabetic()) => {
                self.s = rest;
                true
            }
            _ => false,
        }
    }

    fn number(&mut self, max_digits: usize) -> Option<u32> {
        let len = self.s.bytes().take_while(u8::is_ascii_digit).count();
        if len == 0 || len > max_digits {
            return None;
        }
        let n = self.s[..len].parse().ok()?;
        self.s = &self.s[len..];
        Some(n)
    }

    /// `2h 5m`, `41m`, `3 hours`, `30 minutes`, `1h`, `45s`.
    fn duration(&mut self) -> Option<Duration> {
        let mut total = Duration::zero();
        let mut any = false;
        loop {
            let save = self.s;
            let Some(n) = self.number(6) else { break };
            self.spaces();
            let unit = self.s.bytes().take_while(u8::is_ascii_alphabetic).count();
            let secs = match &self.s[..unit] {
                "d" | "day" | "days" => 86_400,
                "h" | "hr" | "hrs" | "hour" | "hours" => 3_600,
                "m" | "min" | "mins" | "minute" | "minutes" => 60,
                "s" | "sec" | "secs" | "second" | "seconds" => 1,
                _ => {
                    self.s = save;
                    break;
                }
            };
            self.s = &self.s[unit..];
            total += Duration::seconds(i64::from(n) * secs);
            any = true;
            self.s = self.s.trim_start_matches([' ', ',']);
            let _ = self.word("and");
            self.spaces();
        }
        any.then_some(total)
    }

    /// `[Mon D[,] [YYYY][,] [at]] H[:MM][ ]am|pm | HH:MM [ (zone) | zone ]`.
    fn datetime(&mut self, now: Time, local: FixedOffset) -> Option<Time> {
        let date = self.month_day();
        if date.is_some() {
            self.s = self.s.trim_start_matches([' ', ',']);
            let _ = self.word("at");
            self.spaces();
        }
        let time = self.clock()?;
        self.spaces();
        let offset = self.zone().unwrap_or(local);
        let local_now = now.with_timezone(&offset);
        match date {
            Some((month, day, year)) => {
                let year = year.unwrap_or(local_now.year());
                let at = at_local(NaiveDate::from_ymd_opt(year, month, day)?, time, offset)?;
                // A date without a year that lies well in the past means next year.
                if at < now - Duration::days(1) {
                    let next = NaiveDate::from_ymd_opt(year + 1, month, day)?;
                    return at_local(next, time, offset);
                }
                Some(at)
            }
            None => {
                let today = at_local(local_now.date_naive(), time, offset)?;
                if today > now {
                    Some(today)
                } else {
                    at_local(local_now.date_naive().succ_opt()?, time, offset)
                }
            }
        }
    }

    /// `jun 12`, `june 12, 2026`.
    fn month_day(&mut self) -> Option<(u32, u32, Option<i32>)> {
        let save = self.s;
        let word_len = self.s.bytes().take_while(u8::is_ascii_alphabetic).count();
        let word = &self.s[..word_len];
        let month = MONTHS
            .iter()
            .position(|m| word.len() >= 3 && m.starts_with(&word[..3]) && word.starts_with(m))?;
        self.s = &self.s[word_len..];
        let _ = self.s.strip_prefix('.').map(|r| self.s = r);
        self.spaces();
        let Some(day) = self.number(2).filter(|d| (1..=31).contains(d)) else {
            self.s = save;
            return None;
        };
        let after_day = self.s;
        self.s = self.s.trim_start_matches([' ', ',']);
        let year = match self.number(4) {
            Some(y) if y >= 1970 && !self.s.starts_with([':', 'a', 'p']) => Some(y as i32),
            _ => {
                self.s = after_day;
                None
            }
        };
        Some((month as u32 + 1, day, year))
    }

    /// `9pm`, `9:50pm`, `9:50 pm`, `9 a.m.`, `21:50`.
    fn clock(&mut self) -> Option<NaiveTime> {
        let save = self.s;
        let hour = self.number(2)?;
        let minute = if let Some(rest) = self.s.strip_prefix(':') {
            self.s = rest;
            match self.number(2) {
                Some(m) => Some(m),
                None => {
                    self.s = save;
                    return None;
                }
            }
        } else {
            None
        };
        let before_meridiem = self.s;
        self.spaces();
        let meridiem = if self.word("am") || self.word("a.m.") {
            Some(false)
        } else if self.word("pm") || self.word("p.m.") {
            Some(true)
        } else {
            self.s = before_meridiem;
            None
        };
        let hour = match meridiem {
            Some(pm) if (1..=12).contains(&hour) => hour % 12 + if pm { 12 } else { 0 },
            Some(_) => {
                self.s = save;
                return None;
            }
            // A bare number is not a time ("resets 3 limits"); `21:50` is.
            None if minute.is_none() => {
                self.s = save;
                return None;
            }
            None => hour,
        };
        let time = NaiveTime::from_hms_opt(hour, minute.unwrap_or(0), 0);
        if time.is_none() {
            self.s = save;
        }
        time
    }

    /// `(utc)`, `utc`, `gmt`, `(etc/utc)` → UTC; any other `(Area/City)` → `None` (local).
    fn zone(&mut self) -> Option<FixedOffset> {
        let inner = match self.s.strip_prefix('(') {
            Some(rest) => &rest[..rest.find(')')?],
            None => self.s.split_whitespace().next()?,
        };
        let inner = inner.trim().trim_end_matches(['.', ',', ')']);
        matches!(
            inner,
            "utc" | "gmt" | "etc/utc" | "z" | "etc/gmt" | "universal"
        )
        .then(|| FixedOffset::east_opt(0))
        .flatten()
    }
}

fn at_local(date: NaiveDate, time: NaiveTime, offset: FixedOffset) -> Option<Time> {
    offset
        .from_local_datetime(&date.and_time(time))
        .single()
        .map(|t| t.with_timezone(&Utc))
}

/// The machine's current UTC offset (for callers outside tests).
pub fn local_offset(now: Time) -> FixedOffset {
    *now.with_timezone(&chrono::Local).offset()
}

/// Epoch seconds/milliseconds as a reset time (Codex `resets_at`).
pub fn from_epoch(n: f64) -> Option<Time> {
    epoch_time(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn utc(s: &str) -> Time {
        chrono::DateTime::parse_from_rfc3339(s)
            .unwrap()
            .with_timezone(&Utc)
    }

    fn off(hours: i32) -> FixedOffset {
        FixedOffset::east_opt(hours * 3600).unwrap()
    }

    #[test]
    fn reset_table() {
        let now = utc("2026-06-10T18:00:00Z"); // 20:00 in UTC+2
        let cases: &[(&str, i32, Option<&str>)] = &[
            (
                "You've hit your session limit · resets 9:50pm",
                2,
                Some("2026-06-10T19:50:00Z"),
            ),
            (
                "Claude usage limit reached. Your limit will reset at 9pm (Europe/Berlin).",
                2,
                Some("2026-06-10T19:00:00Z"),
            ),
            (
                "5-hour limit reached ∙ resets 9pm (Europe/Berlin)",
                2,
                Some("2026-06-10T19:00:00Z"),
            ),
            // Already past today: the next day's.
            ("resets 7pm", 2, Some("2026-06-11T17:00:00Z")),
            ("resets 12am", 2, Some("2026-06-10T22:00:00Z")),
            ("resets 12:30pm", 0, Some("2026-06-11T12:30:00Z")),
            ("resets at 21:50", 0, Some("2026-06-10T21:50:00Z")),
            ("resets 9pm (UTC)", 2, Some("2026-06-10T21:00:00Z")),
            (
                "You've hit your weekly limit · resets Jun 12, 3pm",
                2,
                Some("2026-06-12T13:00:00Z"),
            ),
            ("resets June 12 at 3:15 PM", 0, Some("2026-06-12T15:15:00Z")),
            ("resets Jan 3, 9am", 0, Some("2027-01-03T09:00:00Z")),
            ("resets Jun 12, 2026, 3pm", 0, Some("2026-06-12T15:00:00Z")),
            (
                "rate limited, resets in 2h 5m",
                0,
                Some("2026-06-10T20:05:00Z"),
            ),
            ("resets in 41 minutes", 0, Some("2026-06-10T18:41:00Z")),
            (
                r#"{"quotaLimits":{"resetsAt":"2026-06-10T23:00:00Z"}}"#,
                2,
                Some("2026-06-10T23:00:00Z"),
            ),
            (
                r#"{"resetsAt": 1781128800}"#,
                0,
                Some("2026-06-10T22:00:00Z"),
            ),
            (
                r#"{"resetsAt": 1781128800000}"#,
                0,
                Some("2026-06-10T22:00:00Z"),
            ),
            (
                r#"{"rate_limits":{"primary":{"used_percent":100.0,"resets_in_seconds":2460}}}"#,
                0,
                Some("2026-06-10T18:41:00Z"),
            ),
            (
                r#"{"primary":{"resets_at":1781128800}}"#,
                0,
                Some("2026-06-10T22:00:00Z"),
            ),
            ("API Error: 500 Internal server error", 0, None),
            ("resets 3 limits", 0, None),
            ("loaded presets 9pm from disk", 0, None),
            ("resets 25:00", 0, None),
            ("resets 13pm", 0, None),
            ("", 0, None),
        ];
        for (text, hours, want) in cases {
            let got = parse_reset(text, now, off(*hours));
            assert_eq!(got, want.map(utc), "{text}");
        }
    }

    #[test]
    fn countdown_formats() {
        let now = utc("2026-06-10T18:00:00Z");
        let cases = [
            (41 * 60, "⏳ 41m"),
            (40 * 60 + 1, "⏳ 41m"),
            (30, "⏳ 1m"),
            (125 * 60, "⏳ 2h05m"),
            (60 * 60, "⏳ 1h00m"),
            (26 * 3600 + 10, "⏳ 1d03h"),
            (0, ""),
            (-60, ""),
        ];
        for (secs, want) in cases {
            assert_eq!(
                countdown(now + Duration::seconds(secs), now),
                want,
                "{secs}"
            );
        }
    }

    #[test]
    fn non_ascii_text_is_safe() {
        let now = utc("2026-06-10T18:00:00Z");
        assert_eq!(parse_reset("ÄÖÜ resets ✻ 9pm", now, off(0)), None);
        assert!(parse_reset("ça resets 9pm", now, off(0)).is_some());
    }
}
