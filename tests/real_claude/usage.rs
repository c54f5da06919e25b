//! What a session used, as the released client logged it: the stand-in's usage of each
//! message ([`crate::real::anthropic::USAGE`]) in `panes --json` and `usage --json`, each
//! message counted once however many lines the client wrote for it.

use serde_json::Value;

use crate::real::anthropic::{OUTPUT, USAGE};
use crate::real::{wait_for, Client, STEP};
use crate::rig::{each_client, Rig};

#[test]
#[cfg_attr(skip_real, ignore = "AGENTPANE_SKIP_REAL: real clients not run")]
fn each_message_s_usage_reaches_panes_json_once() {
    each_client(usage_reaches_panes_json);
}

fn row(rows: &Value, pane: &str) -> Value {
    rows.as_array()
        .and_then(|r| r.iter().find(|r| r["pane_id"] == pane))
        .cloned()
        .unwrap_or(Value::Null)
}

fn usage_reaches_panes_json(client: &Client) {
    let rig = Rig::new(client);
    let a = rig.start("proj");
    let label = client.label();
    let (input, created, read, _) = USAGE;
    let prompt = input + created + read;
    for (n, ask) in ["Please say PLAIN apple", "Please say PLAIN pear"]
        .into_iter()
        .enumerate()
    {
        rig.ask(&a, ask);
        wait_for(STEP, &rig.what("the prompt at the API"), || {
            (rig.api.prompts().len() > n).then_some(())
        });
        rig.wait_state(&a, "your-turn", None);
    }
    // Each message once, as the stand-in's usage says, whatever lines the client wrote.
    let messages = rig.api.prompts().len() as u64;
    let mut u = Value::Null;
    let found = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        wait_for(STEP, &rig.what("both messages' usage"), || {
            u = row(&rig.agentpane(&["panes", "--json"]).json(), &a)["usage"].clone();
            (u["session_input"] == prompt * messages).then_some(())
        })
    }));
    assert!(found.is_ok(), "{label}: {messages} messages: {u:#}");
    assert_eq!(u["context_tokens"], prompt, "{label}: {u:#}");
    assert_eq!(u["session_output"], OUTPUT * messages, "{label}: {u:#}");
    assert_eq!(u["cost_usd"], Value::Null, "{label}: {u:#}");
    let model = u["model"].as_str().unwrap_or_default();
    assert!(model.starts_with("claude-"), "{label}: {u:#}");
    // A model of the known families has its window, any other none (never guessed).
    let known = ["claude-opus-4", "claude-sonnet-4", "claude-haiku-4"]
        .iter()
        .any(|k| model.starts_with(k));
    let window = known.then_some(200_000u64);
    assert_eq!(u["context_window"].as_u64(), window, "{label}: {u:#}");
    assert_eq!(
        u["context_percent"].as_f64(),
        window.map(|w| prompt as f64 * 100.0 / w as f64),
        "{label}: {u:#}"
    );
    let usage = rig.agentpane(&["usage", "--json"]).json();
    assert_eq!(row(&usage["panes"], &a)["usage"], u, "{label}");
}
