//! The headline promise with the released clients: ONE tmux session running every agent kind
//! agentpane reads — Claude Code (the newest pinned release), Codex CLI, Gemini CLI, opencode,
//! Qwen Code, GitHub Copilot CLI, Kilo Code and pi — side by side in one folder, each against its
//! own API stand-in, and `agentpane panes` tells each pane's own state and last answer — never
//! a neighbour's — while one waits on a permission prompt and one streams; Claude's answer
//! routed into Codex is Codex's next prompt and reaches no other stand-in; `status` counts them.
//!
//! The clients are started by `tests/real/start.rs`, as the per-agent suites start them.

mod common;
mod real;

use std::time::Instant;

use serde_json::Value;

use common::TmuxServer;
use real::anthropic::Anthropic;
use real::http::MockServer;
use real::{gemini, openai, openai_chat, start, type_prompt, wait_row, wait_screen, Client};

/// The folder every agent works in (a user running several agents on one repository).
const FOLDER: &str = "proj";
const CLAUDE_PROMPT: &str = "Please say PLAIN mixclaude";
const CLAUDE_ANSWER: &str = "Answer: mixclaude.";
const CODEX_PROMPT: &str = "MULTI from codex";
const GEMINI_PROMPT: &str = "hello from gemini";
const OPENCODE_PROMPT: &str = "hello from opencode";
const QWEN_PROMPT: &str = "Please say PLAIN mixqwen";
const QWEN_ANSWER: &str = "Answer: mixqwen.";
const COPILOT_PROMPT: &str = "Please say PLAIN mixcopilot";
const COPILOT_ANSWER: &str = "Answer: mixcopilot.";
const KILO_PROMPT: &str = "Please say PLAIN mixkilo";
const KILO_ANSWER: &str = "Answer: mixkilo.";
const PI_PROMPT: &str = "Please say PLAIN mixpi";
const PI_ANSWER: &str = "Answer: mixpi.";

/// One tmux server, the stand-ins, and each client's configuration pointing at its own.
struct World {
    tmux: TmuxServer,
    claude_api: Anthropic,
    codex_api: MockServer,
    gemini_api: MockServer,
    opencode_api: MockServer,
    qwen_api: MockServer,
    copilot_api: MockServer,
    kilo_api: MockServer,
    pi_api: MockServer,
}

impl World {
    fn new() -> World {
        let tmux = TmuxServer::start();
        let w = World {
            claude_api: Anthropic::start(),
            codex_api: openai::start(),
            gemini_api: gemini::start(),
            opencode_api: openai_chat::start(),
            qwen_api: real::qwen::start(),
            copilot_api: openai_chat::start(),
            kilo_api: openai_chat::start(),
            pi_api: openai_chat::start(),
            tmux,
        };
        start::claude_config(&w.tmux, &[FOLDER]);
        start::codex_config(&w.tmux, &w.codex_api.url(), FOLDER);
        start::opencode_config(&w.tmux, &w.opencode_api.url());
        start::qwen_config(&w.tmux);
        start::copilot_config(&w.tmux, &[FOLDER]);
        start::kilo_config(&w.tmux, &w.kilo_api.url());
        start::pi_config(&w.tmux, &w.pi_api.url());
        w
    }

    fn last(&self, pane: &str) -> Option<String> {
        let run = self.tmux.agentpane(&["last", pane, "--json"]);
        (run.code == 0).then(|| run.json()["text"].as_str().unwrap_or_default().to_string())
    }

    fn wait_state(&self, pane: &str, state: &str) -> Value {
        wait_row(&self.tmux, pane, &format!("{pane} to read {state}"), |r| {
            r["state"] == state
        })
    }
}

impl Drop for World {
    fn drop(&mut self) {
        // Codex's app-server daemon outlives the tmux server; it runs from our CODEX_HOME.
        let _ = self.tmux.try_tmux(&["kill-server"]);
        start::kill_codex_daemons(&self.tmux.codex_dir());
    }
}

/// The newest pinned release of `agent` (by numeric version), installed.
fn newest(agent: &str) -> Option<Client> {
    let key = |c: &Client| -> Vec<u64> {
        c.version
            .split('.')
            .map(|p| p.parse().unwrap_or(0))
            .collect()
    };
    real::clients(agent).into_iter().max_by_key(key)
}

