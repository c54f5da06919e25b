//! Reading a file's complete lines from the end backwards, in blocks, with bounded memory.
//!
//! The last line is ignored when it has no trailing newline (still being written). Lines longer
//! than the limit are not held in memory: only their head and tail come back, which is enough to
//! read a record's type, ids and timestamp.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};

/// Bytes read per block.
const BLOCK: usize = 64 * 1024;
/// How much of each end of an oversized line is kept.
pub const HUGE_KEEP: usize = 16 * 1024;

/// One line, newest first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line {
    /// A complete line without its newline.
    Full(Vec<u8>),
    /// A line longer than the limit: its first and last bytes and its full length.
    Huge {
        head: Vec<u8>,
        tail: Vec<u8>,
        len: u64,
    },
}

/// Iterates over the complete lines of a file from the end.
pub struct ReverseLines<R> {
    src: R,
    /// File bytes `[buf_start, buf_start + buf.len())` not yet returned.
    buf: Vec<u8>,
    buf_start: u64,
    max_line: usize,
    block: usize,
    /// Bytes read so far (for budgets and tests).
    bytes_read: u64,
    done: bool,
}

impl ReverseLines<File> {
    /// Opens `file` for backward reading; lines over `max_line` bytes come back as [`Line::Huge`].
    pub fn new(file: File, max_line: usize) -> io::Result<ReverseLines<File>> {
        ReverseLines::from_reader(file, max_line)
    }
}

impl<R: Read + Seek> ReverseLines<R> {
    /// Any seekable source.
    pub fn from_reader(src: R, max_line: usize) -> io::Result<ReverseLines<R>> {
        ReverseLines::with_block(src, max_line, BLOCK)
    }

    /// Any seekable source, reading `block` bytes at a time (small blocks exercise boundaries).
    pub fn with_block(mut src: R, max_line: usize, block: usize) -> io::Result<ReverseLines<R>> {
        let len = src.seek(SeekFrom::End(0))?;
        let mut me = ReverseLines {
            src,
            buf: Vec::new(),
            buf_start: len,
            max_line: max_line.max(2 * HUGE_KEEP),
            block: block.max(1),
            bytes_read: 0,
            done: len == 0,
        };
        me.drop_unterminated_tail()?;
        Ok(me)
    }

    /// Bytes read from the source so far.
    pub fn bytes_read(&self) -> u64 {
        self.bytes_read
    }

    /// Skips the partial last line, if any: everything after the final newline.
    fn drop_unterminated_tail(&mut self) -> io::Result<()> {
        loop {
            if let Some(i) = memrchr(b'\n', &self.buf) {
                // Keep everything up to (not including) the final newline.
                self.buf.truncate(i);
                return Ok(());
            }
            if self.buf_start == 0 {
                // No newline at all: the only line is unterminated.
                self.buf.clear();
                self.done = true;
                return Ok(());
            }
            // The partial tail can itself be huge: do not keep it.
            if self.buf.len() > self.max_line {
                self.buf.clear();
            }
            let keep = std::mem::take(&mut self.buf);
            self.read_before(self.block)?;
            self.buf.extend_from_slice(&keep);
        }
    }

    /// Prepends up to `want` bytes that precede the buffer.
    fn read_before(&mut self, want: usize) -> io::Result<()> {
        let n = (want as u64).min(self.buf_start) as usize;
        let start = self.buf_start - n as u64;
        let mut block = vec![0u8; n];
        self.src.seek(SeekFrom::Start(start))?;
        self.src.read_exact(&mut block)?;
        self.bytes_read += n as u64;
        block.extend_from_slice(&self.buf);
        self.buf = block;
        self.buf_start = start;
        Ok(())
    }

    fn next_line(&mut self) -> io::Result<Option<Line>> {
        if self.done {
            return Ok(None);
        }
        loop {
            if let Some(i) = memrchr(b'\n', &self.buf) {
                let line = self.buf.split_off(i + 1);
                self.buf.truncate(i);
                return Ok(Some(Line::Full(line)));
            }
            if self.buf_start == 0 {
                self.done = true;
                return Ok(Some(Line::Full(std::mem::take(&mut self.buf))));
            }
            if self.buf.len() > self.max_line {
                return self.huge_line().map(Some);
            }
            let grow = self.block.max(self.buf.len());
            self.read_before(grow)?;
        }
    }

