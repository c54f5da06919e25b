//! A released agent client on a remote host (docs/design.md#remote-hosts): the pinned Qwen Code
//! against its OpenAI Chat stand-in (tests/real/qwen.rs), in the tmux server of a "remote host"
//! reached over a real sshd (tests/common/sshd.rs). The local watcher's link shows its real
//! turn in the local status line and `panes`; `last` and routes in both directions reach it,
//! and a relay the local watcher runs hands its next answer to a local agent once.

mod common;
mod real;

use common::sshd::{delivered_to, read, remote_pane, Sshd};
use common::{wait_until, FakeAgent, TmuxServer, Watch, DEADLINE};
use real::openai_chat::ANSWER;
use real::{type_prompt, wait_drawn, wait_for, wait_screen, STEP};

const CLAUDE_WITH_ANSWER: &str =
    "claude/d-kimuson-claude-code-viewer/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl";

/// The remote row of `pane` in the local `panes --json`, once it reads `state`.
fn remote_row(local: &TmuxServer, pane: &str, state: &str) -> serde_json::Value {
    wait_for(STEP, &format!("devbox:{pane} reading {state} here"), || {
        let run = local.agentpane(&["panes", "--json"]);
        let rows: serde_json::Value = serde_json::from_str(&run.stdout).ok()?;
        rows.as_array()?
            .iter()
            .find(|r| r["host"] == "devbox" && r["pane_id"] == pane && r["state"] == state)
            .cloned()
    })
}

#[test]
#[cfg_attr(skip_real, ignore = "AGENTPANE_SKIP_REAL: real clients not run")]
fn a_real_qwen_on_a_remote_host_reads_and_routes_here() {
    for client in real::clients("qwen") {
        let label = client.label();
        let api = real::qwen::start();
        let remote = TmuxServer::start();
        real::qwen::write_settings(&real::qwen::home(remote.path()));
        let env = real::qwen::env(remote.path(), &api.url());
        let program = client.bin_dir(remote.path()).join("qwen");
        let qwen = remote.new_window(&program.display().to_string(), &remote.work("proj"), &env);
        wait_drawn(&remote, &qwen, &label);
        wait_screen(&remote, &qwen, STEP, "Qwen Code's input box", |s| {
            s.contains("Type your message")
        });
        let sshd = Sshd::new(&remote);

        let local = sshd.local_server();
        let claude = local.spawn(&FakeAgent::claude().fixture(CLAUDE_WITH_ANSWER));
        let (inbox, inbox_file) = local.inbox_agent("inbox");
        local.tmux(&["set-option", "-g", "@agentpane-hosts", "devbox"]);
        let watch = Watch::start(&local, &[]);

        // A real turn there: your-turn here, in the row and the merged segment.
        type_prompt(&remote, &qwen, "hello there");
        real::wait_state(&remote, &qwen, "your-turn", None);
        let row = remote_row(&local, &qwen, "your-turn");
        assert_eq!(row["agent"], "qwen", "{label}: {row}");
        wait_until(DEADLINE, "the remote turn in the local segment", || {
            local
                .tmux(&["show-option", "-gqv", "@agentpane_status"])
                .contains("●2")
        });

        // `last` and a route out of it: the answer byte for byte.
        let last = local.agentpane(&["last", &format!("devbox:{qwen}"), "--json"]);
        assert_eq!(last.code, 0, "{label}: {last:?}");
        assert_eq!(last.json()["text"], ANSWER, "{label}");
        let run = local.agentpane(&["route", &format!("devbox:{qwen}"), &inbox]);
        assert_eq!(run.code, 0, "{label}: {run:?}");
        wait_until(DEADLINE, "the remote answer in the local inbox", || {
            read(&inbox_file) == format!("{ANSWER}\n")
        });

        // A route into it: the local answer is its next prompt, and it answers again.
        let asked = api.requests().len();
        let key = remote_pane(&local, "devbox", &qwen).map(|p| p["turn_key"].clone());
        let run = local.agentpane(&["route", &claude, &format!("devbox:{qwen}"), "--json"]);
        assert_eq!(run.code, 0, "{label}: {run:?}");
        assert_eq!(run.json()["outcome"], "delivered", "{label}: {run:?}");
        wait_for(STEP, "the routed prompt at the stand-in", || {
            (api.requests().len() > asked).then_some(())
        });
        // That answer is over, as the watcher sees it: a relay started now takes it as history.
        wait_for(STEP, "the answer to the routed prompt, here", || {
            let now = remote_pane(&local, "devbox", &qwen)?;
            (now["turn_key"].is_string()
                && Some(&now["turn_key"]) != key.as_ref()
                && now["state"] == "your-turn")
                .then_some(())
        });

        // A relay from it to a local agent: its next real answer arrives here once.
        let run = local.agentpane(&["relay", &format!("devbox:{qwen}"), &inbox]);
        assert_eq!(run.code, 0, "{label}: {run:?}");
        type_prompt(&remote, &qwen, "once more");
        wait_until(DEADLINE, "the relayed answer in the local inbox", || {
            read(&inbox_file).matches(ANSWER).count() == 2 && delivered_to(&local, &inbox) == 2
        });
        assert_eq!(watch.stop(), 0, "{label}");
        assert_eq!(read(&inbox_file).matches(ANSWER).count(), 2, "{label}");
    }
}
