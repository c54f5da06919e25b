//! `agentpane route SRC DST …`, `agentpane relay A B …` and the items of the hidden `route-menu`
//! (docs/design.md#routing).

use std::io::Read;
use std::time::{Duration, Instant};

use anyhow::{bail, Context as _, Result};
use chrono::Utc;
use serde::Serialize;

use super::wait::PaneWait;
use super::Context;
use crate::cli::{DeliverStdinArgs, RouteArgs, RouteQueueArgs, Transform};
use crate::exit;
use crate::extract::cache::AnswerCache;
use crate::extract::capture;
use crate::remote::call;
use crate::remote::ssh::Ssh;
use crate::remote::{split_target, Host, Target};
use crate::route::deliver::{self, deliver_one, is_free};
use crate::route::outbox;
use crate::route::queue::{new_id, Damaged, Outcome, Queued, Store};
use crate::route::recipient::{self, Refusal as Unsafe};
use crate::route::relays::outcome_name;
use crate::route::sanitize::sanitize;
use crate::route::source::{not_an_agent, pane_answer, pane_screen, report_of, AnswerSource};
use crate::route::template::{self, Template, Vars};
use crate::route::transform::{self, AiCommand};
use crate::scan::{self, PaneReport};
use crate::state::State;
use crate::text::{terminal_line, terminal_safe};
use crate::tmux::{escape_format, Pane, Tmux, MAX_CAPTURE_LINES};

#[derive(Debug, Serialize)]
struct RouteOutput<'a> {
    id: &'a str,
    src: &'a str,
    dst: &'a str,
    bytes: usize,
    source: &'a str,
    transform: &'a str,
    outcome: Outcome,
    submitted: bool,
    /// From command start to Enter (or to the verified paste / the queue write).
    latency_ms: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    detail: Option<&'a str>,
}

pub fn route(args: RouteArgs, ctx: &Context) -> Result<i32> {
    let started = Instant::now();
    let tmux = ctx.tmux();
    let notify = args.notify;
    let routed = ctx
        .remote_hosts()
        .and_then(|hosts| route_across(&args, &tmux, &hosts, started));
    match routed {
        Ok((code, message)) => {
            if notify {
                let _ = tmux.display_message(None, &format!("agentpane: {message}"));
            } else if code != exit::OK {
                eprintln!("agentpane: {message}");
            }
            Ok(code)
        }
        Err(e) if notify => {
            let _ = tmux.display_message(None, &format!("agentpane: {e:#}"));
            Err(e)
        }
        Err(e) => {
            if args.json {
                let out = Refusal {
                    src: &args.src,
                    dst: &args.dst,
                    outcome: "error",
                    submitted: false,
                    detail: &format!("{e:#}"),
                };
                println!("{}", serde_json::to_string(&out)?);
            }
            Err(e)
        }
    }
}

/// What `route --json` prints when nothing was sent: one JSON document, as for a delivery.
#[derive(Debug, Serialize)]
struct Refusal<'a> {
    src: &'a str,
    dst: &'a str,
    /// `refused` (no answer, destination busy) or `error`.
    outcome: &'static str,
    /// Always `false`: nothing was pasted.
    submitted: bool,
    detail: &'a str,
}

/// A route that sends nothing: exit 1 with `message`, also as JSON under `--json`.
fn refused(args: &RouteArgs, src: &str, dst: &str, message: String) -> Result<(i32, String)> {
    refused_with(exit::NOTHING, args, src, dst, message)
}

/// A route refused for safety (exit 4): the destination is not the agent the text is for.
fn unsafe_destination(
    args: &RouteArgs,
    src: &str,
    dst: &str,
    why: &Unsafe,
) -> Result<(i32, String)> {
    refused_with(
        exit::REFUSED,
        args,
        src,
        dst,
        format!("not delivered: {why}"),
    )
}

fn refused_with(
    code: i32,
    args: &RouteArgs,
    src: &str,
    dst: &str,
    message: String,
) -> Result<(i32, String)> {
    if args.json && !args.notify {
        let out = Refusal {
            src,
            dst,
            outcome: "refused",
            submitted: false,
            detail: &message,
        };
        println!("{}", serde_json::to_string(&out)?);
    }
    Ok((code, message))
}

