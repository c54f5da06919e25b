//! Agents on other hosts, over SSH (docs/design.md#remote-hosts). The same agentpane runs on
//! each host; the local one reaches it through `ssh` with a shared connection per host:
//! - `doc`: the document a remote streams, read strictly;
//! - `ssh`: the one place that builds an `ssh` command line (batch mode, connection sharing);
//! - `control`: where the shared connections' sockets live (a short private path);
//! - `link`: the connection a watcher keeps per host, with reconnects and backoff;
//! - `call`: one-shot calls over the shared connection (`last`, a destination check, delivery);
//! - this file: host names and `HOST:PANE` targets.
//!
//! Routed text crosses to another host only on ssh's stdin; the remote command line holds
//! nothing but fixed words and values checked here (host names, pane ids, numbers).

pub mod call;
pub mod control;
pub mod doc;
pub mod link;
pub mod ssh;

use anyhow::{bail, Result};

/// A host name as `ssh` resolves it (an alias of `~/.ssh/config`, a name, `user@name`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Host(String);

impl Host {
    /// Checks a name: letters, digits, `.`, `_`, `-`, `@`, not starting with `-` (never an ssh
    /// option), at most 253 characters.
    pub fn parse(name: &str) -> Result<Host> {
        let ok = !name.is_empty()
            && name.len() <= 253
            && !name.starts_with('-')
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-' | b'@'));
        if !ok {
            bail!("`{name}` is not a host name agentpane accepts (letters, digits, . _ - @)");
        }
        Ok(Host(name.to_string()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for Host {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The configured hosts: `--host` flags, then the words of `@agentpane-hosts`; duplicates
/// dropped, a bad name an error naming it.
pub fn hosts_from<'a>(
    flags: impl IntoIterator<Item = &'a str>,
    option: &'a str,
) -> Result<Vec<Host>> {
    let mut out: Vec<Host> = Vec::new();
    for name in flags.into_iter().chain(option.split_whitespace()) {
        let host = Host::parse(name)?;
        if !out.contains(&host) {
            out.push(host);
        }
    }
    Ok(out)
}

/// A pane target that may name a host: `devbox:%3`, `devbox:work:1.0`, or a local `%3`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target<'a> {
    Local(&'a str),
    Remote(Host, &'a str),
}

/// Splits `HOST:PANE` when HOST is one of `hosts`; anything else is a local tmux target (whose
/// own `session:window` form stays local, so a session named like no host is never remote).
pub fn split_target<'a>(target: &'a str, hosts: &[Host]) -> Target<'a> {
    if let Some((host, pane)) = target.split_once(':') {
        if let Some(h) = hosts.iter().find(|h| h.as_str() == host) {
            return Target::Remote(h.clone(), pane);
        }
    }
    Target::Local(target)
}

/// Why a `NAME:PANE` target that names no pane here reads as a host that is not configured:
/// NAME is a host name and no session of this server (`sessions`) is called so. `None` when
/// the target is a plain local one.
pub fn unknown_host(target: &str, sessions: &[String]) -> Option<String> {
    let (name, _) = target.split_once(':')?;
    if Host::parse(name).is_err() || sessions.iter().any(|s| s == name) {
        return None;
    }
    Some(format!(
        "no pane `{target}` here: {name} is not a remote host here \
         (add it to @agentpane-hosts or pass --host {name})"
    ))
}

/// A pane target handed to a remote command line: a pane id or a `session:window.pane` of
/// plain characters (no spaces, quotes or shell syntax), else an error.
pub fn remote_pane_arg(pane: &str) -> Result<&str> {
    let ok = !pane.is_empty()
        && pane.len() <= 200
        && !pane.starts_with('-')
        && pane.bytes().all(|b| {
            b.is_ascii_alphanumeric() || matches!(b, b'%' | b'.' | b':' | b'_' | b'-' | b'@')
        });
    if !ok {
        bail!("remote pane `{pane}`: use a pane id (`%3`) or a plain `session:window.pane`");
    }
    Ok(pane)
}

/// This machine's name (a route's label on the other host).
pub fn this_host() -> String {
    let name = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    let name: String = name
        .trim()
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
        .collect();
    if name.is_empty() {
        "local".into()
    } else {
        name
    }
}

/// Marks a host that cannot be reached in the status segment (`devbox ✕`).
pub const DOWN_GLYPH: &str = "✕";

/// Adds the remote hosts' agents to `counts` (so `{working}` and the rest count every host)
/// and returns the remote placeholders: `{hosts}`, each reachable host with agents and its own
/// counts (`devbox ⚡1 ●2`), and `{down}`, each unreachable host (`devbox ✕`).
pub fn status_parts(
    views: &[link::HostView],
    icons: &crate::segment::Icons,
    counts: &mut crate::segment::Counts,
    now: crate::events::Time,
) -> Vec<(&'static str, String)> {
    use crate::segment::{render, Counts};
    let mut hosts = Vec::new();
    let mut down = Vec::new();
    for v in views {
        if v.is_down() {
            down.push(format!("{} {DOWN_GLYPH}", v.host));
            continue;
        }
        let mut own = Counts::default();
        for p in v.panes() {
            counts.add(p.state, p.seen, p.resets_at, now);
            own.add(p.state, p.seen, p.resets_at, now);
        }
        let line = render(
            "{working} {your_turn} {waiting} {attention} {stalled}",
            icons,
            &own,
            now,
        );
        if !line.is_empty() {
            hosts.push(format!("{} {line}", v.host));
        }
    }
    vec![("hosts", hosts.join(" · ")), ("down", down.join(" "))]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_names_never_become_options_or_shell() {
        for bad in ["-oProxyCommand=x", "a b", "a;b", "", "a$(x)", "é"] {
            assert!(Host::parse(bad).is_err(), "{bad}");
        }
        for good in ["devbox", "gpu1.example.org", "me@box", "my_host-2"] {
            assert!(Host::parse(good).is_ok(), "{good}");
        }
    }

    #[test]
    fn only_configured_hosts_make_a_target_remote() {
        let hosts = hosts_from(["devbox"], "gpu1 devbox").unwrap();
        assert_eq!(hosts.len(), 2);
        let devbox = Host::parse("devbox").unwrap();
        assert_eq!(
            split_target("devbox:%3", &hosts),
            Target::Remote(devbox.clone(), "%3")
        );
        assert_eq!(
            split_target("devbox:work:1.0", &hosts),
            Target::Remote(devbox, "work:1.0")
        );
        assert_eq!(split_target("work:1.0", &hosts), Target::Local("work:1.0"));
        assert_eq!(split_target("%3", &hosts), Target::Local("%3"));
    }

    #[test]
    fn a_host_that_is_not_configured_is_named_as_such() {
        let sessions = vec!["main".to_string()];
        let why = unknown_host("nosuchhost:%3", &sessions).unwrap();
        assert!(
            why.contains("nosuchhost is not a remote host here (add it to @agentpane-hosts or pass --host nosuchhost)"),
            "{why}"
        );
        // A session of this server, a plain pane id, a name no host can have: local.
        assert_eq!(unknown_host("main:2.0", &sessions), None);
        assert_eq!(unknown_host("%3", &sessions), None);
        assert_eq!(unknown_host("a b:%3", &sessions), None);
    }

    #[test]
    fn remote_pane_arguments_are_plain() {
        assert!(remote_pane_arg("%3").is_ok());
        assert!(remote_pane_arg("work:1.0").is_ok());
        for bad in ["%3 x", "a;b", "$(x)", "-x", "'", ""] {
            assert!(remote_pane_arg(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn remote_agents_count_with_the_local_ones_and_a_down_host_is_named() {
        use crate::segment::{render_with, Counts, Icons, DEFAULT_FORMAT};
        use crate::state::State;
        let now = chrono::Utc::now();
        let pane = |id: &str, state| doc::RemotePane {
            pane_id: id.into(),
            target: "w:1.0".into(),
            agent: Some("codex".into()),
            state,
            seen: false,
            reason: None,
            turn_key: None,
            at: None,
            resets_at: None,
            answer_head: None,
            usage: None,
            limits: Vec::new(),
            request: None,
        };
        let view = |host: &str, link| link::HostView {
            host: host.into(),
            link,
            since: now,
        };
        let views = [
            view(
                "devbox",
                link::Link::Up {
                    doc: doc::Document::new(
                        vec![pane("%1", State::Working), pane("%2", State::YourTurn)],
                        None,
                    ),
                },
            ),
            view(
                "gpu1",
                link::Link::Down {
                    reason: "refused".into(),
                },
            ),
            view("new", link::Link::Connecting),
        ];
        let icons = Icons::default();
        let mut counts = Counts {
            your_turn: 1,
            ..Counts::default()
        };
        let extra = status_parts(&views, &icons, &mut counts, now);
        assert_eq!(counts.working, 1);
        assert_eq!(counts.your_turn, 2);
        assert_eq!(
            extra,
            vec![("hosts", "devbox ⚡1 ●1".into()), ("down", "gpu1 ✕".into())]
        );
        assert_eq!(
            render_with(DEFAULT_FORMAT, &icons, &counts, &extra, now),
            "⚡1 ●2 gpu1 ✕"
        );
        // No agents anywhere, one host down: the segment still says so.
        let extra = status_parts(&views[1..], &icons, &mut Counts::default(), now);
        assert_eq!(
            render_with(DEFAULT_FORMAT, &icons, &Counts::default(), &extra, now),
            "gpu1 ✕"
        );
    }
}
