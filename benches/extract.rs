//! Extraction of the last answer (docs/design.md#extraction) from transcripts of 1 MB, 100 MB and 1
//! GB:
//! - cold: read backwards from the end, every time (what a one-shot `agentpane last` pays);
//! - warm: a repeat on the unchanged transcript through [`AnswerCache`] (one `stat`, no read;
//!   what the watcher, a relay or the route menu pay).
//!
//! Neither may grow with the file's size. `AGENTPANE_BENCH_SIZES_MB=1,100,1024` (default)
//! chooses the sizes.

mod common;

use agentpane::extract::cache::AnswerCache;
use agentpane::extract::last_answer_from_transcript;
use common::{sizes, transcript_of};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};

fn extract(c: &mut Criterion) {
    let mut group = c.benchmark_group("extract");
    for mb in sizes() {
        let path = transcript_of(mb);
        let size = format!("{mb}MB");
        assert!(
            last_answer_from_transcript(&path, None).unwrap().is_some(),
            "the fixture ends with an answer"
        );
        group.bench_with_input(BenchmarkId::new("cold", &size), &path, |b, p| {
            b.iter(|| last_answer_from_transcript(p, None).unwrap())
        });
        let mut cache = AnswerCache::new(16);
        cache.get_or_extract(&path, None).unwrap();
        group.bench_with_input(BenchmarkId::new("warm", &size), &path, |b, p| {
            b.iter(|| cache.get_or_extract(p, None).unwrap())
        });
        assert_eq!(cache.misses(), 1, "every repeat was a hit");
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = common::criterion();
    targets = extract
}
criterion_main!(benches);
