//! Following a growing transcript forwards (watch mode): keeps an offset, returns only appended
//! complete lines, and notices truncation or replacement (a new inode, a shorter file, or the
//! bytes just before the offset no longer being the ones consumed — a truncate and rewrite
//! between two polls) so the caller can re-read the state from the end. One poll reads at most
//! [`MAX_POLL`] bytes; `more` says there is more to read.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Bytes one poll reads at most (a huge append is taken in slices, never held whole).
pub const MAX_POLL: u64 = 16 * 1024 * 1024;
/// Bytes before the offset remembered to recognise a rewritten file.
const SIGNATURE: u64 = 64;

/// What a poll found.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Appended {
    /// Complete new lines, oldest first (over-long lines are dropped and counted).
    pub lines: Vec<Vec<u8>>,
    /// The file shrank or was replaced: earlier lines are no longer valid.
    pub reset: bool,
    /// Lines skipped because they exceeded the limit.
    pub skipped: usize,
    /// The poll stopped at [`MAX_POLL`]: poll again for the rest.
    pub more: bool,
}

/// A forward reader positioned at an offset of one file.
#[derive(Debug)]
pub struct Follower {
    path: PathBuf,
    offset: u64,
    identity: Option<(u64, u64)>,
    /// The last bytes consumed before `offset`.
    signature: Vec<u8>,
    partial: Vec<u8>,
    /// The current partial line already exceeded the limit: drop it until its newline.
    skipping: bool,
    max_line: usize,
}

impl Follower {
    /// Starts at the current end of `path` (history is read backwards, not replayed).
    pub fn at_end(path: &Path, max_line: usize) -> io::Result<Follower> {
        let mut file = open(path)?;
        let meta = file.metadata()?;
        let mut f = Follower {
            path: path.to_path_buf(),
            offset: meta.len(),
            identity: Some((meta.dev(), meta.ino())),
            signature: Vec::new(),
            partial: Vec::new(),
            skipping: false,
            max_line,
        };
        f.signature = f.read_signature(&mut file)?;
        Ok(f)
    }

    /// Starts at the beginning of `path`: its whole content is read forward once, then what
    /// is appended.
    pub fn at_start(path: &Path, max_line: usize) -> io::Result<Follower> {
        let meta = open(path)?.metadata()?;
        Ok(Follower {
            path: path.to_path_buf(),
            offset: 0,
            identity: Some((meta.dev(), meta.ino())),
            signature: Vec::new(),
            partial: Vec::new(),
            skipping: false,
            max_line,
        })
    }

    /// The up to [`SIGNATURE`] bytes before the offset, as the file holds them now.
    fn read_signature(&self, file: &mut File) -> io::Result<Vec<u8>> {
        let start = self.offset.saturating_sub(SIGNATURE);
        let mut buf = vec![0u8; (self.offset - start) as usize];
        file.seek(SeekFrom::Start(start))?;
        file.read_exact(&mut buf)?;
        Ok(buf)
    }

    /// The byte offset up to which the file has been consumed.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Reads what was appended since the last poll.
    pub fn poll(&mut self) -> io::Result<Appended> {
        let mut out = Appended::default();
        let mut file = open(&self.path)?;
        let meta = file.metadata()?;
        let identity = Some((meta.dev(), meta.ino()));
        let rewritten = identity != self.identity
            || meta.len() < self.offset
            || self.read_signature(&mut file)? != self.signature;
        if rewritten {
            // Replaced, truncated or rewritten: start over at the new end.
            self.identity = identity;
            self.offset = meta.len();
            self.partial.clear();
            self.skipping = false;
            self.signature = self.read_signature(&mut file)?;
            out.reset = true;
            return Ok(out);
        }
        if meta.len() == self.offset {
            return Ok(out);
        }
        let end = meta.len().min(self.offset + MAX_POLL);
        out.more = end < meta.len();
        file.seek(SeekFrom::Start(self.offset))?;
        let mut chunk = vec![0u8; 64 * 1024];
        while self.offset < end {
            let want = chunk.len().min((end - self.offset) as usize);
            let n = file.read(&mut chunk[..want])?;
            if n == 0 {
                break;
            }
            self.offset += n as u64;
            self.consume(&chunk[..n], &mut out);
        }
        self.signature = self.read_signature(&mut file)?;
        Ok(out)
    }