/// Resolves two targets to distinct pane ids; `labels` name them in errors, `verb` says what
/// a pane may not do to itself.
pub(super) fn two_panes(
    tmux: &Tmux,
    (a, a_label): (&str, &str),
    (b, b_label): (&str, &str),
    verb: &str,
) -> Result<(String, String)> {
    let a_id = tmux
        .pane_id(a)
        .with_context(|| format!("{a_label} `{a}`"))?;
    let b_id = tmux
        .pane_id(b)
        .with_context(|| format!("{b_label} `{b}`"))?;
    if a_id == b_id {
        bail!("refusing to {verb} pane {a_id} to itself");
    }
    Ok((a_id, b_id))
}

/// A route whose source or destination is on another host (docs/routing.md#remote-hosts):
/// the destination is checked first (here, or by its host over the shared connection), so
/// nothing is fetched or transformed for a pane that would never take it; then the text is
/// made where the source is, and delivered where the destination is, by that host's
/// agentpane, which checks again at that moment with every delivery rule. The text crosses
/// hosts only on ssh's stdin.
fn route_across(
    args: &RouteArgs,
    tmux: &Tmux,
    hosts: &[Host],
    started: Instant,
) -> Result<(i32, String)> {
    let src_t = split_target(&args.src, hosts);
    let dst_t = split_target(&args.dst, hosts);
    if let (Target::Local(_), Target::Local(_)) = (&src_t, &dst_t) {
        return route_inner(args, tmux, None, started);
    }
    let ssh = Ssh::from_env();
    if let Target::Remote(host, pane) = &dst_t {
        if let Some(why) = call::check_destination(&ssh, host, pane)? {
            return refused_with(exit::REFUSED, args, &args.src, &args.dst, why);
        }
    }
    let (text, label) = match &src_t {
        Target::Local(target) => {
            let src = tmux
                .pane_id(target)
                .with_context(|| format!("source pane `{target}`"))?;
            let panes = tmux.list_panes()?;
            let src_pane = panes.iter().find(|p| p.pane_id == src);
            let reports = scan::scan(tmux, Utc::now())?;
            let (text, _) = routed_text(args, tmux, &src, src_pane, &reports)?;
            if text.is_none() {
                let why = nothing_to_route(args, tmux, &src, &reports);
                return refused(args, &args.src, &args.dst, why);
            }
            (text, format!("{}:{src}", super::remote::this_host()))
        }
        Target::Remote(host, pane) => {
            if args.transform == Transform::FullOutput || args.screen {
                bail!("--screen and --transform full-output read a screen here; use raw or summary for a pane on {host}");
            }
            let label = format!("{host}:{pane}");
            let text = match call::fetch_answer(&ssh, host, pane)? {
                Some(a) => {
                    let who = match &a.agent {
                        Some(agent) => format!("{agent} in {label}"),
                        None => format!("pane {label}"),
                    };
                    let cwd = a.cwd.as_deref().unwrap_or("");
                    finish_text(args, a.text, &who, cwd)?
                }
                None => None,
            };
            (text, label)
        }
    };
    let Some(text) = text else {
        let why = format!("{label} has no answer to route yet");
        return refused(args, &args.src, &args.dst, why);
    };
    match dst_t {
        Target::Local(_) => {
            let given = Given {
                label,
                text,
                id: None,
            };
            route_inner(args, tmux, Some(given), started)
        }
        Target::Remote(host, pane) => {
            let delivery = call::Delivery {
                pane,
                from: &label,
                no_submit: args.no_submit,
                queue: args.queue,
                json: args.json,
                wait: args.wait,
                id: None,
            };
            let (code, mut out) = call::deliver(&ssh, &host, &delivery, &text)?;
            if code == exit::OK && !args.json && out.stdout.starts_with("routed ") {
                let ms = started.elapsed().as_millis();
                let line = as_typed(args, text.len(), ms);
                out.stdout = format!("{line}\n");
                out.message = line;
            }
            if !args.notify {
                print!("{}", out.stdout);
            }
            Ok((code, out.message))
        }
    }
}

/// A delivery on another host told as the route was typed here: that host's own line names
/// the panes as it sees them (the source by this host's name, the destination without its
/// host).
fn as_typed(args: &RouteArgs, bytes: usize, ms: u128) -> String {
    let submitted = if args.no_submit {
        "not submitted"
    } else {
        "submitted"
    };
    format!(
        "routed {} → {} ({bytes} bytes, {submitted}, in {ms} ms)",
        crate::text::terminal_line(&args.src),
        crate::text::terminal_line(&args.dst)
    )
}

