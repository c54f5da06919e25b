//! `agentpane web`: the page for a phone (docs/design.md#web-page). Serves this tmux
//! server's panes from its watcher's snapshot (starting the watcher when none runs, as
//! `serve` does); prints the page's URL with its secret first, then runs until killed.

use std::io::Write;

use anyhow::{bail, Context as _, Result};

use super::Context;
use crate::cli::WebArgs;
use crate::exit;
use crate::web;

pub fn run(args: WebArgs, ctx: &Context) -> Result<i32> {
    let tmux = ctx.tmux();
    let dir = crate::paths::state_dir();
    let socket = tmux.socket_path()?;
    if args.url {
        let Some(addr) = web::running_addr(&dir, &socket) else {
            eprintln!(
                "agentpane: no page is served for this tmux server; start one with \
                 `agentpane web`, or `set -g @agentpane-web on` for the watcher to serve it"
            );
            return Ok(exit::NOTHING);
        };
        let secret = web::secret::read(&dir)
            .with_context(|| format!("no secret in {}", web::secret::path(&dir).display()))?;
        show(&web::url(addr, &secret), args.qr)?;
        return Ok(exit::OK);
    }
    let secret = web::secret::load_or_create(&dir, args.new_secret)?;
    if let Some(addr) = web::running_addr(&dir, &socket) {
        if args.new_secret {
            show(&web::url(addr, &secret), args.qr)?;
            eprintln!(
                "agentpane: the page at {addr} now takes the new secret: pages opened with \
                 the old URL stop"
            );
            return Ok(exit::OK);
        }
        bail!(
            "a page is already served for this tmux server at {addr}: `agentpane web --url` \
             prints its URL"
        );
    }
    if !crate::watch::running(&dir, &socket) {
        super::serve::start_watcher(&tmux, &socket);
        eprintln!("agentpane: no watcher served this tmux server: started one (`agentpane watch`)");
    }
    let log: web::Log = std::sync::Arc::new(|line: &str| {
        eprintln!("agentpane: {}", crate::text::terminal_line(line))
    });
    let running = web::start(
        web::Config {
            listen: args.listen,
            allow_hosts: args.allow_host.clone(),
            state_dir: dir,
            socket_path: socket,
            log,
        },
        secret.clone(),
    )?;
    show(&web::url(running.addr, &secret), args.qr)?;
    if let Some(warning) = web::exposure_warning(running.addr) {
        eprintln!("agentpane: {warning}");
    }
    running.wait();
    Ok(exit::OK)
}

/// The URL on stdout's first line (and, with `qr`, as a QR code below it), flushed.
fn show(url: &str, qr: bool) -> Result<()> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{url}")?;
    if qr {
        writeln!(out, "{}", web::qr(url)?)?;
    }
    out.flush()?;
    Ok(())
}
