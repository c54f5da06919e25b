//! `agentpane pick`: every agent pane, most urgent first, in a small terminal UI — Enter jumps
//! there, `r` routes the pane you came from into it, `l` starts (or stops) a relay between the
//! two in the watcher, `p` shows its whole last answer. With
//! `--popup` (the plugin's picker and last-answer keys) it opens itself in a `display-popup`
//! on the client that pressed the key, or says in one status-line message why there is
//! nothing to show. See docs/routing.md (key bindings).

mod model;
mod term;

use std::time::{Duration, Instant};

use anyhow::{Context as _, Result};
use chrono::Utc;

use super::client::{self, overlay_tmux};
use super::Context;
use crate::cli::PickArgs;
use crate::exit;
use crate::extract::cache::AnswerCache;
use crate::remote::link::HostView;
use crate::remote::{split_target, Host, Target};
use crate::route::source::{not_an_agent, pane_answer, report_of};
use crate::scan::{PaneReport, Scanner};
use crate::segment::Icons;
use crate::state::Windows;
use crate::tmux::{escape_format, Tmux};
use model::{Action, Picker, Row};
use term::{Input, Screen};

/// How often the open picker scans again.
const REFRESH: Duration = Duration::from_secs(1);

pub fn run(args: PickArgs, ctx: &Context) -> Result<i32> {
    if args.popup {
        return popup(&args, ctx);
    }
    let tmux = ctx.tmux();
    let from = match args.from.as_deref() {
        Some(t) => Some(tmux.pane_id(t)?),
        None => std::env::var("TMUX_PANE")
            .ok()
            .filter(|p| !p.is_empty())
            .and_then(|p| tmux.pane_id(&p).ok()),
    };
    let answer = args
        .answer
        .as_deref()
        .map(|t| tmux.pane_id(t))
        .transpose()?;
    let mut data = Data::new(tmux, ctx.remote_hosts()?);
    let mut picker = Picker::new(from, answer.is_some());
    picker.set_rows(data.rows()?);
    if let Some(pane) = &answer {
        if !data.show_answer(&mut picker, pane)? {
            let why = picker.message.take().unwrap_or_default();
            eprintln!("agentpane: {why}");
            return Ok(exit::NOTHING);
        }
    }
    if args.decide && !picker.open_decision() {
        eprintln!("agentpane: no pane waits on a decision");
        return Ok(exit::NOTHING);
    }
    let mut screen = Screen::enter()?;
    let mut next_refresh = Instant::now() + REFRESH;
    loop {
        let view = screen.view();
        screen.draw(&picker.render(Utc::now(), view))?;
        let wait = next_refresh.saturating_duration_since(Instant::now());
        let action = match screen.next(wait)? {
            Input::Key(key) => picker.key(key, view),
            Input::Redraw | Input::Idle => Action::None,
        };
        match action {
            Action::None => {}
            Action::Quit => return Ok(exit::OK),
            Action::Jump(pane) => match data.jump(args.client.as_deref(), &pane) {
                Ok(()) => return Ok(exit::OK),
                Err(e) => picker.message = Some(format!("{e:#}")),
            },
            Action::Route { from, to } => {
                let routed = super::route::route_quietly(&data.tmux, &data.hosts, &from, &to);
                picker.message = Some(match routed {
                    Ok((_, line)) => line,
                    Err(e) => format!("{e:#}"),
                });
                next_refresh = Instant::now();
            }
            Action::Relay { from, to } => {
                let toggled = super::relay::toggle(&data.tmux, &data.hosts, &from, &to);
                picker.message = Some(match toggled {
                    Ok((_, line)) => line,
                    Err(e) => format!("{e:#}"),
                });
            }
            Action::Decide {
                pane,
                choice,
                fingerprint,
            } => {
                picker.message = Some(super::answer::decide_line(
                    &data.tmux,
                    &data.hosts,
                    &pane,
                    choice,
                    &fingerprint,
                    args.client.as_deref(),
                ));
                next_refresh = Instant::now();
            }
            Action::ShowAnswer(pane) => {
                if let Err(e) = data.show_answer(&mut picker, &pane) {
                    picker.message = Some(format!("{e:#}"));
                }
            }
        }
        // Only the list changes with the panes; an open answer is read as it was.
        if Instant::now() >= next_refresh {
            if matches!(picker.mode, model::Mode::List) {
                match data.rows() {
                    Ok(rows) => picker.set_rows(rows),
                    Err(e) => picker.message = Some(format!("{e:#}")),
                }
            }
            next_refresh = Instant::now() + REFRESH;
        }
    }
}

