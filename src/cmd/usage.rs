//! `agentpane usage`: what every agent pane's session used and every plan window its agents
//! revealed, on this host and the remote ones (docs/design.md#usage).

use anyhow::Result;
use chrono::Utc;
use serde::Serialize;

use super::Context;
use crate::cli::UsageArgs;
use crate::events::Time;
use crate::exit;
use crate::text::terminal_line;
use crate::usage::{self, Limit, Usage};

/// One pane of `usage --json`.
#[derive(Serialize)]
struct PaneUsage<'a> {
    /// The remote host the pane is on; `null` here.
    host: Option<&'a str>,
    pane_id: &'a str,
    target: String,
    agent: Option<String>,
    /// `null` when nothing is known.
    usage: Option<&'a Usage>,
    limits: &'a [Limit],
}

/// One plan window of `usage --json`, with the host whose agents revealed it.
#[derive(Serialize)]
struct HostLimit<'a> {
    host: Option<&'a str>,
    #[serde(flatten)]
    limit: &'a Limit,
}

#[derive(Serialize)]
struct Out<'a> {
    panes: Vec<PaneUsage<'a>>,
    limits: Vec<HostLimit<'a>>,
}

/// One pane of the watcher's snapshot, as far as usage goes.
#[derive(serde::Deserialize)]
struct KeptPane {
    pane_id: String,
    transcript: Option<std::path::PathBuf>,
    usage: Option<Usage>,
    #[serde(default)]
    limits: Vec<Limit>,
}

#[derive(serde::Deserialize)]
struct Kept {
    panes: Vec<KeptPane>,
}

/// Fills in what each pane's session used: from the snapshot of the watcher serving this
/// server when it has the pane's session (it follows the logs), else its log read forward
/// once.
pub(super) fn fill(tmux: &crate::tmux::Tmux, reports: &mut [crate::scan::PaneReport]) {
    let kept = crate::memory::server_dir(tmux)
        .ok()
        .filter(|_| {
            tmux.socket_path()
                .is_ok_and(|s| crate::watch::running(&crate::paths::state_dir(), &s))
        })
        .and_then(|dir| std::fs::read(crate::watch::snapshot::Snapshot::path(&dir)).ok())
        .and_then(|data| serde_json::from_slice::<Kept>(&data).ok());
    for p in kept.map(|k| k.panes).unwrap_or_default() {
        let Some(usage) = p.usage else { continue };
        let same = |r: &&mut crate::scan::PaneReport| {
            r.resolved.pane.pane_id == p.pane_id && r.resolved.transcript == p.transcript
        };
        if let Some(r) = reports.iter_mut().find(same) {
            r.usage = Some(std::sync::Arc::new(usage::Metered {
                usage,
                limits: p.limits,
            }));
        }
    }
    crate::scan::measure_usage(reports);
}

pub fn run(args: UsageArgs, ctx: &Context) -> Result<i32> {
    let tmux = ctx.tmux();
    let now = Utc::now();
    let mut reports = crate::scan::scan(&tmux, now)?;
    fill(&tmux, &mut reports);
    let views = super::remote::views(&tmux, &ctx.remote_hosts()?);
    for v in views.iter().filter(|v| v.is_down()) {
        if let crate::remote::link::Link::Down { reason } = &v.link {
            eprintln!("agentpane: {} is unreachable: {reason}", v.host);
        }
    }
    let remote = super::remote::rows(&views);
    let mut panes: Vec<PaneUsage> = reports
        .iter()
        .map(|r| PaneUsage {
            host: None,
            pane_id: &r.resolved.pane.pane_id,
            target: r.resolved.pane.target(),
            agent: r.resolved.agent.as_ref().map(|a| a.kind.to_string()),
            usage: r.usage.as_ref().map(|m| &m.usage),
            limits: r.usage.as_ref().map_or(&[], |m| &m.limits),
        })
        .collect();
    panes.extend(remote.iter().map(|(host, p)| PaneUsage {
        host: Some(host),
        pane_id: &p.pane_id,
        target: p.target.clone(),
        agent: p.agent.clone(),
        usage: p.usage.as_ref(),
        limits: &p.limits,
    }));
    let limits = plan_windows(&panes);
    let out = Out { panes, limits };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(exit::OK);
    }
    if out.panes.is_empty() {
        eprintln!("agentpane: no pane on this tmux server runs a coding agent");
        return Ok(exit::OK);
    }
    print!("{}", text(&out, now));
    Ok(exit::OK)
}

/// Every host's plan windows once, the newest word on each, tightest first.
fn plan_windows<'a>(panes: &[PaneUsage<'a>]) -> Vec<HostLimit<'a>> {
    let mut hosts: Vec<Option<&str>> = panes.iter().map(|p| p.host).collect();
    hosts.dedup();
    let mut out: Vec<HostLimit> = Vec::new();
    for host in hosts {
        let merged = usage::merge_limits(
            panes
                .iter()
                .filter(|p| p.host == host)
                .flat_map(|p| p.limits),
        );
        for m in merged {
            // The merged copy equals one of the panes' windows: point at that one.
            let found = panes
                .iter()
                .filter(|p| p.host == host)
                .flat_map(|p| p.limits)
                .find(|l| **l == m);
            out.extend(found.map(|limit| HostLimit { host, limit }));
        }
    }
    out.sort_by(|a, b| b.limit.used_percent.total_cmp(&a.limit.used_percent));
    out
}

