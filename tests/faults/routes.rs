//! Ten routes into one pane at once, and racing queue deliverers.

use super::*;

// ---------------------------------------------------------------------------------------------
// Ten routes into one pane at once.

/// A fake agent whose submitted lines land in a file (cooked tty: a line reaches it on Enter).
fn cat_sink(server: &TmuxServer) -> (String, PathBuf) {
    server.inbox_agent("sink")
}

/// Ten plain panes, each showing one unique marker line.
fn marker_sources(server: &TmuxServer) -> Vec<(String, String)> {
    let sources: Vec<(String, String)> = (0..10)
        .map(|k| {
            let marker = format!("routed-message-{k}-end");
            let pane = server.new_window(
                &format!("printf '{marker}\\n'; exec sleep 600"),
                &server.work("src"),
                &[],
            );
            (pane, marker)
        })
        .collect();
    for (pane, marker) in &sources {
        wait_until(DEADLINE, "the source text", || {
            server
                .tmux(&["capture-pane", "-p", "-t", pane])
                .contains(marker.as_str())
        });
    }
    sources
}

/// The journal's entries per message id, in order.
fn journal_by_id(server: &TmuxServer) -> std::collections::BTreeMap<String, Vec<String>> {
    let mut by_id = std::collections::BTreeMap::<String, Vec<String>>::new();
    let text =
        std::fs::read_to_string(server.state_dir().join("journal.jsonl")).unwrap_or_default();
    for line in text.lines() {
        let v: serde_json::Value = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("torn journal line ({e}): {line}"));
        by_id
            .entry(v["id"].as_str().unwrap().to_string())
            .or_default()
            .push(v["outcome"].as_str().unwrap().to_string());
    }
    by_id
}

