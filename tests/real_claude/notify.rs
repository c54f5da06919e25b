//! Away from the terminal: with `@agentpane-notify 'terminal ntfy'`, a released Claude Code's
//! finished turn and permission wait each reach the phone (an ntfy post to the recording
//! stand-in on 127.0.0.1) and the person's own terminal (one OSC 777 through a real tmux client
//! attached to another window of the session) exactly once, saying which agent, where and why.

use std::time::Duration;

use crate::answer::pending;
use crate::common::notify::{options, place, PtyClient};
use crate::common::{wait_until, wait_until_else, Watch};
use crate::real::anthropic::TOOL_COMMAND;
use crate::real::http::{MockServer, Reply};
use crate::real::{Client, STEP};
use crate::rig::{alerts_stay, each_client, Rig};

#[test]
#[cfg_attr(skip_real, ignore = "AGENTPANE_SKIP_REAL: real clients not run")]
fn a_finished_turn_and_a_permission_wait_reach_the_terminal_and_ntfy_once_each() {
    each_client(terminal_and_ntfy);
}

fn terminal_and_ntfy(client: &Client) {
    let rig = Rig::new(client);
    let label = client.label();
    let phone = MockServer::start(|_| Reply::json(200, serde_json::json!({"id": "x"})));
    options(
        &rig.tmux,
        &[
            ("@agentpane-notify", "terminal ntfy"),
            ("@agentpane-ntfy-url", &format!("{}/agents", phone.url())),
            ("@agentpane-terminal-osc", "777"),
        ],
    );
    let a = rig.start("proj");
    // The person's client shows the session's first window, not the agent's.
    let person = PtyClient::attach(&rig.tmux, "xterm-256color");
    assert_ne!(
        rig.tmux.tmux(&["list-clients", "-F", "#{pane_id}"]),
        a,
        "{label}"
    );
    let watch = Watch::start(&rig.tmux, &[]);
    let host = agentpane::notify::hostname();
    let (target, folder) = place(&rig.tmux, &a);
    let at = format!("{host} {target} {folder}");
    let posts = || phone.requests().len();
    let osc = |what: &str| format!("\x1b]777;notify;claude: {what} in proj;");

    // A finished turn.
    rig.ask(&a, "Please say PLAIN apple");
    let turn = format!("{}finished its turn · {at}\x1b\\", osc("your turn"));
    wait_until_else(
        STEP,
        &rig.what("the turn's post and OSC 777"),
        || posts() == 1 && person.count(&turn) == 1,
        || format!("posts: {:?}\n{}", phone.requests(), person.told(&rig.tmux)),
    );
    let post = &phone.requests()[0];
    assert_eq!(post.path, "/agents", "{label}: {post:?}");
    assert_eq!(
        post.header("title"),
        Some("claude: your turn in proj"),
        "{label}: {post:?}"
    );
    assert_eq!(
        String::from_utf8_lossy(&post.body),
        format!("finished its turn\n{at}"),
        "{label}"
    );

    // A permission wait: the command asked for is in both.
    pending(&rig, &a);
    wait_until_else(
        STEP,
        &rig.what("the wait's post and OSC 777"),
        || posts() == 2 && person.count(&osc("waiting")) == 1,
        || format!("posts: {:?}\n{}", phone.requests(), person.told(&rig.tmux)),
    );
    let post = &phone.requests()[1];
    let body = String::from_utf8_lossy(&post.body).into_owned();
    assert!(
        post.header("title")
            .is_some_and(|t| t.starts_with("claude: waiting in proj")),
        "{label}: {post:?}"
    );
    assert!(body.contains(TOOL_COMMAND), "{label}: {body}");
    assert!(body.ends_with(&format!("\n{at}")), "{label}: {body}");
    assert_eq!(
        person.count(&format!(
            "{}{body_line}",
            osc("waiting"),
            body_line = body.replace('\n', " · ")
        )),
        1,
        "{label}: {}",
        person.told(&rig.tmux)
    );

    // Each once: two alerts, two posts, one sequence each, and nothing more a moment later
    // (longer than the alert delay).
    wait_until(STEP, &rig.what("both alerts"), || watch.alerts().len() == 2);
    alerts_stay(
        Duration::from_millis(2000),
        &rig.what("the alerts"),
        2,
        || watch.alerts(),
    );
    assert_eq!(posts(), 2, "{label}: {:?}", phone.requests());
    assert_eq!(person.count(&turn), 1, "{}", person.told(&rig.tmux));
    assert_eq!(
        person.count(&osc("waiting")),
        1,
        "{}",
        person.told(&rig.tmux)
    );
    assert_eq!(person.count("\x1b]777;"), 2, "{}", person.told(&rig.tmux));
}
