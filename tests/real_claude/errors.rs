//! API failures need the human: HTTP 400 and a quota error read `attention` with a reason
//! naming the error, are alerted, and hand on no answer.

use crate::common::Watch;
use crate::real::{Client, STEP};
use crate::rig::{each_client, Rig};

#[test]
#[cfg_attr(skip_real, ignore = "AGENTPANE_SKIP_REAL: real clients not run")]
fn api_400_and_quota_need_attention_and_hand_on_no_answer() {
    each_client(errors);
}

fn errors(client: &Client) {
    let rig = Rig::new(client);
    let dst = rig.answered_neighbour();
    let a = rig.start("proj");
    let watch = Watch::start(&rig.tmux, &[]);
    let label = client.label();

    // Something answered first, so "no answer" cannot mean "nothing yet".
    rig.ask(&a, "Please say PLAIN kiwi");
    rig.wait_state(&a, "your-turn", None);

    // 2.1.197 writes no `apiErrorType`: its reason names the status and the message.
    for (prompt, reasons) in [
        ("Trigger E400 now", &["api error 400"][..]),
        ("Trigger QUOTA now", &["quota exceeded"][..]),
    ] {
        let before = rig.report(&a)["turn_key"].clone();
        rig.ask(&a, prompt);
        let row = rig.wait_report(&a, &format!("attention after {prompt}"), |r| {
            r["state"] == "attention" && r["turn_key"] != before
        });
        rig.dump(prompt);
        let reason = row["reason"].as_str().unwrap_or_default();
        for want in reasons {
            assert!(reason.contains(want), "{label}: {prompt}: reason {row}");
        }
        if prompt.contains("E400") && client.version != "2.1.197" {
            assert_eq!(
                reason, "api error 400: invalid_request_error",
                "{label}: {row}"
            );
        }
        let last = rig.agentpane(&["last", &a]);
        assert_eq!(
            last.code, 1,
            "{label}: {prompt}: an answer was handed on: {last:?}"
        );
        let key = row["turn_key"].clone();
        crate::real::wait_for(STEP, &rig.what(&format!("the alert for {prompt}")), || {
            watch
                .alerts()
                .iter()
                .any(|al| al["state"] == "attention" && al["turn_key"] == key)
                .then_some(())
        });
        let route = rig.agentpane(&["route", &a, &dst, "--json"]);
        assert_ne!(route.code, 0, "{label}: {prompt}: routed: {route:?}");
        assert_eq!(route.json()["outcome"], "refused", "{label}: {route:?}");
    }
    // One alert per failure, none for anything else (the first answer's alert may be
    // cancelled: the next prompt followed it within the alert delay).
    let alerts: Vec<serde_json::Value> = watch
        .alerts()
        .into_iter()
        .filter(|al| al["pane"] == a.as_str() && al["state"] != "your-turn")
        .collect();
    assert_eq!(alerts.len(), 2, "{label}: {alerts:?}");
}
