//! The checks every request passes before it is served (docs/design.md#web-page), pure: the
//! `Host` a browser sent (DNS rebinding), the `Origin` (cross-site requests), the bearer
//! token (compared in constant time) and the limit on wrong tokens per peer.

use std::collections::HashMap;
use std::net::IpAddr;
use std::time::{Duration, Instant};

use subtle::ConstantTimeEq;

/// The names a request's `Host` may carry for a server listening on `port` at `listen`: the
/// listen address itself, the loopback names, and every `--allow-host` name (with or without
/// the port: a proxy such as `tailscale serve` forwards its own name on its own port).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hosts {
    listen: String,
    port: u16,
    allowed: Vec<String>,
}

impl Hosts {
    pub fn new(listen: std::net::SocketAddr, allowed: &[String]) -> Hosts {
        let ip = match listen.ip() {
            IpAddr::V6(v6) => format!("[{v6}]"),
            IpAddr::V4(v4) => v4.to_string(),
        };
        Hosts {
            listen: format!("{ip}:{}", listen.port()),
            port: listen.port(),
            allowed: allowed.iter().map(|h| h.to_ascii_lowercase()).collect(),
        }
    }

    /// Whether `host` (the request's `Host` header) names this server.
    pub fn admits(&self, host: &str) -> bool {
        let host = host.trim().to_ascii_lowercase();
        if host == self.listen {
            return true;
        }
        let port = self.port;
        if ["localhost", "127.0.0.1", "[::1]"]
            .iter()
            .any(|name| host == format!("{name}:{port}"))
        {
            return true;
        }
        let bare = strip_port(&host);
        self.allowed.iter().any(|a| host == *a || bare == a)
    }

    /// Whether `origin` (the request's `Origin` header, when it has one) is this page's own:
    /// `http://` or `https://` and a host [`Hosts::admits`] with the same `Host` the request
    /// came to (a page served as one name never speaks for another).
    pub fn same_origin(&self, origin: &str, host: &str) -> bool {
        let origin = origin.trim().to_ascii_lowercase();
        let Some(rest) = origin
            .strip_prefix("http://")
            .or_else(|| origin.strip_prefix("https://"))
        else {
            return false;
        };
        let rest = rest.trim_end_matches('/');
        let host = host.trim().to_ascii_lowercase();
        // `tailscale serve` (https on 443) forwards `Host: name.ts.net`: the origin then has
        // no port either.
        (rest == host || strip_port(rest) == host || rest == strip_port(&host))
            && self.admits(&host)
    }
}

/// `name` without a trailing `:PORT` (an IPv6 literal keeps its brackets).
fn strip_port(host: &str) -> &str {
    match host.rfind(':') {
        Some(i)
            if !host[i..].contains(']') && host[i + 1..].chars().all(|c| c.is_ascii_digit()) =>
        {
            &host[..i]
        }
        _ => host,
    }
}

/// Whether the `Authorization` header carries `Bearer <secret>`; the comparison takes the same
/// time wherever the first wrong byte is.
pub fn token_ok(authorization: Option<&str>, secret: &str) -> bool {
    let Some(given) = authorization.and_then(|a| a.trim().strip_prefix("Bearer ")) else {
        return false;
    };
    given.trim().as_bytes().ct_eq(secret.as_bytes()).into()
}

/// How many wrong tokens a peer may send in [`WINDOW`] before it is refused for a [`WINDOW`].
pub const MAX_WRONG: usize = 5;
pub const WINDOW: Duration = Duration::from_secs(60);
/// Peers remembered at most: past that, the oldest record is forgotten.
const MAX_PEERS: usize = 1024;

/// Wrong tokens per peer address, over the last [`WINDOW`].
#[derive(Debug, Default)]
pub struct Limiter {
    wrong: HashMap<IpAddr, Vec<Instant>>,
}

impl Limiter {
    /// Whether `peer` is refused now (it sent [`MAX_WRONG`] wrong tokens within the window).
    pub fn blocked(&mut self, peer: IpAddr, now: Instant) -> bool {
        self.forget(now);
        self.wrong.get(&peer).is_some_and(|w| w.len() >= MAX_WRONG)
    }

