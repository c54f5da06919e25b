//! Transcript reads kept between scans by a long-running caller (the watcher, a wait): a log
//! file is read again only when its size, times or inode moved, a session in an agent's
//! database only when its rows did ([`agents::Stores`]). The state is then computed afresh from the
//! kept events at every scan: it depends on the clock, the events do not.

use std::collections::{HashMap, HashSet};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::meter::{Meters, ReadDone};
pub use crate::agents::Depth;
use crate::agents::Stores;
use crate::events::{AgentKind, Event, Time};
use crate::state::{self, Observation, Status, Windows};
use crate::usage::Metered;

/// What a log file looked like when it was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    dev: u64,
    ino: u64,
    len: u64,
    mtime_ns: i128,
    ctime_ns: i128,
}

impl Stamp {
    /// An error for anything but a regular file (a FIFO would block the read).
    fn of(path: &Path) -> Result<Stamp> {
        let m =
            std::fs::metadata(path).with_context(|| format!("cannot read {}", path.display()))?;
        if !m.is_file() {
            anyhow::bail!("cannot read {}: not a regular file", path.display());
        }
        let ns = |s: i64, n: i64| i128::from(s) * 1_000_000_000 + i128::from(n);
        Ok(Stamp {
            dev: m.dev(),
            ino: m.ino(),
            len: m.len(),
            mtime_ns: ns(m.mtime(), m.mtime_nsec()),
            ctime_ns: ns(m.ctime(), m.ctime_nsec()),
        })
    }
}

/// What a transcript's files looked like: the transcript's own, then those of the other files
/// its state is read from ([`crate::agents::sources`]: Cline CLI's session record, whose
/// `status` changes while its conversation does not), `None` for one that does not exist.
fn stamps(path: &Path) -> Result<(Stamp, Vec<Option<Stamp>>)> {
    let own = Stamp::of(path)?;
    let others = crate::agents::sources(path)
        .iter()
        .filter(|f| f.as_path() != path)
        .map(|f| Stamp::of(f).ok())
        .collect();
    Ok((own, others))
}

#[derive(Debug)]
struct Kept {
    stamp: (Stamp, Vec<Option<Stamp>>),
    agent: AgentKind,
    events: Vec<Event>,
}

/// Which read of a transcript a usage was measured at: a log file's stamps (its own and
/// those of the other files it is read from), a database session's read mark.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Version {
    File((Stamp, Vec<Option<Stamp>>)),
    Store(u64),
}

/// The usage of the sessions read, kept for a caller that shows it (the watcher): measured
/// again only after the transcript was read again.
#[derive(Debug, Default)]
struct Metering {
    meters: Meters,
    kept: HashMap<PathBuf, (Version, Option<Metered>)>,
    /// Sessions measured (their logs followed) so far, for tests.
    measured: u64,
}

/// The events of every transcript read so far.
#[derive(Debug, Default)]
pub struct Reader {
    files: HashMap<PathBuf, Kept>,
    stores: Stores,
    /// Set when the caller shows usage ([`Reader::meter_usage`]).
    metering: Option<Metering>,
    /// Log files read (not taken from what was kept), for tests and counters.
    file_reads: u64,
}

impl Reader {
    /// Transcripts read from disk so far: log files and database sessions.
    pub fn reads(&self) -> u64 {
        self.file_reads + self.stores.reads()
    }

    /// The database sessions and their connections, for the locators to share within a scan.
    pub fn stores(&mut self) -> &mut Stores {
        &mut self.stores
    }

    /// For a transcript kept in a store many sessions share (a database), a mark that moves
    /// each time it is read afresh; `None` for a log file (a write to it touches it alone)
    /// or a session not read yet.
    pub fn read_mark(&self, transcript: &Path) -> Option<u64> {
        self.stores.read_mark(transcript)
    }

