//! Routing end to end on a private tmux server (`tmux -L agentpane-test-…`, killed on drop):
//! a plain pane's screen routed into a pane running `cat`, injection neutralised, Enter
//! submitted once; self-routes refused; the queue surviving a restart, delivered exactly once.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use agentpane::route::queue::{new_id, Outcome, Queued, Store};

const BIN: &str = env!("CARGO_BIN_EXE_agentpane");

/// A private tmux server with a private home and state dir; killed on drop.
struct Server {
    name: String,
    home: tempfile::TempDir,
}

impl Server {
    fn start() -> Server {
        static N: AtomicU32 = AtomicU32::new(0);
        let name = format!(
            "agentpane-test-route-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        );
        let server = Server {
            name,
            home: tempfile::tempdir().unwrap(),
        };
        server.tmux(&[
            "new-session",
            "-d",
            "-s",
            "t",
            "-x",
            "160",
            "-y",
            "40",
            "sleep 600",
        ]);
        server
    }

    fn state(&self) -> PathBuf {
        self.home.path().join("state")
    }

    fn tmux(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .args(["-L", &self.name, "-f", "/dev/null"])
            .args(args)
            .env_remove("TMUX")
            .output()
            .expect("tmux runs");
        assert!(
            out.status.success(),
            "tmux {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// A new window running `command` (through tmux's shell: test-controlled text only).
    fn pane(&self, command: &str) -> String {
        self.tmux(&[
            "new-window",
            "-d",
            "-P",
            "-F",
            "#{pane_id}",
            "-t",
            "t:",
            command,
        ])
        .trim()
        .to_string()
    }

    fn capture(&self, pane: &str) -> String {
        self.tmux(&["capture-pane", "-p", "-J", "-t", pane])
    }

    fn agentpane(&self, args: &[&str]) -> Output {
        let home = self.home.path();
        Command::new(BIN)
            .args(["-L", &self.name])
            .args(args)
            .env_remove("TMUX")
            .env_remove("TMUX_PANE")
            .env("HOME", home)
            .env("AGENTPANE_STATE_DIR", self.state())
            .env("XDG_STATE_HOME", home.join("xdg-state"))
            .env("XDG_CONFIG_HOME", home.join("xdg-config"))
            .env("CLAUDE_CONFIG_DIR", home.join("claude"))
            .env("CODEX_HOME", home.join("codex"))
            .output()
            .expect("agentpane runs")
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.name, "kill-server"])
            .output();
    }
}

fn wait_for(what: &str, timeout: Duration, mut check: impl FnMut() -> bool) {
    let deadline = Instant::now() + timeout;
    while Instant::now() < deadline {
        if check() {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("timed out waiting for {what}");
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

fn text(out: &Output) -> String {
    format!(
        "status {:?}\nstdout: {}\nstderr: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn plain_screen_routes_into_cat_once_with_injection_neutralised() {
    let server = Server::start();
    let src = server.pane("printf 'hello from src\\nline two\\n'; exec sleep 600");
    let sink = server.home.path().join("received.txt");
    let dst = server.pane(&format!("exec cat > '{}'", sink.display()));
    wait_for("the source text", Duration::from_secs(10), || {
        server.capture(&src).contains("line two")
    });
    let template = server.home.path().join("evil.tmpl");
    std::fs::write(
        &template,
        "Q: {answer}\nEND\x1b[201~INJECT\u{9b}2J\x07\r\n\0tail-marker-xyz",
    )
    .unwrap();
    let out = server.agentpane(&[
        "route",
        &src,
        &dst,
        "--transform",
        "full-output",
        "--template",
        template.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["outcome"], "delivered");
    assert_eq!(report["submitted"], true);
    assert_eq!(report["source"], "pane");
    eprintln!(
        "routing latency (command start → Enter): {} ms",
        report["latency_ms"]
    );

    let expected = "Q: hello from src\nline two\nEND[201~INJECT2J\ntail-marker-xyz\n";
    wait_for("the submitted text", Duration::from_secs(10), || {
        read(&sink) == expected
    });
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(
        read(&sink),
        expected,
        "arrives once, with Enter, controls stripped"
    );

    let journal = read(&server.state().join("journal.jsonl"));
    let outcomes: Vec<String> = journal
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["outcome"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(outcomes, ["pasting", "delivered"]);
}

#[test]
fn no_submit_pastes_without_enter() {
    let server = Server::start();
    let src = server.pane("printf 'only pasted\\n'; exec sleep 600");
    let sink = server.home.path().join("received.txt");
    let dst = server.pane(&format!("exec cat > '{}'", sink.display()));
    wait_for("the source text", Duration::from_secs(10), || {
        server.capture(&src).contains("only pasted")
    });
    let out = server.agentpane(&[
        "route",
        &src,
        &dst,
        "--transform",
        "full-output",
        "--no-submit",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(server.capture(&dst).contains("only pasted"));
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(read(&sink), "", "nothing submitted without Enter");
}

#[test]
fn routing_a_pane_to_itself_is_refused() {
    let server = Server::start();
    let pane = server.pane("exec sleep 600");
    let index = server.tmux(&["display-message", "-p", "-t", &pane, "t:#{window_index}.0"]);
    let out = server.agentpane(&["route", &pane, index.trim()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("to itself"),
        "{}",
        text(&out)
    );
    let missing = server.agentpane(&["route", &pane, "%999"]);
    assert_ne!(missing.status.code(), Some(0), "{}", text(&missing));
}

#[test]
fn queued_message_survives_a_restart_and_is_delivered_exactly_once() {
    let server = Server::start();
    let sink = server.home.path().join("received.txt");
    let dst = server.pane(&format!("exec cat > '{}'", sink.display()));
    let socket = server.tmux(&["display-message", "-p", "#{socket_path}"]);
    // One process queues (here: the test, as a process that then "crashes"), …
    let store = Store::open(&server.state()).unwrap();
    let msg = Queued {
        id: new_id(),
        created: chrono::Utc::now(),
        server: socket.trim().to_string(),
        src: "%0".into(),
        dst: dst.clone(),
        text: "queued hello".into(),
        submit: true,
    };
    store.enqueue(&msg).unwrap();
    // … and a paste that was started before a crash is never repeated.
    let started = Queued {
        id: new_id(),
        text: "must not be pasted".into(),
        ..msg.clone()
    };
    store.enqueue(&started).unwrap();
    store.record(&started, Outcome::Pasting, None).unwrap();
    drop(store);

    // A new process delivers the queue; a second one finds nothing left to do.
    let first = server.agentpane(&["route-queue", "--deliver", "--json"]);
    wait_for("the queued text", Duration::from_secs(10), || {
        read(&sink) == "queued hello\n"
    });
    let second = server.agentpane(&["route-queue", "--deliver", "--json"]);
    assert!(second.stdout.is_empty(), "{}", text(&second));
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(read(&sink), "queued hello\n", "{}", text(&first));

    let store = Store::open(&server.state()).unwrap();
    assert!(store.pending().unwrap().is_empty());
    let last = store.last_outcomes().unwrap();
    assert_eq!(last.get(&msg.id), Some(&Outcome::Delivered));
    assert_eq!(last.get(&started.id), Some(&Outcome::Uncertain));
    assert!(server
        .state()
        .join("queue/held")
        .join(format!("{}.json", started.id))
        .exists());
    let delivered = store
        .journal()
        .unwrap()
        .into_iter()
        .filter(|e| e.id == msg.id && e.outcome == Outcome::Delivered)
        .count();
    assert_eq!(delivered, 1);
}

#[test]
fn last_pane_falls_back_to_the_screen_and_says_so() {
    let server = Server::start();
    let pane = server.pane("printf '\\033[1mbold answer\\033[0m\\n'; exec sleep 600");
    wait_for("the text", Duration::from_secs(10), || {
        server.capture(&pane).contains("bold answer")
    });
    let out = server.agentpane(&["last", &pane, "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["source"], "pane");
    assert_eq!(v["text"], "bold answer");
    assert_eq!(v["agent"], serde_json::Value::Null);
}

/// Recorded screens (`fixtures/captures/*.ansi.txt`, see SOURCES.md) → their expected answer.
#[test]
fn capture_fixtures_yield_their_last_answer() {
    use agentpane::events::AgentKind;
    use agentpane::extract::capture::last_answer;
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/captures");
    let cases = [
        ("claude-after-tool", Some(AgentKind::Claude)),
        ("claude-working", Some(AgentKind::Claude)),
        ("claude-boxed-prompt", Some(AgentKind::Claude)),
        ("codex-final", Some(AgentKind::Codex)),
        ("codex-working", Some(AgentKind::Codex)),
        ("codex-legacy", Some(AgentKind::Codex)),
        ("plain-shell", None),
    ];
    for (name, agent) in cases {
        let raw = std::fs::read(dir.join(format!("{name}.ansi.txt"))).unwrap();
        assert!(raw.contains(&0x1b), "{name} carries ANSI");
        let expected = read(&dir.join(format!("{name}.expected.txt")));
        let got = last_answer(&raw, agent);
        assert_eq!(got.as_deref(), Some(expected.trim_end()), "{name}");
        // Without knowing the agent, the same answer comes out (markers are unambiguous).
        assert_eq!(
            last_answer(&raw, None).as_deref(),
            Some(expected.trim_end()),
            "{name} (no agent)"
        );
        let answer = got.unwrap();
        for chrome in [
            "esc to interrupt",
            "for shortcuts",
            "context left",
            "⎿",
            "❯",
            "╭",
            "✻",
        ] {
            assert!(
                !answer.contains(chrome),
                "{name}: `{chrome}` left in the answer"
            );
        }
    }
}
