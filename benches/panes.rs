//! One-shot `agentpane status`, `pane-status --window` and `panes` (and the in-process scan
//! behind them) over N = 1, 10, 50 fake agent panes on a private tmux server
//! (docs/design.md#performance: `status` one-shot for 50 panes < 20 ms median). Each run is a whole
//! process, as a status line without the watcher pays it (`#(agentpane status)`).
//!
//! `AGENTPANE_BENCH_PANES=1,10,50` (default) chooses N. Half the agents are fake Claude Code,
//! half fake Codex (see `src/fake_agent.rs`), each replaying a real fixture.

mod common;
#[path = "../tests/common/mod.rs"]
mod harness;

use agentpane::tmux::{Socket, Tmux};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use harness::{wait_until, FakeAgent, TmuxServer};

const CLAUDE_FIXTURE: &str = "claude/marot-spotter/short.jsonl";
const CODEX_FIXTURE: &str = "codex/kvsankar-agent-history/session-01.jsonl";

/// Starts fake agents until the server has `n`, then waits until all resolve to a transcript.
fn grow(server: &TmuxServer, have: &mut usize, n: usize) {
    while *have < n {
        let agent = if *have % 2 == 0 {
            FakeAgent::claude().fixture(CLAUDE_FIXTURE)
        } else {
            FakeAgent::codex().fixture(CODEX_FIXTURE)
        };
        let agent = agent.in_dir(&format!("p{have}"));
        let exe = server.bin().join(agent.name);
        server.new_window(exe.to_str().unwrap(), &server.work(&agent.dir), &agent.env);
        *have += 1;
    }
    wait_until(
        std::time::Duration::from_secs(120),
        &format!("{n} resolved agents"),
        || {
            let run = server.agentpane(&["panes", "--json"]);
            run.code == 0
                && run.json().as_array().is_some_and(|rows| {
                    rows.len() == n && rows.iter().all(|r| r["transcript"].is_string())
                })
        },
    );
}

fn panes(c: &mut Criterion) {
    let counts = common::list_env("AGENTPANE_BENCH_PANES").unwrap_or_else(|| vec![1, 10, 50]);
    let server = TmuxServer::start();
    let mut have = 0;
    let mut group = c.benchmark_group("panes");
    group.sample_size(30);
    for n in counts {
        let n = n as usize;
        grow(&server, &mut have, n);
        for (label, args) in [
            ("status", &["status"][..]),
            ("pane_status", &["pane-status", "--window", "main:1"]),
            ("panes", &["panes"]),
        ] {
            group.bench_with_input(BenchmarkId::new(label, n), &n, |b, _| {
                b.iter(|| {
                    let run = server.agentpane(args);
                    assert_eq!(run.code, 0, "{run:?}");
                    run
                })
            });
        }
        // The same scan in process: what the watcher pays per rescan (no process spawn).
        let tmux = Tmux::new(Socket::Name(server.name.clone()));
        group.bench_with_input(BenchmarkId::new("scan_in_process", n), &n, |b, &n| {
            b.iter(|| {
                let reports = agentpane::scan::scan(&tmux, chrono::Utc::now()).unwrap();
                assert_eq!(reports.len(), n);
                reports
            })
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = common::criterion();
    targets = panes
}
criterion_main!(benches);
