//! Every key, menu and popup of the plugin in a real attached tmux client (a nested tmux, see
//! `tests/live/mod.rs`): what the person sees after each key, and that nothing is left behind —
//! no `'…' returned N` view, no tmux error, no pane stuck in a mode.

mod common;
mod live;

use std::time::Duration;

use common::{wait_until, FakeAgent, DEADLINE};
use live::Live;

const CLAUDE_WITH_ANSWER: &str =
    "claude/d-kimuson-claude-code-viewer/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl";
const ANSWER_HEAD: &str = "I've created a basic CLAUDE.md";
const CODEX_MID_TURN: &str = "codex/derived-prefix/kvsankar-session-01.prefix-L1-7.mid-turn.jsonl";

/// The status line (the screen's last line).
fn status_line(screen: &str) -> &str {
    screen.lines().last().unwrap_or("")
}

/// The `main:N.0` target of a pane.
fn target(live: &Live, pane: &str) -> String {
    live.server.tmux(&[
        "display-message",
        "-p",
        "-t",
        pane,
        "#{session_name}:#{window_index}.#{pane_index}",
    ])
}

/// A line of the screen that contains `what`, and its index.
fn line_with(screen: &str, what: &str) -> Option<usize> {
    screen.lines().position(|l| l.contains(what))
}

#[test]
fn keys_with_nothing_to_do_say_so_in_one_status_line_message() {
    // The picker key is configurable: here `F`.
    let live = Live::start(&[("@agentpane-picker-key", "F")]);
    live.press("A");
    live.wait_screen("the jump key's message", |s| {
        status_line(s).contains("agentpane: no agent needs you")
    });
    live.assert_clean();

    live.press("R");
    live.wait_screen("the route key's message", |s| {
        status_line(s).contains("agentpane: no other agent pane to route to")
    });
    live.assert_clean();

    live.press("F");
    live.wait_screen("the picker key's message", |s| {
        status_line(s).contains("agentpane: no coding agent runs in any pane of this tmux server")
    });
    live.assert_clean();

    // An agent with no answer yet (an empty transcript).
    let quiet = live.server.spawn(&FakeAgent::claude());
    live.focus(&quiet);
    live.press("P");
    live.wait_screen("the last-answer key's message", |s| {
        status_line(s).contains(&format!("agentpane: no answer in pane {quiet} yet"))
    });
    live.assert_clean();
    // Nothing shows up late either.
    std::thread::sleep(Duration::from_secs(3));
    live.assert_clean();
}

#[test]
fn jump_key_switches_the_client_to_the_agent_that_needs_you() {
    let live = Live::start(&[]);
    let claude = live
        .server
        .spawn(&FakeAgent::claude().fixture(CLAUDE_WITH_ANSWER));
    assert_ne!(live.current_pane(), claude);
    wait_until(DEADLINE, "claude your-turn", || {
        live.server
            .agentpane(&["resolve", &claude, "--json"])
            .json()["state"]
            == "your-turn"
    });
    live.press("A");
    wait_until(DEADLINE, "the client on the claude pane", || {
        live.current_pane() == claude
    });
    live.assert_clean();
}

#[test]
fn focused_window_shows_its_glyph_through_the_current_format() {
    let live = Live::start(&[]);
    let codex = live
        .server
        .spawn(&FakeAgent::codex().fixture(CODEX_MID_TURN));
    live.focus(&codex);
    let index = live
        .server
        .tmux(&["display-message", "-p", "-t", &codex, "#{window_index}"]);
    // The window runs the agent through `sh`. tmux's default current format would show
    // `1:sh*`; the plugin's shows the glyph.
    live.wait_screen("the focused window's glyph", |s| {
        status_line(s).contains(&format!("{index}:sh ⚡"))
    });
    live.assert_clean();
}