/// The picker's data: one scan per refresh, reusing the last resolution while the panes stay
/// the same (as the watcher does), and answers through a cache keyed by transcript identity.
struct Data {
    tmux: Tmux,
    resolved: Scanner,
    answers: AnswerCache,
    icons: Icons,
    reports: Vec<PaneReport>,
    /// Configured remote hosts, and their views as last read (at most every REMOTE_REFRESH).
    hosts: Vec<Host>,
    remote: Vec<HostView>,
    remote_read: Option<Instant>,
}

/// How often the picker reads the remote hosts' views again.
const REMOTE_REFRESH: Duration = Duration::from_secs(5);

impl Data {
    fn new(tmux: Tmux, hosts: Vec<Host>) -> Data {
        Data {
            tmux,
            resolved: {
                let mut s = Scanner::default();
                s.meter_usage();
                s
            },
            answers: AnswerCache::new(64),
            icons: super::status::icons(None),
            reports: Vec::new(),
            hosts,
            remote: Vec::new(),
            remote_read: None,
        }
    }

    /// The remote hosts' rows (from the watcher's view, else asked over ssh now and then).
    fn remote_rows(&mut self) -> Vec<Row> {
        if self
            .remote_read
            .map_or(true, |t| t.elapsed() >= REMOTE_REFRESH)
        {
            self.remote = super::remote::views(&self.tmux, &self.hosts);
            self.remote_read = Some(Instant::now());
        }
        super::remote::rows(&self.remote)
            .into_iter()
            .map(|(host, p)| Row::remote(host, p, &self.icons))
            .collect()
    }

    /// A fresh scan as rows: the state `panes` shows, the head of each answer from its
    /// transcript, unread channel mail.
    fn rows(&mut self) -> Result<Vec<Row>> {
        let now = Utc::now();
        // The picker shows what tmux has now: every refresh asks for the panes.
        self.resolved.list_panes();
        let mut reports = self.resolved.scan(&self.tmux, now)?;
        crate::memory::remember(&self.tmux, &mut reports, now, &Windows::default());
        let socket = self.tmux.socket_path().unwrap_or_default();
        let mail = crate::channel::pane_members(&socket).unwrap_or_default();
        let remote = self.remote_rows();
        let rows: Vec<Row> = reports
            .iter()
            .map(|r| {
                let head = r.resolved.transcript.as_deref().and_then(|path| {
                    let agent = r.resolved.agent.as_ref().map(|a| a.kind);
                    self.answers
                        .get_or_extract(path, agent)
                        .ok()
                        .flatten()
                        .map(|a| a.head(200))
                });
                let unread = mail
                    .iter()
                    .filter(|m| m.pane == r.resolved.pane.pane_id)
                    .map(|m| m.unread)
                    .sum();
                Row::of(r, &self.icons, head, unread)
            })
            .chain(remote)
            .collect();
        self.reports = reports;
        Ok(rows)
    }

    /// Opens `pane`'s whole last answer; false (and a message) when it has none yet.
    fn show_answer(&mut self, picker: &mut Picker, pane: &str) -> Result<bool> {
        if let Target::Remote(host, id) = split_target(pane, &self.hosts) {
            let ssh = crate::remote::ssh::Ssh::from_env();
            let Some(a) = super::remote::fetch_answer(&ssh, &host, id)? else {
                picker.message = Some(format!("no answer in {pane} yet"));
                return Ok(false);
            };
            let who = a.agent.map(|k| format!(" {k}")).unwrap_or_default();
            picker.show_answer(format!("last answer: {pane}{who} (remote)"), &a.text);
            return Ok(true);
        }
        let report = report_of(&self.reports, pane);
        if let Some(why) = not_an_agent(&self.tmux, pane, report) {
            picker.message = Some(why);
            return Ok(false);
        }
        let target = report.map_or_else(|| pane.to_string(), |r| r.resolved.pane.target());
        let Some(a) = pane_answer(&self.tmux, pane, report, &mut self.answers)? else {
            picker.message = Some(format!("no answer in {target} yet"));
            return Ok(false);
        };
        let who = a.agent.map(|k| format!(" {k}")).unwrap_or_default();
        let title = format!("last answer: {target}{who} ({})", a.source.as_str());
        picker.show_answer(title, &a.text);
        Ok(true)
    }

