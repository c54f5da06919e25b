//! Transcripts truncated, replaced, deleted or odd while followed and while classified.

use super::*;

// ---------------------------------------------------------------------------------------------
// Transcript truncated or replaced while being followed.

#[test]
fn follower_drops_a_partial_line_when_the_file_is_truncated_under_it() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("t.jsonl");
    std::fs::write(&p, b"{\"a\":1}\n").unwrap();
    let mut f = Follower::at_end(&p, 1 << 20).unwrap();
    append(&p, b"{\"half\":");
    assert!(f.poll().unwrap().lines.is_empty(), "a partial line waits");
    std::fs::File::create(&p).unwrap(); // truncate to 0, same inode
    let got = f.poll().unwrap();
    assert!(got.reset, "truncation is reported");
    append(&p, b"{\"b\":2}\n");
    assert_eq!(
        f.poll().unwrap().lines,
        vec![b"{\"b\":2}".to_vec()],
        "the stale partial line never prefixes new data"
    );
}

#[test]
fn follower_drops_a_partial_line_when_the_file_is_replaced_under_it() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("t.jsonl");
    std::fs::write(&p, b"one\n").unwrap();
    let mut f = Follower::at_end(&p, 1 << 20).unwrap();
    append(&p, b"par");
    f.poll().unwrap();
    // An editor-style save: write elsewhere, rename over (new inode, longer than before).
    let q = dir.path().join("t.new");
    std::fs::write(&q, b"fresh line one\nfresh line two\n").unwrap();
    std::fs::rename(&q, &p).unwrap();
    assert!(f.poll().unwrap().reset);
    append(&p, b"tail\n");
    assert_eq!(f.poll().unwrap().lines, vec![b"tail".to_vec()]);
}

#[test]
fn follower_recovers_after_the_file_vanishes_and_comes_back() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("t.jsonl");
    std::fs::write(&p, b"a\n").unwrap();
    let mut f = Follower::at_end(&p, 1 << 20).unwrap();
    std::fs::remove_file(&p).unwrap();
    assert!(f.poll().is_err(), "a missing file is an error, not a panic");
    std::fs::write(&p, b"b\n").unwrap();
    let got = f.poll().unwrap();
    // Same length as before, maybe even the same inode: either it is reported as a reset or
    // nothing stale comes back.
    assert!(got.reset || got.lines.is_empty(), "{got:?}");
    append(&p, b"c\n");
    assert_eq!(f.poll().unwrap().lines, vec![b"c".to_vec()]);
}

/// Truncated and written again past the old offset between two polls, on the same inode (a
/// log rotated with `truncate` + rewrite, or `> file` in a shell): the follower cannot see the
/// shrink by length alone and resumes in the middle of a line of the new content.
#[test]
fn follower_detects_truncate_and_regrow_between_polls() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("t.jsonl");
    std::fs::write(&p, b"{\"n\":1}\n{\"n\":2}\n").unwrap();
    let mut f = Follower::at_end(&p, 1 << 20).unwrap();
    let new = b"{\"type\":\"user\",\"n\":3}\n{\"type\":\"user\",\"n\":4}\n";
    std::fs::write(&p, new).unwrap(); // O_TRUNC: same inode, longer than the old offset
    let got = f.poll().unwrap();
    let new_lines: Vec<&[u8]> = new.split(|&b| b == b'\n').collect();
    for line in &got.lines {
        assert!(
            new_lines.contains(&line.as_slice()),
            "returned a fragment {:?} (reset: {})",
            String::from_utf8_lossy(line),
            got.reset
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Transcript truncated or replaced while classified.

/// A source whose length shrinks between the backward reader's `seek(End)` and its reads, as
/// when a transcript is truncated during a read.
struct Shrinking {
    inner: Cursor<Vec<u8>>,
    shrink_to: usize,
    shrunk: bool,
}

impl Read for Shrinking {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.inner.read(buf)
    }
}

impl Seek for Shrinking {
    fn seek(&mut self, pos: SeekFrom) -> std::io::Result<u64> {
        let at = self.inner.seek(pos)?;
        if matches!(pos, SeekFrom::End(_)) && !self.shrunk {
            self.shrunk = true;
            self.inner.get_mut().truncate(self.shrink_to);
        }
        Ok(at)
    }
}

/// A source whose bytes are swapped for another file's after the first read (replaced while
/// read through a path that was reopened, or a file rewritten in place).
struct Swapping {
    inner: Cursor<Vec<u8>>,
    other: Option<Vec<u8>>,
}

impl Read for Swapping {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        if let Some(other) = self.other.take() {
            let pos = self.inner.position();
            *self.inner.get_mut() = other;
            self.inner.set_position(pos);
        }
        Ok(n)
    }
}

