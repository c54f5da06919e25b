//! Every waiting command sleeps while nothing arrives: `channel watch`, `route --wait`, a
//! foreground `relay` and the watcher are each left ~3 s with nothing to do, and the CPU they
//! (and the processes they spawned) used in that window must stay under 50 ms. A busy poll
//! or a watch woken by its own reads uses that in well under a second. The watcher is also
//! left 10 s beside ten idle panes of each agent kind agentpane knows, as the plugin runs
//! it, under the same 50 ms; and a write to one pane's log makes it read that log alone,
//! without asking tmux. (The 60 s figures are in BENCHMARKS.md, from
//! scripts/wait-cost.sh and scripts/watcher-kinds.sh.)

mod common;

use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use agentpane::events::AgentKind;
use common::cost::{counters, cpu_ms, settle, start, start_watcher, Counters, Reap};
use common::{agentpane_bin, wait_until, FakeAgent, TmuxServer, DEADLINE};

const CODEX_MID_TURN: &str = "codex/derived-prefix/kvsankar-session-01.prefix-L1-7.mid-turn.jsonl";
const ENDS_TURN: &str = "claude/kvsankar-agent-history/session-01.jsonl";
/// The quiet window measured.
const WINDOW: Duration = Duration::from_secs(3);
/// CPU allowed in that window.
const BUDGET_MS: u64 = 50;

/// Waits until `child` has settled after its start, then asserts that it uses less
/// than [`BUDGET_MS`] over [`WINDOW`] and is still waiting.
fn assert_sleeps(what: &str, child: &mut Child) {
    let pid = child.id();
    settle(pid);
    let before = cpu_ms(pid);
    std::thread::sleep(WINDOW);
    let used = cpu_ms(pid) - before;
    assert!(
        child.try_wait().unwrap().is_none(),
        "{what} ended instead of waiting"
    );
    assert!(
        used < BUDGET_MS,
        "{what} used {used} ms of CPU in {WINDOW:?} with nothing arriving (budget {BUDGET_MS} ms): a busy wait"
    );
}

/// `serve` (what a remote watcher's link runs on this host) beside the watcher and an idle
/// agent: one document at start, then asleep — reading the snapshot it watches is no news.
#[test]
fn serve_sleeps_while_nothing_changes() {
    let server = TmuxServer::start();
    server.spawn(&FakeAgent::claude().fixture(ENDS_TURN));
    let _watch = start_watcher(&server, &[]);
    let mut serve = server.agentpane_command(&["serve"]);
    serve
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut serve = Reap(serve.spawn().expect("start serve"));
    let mut out = std::io::BufReader::new(serve.0.stdout.take().expect("stdout"));
    let mut first = String::new();
    std::io::BufRead::read_line(&mut out, &mut first).expect("a first document");
    let schema = format!("{{\"schema\":{}", agentpane::remote::doc::SCHEMA);
    assert!(first.starts_with(&schema), "{first}");
    assert_sleeps("serve", &mut serve.0);
}

fn mid_turn_codex(server: &TmuxServer, dir: &str) -> String {
    let pane = server.spawn(&FakeAgent::codex().fixture(CODEX_MID_TURN).in_dir(dir));
    wait_until(DEADLINE, "codex working", || {
        server.agentpane(&["resolve", &pane, "--json"]).json()["state"] == "working"
    });
    pane
}

