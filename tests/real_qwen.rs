//! Qwen Code's stand-in model API, served on its own so a person (or
//! `fixtures/real-clients/qwen-0.24.4/record.sh`) can drive the released client by hand in a
//! private tmux server and record what it writes.
//!
//! `QWEN_STANDIN_DIR=/tmp/x cargo test --test real_qwen -- --ignored --nocapture` writes the
//! stand-in's URL to `/tmp/x/url`, each request it answers to `/tmp/x/requests/NNN.json`,
//! and stops when `/tmp/x/stop` appears (or after an hour).

mod common;
mod real;

use std::path::PathBuf;
use std::time::{Duration, Instant};

#[test]
#[ignore = "serves the stand-in for a hand-driven recording session"]
fn qwen_stand_in_serves_until_stopped() {
    let dir = PathBuf::from(std::env::var_os("QWEN_STANDIN_DIR").expect("QWEN_STANDIN_DIR"));
    let requests = dir.join("requests");
    std::fs::create_dir_all(&requests).expect("create requests dir");
    let api = real::qwen::start();
    std::fs::write(dir.join("url"), api.url()).expect("write url");
    let started = Instant::now();
    let mut written = 0;
    while !dir.join("stop").exists() && started.elapsed() < Duration::from_secs(3600) {
        for (n, req) in api.requests().iter().enumerate().skip(written) {
            let body = req.json().unwrap_or(serde_json::Value::Null);
            let record = serde_json::json!({"method": req.method, "path": req.path,
                "body": body});
            std::fs::write(requests.join(format!("{n:03}.json")), record.to_string())
                .expect("write request");
            written = n + 1;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}
