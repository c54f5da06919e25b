//! Times as agents write them in JSON records: epoch seconds or milliseconds, as numbers or
//! strings, or RFC 3339 text.

use chrono::{DateTime, TimeZone, Utc};
use serde_json::Value;

use crate::events::Time;

/// A time written as epoch milliseconds, epoch seconds, or an RFC 3339 string.
pub fn json_time(value: &Value) -> Option<Time> {
    match value {
        Value::Number(n) => epoch_time(n.as_f64()?),
        Value::String(s) => match s.trim().parse::<f64>() {
            Ok(n) => epoch_time(n),
            Err(_) => DateTime::parse_from_rfc3339(s.trim())
                .ok()
                .map(|d| d.with_timezone(&Utc)),
        },
        _ => None,
    }
}

/// Epoch seconds or milliseconds (values past 1e11 are milliseconds: 1e11 s is year 5138).
pub fn epoch_time(n: f64) -> Option<Time> {
    if !n.is_finite() || n <= 0.0 {
        return None;
    }
    let ms = if n >= 1e11 { n } else { n * 1000.0 };
    if ms > 1e15 {
        return None;
    }
    Utc.timestamp_millis_opt(ms as i64).single()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn epoch_seconds_and_millis() {
        let s = epoch_time(1_764_500_000.0).unwrap();
        let ms = epoch_time(1_764_500_000_000.0).unwrap();
        assert_eq!(s, ms);
        assert!(epoch_time(-1.0).is_none());
        assert!(epoch_time(f64::NAN).is_none());
    }
}
