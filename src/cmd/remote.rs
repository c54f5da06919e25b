//! The one-shot commands' side of remote hosts (docs/design.md#remote-hosts): the hosts'
//! panes (from the watcher's snapshot when it keeps a link, else one `serve --once` over the
//! shared connection), a remote pane's last answer, the picker's jump (the calls themselves
//! are in [`crate::remote::call`]).

use anyhow::{bail, Context as _, Result};
use serde::Deserialize;

use crate::exit;
use crate::proctree::ProcTable;
pub use crate::remote::call::fetch_answer;
use crate::remote::call::{first_line, one_shot_timeout};
use crate::remote::doc;
use crate::remote::link::{HostView, Link};
use crate::remote::ssh::{explain, Ssh};
use crate::remote::{remote_pane_arg, Host};
use crate::tmux::{Pane, Tmux};
use crate::watch::snapshot::Snapshot;

/// The snapshot's hosts, as the watcher wrote them.
#[derive(Deserialize)]
struct SnapshotHosts {
    #[serde(default)]
    hosts: Vec<HostView>,
}

/// Every host's view: the watcher's of the server `tmux` talks to when it has one for that
/// host, else asked now (the hosts in parallel, each within the connect timeout plus a
/// little).
pub fn views(tmux: &Tmux, hosts: &[Host]) -> Vec<HostView> {
    if hosts.is_empty() {
        return Vec::new();
    }
    let kept = kept_views(tmux);
    let ssh = Ssh::from_env();
    let asks: Vec<_> = hosts
        .iter()
        .map(|h| match kept.iter().find(|v| v.host == h.as_str()) {
            Some(v) if !matches!(v.link, Link::Connecting) => Err(v.clone()),
            _ => {
                let (ssh, h) = (ssh.clone(), h.clone());
                Ok(std::thread::spawn(move || ask(&ssh, &h)))
            }
        })
        .collect();
    asks.into_iter()
        .map(|a| match a {
            Err(kept) => kept,
            Ok(t) => t.join().unwrap_or_else(|_| HostView {
                host: String::new(),
                link: Link::Down {
                    reason: "internal error".into(),
                },
                since: chrono::Utc::now(),
            }),
        })
        .collect()
}

/// The hosts' views the watcher of the server `tmux` talks to keeps (its snapshot), without
/// asking any host: what the status segment shows, so a slow or dead host never holds it up.
/// None without that server (another server's watcher keeps other hosts).
pub fn kept_views(tmux: &Tmux) -> Vec<HostView> {
    crate::memory::server_dir(tmux)
        .ok()
        .and_then(|dir| std::fs::read(Snapshot::path(&dir)).ok())
        .map(|d| hosts_in(&d))
        .unwrap_or_default()
}

/// The hosts in a snapshot's bytes (none when it cannot be read).
pub fn hosts_in(snapshot: &[u8]) -> Vec<HostView> {
    serde_json::from_slice::<SnapshotHosts>(snapshot)
        .map(|s| s.hosts)
        .unwrap_or_default()
}

/// One `serve --once` on `host`.
fn ask(ssh: &Ssh, host: &Host) -> HostView {
    let link = match ssh.run(host, &["serve", "--once"], None, one_shot_timeout()) {
        Ok((0, out)) => {
            let line = out.stdout.split(|b| *b == b'\n').next().unwrap_or(&[]);
            match doc::parse(line) {
                Ok(doc) => Link::Up { doc },
                Err(e) => Link::Down {
                    reason: e.to_string(),
                },
            }
        }
        Ok((code, out)) => Link::Down {
            reason: explain(host, Some(code), &first_line(&out.stderr)),
        },
        Err(e) => Link::Down {
            reason: format!("{e:#}"),
        },
    };
    HostView {
        host: host.to_string(),
        link,
        since: chrono::Utc::now(),
    }
}

pub use crate::remote::this_host;

