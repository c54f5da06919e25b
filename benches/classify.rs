//! Backward read + classify on transcripts of 1 MB, 100 MB and 1 GB, built at bench time from the
//! real fixture (repeated whole, so every size ends in the same real state).
//! docs/design.md#performance: the cost must not grow with file size (1 GB within 2× of 1 MB) and
//! stay under 1 ms.
//!
//! `AGENTPANE_BENCH_SIZES_MB=1,100,1024` (default) chooses the sizes; files are kept in
//! `target/bench-data/` between runs.

mod common;

use agentpane::state::{Observation, Windows};
use agentpane::transcript::classify_file;
use common::{sizes, transcript_of};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};

fn classify(c: &mut Criterion) {
    let now = chrono::Utc::now();
    let windows = Windows::default();
    let mut group = c.benchmark_group("classify");
    for mb in sizes() {
        let path = transcript_of(mb);
        group.bench_with_input(
            BenchmarkId::from_parameter(format!("{mb}MB")),
            &path,
            |b, p| {
                b.iter(|| classify_file(p, None, now, &windows, Observation::default()).unwrap())
            },
        );
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = common::criterion();
    targets = classify
}
criterion_main!(benches);
