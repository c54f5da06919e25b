//! Blocking until news arrives: inotify (via `notify`) on the channel's `messages/` folder, a
//! slow safety re-check in case an event is lost, and a deadline. Used by `channel watch`, which
//! an agent runs as a background task so it wakes only when someone else wrote to it.
//!
//! Only events that can mean a new message wake the wait ([`arrival`]). `notify` asks inotify
//! for opens and closes too, and looking for news opens the folder and the message files: if
//! those woke the wait, each look would cause the next and the wait would spin on a core.

use std::collections::HashSet;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

use anyhow::Result;
use notify::event::{AccessKind, AccessMode, ModifyKind, RenameMode};
use notify::{EventKind, RecursiveMode, Watcher};

use super::store::ChannelDir;
use super::{unread_in, Unread};

/// Re-check this often even when inotify is quiet (lost events, odd filesystems).
const SAFETY_POLL: Duration = Duration::from_secs(30);
/// Poll this often when inotify is unavailable.
const FALLBACK_POLL: Duration = Duration::from_secs(1);

/// Waits until `member` has unread messages in `ch` and returns them, or `None` after
/// `timeout`. Returns at once when there already are some. Own messages never count, so the
/// member's own sends wake nothing. Each new warning (malformed file) goes to `warn` once.
pub fn wait_for_unread(
    ch: &ChannelDir,
    member: &str,
    timeout: Duration,
    warn: &mut dyn FnMut(&str),
) -> Result<Option<Unread>> {
    let deadline = Instant::now().checked_add(timeout);
    let (tx, rx) = mpsc::channel();
    // The watch starts before the first look, so a message landing in between still wakes us.
    let watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        // An error (e.g. a lost event) is worth a look too.
        if event.as_ref().map_or(true, |e| arrival(&e.kind)) {
            let _ = tx.send(());
        }
    })
    .and_then(|mut w| {
        w.watch(&ch.messages_dir(), RecursiveMode::NonRecursive)
            .map(|()| w)
    });
    let watcher = match watcher {
        Ok(w) => Some(w),
        Err(e) => {
            warn(&format!(
                "cannot watch {} ({e}); polling every second",
                ch.messages_dir().display()
            ));
            None
        }
    };
    let poll = if watcher.is_some() {
        SAFETY_POLL
    } else {
        FALLBACK_POLL
    };
    let mut warned = HashSet::new();
    loop {
        let unread = unread_in(ch, member)?;
        for w in &unread.warnings {
            if warned.insert(w.clone()) {
                warn(w);
            }
        }
        if !unread.messages.is_empty() {
            return Ok(Some(unread));
        }
        let left = match deadline {
            Some(d) => d.saturating_duration_since(Instant::now()),
            None => poll,
        };
        if left.is_zero() {
            return Ok(None);
        }
        match rx.recv_timeout(left.min(poll)) {
            // Drain the burst (temp file, link, unlink) so one send costs one re-check.
            Ok(_) => while rx.try_recv().is_ok() {},
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => std::thread::sleep(left.min(poll)),
        }
    }
}

/// Can this event be a message arriving? Messages land by link or rename into the folder
/// (create, moved-to) or, from other writers, by a file closed after writing. Opens, reads and
/// closes without writing are never news: our own look for news makes them.
pub fn arrival(kind: &EventKind) -> bool {
    match kind {
        EventKind::Create(_) | EventKind::Any | EventKind::Other => true,
        EventKind::Modify(ModifyKind::Name(mode)) => !matches!(mode, RenameMode::From),
        EventKind::Access(AccessKind::Close(AccessMode::Write)) => true,
        EventKind::Access(_) | EventKind::Modify(_) | EventKind::Remove(_) => false,
    }
}

/// Parses `30s`, `5m`, `8h`, `1d`, `500ms`, combinations like `1h30m`, or plain seconds.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let bad = || format!("invalid duration {text:?}: use e.g. 30s, 5m, 8h, 1h30m");
    let text = text.trim();
    if text.is_empty() {
        return Err(bad());
    }
    if let Ok(secs) = text.parse::<u64>() {
        return Ok(Duration::from_secs(secs));
    }
    let mut total = Duration::ZERO;
    let mut rest = text;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        if digits == 0 {
            return Err(bad());
        }
        let n: u64 = rest[..digits].parse().map_err(|_| bad())?;
        rest = &rest[digits..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(rest.len());
        let unit_ms: u64 = match &rest[..unit_len] {
            "ms" => 1,
            "s" => 1000,
            "m" => 60_000,
            "h" => 3_600_000,
            "d" => 86_400_000,
            _ => return Err(bad()),
        };
        rest = &rest[unit_len..];
        let ms = n.checked_mul(unit_ms).ok_or_else(bad)?;
        total = total
            .checked_add(Duration::from_millis(ms))
            .ok_or_else(bad)?;
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_arrivals_wake_the_wait() {
        use notify::event::{CreateKind, DataChange, MetadataKind, RemoveKind};
        let news = [
            EventKind::Create(CreateKind::File),
            EventKind::Modify(ModifyKind::Name(RenameMode::To)),
            EventKind::Modify(ModifyKind::Name(RenameMode::Both)),
            EventKind::Access(AccessKind::Close(AccessMode::Write)),
            EventKind::Other,
        ];
        let noise = [
            EventKind::Access(AccessKind::Open(AccessMode::Any)),
            EventKind::Access(AccessKind::Read),
            EventKind::Access(AccessKind::Close(AccessMode::Read)),
            EventKind::Modify(ModifyKind::Metadata(MetadataKind::Any)),
            EventKind::Modify(ModifyKind::Data(DataChange::Any)),
            EventKind::Modify(ModifyKind::Name(RenameMode::From)),
            EventKind::Remove(RemoveKind::File),
        ];
        assert!(news.iter().all(arrival));
        assert!(!noise.iter().any(arrival));
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_duration("5m"), Ok(Duration::from_secs(300)));
        assert_eq!(parse_duration("8h"), Ok(Duration::from_secs(8 * 3600)));
        assert_eq!(parse_duration("1d"), Ok(Duration::from_secs(86_400)));
        assert_eq!(parse_duration("1h30m"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("12"), Ok(Duration::from_secs(12)));
        assert_eq!(parse_duration("0s"), Ok(Duration::ZERO));
        for bad in ["", "h", "5x", "-5s", "5 s", "1.5h", "99999999999999999999d"] {
            assert!(parse_duration(bad).is_err(), "{bad:?}");
        }
    }
}