/// The table of panes, then the plan windows. Every cell terminal-safe, one line.
fn text(out: &Out, now: Time) -> String {
    let mut rows =
        vec![["TARGET", "AGENT", "MODEL", "CONTEXT", "IN", "OUT", "COST"].map(String::from)];
    for p in &out.panes {
        let target = match p.host {
            Some(h) => format!("{h}:{}", p.target),
            None => p.target.clone(),
        };
        let u = p.usage.cloned().unwrap_or_default();
        let n = |v: Option<u64>| v.map_or("-".into(), usage::tokens);
        let context = match (u.context_tokens, u.context_window) {
            (Some(t), Some(w)) => format!(
                "{}/{} {}",
                usage::tokens(t),
                usage::tokens(w),
                usage::context_cell(&u)
            ),
            _ => usage::context_cell(&u),
        };
        rows.push([
            target,
            p.agent.clone().unwrap_or_else(|| "-".into()),
            u.model.clone().unwrap_or_else(|| "-".into()),
            context,
            n(u.session_input),
            n(u.session_output),
            usage::cost_cell(&u),
        ]);
    }
    let mut s = columns(&rows);
    if !out.limits.is_empty() {
        s.push_str("\nPLAN WINDOWS\n");
        let rows: Vec<[String; 4]> = out
            .limits
            .iter()
            .map(|h| {
                let l = h.limit;
                let who = match h.host {
                    Some(host) => format!("{host}: {}", l.agent),
                    None => l.agent.to_string(),
                };
                let resets = l.resets_at.map_or("-".into(), |at| {
                    if at > now {
                        format!("resets in {}", crate::text::age(at, now))
                    } else {
                        "reset".into()
                    }
                });
                [
                    who,
                    l.name.clone(),
                    format!("{:.0}% used", l.used_percent),
                    resets,
                ]
            })
            .collect();
        s.push_str(&columns(&rows));
    }
    s
}

/// Rows as aligned columns, each cell one terminal-safe line.
fn columns<const N: usize>(rows: &[[String; N]]) -> String {
    let rows: Vec<[String; N]> = rows
        .iter()
        .map(|r| r.clone().map(|c| terminal_line(&c)))
        .collect();
    let mut widths = [0usize; N];
    for row in &rows {
        for (w, c) in widths.iter_mut().zip(row) {
            *w = (*w).max(c.chars().count());
        }
    }
    let mut out = String::new();
    for row in &rows {
        let line: Vec<String> = row
            .iter()
            .zip(widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::AgentKind;
    use crate::text::{assert_terminal_safe, HOSTILE};

    fn limit(name: &str, used: f64, seen: i64) -> Limit {
        Limit {
            agent: AgentKind::Codex,
            name: name.into(),
            used_percent: used,
            window_minutes: Some(300),
            resets_at: chrono::DateTime::from_timestamp(10_000, 0),
            seen_at: chrono::DateTime::from_timestamp(seen, 0),
        }
    }

    #[test]
    fn each_hosts_windows_once_and_the_text_is_terminal_safe() {
        let usage = Usage {
            model: Some(format!("gpt-{HOSTILE}")),
            context_tokens: Some(22549),
            context_window: Some(258400),
            context_percent: Some(8.7),
            session_input: Some(22539),
            session_output: Some(10),
            cost_usd: None,
        };
        let (old, new, week) = (
            [limit("5h", 10.0, 1)],
            [limit("5h", 62.0, 2)],
            [limit("7d", 5.0, 1)],
        );
        let pane = |host, limits| PaneUsage {
            host,
            pane_id: "%1",
            target: "s:1.0".into(),
            agent: Some("codex".into()),
            usage: Some(&usage),
            limits,
        };
        let panes = vec![
            pane(None, &old[..]),
            pane(None, &new[..]),
            pane(Some("box"), &week[..]),
        ];
        let limits = plan_windows(&panes);
        let got: Vec<(Option<&str>, f64)> = limits
            .iter()
            .map(|h| (h.host, h.limit.used_percent))
            .collect();
        assert_eq!(got, vec![(None, 62.0), (Some("box"), 5.0)]);
        let out = Out { panes, limits };
        let s = text(
            &out,
            chrono::DateTime::from_timestamp(10_000 - 4000, 0).unwrap(),
        );
        assert_terminal_safe(&s);
        assert!(s.contains("22.5k/258.4k 9%"), "{s}");
        assert!(s.contains("box: codex  7d"), "{s}");
        assert!(s.contains("62% used  resets in 1h"), "{s}");
    }
}