/// `deliver-stdin PANE`: text from another host, delivered here as a route's would be. With
/// `--id`, an id this host took before is answered without pasting again; with `--check`,
/// only the destination is checked.
pub fn deliver_stdin(args: DeliverStdinArgs, ctx: &Context) -> Result<i32> {
    let started = Instant::now();
    let tmux = ctx.tmux();
    if args.check {
        let dst = tmux
            .pane_id(&args.dst)
            .with_context(|| format!("destination pane `{}`", args.dst))?;
        let reports = scan::scan(&tmux, Utc::now())?;
        let refused = recipient::of_pane(&tmux, &reports, &dst)
            .and_then(|to| deliver::readiness(&tmux, &reports, &dst, &to));
        if let Err(why) = refused {
            eprintln!("agentpane: not delivered: {why}");
            return Ok(exit::REFUSED);
        }
        return Ok(exit::OK);
    }
    let mut text = Vec::new();
    std::io::stdin()
        .take(MAX_STDIN_TEXT as u64 + 1)
        .read_to_end(&mut text)?;
    if text.len() > MAX_STDIN_TEXT {
        bail!("routed text over {MAX_STDIN_TEXT} bytes refused");
    }
    let state = crate::paths::state_dir();
    if let Some(id) = &args.id {
        if let Some(before) = outbox::claim(&state, id)? {
            return Ok(match before.first {
                Some((code, message)) => {
                    let line = format!("{id} already received here ({message}); not again");
                    if code == exit::OK {
                        println!("{line}");
                    } else {
                        eprintln!("agentpane: {line}");
                    }
                    code
                }
                None => {
                    println!("{id} already received here, its delivery started; not again");
                    exit::OK
                }
            });
        }
    }
    // What is queued here is delivered by this server's watcher: one runs from now on.
    if args.queue {
        if let Ok(socket) = tmux.socket_path() {
            if !crate::watch::running(&state, &socket) {
                super::serve::start_watcher(&tmux, &socket);
            }
        }
    }
    let route = RouteArgs {
        src: args.from.clone(),
        dst: args.dst,
        transform: Transform::Raw,
        screen: false,
        template: None,
        instruction: None,
        submit: !args.no_submit,
        no_submit: args.no_submit,
        wait: args.wait,
        queue: args.queue,
        json: args.json,
        notify: false,
    };
    let given = Given {
        label: args.from,
        text: String::from_utf8_lossy(&text).into_owned(),
        id: args.id,
    };
    let id = given.id.clone();
    let routed = route_inner(&route, &tmux, Some(given), started);
    if let Some(id) = &id {
        let (code, message) = match &routed {
            Ok((code, message)) => (*code, message.clone()),
            Err(e) => (exit::USAGE, format!("{e:#}")),
        };
        outbox::record_claim(&state, id, code, &message)?;
    }
    let (code, message) = routed?;
    if code != exit::OK {
        eprintln!("agentpane: {message}");
    }
    Ok(code)
}

/// Text made elsewhere (another host's answer) for [`route_inner`]: its label, and the
/// sender's message id when it gave one.
struct Given {
    label: String,
    text: String,
    id: Option<String>,
}

/// Most text `deliver-stdin` takes.
const MAX_STDIN_TEXT: usize = 4 << 20;

