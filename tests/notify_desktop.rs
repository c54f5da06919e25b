//! The desktop channel with a real notification daemon: the watcher's alert for a waiting
//! agent reaches Debian's dunst (under Xvfb, on a private D-Bus session; see
//! `tests/common/desktop.rs`) over the session bus, and the action a person picks from it —
//! from dunst's own context menu — jumps a real tmux client to the pane, or allows or denies
//! the agent's permission dialog through `agentpane answer`'s rules.
//!
//! The agent is the demo's waiting pane: a fake Claude Code asking to run
//! `mix phx.server 2>&1 | head -80`, its dialog drawn as the released client draws it, decided
//! by the first key (`AGENTPANE_FAKE_DECIDE`): an allow writes the call's result and an answer
//! that ends the turn, a deny the recorded rejection.

mod common;

use common::desktop::{Desktop, Shown};
use common::{wait_until, FakeAgent, TmuxServer, Watch, DEADLINE};

const ASKED: &str = "Bash: mix phx.server 2&gt;&amp;1 | head -80";

/// The fake Claude Code waiting for a decision, in a new window; its pane.
fn claude_asking(server: &TmuxServer) -> String {
    server.spawn(&FakeAgent::claude_asking())
}

/// `pane`'s `session:window.pane`.
fn target(server: &TmuxServer, pane: &str) -> String {
    server.tmux(&[
        "display-message",
        "-p",
        "-t",
        pane,
        "#{session_name}:#{window_index}.#{pane_index}",
    ])
}

/// A desktop, a server with the asking agent and a watcher notifying that desktop, once the
/// wait's notification is up.
struct World {
    desktop: Desktop,
    server: TmuxServer,
    pane: String,
    watch: Watch,
    shown: Shown,
}

impl World {
    /// The agent starts once the watcher has made its first scan, which is history and
    /// never alerted.
    fn start(before_watch: impl FnOnce(&TmuxServer)) -> World {
        let desktop = Desktop::start();
        let server = TmuxServer::start();
        before_watch(&server);
        let watch = Watch::start_notifying(&server, &[], Some(&desktop.env()));
        let pane = claude_asking(&server);
        let at = target(&server, &pane);
        let shown = desktop.wait_shown_else(
            "the wait's notification",
            |s| s.summary.contains(&at) && s.summary.contains("waiting"),
            || {
                let log = server.server_dir().join("watch.log");
                let log = std::fs::read_to_string(log).unwrap_or_default();
                format!("state: {}\nwatch.log:\n{log}", server.snapshot_row(&pane))
            },
        );
        World {
            desktop,
            server,
            pane,
            watch,
            shown,
        }
    }

    fn state(&self) -> serde_json::Value {
        self.server.snapshot_row(&self.pane)["state"].clone()
    }

    /// The watcher's log lines about desktop actions.
    fn log(&self) -> Vec<String> {
        let log = self.server.server_dir().join("watch.log");
        std::fs::read_to_string(log)
            .unwrap_or_default()
            .lines()
            .filter(|l| l.contains(" desktop "))
            .map(String::from)
            .collect()
    }

    /// Lines of the agent's transcript that carry a tool's result.
    fn results(&self) -> usize {
        let run = self.server.agentpane(&["resolve", &self.pane, "--json"]);
        let path = run.json()["transcript"].as_str().unwrap().to_string();
        std::fs::read_to_string(path)
            .unwrap()
            .lines()
            .filter(|l| l.contains("\"tool_result\""))
            .count()
    }

    /// Picks `action` on the wait's notification and waits until the watcher logged it.
    fn pick(&self, action: &str) -> String {
        self.desktop.pick(self.shown.id, action);
        let mut line = None;
        common::wait_until_else(
            DEADLINE,
            &format!("the watcher to carry out {action}"),
            || {
                line = self.log().into_iter().find(|l| l.contains(action));
                line.is_some()
            },
            || self.log().join("\n"),
        );
        line.unwrap()
    }
}

