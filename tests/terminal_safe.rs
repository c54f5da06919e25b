//! Model text never commands the user's terminal (docs/design.md#terminal-safe-output): what
//! agentpane prints for a person carries none of an answer's escape sequences; `--json`, and
//! `last` into a pipe or with `--raw`, stay byte-exact.

mod common;

use common::{agentpane_bin, wait_until_else, TmuxServer, DEADLINE};

/// An answer that writes the clipboard (OSC 52), retitles and clears the terminal, rings its
/// bell and sets a colour with an 8-bit CSI.
const HOSTILE: &str = "Done\x1b]52;c;ZXZpbA==\x07\x1b]0;pwned\x07\x1b[2J\x07\u{9b}1m ok";
/// What a person sees of it.
const SHOWN: &str = "Done ok";

/// Panics when `out` carries a control character other than a line end.
fn assert_safe(out: &str) {
    assert!(
        !out.chars()
            .any(|c| c.is_control() && c != '\n' && c != '\r'),
        "control characters reach the terminal: {out:?}"
    );
}

#[test]
fn panes_prints_an_answers_head_without_its_escape_sequences() {
    let server = TmuxServer::start();
    server.claude_answering("evil", HOSTILE);
    let run = server.agentpane(&["panes"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_safe(&run.stdout);
    assert!(run.stdout.contains(SHOWN), "{}", run.stdout);
    // JSON escapes the characters itself: its text stays exact.
    let rows = server.agentpane(&["panes", "--json"]).json();
    assert_eq!(rows[0]["answer_head"], HOSTILE);
}

/// The bytes `agentpane last PANE ARGS` writes to a terminal: run in a pane of its own, its
/// output copied by `pipe-pane` before tmux interprets it.
fn last_on_a_terminal(server: &TmuxServer, pane: &str, args: &[&str]) -> String {
    let out = server.path().join(format!("last-tty{}.out", args.join("")));
    // Waits for a line on its terminal, so the copy starts before anything is written.
    let cmd = format!(
        "read _; exec '{}' -L '{}' last {pane} {}",
        agentpane_bin(),
        server.name,
        args.join(" ")
    );
    let tty = server.new_window(&cmd, &server.work("proj"), &[]);
    let copy = format!("cat > '{}'", out.display());
    server.tmux(&["pipe-pane", "-O", "-t", &tty, &copy]);
    server.tmux(&["send-keys", "-t", &tty, "Enter"]);
    let read = || String::from_utf8_lossy(&std::fs::read(&out).unwrap_or_default()).into_owned();
    // The source line goes to stderr after the answer.
    wait_until_else(
        DEADLINE,
        "`last` to finish on its terminal",
        || read().contains("(source: "),
        read,
    );
    read()
}

#[test]
fn last_on_a_terminal_prints_no_escape_sequence_and_is_exact_into_a_pipe_or_with_raw() {
    let server = TmuxServer::start();
    let pane = server.claude_answering("evil", HOSTILE);
    let shown = last_on_a_terminal(&server, &pane, &[]);
    assert_safe(&shown);
    assert!(shown.contains(SHOWN), "{shown:?}");
    let raw = last_on_a_terminal(&server, &pane, &["--raw"]);
    assert!(raw.contains(HOSTILE), "{raw:?}");
    let piped = server.agentpane(&["last", &pane]);
    assert_eq!(piped.stdout, format!("{HOSTILE}\n"), "{piped:?}");
}

#[test]
fn route_queue_lists_and_shows_a_message_without_its_escape_sequences() {
    let server = TmuxServer::unstarted(&[]);
    // A queue file written by something else than agentpane's route (which sanitises).
    let queue = server.state_dir().join("queue");
    std::fs::create_dir_all(&queue).unwrap();
    let msg = serde_json::json!({
        "id": "evil1",
        "created": "2026-01-01T00:00:00Z",
        "server": "/tmp/none",
        "src": format!("%1{HOSTILE}"),
        "dst": "%2",
        "text": HOSTILE,
        "submit": true,
    });
    std::fs::write(queue.join("evil1.json"), msg.to_string()).unwrap();
    let list = server.agentpane(&["route-queue"]);
    assert_eq!(list.code, 0, "{list:?}");
    assert_safe(&list.stdout);
    assert!(list.stdout.contains("%1Done ok → %2"), "{list:?}");
    let shown = server.agentpane(&["route-queue", "--show", "evil1"]);
    assert_eq!(shown.stdout, format!("{SHOWN}\n"), "{shown:?}");
    let json = server
        .agentpane(&["route-queue", "--show", "evil1", "--json"])
        .json();
    assert_eq!(json["text"], HOSTILE);
}
