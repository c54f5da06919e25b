//! Routed text and a released Claude Code that leaves its pane's foreground: started from a
//! shell as a person starts it, suspended with Ctrl-Z mid-turn (Claude Code stops its own
//! process group) while a route waits for it, brought back with `fg`, then exited. An answer
//! holding `touch <marker>` is routed at each step; it reaches the client only while the
//! client has the terminal, and the shell never.

use crate::real::{self, start, Client, STEP};
use crate::rig::{each_client, Rig, FOLDERS};

#[test]
#[cfg_attr(skip_real, ignore = "AGENTPANE_SKIP_REAL: real clients not run")]
fn a_suspended_or_exited_client_never_passes_routed_text_to_its_shell() {
    each_client(suspended_then_back_then_exited);
}

fn suspended_then_back_then_exited(client: &Client) {
    let rig = Rig::new(client);
    let label = client.label();
    let (hostile, marker) = rig.tmux.hostile_claude("hostile");
    let shell = rig.tmux.shell_pane("dash -i");
    // Started from the shell in a trusted folder, as a person starts it.
    let mut line = format!("cd '{}' && env", rig.tmux.work(FOLDERS[0]).display());
    let mut env = rig.api.client_env();
    let bin = client.bin_dir(rig.tmux.path());
    env.push((
        "PATH".into(),
        format!("{}:/usr/local/bin:/usr/bin:/bin", bin.display()),
    ));
    for (k, v) in &env {
        line.push_str(&format!(" {k}='{v}'"));
    }
    line.push_str(" claude");
    rig.tmux.send_line(&shell, &line);
    real::wait_drawn(&rig.tmux, &shell, &label);
    start::claude_wait_ready(&rig.tmux, client, &shell);
    let pid = rig.tmux.agent_pid(&shell);

    // Mid-turn: a route is queued for this client.
    rig.ask(&shell, "Please write SLOW prose");
    rig.wait_state(&shell, "working", None);
    let queued = rig.agentpane(&["route", &hostile, &shell, "--queue", "--json"]);
    assert_eq!(queued.code, 0, "{label}: {queued:?}");
    let id = queued.json()["id"].as_str().unwrap().to_string();

    // Ctrl-Z: the client stops itself, the shell has the terminal.
    rig.tmux.suspend(&shell, pid);
    let deliver = rig.agentpane(&["route-queue", "--deliver", "--json"]);
    assert_eq!(
        deliver.json()["outcome"],
        "undeliverable",
        "{label}: {deliver:?}"
    );
    let now = rig.agentpane(&["route", &hostile, &shell, "--json"]);
    assert_eq!(now.code, 6, "{label}: {now:?}");
    assert!(
        now.json()["detail"]
            .as_str()
            .is_some_and(|d| d.contains("suspended (Ctrl-Z)")),
        "{label}: {now:?}"
    );
    std::thread::sleep(std::time::Duration::from_millis(1500));
    assert!(!marker.exists(), "{label}: the routed command ran");
    assert!(
        !rig.screen(&shell).contains("touch"),
        "{label}: typed into the shell:\n{}",
        rig.screen(&shell)
    );
    let held = rig.agentpane(&["route-queue"]);
    assert!(
        held.stdout.contains(&format!("held {id} ")),
        "{label}: {held:?}"
    );

    // `fg`: the same client, its turn over, takes a route — as a prompt, not a command.
    rig.tmux.send_line(&shell, "fg");
    rig.wait_state(&shell, "your-turn", None);
    let routed = rig.agentpane(&["route", &hostile, &shell, "--json"]);
    assert_eq!(routed.code, 0, "{label}: {routed:?}");
    real::wait_for(STEP, &rig.what("the routed prompt at the API"), || {
        rig.api
            .prompts()
            .iter()
            .any(|p| p.contains("touch ") && p.contains("Run this:"))
            .then_some(())
    });
    assert!(!marker.exists(), "{label}: the routed command ran");
    let later = rig.agentpane(&["route-queue", "--deliver", "--json"]);
    assert_eq!(
        later.stdout, "",
        "{label}: the held route stays held: {later:?}"
    );

    // Exited: the pane is the shell's again, and a shell is no destination.
    rig.wait_state(&shell, "your-turn", None);
    rig.ask(&shell, "/exit");
    real::wait_for(STEP, &rig.what("the client to exit"), || {
        agentpane::proctree::procfs::stat(pid)
            .is_none()
            .then_some(())
    });
    let gone = rig.agentpane(&["route", &hostile, &shell, "--json"]);
    assert_eq!(gone.code, 6, "{label}: {gone:?}");
    assert!(
        gone.json()["detail"]
            .as_str()
            .is_some_and(|d| d.contains("runs dash, not a coding agent")),
        "{label}: {gone:?}"
    );
    std::thread::sleep(std::time::Duration::from_millis(1500));
    assert!(!marker.exists(), "{label}: the routed command ran");
}
