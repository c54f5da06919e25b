//! `agentpane relay A B …` (docs/design.md#loop-guard): between two panes of this tmux server
//! in the watcher or here in the foreground; with a side on another host (`HOST:PANE`,
//! docs/routing.md#remote-hosts) in the watcher, which keeps the connection to that host.

use anyhow::{bail, Context as _, Result};
use chrono::Utc;

use super::wait::{PaneWait, Woke};
use super::Context;
use crate::cli::RelayArgs;
use crate::exit;
use crate::extract::cache::AnswerCache;
use crate::remote::link::Link;
use crate::remote::{remote_pane_arg, split_target, Host, Target};
use crate::route::deliver;
use crate::route::queue::{new_id, Store};
use crate::route::recipient;
use crate::route::relay::{RelayState, Turn};
use crate::route::relays::{outcome_name, End, Registration, Registry, Runner, SideAgent};
use crate::route::source::{pane_answer, report_of};
use crate::route::template::Template;
use crate::scan::{self, PaneReport};
use crate::tmux::Tmux;

pub fn relay(args: RelayArgs, ctx: &Context) -> Result<i32> {
    let tmux = ctx.tmux();
    let hosts = ctx.remote_hosts()?;
    let (a, b, across) = sides(&tmux, &hosts, &args.a, &args.b, args.stop)?;
    let server = tmux.socket_path()?;
    let registry = Registry::open_default()?;
    if args.stop {
        let (code, line) = stop(&registry, &server, &a, &b);
        eprintln!("agentpane: {line}");
        return Ok(code);
    }
    let template = args.template.as_deref().map(Template::load).transpose()?;
    let watcher = crate::watch::running(&crate::paths::state_dir(), &server);
    if across && (args.foreground || !watcher) {
        bail!(
            "a relay with a pane on another host runs in the watcher, which keeps the \
             connection to that host: start it (`agentpane watch`, or the tmux plugin does) \
             and run `agentpane relay {} {}` again",
            args.a,
            args.b
        );
    }
    if !args.foreground && watcher {
        let (code, line) = register(
            &tmux,
            &registry,
            &server,
            [&a, &b],
            args.rounds,
            args.template.as_deref(),
        )?;
        eprintln!("agentpane: {line}");
        return Ok(code);
    }
    // Both sides must be agents now; the relay holds them to it (docs/design.md#delivery).
    let reports = scan::scan(&tmux, Utc::now())?;
    let agents = match (
        side_agent(&tmux, &reports, &a),
        side_agent(&tmux, &reports, &b),
    ) {
        (Ok((x, _)), Ok((y, _))) => [x, y],
        (Err(why), _) | (_, Err(why)) => {
            eprintln!("agentpane: no relay: {why}");
            return Ok(exit::REFUSED);
        }
    };
    let store = Store::open_default()?;
    let mut wait = PaneWait::start(&server, true).context("cannot watch for Ctrl-C")?;
    let mut relay = RelayState::new(&a, &b, args.rounds);
    let mut cache = AnswerCache::new(8);
    let runner = Runner {
        tmux: &tmux,
        store: &store,
        server: &server,
        template: template.as_ref(),
        agents: Some(&agents),
        views: &[],
        outbox: None,
    };
    eprintln!(
        "agentpane: relaying between {a} and {b} (at most {} round trips); Ctrl-C stops",
        args.rounds
    );
    loop {
        let reports = wait.scan(&tmux)?;
        let mut answer = |r: &PaneReport| {
            pane_answer(&tmux, &r.resolved.pane.pane_id, Some(r), &mut cache)
                .ok()
                .flatten()
                .map(|a| a.text)
        };
        let actions = relay.step(&reports, &mut answer);
        let (log, end) = runner.apply(&relay, actions, &reports);
        for line in log {
            eprintln!("agentpane: {line}");
        }
        match end {
            Some(End::Finished(_)) => return Ok(exit::OK),
            Some(End::Escalated(_)) => return Ok(exit::NOTHING),
            None => {}
        }
        // Queued relay messages go out as soon as their target frees up.
        for d in deliver::deliver_queued_in(&store, &tmux, &reports) {
            eprintln!(
                "agentpane: queued {} → {}: {}",
                d.id,
                d.dst,
                outcome_name(d.outcome)
            );
        }
        // Turns end in transcripts: sleep until one changes (or the safety re-check).
        if wait.sleep(super::wait::SAFETY_POLL) == Woke::Signal {
            break;
        }
    }
    eprintln!("agentpane: relay stopped");
    Ok(exit::OK)
}

/// The picker's `l`: stops the relay between `from` and `to` when the watcher runs one, else
/// starts one there (the command's defaults); the exit code and one line come back.
pub fn toggle(tmux: &Tmux, hosts: &[Host], from: &str, to: &str) -> Result<(i32, String)> {
    let (a, b, _) = sides(tmux, hosts, from, to, false)?;
    let server = tmux.socket_path()?;
    let registry = Registry::open_default()?;
    if registry.list().iter().any(|r| r.joins(&server, &a, &b)) {
        return Ok(stop(&registry, &server, &a, &b));
    }
    if !crate::watch::running(&crate::paths::state_dir(), &server) {
        return Ok((
            exit::NOTHING,
            "no watcher runs: relays from here run in the watcher (`agentpane watch`)".into(),
        ));
    }
    register(tmux, &registry, &server, [&a, &b], DEFAULT_ROUNDS, None)
}

/// Round trips a relay started from the picker allows (the command's default).
const DEFAULT_ROUNDS: u32 = 3;