fn channel(state: &Path, args: &[&str]) -> String {
    let world = tempfile::tempdir().unwrap();
    let out = common::agentpane_in(world.path())
        .env("AGENTPANE_STATE_DIR", state)
        .arg("channel")
        .args(args)
        .output()
        .expect("run agentpane channel");
    assert!(out.status.success(), "channel {args:?}: {out:?}");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

#[test]
fn channel_watch_sleeps_on_a_quiet_channel() {
    let state = tempfile::tempdir().unwrap();
    let id = channel(state.path(), &["new", "--as", "alice"]);
    channel(state.path(), &["join", &id, "--as", "bob"]);
    // bob's own join notice sits in the folder: looking at it must not wake the wait.
    let world = tempfile::tempdir().unwrap();
    let child = common::agentpane_in(world.path())
        .env("AGENTPANE_STATE_DIR", state.path())
        .args(["channel", "watch", &id, "--as", "bob", "--timeout", "60s"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut child = Reap(child);
    assert_sleeps("channel watch", &mut child.0);
}

#[test]
fn route_wait_sleeps_while_the_destination_works() {
    let server = TmuxServer::start();
    let src = server.new_window(
        "printf 'hand-over\\n'; exec sleep 600",
        &server.work("plain"),
        &[],
    );
    let dst = mid_turn_codex(&server, "dst");
    let mut route = start(
        &server,
        &[
            "route",
            &src,
            &dst,
            "--transform",
            "full-output",
            "--wait",
            "60",
        ],
    );
    assert_sleeps("route --wait", &mut route.0);
}

#[test]
fn foreground_relay_sleeps_while_both_work() {
    let server = TmuxServer::start();
    let a = mid_turn_codex(&server, "a");
    let b = mid_turn_codex(&server, "b");
    let mut relay = start(&server, &["relay", &a, &b, "--foreground"]);
    assert_sleeps("relay --foreground", &mut relay.0);
    // Ctrl-C still ends the sleep, cleanly.
    // SAFETY: kill(2) on the pid of a child we started and have not reaped.
    unsafe { libc::kill(relay.0.id() as libc::pid_t, libc::SIGINT) };
    let deadline = Instant::now() + DEADLINE;
    let status = loop {
        if let Some(status) = relay.0.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "the relay ignored Ctrl-C");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(status.code(), Some(0), "{status:?}");
}

#[test]
fn watcher_sleeps_between_safety_polls() {
    let server = TmuxServer::start();
    server.spawn(&FakeAgent::claude().fixture(ENDS_TURN));
    mid_turn_codex(&server, "busy");
    // A channel with mail in it: the watcher reads channel folders on every scan.
    let state = server.state_dir();
    let snapshot = server.server_dir().join("state.json");
    let id = channel(&state, &["new", "--as", "alice"]);
    channel(&state, &["join", &id, "--as", "bob"]);
    // A long safety poll: what is measured is what wakes the watcher besides it.
    let mut watch = start(
        &server,
        &[
            "watch",
            "--poll",
            "60",
            "--no-bell",
            "--no-notify",
            "--no-message",
        ],
    );
    wait_until(DEADLINE, "the watcher's first scan", || snapshot.exists());
    assert_sleeps("watch", &mut watch.0);
}

#[test]
fn route_wait_delivers_once_the_destination_turn_ends() {
    let server = TmuxServer::start();
    let src = server.new_window(
        "printf 'HAND-OVER-TEXT\\n'; exec sleep 600",
        &server.work("plain"),
        &[],
    );
    let dst = mid_turn_codex(&server, "dst");
    let mut route = start(
        &server,
        &[
            "route",
            &src,
            &dst,
            "--transform",
            "full-output",
            "--wait",
            "120",
        ],
    );
    // Asleep on the transcript's folder; the turn's end wakes it.
    assert_sleeps("route --wait", &mut route.0);
    let end = serde_json::json!({
        "timestamp": "2026-01-01T00:00:00Z",
        "type": "event_msg",
        "payload": {"type": "task_complete", "turn_id": "t1", "last_agent_message": "ok"},
    });
    server.send_line(&dst, &format!("line {end}"));
    let deadline = Instant::now() + DEADLINE;
    let status = loop {
        if let Some(status) = route.0.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "route --wait never delivered");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "{status:?}");
    let screen = server.tmux(&["capture-pane", "-p", "-J", "-t", &dst]);
    assert!(screen.contains("HAND-OVER-TEXT"), "{screen}");
}

/// The focus hook the plugin sets (`tmux/agentpane.tmux`), so the watcher trusts its quiet
/// polls.
fn focus_hooks(server: &TmuxServer) {
    let nudge = format!("run-shell -b \"'{}' nudge\"", agentpane_bin());
    server.tmux(&["set-hook", "-g", "session-window-changed[4242]", &nudge]);
}

/// How many idle panes [`idle_panes`] starts.
const IDLE_PANES: u64 = 10;

/// Ten idle fakes of `kind`, each in its own folder (two opencode in one folder could not be
/// told apart).
fn idle_panes(server: &TmuxServer, kind: AgentKind) {
    for i in 0..IDLE_PANES {
        server.spawn(&FakeAgent::idle(kind).in_dir(&format!("{kind}-{i}")));
    }
}

/// Issue 18: beside opencode panes the watcher woke ~30 times a second at 10–15 % of a core,
/// its own reads of opencode's database (the `-wal` and `-shm` files) looking like news to
/// its file watch; nothing measured waits with an opencode pane, so nothing caught it. Now
/// every agent kind agentpane knows gets the measurement: ten idle panes of the kind, the
/// watcher as the plugin runs it (default safety poll, the plugin's focus hook), 10 s,
/// under 50 ms of CPU (itself and the tmux clients it spawned), woken by nothing but its
/// polls, which ask tmux nothing. Beside them, a session opened and never used (no log yet):
/// it once made every poll list tmux and resolve every pane. The kinds run side by side, one
/// server and watcher each.
///
/// The window is the 10 s after two quiet polls in a row (every pane quiet, the resolutions
/// of the start behind them): the polls it holds are the ones an idle watcher makes all day.
/// A resolution, or a poll that lists tmux because a pane drew lately, costs this debug build
/// 10–70 ms of CPU on a loaded machine (the release build's minute is in BENCHMARKS.md), so a
/// kind whose window the once-a-minute resolution fell in is measured again after two more
/// quiet polls: the next resolution is a minute away. (The window used to wait for that
/// minute's resolution first, ~60 s more for the same polls.) The CPU is what the
/// watcher's counters say getrusage(2) says, to the microsecond: `/proc/PID/stat` counts
/// 10 ms ticks and drops up to one in each of its four fields.
#[test]
fn the_idle_watcher_sleeps_beside_every_agent_kind() {
    const QUIET: Duration = Duration::from_secs(10);
    let servers: Vec<(AgentKind, TmuxServer)> = AgentKind::ALL
        .into_iter()
        .map(|kind| {
            let server = TmuxServer::start();
            focus_hooks(&server);
            idle_panes(&server, kind);
            if agentpane::agents::reads_log(kind) {
                // A session opened and never used: no log yet, so the watcher looks for it
                // again, but only while the pane draws.
                server.spawn_drawn(
                    &FakeAgent::idle(kind)
                        .in_dir(&format!("{kind}-unused"))
                        .env("AGENTPANE_FAKE_LATE", "1"),
                );
            }
            (kind, server)
        })
        .collect();
    let mut watchers: Vec<(AgentKind, Reap)> = servers
        .iter()
        .map(|(kind, server)| (*kind, start_watcher(server, &[])))
        .collect();
    let count = |i: usize| counters(&servers[i].1, &watchers[i].1);
    // (kind, CPU ms, wakes, tmux listings) of each kind's window.
    let mut used: Vec<Option<(AgentKind, u64, u64, u64)>> = vec![None; servers.len()];
    for _ in 0..2 {
        let pending: Vec<usize> = (0..servers.len()).filter(|i| used[*i].is_none()).collect();
        if pending.is_empty() {
            break;
        }
        two_quiet_polls(&servers, &pending, count);
        let before: Vec<Counters> = pending.iter().map(|i| count(*i)).collect();
        std::thread::sleep(QUIET);
        for (i, b) in pending.iter().zip(&before) {
            let a = count(*i);
            if a.resolves == b.resolves {
                let ms = (a.cpu_us - b.cpu_us) / 1000;
                used[*i] = Some((servers[*i].0, ms, a.wakes - b.wakes, a.lists - b.lists));
            }
        }
    }
    for (kind, w) in &mut watchers {
        assert!(
            w.0.try_wait().unwrap().is_none(),
            "the watcher beside {kind} ended"
        );
    }
    let used: Vec<(AgentKind, u64, u64, u64)> = used
        .into_iter()
        .zip(&servers)
        .map(|(u, (kind, _))| u.unwrap_or_else(|| panic!("{kind}: a resolution in both windows")))
        .collect();
    // Two or three 5 s polls in 10 s; a watch woken by its own reads wakes many times; a
    // quiet poll asks tmux nothing.
    let over: Vec<_> = used
        .iter()
        .filter(|(_, ms, wakes, lists)| *ms >= BUDGET_MS || *wakes > 3 || *lists > 0)
        .collect();
    assert!(
        over.is_empty(),
        "the idle watcher beside ten idle panes and one unused, (kind, CPU ms, wakes, \
         listings) in {QUIET:?}: {over:?} (budget {BUDGET_MS} ms, three wakes, no listing; \
         all: {used:?})"
    );
}

/// Waits until the watcher beside each kind in `which` has made two safety polls in a row
/// that asked tmux nothing and resolved nothing: every pane quiet, the unused one no longer
/// looked at again.
fn two_quiet_polls(
    servers: &[(AgentKind, TmuxServer)],
    which: &[usize],
    count: impl Fn(usize) -> Counters,
) {
    let mut last: Vec<Counters> = which.iter().map(|i| count(*i)).collect();
    let mut quiet = vec![0; which.len()];
    let went_quiet = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        wait_until(
            Duration::from_secs(120),
            "two quiet polls in a row beside every kind",
            || {
                for (n, q) in quiet.iter_mut().enumerate().filter(|(_, q)| **q < 2) {
                    let now = count(which[n]);
                    if now.lists > last[n].lists || now.resolves > last[n].resolves {
                        *q = 0;
                    } else {
                        *q += now.quiet_polls - last[n].quiet_polls;
                    }
                    last[n] = now;
                }
                quiet.iter().all(|q| *q >= 2)
            },
        )
    }));
    if went_quiet.is_err() {
        let busy: Vec<_> = which
            .iter()
            .zip(&quiet)
            .zip(&last)
            .filter(|((_, q), _)| **q < 2)
            .map(|((i, _), c)| format!("{}: {c:?}", servers[*i].0))
            .collect();
        panic!("the watcher never went quiet in 120 s beside {busy:?}");
    }
}

