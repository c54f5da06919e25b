//! The released GitHub Copilot CLI (pinned in tests/real/clients.txt). Phase 1 holds only the
//! recorder: the OpenAI chat stand-in (tests/real/openai_chat.rs) served on its own, for
//! driving the client by hand in a private tmux server. This is how
//! fixtures/real-clients/copilot-1.0.102 was made (its README has the steps); the scenarios that
//! run the client here come with the wiring (scripts/drift.sh runs this file for `copilot`).
//!
//! ```sh
//! STANDIN_DIR=/tmp/rec cargo test --test real_copilot -- --ignored --exact standin
//! ```
//!
//! writes the port to `$STANDIN_DIR/port`, appends every request to
//! `$STANDIN_DIR/requests.jsonl`, and stops when `$STANDIN_DIR/stop` appears.

mod common;
mod real;

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

#[test]
#[ignore = "serves the stand-in until $STANDIN_DIR/stop exists; run by hand to record a client"]
fn standin() {
    let dir = PathBuf::from(std::env::var_os("STANDIN_DIR").expect("STANDIN_DIR"));
    let log = dir.join("requests.jsonl");
    let api = real::http::MockServer::start(move |req| {
        let record = serde_json::json!({
            "method": req.method, "path": req.path, "body": req.json().unwrap_or_default(),
        });
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log)
        {
            let _ = writeln!(f, "{record}");
        }
        real::openai_chat::reply(req)
    });
    std::fs::write(dir.join("port"), api.port().to_string()).expect("write the port");
    while !dir.join("stop").exists() {
        std::thread::sleep(Duration::from_millis(300));
    }
}
