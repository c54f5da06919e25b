//! A rate limit the client keeps retrying needs the human: while Claude Code waits between
//! attempts of a retryable 429 (`retry-after`, `x-should-retry: true`), the pane reads
//! `attention` with the error and where the retries stand, alerted once for the turn; when the
//! stand-in answers again the next attempt ends the turn and the pane reads `your-turn`.

use std::time::Duration;

use crate::common::Watch;
use crate::real::{Client, STEP};
use crate::rig::{alerts_stay, each_client, Rig};

#[test]
#[cfg_attr(skip_real, ignore = "AGENTPANE_SKIP_REAL: real clients not run")]
fn a_retried_rate_limit_is_attention_once_then_recovers() {
    each_client(retried_rate_limit);
}

fn retried_rate_limit(client: &Client) {
    let rig = Rig::new(client);
    let a = rig.start("proj");
    let watch = Watch::start(&rig.tmux, &[]);
    let label = client.label();

    rig.ask(&a, "Please BUSY429 now");
    let row = rig.wait_report(&a, "attention while retrying", |r| {
        r["state"] == "attention"
            && r["reason"]
                .as_str()
                .is_some_and(|s| s.contains(" — retrying (attempt "))
    });
    let reason = row["reason"].as_str().unwrap_or_default();
    // 2.1.197 says only `API error`; 2.1.332 names the 429.
    let what = if client.version == "2.1.197" {
        "API error"
    } else {
        "rate limit"
    };
    assert!(reason.starts_with(what), "{label}: {row}");
    assert_eq!(row["retry"]["limit"], 10, "{label}: {row}");
    assert!(row["retry"]["attempt"].as_u64().is_some(), "{label}: {row}");
    assert!(row["retry"]["next_at"].is_string(), "{label}: {row}");
    // `status` counts the watcher's view, which takes the news at its next wake.
    crate::real::wait_for(STEP, &rig.what("the status line to count it"), || {
        rig.agentpane(&["status"])
            .stdout
            .contains('1')
            .then_some(())
    });

    // One alert for the turn, however many attempts follow.
    crate::real::wait_for(STEP, &rig.what("the retry alert"), || {
        (!watch.alerts().is_empty()).then_some(())
    });
    alerts_stay(
        Duration::from_secs(6),
        "one alert while retrying",
        1,
        || watch.alerts(),
    );
    let alert = &watch.alerts()[0];
    assert_eq!(alert["state"], "attention", "{label}: {alert}");

    // The stand-in answers again: the next attempt completes the turn.
    rig.api.limiting(false);
    rig.wait_state(&a, "your-turn", None);
    let last = rig.agentpane(&["last", &a]);
    assert_eq!(
        last.stdout.trim_end(),
        "Recovered.",
        "{label}: {last:?}\n{}",
        evidence(&rig, &a)
    );
    assert!(rig.report(&a)["retry"].is_null(), "{label}");
}

/// What the pane's state was read from, for a failure: its row now, the tail of its
/// transcript and the client's session records (once seen: `your-turn`, and `last` a moment
/// later found no answer).
fn evidence(rig: &Rig, pane: &str) -> String {
    let row = rig.report(pane);
    let tail = row["transcript"]
        .as_str()
        .and_then(|t| std::fs::read_to_string(t).ok())
        .map(|t| {
            let lines: Vec<&str> = t.lines().collect();
            lines[lines.len().saturating_sub(3)..].join("\n")
        })
        .unwrap_or_default();
    let records: Vec<String> = std::fs::read_dir(rig.tmux.claude_dir().join("sessions"))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| std::fs::read_to_string(e.path()).ok())
        .collect();
    format!("the row now: {row}\ntranscript tail:\n{tail}\nsession records: {records:?}")
}