/// Runs `route SRC DST ARGS… --json` for every source at once; (marker, run) pairs.
fn route_all_at_once(
    server: &TmuxServer,
    sources: &[(String, String)],
    dst: &str,
    extra: &[&str],
) -> Vec<(String, common::Run)> {
    std::thread::scope(|s| {
        let handles: Vec<_> = sources
            .iter()
            .map(|(src, marker)| {
                s.spawn(move || {
                    let mut args = vec!["route", src.as_str(), dst, "--transform", "full-output"];
                    args.extend_from_slice(extra);
                    args.push("--json");
                    (marker.clone(), server.agentpane(&args))
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

#[test]
fn ten_concurrent_routes_to_one_pane_finish_and_journal_cleanly() {
    let server = TmuxServer::start();
    let sources = marker_sources(&server);
    let (dst, file) = cat_sink(&server);
    let runs = route_all_at_once(&server, &sources, &dst, &[]);
    let mut ids = std::collections::BTreeSet::new();
    let mut pasted = Vec::new();
    for (marker, run) in &runs {
        assert!(!run.stderr.contains("panicked"), "{run:?}");
        assert!([0, 1].contains(&run.code), "{run:?}");
        let v = run.json();
        let id = v["id"].as_str().unwrap_or_else(|| panic!("no id: {run:?}"));
        assert!(ids.insert(id.to_string()), "duplicate id {id}");
        match v["outcome"].as_str().unwrap() {
            "delivered" => {
                assert_eq!(run.code, 0, "{run:?}");
                pasted.push(marker.clone());
            }
            "unverified" => pasted.push(marker.clone()),
            other => panic!("unexpected outcome {other}: {run:?}"),
        }
    }
    // Every message pasted arrives exactly once; none that was not pasted arrives.
    wait_until(DEADLINE, "every pasted message in the sink", || {
        let got = std::fs::read_to_string(&file).unwrap_or_default();
        pasted.iter().all(|m| got.contains(m.as_str()))
    });
    std::thread::sleep(Duration::from_millis(300));
    let got = std::fs::read_to_string(&file).unwrap();
    for (marker, _) in &sources {
        let want = usize::from(pasted.contains(marker));
        assert_eq!(
            got.matches(marker.as_str()).count(),
            want,
            "{marker} in {got:?}"
        );
    }
    let journal = journal_by_id(&server);
    assert_eq!(
        journal
            .keys()
            .cloned()
            .collect::<std::collections::BTreeSet<_>>(),
        ids
    );
    for (id, steps) in &journal {
        assert_eq!(steps.len(), 2, "{id}: {steps:?}");
        assert_eq!(steps[0], "pasting", "{id}: {steps:?}");
    }
}

/// Ten routes that all find the destination free paste into it at once: a route's Enter
/// submits whatever else was pasted in the meantime, so two messages reach the agent as one
/// prompt. Delivery into one pane needs to be serialised (a per-destination lock around
/// check → paste → verify → Enter).
#[test]
fn ten_concurrent_routes_to_one_pane_never_merge_messages() {
    let server = TmuxServer::start();
    let sources = marker_sources(&server);
    let (dst, file) = cat_sink(&server);
    let runs = route_all_at_once(&server, &sources, &dst, &[]);
    let delivered = runs.iter().filter(|(_, r)| r.code == 0).count();
    wait_until(DEADLINE, "the submitted lines", || {
        let got = std::fs::read_to_string(&file).unwrap_or_default();
        got.matches("-end").count() >= delivered
    });
    std::thread::sleep(Duration::from_millis(300));
    let got = std::fs::read_to_string(&file).unwrap();
    for line in got.lines() {
        assert!(
            line.matches("routed-message-").count() <= 1,
            "two routed messages submitted as one line: {line:?}"
        );
    }
}

/// Queues ten messages for a `cat` sink, runs three `route-queue --deliver` at once (the
/// watcher and two manual passes), then single passes until the queue is empty. Returns the
/// sink's text, the journal by id, and the markers.
fn deliver_queue_concurrently(
    server: &TmuxServer,
) -> (
    String,
    std::collections::BTreeMap<String, Vec<String>>,
    Vec<String>,
) {
    use agentpane::route::queue::{new_id, Queued, Store};
    let (dst, file) = cat_sink(server);
    let recipient = server.recipient(&dst);
    let socket = server.tmux(&["display-message", "-p", "#{socket_path}"]);
    let store = Store::open(&server.state_dir()).unwrap();
    let markers: Vec<String> = (0..10).map(|k| format!("queued-message-{k}-end")).collect();
    for m in &markers {
        store
            .enqueue(&Queued {
                id: new_id(),
                created: chrono::Utc::now(),
                server: socket.trim().to_string(),
                src: "%0".into(),
                dst: dst.clone(),
                text: m.clone(),
                submit: true,
                recipient: Some(recipient.clone()),
            })
            .unwrap();
    }
    drop(store);
    let check = |run: &common::Run| {
        assert!(!run.stderr.contains("panicked"), "{run:?}");
        for line in run.stdout.lines() {
            let _: serde_json::Value =
                serde_json::from_str(line).unwrap_or_else(|e| panic!("torn output ({e}): {run:?}"));
        }
    };
    std::thread::scope(|s| {
        let hs: Vec<_> = (0..3)
            .map(|_| s.spawn(|| server.agentpane(&["route-queue", "--deliver", "--json"])))
            .collect();
        for h in hs {
            check(&h.join().unwrap());
        }
    });
    // One message per destination per pass: drain the rest one pass at a time.
    for _ in 0..30 {
        if server.agentpane(&["route-queue"]).stdout.trim().is_empty() {
            break;
        }
        check(&server.agentpane(&["route-queue", "--deliver", "--json"]));
    }
    std::thread::sleep(Duration::from_millis(500));
    let got = std::fs::read_to_string(&file).unwrap_or_default();
    (got, journal_by_id(server), markers)
}

#[test]
fn concurrent_queue_deliveries_never_panic_or_tear_output() {
    let server = TmuxServer::start();
    let (_, journal, _) = deliver_queue_concurrently(&server);
    assert_eq!(
        journal.len(),
        10,
        "every message journalled, in whole lines"
    );
    for (id, steps) in &journal {
        assert_eq!(steps[0], "queued", "{id}: {steps:?}");
        assert!(steps.len() >= 2, "{id} never left the queue: {steps:?}");
    }
}

/// Two deliverers racing over one queue (the watcher and a manual `route-queue --deliver`):
/// a message the other process is pasting right now is taken for a crash mid-delivery
/// (`uncertain`, moved to `queue/held/`, never delivered by it), both load the same buffer name
/// `agentpane-<id>` (one paste fails with `no buffer`, or the message is pasted twice), and
/// their pastes and Enters interleave into one submitted line.
#[test]
fn concurrent_queue_deliveries_send_each_message_exactly_once() {
    let server = TmuxServer::start();
    let (got, journal, markers) = deliver_queue_concurrently(&server);
    for (id, steps) in &journal {
        assert!(
            !steps.iter().any(|s| s == "uncertain" || s == "failed"),
            "{id}: no crash and no tmux failure happened, yet: {steps:?}"
        );
    }
    for m in &markers {
        assert_eq!(got.matches(m.as_str()).count(), 1, "{m} in {got:?}");
    }
    for line in got.lines() {
        assert!(
            line.matches("queued-message-").count() <= 1,
            "two queued messages submitted as one line: {line:?}"
        );
    }
}
