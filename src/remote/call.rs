//! One-shot calls to a host's agentpane over the shared connection
//! (docs/design.md#remote-hosts): a pane's last answer, a destination check, and text handed
//! over on ssh's stdin for that host to deliver. Used by the one-shot commands and by the
//! watcher's relays and outbox alike. The remote command line holds fixed words and checked
//! values only (pane ids, message ids, numbers); routed text goes on stdin.

use std::time::Duration;

use anyhow::{bail, Result};
use serde::Deserialize;

use super::doc::{self, clean_text, RemoteRequest, RequestSeen};
use super::ssh::{explain, Ssh, CONNECT_TIMEOUT_SECS};
use super::{remote_pane_arg, Host};
use crate::exit as code;
use crate::read::request::Request;

/// How long a one-shot remote command may take beyond connecting.
const REMOTE_WORK: Duration = Duration::from_secs(20);

/// Connect timeout plus [`REMOTE_WORK`].
pub fn one_shot_timeout() -> Duration {
    Duration::from_secs(u64::from(CONNECT_TIMEOUT_SECS)) + REMOTE_WORK
}

/// The first non-empty line of a remote's stderr, without control characters.
pub fn first_line(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    text.lines()
        .map(|l| l.trim().trim_start_matches("agentpane: "))
        .find(|l| !l.is_empty())
        .unwrap_or("")
        .chars()
        .filter(|c| !c.is_control())
        .take(300)
        .collect()
}

/// A remote pane's last answer, as `last --json` prints it there.
#[derive(Debug, Deserialize)]
pub struct RemoteAnswer {
    pub text: String,
    pub agent: Option<String>,
    /// The key of the turn the answer closed, when the remote knows it.
    #[serde(default)]
    pub key: Option<String>,
    /// The pane's working folder there (an older agentpane does not say).
    #[serde(default)]
    pub cwd: Option<String>,
}

/// `last PANE --json` on `host`: `None` when the pane has no answer (exit 1 there).
pub fn fetch_answer(ssh: &Ssh, host: &Host, pane: &str) -> Result<Option<RemoteAnswer>> {
    let pane = remote_pane_arg(pane)?;
    let (code, out) = ssh.run(host, &["last", pane, "--json"], None, one_shot_timeout())?;
    match code {
        code::OK => {
            let a: RemoteAnswer = serde_json::from_slice(&out.stdout).map_err(|e| {
                anyhow::anyhow!("{host} answered `last` with something agentpane cannot read: {e}")
            })?;
            Ok(Some(a))
        }
        code::NOTHING => Ok(None),
        c => bail!(
            "{host}:{pane}: {} (exit {c})",
            explain(host, Some(c), &first_line(&out.stderr))
        ),
    }
}

/// What a host's `answer --json` printed.
#[derive(Debug, Clone)]
pub struct RemoteAnswered {
    /// Its JSON object, as that host printed it (checked to be one).
    pub json: serde_json::Value,
    /// `session:window.pane` there.
    pub target: String,
    /// What the pane asked (cleaned as the host document's requests are).
    pub request: Option<RemoteRequest>,
    pub keys: Vec<String>,
    pub closed: bool,
    /// Why nothing was typed (`refusal`, `reason`), when refused.
    pub refused: Option<(String, String)>,
}

/// The fields of `answer --json` read here.
#[derive(Deserialize)]
struct AnswerJson {
    outcome: String,
    target: String,
    #[serde(default)]
    request: Option<RequestSeen>,
    #[serde(default)]
    keys: Vec<String>,
    #[serde(default)]
    closed: bool,
    #[serde(default)]
    refusal: Option<String>,
    #[serde(default)]
    reason: Option<String>,
}

