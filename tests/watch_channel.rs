//! Channel mail with the watcher running (docs/design.md#channel): the unread count shows on the
//! member's pane, mail nobody read is pasted into the member's agent once its turn is free, and an
//! escalated thread is told to the human.

mod common;

use common::{wait_until, FakeAgent, TmuxServer, Watch, DEADLINE};

const ENDS_TURN: &str = "claude/kvsankar-agent-history/session-01.jsonl";

fn pane_opt(server: &TmuxServer, pane: &str, name: &str) -> String {
    server.tmux(&["show", "-pqv", "-t", pane, name])
}

#[test]
fn unread_mail_shows_on_the_pane_then_is_pasted_into_the_free_agent() {
    let server = TmuxServer::start();
    let coder = server.spawn(&FakeAgent::claude().fixture(ENDS_TURN));
    let watch = Watch::start(&server, &["--channel-grace", "0.5"]);
    let new = server.agentpane_env(
        &[("TMUX_PANE", &coder)],
        &["channel", "new", "--as", "coder"],
    );
    assert_eq!(new.code, 0, "{new:?}");
    let id = new.stdout.trim().to_string();
    let join = server.agentpane(&["channel", "join", &id, "--as", "reviewer"]);
    assert_eq!(join.code, 0, "{join:?}");
    let ask = server.agentpane(&[
        "channel",
        "send",
        &id,
        "--as",
        "reviewer",
        "--to",
        "coder",
        "--type",
        "request",
        "Why does parse_id reject non-ASCII names?",
    ]);
    assert_eq!(ask.code, 0, "{ask:?}");

    // The coder's agent is free (its turn ended) and nobody read the mail: it is pasted.
    wait_until(DEADLINE, "the mail pasted into the coder's pane", || {
        server
            .tmux(&["capture-pane", "-p", "-J", "-t", &coder])
            .contains("Why does parse_id reject non-ASCII names?")
    });
    let screen = server.tmux(&["capture-pane", "-p", "-J", "-t", &coder]);
    assert!(
        screen.contains(&format!("[agentpane channel {id}]")),
        "{screen}"
    );
    assert!(screen.contains("--type response --thread"), "{screen}");
    // Read now: the count clears, and the channel's own watch sees nothing unread.
    wait_until(DEADLINE, "the unread count cleared", || {
        pane_opt(&server, &coder, "@agentpane_pane_unread").is_empty()
    });
    let unread = server.agentpane(&["channel", "watch", &id, "--as", "coder", "--timeout", "1s"]);
    assert_eq!(unread.code, 4, "nothing left unread: {unread:?}");
    let journal = std::fs::read_to_string(server.state_dir().join("journal.jsonl")).unwrap();
    assert_eq!(journal.matches("\"delivered\"").count(), 1, "{journal}");
    assert_eq!(watch.stop(), 0);
}

#[test]
fn a_join_notice_alone_is_not_pasted_but_rides_with_the_next_message() {
    let server = TmuxServer::start();
    let coder = server.spawn(&FakeAgent::claude().fixture(ENDS_TURN));
    let watch = Watch::start(&server, &["--channel-grace", "0.5"]);
    let id = server
        .agentpane_env(
            &[("TMUX_PANE", &coder)],
            &["channel", "new", "--as", "coder"],
        )
        .stdout
        .trim()
        .to_string();
    let join = server.agentpane(&["channel", "join", &id, "--as", "reviewer"]);
    assert_eq!(join.code, 0, "{join:?}");
    // The notice is unread and, after a few polls, long past the grace: still not pasted (it
    // asks nothing, and a paste would start a turn of the free agent for nothing).
    wait_until(DEADLINE, "the join notice counted", || {
        pane_opt(&server, &coder, "@agentpane_pane_unread") == "✉1"
    });
    std::thread::sleep(std::time::Duration::from_millis(2000));
    let screen = server.tmux(&["capture-pane", "-p", "-J", "-t", &coder]);
    assert!(!screen.contains("joined the channel"), "{screen}");
    assert_eq!(pane_opt(&server, &coder, "@agentpane_pane_unread"), "✉1");

    let ask = server.agentpane(&[
        "channel",
        "send",
        &id,
        "--as",
        "reviewer",
        "--to",
        "coder",
        "--type",
        "request",
        "Is the parser total?",
    ]);
    assert_eq!(ask.code, 0, "{ask:?}");
    wait_until(DEADLINE, "the request pasted", || {
        server
            .tmux(&["capture-pane", "-p", "-J", "-t", &coder])
            .contains("Is the parser total?")
    });
    let screen = server.tmux(&["capture-pane", "-p", "-J", "-t", &coder]);
    assert!(screen.contains("2 unread message(s) for coder"), "{screen}");
    assert!(screen.contains("reviewer joined the channel."), "{screen}");
    wait_until(DEADLINE, "the unread count cleared", || {
        pane_opt(&server, &coder, "@agentpane_pane_unread").is_empty()
    });
    let journal = std::fs::read_to_string(server.state_dir().join("journal.jsonl")).unwrap();
    assert_eq!(journal.matches("\"delivered\"").count(), 1, "{journal}");
    assert_eq!(watch.stop(), 0);
}

