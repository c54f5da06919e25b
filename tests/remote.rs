//! Remote hosts over a real OpenSSH server (docs/design.md#remote-hosts, tests/common/sshd.rs):
//! the "remote host" is a second private tmux server with its own HOME and state folder,
//! reached through sshd's ForceCommand wrapper that gives each ssh session that world.
//! The local watcher keeps a link per host: the status line merges the remote's agents,
//! `panes`, `last` and routes in both directions cover them, an unreachable host shows `✕`
//! without holding up the local segment, a hostile document's bad pane is left out (its host and other panes kept), and a link dropped
//! by killing sshd comes back once sshd does.

mod common;

use std::path::Path;
use std::time::Duration;

use common::sshd::{delivered_to, read, remote_pane, Sshd};
use common::{agentpane_bin, wait_until, FakeAgent, TmuxServer, Watch, DEADLINE};

const CODEX_MID_TURN: &str = "codex/derived-prefix/kvsankar-session-01.prefix-L1-7.mid-turn.jsonl";

const CLAUDE_WITH_ANSWER: &str =
    "claude/d-kimuson-claude-code-viewer/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl";

fn status(local: &TmuxServer) -> String {
    local.tmux(&["show-option", "-gqv", "@agentpane_status"])
}

fn wait_status(local: &TmuxServer, what: &str, cond: impl Fn(&str) -> bool) {
    let end = std::time::Instant::now() + Duration::from_secs(40);
    loop {
        let last = status(local);
        if cond(&last) {
            return;
        }
        if std::time::Instant::now() > end {
            panic!(
                "timed out waiting for {what}: status {last:?}, snapshot {}",
                read(&local.server_dir().join("state.json"))
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Moves the picker in `pane` down until the selected (reverse video) row holds `text`.
fn select_row(local: &TmuxServer, pane: &str, text: &str) {
    for _ in 0..12 {
        let screen = local.tmux(&["capture-pane", "-p", "-e", "-t", pane]);
        if screen
            .lines()
            .any(|l| l.contains("\x1b[7m") && l.contains(text))
        {
            return;
        }
        local.tmux(&["send-keys", "-t", pane, "j"]);
        std::thread::sleep(Duration::from_millis(300));
    }
    panic!(
        "no row with {text} could be selected: {}",
        local.tmux(&["capture-pane", "-p", "-t", pane])
    );
}

/// The local watcher's view of `host`, from its snapshot.
fn host_view(local: &TmuxServer, host: &str) -> serde_json::Value {
    let snapshot: serde_json::Value =
        serde_json::from_str(&read(&local.server_dir().join("state.json"))).expect("snapshot");
    snapshot["hosts"]
        .as_array()
        .expect("hosts in the snapshot")
        .iter()
        .find(|h| h["host"] == host)
        .unwrap_or_else(|| panic!("no {host} in {snapshot}"))
        .clone()
}

#[test]
fn remote_agents_over_a_real_sshd() {
    let remote = TmuxServer::start();
    let r_claude = remote.spawn(&FakeAgent::claude().fixture(CLAUDE_WITH_ANSWER));
    let (r_inbox, r_inbox_file) = remote.inbox_agent("rinbox");
    let mut sshd = Sshd::new(&remote);

    let local = sshd.local_server();
    let l_claude = local.spawn(&FakeAgent::claude().fixture(CLAUDE_WITH_ANSWER));
    let (l_inbox, l_inbox_file) = local.inbox_agent("linbox");
    wait_until(DEADLINE, "the remote claude's answer", || {
        remote.agentpane(&["last", &r_claude]).code == 0
    });

    // One-shot, before any watcher: `panes --json --host` asks the host over ssh.
    let run = local.agentpane(&["--host", "devbox", "panes", "--json"]);
    assert_eq!(run.code, 0, "{run:?}");
    let rows = run.json();
    let remote_rows: Vec<&serde_json::Value> = rows
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["host"] == "devbox")
        .collect();
    let ids: Vec<&str> = remote_rows
        .iter()
        .map(|r| r["pane_id"].as_str().unwrap())
        .collect();
    assert!(
        ids.contains(&r_claude.as_str()) && ids.contains(&r_inbox.as_str()),
        "{rows}"
    );
    assert!(rows
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r["host"].is_null() && r["pane_id"] == l_claude.as_str()));

    // The watcher: hosts from `@agentpane-hosts` and `--host`.
    local.tmux(&["set-option", "-g", "@agentpane-hosts", "devbox deadhost"]);
    let watch = Watch::start(&local, &["--host", "evil"]);
    // Local ●1 and the remote's ●1 merge; the refused host shows ✕; the hostile one's
    // working claude counts.
    wait_status(&local, "the merged segment", |s| {
        s.contains("●2") && s.contains("⚡1") && s.contains("deadhost ✕")
    });
    // One-shot `status` says the same, from the watcher's view of the hosts.
    let run = local.agentpane(&["status"]);
    assert_eq!(run.stdout.trim(), status(&local), "{run:?}");
    assert!(!run.stdout.contains("evil ✕"), "{run:?}");
    // The hostile document's one bad pane is left out with a note; the TAB in another
    // pane's text is cleaned; the host and both its other panes stay.
    let evil = host_view(&local, "evil");
    assert_eq!(evil["link"], "up", "{evil}");
    let panes = evil["doc"]["panes"].as_array().unwrap();
    let ids: Vec<&str> = panes
        .iter()
        .map(|p| p["pane_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["%1", "%2"], "{evil}");
    assert_eq!(panes[0]["reason"], "background agent: fix the[2J tests");
    assert!(
        evil["doc"]["note"]
            .as_str()
            .unwrap()
            .contains("1 pane(s) left out: pane id"),
        "{evil}"
    );
    assert!(!Path::new("/tmp/pwned").exists());

    // `panes` reads the watcher's view now: no ssh per call.
    let run = local.agentpane(&["panes"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout.contains("devbox:main:"),
        "remote rows carry their host: {}",
        run.stdout
    );
    let run = local.agentpane(&["--host", "evil", "panes"]);
    assert!(
        run.stdout.contains("evil:main:1.0") && run.stdout.contains("evil:main:2.0"),
        "{run:?}"
    );
    assert!(run.stderr.contains("deadhost is unreachable"), "{run:?}");

    // The picker lists the remote panes with their host.
    let picker = local.new_window(
        &format!("{} -L {} pick", agentpane_bin(), local.name),
        &local.work("proj"),
        &[],
    );
    wait_until(DEADLINE, "remote rows in the picker", || {
        let screen = local.tmux(&["capture-pane", "-p", "-t", &picker]);
        screen.contains("devbox:main:") && screen.contains("claude")
    });
    // Enter on a remote row: a new local window attached to that pane's session over ssh.
    select_row(&local, &picker, "devbox:main:");
    local.tmux(&["send-keys", "-t", &picker, "Enter"]);
    wait_until(DEADLINE, "a client attached to the remote server", || {
        !remote.tmux(&["list-clients"]).is_empty()
    });
    let windows = local.tmux(&["list-windows", "-a", "-F", "#{window_name}"]);
    assert!(windows.lines().any(|w| w == "devbox"), "{windows}");
    // Enter again from a new picker, with a person's client on the local server (a terminal
    // of the other server's): that window is reused, not a second one opened.
    remote.new_window(
        &format!("env -u TMUX tmux -L {} attach -t main", local.name),
        &remote.work("proj"),
        &[],
    );
    wait_until(DEADLINE, "a client on the local server", || {
        !local.tmux(&["list-clients"]).is_empty()
    });
    let picker = local.new_window(
        &format!("{} -L {} pick", agentpane_bin(), local.name),
        &local.work("proj"),
        &[],
    );
    select_row(&local, &picker, "devbox:main:");
    local.tmux(&["send-keys", "-t", &picker, "Enter"]);
    wait_until(DEADLINE, "the picker to close", || {
        !local
            .tmux(&["list-panes", "-a", "-F", "#{pane_id}"])
            .lines()
            .any(|p| p == picker)
    });
    let windows = local.tmux(&["list-windows", "-a", "-F", "#{window_name}"]);
    assert_eq!(
        windows.lines().filter(|w| *w == "devbox").count(),
        1,
        "{windows}"
    );

    // doctor reads the hosts too: devbox up, deadhost a fix naming the command to try.
    let run = local.agentpane(&["doctor"]);
    assert!(
        run.stdout.contains("✓ host devbox: agentpane ")
            && run.stdout.contains("✗ host deadhost is unreachable")
            && run
                .stdout
                .contains("ssh -o BatchMode=yes deadhost agentpane serve --once"),
        "{run:?}"
    );

    // `last HOST:PANE` is the remote's own answer.
    let here = local.agentpane(&["last", &format!("devbox:{r_claude}")]);
    let there = remote.agentpane(&["last", &r_claude]);
    assert_eq!(here.code, 0, "{here:?}");
    assert_eq!(here.stdout, there.stdout);

    // Routes both ways: delivered on the destination's host, by its agentpane.
    let run = local.agentpane(&["route", &format!("devbox:{r_claude}"), &l_inbox, "--json"]);
    assert_eq!(run.code, 0, "{run:?}");
    let first_line = there.stdout.lines().next().unwrap().to_string();
    wait_until(DEADLINE, "the remote answer in the local inbox", || {
        read(&l_inbox_file).contains(&first_line)
    });
    let run = local.agentpane(&["route", &l_claude, &format!("devbox:{r_inbox}"), "--json"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.json()["outcome"], "delivered", "{run:?}");
    wait_until(DEADLINE, "the local answer in the remote inbox", || {
        read(&r_inbox_file).contains(&first_line)
    });
    // A busy remote agent: `--queue` queues the text there, for that host's watcher.
    let r_busy = remote.spawn(
        &FakeAgent::codex()
            .fixture("codex/derived-prefix/kvsankar-session-01.prefix-L1-7.mid-turn.jsonl")
            .in_dir("busy"),
    );
    wait_until(DEADLINE, "the remote codex working", || {
        remote.agentpane(&["resolve", &r_busy, "--json"]).json()["state"] == "working"
    });
    let run = local.agentpane(&[
        "route",
        &l_claude,
        &format!("devbox:{r_busy}"),
        "--queue",
        "--json",
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.json()["outcome"], "queued", "{run:?}");
    let queued = remote.agentpane(&["route-queue"]);
    assert!(queued.stdout.contains(&r_busy), "{queued:?}");
    // A remote destination that is a shell is refused there, exit 6, as a local one is.
    let r_shell = remote.shell_pane("dash -i");
    let run = local.agentpane(&["route", &l_claude, &format!("devbox:{r_shell}")]);
    assert_eq!(run.code, 6, "{run:?}");

    // sshd dies mid-stream: the host shows ✕, the local agents still count; it comes back.
    sshd.kill();
    wait_status(&local, "devbox unreachable", |s| {
        s.contains("devbox ✕") && s.contains('●')
    });
    // The one-shot commands read the watcher's view: no ssh, no wait on a dead host.
    let run = local.agentpane(&["panes"]);
    assert!(run.stderr.contains("devbox is unreachable"), "{run:?}");
    sshd.start();
    wait_until(Duration::from_secs(40), "devbox back", || {
        host_view(&local, "devbox")["link"] == "up"
    });
    wait_status(&local, "devbox back", |s| !s.contains("devbox ✕"));
    assert_eq!(watch.stop(), 0);
    let log = read(&local.server_dir().join("watch.log"));
    eprintln!(
        "{}",
        log.lines()
            .filter(|l| l.contains("host "))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// A fake Codex in the middle of a turn in `work/<name>`, whose input box lands in
/// `<root>/<name>.txt`; (pane, file).
fn codex_inbox(server: &TmuxServer, name: &str) -> (String, std::path::PathBuf) {
    let file = server.path().join(format!("{name}.txt"));
    let agent = FakeAgent::codex()
        .fixture(CODEX_MID_TURN)
        .in_dir(name)
        .env("AGENTPANE_FAKE_INBOX", file.to_str().unwrap());
    let pane = server.spawn(&agent);
    wait_until(DEADLINE, "the codex working", || {
        server.agentpane(&["resolve", &pane, "--json"]).json()["state"] == "working"
    });
    (pane, file)
}

/// The state of `pane` in the local watcher's document of `host`.
fn remote_state(local: &TmuxServer, host: &str, pane: &str) -> String {
    remote_pane(local, host, pane)
        .and_then(|p| p["state"].as_str().map(str::to_string))
        .unwrap_or_default()
}

#[test]
fn relays_and_queued_routes_across_a_real_sshd_deliver_each_answer_once() {
    let remote = TmuxServer::start();
    let (r_a, r_a_file) = codex_inbox(&remote, "ra");
    let (r_busy, r_busy_file) = codex_inbox(&remote, "rbusy");
    let r_shell = remote.shell_pane("dash -i");
    let mut sshd = Sshd::new(&remote);
    let local = sshd.local_server();
    let (l_b, l_b_file) = codex_inbox(&local, "lb");
    // Both have answered before the relay starts: history, never relayed.
    remote.codex_completes(&r_a, "a0", "OLD-ANSWER-OF-A");
    local.codex_completes(&l_b, "b0", "OLD-ANSWER-OF-B");
    local.tmux(&["set-option", "-g", "@agentpane-hosts", "devbox"]);
    let watch = Watch::start(&local, &[]);
    wait_until(
        DEADLINE,
        "the remote codex's turn over, as the watcher sees it",
        || remote_state(&local, "devbox", &r_a) == "your-turn",
    );
    wait_until(DEADLINE, "the local codex's turn over", || {
        local.agentpane(&["resolve", &l_b, "--json"]).json()["state"] == "your-turn"
    });

    // The destination is checked on its host before any text is made: a shell there refuses
    // the route, and the transform never runs.
    let marker = local.path().join("transform-ran");
    let run = local.agentpane_env(
        &[(
            "AGENTPANE_AI_COMMAND",
            &format!("touch {}", marker.display()),
        )],
        &[
            "route",
            &l_b,
            &format!("devbox:{r_shell}"),
            "--transform",
            "ai",
        ],
    );
    assert_eq!(run.code, 6, "{run:?}");
    assert!(!marker.exists(), "the transform ran for a refused route");

    // A relay between a remote pane and a local one, run by the local watcher.
    let remote_a = format!("devbox:{r_a}");
    let run = local.agentpane(&["relay", &remote_a, &l_b, "--rounds", "3"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stderr.contains("the watcher relays"), "{run:?}");

    // Remote → local.
    remote.codex_completes(&r_a, "a1", "FROM-REMOTE-ONE");
    wait_until(DEADLINE, "A's answer in B", || {
        read(&l_b_file).contains("FROM-REMOTE-ONE") && delivered_to(&local, &l_b) == 1
    });
    // Local → remote (delivered there by its agentpane).
    local.codex_completes(&l_b, "b1", "FROM-LOCAL-ONE");
    wait_until(DEADLINE, "B's answer in A", || {
        read(&r_a_file).contains("FROM-LOCAL-ONE") && delivered_to(&remote, &r_a) == 1
    });

    // sshd dies; A answers while its host is unreachable; the relay holds and sends it once
    // the link is back.
    sshd.kill();
    wait_status(&local, "devbox unreachable", |s| s.contains("devbox ✕"));
    remote.codex_completes(&r_a, "a2", "FROM-REMOTE-WHILE-DOWN");
    sshd.start();
    wait_until(Duration::from_secs(60), "A's second answer in B", || {
        read(&l_b_file).contains("FROM-REMOTE-WHILE-DOWN") && delivered_to(&local, &l_b) == 2
    });
    // Again, the other way: B answers while A's host is down.
    sshd.kill();
    wait_status(&local, "devbox unreachable", |s| s.contains("devbox ✕"));
    local.codex_completes(&l_b, "b2", "FROM-LOCAL-WHILE-DOWN");
    // A message whose sending failed waits in the outbox (as a relay leaves one when the
    // connection drops mid-call); `route-queue` lists it, and it goes out once the host is back.
    let outbox = local.state_dir().join("outbox");
    std::fs::create_dir_all(&outbox).unwrap();
    let id = "20261202-000000-000-7-0";
    let msg = serde_json::json!({
        "id": id, "created": chrono::Utc::now(), "host": "devbox", "pane": r_a,
        "src": l_b, "text": "FROM-THE-OUTBOX",
    });
    std::fs::write(outbox.join(format!("{id}.json")), msg.to_string()).unwrap();
    let listed = local.agentpane(&["route-queue"]);
    assert!(
        listed.stdout.contains(&format!("outbox {id}"))
            && listed.stdout.contains("waits for devbox"),
        "{listed:?}"
    );
    sshd.start();
    wait_until(Duration::from_secs(60), "B's second answer in A", || {
        read(&r_a_file).contains("FROM-LOCAL-WHILE-DOWN")
            && read(&r_a_file).contains("FROM-THE-OUTBOX")
            && delivered_to(&remote, &r_a) == 3
    });
    // The host pastes before its ssh call returns; the sender empties the outbox after.
    wait_until(DEADLINE, "the outbox emptied", || {
        std::fs::read_dir(&outbox).unwrap().next().is_none()
    });
    assert_eq!(delivered_to(&remote, &r_a), 3, "delivered once each");

    // A queued route to a busy remote agent waits there and is delivered once it frees.
    let run = local.agentpane(&[
        "route",
        &l_b,
        &format!("devbox:{r_busy}"),
        "--queue",
        "--json",
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.json()["outcome"], "queued", "{run:?}");
    assert!(!read(&r_busy_file).contains("FROM-LOCAL-WHILE-DOWN"));
    remote.codex_completes(&r_busy, "c1", "BUSY-WORK-DONE");
    wait_until(DEADLINE, "the queued route delivered there", || {
        read(&r_busy_file).contains("FROM-LOCAL-WHILE-DOWN") && delivered_to(&remote, &r_busy) == 1
    });

    // Exactly once at each destination; history never sent.
    let (got_b, got_a) = (read(&l_b_file), read(&r_a_file));
    for (got, marker) in [
        (&got_b, "FROM-REMOTE-ONE"),
        (&got_b, "FROM-REMOTE-WHILE-DOWN"),
        (&got_a, "FROM-LOCAL-ONE"),
        (&got_a, "FROM-LOCAL-WHILE-DOWN"),
        (&got_a, "FROM-THE-OUTBOX"),
    ] {
        assert_eq!(got.matches(marker).count(), 1, "{marker} in {got}");
    }
    assert!(!got_b.contains("OLD-ANSWER-OF-A") && !got_a.contains("OLD-ANSWER-OF-B"));
    assert_eq!(
        read(&r_busy_file).matches("FROM-LOCAL-WHILE-DOWN").count(),
        1
    );
    assert_eq!(delivered_to(&local, &l_b), 2);
    assert_eq!(delivered_to(&remote, &r_a), 3);

    // From tmux: the picker's `l` on the remote row stops the relay, and again starts one.
    let relays = local.state_dir().join("relays");
    let registered = || std::fs::read_dir(&relays).map(|d| d.count()).unwrap_or(0);
    assert_eq!(registered(), 1);
    let target = remote.tmux(&[
        "display-message",
        "-p",
        "-t",
        &r_a,
        "#{session_name}:#{window_index}.#{pane_index}",
    ]);
    let picker = local.new_window(
        &format!("{} -L {} pick --from {l_b}", agentpane_bin(), local.name),
        &local.work("proj"),
        &[],
    );
    let row = format!("devbox:{}", target.trim());
    wait_until(DEADLINE, "the remote row in the picker", || {
        local
            .tmux(&["capture-pane", "-p", "-t", &picker])
            .contains(&row)
    });
    select_row(&local, &picker, &row);
    local.tmux(&["send-keys", "-t", &picker, "l"]);
    wait_until(DEADLINE, "the relay stopped from the picker", || {
        registered() == 0
    });
    local.tmux(&["send-keys", "-t", &picker, "l"]);
    wait_until(DEADLINE, "a relay started from the picker", || {
        registered() == 1
    });
    // Stopped by the names it was started with.
    let run = local.agentpane(&["relay", &l_b, &remote_a, "--stop"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(registered(), 0);

    // The host takes a message id once: the same id again (a sender's retry after a connection
    // that dropped mid-call) is answered with the first outcome, never pasted twice.
    let send = |id: &str| {
        let mut child = std::process::Command::new("ssh")
            .arg("-F")
            .arg(sshd.config())
            .args(["-o", "BatchMode=yes", "-T", "--", "devbox", "agentpane"])
            .args(["deliver-stdin", &r_busy, "--from", "test", "--id", id])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("run ssh");
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(b"ONCE-ONLY-TEXT\n")
            .unwrap();
        child.wait_with_output().expect("ssh output")
    };
    let first = send("20261202-000000-000-1-0");
    assert_eq!(first.status.code(), Some(0), "{first:?}");
    let again = send("20261202-000000-000-1-0");
    assert_eq!(again.status.code(), Some(0), "{again:?}");
    assert!(
        String::from_utf8_lossy(&again.stdout).contains("already received"),
        "{again:?}"
    );
    wait_until(DEADLINE, "the text there", || {
        read(&r_busy_file).contains("ONCE-ONLY-TEXT") && delivered_to(&remote, &r_busy) == 2
    });
    assert_eq!(read(&r_busy_file).matches("ONCE-ONLY-TEXT").count(), 1);

    // Both sides on the host: relayed through this machine, once.
    let run = local.agentpane(&["relay", &remote_a, &format!("devbox:{r_busy}")]);
    assert_eq!(run.code, 0, "{run:?}");
    remote.codex_completes(&r_a, "a3", "REMOTE-TO-REMOTE");
    wait_until(DEADLINE, "A's answer in the other remote agent", || {
        read(&r_busy_file).contains("REMOTE-TO-REMOTE") && delivered_to(&remote, &r_busy) == 3
    });
    assert_eq!(read(&r_busy_file).matches("REMOTE-TO-REMOTE").count(), 1);
    assert_eq!(watch.stop(), 0);
}

/// Two live hosts beside the local server, each a world and an ssh connection of its own: the
/// local status line counts all three, `panes` lists each host's agents under its name, `last`
/// reads either, and a route goes from one host to the other — the text leaves `devbox` on
/// ssh's stdout and reaches `gpu1` on ssh's stdin, delivered there by its agentpane.
#[test]
fn two_live_hosts_beside_the_local_server() {
    let devbox = TmuxServer::start();
    let d_claude = devbox.spawn(&FakeAgent::claude().fixture(CLAUDE_WITH_ANSWER));
    let gpu1 = TmuxServer::start();
    let g_codex = gpu1.spawn(&FakeAgent::codex().fixture(CODEX_MID_TURN));
    let (g_inbox, g_inbox_file) = gpu1.inbox_agent("ginbox");
    let sshd = Sshd::with_hosts(&devbox, &[("gpu1", &gpu1)]);
    let local = sshd.local_server();
    local.spawn(&FakeAgent::claude().fixture(CLAUDE_WITH_ANSWER));
    wait_until(DEADLINE, "devbox's answer", || {
        devbox.agentpane(&["last", &d_claude]).code == 0
    });

    local.tmux(&["set-option", "-g", "@agentpane-hosts", "devbox gpu1"]);
    let _watch = Watch::start(&local, &[]);
    // The local ● and devbox's ● merge; gpu1's Codex is mid-turn.
    wait_status(&local, "three servers in one segment", |s| {
        s.contains("●2") && s.contains("⚡1")
    });
    let run = local.agentpane(&["status", "--format", "{hosts}"]);
    assert!(
        run.stdout.contains("devbox ●1") && run.stdout.contains("gpu1 ⚡1"),
        "{run:?}"
    );

    let rows = local.agentpane(&["panes", "--json"]).json();
    let on = |host: &str, pane: &str| {
        rows.as_array()
            .unwrap()
            .iter()
            .any(|r| r["host"] == host && r["pane_id"] == pane)
    };
    assert!(on("devbox", &d_claude), "{rows}");
    assert!(on("gpu1", &g_codex) && on("gpu1", &g_inbox), "{rows}");

    let here = local.agentpane(&["last", &format!("devbox:{d_claude}")]);
    let there = devbox.agentpane(&["last", &d_claude]);
    assert_eq!((here.code, &here.stdout), (0, &there.stdout), "{here:?}");
    let none = local.agentpane(&["last", &format!("gpu1:{g_codex}")]);
    assert_eq!(
        none.code, 1,
        "a turn in progress has no answer yet: {none:?}"
    );

    // Host to host.
    let run = local.agentpane(&[
        "route",
        &format!("devbox:{d_claude}"),
        &format!("gpu1:{g_inbox}"),
        "--json",
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.json()["outcome"], "delivered", "{run:?}");
    let first_line = there.stdout.lines().next().unwrap().to_string();
    wait_until(DEADLINE, "devbox's answer in gpu1's inbox", || {
        read(&g_inbox_file).contains(&first_line)
    });
    assert_eq!(delivered_to(&gpu1, &g_inbox), 1);
    assert_eq!(delivered_to(&devbox, &g_inbox), 0);
}

/// A person whose home and state folder have long paths (a corporate user name) and who has
/// no `$XDG_RUNTIME_DIR`: ssh's socket must still fit the 104/108-byte limit of a Unix
/// socket, or every host reads unreachable while `ssh host` by hand works.
#[test]
fn a_long_home_without_a_runtime_folder_still_reaches_the_host() {
    let remote = TmuxServer::start();
    let r_claude = remote.spawn(&FakeAgent::claude().fixture(CLAUDE_WITH_ANSWER));
    let sshd = Sshd::new(&remote);
    // `$TMPDIR` a folder of this test's (where the sockets go), short as most are.
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp
        .path()
        .join("home/engineering/firstname.lastname@emea.corp.example.com");
    let state = home.join(".local/state/agentpane");
    std::fs::create_dir_all(&state).unwrap();
    assert!(home.as_os_str().len() > 70, "{home:?}");
    let config = sshd.config();
    let local = TmuxServer::start_with(&[
        ("AGENTPANE_SSH_CONFIG", config.to_str().unwrap()),
        ("XDG_RUNTIME_DIR", ""),
        ("TMPDIR", tmp.path().to_str().unwrap()),
        ("HOME", home.to_str().unwrap()),
        ("AGENTPANE_STATE_DIR", state.to_str().unwrap()),
        (
            "XDG_STATE_HOME",
            home.join(".local/state").to_str().unwrap(),
        ),
    ]);
    wait_until(DEADLINE, "the remote claude's answer", || {
        remote.agentpane(&["last", &r_claude]).code == 0
    });
    let run = local.agentpane(&["--host", "devbox", "panes", "--json"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.json()
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["host"] == "devbox" && r["pane_id"] == r_claude.as_str()),
        "{run:?}"
    );
    let here = local.agentpane(&["--host", "devbox", "last", &format!("devbox:{r_claude}")]);
    assert_eq!(here.code, 0, "{here:?}");
    // The shared connection's socket is in the private folder under `$TMPDIR`, and ended.
    // SAFETY: geteuid(2) cannot fail and touches no memory.
    let sockets = tmp
        .path()
        .join(format!("agentpane-{}", unsafe { libc::geteuid() }));
    let meta = std::fs::metadata(&sockets).expect("the sockets' folder");
    assert_eq!(
        std::os::unix::fs::PermissionsExt::mode(&meta.permissions()) & 0o777,
        0o700
    );
    let close = std::process::Command::new("ssh")
        .arg("-F")
        .arg(&config)
        .args(["-O", "exit", "-o"])
        .arg(format!(
            "ControlPath={}",
            std::fs::read_dir(&sockets)
                .unwrap()
                .flatten()
                .next()
                .expect("a socket for devbox")
                .path()
                .display()
        ))
        .arg("devbox")
        .output()
        .expect("ssh -O exit");
    assert!(close.status.success(), "{close:?}");
}

/// A broken or hostile host that streams documents as fast as the connection takes them:
/// the watcher takes the newest now and then, so its memory stays flat and its CPU small,
/// the host's other news still shows, and SIGTERM ends it at once.
#[test]
fn a_host_flooding_documents_neither_grows_the_watcher_nor_delays_sigterm() {
    use common::cost::{cpu_ms, rss_kib, start_watcher};
    let remote = TmuxServer::start();
    let sshd = Sshd::new(&remote);
    let local = sshd.local_server();
    let mut watcher = start_watcher(&local, &["--host", "flood"]);
    let pid = watcher.0.id();
    wait_until(DEADLINE, "the flooding host up", || {
        host_view(&local, "flood")["link"] == "up"
    });
    std::thread::sleep(Duration::from_secs(1));
    let (rss0, cpu0) = (rss_kib(pid), cpu_ms(pid));
    let secs = 6;
    std::thread::sleep(Duration::from_secs(secs));
    let (rss1, cpu1) = (rss_kib(pid), cpu_ms(pid));
    let cpu_pct = (cpu1 - cpu0) as f64 / (secs * 10) as f64;
    eprintln!(
        "flooding host, {secs} s: watcher RSS {rss0} → {rss1} KiB, CPU {} ms ({cpu_pct:.1} % of a core)",
        cpu1 - cpu0
    );
    assert!(
        rss1 < rss0 + 8 * 1024,
        "the watcher grew from {rss0} to {rss1} KiB in {secs} s"
    );
    assert!(cpu_pct < 10.0, "the watcher used {cpu_pct:.1} % of a core");
    assert_eq!(host_view(&local, "flood")["link"], "up");

    // SIGTERM ends it within a second or two, however much the host still sends.
    let asked = std::time::Instant::now();
    // SAFETY: kill(2) on the pid of a child we started and have not reaped.
    unsafe { libc::kill(pid as libc::pid_t, libc::SIGTERM) };
    wait_until(
        Duration::from_secs(5),
        "the watcher to exit on SIGTERM",
        || watcher.0.try_wait().ok().flatten().is_some(),
    );
    eprintln!("SIGTERM to exit: {:?}", asked.elapsed());
}

/// `last HOST:PANE` for a HOST that is not configured says so, with how to configure it,
/// rather than tmux's bare `no pane`; a session of that name stays a local target.
#[test]
fn a_host_that_is_not_configured_is_named_with_how_to_add_it() {
    let local = TmuxServer::start();
    let run = local.agentpane(&["last", "nosuchhost:%3"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr.contains(
            "nosuchhost is not a remote host here (add it to @agentpane-hosts or pass --host nosuchhost)"
        ),
        "{run:?}"
    );
}

/// A local server whose host `devbox` is `remote` over a real sshd (kept while the first is).
fn local_with_devbox(remote: &TmuxServer) -> (Sshd, TmuxServer) {
    let sshd = Sshd::new(remote);
    let local = sshd.local_server();
    local.tmux(&["set-option", "-g", "@agentpane-hosts", "devbox"]);
    (sshd, local)
}

/// A tmux format of `pane` on `server`.
fn shown(server: &TmuxServer, pane: &str, format: &str) -> String {
    server
        .tmux(&["display-message", "-p", "-t", pane, format])
        .trim()
        .to_string()
}

/// A route from a local pane to a remote one: its line names both panes as typed; a pane the
/// host does not have is bad input (exit 2) naming the pane and the host, not a refusal for
/// safety.
#[test]
fn a_local_route_to_a_host_names_its_panes_as_typed() {
    let remote = TmuxServer::start();
    let (r_inbox, r_inbox_file) = remote.inbox_agent("rinbox");
    let (_sshd, local) = local_with_devbox(&remote);
    let l_claude = local.spawn(&FakeAgent::claude().fixture(CLAUDE_WITH_ANSWER));
    wait_until(DEADLINE, "the local claude's answer", || {
        local.agentpane(&["last", &l_claude]).code == 0
    });

    // The line printed names the source and destination as typed, not as the host sees them.
    let src = shown(
        &local,
        &l_claude,
        "#{session_name}:#{window_index}.#{pane_index}",
    );
    let dst = format!("devbox:{r_inbox}");
    let run = local.agentpane(&["route", &src, &dst]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout.starts_with(&format!("routed {src} → {dst} (")),
        "{run:?}"
    );
    wait_until(DEADLINE, "the local answer in the remote inbox", || {
        !read(&r_inbox_file).is_empty()
    });

    let run = local.agentpane(&["route", &l_claude, "devbox:%999"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("no pane `%999` on devbox"), "{run:?}");
}

/// A review of a remote pane's answer names the folder that pane works in on its host.
#[test]
fn a_review_of_a_remote_answer_names_the_remote_folder() {
    let remote = TmuxServer::start();
    let r_claude = remote.spawn(&FakeAgent::claude().fixture(CLAUDE_WITH_ANSWER));
    let (_sshd, local) = local_with_devbox(&remote);
    let (l_inbox, l_inbox_file) = local.inbox_agent("linbox");
    wait_until(DEADLINE, "the remote claude's answer", || {
        remote.agentpane(&["last", &r_claude]).code == 0
    });
    let cwd = shown(&remote, &r_claude, "#{pane_current_path}");
    assert!(!cwd.is_empty());

    let src = format!("devbox:{r_claude}");
    let run = local.agentpane(&["route", &src, &l_inbox, "--template", "review"]);
    assert_eq!(run.code, 0, "{run:?}");
    let want = format!("from claude in {src} (working in {cwd}).");
    wait_until(DEADLINE, "the review in the local inbox", || {
        read(&l_inbox_file).contains("<answer>")
    });
    let got = read(&l_inbox_file);
    assert!(got.contains(&want), "want {want:?} in {got:?}");
}

/// The `answer_head` of `pane` in a `panes --json` run (a remote row when `host` is given).
fn head_in(rows: &serde_json::Value, host: Option<&str>, pane: &str) -> serde_json::Value {
    row_of(rows, host, pane)["answer_head"].clone()
}

/// The row of `pane` in a `panes --json` run (a remote row when `host` is given).
fn row_of(rows: &serde_json::Value, host: Option<&str>, pane: &str) -> serde_json::Value {
    rows.as_array()
        .expect("rows")
        .iter()
        .find(|r| r["host"].as_str() == host && r["pane_id"] == pane)
        .unwrap_or_else(|| panic!("no row {host:?} {pane} in {rows}"))
        .clone()
}

/// A remote pane's last-answer head shows in `panes`, `panes --json` and the picker as its
/// host shows it for a local pane: asked over ssh (the host scans) and from the local
/// watcher's link (the host's watcher snapshot).
#[test]
fn a_remote_row_shows_its_last_answer_head() {
    let remote = TmuxServer::start();
    let first = format!("Remote head: the build is green {}", "and long ".repeat(12));
    let r_claude = remote.claude_answering("rc", &format!("{first}\nsecond line"));
    let (_sshd, local) = local_with_devbox(&remote);
    wait_until(DEADLINE, "the remote claude's answer", || {
        remote.agentpane(&["last", &r_claude]).code == 0
    });
    let want = head_in(
        &remote.agentpane(&["panes", "--json"]).json(),
        None,
        &r_claude,
    );
    let cut = want.as_str().expect("a head on its own host").to_string();
    assert!(cut.starts_with("Remote head: the build is green") && cut.ends_with('…'));

    // No watcher anywhere: `serve --once` scans the host.
    let run = local.agentpane(&["panes", "--json"]);
    assert_eq!(
        head_in(&run.json(), Some("devbox"), &r_claude),
        want,
        "{run:?}"
    );
    let run = local.agentpane(&["panes"]);
    assert!(
        run.stdout
            .lines()
            .any(|l| l.starts_with("devbox:") && l.ends_with(&cut)),
        "{run:?}"
    );

    // The host's watcher runs and the local one keeps a link: the head comes from the host's
    // snapshot and travels in the streamed document.
    let _remote_watch = Watch::start(&remote, &[]);
    let watch = Watch::start(&local, &[]);
    wait_until(DEADLINE, "the head in the watcher's view of devbox", || {
        host_view(&local, "devbox")["doc"]["panes"]
            .as_array()
            .is_some_and(|ps| ps.iter().any(|p| p["answer_head"].is_string()))
    });
    let run = local.agentpane(&["panes", "--json"]);
    assert_eq!(
        head_in(&run.json(), Some("devbox"), &r_claude),
        want,
        "{run:?}"
    );

    // The picker shows it on the remote row, as on a local one.
    let picker = local.new_window(
        &format!("{} -L {} pick", agentpane_bin(), local.name),
        &local.work("proj"),
        &[],
    );
    wait_until(DEADLINE, "the remote head in the picker", || {
        local
            .tmux(&["capture-pane", "-p", "-t", &picker])
            .lines()
            .any(|l| l.contains("devbox:") && l.contains("Remote head: the build"))
    });
    assert_eq!(watch.stop(), 0);
}

/// `pane`'s state and request fingerprint on its own host.
fn asks_there(remote: &TmuxServer, pane: &str) -> (String, String) {
    let row = row_of(&remote.agentpane(&["panes", "--json"]).json(), None, pane);
    let fp = row["request"]["fingerprint"].as_str().unwrap_or("");
    (
        row["state"].as_str().unwrap_or("").to_string(),
        fp.to_string(),
    )
}

/// A remote pane waiting on a decision: its request shows in `panes` with its fingerprint;
/// `answer devbox:%N allow --request FP` has the host answer it once; a stale fingerprint is
/// refused there with nothing typed; a hostile fingerprint or pane id is refused before ssh
/// runs; and no remote command line ever holds the request's text.
#[test]
fn a_remote_waiting_pane_is_answered_once_by_its_fingerprint_and_no_model_text_crosses() {
    let remote = TmuxServer::start();
    let asking = remote.spawn(&FakeAgent::asking().in_dir("asking"));
    let (sshd, local) = local_with_devbox(&remote);
    let mut fp = String::new();
    wait_until(DEADLINE, "the request on its own host", || {
        let (state, f) = asks_there(&remote, &asking);
        fp = f;
        state == "waiting" && !fp.is_empty()
    });

    let run = local.agentpane(&["panes", "--json"]);
    let row = row_of(&run.json(), Some("devbox"), &asking);
    assert_eq!(row["state"], "waiting", "{row:#}");
    assert_eq!(row["request"]["fingerprint"], fp.as_str(), "{row:#}");
    assert_eq!(row["request"]["tool"], "Bash", "{row:#}");
    assert!(
        row["request"]["text"]
            .as_str()
            .unwrap()
            .contains("mix phx.server"),
        "{row:#}"
    );
    let run = local.agentpane(&["panes"]);
    assert!(
        run.stdout
            .lines()
            .any(|l| l.starts_with("devbox:") && l.contains("· mix phx.server")),
        "{run:?}"
    );

    // Hostile values never reach ssh.
    let target = format!("devbox:{asking}");
    let before = sshd.commands();
    for (pane, shown) in [
        (target.as_str(), "0123456789abcdef;id"),
        (target.as_str(), "$(touch /tmp/x)"),
        (target.as_str(), "01234567 89abcdef"),
        ("devbox:%1;id", fp.as_str()),
        ("devbox:$(id)", fp.as_str()),
        ("devbox:%1 x", fp.as_str()),
    ] {
        let run = local.agentpane(&["answer", pane, "allow", "--request", shown]);
        assert_eq!(run.code, 2, "{pane} {shown}: {run:?}");
    }
    assert_eq!(sshd.commands(), before, "nothing went to the host");

    // A stale fingerprint: refused there, nothing typed, the pane still asks.
    let stale = "0000000000000000";
    let run = local.agentpane(&["answer", &target, "allow", "--request", stale, "--json"]);
    assert_eq!(run.code, 1, "{run:?}");
    let out = run.json();
    assert_eq!(out["outcome"], "refused", "{out:#}");
    assert_eq!(out["host"], "devbox", "{out:#}");
    assert_eq!(out["keys"], serde_json::json!([]), "{out:#}");
    assert_eq!(asks_there(&remote, &asking), ("waiting".into(), fp.clone()));

    // The fingerprint shown: answered once.
    let run = local.agentpane(&["answer", &target, "allow", "--request", &fp, "--json"]);
    assert_eq!(run.code, 0, "{run:?}");
    let out = run.json();
    assert_eq!(out["outcome"], "answered", "{out:#}");
    assert_eq!(out["keys"], serde_json::json!(["1"]), "{out:#}");
    wait_until(DEADLINE, "the remote turn past the dialog", || {
        asks_there(&remote, &asking).0 != "waiting"
    });
    let run = local.agentpane(&["answer", &target, "allow", "--request", &fp]);
    assert_eq!(run.code, 1, "answered once only: {run:?}");
    assert!(run.stderr.contains("refused, nothing typed"), "{run:?}");

    let commands = sshd.commands();
    assert!(
        commands.contains(&format!("answer {asking} allow --request {fp} --json")),
        "{commands}"
    );
    assert!(
        !commands.contains("mix") && !commands.contains("phx"),
        "model text on a remote command line: {commands}"
    );
}

/// The page (`agentpane web` on the local server) on a remote pane: its row carries the
/// request and fingerprint, its detail the request in full and the whole last answer asked of
/// the host; Allow held to the fingerprint answers once through the host, a stale or hostile
/// one types nothing (a hostile one never reaches ssh); a reply reaches the remote agent's
/// input on ssh's stdin, never on a command line.
#[test]
fn the_page_decides_and_replies_to_a_remote_pane_through_its_host() {
    use common::web::WebServer;
    use serde_json::json;
    let remote = TmuxServer::start();
    let asking = remote.spawn(&FakeAgent::asking().in_dir("asking"));
    let answered = remote.claude_answering("rc", "Remote head line\nthe second line, in full");
    let (r_inbox, r_inbox_file) = remote.inbox_agent("rinbox");
    let (sshd, local) = local_with_devbox(&remote);
    let _watch = Watch::start(&local, &[]);
    let web = WebServer::start(&local, &[]);

    let id = format!("devbox:{asking}");
    let mut row = None;
    wait_until(DEADLINE, "the remote waiting row with its request", || {
        row = web
            .row(&id)
            .filter(|r| r["state"] == "waiting" && r["request"]["fingerprint"].is_string());
        row.is_some()
    });
    let fp = row.unwrap()["request"]["fingerprint"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(asks_there(&remote, &asking), ("waiting".into(), fp.clone()));
    let d = web.get_json(&WebServer::pane_path(&id));
    assert_eq!(d["request"]["fingerprint"], fp.as_str(), "{d:#}");
    assert!(
        d["request"]["text"]
            .as_str()
            .unwrap()
            .contains("mix phx.server"),
        "{d:#}"
    );

    // The whole last answer, not only its head.
    let rc = format!("devbox:{answered}");
    wait_until(DEADLINE, "the remote answered pane listed", || {
        web.row(&rc).is_some()
    });
    let d = web.get_json(&WebServer::pane_path(&rc));
    assert_eq!(d["answer_partial"], false, "{d:#}");
    assert!(
        d["answer"].to_string().contains("the second line, in full"),
        "{d:#}"
    );

    let path = format!("{}/answer", WebServer::pane_path(&id));
    let before = sshd.commands();
    let (status, bad) = web.post(
        &path,
        &json!({"decision": "allow", "fingerprint": "$(touch /tmp/x)"}),
    );
    assert_eq!(status, 400, "{bad:#}");
    assert_eq!(
        sshd.commands(),
        before,
        "a hostile fingerprint never reaches ssh"
    );

    let (status, stale) = web.post(
        &path,
        &json!({"decision": "allow", "fingerprint": "0000000000000000"}),
    );
    assert_eq!(status, 409, "{stale:#}");
    assert_eq!(stale["keys"], json!([]), "nothing typed: {stale:#}");
    assert_eq!(asks_there(&remote, &asking), ("waiting".into(), fp.clone()));

    let (status, done) = web.post(&path, &json!({"decision": "allow", "fingerprint": fp}));
    assert_eq!(status, 200, "{done:#}");
    assert_eq!(done["keys"], json!(["1"]), "{done:#}");
    wait_until(DEADLINE, "the remote turn past the dialog", || {
        asks_there(&remote, &asking).0 != "waiting"
    });
    let (status, again) = web.post(&path, &json!({"decision": "allow", "fingerprint": fp}));
    assert_eq!(status, 409, "answered once only: {again:#}");

    let inbox = format!("devbox:{r_inbox}");
    wait_until(DEADLINE, "the remote inbox listed", || {
        web.row(&inbox).is_some()
    });
    let (status, sent) = web.post(
        &format!("{}/reply", WebServer::pane_path(&inbox)),
        &json!({"text": "please also run the remote tests"}),
    );
    assert!(status == 200 || status == 202, "{status} {sent:#}");
    wait_until(DEADLINE, "the reply in the remote agent's input", || {
        read(&r_inbox_file).contains("please also run the remote tests")
    });
    let commands = sshd.commands();
    assert!(
        !commands.contains("mix") && !commands.contains("remote tests"),
        "model or typed text on a remote command line: {commands}"
    );
}
