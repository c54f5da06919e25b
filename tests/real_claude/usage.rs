//! What a session used, as the released client logged it: the stand-in's usage of each
//! message ([`crate::real::anthropic::USAGE`]) in `panes --json` and `usage --json`, each
//! message counted once however many lines the client wrote for it.

use serde_json::Value;

use crate::real::anthropic::USAGE;
use crate::real::Client;
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
    rig.ask(&a, "Please say PLAIN apple");
    rig.wait_state(&a, "your-turn", None);
    rig.ask(&a, "Please say PLAIN pear");
    rig.wait_state(&a, "your-turn", None);
    let (input, created, read, _) = USAGE;
    let prompt = input + created + read;
    let messages = rig.api.prompts().len() as u64;
    let panes = rig.agentpane(&["panes", "--json"]).json();
    let u = &row(&panes, &a)["usage"];
    let label = client.label();
    assert_eq!(u["context_tokens"], prompt, "{label}: {u:#}");
    assert_eq!(u["session_input"], prompt * messages, "{label}: {u:#}");
    assert_eq!(u["cost_usd"], Value::Null, "{label}: {u:#}");
    let model = u["model"].as_str().unwrap_or_default();
    assert!(model.starts_with("claude-"), "{label}: {u:#}");
    if let Some(window) = u["context_window"].as_u64() {
        assert_eq!(
            u["context_percent"].as_f64(),
            Some(prompt as f64 * 100.0 / window as f64),
            "{label}: {u:#}"
        );
    }
    let out = u["session_output"].as_u64().unwrap_or_default();
    eprintln!("{label}: {u}");
    assert!(out >= messages, "{label}: {u:#}");
    let usage = rig.agentpane(&["usage", "--json"]).json();
    assert_eq!(&row(&usage["panes"], &a)["usage"], u, "{label}");
}