/// Runs one route; returns the exit code and a one-line human summary. `given`: text made
/// elsewhere (another host's answer) and its label, instead of the source pane's answer.
fn route_inner(
    args: &RouteArgs,
    tmux: &Tmux,
    given: Option<Given>,
    started: Instant,
) -> Result<(i32, String)> {
    let (src, dst) = match &given {
        None => two_panes(
            tmux,
            (&args.src, "source pane"),
            (&args.dst, "destination pane"),
            "route",
        )?,
        Some(g) => (
            g.label.clone(),
            tmux.pane_id(&args.dst)
                .with_context(|| format!("destination pane `{}`", args.dst))?,
        ),
    };
    let panes = tmux.list_panes()?;
    let src_pane = panes.iter().find(|p| p.pane_id == src).cloned();
    let mut reports = scan::scan(tmux, Utc::now())?;
    // The destination first: nothing is extracted or transformed for a pane that would never
    // receive it (the live check follows in `readiness`).
    let to = match recipient::of_pane(tmux, &reports, &dst) {
        Ok(to) => to,
        Err(why) => return unsafe_destination(args, &src, &dst, &why),
    };
    let mut busy = match deliver::readiness(tmux, &reports, &dst, &to) {
        Ok(busy) => busy,
        Err(why) => return unsafe_destination(args, &src, &dst, &why),
    };
    let mut id = None;
    let (text, source) = match given {
        None => routed_text(args, tmux, &src, src_pane.as_ref(), &reports)?,
        Some(g) => {
            id = g.id;
            let text = sanitize(&g.text);
            (
                (!text.trim().is_empty()).then_some(text),
                AnswerSource::Remote,
            )
        }
    };
    let Some(text) = text else {
        let why = nothing_to_route(args, tmux, &src, &reports);
        return refused(args, &src, &dst, why);
    };
    let submit = !args.no_submit;
    let msg = Queued {
        id: id.unwrap_or_else(new_id),
        created: Utc::now(),
        server: tmux.socket_path()?,
        src: src.clone(),
        dst: dst.clone(),
        text,
        submit,
        recipient: Some(to.clone()),
    };
    let store = Store::open_default()?;
    let transform = transform_name(args.transform);
    if let Some(why) = busy.clone() {
        if args.queue {
            store.enqueue(&msg)?;
            let line = format!(
                "{dst} is busy ({why}): queued {} ({} bytes) for {to}; the watcher delivers it when {dst} is free",
                msg.id,
                msg.text.len()
            );
            print_result(
                args,
                &msg,
                source,
                transform,
                Outcome::Queued,
                started,
                None,
                &line,
            )?;
            return Ok((exit::OK, line));
        }
        if let Some(secs) = args.wait.filter(|s| s.is_finite() && *s > 0.0) {
            let deadline = started + Duration::from_secs_f64(secs.min(86_400.0));
            // Sleeps on file events; the look right after the watch starts catches a change
            // that landed before it.
            let mut wait = PaneWait::start(&msg.server, false)?;
            wait.watch(&reports);
            loop {
                reports = wait.scan(tmux)?;
                busy = match deliver::readiness(tmux, &reports, &dst, &to) {
                    Ok(busy) => busy,
                    Err(why) => return unsafe_destination(args, &src, &dst, &why),
                };
                let left = deadline.saturating_duration_since(Instant::now());
                if busy.is_none() || left.is_zero() {
                    break;
                }
                wait.sleep(left);
            }
        }
        if let Some(why) = busy {
            let how = match args.wait {
                Some(s) => format!("still busy ({why}) after waiting {s} s"),
                None => format!("busy ({why})"),
            };
            return refused(
                args,
                &src,
                &dst,
                format!("not delivered: {dst} is {how}; retry with --wait SECS or --queue"),
            );
        }
    }
    let done = deliver_one(&store, tmux, &msg, &reports);
    if done.outcome == Outcome::Undeliverable {
        // The recipient left between the checks above and the paste: refused all the same.
        let why = done.detail.unwrap_or_default();
        return refused_with(exit::REFUSED, args, &src, &dst, why);
    }
    let line = match done.outcome {
        Outcome::Delivered => format!(
            "routed {} bytes from {src} ({}) to {dst}{} in {} ms",
            msg.text.len(),
            source.as_str(),
            if submit {
                ", submitted"
            } else {
                ", not submitted"
            },
            started.elapsed().as_millis()
        ),
        _ => format!(
            "delivery to {dst} {}: {}",
            outcome_name(done.outcome),
            done.detail.as_deref().unwrap_or("")
        ),
    };
    print_result(
        args,
        &msg,
        source,
        transform,
        done.outcome,
        started,
        done.detail.as_deref(),
        &line,
    )?;
    let code = if done.outcome == Outcome::Delivered {
        exit::OK
    } else {
        exit::NOTHING
    };
    Ok((code, line))
}

