//! `agentpane web`'s server (docs/design.md#web-page): one page and a JSON/SSE API over
//! HTTP (`tiny_http`), for a phone's browser. Every request passes [`guard`] first (Host,
//! Origin, bearer token, rate limit); the list and its events come from the watcher's
//! snapshot through one [`feed::Feed`]; answers and replies go through `answer` and the
//! routing gate, exactly as the commands do.

mod api;
pub mod blocks;
mod body;
pub mod feed;
pub mod guard;
mod remote;
pub mod secret;
mod stream;
pub mod view;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use anyhow::{anyhow, Result};
use serde::{Deserialize, Serialize};

use feed::Feed;

/// Where the server listens unless told otherwise.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:7878";
/// Requests (other than event streams) served at once; past that a request gets 503.
const MAX_BUSY: usize = 8;

/// Says one line to whoever runs the server (stderr, or the watcher's log).
pub type Log = Arc<dyn Fn(&str) + Send + Sync>;

/// How to run a server.
pub struct Config {
    pub listen: SocketAddr,
    /// Extra names the `Host` header may carry (`--allow-host`).
    pub allow_hosts: Vec<String>,
    pub state_dir: PathBuf,
    /// The tmux server whose panes it shows (`#{socket_path}`).
    pub socket_path: String,
    pub log: Log,
}

/// A server that runs on its own threads.
pub struct Running {
    /// The address it listens on (the port chosen when 0 was asked).
    pub addr: SocketAddr,
    pub feed: Arc<Feed>,
    accept: std::thread::JoinHandle<()>,
}

/// What the handlers share.
struct Shared {
    feed: Arc<Feed>,
    hosts: guard::Hosts,
    limiter: Mutex<guard::Limiter>,
    tmux: crate::tmux::Tmux,
    socket_path: String,
    busy: AtomicUsize,
    log: Log,
}

/// Binds `config.listen` and serves on threads of its own; the snapshot is followed from
/// now on. `secret` is the token every API call must carry.
pub fn start(config: Config, secret: String) -> Result<Running> {
    let server = tiny_http::Server::http(config.listen)
        .map_err(|e| anyhow!("cannot listen on {}: {e}", config.listen))?;
    let addr = server
        .server_addr()
        .to_ip()
        .ok_or_else(|| anyhow!("{} is not an IP address", config.listen))?;
    let feed = Feed::new(secret);
    feed::follow(feed.clone(), &config.state_dir, &config.socket_path)?;
    let shared = Arc::new(Shared {
        feed: feed.clone(),
        hosts: guard::Hosts::new(addr, &config.allow_hosts),
        limiter: Mutex::new(guard::Limiter::default()),
        tmux: crate::tmux::Tmux::new(crate::tmux::Socket::Path(config.socket_path.clone().into())),
        socket_path: config.socket_path.clone(),
        busy: AtomicUsize::new(0),
        log: config.log.clone(),
    });
    write_state(&config.state_dir, &config.socket_path, addr)?;
    let accept = std::thread::Builder::new()
        .name("web-accept".into())
        .spawn(move || {
            for req in server.incoming_requests() {
                serve(&shared, req);
            }
        })?;
    Ok(Running { addr, feed, accept })
}

impl Running {
    /// Blocks while the server runs.
    pub fn wait(self) {
        let _ = self.accept.join();
    }
}

/// The page's URL for a server at `addr` with `secret` (in the fragment: a browser never
/// sends it, so it is in no log and no `Referer`).
pub fn url(addr: SocketAddr, secret: &str) -> String {
    format!("http://{addr}/#t={secret}")
}

/// What a running server leaves in its tmux server's folder (0600), so `web --url` finds it.
#[derive(Debug, Serialize, Deserialize)]
struct State {
    pid: u32,
    addr: SocketAddr,
}

fn state_path(state_dir: &Path, socket: &str) -> PathBuf {
    crate::paths::server_dir(state_dir, socket).join("web.json")
}

fn write_state(state_dir: &Path, socket: &str, addr: SocketAddr) -> Result<()> {
    let path = state_path(state_dir, socket);
    crate::paths::ensure_private_dir(path.parent().expect("a server folder"))?;
    let state = State {
        pid: std::process::id(),
        addr,
    };
    crate::paths::write_atomic(&path, &serde_json::to_vec(&state)?)
}

/// The address of the web server this process or another runs for the tmux server at
/// `socket`, when one runs.
pub fn running_addr(state_dir: &Path, socket: &str) -> Option<SocketAddr> {
    let data = crate::paths::read_trusted(&state_path(state_dir, socket)).ok()?;
    let state: State = serde_json::from_slice(&data).ok()?;
    let listening =
        std::net::TcpStream::connect_timeout(&state.addr, std::time::Duration::from_millis(500))
            .is_ok();
    (feed::alive(state.pid) && listening).then_some(state.addr)
}