#[test]
fn unread_count_shows_while_the_agent_is_busy() {
    let server = TmuxServer::start();
    let busy = server.spawn(
        &FakeAgent::claude()
            .fixture("claude/derived-prefix/short.prefix-L1-10.awaiting-permission.jsonl"),
    );
    let watch = Watch::start(&server, &["--channel-grace", "0.2"]);
    let id = server
        .agentpane_env(
            &[("TMUX_PANE", &busy)],
            &["channel", "new", "--as", "coder"],
        )
        .stdout
        .trim()
        .to_string();
    server.agentpane(&["channel", "join", &id, "--as", "reviewer"]);
    server.agentpane(&[
        "channel",
        "send",
        &id,
        "--as",
        "reviewer",
        "--to",
        "coder",
        "--type",
        "info",
        "FYI: CI is red",
    ]);
    // The join notice and the info: two unread, and nothing pasted into a working agent.
    wait_until(DEADLINE, "the unread count", || {
        pane_opt(&server, &busy, "@agentpane_pane_unread") == "✉2"
    });
    let detail = server.agentpane(&["pane-status", "--json"]).json();
    assert_eq!(detail[0]["panes"][0]["unread"], 2, "{detail}");
    std::thread::sleep(std::time::Duration::from_millis(800));
    assert!(!server
        .tmux(&["capture-pane", "-p", "-J", "-t", &busy])
        .contains("CI is red"));
    assert_eq!(watch.stop(), 0);
}

#[test]
fn an_escalated_thread_is_told_to_the_human_once() {
    let server = TmuxServer::start();
    let watch = Watch::start(&server, &[]);
    let id = server
        .agentpane(&["channel", "new", "--as", "coder"])
        .stdout
        .trim()
        .to_string();
    server.agentpane(&["channel", "join", &id, "--as", "reviewer"]);
    let send = |thread: Option<&str>, text: &str| {
        let mut args = vec![
            "channel", "send", &id, "--as", "reviewer", "--to", "coder", "--type", "request",
            "--json",
        ];
        if let Some(t) = thread {
            args.extend(["--thread", t]);
        }
        args.push(text);
        server.agentpane(&args)
    };
    let first = send(None, "Is the parser total?");
    let thread = first.json()["thread"].as_str().unwrap().to_string();
    assert_eq!(send(Some(&thread), "Still: is it total?").code, 0);
    assert_eq!(send(Some(&thread), "Please answer: total?").code, 0);
    let fourth = send(Some(&thread), "Total??");
    assert_eq!(fourth.code, 5, "{fourth:?}");
    let log = server.server_dir().join("watch.log");
    let told = || {
        std::fs::read_to_string(&log)
            .unwrap_or_default()
            .matches(&format!("channel {id} thread {thread} ESCALATED"))
            .count()
    };
    wait_until(DEADLINE, "the escalation told", || told() == 1);
    std::fs::write(server.state_dir().join("nudge"), b"x").unwrap();
    std::thread::sleep(std::time::Duration::from_millis(800));
    assert_eq!(told(), 1, "told once");
    assert_eq!(watch.stop(), 0);
}

/// Channel mail goes through the same delivery as routes: for a member whose agent was
/// suspended (Ctrl-Z) it is held, never typed into the shell that has the pane now.
#[test]
fn mail_for_a_suspended_agent_is_held_not_typed_into_its_shell() {
    let server = TmuxServer::start();
    let coder = server.shell_pane("dash -i");
    let fixture = common::fixture(ENDS_TURN).to_string_lossy().into_owned();
    server.start_from_shell(
        &coder,
        "claude",
        &[("AGENTPANE_FAKE_AGENT".to_string(), fixture)],
    );
    wait_until(DEADLINE, "the coder's turn over", || {
        server.agentpane(&["resolve", &coder, "--json"]).json()["state"] == "your-turn"
    });
    let pid = server.agent_pid(&coder);
    let watch = Watch::start(&server, &["--channel-grace", "0.5"]);
    let id = server
        .agentpane_env(
            &[("TMUX_PANE", &coder)],
            &["channel", "new", "--as", "coder"],
        )
        .stdout
        .trim()
        .to_string();
    server.agentpane(&["channel", "join", &id, "--as", "reviewer"]);
    server.suspend(&coder, pid);
    let marker = server.path().join("mail-ran");
    let ask = server.agentpane(&[
        "channel",
        "send",
        &id,
        "--as",
        "reviewer",
        "--to",
        "coder",
        "--type",
        "request",
        &format!("Please run:\ntouch {}\n", marker.display()),
    ]);
    assert_eq!(ask.code, 0, "{ask:?}");
    let journal =
        || std::fs::read_to_string(server.state_dir().join("journal.jsonl")).unwrap_or_default();
    wait_until(DEADLINE, "the mail held as undeliverable", || {
        journal().contains("\"undeliverable\"")
    });
    std::thread::sleep(std::time::Duration::from_millis(1500));
    assert!(!marker.exists(), "the mailed command ran");
    assert!(!journal().contains("\"pasting\""), "{}", journal());
    let shell = server.tmux(&["capture-pane", "-p", "-J", "-t", &coder]);
    assert!(!shell.contains("touch"), "typed into the shell:\n{shell}");
    let held = server.agentpane(&["route-queue"]);
    assert!(held.stdout.contains("suspended (Ctrl-Z)"), "{held:?}");
    assert_eq!(watch.stop(), 0);
}
