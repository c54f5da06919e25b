//! Routed text reaches only the agent it was meant for, never a shell (docs/design.md#delivery).
//! Every route here carries a command — `touch <marker>` — in its text, as a prompt-injected
//! answer would; each test fails if the marker file ever appears, and checks what the
//! destination received. Destinations are real interactive shells (bash with bracketed paste,
//! dash where every newline executes, zsh) and fake agents started from those shells that
//! exit, are suspended with Ctrl-Z, or are replaced between queueing and delivery. Paths: `route`
//! (plain, `--wait`, `--queue`), the `prefix + R` menu's command, the picker's route,
//! `route-queue --deliver`, the watcher, `relay` (foreground and in the watcher).

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use agentpane::proctree::procfs;
use common::{wait_until, FakeAgent, Run, TmuxServer, Watch, CLAUDE_ANSWER, DEADLINE};

const CODEX_MID_TURN: &str = "codex/derived-prefix/kvsankar-session-01.prefix-L1-7.mid-turn.jsonl";
const CODEX_TURN_ENDS: &str = r#"line {"timestamp":"2026-01-01T00:00:00Z","type":"event_msg","payload":{"type":"task_complete","turn_id":"t1","last_agent_message":"ok"}}"#;
/// How long a command that slipped through would take to create its marker, at most.
const SETTLE: Duration = Duration::from_millis(1500);

/// The shells tested as destinations, and how each is started interactively without any of
/// the user's start-up files.
const SHELLS: [(&str, &str); 3] = [
    ("bash", "bash --norc --noprofile -i"),
    ("dash", "dash -i"),
    ("zsh", "zsh -f -i"),
];

/// The shells present here. Under CI every one must be (`.ci/run` installs them): a missing
/// shell fails there instead of skipping silently.
fn shells() -> Vec<(&'static str, &'static str)> {
    let found: Vec<_> = SHELLS.into_iter().filter(|(name, _)| which(name)).collect();
    if std::env::var_os("CI").is_some() {
        assert_eq!(found.len(), SHELLS.len(), "CI must have bash, dash and zsh");
    }
    assert!(!found.is_empty(), "no shell at all");
    found
}