/// The headers every reply carries: nothing may be framed, sniffed, cached, referred or
/// loaded from elsewhere.
fn security_headers() -> Vec<tiny_http::Header> {
    [
        (
            "Content-Security-Policy",
            "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; \
             img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
        ),
        ("X-Content-Type-Options", "nosniff"),
        ("Referrer-Policy", "no-referrer"),
        ("Cache-Control", "no-store"),
        ("X-Frame-Options", "DENY"),
        ("Cross-Origin-Resource-Policy", "same-origin"),
    ]
    .into_iter()
    .filter_map(|(k, v)| tiny_http::Header::from_bytes(k, v).ok())
    .collect()
}

/// Sends `body` with `status` and the security headers; a client gone is no error.
fn reply(req: tiny_http::Request, status: u16, content_type: &str, body: Vec<u8>) {
    let mut resp = tiny_http::Response::from_data(body).with_status_code(status);
    for h in security_headers() {
        resp.add_header(h);
    }
    if let Ok(h) = tiny_http::Header::from_bytes("Content-Type", content_type) {
        resp.add_header(h);
    }
    let _ = req.respond(resp);
}

/// A JSON error `{"error": why}`.
fn error(req: tiny_http::Request, status: u16, why: &str) {
    let body = serde_json::json!({ "error": why }).to_string().into_bytes();
    reply(req, status, "application/json", body);
}

fn header<'a>(req: &'a tiny_http::Request, name: &'static str) -> Option<&'a str> {
    req.headers()
        .iter()
        .find(|h| h.field.equiv(name))
        .map(|h| h.value.as_str())
}

const PAGE: &str = include_str!("assets/index.html");
const SCRIPT: &str = include_str!("assets/app.js");
const STYLE: &str = include_str!("assets/app.css");

