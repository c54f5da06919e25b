//! A repeated `last` on an unchanged transcript (the watcher, a relay, the popup) is served by
//! [`AnswerCache`] with one `stat` and no read; compare with extracting every time
//! (docs/design.md#extraction).

use std::path::{Path, PathBuf};

use agentpane::extract::cache::AnswerCache;
use agentpane::extract::last_answer_from_transcript;
use criterion::{criterion_group, criterion_main, Criterion};

const FIXTURE: &str =
    "fixtures/real/claude/marot-spotter/258c7280-ae70-4798-800f-63464d01a85d.jsonl";

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(FIXTURE)
}

fn bench(c: &mut Criterion) {
    let path = fixture();
    let mut group = c.benchmark_group("last_answer");
    group.bench_function("extract_every_time", |b| {
        b.iter(|| last_answer_from_transcript(&path, None).unwrap())
    });
    let mut cache = AnswerCache::new(64);
    cache.get_or_extract(&path, None).unwrap();
    group.bench_function("cache_hit_unchanged", |b| {
        b.iter(|| cache.get_or_extract(&path, None).unwrap())
    });
    group.finish();
    assert!(
        cache.hits() > 0 && cache.misses() == 1,
        "every repeat was a hit"
    );
}

criterion_group!(benches, bench);
criterion_main!(benches);