    /// Brings the database sessions among `transcripts` up to date in one pass per database,
    /// looking for changes to `depth` (log files are checked one by one as they are
    /// classified).
    pub fn prepare<'a>(&mut self, transcripts: impl IntoIterator<Item = &'a Path>, depth: Depth) {
        self.stores.prepare(transcripts, depth);
    }

    /// [`Reader::prepare`] for the transcripts of a scan's panes (each with its agent, when
    /// known), reading the log files that changed meanwhile, on a second thread: the
    /// databases' rows and the logs' tails are read at the same time, and
    /// [`Reader::classify`] then finds them kept.
    pub fn read_ahead<'a>(
        &mut self,
        transcripts: impl IntoIterator<Item = (&'a Path, Option<AgentKind>)>,
        depth: Depth,
    ) {
        let all: Vec<(&Path, Option<AgentKind>)> = transcripts.into_iter().collect();
        let logs: Vec<(&Path, Option<AgentKind>)> = all
            .iter()
            .filter(|(p, _)| !Stores::holds(p))
            .copied()
            .collect();
        let stores = all.len() > logs.len();
        let files = &self.files;
        // Both threads take the next log in turn (this one once the databases are read), so
        // neither waits while the other still has work.
        let next = std::sync::atomic::AtomicUsize::new(0);
        let read = || -> Vec<(PathBuf, Kept)> {
            let mut out = Vec::new();
            loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(&(path, agent)) = logs.get(i) else {
                    return out;
                };
                let Ok(stamp) = stamps(path) else { continue };
                if files.get(path).is_some_and(|k| k.stamp == stamp) {
                    continue;
                }
                if let Ok((agent, events)) = super::file_events(path, agent) {
                    let kept = Kept {
                        stamp,
                        agent,
                        events,
                    };
                    out.push((path.to_path_buf(), kept));
                }
            }
        };
        let stores_of = &mut self.stores;
        let (mut got, other) = std::thread::scope(|s| {
            let other = (logs.len() > 1).then(|| s.spawn(read));
            if stores {
                stores_of.prepare(all.iter().map(|(p, _)| *p), depth);
            }
            (read(), other.map(|h| h.join()))
        });
        // A read that panicked on its thread: those logs are read when classified.
        if let Some(Ok(more)) = other {
            got.extend(more);
        }
        self.file_reads += got.len() as u64;
        self.files.extend(got);
    }

    /// The state of `path` at `now`, like [`super::classify_file`], from kept events when
    /// the transcript has not changed since they were read.
    pub fn classify(
        &mut self,
        path: &Path,
        agent: Option<AgentKind>,
        now: Time,
        windows: &Windows,
        obs: Observation,
    ) -> Result<(AgentKind, Status)> {
        if let Some((kind, events)) = self.stores.events(path, agent)? {
            return Ok((kind, state::classify(events, now, windows, obs)));
        }
        let stamp = stamps(path)?;
        let fresh = self.files.get(path).is_some_and(|k| k.stamp == stamp);
        if !fresh {
            self.files.remove(path);
            let (kind, events) = super::file_events(path, agent)?;
            self.file_reads += 1;
            self.files.insert(
                path.to_path_buf(),
                Kept {
                    stamp,
                    agent: kind,
                    events,
                },
            );
        }
        let kept = &self.files[path];
        Ok((kept.agent, state::classify(&kept.events, now, windows, obs)))
    }

    /// Forgets every transcript but `live` (the panes' current ones).
    pub fn retain(&mut self, live: &HashSet<&Path>) {
        self.files.retain(|p, _| live.contains(p.as_path()));
        self.stores.retain(live);
        if let Some(m) = &mut self.metering {
            m.meters.retain(live);
            m.kept.retain(|p, _| live.contains(p.as_path()));
        }
    }

    /// From now on [`Reader::usage`] measures what the sessions used.
    pub fn meter_usage(&mut self) {
        self.metering.get_or_insert_with(Metering::default);
    }

    /// From now on [`Reader::usage`] measures what the sessions used, a big log's first read
    /// on a worker thread ([`Meters::read_big_logs_aside`]): until `done` is told it finished,
    /// its session has no usage.
    pub fn meter_usage_aside(&mut self, done: ReadDone) {
        self.meter_usage();
        if let Some(m) = &mut self.metering {
            m.meters.read_big_logs_aside(done);
        }
    }

    /// The usage of the session at `path` (agent `kind`, process `pid`), measured again only
    /// when the transcript was read again since; `None` when the caller does not meter usage
    /// or the session tells none. Call after [`Reader::classify`] of the same transcript.
    pub fn usage(&mut self, path: &Path, kind: AgentKind, pid: Option<u32>) -> Option<Metered> {
        let version = match self.stores.read_mark(path) {
            Some(mark) => Version::Store(mark),
            None => Version::File(self.files.get(path)?.stamp.clone()),
        };
        let m = self.metering.as_mut()?;
        if let Some((v, kept)) = m.kept.get(path) {
            if *v == version {
                return kept.clone();
            }
        }
        let got = m.meters.measure(path, kind, pid, &crate::paths::home_dir());
        m.measured += 1;
        // Read on the worker thread: measured again at the next call, not kept as none.
        if !m.meters.pending(path) {
            m.kept.insert(path.to_path_buf(), (version, got.clone()));
        }
        got
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn a_log_is_read_again_only_after_it_changed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let fixture = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("fixtures/real/claude/marot-spotter/short.jsonl"),
        )
        .unwrap();
        let mut lines = fixture.lines();
        let first = lines.next().unwrap();
        std::fs::write(&path, format!("{first}\n")).unwrap();
        let now = chrono::Utc::now();
        let mut reader = Reader::default();
        let classify = |r: &mut Reader| {
            r.classify(
                &path,
                None,
                now,
                &Windows::default(),
                Observation::default(),
            )
            .unwrap()
        };
        let once = classify(&mut reader);
        assert_eq!(classify(&mut reader), once);
        assert_eq!(reader.reads(), 1, "unchanged: kept");
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        for line in lines {
            writeln!(f, "{line}").unwrap();
        }
        drop(f);
        let whole = classify(&mut reader);
        assert_eq!(reader.reads(), 2, "appended: read again");
        assert_eq!(
            whole,
            crate::transcript::classify_file(
                &path,
                None,
                now,
                &Windows::default(),
                Observation::default()
            )
            .unwrap()
        );
        reader.retain(&HashSet::new());
        classify(&mut reader);
        assert_eq!(reader.reads(), 3, "forgotten: read again");
    }

    #[test]
    fn usage_is_measured_only_when_the_log_was_read_again() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rollout.jsonl");
        let fixture = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("fixtures/real/codex/kvsankar-agent-history/session-01.jsonl"),
        )
        .unwrap();
        std::fs::write(&path, &fixture).unwrap();
        let now = chrono::Utc::now();
        let mut reader = Reader::default();
        let step = |r: &mut Reader| {
            let (kind, _) = r
                .classify(
                    &path,
                    None,
                    now,
                    &Windows::default(),
                    Observation::default(),
                )
                .unwrap();
            r.usage(&path, kind, None)
        };
        assert_eq!(step(&mut reader), None, "not metering: nothing measured");
        reader.meter_usage();
        let first = step(&mut reader).unwrap();
        assert_eq!(first.usage.session_input, Some(22539));
        assert_eq!(step(&mut reader), Some(first.clone()));
        assert_eq!(
            reader.metering.as_ref().unwrap().measured,
            1,
            "unchanged: kept"
        );
        let line = fixture.lines().find(|l| l.contains("token_count")).unwrap();
        let more = line.replace("\"input_tokens\":22539", "\"input_tokens\":30000");
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        writeln!(f, "{more}").unwrap();
        drop(f);
        let next = step(&mut reader).unwrap();
        assert_eq!(next.usage.session_input, Some(30000));
        assert_eq!(
            reader.metering.as_ref().unwrap().measured,
            2,
            "appended: followed"
        );
    }

    #[test]
    fn a_big_logs_first_usage_read_runs_aside_and_its_totals_come_later_exactly() {
        // A Claude Code session of thousands of messages (tens of MB): its first forward read
        // took seconds inside the scan, and every other pane's state waited for it.
        let fixture = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("fixtures/real/claude/marot-spotter/short.jsonl"),
        )
        .unwrap();
        // One copy of the session: one message of 25353 prompt tokens and 13 out.
        let copy = |i: usize| fixture.replace("msg_01MKH1ccEGrZGNPvu8pYiiQa", &format!("msg_{i}"));
        let dir = tempfile::tempdir().unwrap();
        let big = dir.path().join("big.jsonl");
        let copies = 3000;
        {
            let mut f = std::io::BufWriter::new(std::fs::File::create(&big).unwrap());
            for i in 0..copies {
                f.write_all(copy(i).as_bytes()).unwrap();
            }
        }
        assert!(
            std::fs::metadata(&big).unwrap().len() > 3 * super::super::meter::FIRST_READ_INLINE
        );
        let other = dir.path().join("rollout.jsonl");
        let codex = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("fixtures/real/codex/kvsankar-agent-history/session-01.jsonl"),
        )
        .unwrap();
        let lines: Vec<&str> = codex.lines().collect();
        let cut = lines
            .iter()
            .position(|l| l.contains("token_count"))
            .unwrap();
        std::fs::write(&other, lines[..cut].join("\n") + "\n").unwrap();

        let (tx, rx) = std::sync::mpsc::channel();
        let mut reader = Reader::default();
        reader.meter_usage_aside(std::sync::Arc::new(move |p: &Path| {
            let _ = tx.send(p.to_path_buf());
        }));
        let now = chrono::Utc::now();
        let step = |r: &mut Reader, path: &Path| {
            let (kind, status) = r
                .classify(path, None, now, &Windows::default(), Observation::default())
                .unwrap();
            (status, r.usage(path, kind, None))
        };
        let pending = |r: &Reader| r.metering.as_ref().unwrap().meters.pending(&big);

        // The scan meets the big log: no totals yet (never a wrong one), and no wait.
        let (_, usage) = step(&mut reader, &big);
        assert_eq!(usage, None);
        assert!(pending(&reader));
        // Another pane's state moves on and is read, totals and all, while the big read runs.
        let (before, _) = step(&mut reader, &other);
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&other)
            .unwrap();
        writeln!(f, "{}", lines[cut..].join("\n")).unwrap();
        drop(f);
        let (after, usage) = step(&mut reader, &other);
        assert_ne!(after, before, "the other pane's new state");
        assert_eq!(usage.unwrap().usage.session_input, Some(22539));
        assert!(pending(&reader), "not picked up before a later scan");
        let (_, usage) = step(&mut reader, &big);
        assert!(
            usage.is_none() || !pending(&reader),
            "totals only once the read finished"
        );

        // Written to while read: the worker's read and the follow after it count it once.
        let mut f = std::fs::OpenOptions::new().append(true).open(&big).unwrap();
        f.write_all(copy(copies).as_bytes()).unwrap();
        drop(f);
        let done = rx
            .recv_timeout(std::time::Duration::from_secs(600))
            .expect("the big read finishes");
        assert_eq!(done, big);
        let (_, usage) = step(&mut reader, &big);
        let usage = usage.expect("the totals, picked up").usage;
        let n = copies as u64 + 1;
        assert_eq!(usage.session_input, Some(25353 * n));
        assert_eq!(usage.session_output, Some(13 * n));
        assert_eq!(usage.context_tokens, Some(25353));
        assert!(!pending(&reader));
        assert_eq!(
            Some(usage),
            super::super::meter::measure(&big, AgentKind::Claude, None, Path::new("/nonexistent"))
                .map(|m| m.usage),
            "what a one-shot read gives"
        );

        // Then only appends are followed.
        let mut f = std::fs::OpenOptions::new().append(true).open(&big).unwrap();
        f.write_all(copy(copies + 1).as_bytes()).unwrap();
        drop(f);
        let measured = reader.metering.as_ref().unwrap().measured;
        let (_, usage) = step(&mut reader, &big);
        assert_eq!(usage.unwrap().usage.session_input, Some(25353 * (n + 1)));
        assert_eq!(reader.metering.as_ref().unwrap().measured, measured + 1);
    }

    #[test]
    fn a_transcript_is_read_again_when_another_file_it_is_read_from_changed() {
        // Cline CLI: the conversation stays as it is while the session record's `status`
        // goes from `running` to `idle` (the turn ended with the error already written).
        let id = "1796613871484_5onw0";
        let from = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/real-clients/cline-3.0.65/slow/sessions")
            .join(id);
        let dir = tempfile::tempdir().unwrap();
        let session = dir.path().join("sessions").join(id);
        std::fs::create_dir_all(&session).unwrap();
        for name in [format!("{id}.json"), format!("{id}.messages.json")] {
            std::fs::copy(from.join(&name), session.join(&name)).unwrap();
        }
        let path = session.join(format!("{id}.messages.json"));
        // Soon after its last message (its 429's error).
        let now = chrono::DateTime::from_timestamp_millis(1_796_613_992_584).unwrap();
        let mut reader = Reader::default();
        let mut classify = || {
            reader
                .classify(
                    &path,
                    None,
                    now,
                    &Windows::default(),
                    Observation::default(),
                )
                .unwrap()
                .1
                .state
        };
        assert_eq!(classify(), crate::state::State::Working);
        let record = session.join(format!("{id}.json"));
        let text = std::fs::read_to_string(&record).unwrap();
        std::fs::write(&record, text.replace("\"running\"", "\"idle\"")).unwrap();
        assert_eq!(classify(), crate::state::State::Attention);
    }

    #[test]
    fn a_fifo_is_refused_without_opening_it() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("f.jsonl");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo on a path we own, with a valid C string.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let mut reader = Reader::default();
        let got = reader.classify(
            &fifo,
            None,
            chrono::Utc::now(),
            &Windows::default(),
            Observation::default(),
        );
        assert!(got.is_err());
    }
}
