//! `agentpane resolve [PANE]` (docs/design.md#resolving-a-pane) and `agentpane panes` (all agent
//! panes with their state), docs/design.md#tmux-surface.

use std::path::Path;

use anyhow::{bail, Result};
use chrono::Utc;
use serde::Serialize;

use super::Context;
use crate::cli::{PanesArgs, ResolveArgs};
use crate::events::{AgentKind, Time};
use crate::exit;
use crate::resolve::{Resolved, Via};
use crate::scan::{self, PaneReport};
use crate::state::Source;
use crate::state::State;
use crate::text::{age, terminal_line, terminal_safe};

/// One `resolve --json` object.
#[derive(Serialize)]
struct ResolveRow<'a> {
    pane_id: &'a str,
    target: String,
    cwd: &'a str,
    pane_pid: u32,
    agent: Option<AgentKind>,
    agent_pid: Option<u32>,
    agent_root: Option<&'a Path>,
    session_id: Option<&'a str>,
    transcript: Option<&'a Path>,
    via: Via,
    state: State,
    reason: Option<&'a str>,
    source: Source,
    at: Option<Time>,
    steps: &'a [String],
    /// While the agent retries a failed API call: `{attempt, limit, next_at}`.
    #[serde(skip_serializing_if = "Option::is_none")]
    retry: Option<&'a crate::state::Retry>,
}

impl<'a> ResolveRow<'a> {
    fn new(report: &'a PaneReport) -> ResolveRow<'a> {
        let r = &report.resolved;
        let agent = r.agent.as_ref();
        ResolveRow {
            pane_id: &r.pane.pane_id,
            target: r.pane.target(),
            cwd: &r.pane.cwd,
            pane_pid: r.pane.pane_pid,
            agent: agent.map(|a| a.kind),
            agent_pid: agent.map(|a| a.pid),
            agent_root: agent.and_then(|a| a.root.as_deref()),
            session_id: r.session_id.as_deref(),
            transcript: r.transcript.as_deref(),
            via: r.via,
            state: report.status.state,
            reason: report.status.reason.as_deref(),
            source: report.source,
            at: report.status.at,
            steps: &r.steps,
            retry: report.status.retry.as_ref(),
        }
    }
}

/// One `panes --json` row.
#[derive(Serialize)]
struct PaneRow<'a> {
    /// The remote host the pane is on; `null` here.
    host: Option<&'a str>,
    pane_id: &'a str,
    target: String,
    window_id: &'a str,
    cwd: &'a str,
    agent: Option<AgentKind>,
    agent_pid: Option<u32>,
    session_id: Option<&'a str>,
    transcript: Option<&'a Path>,
    via: Via,
    state: State,
    reason: Option<&'a str>,
    source: Source,
    at: Option<Time>,
    turn_key: Option<&'a str>,
    /// First line of the last answer (bounded read), when there is one.
    answer_head: Option<String>,
    /// While the agent retries a failed API call: `{attempt, limit, next_at}`.
    #[serde(skip_serializing_if = "Option::is_none")]
    retry: Option<&'a crate::state::Retry>,
    /// While `waiting`: what the agent asks to decide (`{kind, tool, summary, text, …}`).
    #[serde(skip_serializing_if = "Option::is_none")]
    request: Option<&'a crate::read::request::Request>,
    /// What the session used (docs/design.md#usage); `null` when unknown.
    usage: Option<&'a crate::usage::Usage>,
    /// The plan windows the session revealed.
    limits: &'a [crate::usage::Limit],
}

