//! `agentpane web` run in the background for a test server, and its API over HTTP (`ureq`):
//! the URL it prints first, split into the base and the secret; requests with or without the
//! token. Killed on drop.

use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::Value;

use super::{TmuxServer, DEADLINE};

/// A running `agentpane web`.
pub struct WebServer {
    pub child: Child,
    /// The first line it printed: `http://127.0.0.1:PORT/#t=SECRET`.
    pub url: String,
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    /// `127.0.0.1:PORT`: what a browser sends as `Host`.
    pub host: String,
    pub token: String,
    /// Its stderr, as it comes.
    pub stderr: mpsc::Receiver<String>,
}

/// `(base, host, token)` of a page URL.
pub fn split_url(url: &str) -> (String, String, String) {
    let (base, token) = url.trim().split_once("/#t=").expect("a URL with #t=SECRET");
    let host = base.strip_prefix("http://").expect("http://").to_string();
    (base.to_string(), host, token.to_string())
}

/// An HTTP client that reports every status (4xx included) instead of failing.
pub fn client() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(30)))
        .build()
        .into()
}

impl WebServer {
    /// `agentpane -L NAME web --listen 127.0.0.1:0 EXTRA…` once it printed its URL.
    pub fn start(server: &TmuxServer, extra: &[&str]) -> WebServer {
        let mut cmd = server.agentpane_command(&["web", "--listen", "127.0.0.1:0"]);
        cmd.args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("start agentpane web");
        let (tx, rx) = mpsc::channel();
        let out = child.stdout.take().expect("stdout");
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        let (etx, erx) = mpsc::channel();
        let err = child.stderr.take().expect("stderr");
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                let _ = etx.send(line);
            }
        });
        let url = rx
            .recv_timeout(DEADLINE)
            .expect("agentpane web printed its URL");
        let (base, host, token) = split_url(&url);
        WebServer {
            child,
            url,
            base,
            host,
            token,
            stderr: erx,
        }
    }

    /// `GET path` with the token; status and body.
    pub fn get(&self, path: &str) -> (u16, String) {
        let resp = client()
            .get(&format!("{}{path}", self.base))
            .header("Authorization", &format!("Bearer {}", self.token))
            .call()
            .expect("GET");
        let status = resp.status().as_u16();
        (
            status,
            resp.into_body().read_to_string().unwrap_or_default(),
        )
    }

    /// `GET path` with the token, as JSON; it must answer 200.
    pub fn get_json(&self, path: &str) -> Value {
        let (status, body) = self.get(path);
        assert_eq!(status, 200, "GET {path}: {body}");
        serde_json::from_str(&body).expect("JSON")
    }

    /// `POST path` with the token and `body` as JSON; status and JSON body.
    pub fn post(&self, path: &str, body: &Value) -> (u16, Value) {
        let resp = client()
            .post(&format!("{}{path}", self.base))
            .header("Authorization", &format!("Bearer {}", self.token))
            .header("Content-Type", "application/json")
            .send(body.to_string().as_bytes())
            .expect("POST");
        let status = resp.status().as_u16();
        let text = resp.into_body().read_to_string().unwrap_or_default();
        (status, serde_json::from_str(&text).unwrap_or(Value::Null))
    }

    /// The list's row of `pane` (`%N`), when it is listed.
    pub fn row(&self, pane: &str) -> Option<Value> {
        let list = self.get_json("/api/panes");
        list["panes"]
            .as_array()?
            .iter()
            .find(|r| r["id"] == pane)
            .cloned()
    }

    /// The API path of `pane`'s detail (`%3` URL-encoded).
    pub fn pane_path(pane: &str) -> String {
        format!("/api/pane/{}", pane.replace('%', "%25").replace(':', "%3A"))
    }
}

impl Drop for WebServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