#[allow(clippy::too_many_arguments)]
fn print_result(
    args: &RouteArgs,
    msg: &Queued,
    source: AnswerSource,
    transform: &str,
    outcome: Outcome,
    started: Instant,
    detail: Option<&str>,
    line: &str,
) -> Result<()> {
    if args.notify {
        return Ok(());
    }
    if args.json {
        let out = RouteOutput {
            id: &msg.id,
            src: &msg.src,
            dst: &msg.dst,
            bytes: msg.text.len(),
            source: source.as_str(),
            transform,
            outcome,
            submitted: outcome == Outcome::Delivered && msg.submit,
            latency_ms: started.elapsed().as_millis() as u64,
            detail,
        };
        println!("{}", serde_json::to_string(&out)?);
    } else if outcome == Outcome::Delivered || outcome == Outcome::Queued {
        println!("{line}");
    }
    Ok(())
}

/// Why the local source `src` gave nothing to route: it runs no agent (its screen only goes
/// with `--screen`), its screen is blank, its last turn failed, or it has no answer yet.
fn nothing_to_route(args: &RouteArgs, tmux: &Tmux, src: &str, reports: &[PaneReport]) -> String {
    let report = report_of(reports, src);
    if args.screen || args.transform == Transform::FullOutput {
        return format!("pane {src}'s screen is blank");
    }
    if let Some(why) = not_an_agent(tmux, src, report) {
        return format!("{why}: nothing to route (`route --screen` sends its screen)");
    }
    match report.map(|r| &r.status) {
        Some(s) if s.state == State::Attention => format!(
            "pane {src}'s last turn failed ({}): it has no answer to route",
            s.reason.as_deref().unwrap_or("error")
        ),
        _ => format!("pane {src} has no answer to route yet"),
    }
}

/// The text to send, sanitised, and which source served the answer. `None` when the source
/// has no answer yet, or runs no agent and `--screen` was not given.
fn routed_text(
    args: &RouteArgs,
    tmux: &Tmux,
    src: &str,
    src_pane: Option<&Pane>,
    reports: &[PaneReport],
) -> Result<(Option<String>, AnswerSource)> {
    let report = report_of(reports, src);
    let (body, source) = if args.screen {
        match pane_screen(tmux, src, report)? {
            Some(a) => (Some(a.text), a.source),
            None => (None, AnswerSource::Screen),
        }
    } else if args.transform == Transform::FullOutput {
        let screen = tmux.capture(src, MAX_CAPTURE_LINES)?;
        (
            Some(capture::strip_ansi(screen.as_bytes())),
            AnswerSource::Pane,
        )
    } else {
        let mut cache = AnswerCache::new(1);
        match pane_answer(tmux, src, report, &mut cache)? {
            Some(a) => (Some(a.text), a.source),
            None => (None, AnswerSource::Pane),
        }
    };
    let Some(body) = body else {
        return Ok((None, source));
    };
    let label = source_label(src, src_pane, report);
    let cwd = src_pane.map(|p| p.cwd.as_str()).unwrap_or("");
    Ok((finish_text(args, body, &label, cwd)?, source))
}

/// An answer made into the routed text: transformed, templated, sanitised; `None` when
/// nothing is left.
fn finish_text(args: &RouteArgs, body: String, label: &str, cwd: &str) -> Result<Option<String>> {
    if body.trim().is_empty() {
        return Ok(None);
    }
    let instruction = args.instruction.as_deref().unwrap_or("");
    let body = match args.transform {
        Transform::Raw | Transform::FullOutput => body,
        Transform::Summary => transform::summary(&body, transform::SUMMARY_MAX_BYTES),
        Transform::Ai => AiCommand::from_env()?.run(&transform::ai_prompt(&body, instruction))?,
    };
    let vars = Vars {
        answer: &body,
        source: label,
        cwd,
        instruction,
    };
    let text = match args.template.as_deref() {
        Some(spec) => Template::load(spec)?.render(&vars)?,
        None if args.transform == Transform::Ai => body.clone(),
        None => template::plain(&vars),
    };
    let text = sanitize(&text);
    Ok((!text.trim().is_empty()).then_some(text))
}

/// `claude in %3 (work:1.0)`, or `pane %3 (work:1.0)` without an agent.
fn source_label(src: &str, pane: Option<&Pane>, report: Option<&PaneReport>) -> String {
    let who = report
        .and_then(|r| r.resolved.agent.as_ref())
        .map(|a| format!("{} in {src}", a.kind))
        .unwrap_or_else(|| format!("pane {src}"));
    match pane {
        Some(p) => format!("{who} ({})", p.target()),
        None => who,
    }
}

