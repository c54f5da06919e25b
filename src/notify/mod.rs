//! Notifications away from the terminal (docs/design.md#notifications): one per alert, on the
//! channels one tmux option turns on (`@agentpane-notify 'terminal desktop ntfy webhook'`),
//! each saying which agent, where (host, `session:window.pane`, project folder) and why (the
//! state, the reason, for a wait the request). Everything quoted from an agent is cleaned of
//! control characters and escape sequences and cut short before any channel sees it.
//!
//! The watcher hands alerts to [`dispatch::Dispatcher`], which never blocks it: a router thread
//! reads the settings and the attached clients, then each channel has a worker with a small
//! queue of its own (the oldest dropped when full), so a hanging endpoint delays only itself.

#[cfg(all(unix, not(target_os = "macos")))]
mod bus;
pub mod config;
pub mod desktop;
pub mod dispatch;
pub mod http;
pub mod queue;
pub mod terminal;

use serde::Serialize;

use crate::alert::Alert;
use crate::state::State;
use crate::text;

pub use config::Config;

/// The longest title and body any channel is given, in characters.
pub const MAX_TITLE: usize = 100;
pub const MAX_BODY: usize = 400;
/// The longest request quoted, in characters.
const MAX_REQUEST: usize = 200;

/// Where a notification goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Channel {
    /// The user's own terminal, through the tmux client (OSC 777 / 9 / 99; crosses SSH).
    Terminal,
    /// The desktop of the machine the watcher runs on.
    Desktop,
    /// An ntfy topic (a phone push).
    Ntfy,
    /// A JSON webhook (Slack, Discord, Matrix, plain JSON).
    Webhook,
}

impl Channel {
    pub const ALL: [Channel; 4] = [
        Channel::Terminal,
        Channel::Desktop,
        Channel::Ntfy,
        Channel::Webhook,
    ];

    /// The name in `@agentpane-notify` and `agentpane notify test`.
    pub fn name(self) -> &'static str {
        match self {
            Channel::Terminal => "terminal",
            Channel::Desktop => "desktop",
            Channel::Ntfy => "ntfy",
            Channel::Webhook => "webhook",
        }
    }

    /// Parses a channel's name.
    pub fn parse(s: &str) -> Result<Channel, String> {
        Channel::ALL
            .into_iter()
            .find(|c| c.name() == s)
            .ok_or_else(|| format!("{s:?} is none of terminal, desktop, ntfy, webhook"))
    }
}

/// One notification, every field already safe to show.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Notification {
    /// `claude`, `codex`, … (`agent` when unknown).
    pub agent: String,
    /// The machine the agent runs on.
    pub host: String,
    /// `session:window.pane`.
    pub target: String,
    /// `%N`.
    pub pane: String,
    /// The pane's folder, `~` for the home folder.
    pub project: String,
    pub state: State,
    pub reason: Option<String>,
    /// For a wait: what the agent asks (the command, the file), shortened.
    pub request: Option<String>,
    /// One line, e.g. `claude waiting in agentpane`.
    pub title: String,
    /// What is asked or why, then where.
    pub body: String,
    /// The alert it was made from (the desktop channel's actions need it).
    #[serde(skip)]
    pub alert: Option<Alert>,
}

/// One line of untrusted text, safe for any terminal or notifier, at most `max` characters.
pub fn clean(text: &str, max: usize) -> String {
    let line = text::terminal_line(text);
    text::chars(
        line.split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .as_str(),
        max,
    )
}

impl Notification {
    /// The notification for `alert`, of an agent on `host` working in `folder`.
    pub fn new(alert: &Alert, host: &str, folder: &str) -> Notification {
        let agent = alert.agent.map(|a| a.name()).unwrap_or("agent").to_string();
        let request = alert.request.as_ref().map(|r| {
            let what = if r.summary.trim().is_empty() {
                r.tool.clone()
            } else {
                format!("{}: {}", r.tool, r.summary)
            };
            clean(&what, MAX_REQUEST)
        });
        let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
        let project = match &home {
            Some(h) => text::tilde(folder, h),
            None => folder.to_string(),
        };
        let mut n = Notification {
            agent: clean(&agent, 40),
            host: clean(host, 60),
            target: clean(&alert.target, 80),
            pane: clean(&alert.pane, 16),
            project: clean(&project, 120),
            state: alert.state,
            reason: alert.reason.as_deref().map(|r| clean(r, 120)),
            request,
            title: String::new(),
            body: String::new(),
            alert: Some(alert.clone()),
        };
        n.title = clean(&n.make_title(), MAX_TITLE);
        n.body = text::chars(&n.make_body(), MAX_BODY);
        n
    }

