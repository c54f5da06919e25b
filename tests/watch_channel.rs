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

/// Runs `agentpane channel send ID --as FROM --to TO --type KIND TEXT` on `server`.
fn send(server: &TmuxServer, id: &str, from: &str, to: &str, kind: &str, text: &str) {
    let run = server.agentpane(&[
        "channel", "send", id, "--as", from, "--to", to, "--type", kind, text,
    ]);
    assert_eq!(run.code, 0, "{run:?}");
}

#[test]
fn mail_for_one_servers_pane_never_reaches_the_same_pane_id_on_another_server() {
    let a = TmuxServer::start();
    let state = a.state_dir().to_string_lossy().into_owned();
    let b = TmuxServer::start_with(&[("AGENTPANE_STATE_DIR", &state), ("XDG_STATE_HOME", &state)]);
    let coder_a = a.spawn(&FakeAgent::claude().fixture(ENDS_TURN));
    let coder_b = b.spawn(&FakeAgent::claude().fixture(ENDS_TURN));
    assert_eq!(coder_a, coder_b, "the same pane id on both servers");
    let shell_b = b.tmux(&["display-message", "-p", "-t", "main:0", "#{pane_id}"]);
    // `coder` joins from a's pane, `bystander` from b's shell pane, each with the `$TMUX`
    // that tmux gives a pane.
    let tmux_env = |s: &TmuxServer| {
        let socket = s.tmux(&["display-message", "-p", "#{socket_path}"]);
        format!("{socket},1,0")
    };
    let (tmux_a, tmux_b) = (tmux_env(&a), tmux_env(&b));
    let new = a.agentpane_env(
        &[("TMUX_PANE", &coder_a), ("TMUX", &tmux_a)],
        &["channel", "new", "--as", "coder"],
    );
    assert_eq!(new.code, 0, "{new:?}");
    let id = new.stdout.trim().to_string();
    let join = b.agentpane_env(
        &[("TMUX_PANE", &shell_b), ("TMUX", &tmux_b)],
        &["channel", "join", &id, "--as", "bystander"],
    );
    assert_eq!(join.code, 0, "{join:?}");
    let join = a.agentpane(&["channel", "join", &id, "--as", "reviewer"]);
    assert_eq!(join.code, 0, "{join:?}");

    // Only b's watcher runs while the request waits; b's agent in the same pane id is free.
    let watch_b = Watch::start(&b, &["--channel-grace", "0"]);
    wait_until(DEADLINE, "b's agent free", || {
        b.agentpane(&["status"]).stdout.contains("●1")
    });
    send(
        &a,
        &id,
        "reviewer",
        "coder",
        "request",
        "Which server are you on?",
    );
    // A note for the bystander shows on b in a step of b's watcher that read the request too;
    // once a second note shows, that step is over, pastes included.
    send(&a, &id, "reviewer", "bystander", "info", "first note");
    wait_until(DEADLINE, "b counting the first note", || {
        pane_opt(&b, &shell_b, "@agentpane_pane_unread") == "✉2"
    });
    send(&a, &id, "reviewer", "bystander", "info", "second note");
    wait_until(DEADLINE, "b counting the second note", || {
        pane_opt(&b, &shell_b, "@agentpane_pane_unread") == "✉3"
    });
    let screen_b = || b.tmux(&["capture-pane", "-p", "-J", "-t", &coder_b]);
    assert_eq!(pane_opt(&b, &coder_b, "@agentpane_pane_unread"), "");
    assert!(!screen_b().contains("Which server"), "{}", screen_b());
    // The popup detail (agent panes only) counts each member on its own server only.
    let unread = |s: &TmuxServer, pane: &str| {
        let detail = s.agentpane(&["pane-status", "--json"]).json();
        let found = detail.as_array().into_iter().flatten().find_map(|w| {
            w["panes"]
                .as_array()?
                .iter()
                .find(|p| p["pane_id"] == pane)
                .map(|p| p["unread"].clone())
        });
        found.unwrap_or_else(|| panic!("no pane {pane} in {detail}"))
    };
    assert_eq!(unread(&a, &coder_a), 3, "two join notices and the request");
    assert_eq!(unread(&b, &coder_b), 0);

    // a's watcher delivers into a's pane, and shows nothing for b's bystander on a's `%0`.
    let watch_a = Watch::start(&a, &["--channel-grace", "0"]);
    wait_until(DEADLINE, "the mail pasted into a's pane", || {
        a.tmux(&["capture-pane", "-p", "-J", "-t", &coder_a])
            .contains("Which server are you on?")
    });
    assert_eq!(pane_opt(&a, &shell_b, "@agentpane_pane_unread"), "");
    assert!(!screen_b().contains("Which server"), "{}", screen_b());
    assert_eq!(pane_opt(&b, &coder_b, "@agentpane_pane_unread"), "");
    assert_eq!(watch_a.stop(), 0);
    assert_eq!(watch_b.stop(), 0);
}