fn transform_name(t: Transform) -> &'static str {
    match t {
        Transform::Raw => "raw",
        Transform::FullOutput => "full-output",
        Transform::Summary => "summary",
        Transform::Ai => "ai",
    }
}

/// Characters allowed in what the menu hands to `run-shell` (no quoting needed anywhere).
fn shell_safe(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+@%=:,".contains(c))
}

/// One route as the picker's `r` key makes it: the menu's rules (queued while `dst` is
/// busy), nothing printed; the exit code and the one-line summary come back.
pub fn route_quietly(tmux: &Tmux, hosts: &[Host], src: &str, dst: &str) -> Result<(i32, String)> {
    let args = RouteArgs {
        src: src.to_string(),
        dst: dst.to_string(),
        transform: Transform::Raw,
        screen: false,
        template: None,
        instruction: None,
        submit: true,
        no_submit: false,
        wait: None,
        queue: true,
        json: false,
        notify: true,
    };
    route_across(&args, tmux, hosts, Instant::now())
}

/// This program's path, when it can be passed to `run-shell` without quoting.
pub(super) fn program_path() -> String {
    std::env::current_exe()
        .ok()
        .map(|p| p.to_string_lossy().into_owned())
        .filter(|p| shell_safe(p))
        .unwrap_or_else(|| "agentpane".to_string())
}

/// One destination offered in the `prefix + R` menu.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MenuTarget {
    pub pane_id: String,
    /// `session:window.pane`.
    pub target: String,
    pub agent: String,
    pub state: State,
}

impl MenuTarget {
    pub(super) fn of(r: &PaneReport) -> MenuTarget {
        MenuTarget {
            pane_id: r.resolved.pane.pane_id.clone(),
            target: r.resolved.pane.target(),
            agent: r
                .resolved
                .agent
                .as_ref()
                .map(|a| a.kind.name().to_string())
                .unwrap_or_else(|| "pane".into()),
            state: r.status.state,
        }
    }
}

/// Menu items `(name, key, command)`: every other agent pane, with its state. Names are
/// escaped for tmux formats (and start with `→`, so a name never reads as a menu separator);
/// commands carry only pane ids, the program path and the socket, all checked to need no
/// quoting anywhere.
pub fn menu_items(
    current: &str,
    targets: &[MenuTarget],
    socket: &crate::tmux::Socket,
    program: &str,
) -> Vec<(String, String, String)> {
    let socket_args = socket.args();
    let mut prefix = vec![program.to_string()];
    if socket_args.iter().all(|a| shell_safe(a)) {
        prefix.extend(socket_args);
    }
    let prefix = prefix.join(" ");
    targets
        .iter()
        .filter(|t| t.pane_id != current && shell_safe(&t.pane_id) && shell_safe(current))
        .enumerate()
        .map(|(i, t)| {
            let busy = if is_free(t.state) {
                ""
            } else {
                " (queued until free)"
            };
            let name = escape_format(&format!(
                "→ {} {} {}{busy}",
                t.target,
                t.agent,
                state_label(t.state)
            ));
            let key = if i < 9 {
                (i + 1).to_string()
            } else {
                String::new()
            };
            let command = format!(
                "run-shell -b '{prefix} route {current} {} --queue --notify >/dev/null 2>&1 || true'",
                t.pane_id
            );
            (name, key, command)
        })
        .collect()
}

fn state_label(state: State) -> &'static str {
    state.as_str()
}

#[derive(Debug, Serialize)]
struct QueueLine<'a> {
    id: &'a str,
    /// `queued` (waits for its agent to be free), `held` (for you: see `reason`) or `outbox`
    /// (for a pane on another host: waits for that host to take it).
    status: &'static str,
    created: chrono::DateTime<Utc>,
    src: &'a str,
    dst: &'a str,
    bytes: usize,
    /// The agent it is for, e.g. `claude (pid 4242)`.
    #[serde(skip_serializing_if = "Option::is_none")]
    recipient: Option<String>,
    /// Why a held message was held (`undeliverable: …`, `dst-gone`, `expired`, `uncertain`).
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
}

impl<'a> QueueLine<'a> {
    fn of(m: &'a Queued, status: &'static str, reason: Option<String>) -> QueueLine<'a> {
        QueueLine {
            id: &m.id,
            status,
            created: m.created,
            src: &m.src,
            dst: &m.dst,
            bytes: m.text.len(),
            recipient: m.recipient.as_ref().map(ToString::to_string),
            reason,
        }
    }
}