    /// The session the pane is in (tmux forbids `:` in a session's name).
    pub fn session(&self) -> &str {
        self.target
            .rsplit_once(':')
            .map_or(self.target.as_str(), |(s, _)| s)
    }

    fn make_title(&self) -> String {
        let what = match self.state {
            State::YourTurn => "your turn",
            other => other.as_str(),
        };
        let folder = self
            .project
            .trim_end_matches('/')
            .rsplit('/')
            .next()
            .filter(|f| !f.is_empty() && *f != "~");
        match folder {
            Some(f) => format!("{}: {what} in {f}", self.agent),
            None => format!("{}: {what}", self.agent),
        }
    }

    fn make_body(&self) -> String {
        let why = match (&self.request, &self.reason) {
            (Some(r), _) => r.clone(),
            (None, Some(r)) => r.clone(),
            (None, None) => match self.state {
                State::YourTurn => "finished its turn".to_string(),
                other => other.as_str().to_string(),
            },
        };
        format!("{why}\n{} {} {}", self.host, self.target, self.project)
    }

    /// A made-up one, for `agentpane notify test`.
    pub fn sample(host: &str) -> Notification {
        let alert = Alert {
            agent: None,
            pane: "%0".into(),
            target: "agentpane-test:1.0".into(),
            window: "@0".into(),
            state: State::Waiting,
            reason: Some("permission".into()),
            turn_key: None,
            transcript: None,
            at: chrono::Utc::now(),
            key: "agentpane-notify-test".into(),
            request: None,
            usage: None,
        };
        let mut n = Notification::new(&alert, host, "/tmp/example-project");
        n.request = Some("Bash: npm test (a test notification from agentpane)".into());
        n.body = n.make_body();
        n
    }
}

/// This machine's name (`localhost` when it has none).
pub fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer and its length are valid; gethostname writes at most len bytes.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    match String::from_utf8_lossy(&buf[..end]).trim() {
        name if rc == 0 && !name.is_empty() => name.to_string(),
        _ => "localhost".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::request::{PromptKind, Request, RequestSource};

    fn alert(state: State) -> Alert {
        Alert {
            agent: Some(crate::events::AgentKind::Codex),
            pane: "%3".into(),
            target: "work:2.1".into(),
            window: "@2".into(),
            state,
            reason: None,
            turn_key: None,
            transcript: None,
            at: chrono::Utc::now(),
            key: "k".into(),
            request: None,
            usage: None,
        }
    }

    #[test]
    fn a_finished_turn_names_agent_place_and_project() {
        let n = Notification::new(&alert(State::YourTurn), "box", "/srv/code/shop");
        assert_eq!(n.title, "codex: your turn in shop");
        assert_eq!(n.body, "finished its turn\nbox work:2.1 /srv/code/shop");
        assert_eq!(n.session(), "work");
    }

    #[test]
    fn a_wait_quotes_the_request_cleaned_and_short() {
        let mut a = alert(State::Waiting);
        a.request = Some(Request::new(
            PromptKind::Permission,
            "Bash",
            &format!(
                "rm -rf build \x1b]0;pwned\x07\x1b[2J\u{202e}{}",
                "x".repeat(500)
            ),
            "",
            None,
            RequestSource::Log,
        ));
        let n = Notification::new(&a, "box", "/srv/shop");
        let req = n.request.clone().unwrap();
        assert!(req.starts_with("Bash: rm -rf build "), "{req}");
        assert!(req.chars().count() <= MAX_REQUEST);
        for s in [&req, &n.title, &n.body] {
            assert!(!s.chars().any(text::is_control), "{s:?}");
            assert!(!s.contains("pwned"), "{s:?}");
        }
        assert!(n.body.starts_with(&req));
    }

    #[test]
    fn channel_names_round_trip() {
        for c in Channel::ALL {
            assert_eq!(Channel::parse(c.name()), Ok(c));
        }
        assert!(Channel::parse("pager").is_err());
    }
}