/// `answer PANE allow|deny [--always] [--request FP] --json` on `host` (`allow`: else deny): the host applies every
/// rule of a local answer itself. The remote command line holds fixed words, the checked pane
/// and a fingerprint of the shape agentpane writes; anything else is refused before ssh runs.
/// `Err` for bad input there (no such pane), a host too old for it, or a failed connection.
pub fn answer(
    ssh: &Ssh,
    host: &Host,
    pane: &str,
    allow: bool,
    always: bool,
    shown: Option<&str>,
) -> Result<RemoteAnswered> {
    let pane = remote_pane_arg(pane)?;
    if let Some(fp) = shown.filter(|fp| !Request::is_fingerprint(fp)) {
        bail!(
            "--request `{}` is not a request fingerprint (16 hex digits, as `panes --json` shows)",
            crate::text::terminal_line(&crate::text::chars(fp, 40))
        );
    }
    let mut words = vec!["answer", pane, if allow { "allow" } else { "deny" }];
    if always {
        words.push("--always");
    }
    if let Some(fp) = shown {
        words.extend(["--request", fp]);
    }
    words.push("--json");
    let (code, out) = ssh.run(host, &words, None, one_shot_timeout())?;
    if !matches!(code, code::OK | code::NOTHING) {
        let line = first_line(&out.stderr);
        if line.contains("no pane") {
            bail!("no pane `{pane}` on {host}");
        }
        bail!(
            "{host}:{pane}: {} (exit {code})",
            explain(host, Some(code), &line)
        );
    }
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).map_err(|e| {
        anyhow::anyhow!(
            "{host} answered `answer` with something agentpane cannot read ({e}): install the \
             same agentpane on both hosts"
        )
    })?;
    let a: AnswerJson = serde_json::from_value(json.clone()).map_err(|e| {
        anyhow::anyhow!(
            "{host} runs another agentpane ({e}): install the same agentpane on both hosts"
        )
    })?;
    let refused = (a.outcome != "answered").then(|| {
        (
            clean_text(a.refusal.as_deref().unwrap_or("refused")),
            clean_text(a.reason.as_deref().unwrap_or("refused on the host")),
        )
    });
    Ok(RemoteAnswered {
        json,
        target: clean_text(&a.target),
        request: a.request.map(RemoteRequest::from).map(doc::clean_seen),
        keys: a.keys.iter().map(|k| clean_text(k)).collect(),
        closed: a.closed,
        refused,
    })
}

/// How text is handed to a remote pane.
#[derive(Debug, Clone, Default)]
pub struct Delivery<'a> {
    /// The destination pane there.
    pub pane: &'a str,
    /// Where the text came from (a label for messages there).
    pub from: &'a str,
    pub no_submit: bool,
    /// Queued there when the destination is busy (its watcher delivers it).
    pub queue: bool,
    pub json: bool,
    /// Wait up to this many seconds there for the destination to be free.
    pub wait: Option<f64>,
    /// The message id: the host delivers one id at most once, so a retry after a dropped
    /// connection never pastes twice.
    pub id: Option<&'a str>,
}

/// What a remote delivery printed.
pub struct Delivered {
    /// Its stdout, passed on (control characters removed).
    pub stdout: String,
    /// Its one-line message (stderr), for a refusal.
    pub message: String,
}

/// Hands `text` to `host`'s agentpane on stdin, which delivers it with every local rule.
/// Returns its exit code and what it said; `Err` when the connection failed (then it is not
/// known whether the host received the text: retry with the same id).
pub fn deliver(ssh: &Ssh, host: &Host, d: &Delivery, text: &str) -> Result<(i32, Delivered)> {
    let pane = remote_pane_arg(d.pane)?;
    let mut words = vec!["deliver-stdin", pane, "--from", d.from];
    if d.no_submit {
        words.push("--no-submit");
    }
    if d.queue {
        words.push("--queue");
    }
    if d.json {
        words.push("--json");
    }
    if let Some(id) = d.id {
        words.extend(["--id", id]);
    }
    let wait = d
        .wait
        .filter(|s| s.is_finite() && *s > 0.0)
        .map(|s| s.min(86_400.0));
    let wait_text = wait.map(|s| format!("{s}"));
    if let Some(w) = &wait_text {
        words.extend(["--wait", w]);
    }
    let timeout = one_shot_timeout() + Duration::from_secs_f64(wait.unwrap_or(0.0));
    let (code, out) = ssh.run(host, &words, Some(text.as_bytes()), timeout)?;
    let stdout: String = String::from_utf8_lossy(&out.stdout)
        .chars()
        .filter(|c| !c.is_control() || *c == '\n')
        .collect();
    let message = match first_line(&out.stderr) {
        m if m.is_empty() && code == code::OK => stdout.trim().to_string(),
        m if m.is_empty() => format!("{host}:{pane}: not delivered (exit {code})"),
        m => format!("{host}: {}", explain(host, Some(code), &m)),
    };
    Ok((code, Delivered { stdout, message }))
}

/// Asks `host` whether `pane` there runs an agent that could take text (no text sent):
/// `Ok(None)` yes, `Ok(Some(why))` refused there (the reason, exit 6 on that side); `Err`
/// naming the pane and host when the host finds no such pane (bad input, exit 2 there).
pub fn check_destination(ssh: &Ssh, host: &Host, pane: &str) -> Result<Option<String>> {
    let pane = remote_pane_arg(pane)?;
    let words = ["deliver-stdin", pane, "--check"];
    let (code, out) = ssh.run(host, &words, None, one_shot_timeout())?;
    match code {
        code::OK => Ok(None),
        code::USAGE => {
            let line = first_line(&out.stderr);
            if line.contains("no pane") {
                bail!("no pane `{pane}` on {host}");
            }
            bail!("{host}:{pane}: {}", explain(host, Some(code), &line))
        }
        c => Ok(Some(format!(
            "{host}: {}",
            explain(host, Some(c), &first_line(&out.stderr))
        ))),
    }
}
