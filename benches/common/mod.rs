//! Shared by the benchmarks: transcripts of a given size built from a real fixture (kept in
//! `target/bench-data/` between runs), the sizes to use, and short criterion settings for a
//! shared 2-core machine.

#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use criterion::Criterion;

/// The real transcript every generated file is made of (Claude Code 2.1.39, 2.7 MB).
pub const FIXTURE: &str =
    "fixtures/real/claude/marot-spotter/258c7280-ae70-4798-800f-63464d01a85d.jsonl";

/// A transcript of about `mb` MiB: the fixture's own lines repeated, ending with the whole
/// real file, so every size ends in the same real state. Smaller than the fixture: its last
/// `mb` MiB from a line start.
pub fn transcript_of(mb: u64) -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench-data");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("claude-{mb}mb.jsonl"));
    let want = mb * 1024 * 1024;
    let len = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    if len >= want.min(1 << 20) && len <= want + (4 << 20) {
        return path;
    }
    let real = std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join(FIXTURE)).unwrap();
    let mut f = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    if want < real.len() as u64 {
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

/// `AGENTPANE_BENCH_SIZES_MB=1,100,1024` (the default) chooses the transcript sizes.
pub fn sizes() -> Vec<u64> {
    list_env("AGENTPANE_BENCH_SIZES_MB").unwrap_or_else(|| vec![1, 100, 1024])
}

/// A comma-separated list of numbers from the environment.
pub fn list_env(name: &str) -> Option<Vec<u64>> {
    std::env::var(name)
        .ok()
        .map(|s| s.split(',').filter_map(|x| x.trim().parse().ok()).collect())
}

/// Criterion with short runs: 1 s warm-up, 3 s measurement (the machine is shared).
pub fn criterion() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .configure_from_args()
}
