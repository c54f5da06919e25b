//! Extraction of the last answer (SPEC §4) from transcripts of 1 MB, 100 MB and 1 GB: the cold
//! path (read backwards from the end, every time). Like classification, its cost must not grow
//! with the file's size.
//!
//! `AGENTPANE_BENCH_SIZES_MB=1,100,1024` (default) chooses the sizes.

mod common;

use agentpane::extract::last_answer_from_transcript;
use common::{sizes, transcript_of};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};

fn extract(c: &mut Criterion) {
    let mut group = c.benchmark_group("extract");
    for mb in sizes() {
        let path = transcript_of(mb);
        assert!(
            last_answer_from_transcript(&path, None).unwrap().is_some(),
            "the fixture ends with an answer"
        );
        group.bench_with_input(BenchmarkId::new("cold", format!("{mb}MB")), &path, |b, p| {
            b.iter(|| last_answer_from_transcript(p, None).unwrap())
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = common::criterion();
    targets = extract
}
criterion_main!(benches);