    fn consume(&mut self, mut data: &[u8], out: &mut Appended) {
        while let Some(i) = memchr::memchr(b'\n', data) {
            if self.skipping {
                self.skipping = false;
                out.skipped += 1;
            } else {
                self.partial.extend_from_slice(&data[..i]);
                out.lines.push(std::mem::take(&mut self.partial));
            }
            data = &data[i + 1..];
        }
        if !self.skipping {
            self.partial.extend_from_slice(data);
            if self.partial.len() > self.max_line {
                self.partial.clear();
                self.skipping = true;
            }
        }
    }
}

/// Opens for reading; a FIFO or device is refused (it would block or never end).
fn open(path: &Path) -> io::Result<File> {
    crate::read::open_regular(path).map_err(|e| io::Error::other(format!("{e:#}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn append(path: &Path, data: &[u8]) {
        let mut f = std::fs::OpenOptions::new().append(true).open(path).unwrap();
        f.write_all(data).unwrap();
    }

    #[test]
    fn returns_only_appended_complete_lines() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.jsonl");
        std::fs::write(&p, b"old\n").unwrap();
        let mut f = Follower::at_end(&p, 1024).unwrap();
        assert_eq!(f.poll().unwrap(), Appended::default());
        append(&p, b"one\ntw");
        assert_eq!(f.poll().unwrap().lines, vec![b"one".to_vec()]);
        append(&p, b"o\n");
        assert_eq!(f.poll().unwrap().lines, vec![b"two".to_vec()]);
    }

    #[test]
    fn truncation_and_replacement_reset() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.jsonl");
        std::fs::write(&p, b"aaaa\nbbbb\n").unwrap();
        let mut f = Follower::at_end(&p, 1024).unwrap();
        std::fs::write(&p, b"x\n").unwrap();
        assert!(f.poll().unwrap().reset);
        append(&p, b"y\n");
        assert_eq!(f.poll().unwrap().lines, vec![b"y".to_vec()]);
        let q = dir.path().join("new.jsonl");
        std::fs::write(&q, b"zzzzzzzzzzzzzz\n").unwrap();
        std::fs::rename(&q, &p).unwrap();
        assert!(f.poll().unwrap().reset);
    }

    #[test]
    fn over_long_lines_are_skipped_not_buffered() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.jsonl");
        std::fs::write(&p, b"").unwrap();
        let mut f = Follower::at_end(&p, 16).unwrap();
        append(&p, &[b'x'; 100]);
        let got = f.poll().unwrap();
        assert!(got.lines.is_empty());
        assert!(f.partial.is_empty());
        append(&p, b"xx\nok\n");
        let got = f.poll().unwrap();
        assert_eq!(got.lines, vec![b"ok".to_vec()]);
        assert_eq!(got.skipped, 1);
    }

    #[test]
    fn a_huge_append_is_read_in_bounded_slices() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.jsonl");
        std::fs::write(&p, b"").unwrap();
        let mut f = Follower::at_end(&p, 64).unwrap();
        let line = b"0123456789\n".repeat((MAX_POLL as usize / 11) + 50);
        append(&p, &line);
        let first = f.poll().unwrap();
        assert!(first.more);
        assert!(f.offset() <= MAX_POLL);
        let second = f.poll().unwrap();
        assert!(!second.more);
        assert_eq!(first.lines.len() + second.lines.len(), line.len() / 11);
    }

    #[test]
    fn vanished_file_is_an_error_not_a_panic() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.jsonl");
        std::fs::write(&p, b"a\n").unwrap();
        let mut f = Follower::at_end(&p, 16).unwrap();
        std::fs::remove_file(&p).unwrap();
        assert!(f.poll().is_err());
    }
}
