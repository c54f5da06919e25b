//! The watcher's connection to each configured host (docs/design.md#remote-hosts): one thread
//! per host runs `ssh HOST agentpane serve` and blocks reading its stdout, so an idle link
//! costs no CPU and a slow or dead host never holds up the watcher's loop. Each document read
//! replaces the host's view and wakes the watcher; a closed connection marks the host down
//! and is tried again with a growing delay. A host is read at its own pace up to
//! [`DOC_GAP`]: one that sends faster waits (the pipe and ssh push back on it) and the newest
//! document already read is the one taken, so however fast a host talks the watcher holds
//! one document per host and parses a few a second.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::doc::{self, Document, MAX_DOC_BYTES};
use super::ssh::Ssh;
use super::Host;
use crate::events::Time;

/// First delay before a reconnect, doubled after each failure up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_secs(1);
const MAX_BACKOFF: Duration = Duration::from_secs(60);
/// A host's documents are taken at most this often (as the local scans: a status line that
/// changes twice a second shows every state a person can act on)…
pub const DOC_GAP: Duration = Duration::from_millis(500);
/// …and at most this many of their bytes a second (a 1 MiB document waits a second).
const DOC_BYTES_PER_SEC: u64 = 1 << 20;
/// What one read from the stream takes at most (the pipe's own buffer): the newest complete
/// document in it is the one taken.
const READ_BUFFER: usize = 64 * 1024;

/// What the watcher knows of one host.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "link", rename_all = "kebab-case")]
pub enum Link {
    /// Not heard from yet.
    Connecting,
    /// The latest document.
    Up { doc: Document },
    /// Unreachable, or it sent something agentpane refused: why.
    Down { reason: String },
}

/// One host and its link, as the snapshot keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostView {
    pub host: String,
    #[serde(flatten)]
    pub link: Link,
    /// When the link last changed.
    pub since: Time,
}

impl HostView {
    /// The panes of a host that is up; none otherwise.
    pub fn panes(&self) -> &[doc::RemotePane] {
        match &self.link {
            Link::Up { doc } => &doc.panes,
            _ => &[],
        }
    }

    pub fn is_down(&self) -> bool {
        matches!(self.link, Link::Down { .. })
    }
}

type Views = Arc<Mutex<BTreeMap<Host, HostView>>>;

/// Shared between the links' threads and their owner.
#[derive(Default)]
struct Shared {
    stop: Mutex<bool>,
    stopped: Condvar,
    /// The ssh children now running, by host (ended on stop).
    children: Mutex<BTreeMap<Host, u32>>,
}

/// The links of one watcher.
pub struct Links {
    views: Views,
    shared: Arc<Shared>,
    ssh: Ssh,
    hosts: Vec<Host>,
}

impl Links {
    /// Starts one link per host; `wake` is called (from the link's thread) when a view changed.
    pub fn start(hosts: &[Host], ssh: Ssh, wake: Arc<dyn Fn() + Send + Sync>) -> Links {
        let views: Views = Arc::default();
        let shared = Arc::new(Shared::default());
        for host in hosts {
            set(&views, host, Link::Connecting);
            let (views, shared, ssh, host, wake) = (
                views.clone(),
                shared.clone(),
                ssh.clone(),
                host.clone(),
                wake.clone(),
            );
            std::thread::spawn(move || keep(&host, &ssh, &views, &shared, &*wake));
        }
        Links {
            views,
            shared,
            ssh,
            hosts: hosts.to_vec(),
        }
    }

    /// The hosts' views, in name order.
    pub fn views(&self) -> Vec<HostView> {
        lock(&self.views).values().cloned().collect()
    }