/// Work per wake follows what changed: with ten panes of a kind and one of them writing, each
/// write makes the watcher read that pane's log again and report that pane again, not every
/// pane, and ask tmux for nothing (unless the agent is read from its title too: Gemini CLI,
/// Qwen Code). Every kind whose log agentpane reads.
#[test]
fn a_write_to_one_log_reads_that_log_alone() {
    // The kinds side by side, one server and watcher each (what is counted is each
    // watcher's own work).
    std::thread::scope(|s| {
        for kind in AgentKind::ALL
            .into_iter()
            .filter(|k| agentpane::agents::reads_log(*k))
        {
            s.spawn(move || one_write_reads_one_log(kind));
        }
    });
}

/// [`a_write_to_one_log_reads_that_log_alone`] for one kind.
fn one_write_reads_one_log(kind: AgentKind) {
    const WRITES: u64 = 4;
    let server = TmuxServer::start();
    idle_panes(&server, kind);
    let writer = server.spawn(
        &FakeAgent::idle(kind)
            .in_dir(&format!("{kind}-writer"))
            .env("AGENTPANE_FAKE_REPEAT", "1"),
    );
    // A long safety poll: what is counted is what the writes cause.
    let watch = start_watcher(&server, &["--poll", "60"]);
    settle(watch.0.id());
    let start = counters(&server, &watch);
    let mut last = start;
    for _ in 0..WRITES {
        server.send_line(&writer, "step");
        wait_until(
            DEADLINE,
            &format!("the watcher to wake for {kind}'s write"),
            || {
                let now = counters(&server, &watch);
                let woke = now.wakes > last.wakes;
                if woke {
                    last = now;
                }
                woke
            },
        );
    }
    let reads = last.reads - start.reads;
    let lists = last.lists - start.lists;
    let reports = last.reports - start.reports;
    // The minute's resolution may fall in the writes (a slow run): it reports every pane.
    let resolves = last.resolves - start.resolves;
    assert!(resolves <= 1, "{kind}: {resolves} resolutions");
    // A step may write nothing a state read looks at (opencode's session row).
    assert!(
        (1..=WRITES).contains(&reads),
        "{kind}: {WRITES} writes to one of eleven logs read {reads} logs"
    );
    // Sessions sharing a database (opencode, Kilo) are all touched by a write to it;
    // only the one whose rows moved is reported again (each write reported all eleven).
    assert!(
        reports <= reads + lists + (IDLE_PANES + 1) * resolves,
        "{kind}: {WRITES} writes to one of eleven logs reported {reports} panes again \
         ({reads} logs read, {lists} listings, {resolves} resolutions)"
    );
    let title = agentpane::agents::reads_title(kind);
    assert!(
        lists == 0 || title && lists <= 2 * WRITES,
        "{kind}: {WRITES} writes asked tmux for the panes {lists} times"
    );
}