#[test]
fn route_menu_routes_the_answer_and_leaves_nothing_behind() {
    let live = Live::start(&[]);
    let claude = live
        .server
        .spawn(&FakeAgent::claude().fixture(CLAUDE_WITH_ANSWER));
    let codex = live.server.spawn(&FakeAgent::codex().in_dir("dst"));
    live.focus(&claude);
    wait_until(DEADLINE, "claude's answer", || {
        live.server.agentpane(&["last", &claude]).code == 0
    });
    live.press("R");
    let codex_target = target(&live, &codex);
    let screen = live.wait_screen("the route menu", |s| {
        s.contains(&format!("Route {claude}'s answer to")) && s.contains(&codex_target)
    });
    assert!(screen.contains("codex"), "{screen}");
    // A person reads the menu for a while: it stays up, nothing else appears (the old
    // route-menu gave up on its menu after tmux's 2 s call timeout).
    std::thread::sleep(Duration::from_secs(3));
    let screen = live.screen();
    assert!(
        screen.contains(&format!("Route {claude}'s answer to")),
        "{screen}"
    );
    live.keys(&["1"]);
    wait_until(DEADLINE, "the routed answer delivered", || {
        live.outcomes().last().map(String::as_str) == Some("delivered")
    });
    wait_until(DEADLINE, "the answer in the codex pane", || {
        live.server
            .tmux(&["capture-pane", "-p", "-J", "-t", &codex])
            .contains(ANSWER_HEAD)
    });
    live.wait_screen("the menu closed", |s| !s.contains("Route %"));
    live.assert_clean();
    // The old route-menu timed out two seconds after the menu opened: wait past that.
    std::thread::sleep(Duration::from_millis(3500));
    live.assert_clean();
    assert_eq!(live.current_pane(), claude);
}

#[test]
fn route_menu_taller_than_the_client_opens_the_picker_and_says_so() {
    // tmux 3.3a draws no menu taller than its client, and says nothing: 30 destinations on a
    // 24-line terminal.
    let live = Live::start_sized(&[], (80, 24));
    let claude = live
        .server
        .spawn(&FakeAgent::claude().fixture(CLAUDE_WITH_ANSWER));
    for i in 0..30 {
        live.server
            .spawn_drawn(&FakeAgent::claude().in_dir(&format!("dst{i}")));
    }
    wait_until(DEADLINE, "31 agent panes", || {
        let run = live.server.agentpane(&["panes", "--json"]);
        run.code == 0 && run.json().as_array().map(Vec::len) == Some(31)
    });
    live.focus(&claude);
    wait_until(DEADLINE, "claude's answer", || {
        live.server.agentpane(&["last", &claude]).code == 0
    });
    live.press("R");
    // Told first, then the picker opens (and stays until closed).
    live.wait_screen("why the picker opens", |s| {
        status_line(s).contains("agentpane: 30 panes do not fit a menu here")
    });
    let screen = live.wait_screen("the picker", |s| {
        s.contains(&format!("agentpane: r routes {claude}'s answer"))
            && s.contains("agentpane · 31 agent panes")
    });
    assert!(
        screen.contains(&format!("r route {claude} here")),
        "{screen}"
    );
    assert!(!screen.contains("Route %"), "{screen}");
    // `r` on the last row routes the answer there, as the menu would have.
    live.keys(&["G", "r"]);
    live.wait_screen("the route's result", |s| {
        s.contains("routed ") && s.contains("bytes")
    });
    wait_until(DEADLINE, "the routed answer delivered", || {
        live.outcomes().last().map(String::as_str) == Some("delivered")
    });
    live.keys(&["q"]);
    live.wait_screen("the picker closed", |s| !s.contains("r routes %"));
    wait_until(DEADLINE, "the picker gone", || live.picker_pid().is_none());
    live.assert_clean();
}

#[test]
fn last_answer_popup_shows_the_answer_and_closes_with_q_and_escape() {
    let live = Live::start(&[]);
    let claude = live
        .server
        .spawn(&FakeAgent::claude().fixture(CLAUDE_WITH_ANSWER));
    live.focus(&claude);
    wait_until(DEADLINE, "claude's answer", || {
        live.server.agentpane(&["last", &claude]).code == 0
    });
    for close in ["q", "Escape"] {
        live.press("P");
        let screen = live.wait_screen("the popup with the answer", |s| {
            s.contains(ANSWER_HEAD) && s.contains("last answer")
        });
        assert!(screen.contains("q close"), "{screen}");
        // Read for a while: the popup outlives tmux's usual 2 s call timeout.
        std::thread::sleep(Duration::from_millis(2500));
        assert!(live.screen().contains(ANSWER_HEAD));
        live.keys(&[close]);
        live.wait_screen("the popup closed", |s| !s.contains(ANSWER_HEAD));
        live.assert_clean();
    }
    std::thread::sleep(Duration::from_secs(3));
    live.assert_clean();
}

