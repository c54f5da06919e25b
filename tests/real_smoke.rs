//! The real-client harness itself: the pin list parses, and the API stand-in serves and
//! records a request.

mod common;
mod real;

use std::io::{Read, Write};
use std::net::TcpStream;

use real::http::{MockServer, Reply};

#[test]
fn pin_list_names_claude_and_codex() {
    let pins = real::pinned();
    assert!(pins.iter().any(|(a, _)| a == "claude"), "{pins:?}");
    assert!(pins.iter().any(|(a, _)| a == "codex"), "{pins:?}");
}

#[test]
fn stand_in_streams_and_records() {
    let api = MockServer::start(|req| {
        if req.path.starts_with("/json") {
            Reply::json(200, serde_json::json!({"ok": true}))
        } else {
            Reply::sse(vec![
                ("ping".into(), "{}".into()),
                (String::new(), "[DONE]".into()),
            ])
        }
    });
    let mut s = TcpStream::connect(("127.0.0.1", api.port())).unwrap();
    let body = r#"{"prompt":"hi"}"#;
    write!(
        s,
        "POST /stream HTTP/1.1\r\nHost: x\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    assert!(out.starts_with("HTTP/1.1 200"), "{out}");
    assert!(out.contains("event: ping\ndata: {}\n\n"), "{out}");
    assert!(out.ends_with("data: [DONE]\n\n"), "{out}");
    let reqs = api.requests();
    assert_eq!(reqs.len(), 1);
    assert_eq!(reqs[0].path, "/stream");
    assert_eq!(reqs[0].json().unwrap()["prompt"], "hi");
}