#[test]
#[cfg_attr(skip_real, ignore = "AGENTPANE_SKIP_REAL: real clients not run")]
fn every_agent_kind_in_one_session_shows_its_own_state_and_answer() {
    let began = Instant::now();
    let kinds = [
        "claude", "codex", "gemini", "opencode", "qwen", "copilot", "kilo", "pi",
    ];
    let clients: Vec<Option<Client>> = kinds.iter().map(|k| newest(k)).collect();
    let [Some(claude), Some(codex), Some(gemini_cli), Some(opencode), Some(qwen), Some(copilot), Some(kilo), Some(pi)] =
        <[Option<Client>; 8]>::try_from(clients).unwrap()
    else {
        // `clients` fails naming a pinned release it cannot install; an agent kind has none.
        unreachable!("every agent kind has a pinned release: {kinds:?}");
    };
    let w = World::new();
    let gemini_home = gemini::home(w.tmux.path());
    eprintln!(
        "mixed: {} on tmux server {} in {}",
        [
            &claude,
            &codex,
            &gemini_cli,
            &opencode,
            &qwen,
            &copilot,
            &kilo,
            &pi,
        ]
        .map(Client::label)
        .join(", "),
        w.tmux.name,
        w.tmux.path().display()
    );

    // Each agent starts and answers its own prompt; the start-ups overlap, as a person opening
    // a window per agent does. Gemini is then left on a permission prompt.
    let (c, x, g, o, q, p, k, i) = std::thread::scope(|s| {
        let c = s.spawn(|| {
            let pane = start::claude(&w.tmux, &claude, &w.claude_api, FOLDER);
            type_prompt(&w.tmux, &pane, CLAUDE_PROMPT);
            w.wait_state(&pane, "your-turn");
            pane
        });
        let x = s.spawn(|| {
            let pane = start::codex(&w.tmux, &codex, FOLDER, "");
            start::codex_ask(&w.tmux, &w.codex_api, &pane, CODEX_PROMPT);
            w.wait_state(&pane, "your-turn");
            pane
        });
        let g = s.spawn(|| {
            let pane = start::gemini(&w.tmux, &gemini_cli, &gemini_home, &w.gemini_api, FOLDER);
            start::gemini_submit(&w.tmux, &pane, GEMINI_PROMPT);
            w.wait_state(&pane, "your-turn");
            start::gemini_submit(&w.tmux, &pane, "TOOL:mkdir mixed-dir");
            w.wait_state(&pane, "waiting");
            pane
        });
        let o = s.spawn(|| {
            let pane = start::opencode(&w.tmux, &opencode, FOLDER);
            type_prompt(&w.tmux, &pane, OPENCODE_PROMPT);
            w.wait_state(&pane, "your-turn");
            pane
        });
        let q = s.spawn(|| {
            let pane = start::qwen(&w.tmux, &qwen, &w.qwen_api.url(), FOLDER);
            type_prompt(&w.tmux, &pane, QWEN_PROMPT);
            w.wait_state(&pane, "your-turn");
            pane
        });
        let p = s.spawn(|| {
            let pane = start::copilot(&w.tmux, &copilot, &w.copilot_api.url(), FOLDER);
            type_prompt(&w.tmux, &pane, COPILOT_PROMPT);
            w.wait_state(&pane, "your-turn");
            pane
        });
        let k = s.spawn(|| {
            let pane = start::kilo(&w.tmux, &kilo, FOLDER);
            type_prompt(&w.tmux, &pane, KILO_PROMPT);
            w.wait_state(&pane, "your-turn");
            pane
        });
        let i = s.spawn(|| {
            let pane = start::pi(&w.tmux, &pi, FOLDER, "");
            type_prompt(&w.tmux, &pane, PI_PROMPT);
            w.wait_state(&pane, "your-turn");
            pane
        });
        let join = |h: std::thread::ScopedJoinHandle<'_, String>, who: &str| {
            h.join()
                .unwrap_or_else(|_| panic!("{who} did not get going (see above)"))
        };
        (
            join(c, "claude"),
            join(x, "codex"),
            join(g, "gemini"),
            join(o, "opencode"),
            join(q, "qwen"),
            join(p, "copilot"),
            join(k, "kilo"),
            join(i, "pi"),
        )
    });
    eprintln!("mixed: every agent answered after {:?}", began.elapsed());

    // opencode streams a long answer (~30 s); the snapshot is taken mid-stream.
    type_prompt(&w.tmux, &o, "SLOW please");
    wait_screen(&w.tmux, &o, real::STEP, "opencode streaming", |s| {
        s.contains("word5 ")
    });
    w.wait_state(&o, "working");

    let rows = real::panes(&w.tmux);
    let status = w.tmux.agentpane(&["status"]);
    let lasts: Vec<(&str, Option<String>)> = [&c, &x, &g, &o, &q, &p, &k, &i]
        .into_iter()
        .map(|p| (p.as_str(), w.last(p)))
        .collect();
    // Still working after the reads: the snapshot was taken mid-stream.
    let after = real::pane_row(&w.tmux, &o);
    assert_eq!(
        after["state"], "working",
        "the slow stream ended too soon: {after:#}"
    );

    let agent_rows: Vec<&Value> = rows.iter().filter(|r| !r["agent"].is_null()).collect();
    assert_eq!(
        agent_rows.len(),
        kinds.len(),
        "one row per agent: {rows:#?}"
    );
    let row = |pane: &str| {
        rows.iter()
            .find(|r| r["pane_id"] == pane)
            .unwrap_or_else(|| panic!("{pane} is not listed: {rows:#?}"))
    };
    let expect = [
        (&c, "claude", "your-turn", None, CLAUDE_ANSWER.to_string()),
        (&x, "codex", "your-turn", None, openai::MULTI_ANSWER.into()),
        (
            &g,
            "gemini",
            "waiting",
            Some("permission: Shell"),
            gemini::answer_to(GEMINI_PROMPT),
        ),
        (&o, "opencode", "working", None, openai_chat::ANSWER.into()),
        (&q, "qwen", "your-turn", None, QWEN_ANSWER.into()),
        (&p, "copilot", "your-turn", None, COPILOT_ANSWER.into()),
        (&k, "kilo", "your-turn", None, KILO_ANSWER.into()),
        (&i, "pi", "your-turn", None, PI_ANSWER.into()),
    ];
    let answers: Vec<&String> = expect.iter().map(|e| &e.4).collect();
    for (pane, agent, state, reason, answer) in &expect {
        let r = row(pane);
        assert_eq!(r["agent"], *agent, "{pane}: {r:#}");
        assert_eq!(r["state"], *state, "{pane} ({agent}): {r:#}");
        assert_eq!(r["reason"].as_str(), *reason, "{pane} ({agent}): {r:#}");
        assert!(r["transcript"].is_string(), "{pane} ({agent}): {r:#}");
        let head = answer.lines().next().unwrap_or_default();
        assert_eq!(r["answer_head"], head, "{pane} ({agent}): {r:#}");
        let last = &lasts.iter().find(|(p, _)| p == pane).unwrap().1;
        assert_eq!(last.as_ref(), Some(answer), "{pane} ({agent}): `last`");
        for other in answers.iter().filter(|a| *a != &answer) {
            assert_ne!(last.as_ref(), Some(*other), "{pane} shows another's answer");
        }
    }
    let mut transcripts: Vec<&str> = agent_rows
        .iter()
        .filter_map(|r| r["transcript"].as_str())
        .collect();
    transcripts.sort_unstable();
    transcripts.dedup();
    assert_eq!(
        transcripts.len(),
        kinds.len(),
        "one session each: {rows:#?}"
    );

    // The status line: one working, six finished, one waiting.
    assert_eq!(status.code, 0, "{status:?}");
    assert_eq!(status.stdout.trim(), "⚡1 ●6 ⏸1", "{status:?}");

    // Claude's answer routed into Codex: the Codex stand-in's next user input, byte-exact,
    // and no other stand-in sees it.
    let route = w.tmux.agentpane(&["route", &c, &x, "--json"]);
    assert_eq!(route.code, 0, "{route:?}");
    real::wait_for(
        real::STEP,
        "the routed prompt at the Codex stand-in",
        || (start::codex_prompts(&w.codex_api).len() >= 2).then_some(()),
    );
    assert_eq!(
        start::codex_prompts(&w.codex_api),
        [CODEX_PROMPT, CLAUDE_ANSWER],
        "Codex's user inputs"
    );
    assert_eq!(
        w.claude_api.prompts(),
        [CLAUDE_PROMPT],
        "Claude's user inputs"
    );
    let routed_elsewhere = |server: &MockServer| {
        server
            .requests()
            .iter()
            .any(|r| String::from_utf8_lossy(&r.body).contains(CLAUDE_ANSWER))
    };
    for (server, agent) in [
        (&w.gemini_api, "gemini"),
        (&w.opencode_api, "opencode"),
        (&w.qwen_api, "qwen"),
        (&w.copilot_api, "copilot"),
        (&w.kilo_api, "kilo"),
        (&w.pi_api, "pi"),
    ] {
        assert!(!routed_elsewhere(server), "{agent} got the routed text");
    }
    wait_row(&w.tmux, &x, "Codex to answer the routed prompt", |r| {
        r["state"] == "your-turn" && r["answer_head"] == openai::PLAIN_ANSWER
    });
    assert_eq!(w.last(&c).as_deref(), Some(CLAUDE_ANSWER));
    eprintln!("mixed: done after {:?}", began.elapsed());
}