pub fn queue(args: RouteQueueArgs, ctx: &Context) -> Result<i32> {
    let store = Store::open_default()?;
    if args.deliver {
        let tmux = ctx.tmux();
        let reports = scan::scan(&tmux, Utc::now())?;
        let pass = deliver::deliver_pass(&store, &tmux, &reports);
        tell_damage(&pass.damaged);
        let done = pass.delivered;
        for d in &done {
            if args.json {
                println!("{}", serde_json::to_string(d)?);
            } else {
                let line = format!(
                    "{} {} → {}: {}{}",
                    d.id,
                    d.src,
                    d.dst,
                    outcome_name(d.outcome),
                    d.detail
                        .as_deref()
                        .map(|x| format!(" ({x})"))
                        .unwrap_or_default()
                );
                println!("{}", terminal_line(&line));
            }
        }
        let failed = done.iter().any(|d| d.outcome != Outcome::Delivered);
        return Ok(if failed { exit::NOTHING } else { exit::OK });
    }
    if let Some(id) = &args.show {
        let Some((msg, _)) = store.find(id)? else {
            eprintln!("agentpane: no queued or held message `{id}`");
            return Ok(exit::NOTHING);
        };
        if args.json {
            println!("{}", serde_json::to_string(&msg)?);
        } else {
            let text = terminal_safe(&msg.text);
            print!("{text}");
            if !text.ends_with('\n') {
                println!();
            }
        }
        return Ok(exit::OK);
    }
    if let Some(id) = &args.drop {
        let dropped = store.drop_held(id)?
            || {
                let queued = store.pending()?.iter().any(|m| &m.id == id);
                if queued {
                    store.remove(id)?;
                }
                queued
            }
            || outbox::Outbox::open_default().is_ok_and(|o| o.remove(id));
        if !dropped {
            eprintln!("agentpane: no queued or held message `{id}`");
            return Ok(exit::NOTHING);
        }
        eprintln!("agentpane: dropped {id}");
        return Ok(exit::OK);
    }
    if let Some(id) = &args.requeue {
        return requeue(&store, ctx, id, args.to.as_deref(), args.json);
    }
    let queued = store.pending()?;
    let held = store.held()?;
    tell_damage(&store.read_journal()?.damaged);
    let outgoing = outbox::Outbox::open_default()
        .map(|o| o.list())
        .unwrap_or_default();
    let out_dsts: Vec<String> = outgoing.iter().map(outbox::Outgoing::dst).collect();
    let lines = queued
        .iter()
        .map(|m| QueueLine::of(m, "queued", None))
        .chain(held.iter().map(|h| {
            let outcome = h.outcome.map(outcome_name);
            let reason = match (outcome, &h.reason) {
                (Some(o), Some(r)) => format!("{o}: {r}"),
                (Some(o), None) => o,
                (None, Some(r)) => r.clone(),
                (None, None) => "held".into(),
            };
            QueueLine::of(&h.msg, "held", Some(reason))
        }))
        .chain(outgoing.iter().zip(&out_dsts).map(|(m, dst)| QueueLine {
            id: &m.id,
            status: "outbox",
            created: m.created,
            src: &m.src,
            dst,
            bytes: m.text.len(),
            recipient: None,
            reason: Some(format!("waits for {} to take it", m.host)),
        }));
    for line in lines {
        if args.json {
            println!("{}", serde_json::to_string(&line)?);
        } else {
            let text = format!(
                "{} {} {} → {} {} bytes{}{}",
                line.status,
                line.id,
                line.src,
                line.dst,
                line.bytes,
                line.recipient
                    .as_deref()
                    .map(|r| format!(" for {r}"))
                    .unwrap_or_default(),
                line.reason
                    .as_deref()
                    .map(|r| format!(" — {r}"))
                    .unwrap_or_default()
            );
            println!("{}", terminal_line(&text));
        }
    }
    Ok(exit::OK)
}

/// Journal lines that were skipped, on stderr.
fn tell_damage(damaged: &[Damaged]) {
    for d in damaged {
        eprintln!("agentpane: {d}");
    }
}