/// The two sides as a registration names them, and whether one is on another host.
fn sides(
    tmux: &Tmux,
    hosts: &[Host],
    a: &str,
    b: &str,
    stopping: bool,
) -> Result<(String, String, bool)> {
    let across = [a, b]
        .iter()
        .any(|p| matches!(split_target(p, hosts), Target::Remote(..)));
    let (a, b) = if across {
        (
            side_id(tmux, hosts, a, stopping)?,
            side_id(tmux, hosts, b, stopping)?,
        )
    } else {
        super::route::two_panes(tmux, (a, "pane"), (b, "pane"), "relay")?
    };
    if a == b {
        bail!("refusing to relay pane {a} to itself");
    }
    Ok((a, b, across))
}

/// Ends the watcher's relay between `a` and `b`.
fn stop(registry: &Registry, server: &str, a: &str, b: &str) -> (i32, String) {
    let stopped: Vec<String> = registry
        .list()
        .into_iter()
        .filter(|r| r.joins(server, a, b))
        .filter(|r| registry.remove(&r.id))
        .map(|r| r.id)
        .collect();
    if stopped.is_empty() {
        return (
            exit::NOTHING,
            format!("no relay between {a} and {b} is registered"),
        );
    }
    (exit::OK, format!("stopped relay {}", stopped.join(", ")))
}

/// Registers a relay for the watcher: both sides must run agents now (the relay holds them to
/// it, docs/design.md#delivery), and the turns they closed now are history.
fn register(
    tmux: &Tmux,
    registry: &Registry,
    server: &str,
    [a, b]: [&str; 2],
    rounds: u32,
    template: Option<&str>,
) -> Result<(i32, String)> {
    for side in [a, b] {
        if let Some((host, _)) = crate::route::relays::remote_side(side) {
            if !super::remote::kept_views(tmux)
                .iter()
                .any(|v| v.host == host.as_str())
            {
                bail!(
                    "the watcher keeps no connection to {host}: add it to @agentpane-hosts \
                     (or `agentpane watch --host {host}`) and restart the watcher"
                );
            }
        }
    }
    let reports = scan::scan(tmux, Utc::now())?;
    let (agents, keys) = match (side_agent(tmux, &reports, a), side_agent(tmux, &reports, b)) {
        (Ok((x, kx)), Ok((y, ky))) => ([x, y], [kx, ky]),
        (Err(why), _) | (_, Err(why)) => return Ok((exit::REFUSED, format!("no relay: {why}"))),
    };
    if let Some(r) = registry.list().into_iter().find(|r| r.joins(server, a, b)) {
        bail!("a relay between {a} and {b} already runs in the watcher ({}); stop it with `agentpane relay {a} {b} --stop`", r.id);
    }
    let reg = Registration {
        id: new_id(),
        server: server.to_string(),
        a: a.to_string(),
        b: b.to_string(),
        rounds,
        template: template.map(str::to_string),
        created: Utc::now(),
        sent: 0,
        agents: Some(agents),
        // The turns closed now are history: only turns that end from here on are relayed,
        // however late the watcher first looks.
        keys: Some(keys),
        expect: None,
        pending: None,
    };
    registry.save(&reg)?;
    Ok((
        exit::OK,
        format!(
            "the watcher relays between {a} and {b} (at most {rounds} round trips); stop with `agentpane relay {a} {b} --stop`"
        ),
    ))
}

/// A side as a registration names it: a local pane id, or `HOST:%N` with the pane id on that
/// host (a `session:window.pane` there is looked up in the host's panes). With `stopping`, a
/// remote `%N` is taken as given, so a relay can be stopped while its host is unreachable.
fn side_id(tmux: &Tmux, hosts: &[Host], target: &str, stopping: bool) -> Result<String> {
    let (host, pane) = match split_target(target, hosts) {
        Target::Local(t) => return tmux.pane_id(t).with_context(|| format!("pane `{t}`")),
        Target::Remote(host, pane) => (host, remote_pane_arg(pane)?),
    };
    if stopping && crate::remote::doc::is_pane_id(pane) {
        return Ok(format!("{host}:{pane}"));
    }
    let views = super::remote::views(tmux, std::slice::from_ref(&host));
    let view = views.first().context("no view of the host")?;
    if let Link::Down { reason } = &view.link {
        bail!("{host} is unreachable: {reason}");
    }
    let found = view
        .panes()
        .iter()
        .find(|p| p.pane_id == pane || p.target == pane)
        .with_context(|| format!("{host} has no agent pane `{pane}`"))?;
    Ok(format!("{host}:{}", found.pane_id))
}

/// The agent a side runs now (checked live here, or as its host's document names it) and
/// the key of the turn it has closed now.
fn side_agent(
    tmux: &Tmux,
    reports: &[PaneReport],
    side: &str,
) -> Result<(SideAgent, Option<String>), recipient::Refusal> {
    let Some((host, pane)) = crate::route::relays::remote_side(side) else {
        let agent = recipient::admit(tmux, reports, side)?;
        let key = report_of(reports, side).and_then(|r| Turn::of(r).closed_key());
        return Ok((SideAgent::Here(agent), key));
    };
    let views = super::remote::views(tmux, std::slice::from_ref(&host));
    let found = views
        .iter()
        .flat_map(|v| v.panes())
        .find(|p| p.pane_id == pane);
    match found.and_then(|p| Some((p.agent.clone()?, p))) {
        Some((agent, p)) => {
            let turn = Turn {
                pane: side.to_string(),
                state: p.state,
                turn_key: p.turn_key.clone(),
                reason: None,
            };
            let there = SideAgent::There {
                host: host.to_string(),
                agent,
            };
            Ok((there, turn.closed_key()))
        }
        None => Err(recipient::Refusal::NotAnAgent {
            pane: side.to_string(),
            runs: "no agent".into(),
        }),
    }
}
