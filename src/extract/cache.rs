//! An LRU of extracted answers keyed by transcript identity (docs/design.md#extraction): path,
//! device, inode, length and mtime. A long-running process (the watcher, a relay) asking again for
//! an unchanged transcript gets the stored answer without reading the file; a new completion
//! changes length or mtime and invalidates the entry. Not global: its owner holds it.

use std::num::NonZeroUsize;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use lru::LruCache;

use super::last_answer_from_transcript;
use crate::events::AgentKind;
use crate::events::Answer;

/// What identifies one version of a transcript file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Identity {
    pub dev: u64,
    pub ino: u64,
    pub len: u64,
    /// Modification time in nanoseconds since the epoch.
    pub mtime_ns: i128,
}

impl Identity {
    /// The identity of `path` now (one `stat` per file it is read from). A session in an
    /// agent's database (`agents::sources`: the database and its write-ahead log) is named
    /// by the first file; the others' lengths and times change with every write.
    pub fn of(path: &Path) -> Result<Identity> {
        let sources = crate::agents::sources(path);
        let (first, rest) = sources
            .split_first()
            .with_context(|| format!("cannot read {}", path.display()))?;
        let mut id = Identity::of_file(first)?;
        for other in rest {
            if let Ok(m) = std::fs::metadata(other) {
                id.len = id.len.wrapping_add(m.len() << 32);
                id.mtime_ns = id
                    .mtime_ns
                    .max(m.mtime() as i128 * 1_000_000_000 + m.mtime_nsec() as i128);
            }
        }
        Ok(id)
    }

    fn of_file(path: &Path) -> Result<Identity> {
        let m =
            std::fs::metadata(path).with_context(|| format!("cannot read {}", path.display()))?;
        Ok(Identity {
            dev: m.dev(),
            ino: m.ino(),
            len: m.len(),
            mtime_ns: m.mtime() as i128 * 1_000_000_000 + m.mtime_nsec() as i128,
        })
    }
}

/// The function that reads an answer from a transcript.
pub type Extractor = fn(&Path, Option<AgentKind>) -> Result<Option<Answer>>;

struct Entry {
    identity: Identity,
    agent: Option<AgentKind>,
    answer: Option<Answer>,
}

/// Extracted answers by transcript, least recently used evicted first.
pub struct AnswerCache {
    entries: LruCache<PathBuf, Entry>,
    extract: Extractor,
    hits: u64,
    misses: u64,
}

impl AnswerCache {
    /// A cache of `capacity` transcripts (at least 1) over the transcript extractor.
    pub fn new(capacity: usize) -> AnswerCache {
        AnswerCache::with_extractor(capacity, last_answer_from_transcript)
    }

    /// A cache over any extractor (tests count calls).
    pub fn with_extractor(capacity: usize, extract: Extractor) -> AnswerCache {
        let cap = NonZeroUsize::new(capacity.max(1)).unwrap_or(NonZeroUsize::MIN);
        AnswerCache {
            entries: LruCache::new(cap),
            extract,
            hits: 0,
            misses: 0,
        }
    }

    /// The answer of `path`: from the cache when the file is unchanged (one `stat`, no read),
    /// else extracted and stored.
    pub fn get_or_extract(
        &mut self,
        path: &Path,
        agent: Option<AgentKind>,
    ) -> Result<Option<Answer>> {
        let identity = Identity::of(path)?;
        if let Some(e) = self.entries.get(path) {
            if e.identity == identity && e.agent == agent {
                self.hits += 1;
                return Ok(e.answer.clone());
            }
        }
        self.misses += 1;
        let answer = (self.extract)(path, agent)?;
        self.entries.put(
            path.to_path_buf(),
            Entry {
                identity,
                agent,
                answer: answer.clone(),
            },
        );
        Ok(answer)
    }

    /// Answers served without reading the transcript.
    pub fn hits(&self) -> u64 {
        self.hits
    }

    /// Answers that needed an extraction.
    pub fn misses(&self) -> u64 {
        self.misses
    }

    /// Transcripts held.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when nothing is cached.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    const FIXTURE: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/real/claude/marot-spotter/short.jsonl"
    );

    #[test]
    fn unchanged_transcript_is_served_from_cache() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        std::fs::copy(FIXTURE, &path).unwrap();
        let mut cache = AnswerCache::new(4);
        let first = cache.get_or_extract(&path, None).unwrap();
        let again = cache.get_or_extract(&path, None).unwrap();
        assert_eq!(first, again);
        assert_eq!((cache.hits(), cache.misses()), (1, 1));
        assert_eq!(first, last_answer_from_transcript(&path, None).unwrap());
    }

    #[test]
    fn an_append_invalidates() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        std::fs::write(&path, "").unwrap();
        let mut cache = AnswerCache::new(4);
        assert_eq!(
            cache.get_or_extract(&path, Some(AgentKind::Codex)).unwrap(),
            None
        );
        let line = r#"{"timestamp":"2026-01-01T00:00:00Z","type":"event_msg","payload":{"type":"task_complete","turn_id":"t1","last_agent_message":"All green."}}"#;
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        writeln!(f, "{line}").unwrap();
        drop(f);
        let answer = cache.get_or_extract(&path, Some(AgentKind::Codex)).unwrap();
        assert_eq!(answer.map(|a| a.text).as_deref(), Some("All green."));
        assert_eq!((cache.hits(), cache.misses()), (0, 2));
        cache.get_or_extract(&path, Some(AgentKind::Codex)).unwrap();
        assert_eq!(cache.hits(), 1);
    }

    #[test]
    fn least_recently_used_is_evicted() {
        fn none(_: &Path, _: Option<AgentKind>) -> Result<Option<Answer>> {
            Ok(None)
        }
        let dir = tempfile::tempdir().unwrap();
        let mut cache = AnswerCache::with_extractor(2, none);
        let paths: Vec<PathBuf> = (0..3).map(|i| dir.path().join(format!("{i}"))).collect();
        for p in &paths {
            std::fs::write(p, "x").unwrap();
            cache.get_or_extract(p, None).unwrap();
        }
        assert_eq!(cache.len(), 2);
        cache.get_or_extract(&paths[0], None).unwrap();
        assert_eq!(cache.misses(), 4, "the oldest entry was evicted");
        assert!(cache
            .get_or_extract(&dir.path().join("missing"), None)
            .is_err());
    }
}
