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
/// `mb` MiB from a line start. Every line is a whole line of the fixture (a full-file `jq -s`
/// can parse it). Written to a temp file and renamed, with a `.ok` stamp beside it: a file
/// without its stamp (an older generator cut one line in half) is built again.
pub fn transcript_of(mb: u64) -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench-data");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("claude-{mb}mb.jsonl"));
    let stamp = dir.join(format!("claude-{mb}mb.jsonl.ok"));
    if stamp.exists() && path.exists() {
        return path;
    }
    let real = std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join(FIXTURE)).unwrap();
    let tmp = dir.join(format!(".claude-{mb}mb.jsonl.{}.tmp", std::process::id()));
    let mut f = std::io::BufWriter::new(std::fs::File::create(&tmp).unwrap());
    write_transcript(&mut f, &real, mb * 1024 * 1024);
    f.into_inner().unwrap().sync_all().unwrap();
    std::fs::rename(&tmp, &path).unwrap();
    std::fs::write(&stamp, b"whole lines\n").unwrap();
    path
}

fn write_transcript(f: &mut impl Write, real: &[u8], want: u64) {
    if want < real.len() as u64 {
        let from = real.len() - want as usize;
        let start = real[from..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(from, |i| from + i + 1);
        f.write_all(&real[start..]).unwrap();
        return;
    }
    let filler_target = want - real.len() as u64;
    let mut written = 0u64;
    while written < filler_target {
        let take = (filler_target - written).min(real.len() as u64) as usize;
        // Whole lines only; less than one line left: stop short of the target.
        let Some(cut) = real[..take]
            .iter()
            .rposition(|&b| b == b'\n')
            .map(|i| i + 1)
        else {
            break;
        };
        f.write_all(&real[..cut]).unwrap();
        written += cut as u64;
    }
    f.write_all(real).unwrap();
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
