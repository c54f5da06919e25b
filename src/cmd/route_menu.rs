//! The hidden `route-menu`: the `prefix + R` menu of the other agent panes to route the
//! focused pane's answer to, or the picker when tmux could not draw the menu
//! (docs/routing.md#tmux-key-bindings).

use anyhow::{bail, Result};
use chrono::Utc;

use super::route::{menu_items, program_path, MenuTarget};
use super::{client, menu_fit, pick, Context};
use crate::cli::RouteMenuArgs;
use crate::extract::cache::AnswerCache;
use crate::route::source::{not_an_agent, pane_answer, report_of};
use crate::scan;
use crate::tmux::{escape_format, Tmux};

/// The `prefix + R` menu. It runs from `run-shell -b`, so nothing it prints is seen: what
/// the person must know (nothing to route, an error) goes to the client's status line, and the
/// menu is waited for as long as it stays open (it is a blocking call for a command-line
/// client, which the usual tmux timeout would cut off).
pub fn menu(args: RouteMenuArgs, ctx: &Context) -> Result<i32> {
    let tmux = ctx.tmux();
    let current = match args.pane.as_deref() {
        Some(t) => tmux.pane_id(t),
        None => match std::env::var("TMUX_PANE") {
            Ok(p) if !p.is_empty() => tmux.pane_id(&p),
            _ => bail!("route-menu needs a pane (run it from a key binding with '#{{pane_id}}')"),
        },
    };
    let client = current
        .as_ref()
        .ok()
        .and_then(|p| client::client_showing(&tmux, p));
    let result = current
        .map_err(anyhow::Error::from)
        .and_then(|current| open_menu(&current, client.as_deref(), &tmux, ctx));
    client::finish(&tmux, client.as_deref(), result)
}

/// Shows the menu and waits for it to close; `Ok(Some(why))` when there is nothing to offer.
fn open_menu(
    current: &str,
    client: Option<&str>,
    tmux: &Tmux,
    ctx: &Context,
) -> Result<Option<String>> {
    let reports = scan::scan(tmux, Utc::now())?;
    let mut targets: Vec<MenuTarget> = reports.iter().map(MenuTarget::of).collect();
    targets.sort_by(|a, b| a.target.cmp(&b.target));
    let items = menu_items(current, &targets, &ctx.socket, &program_path());
    if items.is_empty() {
        return Ok(Some("no other agent pane to route to".into()));
    }
    let report = report_of(&reports, current);
    if let Some(why) = not_an_agent(tmux, current, report) {
        return Ok(Some(format!("{why}: nothing to route")));
    }
    let mut cache = AnswerCache::new(1);
    if pane_answer(tmux, current, report, &mut cache)?.is_none() {
        return Ok(Some(format!("pane {current} has no answer to route yet")));
    }
    let title = escape_format(&format!(" Route {current}'s answer to "));
    // tmux draws no menu taller or wider than the client, and says nothing.
    let size = menu_fit::client_size(tmux, client);
    if size.is_some_and(|s| !menu_fit::fits(menu_fit::menu_size(&title, &items), s)) {
        let n = items.len();
        client::tell(
            tmux,
            client,
            &format!("agentpane: {n} panes do not fit a menu here: the picker instead, r routes"),
        );
        return pick::route_picker(ctx, tmux, current, client);
    }
    let mut argv: Vec<String> = vec!["display-menu".into()];
    if let Some(c) = client {
        argv.extend(["-c".into(), c.to_string()]);
    }
    argv.extend(["-T", &title, "-t", current, "-x", "P", "-y", "P"].map(String::from));
    for (name, key, command) in items {
        argv.extend([name, key, command]);
    }
    let refs: Vec<&str> = argv.iter().map(String::as_str).collect();
    client::overlay_tmux(&ctx.socket).cmd(&refs)?;
    Ok(None)
}
