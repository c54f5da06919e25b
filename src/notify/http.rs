//! The ntfy and webhook channels: the request each notification becomes (pure), and one POST
//! of it through `ureq` with a timeout, retried a bounded number of times with backoff. Only
//! `http://` and `https://` addresses are used; nothing reaches a shell.

use std::time::Duration;

use anyhow::{bail, Context, Result};
use base64::Engine as _;
use serde_json::json;

use super::config::WebhookFormat;
use super::Notification;
use crate::state::State;

/// One attempt's limit, connecting and answering included.
pub const TIMEOUT: Duration = Duration::from_secs(5);
/// Attempts per notification, and the wait before the second (doubled each time).
pub const ATTEMPTS: u32 = 3;
pub const BACKOFF: Duration = Duration::from_secs(1);

/// One HTTP POST.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Post {
    pub url: String,
    pub headers: Vec<(&'static str, String)>,
    pub body: Vec<u8>,
}

/// `url` when it is an `http(s)://` address with a host, else why not.
pub fn check_url(url: &str) -> Result<()> {
    let scheme = url.split_once("://").map(|(s, _)| s.to_ascii_lowercase());
    if !matches!(scheme.as_deref(), Some("http" | "https")) {
        bail!("{url:?} is not an http:// or https:// address");
    }
    let uri: ureq::http::Uri = url
        .parse()
        .with_context(|| format!("{url:?} is not a web address"))?;
    if uri.host().is_none_or_empty() {
        bail!("{url:?} names no host");
    }
    Ok(())
}

trait NoneOrEmpty {
    fn is_none_or_empty(&self) -> bool;
}

impl NoneOrEmpty for Option<&str> {
    fn is_none_or_empty(&self) -> bool {
        self.map_or(true, str::is_empty)
    }
}

/// A header value: ASCII as is, anything else as an RFC 2047 encoded word (what ntfy reads).
fn header_text(s: &str) -> String {
    if s.chars().all(|c| c.is_ascii() && !c.is_ascii_control()) {
        s.to_string()
    } else {
        format!(
            "=?UTF-8?B?{}?=",
            base64::engine::general_purpose::STANDARD.encode(s)
        )
    }
}

/// ntfy's priority: a wait or a failure is high (5 is reserved for emergencies).
fn priority(state: State) -> &'static str {
    match state {
        State::Waiting | State::Attention => "4",
        _ => "3",
    }
}

/// ntfy's tags (those that name an emoji show as one).
fn tags(state: State) -> String {
    let emoji = match state {
        State::Waiting => "raising_hand",
        State::Attention => "warning",
        State::Stalled => "hourglass",
        _ => "white_check_mark",
    };
    format!("{emoji},{}", state.as_str())
}

/// The POST to an ntfy topic: the body is the message, the rest headers.
pub fn ntfy(url: &str, click: Option<&str>, n: &Notification) -> Post {
    let mut headers = vec![
        ("Title", header_text(&n.title)),
        ("Priority", priority(n.state).to_string()),
        ("Tags", tags(n.state)),
    ];
    if let Some(c) = click.filter(|c| check_url(c).is_ok()) {
        headers.push(("Click", c.to_string()));
    }
    headers.push(("Content-Type", "text/plain; charset=utf-8".to_string()));
    Post {
        url: url.to_string(),
        headers,
        body: n.body.as_bytes().to_vec(),
    }
}

/// The POST to a webhook in `format`.
pub fn webhook(url: &str, format: WebhookFormat, n: &Notification) -> Post {
    let text = format!("{}\n{}", n.title, n.body);
    let value = match format {
        WebhookFormat::Slack => json!({ "text": text }),
        WebhookFormat::Discord => json!({ "content": text }),
        WebhookFormat::Matrix => json!({ "text": text, "username": "agentpane" }),
        WebhookFormat::Json => serde_json::to_value(n).unwrap_or_default(),
    };
    Post {
        url: url.to_string(),
        headers: vec![("Content-Type", "application/json".to_string())],
        body: serde_json::to_vec(&value).unwrap_or_default(),
    }
}

/// Whether a failed attempt is worth repeating.
#[derive(Debug)]
pub enum Failure {
    /// A network error, a timeout, 429 or 5xx.
    Again(String),
    /// A bad address or a 4xx: the same request fails the same way.
    Final(String),
}