/// `route-queue --requeue ID [--to PANE]`: the person decided to send a held message again,
/// to the agent that runs in its pane now (or in `to`). Same rules as `route --queue`.
fn requeue(store: &Store, ctx: &Context, id: &str, to: Option<&str>, json: bool) -> Result<i32> {
    let Some((old, held)) = store.find(id)? else {
        eprintln!("agentpane: no queued or held message `{id}`");
        return Ok(exit::NOTHING);
    };
    let tmux = ctx.tmux();
    let server = tmux.socket_path()?;
    if old.server != server {
        bail!(
            "message {id} was queued on the tmux server at {}, not this one ({server})",
            old.server
        );
    }
    let dst = match to {
        Some(t) => tmux.pane_id(t).with_context(|| format!("pane `{t}`"))?,
        None => old.dst.clone(),
    };
    let reports = scan::scan(&tmux, Utc::now())?;
    let recipient = match recipient::admit(&tmux, &reports, &dst) {
        Ok(r) => r,
        Err(why) => {
            let line = format!("not re-issued: {why}");
            print_requeued(json, id, &dst, "refused", &line)?;
            return Ok(exit::REFUSED);
        }
    };
    let msg = Queued {
        id: new_id(),
        created: Utc::now(),
        dst: dst.clone(),
        recipient: Some(recipient.clone()),
        ..old
    };
    let ready = deliver::readiness(&tmux, &reports, &dst, &recipient);
    // The old message goes once its replacement exists: never both, never neither.
    let retire = |store: &Store| {
        if held {
            store.drop_held(id).map(|_| ())
        } else {
            store.remove(id)
        }
    };
    match ready {
        Ok(None) => {
            retire(store)?;
            let done = deliver_one(store, &tmux, &msg, &reports);
            let line = format!(
                "{id} re-issued as {} for {recipient}: {}{}",
                msg.id,
                outcome_name(done.outcome),
                done.detail
                    .as_deref()
                    .map(|x| format!(" ({x})"))
                    .unwrap_or_default()
            );
            print_requeued(json, &msg.id, &dst, &outcome_name(done.outcome), &line)?;
            Ok(if done.outcome == Outcome::Delivered {
                exit::OK
            } else {
                exit::NOTHING
            })
        }
        Ok(Some(busy)) => {
            store.enqueue(&msg)?;
            retire(store)?;
            let line = format!(
                "{id} re-issued as {} for {recipient}; {dst} is busy ({busy}): queued",
                msg.id
            );
            print_requeued(json, &msg.id, &dst, "queued", &line)?;
            Ok(exit::OK)
        }
        Err(why) => {
            let line = format!("not re-issued: {why}");
            print_requeued(json, id, &dst, "refused", &line)?;
            Ok(exit::REFUSED)
        }
    }
}

fn print_requeued(json: bool, id: &str, dst: &str, outcome: &str, line: &str) -> Result<()> {
    if json {
        let v = serde_json::json!({"id": id, "dst": dst, "outcome": outcome, "detail": line});
        println!("{v}");
    } else {
        println!("{line}");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tmux::Socket;

    fn target(id: &str, target: &str, state: State) -> MenuTarget {
        MenuTarget {
            pane_id: id.into(),
            target: target.into(),
            agent: "claude".into(),
            state,
        }
    }

    #[test]
    fn menu_offers_other_panes_with_escaped_names_and_plain_commands() {
        let targets = [
            target("%1", "w:1.0", State::YourTurn),
            target("%2", "-evil #{pane_id}:1.0", State::Working),
            target("%3;rm", "x:1.0", State::Idle),
        ];
        let items = menu_items(
            "%1",
            &targets,
            &Socket::Name("dev".into()),
            "/usr/bin/agentpane",
        );
        assert_eq!(
            items.len(),
            1,
            "self and unsafe ids are left out: {items:?}"
        );
        let (name, key, command) = &items[0];
        assert_eq!(
            name,
            "→ -evil ##{pane_id}:1.0 claude working (queued until free)"
        );
        assert_eq!(key, "1");
        assert_eq!(
            command,
            "run-shell -b '/usr/bin/agentpane -L dev route %1 %2 --queue --notify >/dev/null 2>&1 || true'"
        );
        let odd = menu_items(
            "%9",
            &targets[..1],
            &Socket::Name("a b'".into()),
            "agentpane",
        );
        assert_eq!(
            odd[0].2,
            "run-shell -b 'agentpane route %9 %1 --queue --notify >/dev/null 2>&1 || true'"
        );
    }
}