impl<'a> PaneRow<'a> {
    fn new(report: &'a PaneReport) -> PaneRow<'a> {
        let r = &report.resolved;
        PaneRow {
            host: None,
            pane_id: &r.pane.pane_id,
            target: r.pane.target(),
            window_id: &r.pane.window_id,
            cwd: &r.pane.cwd,
            agent: r.agent.as_ref().map(|a| a.kind),
            agent_pid: r.agent.as_ref().map(|a| a.pid),
            session_id: r.session_id.as_deref(),
            transcript: r.transcript.as_deref(),
            via: r.via,
            state: report.status.state,
            reason: report.status.reason.as_deref(),
            source: report.source,
            at: report.status.at,
            turn_key: report.status.turn_key.as_deref(),
            answer_head: answer_head(report),
            retry: report.status.retry.as_ref(),
            request: report.status.request.as_ref(),
            usage: report.usage.as_ref().map(|m| &m.usage),
            limits: report.usage.as_ref().map_or(&[], |m| &m.limits),
        }
    }
}

/// The head of the pane's last answer, reading at most 2 MiB back.
fn answer_head(report: &PaneReport) -> Option<String> {
    let path = report.resolved.transcript.as_deref()?;
    let budget = crate::read::Budget {
        max_bytes: 2 * 1024 * 1024,
        max_lines: 5_000,
    };
    let agent = report.resolved.agent.as_ref().map(|a| a.kind);
    let answer = crate::extract::last_answer_within(path, agent, budget).ok()??;
    Some(answer.head(HEAD))
}

/// A pane without an agent reads as state `none`.
fn report_for(tmux: &crate::tmux::Tmux, resolved: Resolved, now: Time) -> PaneReport {
    if resolved.agent.is_some() {
        let report = scan::report(resolved, now);
        return scan::with_evidence(report, tmux, &crate::paths::state_dir(), now);
    }
    let mut status = crate::state::Status::idle();
    status.state = State::None;
    PaneReport {
        resolved: std::sync::Arc::new(resolved),
        status,
        source: Source::None,
        usage: None,
    }
}

pub fn resolve(args: ResolveArgs, ctx: &Context) -> Result<i32> {
    let tmux = ctx.tmux();
    let now = Utc::now();
    let reports: Vec<PaneReport> = match &args.pane {
        Some(target) => match scan::resolve_target(&tmux, target, now)? {
            Some(r) => vec![report_for(&tmux, r, now)],
            None => bail!("no pane matches the tmux target `{target}`"),
        },
        None => scan::scan(&tmux, now)?,
    };
    if args.json {
        let rows: Vec<ResolveRow> = reports.iter().map(ResolveRow::new).collect();
        let text = match (&args.pane, rows.as_slice()) {
            (Some(_), [one]) => serde_json::to_string_pretty(one)?,
            _ => serde_json::to_string_pretty(&rows)?,
        };
        println!("{text}");
        return Ok(exit::OK);
    }
    if reports.is_empty() {
        eprintln!("agentpane: no pane on this tmux server runs a coding agent");
        return Ok(exit::OK);
    }
    let blocks: Vec<String> = reports.iter().map(|r| chain_text(r, now)).collect();
    println!("{}", blocks.join("\n"));
    Ok(exit::OK)
}

/// The chain as text: one line per link, the link where it broke marked; terminal-safe (a
/// path, a command line or a reason may carry escape sequences).
fn chain_text(report: &PaneReport, now: Time) -> String {
    let r = &report.resolved;
    let mut out = String::new();
    for (i, step) in r.steps.iter().enumerate() {
        let (label, detail) = step.split_once(": ").unwrap_or(("", step));
        let prefix = if i == 0 { "" } else { "  → " };
        out.push_str(&format!("{prefix}{label:<15} {detail}\n"));
    }
    if r.agent.is_none() {
        out.push_str("  ✗ no agent in this pane (state: none)\n");
    } else if r.transcript.is_none() {
        out.push_str(&format!(
            "  ✗ the chain breaks before a transcript (via: {})\n",
            r.via.as_str()
        ));
    } else {
        let s = &report.status;
        let reason = s
            .reason
            .as_deref()
            .map(|r| format!(" ({r})"))
            .unwrap_or_default();
        let when =
            s.at.map(|at| format!(", {} ago", age(now, at)))
                .unwrap_or_default();
        out.push_str(&format!(
            "  → {:<15} {}{reason}{when} [source: {}]\n",
            "state",
            s.state,
            report.source.as_str()
        ));
    }
    terminal_safe(&out).into_owned()
}

pub fn panes(args: PanesArgs, ctx: &Context) -> Result<i32> {
    let now = Utc::now();
    // With the observation memory, as `status` does: `stalled` and acknowledged turns agree.
    let tmux = ctx.tmux();
    let mut reports =
        crate::memory::remembered_scan(&tmux, now, &crate::state::Windows::default())?;
    super::usage::fill(&tmux, &mut reports);
    let views = super::remote::views(&tmux, &ctx.remote_hosts()?);
    for v in views.iter().filter(|v| v.is_down()) {
        if let crate::remote::link::Link::Down { reason } = &v.link {
            eprintln!("agentpane: {} is unreachable: {reason}", v.host);
        }
    }
    let remote = super::remote::rows(&views);
    if args.json {
        let rows: Vec<Row> = reports
            .iter()
            .map(|r| Row::Local(Box::new(PaneRow::new(r))))
            .chain(remote.iter().map(|(host, p)| Row::remote(host, p)))
            .collect();
        println!("{}", serde_json::to_string_pretty(&rows)?);
        return Ok(exit::OK);
    }
    if reports.is_empty() && remote.is_empty() {
        eprintln!("agentpane: no pane on this tmux server runs a coding agent");
        return Ok(exit::OK);
    }
    print!(
        "{}",
        table(&reports, &remote, now, &crate::paths::home_dir())
    );
    Ok(exit::OK)
}

/// The reason, and while waiting what is asked (`permission: Bash · rm -rf build`).
fn reason_cell(reason: Option<&str>, summary: Option<&str>) -> String {
    let reason = reason.unwrap_or("-");
    match summary {
        Some(s) if !s.is_empty() => {
            format!("{reason} · {}", crate::text::chars(&terminal_line(s), 50))
        }
        _ => reason.to_string(),
    }
}
/// The context and cost cells of a pane's row (`-` when unknown).
fn usage_cells(u: Option<&crate::usage::Usage>) -> (String, String) {
    u.map_or(("-".into(), "-".into()), |u| {
        (crate::usage::context_cell(u), crate::usage::cost_cell(u))
    })
}

/// A `panes --json` row: a local pane, or a remote one with its `host`.
#[derive(Serialize)]
#[serde(untagged)]
enum Row<'a> {
    Local(Box<PaneRow<'a>>),
    Remote {
        host: &'a str,
        /// As a local row's: the first line, as long as a local row's.
        answer_head: Option<String>,
        #[serde(flatten)]
        pane: Box<crate::remote::doc::RemotePane>,
    },
}

impl<'a> Row<'a> {
    /// A remote pane's row: the head it sent is cut as a local one is.
    fn remote(host: &'a str, p: &crate::remote::doc::RemotePane) -> Row<'a> {
        let mut pane = Box::new(p.clone());
        Row::Remote {
            host,
            answer_head: pane.answer_head.take().map(|h| remote_head(&h)),
            pane,
        }
    }
}

/// Characters of the last answer's first line a `panes` row shows.
const HEAD: usize = 60;

/// A remote pane's answer head, as long as a local row's.
fn remote_head(head: &str) -> String {
    crate::text::chars(head, HEAD)
}

/// The `panes` table: target, agent, state, reason, age, cwd, last answer head; remote panes
/// after the local ones, their target `HOST:TARGET`. Every cell is terminal-safe, one line.
fn table(
    reports: &[PaneReport],
    remote: &[(&str, &crate::remote::doc::RemotePane)],
    now: Time,
    home: &Path,
) -> String {
    let header = [
        "TARGET",
        "AGENT",
        "STATE",
        "REASON",
        "AGE",
        "CTX",
        "COST",
        "CWD",
        "LAST ANSWER",
    ]
    .map(String::from);
    let mut rows = vec![header];
    for rep in reports {
        let r = &rep.resolved;
        let mut state = rep.status.state.to_string();
        if rep.status.seen && rep.status.state == State::YourTurn {
            state.push_str(" (seen)");
        }
        rows.push([
            r.pane.target(),
            r.agent.as_ref().map_or("-".into(), |a| a.kind.to_string()),
            state,
            reason_cell(
                rep.status.reason.as_deref(),
                rep.status.request.as_ref().map(|r| r.summary.as_str()),
            ),
            rep.status
                .at
                .or(rep.status.last_activity)
                .map_or("-".into(), |at| age(now, at)),
            usage_cells(rep.usage.as_deref().map(|m| &m.usage)).0,
            usage_cells(rep.usage.as_deref().map(|m| &m.usage)).1,
            crate::text::tilde(&r.pane.cwd, home),
            answer_head(rep).unwrap_or_else(|| "-".into()),
        ]);
    }
    for (host, p) in remote {
        let mut state = p.state.to_string();
        if p.seen && p.state == State::YourTurn {
            state.push_str(" (seen)");
        }
        rows.push([
            format!("{host}:{}", p.target),
            p.agent.clone().unwrap_or_else(|| "-".into()),
            state,
            reason_cell(
                p.reason.as_deref(),
                p.request.as_ref().map(|r| r.summary.as_str()),
            ),
            p.at.map_or("-".into(), |at| age(now, at)),
            usage_cells(p.usage.as_ref()).0,
            usage_cells(p.usage.as_ref()).1,
            "-".into(),
            p.answer_head
                .as_deref()
                .map_or_else(|| "-".into(), remote_head),
        ]);
    }
    let rows: Vec<[String; 9]> = rows
        .into_iter()
        .map(|row| row.map(|cell| terminal_line(&cell)))
        .collect();
    let mut widths = [0usize; 9];
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    for row in &rows {
        let mut line = String::new();
        for (i, cell) in row.iter().enumerate() {
            if i + 1 == row.len() {
                line.push_str(cell);
            } else {
                let pad = widths[i] - cell.chars().count();
                line.push_str(cell);
                line.push_str(&" ".repeat(pad + 2));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::testkit::{report, t};
    use crate::text::{assert_terminal_safe, HOSTILE};

    /// A waiting pane whose cwd, command, reason and request all carry escape sequences.
    fn hostile() -> PaneReport {
        let mut r = report(1, 1, State::Waiting, 0);
        r.status.reason = Some(format!("permission {HOSTILE}"));
        r.status.request = Some(crate::read::request::Request::new(
            crate::read::request::PromptKind::Permission,
            "Bash",
            HOSTILE,
            HOSTILE,
            None,
            crate::read::request::RequestSource::Log,
        ));
        let resolved = std::sync::Arc::make_mut(&mut r.resolved);
        resolved.pane.cwd = format!("/src/{HOSTILE}");
        resolved.steps = vec![
            format!("pane: %1 in /src/{HOSTILE}"),
            format!("agent: claude {HOSTILE}"),
        ];
        r
    }

    #[test]
    fn the_panes_table_is_terminal_safe() {
        let out = table(&[hostile()], &[], t(5), Path::new("/home/u"));
        assert_terminal_safe(&out);
        assert!(out.contains("permission abcdef · abcdef"), "{out}");
        assert!(out.contains("/src/abcdef"), "{out}");
    }

    #[test]
    fn the_resolve_chain_is_terminal_safe() {
        let out = chain_text(&hostile(), t(5));
        assert_terminal_safe(&out);
        assert!(out.contains("claude abcdef"), "{out}");
        assert!(out.contains("(permission abcdef)"), "{out}");
    }
}
