//! `GET /api/events`: the list as server-sent events, on a thread of its own. An event at
//! once and at every change of the snapshot; a comment every [`KEEP_ALIVE`] (which also
//! finds a page that went away). The stream ends when the secret it was opened with is
//! replaced, or when it is the oldest of too many ([`super::feed::MAX_STREAMS`]).

use std::io::Write;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use super::Shared;

pub const KEEP_ALIVE: Duration = Duration::from_secs(15);

pub(super) fn start(shared: Arc<Shared>, req: tiny_http::Request, token: String) {
    let end = shared.feed.open_stream();
    let spawned = std::thread::Builder::new()
        .name("web-events".into())
        .spawn(move || {
            let mut head = String::from("HTTP/1.1 200 OK\r\n");
            for h in super::security_headers() {
                head.push_str(&format!("{}: {}\r\n", h.field, h.value));
            }
            head.push_str(
                "Content-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\
                 Connection: close\r\n\r\n",
            );
            let mut raw = req.into_writer();
            if raw
                .write_all(head.as_bytes())
                .and_then(|()| raw.flush())
                .is_err()
            {
                return;
            }
            // Each event is one chunk, sent at once; dropping the encoder ends the body.
            let mut out = chunked_transfer::Encoder::with_flush_after_write(Flushing(raw));
            let mut seen = None;
            loop {
                let (version, snap, watched) = shared.feed.snap();
                if end.load(Ordering::Relaxed) || *shared.feed.secret() != token {
                    let _ = out.write_all(b"event: end\ndata: {}\n\n");
                    return;
                }
                let msg = if seen != Some(version) {
                    seen = Some(version);
                    let body = super::api::list_json(&snap, watched);
                    format!("event: panes\ndata: {body}\n\n")
                } else {
                    ": keep-alive\n\n".to_string()
                };
                if out
                    .write_all(msg.as_bytes())
                    .and_then(|()| out.flush())
                    .is_err()
                {
                    return;
                }
                shared.feed.wait(version, KEEP_ALIVE);
            }
        });
    drop(spawned);
}

/// A writer that hands every write on at once (the connection's own writer buffers).
struct Flushing<W: Write>(W);

impl<W: Write> Write for Flushing<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.write_all(buf)?;
        self.0.flush()?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}
