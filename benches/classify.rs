//! Backward read + classify on transcripts of 1 MB, 100 MB and 1 GB, built at bench time from the
//! real fixture (repeated whole, so every size ends in the same real state). SPEC §9: the cost
//! must not grow with file size (1 GB within 2× of 1 MB) and stay under 1 ms.
//!
//! `AGENTPANE_BENCH_SIZES_MB=1,100,1024` (default) chooses the sizes; files are kept in
//! `target/bench-data/` between runs.

use std::io::Write;
use std::path::{Path, PathBuf};

use agentpane::state::{Observation, Windows};
use agentpane::transcript::classify_file;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};

const FIXTURE: &str =
    "fixtures/real/claude/marot-spotter/258c7280-ae70-4798-800f-63464d01a85d.jsonl";

fn transcript_of(mb: u64) -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench-data");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("claude-{mb}mb.jsonl"));
    let want = mb * 1024 * 1024;
    let len = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    if len >= want.min(1 << 20) && len <= want + (4 << 20) {
        return path;
    }
    let real = std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join(FIXTURE)).unwrap();
    // Fill with the file's own lines from the start, then end with the whole real file.
    let mut f = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    if want < real.len() as u64 {
        // Smaller than the real file: its last `want` bytes, from a line start.
        let from = real.len() - want as usize;
        let start = real[from..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(from, |i| from + i + 1);
        f.write_all(&real[start..]).unwrap();
        f.flush().unwrap();
        return path;
    }
    let mut written = 0u64;
    let filler_target = want.saturating_sub(real.len() as u64);
    while written < filler_target {
        let take = (filler_target - written).min(real.len() as u64) as usize;
        let cut = real[..take]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(take, |i| i + 1);
        let cut = if cut == 0 { take } else { cut };
        f.write_all(&real[..cut]).unwrap();
        if !real[..cut].ends_with(b"\n") {
            f.write_all(b"\n").unwrap();
        }
        written += cut as u64;
    }
    f.write_all(&real).unwrap();
    f.flush().unwrap();
    path
}

fn sizes() -> Vec<u64> {
    std::env::var("AGENTPANE_BENCH_SIZES_MB")
        .ok()
        .map(|s| s.split(',').filter_map(|x| x.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![1, 100, 1024])
}

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

criterion_group!(benches, classify);
criterion_main!(benches);