/// One request: the checks in order (Host, Origin, then for the API the rate limit and the
/// token), then the page's files or the API.
fn serve(shared: &Arc<Shared>, req: tiny_http::Request) {
    let peer = req.remote_addr().map(|a| a.ip());
    let host = header(&req, "Host").unwrap_or("").to_string();
    if !shared.hosts.admits(&host) {
        return error(req, 421, "this server does not answer to that Host name");
    }
    if let Some(origin) = header(&req, "Origin") {
        if !shared.hosts.same_origin(origin, &host) {
            return error(req, 403, "cross-origin request refused");
        }
    }
    let path = req.url().split(['?', '#']).next().unwrap_or("").to_string();
    // A link from another site may open the page, but only the page may call the API.
    let cross_site =
        header(&req, "Sec-Fetch-Site").is_some_and(|site| site.eq_ignore_ascii_case("cross-site"));
    if cross_site && path.starts_with("/api/") {
        return error(req, 403, "cross-site request refused");
    }
    let get = *req.method() == tiny_http::Method::Get;
    match path.as_str() {
        "/" | "/index.html" if get => {
            return reply(req, 200, "text/html; charset=utf-8", PAGE.into())
        }
        "/app.js" if get => {
            return reply(req, 200, "text/javascript; charset=utf-8", SCRIPT.into())
        }
        "/app.css" if get => return reply(req, 200, "text/css; charset=utf-8", STYLE.into()),
        p if !p.starts_with("/api/") => return error(req, 404, "not found"),
        _ => {}
    }
    let now = Instant::now();
    let Some(peer) = peer else {
        return error(req, 400, "no peer address");
    };
    if lock(&shared.limiter).blocked(peer, now) {
        return error(req, 429, "too many wrong tokens; wait a minute");
    }
    let secret = shared.feed.secret();
    let auth = header(&req, "Authorization");
    if auth.is_none() {
        return error(
            req,
            401,
            "this page needs its secret: open the URL `agentpane web` printed",
        );
    }
    if !guard::token_ok(auth, &secret) {
        lock(&shared.limiter).wrong(peer, now);
        (shared.log)(&format!("web: wrong token from {peer} for {path}"));
        return error(
            req,
            401,
            "wrong secret: open the URL `agentpane web --url` prints",
        );
    }
    let token = auth
        .unwrap_or("")
        .trim()
        .trim_start_matches("Bearer ")
        .trim()
        .to_string();
    if path == "/api/events" && get {
        return stream::start(shared.clone(), req, token);
    }
    if shared.busy.fetch_add(1, Ordering::SeqCst) >= MAX_BUSY {
        shared.busy.fetch_sub(1, Ordering::SeqCst);
        return error(req, 503, "busy; try again");
    }
    let s = shared.clone();
    let spawned = std::thread::Builder::new()
        .name("web-request".into())
        .spawn(move || {
            api::handle(&s, req, &path);
            s.busy.fetch_sub(1, Ordering::SeqCst);
        });
    if spawned.is_err() {
        shared.busy.fetch_sub(1, Ordering::SeqCst);
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// What to say when the server listens beyond this machine: the safe ways to reach it from a
/// phone instead. `None` on loopback.
pub fn exposure_warning(addr: SocketAddr) -> Option<String> {
    if addr.ip().is_loopback() {
        return None;
    }
    let port = addr.port();
    Some(format!(
        "warning: listening on {addr}, beyond this machine, over plain HTTP: anyone on that \
         network sees the traffic (the secret travels in every request). Safer: keep the \
         default 127.0.0.1 and reach it through an SSH tunnel (`ssh -L {port}:127.0.0.1:{port} \
         this-host`, then open the URL on the phone's side), or through Tailscale \
         (`tailscale serve {port}`, and `--allow-host <name>.ts.net`). Another name or address \
         the phone uses must be given with --allow-host."
    ))
}

/// `url` as a QR code in Unicode half blocks (two rows of modules a line), dark on light.
pub fn qr(url: &str) -> Result<String> {
    use qrcode::render::unicode::Dense1x2;
    let code = qrcode::QrCode::new(url.as_bytes()).map_err(|e| anyhow!("QR code: {e}"))?;
    Ok(code
        .render::<Dense1x2>()
        .dark_color(Dense1x2::Light)
        .light_color(Dense1x2::Dark)
        .quiet_zone(true)
        .build())
}

/// The tmux option that has the watcher serve the page: `on` (at [`DEFAULT_LISTEN`]) or an
/// `ADDR:PORT`.
pub const OPTION: &str = "@agentpane-web";
/// The tmux option with more names the page may be reached by (space-separated), as
/// `--allow-host`.
pub const ALLOW_OPTION: &str = "@agentpane-web-allow-host";

/// Where `@agentpane-web`'s value asks the watcher to listen: `None` when unset or `off`;
/// `Err` says what is wrong with it.
pub fn parse_option(value: &str) -> Result<Option<SocketAddr>, String> {
    match value.trim() {
        "" | "off" | "0" | "no" => Ok(None),
        "on" | "1" | "yes" => Ok(DEFAULT_LISTEN.parse().ok()),
        v => v.parse().map(Some).map_err(|_| {
            format!(
                "{OPTION} is `{v}`: expected `on`, `off` or an ADDR:PORT such as {DEFAULT_LISTEN}"
            )
        }),
    }
}

/// Serves the page from inside the watcher when `@agentpane-web` asks for it, on threads of
/// the watcher's own; says in its log where, and that `agentpane web --url` prints the URL
/// (never the secret: the log is a file, and tmux options are seen by every client).
pub fn start_for_watcher(
    tmux: &crate::tmux::Tmux,
    state_dir: &Path,
    socket_path: &str,
    log: Log,
) -> Option<Running> {
    let value = tmux
        .cmd(&["show-option", "-gqv", OPTION])
        .unwrap_or_default();
    let listen = match parse_option(&value) {
        Ok(Some(listen)) => listen,
        Ok(None) => return None,
        Err(why) => {
            log(&format!("web: {why}"));
            return None;
        }
    };
    let allow_hosts: Vec<String> = tmux
        .cmd(&["show-option", "-gqv", ALLOW_OPTION])
        .unwrap_or_default()
        .split_whitespace()
        .map(String::from)
        .collect();
    let started = secret::load_or_create(state_dir, false).and_then(|secret| {
        start(
            Config {
                listen,
                allow_hosts,
                state_dir: state_dir.to_path_buf(),
                socket_path: socket_path.to_string(),
                log: log.clone(),
            },
            secret,
        )
    });
    match started {
        Ok(running) => {
            log(&format!(
                "web: page served at http://{}/ ({OPTION}); `agentpane web --url` prints its URL with the secret",
                running.addr
            ));
            if let Some(w) = exposure_warning(running.addr) {
                log(&format!("web: {w}"));
            }
            Some(running)
        }
        Err(e) => {
            log(&format!("web: not served: {e:#}"));
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_option_is_on_off_or_an_address() {
        assert_eq!(parse_option(""), Ok(None));
        assert_eq!(parse_option("off"), Ok(None));
        assert_eq!(
            parse_option("on"),
            Ok(Some(DEFAULT_LISTEN.parse().unwrap()))
        );
        assert_eq!(
            parse_option(" 0.0.0.0:9000 "),
            Ok(Some("0.0.0.0:9000".parse().unwrap()))
        );
        assert!(parse_option("localhost:80")
            .unwrap_err()
            .contains("ADDR:PORT"));
    }

    #[test]
    fn only_a_non_loopback_address_is_warned_about() {
        assert_eq!(exposure_warning("127.0.0.1:7878".parse().unwrap()), None);
        assert_eq!(exposure_warning("[::1]:7878".parse().unwrap()), None);
        let w = exposure_warning("0.0.0.0:7878".parse().unwrap()).unwrap();
        assert!(w.contains("ssh -L 7878:127.0.0.1:7878"), "{w}");
        assert!(w.contains("tailscale serve"), "{w}");
        assert!(w.contains("--allow-host"), "{w}");
    }

    #[test]
    fn the_qr_code_is_half_blocks() {
        let q = qr("http://127.0.0.1:7878/#t=abc").unwrap();
        assert!(q.lines().count() > 10);
        assert!(q.contains('▀') || q.contains('▄') || q.contains('█'));
    }
}