#[test]
fn a_wait_s_notification_says_what_is_asked_and_offers_jump_allow_and_deny() {
    let w = World::start(|_| {});
    assert_eq!(w.shown.app, "agentpane");
    // The command as the agent asks it, its markup characters escaped for the daemon.
    assert_eq!(w.shown.body, ASKED, "{:#?}", w.shown);
    let mut offered = w.desktop.offered(w.shown.id);
    offered.sort();
    assert_eq!(offered, ["allow", "deny", "jump"]);
    drop(w.watch);
}

#[test]
fn no_process_s_argument_list_holds_the_request_while_its_notification_waits() {
    let w = World::start(|_| {});
    // The notification is up, waiting for its click: nothing this test started (the watcher
    // and whatever it runs) carries the agent's command in its argv, readable by anyone.
    let ours = common::descendants(std::process::id());
    assert!(ours.contains(&w.watch.child.id()), "{ours:?}");
    let holding: Vec<String> = ours
        .into_iter()
        .filter_map(|pid| {
            let argv = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
            let argv = String::from_utf8_lossy(&argv).replace('\0', " ");
            argv.contains("phx.server")
                .then(|| format!("{pid}: {argv}"))
        })
        .collect();
    assert!(holding.is_empty(), "{holding:#?}");
}

#[test]
fn allow_on_the_desktop_answers_the_permission_dialog_exactly_once() {
    let w = World::start(|_| {});
    let before = w.results();
    let done = w.pick("allow");
    assert!(done.contains("keys [\"1\"]"), "{done}");
    wait_until(DEADLINE, "the agent's turn to end", || {
        w.state() == "your-turn"
    });
    // The call's one result: the dialog was answered once.
    assert_eq!(w.results(), before + 1);
    assert_eq!(w.log().len(), 1, "{:#?}", w.log());
}

#[test]
fn deny_on_the_desktop_denies_the_permission_dialog() {
    let w = World::start(|_| {});
    let done = w.pick("deny");
    assert!(done.contains("desktop deny in"), "{done}");
    assert!(!done.contains("refused"), "{done}");
    wait_until(DEADLINE, "the agent to stop waiting", || {
        w.state() != "waiting"
    });
    assert_eq!(w.log().len(), 1, "{:#?}", w.log());
}

#[test]
fn a_dialog_answered_in_the_pane_before_the_click_is_refused_and_nothing_is_typed() {
    let w = World::start(|_| {});
    // The person decides in the pane itself, the notification still up.
    w.server.tmux(&["send-keys", "-t", &w.pane, "3"]);
    wait_until(DEADLINE, "the agent to stop waiting", || {
        w.state() != "waiting"
    });
    let before = w.results();
    let done = w.pick("allow");
    assert!(done.contains("allow refused, nothing typed"), "{done}");
    // The person is told why, on the desktop.
    let told = w.desktop.wait_shown("the refusal", |s| {
        s.body.contains("allow refused, nothing typed")
    });
    assert!(told.summary.contains(&w.pane), "{told:#?}");
    assert_eq!(w.results(), before, "nothing was allowed");
}

#[test]
fn jump_on_the_desktop_switches_the_tmux_client_to_the_pane() {
    let w = World::start(|server| {
        // A person's client (a nested tmux) looking at another session.
        server.tmux(&["new-session", "-d", "-s", "desk"]);
        let attach = format!(
            "env -u TMUX -u TMUX_PANE tmux -L {} -f /dev/null attach -t desk",
            server.name
        );
        // As large as the agent's screen, which new windows take the size of.
        let size = ["-x", "200", "-y", "60"];
        server.tmux(
            &[
                &["new-session", "-d", "-s", "viewer"][..],
                &size,
                &[&attach],
            ]
            .concat(),
        );
        wait_until(DEADLINE, "the client attached", || {
            server
                .tmux(&["list-clients", "-F", "#{session_name}"])
                .contains("desk")
        });
    });
    let shows = || w.server.tmux(&["list-clients", "-F", "#{pane_id}"]);
    assert_ne!(shows().trim(), w.pane);
    w.pick("jump");
    wait_until(DEADLINE, "the client to show the agent's pane", || {
        shows().trim() == w.pane
    });
}