#[test]
fn picker_lists_urgent_first_reads_routes_jumps_and_refreshes() {
    let live = Live::start(&[]);
    // The pane we come from: looked at, so its turn reads as seen.
    let from = live.server.spawn(
        &FakeAgent::claude()
            .fixture(CLAUDE_WITH_ANSWER)
            .in_dir("from"),
    );
    let claude = live
        .server
        .spawn(&FakeAgent::claude().fixture(CLAUDE_WITH_ANSWER));
    let busy = live
        .server
        .spawn(&FakeAgent::codex().fixture(CODEX_MID_TURN).in_dir("busy"));
    let idle = live.server.spawn(&FakeAgent::codex().in_dir("idle"));
    live.focus(&from);
    wait_until(DEADLINE, "claude your-turn", || {
        live.server
            .agentpane(&["resolve", &claude, "--json"])
            .json()["state"]
            == "your-turn"
    });
    let (from_t, claude_t, busy_t, idle_t) = (
        target(&live, &from),
        target(&live, &claude),
        target(&live, &busy),
        target(&live, &idle),
    );
    // The order below needs the watcher to have acknowledged the focused pane.
    wait_until(DEADLINE, "the pane we came from to read as seen", || {
        live.server
            .agentpane(&["panes"])
            .stdout
            .lines()
            .any(|l| l.starts_with(&format!("{from_t} ")) && l.contains("(seen)"))
    });

    live.press("S");
    let screen = live.wait_screen("the picker", |s| s.contains("agentpane · 4 agent panes"));
    // Most urgent first: your turn, working, your turn already seen, idle; each with its
    // glyph, agent and the head of its last answer.
    let rows: Vec<usize> = [&claude_t, &busy_t, &from_t, &idle_t]
        .iter()
        .map(|t| line_with(&screen, &format!(" {t} ")).unwrap_or_else(|| panic!("{t}:\n{screen}")))
        .collect();
    assert!(
        rows.windows(2).all(|w| w[0] + 1 == w[1]),
        "{rows:?}\n{screen}"
    );
    let first = screen.lines().nth(rows[0]).unwrap();
    assert!(first.contains('●') && first.contains("claude"), "{first}");
    assert!(first.contains(ANSWER_HEAD), "{first}");
    assert!(
        screen.lines().nth(rows[1]).unwrap().contains('⚡'),
        "{screen}"
    );
    assert!(screen.contains(&format!("r route {from} here")), "{screen}");

    // `p` on the idle codex: no answer, said in the footer; the picker stays.
    live.keys(&["G", "p"]);
    live.wait_screen("no answer", |s| {
        s.contains(&format!("no answer in {idle_t} yet"))
    });
    // `r`: the pane we came from (claude) into the idle codex, with the route rules.
    live.keys(&["r"]);
    live.wait_screen("the route's result", |s| {
        s.contains("routed ") && s.contains("bytes")
    });
    wait_until(DEADLINE, "the routed answer delivered", || {
        live.outcomes().last().map(String::as_str) == Some("delivered")
    });
    // `r` into the busy codex: queued until its turn ends, not pasted into a working agent.
    live.keys(&["g", "j", "r"]);
    live.wait_screen("the queued route", |s| {
        s.contains(&format!("{busy} is busy (working): queued"))
    });

    // `p` on claude: the whole answer, scrollable; q goes back to the list.
    live.keys(&["k", "p"]);

    live.wait_screen("the answer view", |s| {
        s.contains(&format!("last answer: {claude_t} claude")) && s.contains("q back")
    });
    live.keys(&["G", "g", "q"]);
    live.wait_screen("the list again", |s| {
        s.contains("agentpane · 4 agent panes")
    });

    // It refreshes while open: a new agent appears.
    let _new = live.server.spawn(&FakeAgent::codex().in_dir("new"));
    live.wait_screen("the new agent's row", |s| {
        s.contains("agentpane · 5 agent panes")
    });

    // Idle, it sleeps: well under 5 % of one core over 5 s (a scan a second).
    let pid = live.picker_pid().expect("the picker process");
    let before = live::cpu_seconds(pid);
    std::thread::sleep(Duration::from_secs(5));
    let used = live::cpu_seconds(pid) - before;
    eprintln!(
        "picker CPU while idle: {:.2} % of one core",
        used / 5.0 * 100.0
    );
    assert!(used < 0.25, "the picker used {used:.2} s of CPU in 5 s");

    // Enter jumps the client to the selected pane (the idle codex, found by its row) and
    // closes the popup.
    let screen = live.screen();
    let sel = line_with(&screen, &format!(" {idle_t} ")).expect("idle row");
    let top = line_with(&screen, " TARGET ").expect("header") + 1;
    let mut keys = vec!["g"];
    keys.extend(std::iter::repeat("j").take(sel - top));
    keys.push("Enter");
    live.keys(&keys);
    wait_until(DEADLINE, "the client on the idle codex", || {
        live.current_pane() == idle
    });
    live.wait_screen("the picker closed", |s| !s.contains("agent panes"));
    live.assert_clean();

    // Escape closes it too.
    live.press("S");
    live.wait_screen("the picker", |s| s.contains("agentpane · 5 agent panes"));
    live.keys(&["Escape"]);
    live.wait_screen("the picker closed", |s| !s.contains("agent panes"));
    std::thread::sleep(Duration::from_secs(3));
    live.assert_clean();
    assert_eq!(live.current_pane(), idle);
}