    /// Ends the links: no reconnects, the ssh children ended (by their pid: we started them),
    /// the shared connections closed.
    pub fn stop(self) {
        *lock(&self.shared.stop) = true;
        self.shared.stopped.notify_all();
        // Under the lock: a link removes its child from the map before reaping it.
        for pid in lock(&self.shared.children).values() {
            if let Ok(pid) = libc::pid_t::try_from(*pid) {
                // SAFETY: kill(2) on a child this process spawned and has not reaped.
                unsafe { libc::kill(pid, libc::SIGTERM) };
            }
        }
        for host in &self.hosts {
            self.ssh.close(host);
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn set(views: &Views, host: &Host, link: Link) -> bool {
    let mut v = lock(views);
    if v.get(host).is_some_and(|old| old.link == link) {
        return false;
    }
    v.insert(
        host.clone(),
        HostView {
            host: host.to_string(),
            link,
            since: chrono::Utc::now(),
        },
    );
    true
}

/// One host's loop: connect, read documents until the stream ends, wait, again.
fn keep(host: &Host, ssh: &Ssh, views: &Views, shared: &Shared, wake: &(dyn Fn() + Send + Sync)) {
    let mut backoff = FIRST_BACKOFF;
    loop {
        if *lock(&shared.stop) {
            return;
        }
        let (reason, heard) = stream(host, ssh, views, shared, wake);
        if set(views, host, Link::Down { reason }) {
            wake();
        }
        if heard {
            backoff = FIRST_BACKOFF;
        }
        if pause(shared, backoff) {
            return;
        }
        backoff = (backoff * 2).min(MAX_BACKOFF);
    }
}

/// Waits `d`, or less when the links stop: true then.
fn pause(shared: &Shared, d: Duration) -> bool {
    let stop = lock(&shared.stop);
    let (stop, _) = shared
        .stopped
        .wait_timeout_while(stop, d, |s| !*s)
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    *stop
}

/// How long to wait after taking a document of `len` bytes before reading the next.
fn gap_after(len: usize) -> Duration {
    let by_size = Duration::from_millis(
        u64::try_from(len).unwrap_or(u64::MAX).saturating_mul(1000) / DOC_BYTES_PER_SEC,
    );
    DOC_GAP.max(by_size)
}

/// Runs one stream; returns why it ended and whether any document came.
fn stream(
    host: &Host,
    ssh: &Ssh,
    views: &Views,
    shared: &Shared,
    wake: &(dyn Fn() + Send + Sync),
) -> (String, bool) {
    let mut cmd = match ssh.command(host, &["serve"]) {
        Ok(c) => c,
        Err(e) => return (format!("{e:#}"), false),
    };
    // stdin stays open: the remote sees it close when this side goes away.
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child: Child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => return (format!("cannot run ssh: {e}"), false),
    };
    lock(&shared.children).insert(host.clone(), child.id());
    let stderr = child.stderr.take().map(|e| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = e.take(64 * 1024).read_to_end(&mut buf);
            buf
        })
    });
    let mut heard = false;
    let mut refused = None;
    if let Some(out) = child.stdout.take() {
        let mut reader = BufReader::with_capacity(READ_BUFFER, out);
        loop {
            match read_newest(&mut reader) {
                Ok(Some(line)) => match doc::parse(&line) {
                    Ok(doc) => {
                        heard = true;
                        if set(views, host, Link::Up { doc }) {
                            wake();
                        }
                        if pause(shared, gap_after(line.len())) {
                            break;
                        }
                    }
                    Err(e) => {
                        refused = Some(e.to_string());
                        break;
                    }
                },
                Ok(None) => break,
                Err(e) => {
                    refused = Some(e);
                    break;
                }
            }
        }
    }
    // Out of the map before it is reaped, so `stop` never signals a pid reused since.
    lock(&shared.children).remove(host);
    let _ = child.kill();
    let code = child.wait().ok().and_then(|s| s.code());
    let stderr = stderr
        .and_then(|t| t.join().ok())
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default();
    let reason = refused.unwrap_or_else(|| {
        let line: Option<String> = stderr
            .lines()
            .map(str::trim)
            .rfind(|l| !l.is_empty())
            .map(|l| l.chars().filter(|c| !c.is_control()).take(200).collect());
        match line {
            Some(l) => super::ssh::explain(host, code, &l),
            None => "connection closed".to_string(),
        }
    });
    (reason, heard)
}

/// The newest complete line: one line, then any more that are already read (in `reader`'s
/// buffer), so a host that sent several since the last look costs one parse.
fn read_newest<R: Read>(reader: &mut BufReader<R>) -> Result<Option<Vec<u8>>, String> {
    let mut newest = read_line(reader)?;
    while newest.is_some() && reader.buffer().contains(&b'\n') {
        match read_line(reader)? {
            Some(line) => newest = Some(line),
            None => break,
        }
    }
    Ok(newest)
}

/// One line, without its newline; `None` at the end. A line over the limit is an error and
/// is never held whole.
fn read_line(reader: &mut impl BufRead) -> Result<Option<Vec<u8>>, String> {
    let mut line = Vec::new();
    let n = reader
        .take(MAX_DOC_BYTES as u64 + 2)
        .read_until(b'\n', &mut line)
        .map_err(|e| format!("reading the stream: {e}"))?;
    if n == 0 {
        return Ok(None);
    }
    if line.last() != Some(&b'\n') {
        if line.len() > MAX_DOC_BYTES {
            return Err(doc::DocError::TooLarge.to_string());
        }
        // The stream ended inside a line: a partial document is no document.
        return Ok(None);
    }
    line.pop();
    Ok(Some(line))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_split_and_a_huge_one_refused() {
        let mut r = BufReader::new(&b"{\"a\":1}\n{\"b\":2}\npartial"[..]);
        assert_eq!(read_line(&mut r).unwrap().unwrap(), b"{\"a\":1}");
        assert_eq!(read_line(&mut r).unwrap().unwrap(), b"{\"b\":2}");
        assert_eq!(read_line(&mut r).unwrap(), None);
        let big = vec![b'x'; MAX_DOC_BYTES + 10];
        let mut r = BufReader::new(&big[..]);
        assert!(read_line(&mut r).is_err());
    }

    #[test]
    fn of_the_documents_already_read_only_the_newest_is_taken() {
        let data = b"{\"n\":1}\n{\"n\":2}\n{\"n\":3}\n{\"n\"";
        let mut r = BufReader::with_capacity(64, &data[..]);
        assert_eq!(read_newest(&mut r).unwrap().unwrap(), b"{\"n\":3}");
        // A partial line at the end is no document.
        assert_eq!(read_newest(&mut r).unwrap(), None);
        // Only what is already read: the next line in the stream waits for the next look.
        let mut r = BufReader::with_capacity(9, &b"{\"n\":1}\n{\"n\":2}\n"[..]);
        assert_eq!(read_newest(&mut r).unwrap().unwrap(), b"{\"n\":1}");
        assert_eq!(read_newest(&mut r).unwrap().unwrap(), b"{\"n\":2}");
    }

    #[test]
    fn a_host_is_read_at_most_twice_a_second_and_big_documents_slower() {
        assert_eq!(gap_after(300), DOC_GAP);
        assert_eq!(gap_after(MAX_DOC_BYTES), Duration::from_secs(1));
    }
}