/// One attempt.
pub fn post_once(post: &Post, timeout: Duration) -> Result<(), Failure> {
    check_url(&post.url).map_err(|e| Failure::Final(format!("{e:#}")))?;
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(timeout))
        .http_status_as_error(false)
        .max_redirects(3)
        .user_agent(concat!("agentpane/", env!("CARGO_PKG_VERSION")))
        .build()
        .into();
    let mut req = agent.post(&post.url);
    for (name, value) in &post.headers {
        req = req.header(*name, value);
    }
    let response = req
        .send(&post.body[..])
        .map_err(|e| Failure::Again(format!("{}: {e}", post.url)))?;
    let status = response.status().as_u16();
    match status {
        200..=299 => Ok(()),
        429 | 500..=599 => Err(Failure::Again(format!("{} answered {status}", post.url))),
        _ => Err(Failure::Final(format!("{} answered {status}", post.url))),
    }
}

/// Up to `attempts` attempts, waiting [`BACKOFF`] doubled between them; each failure is
/// told to `log`. Ok when one attempt succeeded.
pub fn post(post: &Post, attempts: u32, log: &dyn Fn(&str)) -> Result<()> {
    let attempts = attempts.max(1);
    let mut wait = BACKOFF;
    for attempt in 1..=attempts {
        match post_once(post, TIMEOUT) {
            Ok(()) => return Ok(()),
            Err(Failure::Final(e)) => {
                log(&format!("attempt {attempt}: {e}; not retried"));
                bail!("{e}");
            }
            Err(Failure::Again(e)) if attempt == attempts => {
                log(&format!("attempt {attempt}: {e}; giving up"));
                bail!("{e} ({attempts} attempt(s))");
            }
            Err(Failure::Again(e)) => {
                log(&format!("attempt {attempt}: {e}; again in {wait:?}"));
                std::thread::sleep(wait);
                wait *= 2;
            }
        }
    }
    unreachable!("the last attempt returns")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn note() -> Notification {
        let mut n = Notification::sample("box");
        n.agent = "claude".into();
        n.title = "claude: waiting in shop".into();
        n.body = "Bash: npm test\nbox w:1.0 ~/shop".into();
        n
    }

    #[test]
    fn ntfy_puts_the_message_in_the_body_and_the_rest_in_headers() {
        let p = ntfy("https://ntfy.sh/t", Some("https://example.org/x"), &note());
        assert_eq!(p.body, b"Bash: npm test\nbox w:1.0 ~/shop");
        assert_eq!(
            p.headers,
            [
                ("Title", "claude: waiting in shop".to_string()),
                ("Priority", "4".to_string()),
                ("Tags", "raising_hand,waiting".to_string()),
                ("Click", "https://example.org/x".to_string()),
                ("Content-Type", "text/plain; charset=utf-8".to_string()),
            ]
        );
        let no_click = ntfy("https://ntfy.sh/t", Some("javascript:alert(1)"), &note());
        assert!(no_click.headers.iter().all(|(h, _)| *h != "Click"));
    }

    #[test]
    fn a_title_beyond_ascii_is_an_encoded_word() {
        assert_eq!(header_text("café"), "=?UTF-8?B?Y2Fmw6k=?=");
        assert_eq!(header_text("plain"), "plain");
    }

    #[test]
    fn webhook_shapes() {
        let body = |f| {
            let p = webhook("https://h.example/x", f, &note());
            serde_json::from_slice::<serde_json::Value>(&p.body).unwrap()
        };
        let text = "claude: waiting in shop\nBash: npm test\nbox w:1.0 ~/shop";
        assert_eq!(body(WebhookFormat::Slack), json!({ "text": text }));
        assert_eq!(body(WebhookFormat::Discord), json!({ "content": text }));
        assert_eq!(
            body(WebhookFormat::Matrix),
            json!({ "text": text, "username": "agentpane" })
        );
        let plain = body(WebhookFormat::Json);
        assert_eq!(plain["state"], "waiting");
        assert_eq!(plain["agent"], "claude");
        assert_eq!(plain["title"], "claude: waiting in shop");
    }

    #[test]
    fn only_web_addresses() {
        assert!(check_url("https://ntfy.sh/topic").is_ok());
        assert!(check_url("http://127.0.0.1:8080/x").is_ok());
        for bad in [
            "file:///etc/passwd",
            "ntfy.sh/topic",
            "",
            "https://",
            "ftp://h/x",
        ] {
            assert!(check_url(bad).is_err(), "{bad}");
        }
    }
}