impl Seek for Swapping {
    fn seek(&mut self, pos: SeekFrom) -> std::io::Result<u64> {
        self.inner.seek(pos)
    }
}

#[test]
fn a_transcript_truncated_mid_read_is_an_error_not_a_panic() {
    let data = std::fs::read(fixture(
        "claude/d-kimuson-claude-code-viewer/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl",
    ))
    .unwrap();
    for shrink_to in [0, 1, 100, data.len() / 2, data.len() - 1] {
        let src = Shrinking {
            inner: Cursor::new(data.clone()),
            shrink_to,
            shrunk: false,
        };
        // Either the read fails cleanly or it returns what it could decode.
        if let Ok(tail) = tail_events_from(src, None, Budget::default()) {
            let _ = classify(
                &tail.events,
                now(),
                &Windows::default(),
                Observation::default(),
            );
        }
    }
}

#[test]
fn a_transcript_replaced_mid_read_never_panics() {
    let a = std::fs::read(fixture(
        "claude/d-kimuson-claude-code-viewer/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl",
    ))
    .unwrap();
    let b = std::fs::read(fixture(CODEX_FIXTURE)).unwrap();
    for (first, second) in [(&a, &b), (&b, &a), (&a, &a[..a.len() / 3].to_vec())] {
        let src = Swapping {
            inner: Cursor::new(first.clone()),
            other: Some(second.clone()),
        };
        if let Ok(tail) = tail_events_from(src, None, Budget::default()) {
            let _ = classify(
                &tail.events,
                now(),
                &Windows::default(),
                Observation::default(),
            );
        }
    }
}

#[test]
fn classify_survives_a_file_truncated_and_rewritten_underneath() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("live.jsonl");
    let real = std::fs::read(fixture("claude/marot-spotter/tool_heavy.jsonl")).unwrap();
    std::fs::write(&p, &real).unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writer = {
        let (p, real, stop) = (p.clone(), real.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut i = 0usize;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                i += 1;
                let cut = (i * 7919) % real.len();
                // Truncate, then regrow: every state the reader can meet mid-read.
                std::fs::write(&p, &real[..cut]).unwrap();
                if i % 3 == 0 {
                    let q = p.with_extension("tmp");
                    std::fs::write(&q, &real).unwrap();
                    std::fs::rename(&q, &p).unwrap();
                }
            }
        })
    };
    let end = Instant::now() + Duration::from_millis(1500);
    let (mut ok, mut err) = (0, 0);
    while Instant::now() < end {
        match classify_file(&p, None, now(), &Windows::default(), Observation::default()) {
            Ok(_) => ok += 1,
            Err(e) => {
                let msg = format!("{e:#}");
                assert!(msg.contains("live.jsonl"), "errors name the file: {msg}");
                err += 1;
            }
        }
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    writer.join().expect("writer thread");
    assert!(ok + err > 0);
}

#[test]
fn classify_cli_on_odd_files_is_a_clear_error_or_a_state() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.jsonl");
    std::fs::write(&empty, b"").unwrap();
    let junk = dir.path().join("junk.jsonl");
    std::fs::write(&junk, b"\0\0\xff\xfe{\"type\":\r\n\n\n{]}\n\x1b[201~\n").unwrap();
    classify_cli_cases(&[
        (dir.path().to_path_buf(), 2),
        (dir.path().join("missing.jsonl"), 2),
        (empty, 0),
        (junk, 0),
    ]);
}

/// `classify` opens the path with a blocking `open(2)`: a FIFO (or any path that is not a
/// regular file, e.g. a tty device) blocks it forever instead of a clear error.
#[test]
fn classify_cli_on_a_fifo_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .is_ok_and(|s| s.success());
    assert!(made, "mkfifo");
    classify_cli_cases(&[(fifo, 2)]);
}

/// Runs `classify --json PATH` for each case (with a deadline) and checks the exit code: 2
/// with one line naming the file, or 0 with a state.
fn classify_cli_cases(cases: &[(PathBuf, i32)]) {
    for (path, want) in cases {
        let want = Some(*want);
        let world = tempfile::tempdir().unwrap();
        let mut child = common::agentpane_in(world.path())
            .args(["classify", "--json"])
            .arg(path)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + DEADLINE;
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break s;
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                panic!("classify {path:?} hung");
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked"), "{path:?}: {stderr}");
        assert_eq!(status.code(), want, "{path:?}: {stderr}");
        if want == Some(2) {
            assert_eq!(stderr.trim().lines().count(), 1, "{path:?}: {stderr}");
            let name = path.file_name().unwrap().to_string_lossy();
            assert!(
                stderr.contains(&*name),
                "the error names the file: {stderr}"
            );
        } else {
            let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            assert!(v["state"].is_string(), "{v}");
        }
    }
}