/// `last HOST:PANE`: the remote's answer printed here in `form`.
pub fn last(host: &Host, pane: &str, form: super::form::Form) -> Result<i32> {
    let ssh = Ssh::from_env();
    let Some(a) = fetch_answer(&ssh, host, pane)? else {
        eprintln!("agentpane: no answer in {host}:{pane} yet");
        return Ok(exit::NOTHING);
    };
    if form == super::form::Form::Json {
        #[derive(serde::Serialize)]
        struct Out<'a> {
            text: &'a str,
            agent: Option<&'a str>,
            source: &'static str,
            host: &'a str,
        }
        let out = Out {
            text: &a.text,
            agent: a.agent.as_deref(),
            source: "remote",
            host: host.as_str(),
        };
        println!("{}", serde_json::to_string(&out)?);
    } else {
        println!("{}", form.text(&a.text));
        eprintln!("(source: {host}:{})", crate::text::terminal_line(pane));
    }
    Ok(exit::OK)
}

/// A local pane's id; when `target` names no pane here and reads as `HOST:PANE` for a host
/// that is not configured, the error says so (exit 2) rather than only tmux's `no pane`.
pub fn local_pane(tmux: &Tmux, target: &str) -> Result<String> {
    match tmux.pane_id(target) {
        Ok(id) => Ok(id),
        Err(e @ crate::tmux::TmuxError::Command(_)) => {
            let sessions: Vec<String> = tmux
                .list_panes()
                .map(|ps| ps.into_iter().map(|p| p.session).collect())
                .unwrap_or_default();
            match crate::remote::unknown_host(target, &sessions) {
                Some(why) => bail!(why),
                None => Err(e.into()),
            }
        }
        Err(e) => Err(e.into()),
    }
}

/// A document's panes, with their host, for listings.
pub fn rows(views: &[HostView]) -> Vec<(&str, &doc::RemotePane)> {
    views
        .iter()
        .flat_map(|v| v.panes().iter().map(move |p| (v.host.as_str(), p)))
        .collect()
}

/// Enter on a remote pane in the picker: the local pane where a person already runs
/// `ssh HOST … tmux attach` when there is one (then the remote selects the pane), else a new
/// local window attached to the pane's session over ssh.
pub fn jump(tmux: &Tmux, client: Option<&str>, host: &Host, target: &str) -> Result<()> {
    let target = remote_pane_arg(target)?;
    let ssh = Ssh::from_env();
    if let Some(pane) = attached_pane(tmux, host) {
        super::client::switch_to(tmux, client, &pane)?;
        let (code, out) = ssh.run(host, &["focus", target], None, one_shot_timeout())?;
        if code != exit::OK {
            bail!(
                "{host}: {}",
                explain(host, Some(code), &first_line(&out.stderr))
            );
        }
        return Ok(());
    }
    let words = ssh.attach_words(host, target)?;
    let mut argv: Vec<String> = ["new-window", "-n", host.as_str()]
        .map(String::from)
        .to_vec();
    if let Some(c) = client {
        // The new window opens in the session that client shows.
        let session = tmux.cmd(&["display-message", "-p", "-c", c, "#{session_name}:"])?;
        argv.extend(["-t".to_string(), session.trim().to_string()]);
    }
    argv.extend(words);
    let refs: Vec<&str> = argv.iter().map(String::as_str).collect();
    tmux.cmd(&refs)
        .with_context(|| format!("cannot open a window on {host}"))?;
    Ok(())
}

/// A local pane running `ssh` to `host` with `tmux` and `attach` on its command line.
fn attached_pane(tmux: &Tmux, host: &Host) -> Option<Pane> {
    let panes = tmux.list_panes().ok()?;
    let roots: Vec<u32> = panes.iter().map(|p| p.pane_pid).collect();
    let table = ProcTable::capture(&roots);
    panes.into_iter().find(|pane| {
        let mut pids = table.descendants(&[pane.pane_pid]);
        pids.push(pane.pane_pid);
        pids.iter().filter_map(|pid| table.get(*pid)).any(|p| {
            p.name == "ssh"
                && p.argv.iter().any(|a| a == host.as_str())
                && p.argv.iter().any(|a| a.contains("tmux"))
                && p.argv.iter().any(|a| a.contains("attach") || a == "a")
        })
    })
}

/// `focus PANE` (hidden; what a remote picker runs here): makes PANE the current pane of its
/// window and that window the current one of its session.
pub fn focus(pane: &str, tmux: &Tmux) -> Result<i32> {
    let id = tmux.pane_id(pane)?;
    tmux.cmd(&["select-window", "-t", &id, ";", "select-pane", "-t", &id])?;
    Ok(exit::OK)
}