/// File wakes must not starve the safety poll: beside an agent that writes every 300 ms, the
/// watcher (1 s poll) still polls, which catches what leaves no file behind (a pane closed,
/// a screen-only state): it asks tmux, or finds from the kernel that tmux has nothing new.
#[test]
fn the_safety_poll_runs_while_an_agent_writes() {
    let server = TmuxServer::start();
    server.spawn(
        &FakeAgent::idle(AgentKind::Claude)
            .env("AGENTPANE_FAKE_PACE_MS", "300")
            .env("AGENTPANE_FAKE_REPEAT", "1"),
    );
    let watch = start_watcher(&server, &["--poll", "1"]);
    let start = counters(&server, &watch);
    wait_until(DEADLINE, "three safety polls among the writes", || {
        let now = counters(&server, &watch);
        now.lists + now.quiet_polls >= start.lists + start.quiet_polls + 3
            && now.reads > start.reads
    });
}

/// The safety poll spawns nothing while nothing happens: with the plugin's focus hooks set,
/// once every agent pane has been quiet on its terminal for a while (20 s: the kernel keeps
/// a terminal's write time to 8 s steps), a poll reads each pane's foreground from /proc and
/// asks tmux nothing — that one `tmux list-panes` client per poll was half an idle watcher's
/// cost. An agent started from a shell, which no tmux hook tells of, is still found by its
/// foreground alone. Every agent kind, side by side, ten idle panes and a shell each, a 1 s
/// poll; and without the hooks, every poll still asks tmux (a focus change leaves no trace
/// anywhere else).
#[test]
fn an_idle_watcher_asks_tmux_nothing_until_a_pane_changes() {
    let worlds: Vec<(AgentKind, TmuxServer, String)> = AgentKind::ALL
        .into_iter()
        .map(|kind| {
            let server = TmuxServer::start();
            focus_hooks(&server);
            idle_panes(&server, kind);
            let shell = server.shell_pane("bash --norc -i");
            (kind, server, shell)
        })
        .collect();
    let unhooked = TmuxServer::start();
    idle_panes(&unhooked, AgentKind::Claude);
    let unhooked_watch = start_watcher(&unhooked, &["--poll", "1"]);
    let watchers: Vec<Reap> = worlds
        .iter()
        .map(|(_, server, _)| start_watcher(server, &["--poll", "1"]))
        .collect();
    for ((kind, server, _), watch) in worlds.iter().zip(&watchers) {
        // Settled: two polls in a row that asked tmux nothing.
        let mut base = counters(server, watch);
        wait_until(
            Duration::from_secs(90),
            &format!("{kind}: safety polls that ask tmux nothing"),
            || {
                let now = counters(server, watch);
                if now.lists != base.lists {
                    base = now;
                }
                now.quiet_polls >= base.quiet_polls + 2
            },
        );
    }
    let before: Vec<Counters> = worlds
        .iter()
        .zip(&watchers)
        .map(|((_, server, _), watch)| counters(server, watch))
        .collect();
    let unhooked_before = counters(&unhooked, &unhooked_watch);
    // Six 1 s polls, three of them counted: a loaded machine delays a poll by its scan.
    std::thread::sleep(Duration::from_secs(6));
    let unhooked_after = counters(&unhooked, &unhooked_watch);
    assert!(
        unhooked_after.quiet_polls == 0 && unhooked_after.lists >= unhooked_before.lists + 3,
        "without the focus hooks every poll asks tmux: {unhooked_before:?} → {unhooked_after:?}"
    );
    for (((kind, server, _), watch), before) in worlds.iter().zip(&watchers).zip(&before) {
        let after = counters(server, watch);
        // At most the listing the watcher makes once a minute whatever the probes say.
        assert!(
            after.lists <= before.lists + 1,
            "{kind}: idle panes, yet the safety poll asked tmux ({before:?} → {after:?})"
        );
        assert!(
            after.quiet_polls >= before.quiet_polls + 3,
            "{kind}: the safety poll stopped ({before:?} → {after:?})"
        );
    }
    // An agent started from the shell: no hook tells the watcher, its foreground does. Every
    // kind's started first, then each watched for.
    let lists: Vec<u64> = worlds
        .iter()
        .zip(&watchers)
        .map(|((kind, server, shell), watch)| {
            let lists = counters(server, watch).lists;
            let fake = FakeAgent::idle(*kind);
            server.start_from_shell(shell, fake.name, &fake.env);
            lists
        })
        .collect();
    for (((kind, server, shell), watch), lists) in worlds.iter().zip(&watchers).zip(lists) {
        let snapshot = server.server_dir().join("state.json");
        wait_until(
            DEADLINE,
            &format!("the watcher to see {kind} start"),
            || {
                std::fs::read_to_string(&snapshot)
                    .is_ok_and(|s| s.contains(&format!("\"{shell}\"")))
            },
        );
        assert!(counters(server, watch).lists > lists, "{kind}");
    }
}