    /// Counts a wrong token from `peer`.
    pub fn wrong(&mut self, peer: IpAddr, now: Instant) {
        self.forget(now);
        if self.wrong.len() >= MAX_PEERS && !self.wrong.contains_key(&peer) {
            let oldest = self
                .wrong
                .iter()
                .min_by_key(|(_, w)| w.last().copied())
                .map(|(ip, _)| *ip);
            if let Some(ip) = oldest {
                self.wrong.remove(&ip);
            }
        }
        self.wrong.entry(peer).or_default().push(now);
    }

    fn forget(&mut self, now: Instant) {
        self.wrong.retain(|_, w| {
            w.retain(|t| now.saturating_duration_since(*t) < WINDOW);
            !w.is_empty()
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hosts(listen: &str, allowed: &[&str]) -> Hosts {
        let allowed: Vec<String> = allowed.iter().map(|s| s.to_string()).collect();
        Hosts::new(listen.parse().unwrap(), &allowed)
    }

    #[test]
    fn only_this_servers_names_are_hosts() {
        let h = hosts("127.0.0.1:7878", &[]);
        for ok in [
            "127.0.0.1:7878",
            "localhost:7878",
            "LOCALHOST:7878",
            "[::1]:7878",
        ] {
            assert!(h.admits(ok), "{ok}");
        }
        for bad in [
            "evil.example:7878",
            "localhost",
            "localhost:80",
            "127.0.0.1",
            "127.0.0.1:7879",
            "",
            "localhost:7878.evil.example",
        ] {
            assert!(!h.admits(bad), "{bad}");
        }
        let ts = hosts("127.0.0.1:7878", &["box.tail1.ts.net"]);
        assert!(ts.admits("box.tail1.ts.net"));
        assert!(ts.admits("box.tail1.ts.net:443"));
        assert!(!ts.admits("box.tail1.ts.net.evil.example"));
        let any = hosts("0.0.0.0:9000", &[]);
        assert!(any.admits("0.0.0.0:9000"));
        assert!(!any.admits("192.168.1.5:9000"), "only a name asked for");
        let v6 = hosts("[::1]:9000", &[]);
        assert!(v6.admits("[::1]:9000"));
    }

    #[test]
    fn only_the_pages_own_origin_is_same_origin() {
        let h = hosts("127.0.0.1:7878", &["box.ts.net"]);
        assert!(h.same_origin("http://127.0.0.1:7878", "127.0.0.1:7878"));
        assert!(h.same_origin("http://localhost:7878", "localhost:7878"));
        assert!(h.same_origin("https://box.ts.net", "box.ts.net"));
        assert!(!h.same_origin("http://evil.example", "127.0.0.1:7878"));
        assert!(!h.same_origin("http://localhost:7878", "127.0.0.1:7878"));
        assert!(!h.same_origin("null", "127.0.0.1:7878"));
        assert!(!h.same_origin("http://evil.example:7878", "evil.example:7878"));
    }

    #[test]
    fn the_token_is_the_secret_after_bearer() {
        assert!(token_ok(Some("Bearer s3cret"), "s3cret"));
        assert!(!token_ok(Some("Bearer s3cre"), "s3cret"));
        assert!(!token_ok(Some("Bearer s3cretX"), "s3cret"));
        assert!(!token_ok(Some("s3cret"), "s3cret"));
        assert!(!token_ok(Some("Basic s3cret"), "s3cret"));
        assert!(!token_ok(None, "s3cret"));
        assert!(!token_ok(Some("Bearer "), "s3cret"));
    }

    #[test]
    fn five_wrong_tokens_in_a_minute_block_that_peer_for_a_minute() {
        let mut l = Limiter::default();
        let (a, b): (IpAddr, IpAddr) = ("10.0.0.1".parse().unwrap(), "10.0.0.2".parse().unwrap());
        let t0 = Instant::now();
        for i in 0..MAX_WRONG {
            assert!(!l.blocked(a, t0), "after {i}");
            l.wrong(a, t0 + Duration::from_secs(i as u64));
        }
        assert!(l.blocked(a, t0 + Duration::from_secs(10)));
        assert!(!l.blocked(b, t0 + Duration::from_secs(10)), "another peer");
        assert!(
            !l.blocked(a, t0 + WINDOW + Duration::from_secs(5)),
            "a minute later"
        );
    }
}