    /// Switches the client to `pane`.
    fn jump(&self, client: Option<&str>, pane: &str) -> Result<()> {
        if let Target::Remote(host, id) = split_target(pane, &self.hosts) {
            let target = self
                .remote
                .iter()
                .filter(|v| v.host == host.as_str())
                .flat_map(|v| v.panes())
                .find(|p| p.pane_id == id)
                .map_or(id, |p| p.target.as_str());
            return super::remote::jump(&self.tmux, client, &host, target);
        }
        let found = self
            .reports
            .iter()
            .map(|r| &r.resolved.pane)
            .find(|p| p.pane_id == pane)
            .cloned();
        let pane = match found {
            Some(p) => p,
            None => self
                .tmux
                .list_panes()?
                .into_iter()
                .find(|p| p.pane_id == pane)
                .with_context(|| format!("pane {pane} is gone"))?,
        };
        client::switch_to(&self.tmux, client, &pane)
    }
}

/// `pick --popup`: checks there is something to show, then opens `pick` in a popup on the
/// client and waits for it to close. Problems are told on the client's status line.
fn popup(args: &PickArgs, ctx: &Context) -> Result<i32> {
    let tmux = ctx.tmux();
    let from = args.from.as_deref().map(|t| tmux.pane_id(t)).transpose();
    let client = args.client.clone().or_else(|| {
        from.as_ref()
            .ok()
            .and_then(|f| f.as_deref())
            .and_then(|f| client::client_showing(&tmux, f))
    });
    let result = from
        .map_err(anyhow::Error::from)
        .and_then(|from| open_popup(args, ctx, &tmux, from, client.as_deref(), None));
    client::finish(&tmux, client.as_deref(), result)
}

/// The picker in a popup, opened from pane `from` to route its answer (the `prefix + R` menu
/// when the menu would not fit the client); `Ok(Some(why))` when there is nothing to show.
pub(super) fn route_picker(
    ctx: &Context,
    tmux: &Tmux,
    from: &str,
    client: Option<&str>,
) -> Result<Option<String>> {
    let args = PickArgs {
        from: Some(from.to_string()),
        client: client.map(str::to_string),
        answer: None,
        popup: true,
        decide: false,
    };
    let title = format!(" agentpane: r routes {from}'s answer ");
    open_popup(
        &args,
        ctx,
        tmux,
        Some(from.to_string()),
        client,
        Some(title),
    )
}

/// Opens the popup (titled `title`, else by what it opens on); `Ok(Some(why))` when there is
/// nothing to show.
fn open_popup(
    args: &PickArgs,
    ctx: &Context,
    tmux: &Tmux,
    from: Option<String>,
    client: Option<&str>,
    title: Option<String>,
) -> Result<Option<String>> {
    let reports = crate::scan::scan(tmux, Utc::now())?;
    let answer = args
        .answer
        .as_deref()
        .map(|t| tmux.pane_id(t))
        .transpose()?;
    let default_title = match &answer {
        Some(pane) => {
            let report = report_of(&reports, pane);
            if let Some(why) = not_an_agent(tmux, pane, report) {
                return Ok(Some(why));
            }
            let mut cache = AnswerCache::new(1);
            if pane_answer(tmux, pane, report, &mut cache)?.is_none() {
                return Ok(Some(format!("no answer in pane {pane} yet")));
            }
            " last answer ".to_string()
        }
        None if args.decide
            && !reports.iter().any(|r| {
                r.status.state == crate::state::State::Waiting && r.status.request.is_some()
            }) =>
        {
            return Ok(Some("no pane waits on a decision".into()));
        }
        None if reports.is_empty() && ctx.remote_hosts()?.is_empty() => {
            return Ok(Some(
                "no coding agent runs in any pane of this tmux server".into(),
            ));
        }
        None => " agentpane ".to_string(),
    };
    let title = title.unwrap_or(default_title);
    let program = std::env::current_exe()
        .context("cannot find the agentpane program")?
        .to_string_lossy()
        .into_owned();
    let mut argv: Vec<String> = vec!["display-popup".into()];
    if let Some(c) = client {
        argv.extend(["-c".into(), c.to_string()]);
    }
    argv.extend(["-w", "90%", "-h", "80%"].map(String::from));
    if client::popup_takes_title(tmux) {
        argv.extend(["-T".to_string(), escape_format(&title)]);
    }
    // Several words after -E: tmux runs them as they are, without a shell (3.2+), and never
    // expands formats in them — so the pane and client are passed here, already expanded.
    argv.extend(["-E".to_string(), program]);
    argv.extend(ctx.socket.args());
    argv.push("pick".into());
    if let Some(f) = &from {
        argv.extend(["--from".into(), f.clone()]);
    }
    if let Some(c) = client {
        argv.extend(["--client".into(), c.to_string()]);
    }
    if let Some(a) = &answer {
        argv.extend(["--answer".into(), a.clone()]);
    }
    if args.decide {
        argv.push("--decide".into());
    }
    let refs: Vec<&str> = argv.iter().map(String::as_str).collect();
    overlay_tmux(&ctx.socket).cmd(&refs)?;
    Ok(None)
}