    /// The buffer holds the end of a line longer than the limit: keep its tail, scan back for
    /// its start without holding it, then read its head.
    fn huge_line(&mut self) -> io::Result<Line> {
        let end = self.buf_start + self.buf.len() as u64;
        let tail = self.buf[self.buf.len() - HUGE_KEEP..].to_vec();
        self.buf.clear();
        let mut block = vec![0u8; self.block];
        let line_start = loop {
            if self.buf_start == 0 {
                break 0;
            }
            let n = (self.block as u64).min(self.buf_start) as usize;
            let start = self.buf_start - n as u64;
            self.src.seek(SeekFrom::Start(start))?;
            self.src.read_exact(&mut block[..n])?;
            self.bytes_read += n as u64;
            self.buf_start = start;
            if let Some(i) = memrchr(b'\n', &block[..n]) {
                // The previous lines end at `start + i`; keep them buffered.
                self.buf = block[..i].to_vec();
                break start + i as u64 + 1;
            }
        };
        if line_start == 0 {
            self.done = true;
        }
        let head_len = HUGE_KEEP.min((end - line_start) as usize);
        let mut head = vec![0u8; head_len];
        self.src.seek(SeekFrom::Start(line_start))?;
        self.src.read_exact(&mut head)?;
        self.bytes_read += head_len as u64;
        Ok(Line::Huge {
            head,
            tail,
            len: end - line_start,
        })
    }
}

impl<R: Read + Seek> Iterator for ReverseLines<R> {
    type Item = io::Result<Line>;

    fn next(&mut self) -> Option<io::Result<Line>> {
        match self.next_line() {
            Ok(Some(line)) => Some(Ok(line)),
            Ok(None) => None,
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}

fn memrchr(needle: u8, hay: &[u8]) -> Option<usize> {
    hay.iter().rposition(|&b| b == needle)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::io::Cursor;

    fn lines(data: &[u8], max: usize) -> Vec<Line> {
        ReverseLines::from_reader(Cursor::new(data.to_vec()), max)
            .unwrap()
            .map(Result::unwrap)
            .collect()
    }

    fn lines_block(data: &[u8], block: usize) -> Vec<Line> {
        ReverseLines::with_block(Cursor::new(data.to_vec()), 1 << 20, block)
            .unwrap()
            .map(Result::unwrap)
            .collect()
    }

    fn full(s: &str) -> Line {
        Line::Full(s.as_bytes().to_vec())
    }

    #[test]
    fn newest_first_and_partial_last_line_ignored() {
        assert_eq!(
            lines(b"a\nb\nc\npartial", 1 << 20),
            vec![full("c"), full("b"), full("a")]
        );
        assert_eq!(lines(b"a\nb\n", 1 << 20), vec![full("b"), full("a")]);
    }

    #[test]
    fn empty_and_unterminated_only() {
        assert!(lines(b"", 1 << 20).is_empty());
        assert!(lines(b"no newline", 1 << 20).is_empty());
    }

    #[test]
    fn empty_lines_are_kept_as_empty() {
        assert_eq!(
            lines(b"a\n\nb\n", 1 << 20),
            vec![full("b"), full(""), full("a")]
        );
    }

    #[test]
    fn huge_line_returns_head_and_tail_only() {
        let mut data = b"first\n".to_vec();
        let big: Vec<u8> = (0..300_000u32).map(|i| b'a' + (i % 26) as u8).collect();
        data.extend_from_slice(&big);
        data.extend_from_slice(b"\nlast\n");
        let got = lines(&data, 64 * 1024);
        assert_eq!(got.len(), 3);
        assert_eq!(got[0], full("last"));
        match &got[1] {
            Line::Huge { head, tail, len } => {
                assert_eq!(*len, big.len() as u64);
                assert_eq!(head[..], big[..HUGE_KEEP]);
                assert_eq!(tail[..], big[big.len() - HUGE_KEEP..]);
            }
            other => panic!("expected huge, got {other:?}"),
        }
        assert_eq!(got[2], full("first"));
    }

    #[test]
    fn huge_first_line_at_file_start() {
        let mut data: Vec<u8> = vec![b'x'; 200_000];
        data.extend_from_slice(b"\nz\n");
        let got = lines(&data, 64 * 1024);
        assert_eq!(got.len(), 2);
        assert!(matches!(got[1], Line::Huge { len: 200_000, .. }));
    }

    #[test]
    fn huge_unterminated_tail_is_skipped() {
        let mut data = b"a\n".to_vec();
        data.extend(std::iter::repeat_n(b'q', 500_000));
        assert_eq!(lines(&data, 64 * 1024), vec![full("a")]);
    }

    proptest! {
        // Whatever the content (CRLF, NULs, invalid UTF-8) and the block boundaries, reading
        // backwards yields exactly the complete lines in reverse order.
        #[test]
        fn matches_forward_split(data in proptest::collection::vec(
            prop_oneof![Just(b'\n'), Just(b'\r'), Just(0u8), Just(0xffu8), any::<u8>()], 0..3000),
            block in 1usize..200) {
            let got = lines_block(&data, block);
            let mut expected: Vec<Line> = Vec::new();
            if let Some(last_nl) = data.iter().rposition(|&b| b == b'\n') {
                for l in data[..last_nl].split(|&b| b == b'\n') {
                    expected.push(Line::Full(l.to_vec()));
                }
            }
            expected.reverse();
            prop_assert_eq!(got, expected);
        }
    }
}