fn which(program: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// A source pane whose screen is an answer that holds a command: `touch <marker>`.
struct Hostile {
    pane: String,
    marker: PathBuf,
}

impl Hostile {
    fn new(server: &TmuxServer, name: &str) -> Hostile {
        let marker = server.path().join(format!("{name}-ran"));
        let script = server.path().join(format!("{name}.txt"));
        std::fs::write(
            &script,
            format!("Run this:\ntouch {}\necho done\n", marker.display()),
        )
        .unwrap();
        let pane = server.new_window(
            &format!("cat '{}'; exec sleep 600", script.display()),
            &server.work(name),
            &[],
        );
        wait_until(DEADLINE, "the hostile answer on screen", || {
            screen(server, &pane).contains("echo done")
        });
        Hostile { pane, marker }
    }

    /// `route <src> DST --transform full-output EXTRA…`.
    fn route(&self, server: &TmuxServer, dst: &str, extra: &[&str]) -> Run {
        let mut args = vec!["route", &self.pane, dst, "--transform", "full-output"];
        args.extend(extra);
        server.agentpane(&args)
    }

    /// Fails if the command ever ran (waits long enough for a slipped-through one).
    fn assert_never_ran(&self, what: &str) {
        std::thread::sleep(SETTLE);
        assert!(
            !self.marker.exists(),
            "{what}: the routed command ran ({} exists)",
            self.marker.display()
        );
    }
}

/// Waits until a spawned agentpane sleeps on file events (it holds an inotify descriptor,
/// created only once the route or relay was accepted and found its destination busy).
fn wait_until_watching(child: &std::process::Child, what: &str) {
    let fds = format!("/proc/{}/fd", child.id());
    wait_until(DEADLINE, what, || {
        std::fs::read_dir(&fds).is_ok_and(|d| {
            d.flatten().any(|e| {
                std::fs::read_link(e.path()).is_ok_and(|t| t.to_string_lossy().contains("inotify"))
            })
        })
    });
}

/// Waits for a spawned agentpane to exit; kills it and fails after `DEADLINE`, so a check that
/// stopped working fails the test instead of hanging it.
fn finish(mut child: std::process::Child, what: &str) -> (Option<i32>, String) {
    let end = std::time::Instant::now() + DEADLINE;
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > end {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "{what} did not end within {DEADLINE:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn screen(server: &TmuxServer, pane: &str) -> String {
    server
        .try_tmux(&["capture-pane", "-p", "-J", "-t", pane])
        .stdout
        .iter()
        .map(|&b| b as char)
        .collect()
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

fn journal(server: &TmuxServer) -> Vec<serde_json::Value> {
    read(&server.state_dir().join("journal.jsonl"))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// `quit` typed into the fake agent; waits until it exited and the shell's prompt is back.
fn quit(server: &TmuxServer, pane: &str, pid: u32) {
    server.send_line(pane, "quit");
    wait_until(DEADLINE, "the agent to exit", || {
        procfs::stat(pid).is_none()
    });
}

/// A fake agent's environment: no fixture (idle), its inbox file.
fn agent_env(server: &TmuxServer, name: &str) -> (Vec<(String, String)>, PathBuf) {
    let inbox = server.path().join(format!("{name}-inbox.txt"));
    let env = vec![
        ("AGENTPANE_FAKE_AGENT".into(), "none".into()),
        (
            "AGENTPANE_FAKE_INBOX".into(),
            inbox.to_string_lossy().into(),
        ),
    ];
    (env, inbox)
}

/// A busy fake Codex's environment (mid-turn until told `CODEX_TURN_ENDS`), with an inbox.
fn busy_env(server: &TmuxServer, name: &str) -> (Vec<(String, String)>, PathBuf) {
    let (mut env, inbox) = agent_env(server, name);
    env[0].1 = common::fixture(CODEX_MID_TURN).to_string_lossy().into();
    (env, inbox)
}

/// A fake Codex mid-turn (working), started from an interactive `shell`; (pane, pid, inbox).
fn busy_codex_in_shell(server: &TmuxServer, shell: &str, name: &str) -> (String, u32, PathBuf) {
    let (env, inbox) = busy_env(server, name);
    let pane = server.shell_pane(shell);
    server.start_from_shell(&pane, "codex", &env);
    wait_state(server, &pane, "working");
    let pid = server.agent_pid(&pane);
    (pane, pid, inbox)
}

/// `agentpane -L <server> ARGS` started in the background with the server's world.
fn spawn_agentpane(server: &TmuxServer, args: &[&str]) -> std::process::Child {
    server
        .agentpane_command(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn wait_state(server: &TmuxServer, pane: &str, state: &str) {
    wait_until(DEADLINE, &format!("{pane} {state}"), || {
        server.agentpane(&["resolve", pane, "--json"]).json()["state"] == state
    });
}

#[test]
fn a_shell_is_refused_with_its_name_and_nothing_runs() {
    let server = TmuxServer::start();
    let src = Hostile::new(&server, "src");
    for (name, command) in shells() {
        let dst = server.shell_pane(command);
        let run = src.route(&server, &dst, &[]);
        assert_eq!(run.code, 6, "{name}: {run:?}");
        assert!(
            run.stderr.contains(&format!(
                "{dst} runs {name}, not a coding agent: agentpane types only into an agent's input box"
            )),
            "{name}: {run:?}"
        );
        let json = src.route(&server, &dst, &["--json"]);
        assert_eq!(json.code, 6, "{name}: {json:?}");
        let doc = json.json();
        assert_eq!(doc["outcome"], "refused", "{name}");
        assert_eq!(doc["submitted"], false, "{name}");
        // Neither waiting nor queueing makes a shell a destination.
        for extra in [&["--queue"][..], &["--wait", "1"]] {
            let run = src.route(&server, &dst, extra);
            assert_eq!(run.code, 6, "{name} {extra:?}: {run:?}");
        }
        // The `prefix + R` menu runs exactly this command.
        let menu = src.route(&server, &dst, &["--queue", "--notify"]);
        assert_eq!(menu.code, 6, "{name}: {menu:?}");
        src.assert_never_ran(name);
        assert!(
            !screen(&server, &dst).contains("touch"),
            "{name}: nothing typed into the shell:\n{}",
            screen(&server, &dst)
        );
    }
    assert!(
        journal(&server).is_empty(),
        "nothing pasted, nothing queued"
    );
    assert_eq!(server.agentpane(&["route-queue"]).stdout, "");
}

#[test]
fn a_suspended_agent_is_refused_and_its_shell_gets_nothing() {
    let server = TmuxServer::start();
    let src = Hostile::new(&server, "src");
    for (name, command) in shells() {
        let (env, inbox) = agent_env(&server, name);
        let dst = server.shell_pane(command);
        server.start_from_shell(&dst, "claude", &env);
        let pid = server.agent_pid(&dst);
        server.suspend(&dst, pid);
        // `panes` says so, where it said `your-turn` and nothing else.
        let row = server.agentpane(&["resolve", &dst, "--json"]).json();
        assert_eq!(row["reason"], "suspended (Ctrl-Z)", "{name}: {row}");
        let run = src.route(&server, &dst, &["--json"]);
        assert_eq!(run.code, 6, "{name}: {run:?}");
        let doc = run.json();
        assert_eq!(doc["outcome"], "refused", "{name}: {run:?}");
        assert!(
            doc["detail"]
                .as_str()
                .is_some_and(|d| d.contains("suspended (Ctrl-Z)")),
            "{name}: {run:?}"
        );
        let queued = src.route(&server, &dst, &["--queue"]);
        assert_eq!(queued.code, 6, "{name}: {queued:?}");
        src.assert_never_ran(name);
        assert_eq!(read(&inbox), "", "{name}: the agent got nothing either");
        // Back in the foreground, the same agent takes the route.
        server.send_line(&dst, "fg");
        wait_until(DEADLINE, "the agent back in the foreground", || {
            procfs::stat(pid).is_some_and(|s| !s.stopped() && s.in_foreground())
        });
        let run = src.route(&server, &dst, &[]);
        assert_eq!(run.code, 0, "{name}: {run:?}");
        wait_until(DEADLINE, "the routed text in the agent", || {
            read(&inbox).contains("echo done")
        });
        src.assert_never_ran(name);
        quit(&server, &dst, pid);
    }
}

#[test]
fn a_route_waiting_for_an_agent_that_exits_is_refused() {
    let server = TmuxServer::start();
    let src = Hostile::new(&server, "src");
    let (dst, pid, inbox) = busy_codex_in_shell(&server, "dash -i", "busy");
    let waiting = spawn_agentpane(
        &server,
        &[
            "route",
            &src.pane,
            &dst,
            "--transform",
            "full-output",
            "--wait",
            "30",
        ],
    );
    // The route is waiting (it sleeps on file events); the agent exits under it.
    wait_until_watching(&waiting, "the route to wait");
    quit(&server, &dst, pid);
    let (code, stderr) = finish(waiting, "the waiting route");
    assert_eq!(code, Some(6), "{stderr}");
    assert!(stderr.contains("has exited"), "{stderr}");
    src.assert_never_ran("route --wait");
    assert_eq!(read(&inbox), "");
    assert!(!screen(&server, &dst).contains("touch"));
}

/// The watcher's path: a route queued for a busy agent that then exits is held, not
/// delivered into the shell that has the pane now; the person is told, can read the text, and
/// re-issue it for the agent they start next.
#[test]
fn a_queued_route_whose_agent_exits_is_held_by_the_watcher_and_can_be_reissued() {
    let server = TmuxServer::start();
    let src = Hostile::new(&server, "src");
    let (dst, pid, inbox) = busy_codex_in_shell(&server, "dash -i", "busy");
    let queued = src.route(&server, &dst, &["--queue", "--json"]);
    assert_eq!(queued.code, 0, "{queued:?}");
    let id = queued.json()["id"].as_str().unwrap().to_string();
    let watch = Watch::start(&server, &[]);
    quit(&server, &dst, pid);
    wait_until(DEADLINE, "the queued route held", || {
        journal(&server)
            .iter()
            .any(|e| e["id"] == id.as_str() && e["outcome"] == "undeliverable")
    });
    src.assert_never_ran("the watcher");
    assert_eq!(read(&inbox), "");
    assert!(!screen(&server, &dst).contains("touch"));
    assert!(
        !journal(&server).iter().any(|e| e["outcome"] == "pasting"),
        "never pasted"
    );
    // Listed with its reason, its text retrievable.
    let list = server.agentpane(&["route-queue"]);
    assert_eq!(list.stdout.lines().count(), 1, "{list:?}");
    assert!(list.stdout.starts_with(&format!("held {id} ")), "{list:?}");
    assert!(list.stdout.contains("undeliverable: the codex"), "{list:?}");
    assert!(list.stdout.contains("has exited"), "{list:?}");
    let json = server.agentpane(&["route-queue", "--json"]);
    assert_eq!(json.json()["status"], "held");
    let shown = server.agentpane(&["route-queue", "--show", &id]);
    assert_eq!(shown.code, 0, "{shown:?}");
    assert!(shown.stdout.contains("touch "), "{shown:?}");
    // Told once, not on every scan.
    std::thread::sleep(Duration::from_millis(1500));
    let held: Vec<_> = journal(&server)
        .into_iter()
        .filter(|e| e["id"] == id.as_str() && e["outcome"] == "undeliverable")
        .collect();
    assert_eq!(held.len(), 1, "{held:?}");
    assert_eq!(watch.stop(), 0);

    // The person starts another agent there and decides to send it again.
    let (env2, inbox2) = agent_env(&server, "second");
    server.start_from_shell(&dst, "claude", &env2);
    let again = server.agentpane(&["route-queue", "--requeue", &id]);
    assert_eq!(again.code, 0, "{again:?}");
    assert!(again.stdout.contains("delivered"), "{again:?}");
    wait_until(DEADLINE, "the re-issued text in the new agent", || {
        read(&inbox2).contains("echo done")
    });
    src.assert_never_ran("the re-issued route");
    assert_eq!(server.agentpane(&["route-queue"]).stdout, "");
}

/// `route-queue --deliver`: an agent suspended, or replaced by a new session of the same
/// kind, never receives what was queued for the one before.
#[test]
fn a_queued_route_is_never_delivered_to_a_suspended_or_new_agent() {
    let server = TmuxServer::start();
    let src = Hostile::new(&server, "src");
    for (name, command) in shells() {
        // Suspended while the route waits.
        let (dst, pid, inbox) = busy_codex_in_shell(&server, command, name);
        let queued = src.route(&server, &dst, &["--queue", "--json"]);
        let id = queued.json()["id"].as_str().unwrap().to_string();
        server.suspend(&dst, pid);
        let run = server.agentpane(&["route-queue", "--deliver", "--json"]);
        assert_eq!(run.json()["outcome"], "undeliverable", "{name}: {run:?}");
        assert!(
            run.json()["detail"]
                .as_str()
                .unwrap()
                .contains("suspended (Ctrl-Z)"),
            "{name}: {run:?}"
        );
        src.assert_never_ran(name);
        assert!(!screen(&server, &dst).contains("touch"), "{name}");
        // Held, so a later pass (the agent back, its turn over) sends nothing.
        server.send_line(&dst, "fg");
        wait_until(DEADLINE, "the agent back", || {
            procfs::stat(pid).is_some_and(|s| s.in_foreground())
        });
        server.send_line(&dst, CODEX_TURN_ENDS);
        wait_state(&server, &dst, "your-turn");
        let later = server.agentpane(&["route-queue", "--deliver", "--json"]);
        assert_eq!(later.stdout, "", "{name}: {later:?}");
        assert_eq!(read(&inbox), "", "{name}");
        assert!(server
            .agentpane(&["route-queue"])
            .stdout
            .contains(&format!("held {id} ")));
        let dropped = server.agentpane(&["route-queue", "--drop", &id]);
        assert_eq!(dropped.code, 0, "{name}: {dropped:?}");
        assert_eq!(server.agentpane(&["route-queue"]).stdout, "", "{name}");
        quit(&server, &dst, pid);
    }
}

#[test]
fn a_route_for_a_replaced_agent_goes_nowhere() {
    let server = TmuxServer::start();
    let src = Hostile::new(&server, "src");
    let (dst, pid, inbox) = busy_codex_in_shell(&server, "bash --norc --noprofile -i", "first");
    let queued = src.route(&server, &dst, &["--queue", "--json"]);
    assert_eq!(queued.code, 0, "{queued:?}");
    quit(&server, &dst, pid);
    // A new session of an agent (idle, so free) in the same pane, from the same shell.
    let (env2, inbox2) = agent_env(&server, "second");
    server.start_from_shell(&dst, "codex", &env2);
    assert_ne!(server.agent_pid(&dst), pid);
    let run = server.agentpane(&["route-queue", "--deliver", "--json"]);
    assert_eq!(run.json()["outcome"], "undeliverable", "{run:?}");
    src.assert_never_ran("a replaced agent");
    assert_eq!(read(&inbox), "");
    assert_eq!(read(&inbox2), "", "the new session never asked for it");
}

/// A relay stops and calls the human when a side stops being the agent it started with; a
/// relay with a shell on either side never starts.
#[test]
fn a_relay_escalates_when_a_side_stops_being_its_agent() {
    let server = TmuxServer::start();
    let (env, _) = agent_env(&server, "a");
    let a = server.shell_pane("dash -i");
    server.start_from_shell(&a, "claude", &env);
    let (b, _) = server.inbox_agent("b");
    let shell = server.shell_pane("bash --norc --noprofile -i");
    let refused = server.agentpane(&["relay", &a, &shell, "--foreground"]);
    assert_eq!(refused.code, 6, "{refused:?}");
    assert!(refused.stderr.contains("not a coding agent"), "{refused:?}");

    let relay = spawn_agentpane(&server, &["relay", &a, &b, "--foreground"]);
    wait_until_watching(&relay, "the relay to run");
    let pid = server.agent_pid(&a);
    server.suspend(&a, pid);
    let (code, stderr) = finish(relay, "the relay");
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("ESCALATED"), "{stderr}");
    assert!(stderr.contains("suspended (Ctrl-Z)"), "{stderr}");
    assert!(journal(&server).iter().any(|e| e["outcome"] == "escalated"));
}

#[test]
fn a_watcher_relay_escalates_when_a_side_exits() {
    let server = TmuxServer::start();
    let (env, _) = agent_env(&server, "a");
    let a = server.shell_pane("dash -i");
    server.start_from_shell(&a, "claude", &env);
    let (b, _) = server.inbox_agent("b");
    let watch = Watch::start(&server, &[]);
    let started = server.agentpane(&["relay", &a, &b]);
    assert_eq!(started.code, 0, "{started:?}");
    let pid = server.agent_pid(&a);
    quit(&server, &a, pid);
    wait_until(DEADLINE, "the relay escalated and removed", || {
        journal(&server).iter().any(|e| e["outcome"] == "escalated")
            && std::fs::read_dir(server.state_dir().join("relays"))
                .map(|d| d.count() == 0)
                .unwrap_or(false)
    });
    assert_eq!(watch.stop(), 0);
}

/// The last answer of `CLAUDE_ANSWER`, which a fresh agent replaying it gives first.
const FIRST_ANSWER: &str = "I've created a basic CLAUDE.md file for this empty repository.";

/// A fresh Claude Code whose first step is its first turn: `CLAUDE_ANSWER`'s question and
/// final answer alone (no answer in between that a scan mid-write could take for the end).
fn fresh_claude(server: &TmuxServer, name: &str) -> FakeAgent {
    let text = read(&common::fixture(CLAUDE_ANSWER));
    let lines: Vec<&str> = text.lines().collect();
    let turn = server.path().join(format!("{name}-first-turn.jsonl"));
    let (first, last) = (lines[0], lines[lines.len() - 1]);
    std::fs::write(&turn, format!("{first}\n{last}\n")).unwrap();
    FakeAgent::claude()
        .in_dir(name)
        .env("AGENTPANE_FAKE_AGENT", turn.to_str().unwrap())
        .fresh()
}

/// Two Claude Codes asked nothing yet (a session record, no transcript), a relay between
/// them, then the first is asked: its first turn writes `<session id>.jsonl`, the session the
/// relay recorded, so its answer goes to the other side instead of the relay stopping.
#[test]
fn a_relay_between_fresh_agents_relays_the_first_answer() {
    let server = TmuxServer::start();
    let a = server.spawn_fresh(&fresh_claude(&server, "a"));
    let inbox = server.path().join("b-inbox.txt");
    let b = server.spawn_fresh(
        &FakeAgent::claude()
            .in_dir("b")
            .fresh()
            .env("AGENTPANE_FAKE_INBOX", inbox.to_str().unwrap()),
    );
    let watch = Watch::start(&server, &[]);
    let started = server.agentpane(&["relay", &a, &b, "--rounds", "2"]);
    assert_eq!(started.code, 0, "{started:?}");
    // A's first turn (the human's question, its answer) appears in a new transcript.
    server.send_line(&a, "all");
    wait_until(DEADLINE, "A's first answer relayed to B", || {
        read(&inbox).contains(FIRST_ANSWER)
            || journal(&server).iter().any(|e| e["outcome"] == "escalated")
    });
    let journal = journal(&server);
    assert!(
        !journal.iter().any(|e| e["outcome"] == "escalated"),
        "{journal:?}"
    );
    assert!(read(&inbox).contains(FIRST_ANSWER));
    assert_eq!(watch.stop(), 0);
}

/// A route queued for an agent asked nothing yet records its session by id; the agent's
/// first turn writes that session's transcript, and the route is delivered to it.
#[test]
fn a_route_queued_before_the_first_turn_is_delivered_after_it() {
    let server = TmuxServer::start();
    let inbox = server.path().join("b-inbox.txt");
    let b = server.spawn_fresh(
        &fresh_claude(&server, "b").env("AGENTPANE_FAKE_INBOX", inbox.to_str().unwrap()),
    );
    let session = server.agentpane(&["resolve", &b, "--json"]).json()["session_id"]
        .as_str()
        .expect("a session id")
        .to_string();
    let store = agentpane::route::Store::open(&server.state_dir()).unwrap();
    let msg = agentpane::route::Queued {
        id: agentpane::route::queue::new_id(),
        created: chrono::Utc::now(),
        server: server.tmux(&["display-message", "-p", "#{socket_path}"]),
        src: "%0".into(),
        dst: b.clone(),
        text: "NOTE-FOR-B".into(),
        submit: true,
        recipient: Some(agentpane::route::Recipient {
            session: Some(session),
            ..server.recipient(&b)
        }),
    };
    store.enqueue(&msg).unwrap();
    server.send_line(&b, "all");
    wait_state(&server, &b, "your-turn");
    let run = server.agentpane(&["route-queue", "--deliver", "--json"]);
    assert_eq!(run.json()["outcome"], "delivered", "{run:?}");
    wait_until(DEADLINE, "the note in B", || {
        read(&inbox).contains("NOTE-FOR-B")
    });
}

#[test]
fn a_backgrounded_agent_gets_nothing() {
    // `bg` after Ctrl-Z: the same agent, resumed, but the shell has the terminal.
    let server = TmuxServer::start();
    let src = Hostile::new(&server, "src");
    let (env, inbox) = agent_env(&server, "bg");
    let dst = server.shell_pane("bash --norc --noprofile -i");
    server.start_from_shell(&dst, "claude", &env);
    let pid = server.agent_pid(&dst);
    server.suspend(&dst, pid);
    // `bg` resumes it in the background: running, but the shell has the terminal. Its first
    // read of the terminal stops it again (SIGTTIN) — either way it is not there to receive.
    server.send_line(&dst, "bg");
    std::thread::sleep(Duration::from_millis(300));
    let run = src.route(&server, &dst, &["--json"]);
    assert_ne!(run.code, 0, "{run:?}");
    assert_eq!(run.json()["outcome"], "refused", "{run:?}");
    src.assert_never_ran("a backgrounded agent");
    assert_eq!(read(&inbox), "");
    assert!(!screen(&server, &dst).contains("touch"));
}

#[test]
fn a_prompt_the_agent_put_back_in_its_box_is_cleared_first_and_only_in_the_agent() {
    let server = TmuxServer::start();
    let src = Hostile::new(&server, "src");
    let (mut env, inbox) = agent_env(&server, "qwen");
    // Qwen Code 0.24.4 after Escape: the cancelled prompt is back in its input box.
    let put_back = common::real_client_fixture("qwen-0.24.4/states/06-interrupted/screen.txt");
    env.push((
        "AGENTPANE_FAKE_SCREEN".into(),
        put_back.to_string_lossy().into(),
    ));
    let dst = server.shell_pane("bash --norc --noprofile -i");
    server.start_from_shell(&dst, "qwen", &env);
    let pid = server.agent_pid(&dst);
    // The prompt is in the agent's input line too (typed, never submitted).
    server.tmux(&["send-keys", "-t", &dst, "-l", "SLOW story"]);
    wait_until(DEADLINE, "the held prompt typed", || {
        screen(&server, &dst)
            .lines()
            .any(|l| l.trim() == "SLOW story")
    });
    // Suspended, the agent gets nothing, and neither does its shell: no clearing key either.
    server.suspend(&dst, pid);
    server.tmux(&["send-keys", "-t", &dst, "-l", "echo kept"]);
    let run = src.route(&server, &dst, &[]);
    assert_eq!(run.code, 6, "{run:?}");
    std::thread::sleep(SETTLE);
    assert!(
        screen(&server, &dst).contains("echo kept"),
        "the shell's line untouched:\n{}",
        screen(&server, &dst)
    );
    server.tmux(&["send-keys", "-t", &dst, "C-u"]);
    server.send_line(&dst, "fg");
    wait_until(DEADLINE, "the agent back in the foreground", || {
        procfs::stat(pid).is_some_and(|s| !s.stopped() && s.in_foreground())
    });
    server.tmux(&["send-keys", "-t", &dst, "-l", "SLOW story"]);
    // In the foreground, the box is cleared, then the route pasted and submitted alone.
    let run = src.route(&server, &dst, &[]);
    assert_eq!(run.code, 0, "{run:?}");
    wait_until(DEADLINE, "the routed text in the agent", || {
        read(&inbox).contains("echo done")
    });
    let got = read(&inbox);
    assert!(got.starts_with("Run this:"), "nothing before it: {got:?}");
    assert!(!got.contains("SLOW story"), "{got:?}");
    src.assert_never_ran("qwen");
    quit(&server, &dst, pid);
}