/// The menu and the picker, pointed at an agent that was suspended (Ctrl-Z) after it was
/// listed: both say why nothing was sent, the shell that has the pane now gets nothing, and
/// the answer's command never runs.
#[test]
fn menu_and_picker_never_type_into_a_suspended_agents_shell() {
    let live = Live::start(&[]);
    let (hostile, marker) = live.server.hostile_claude("src");
    let dst = live.server.shell_pane("dash -i");
    let env = vec![("AGENTPANE_FAKE_AGENT".to_string(), "none".to_string())];
    live.server.start_from_shell(&dst, "codex", &env);
    let pid = live.server.agent_pid(&dst);
    live.focus(&hostile);
    wait_until(DEADLINE, "the hostile answer", || {
        live.server.agentpane(&["last", &hostile]).code == 0
    });
    let dst_target = target(&live, &dst);

    // The menu lists the agent; it is suspended before the person picks it.
    live.press("R");
    live.wait_screen("the route menu", |s| {
        s.contains(&format!("Route {hostile}'s answer to")) && s.contains(&dst_target)
    });
    live.server.suspend(&dst, pid);
    live.keys(&["1"]);
    // In the status line (for tmux's display-time) and in the client's message log.
    let client = live.client().expect("the client");
    wait_until(DEADLINE, "the refusal in the client's messages", || {
        live.server
            .tmux(&["show-messages", "-t", &client])
            .contains("suspended (Ctrl-Z)")
    });

    // The picker: `r` on that row.
    live.press("S");
    let screen = live.wait_screen("the picker", |s| s.contains("agentpane · 2 agent panes"));
    let sel = line_with(&screen, &format!(" {dst_target} ")).expect("the suspended agent's row");
    let top = line_with(&screen, " TARGET ").expect("header") + 1;
    let mut keys = vec!["g"];
    keys.extend(std::iter::repeat("j").take(sel - top));
    keys.push("r");
    live.keys(&keys);
    live.wait_screen("the picker's refusal", |s| {
        s.contains("not delivered") && s.contains("suspended (Ctrl-Z)")
    });
    live.keys(&["q"]);
    live.wait_screen("the picker closed", |s| !s.contains("agent panes"));

    std::thread::sleep(Duration::from_millis(1500));
    assert!(!marker.exists(), "the routed command ran");
    let shell = live.server.tmux(&["capture-pane", "-p", "-J", "-t", &dst]);
    assert!(!shell.contains("touch"), "typed into the shell:\n{shell}");
    assert!(
        !live.outcomes().iter().any(|o| o == "pasting"),
        "{:?}",
        live.outcomes()
    );
    live.assert_clean();
}

/// `prefix + W` shows the page `agentpane web` serves: its URL with the secret and a QR code,
/// in a popup on this client only, which Enter closes; nothing of it reaches a tmux option.
#[test]
fn prefix_w_shows_the_phone_pages_url_and_qr_code_in_a_popup() {
    let live = Live::start(&[]);
    let web = common::web::WebServer::start(&live.server, &[]);
    live.keys(&["C-b", "W"]);
    live.wait_screen("the URL and its QR code", |s| {
        s.contains(&web.url) && s.contains(['▀', '▄', '█']) && s.contains("(Enter closes)")
    });
    let options = live.server.tmux(&["show-options", "-g"]);
    assert!(
        !options.contains(&web.token),
        "the secret in a tmux option:\n{options}"
    );
    live.keys(&["Enter"]);
    live.wait_screen("the popup closed", |s| !s.contains(&web.url));
    live.assert_clean();
}
