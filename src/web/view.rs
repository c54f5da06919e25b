//! What the page shows, from the watcher's snapshot (`state.json`), pure: the rows of
//! `GET /api/panes`, most urgent first, local panes and every remote host's.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::events::Time;
use crate::remote::link::HostView;
use crate::state::State;
use crate::usage::{Limit, Usage};

/// The part of the watcher's snapshot the page needs (read leniently: a field an older
/// watcher did not write is left empty).
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Snap {
    /// The watcher that wrote it.
    #[serde(default)]
    pub pid: u32,
    #[serde(default)]
    pub socket_path: String,
    #[serde(default)]
    pub panes: Vec<SnapPane>,
    #[serde(default)]
    pub limits: Vec<Limit>,
    #[serde(default)]
    pub hosts: Vec<HostView>,
}

/// One local pane of the snapshot.
#[derive(Debug, Clone, Deserialize)]
pub struct SnapPane {
    pub pane_id: String,
    pub target: String,
    pub agent: Option<String>,
    pub state: State,
    #[serde(default)]
    pub seen: bool,
    pub reason: Option<String>,
    pub at: Option<Time>,
    #[serde(default)]
    pub glyph: String,
    #[serde(default)]
    pub transcript: Option<PathBuf>,
    #[serde(default)]
    pub usage: Option<Usage>,
    #[serde(default)]
    pub cwd: String,
    #[serde(default)]
    pub request: Option<Asked>,
}

/// What a waiting agent asks, as the page shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Asked {
    pub kind: String,
    pub tool: String,
    pub summary: String,
    pub text: String,
    pub fingerprint: String,
}

/// The short form of a request in the list.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AskedShort {
    pub summary: String,
    pub fingerprint: String,
}

/// One row of `GET /api/panes`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    /// `%3`, or `host:%3` for a pane on a remote host.
    pub id: String,
    pub host: Option<String>,
    pub agent: Option<String>,
    pub glyph: String,
    pub state: State,
    pub seen: bool,
    pub reason: Option<String>,
    /// `session:window.pane`.
    pub target: String,
    pub folder: Option<String>,
    pub at: Option<Time>,
    pub age_secs: Option<i64>,
    pub context_percent: Option<f64>,
    pub cost_usd: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request: Option<AskedShort>,
}

/// The body of `GET /api/panes` and of each `panes` event.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct List {
    pub panes: Vec<Row>,
    pub limits: Vec<Limit>,
    /// Hosts that could not be reached, with why.
    pub down: Vec<Down>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Down {
    pub host: String,
    pub reason: String,
}

/// A request as the list shows it: a waiting pane's only.
fn listed(state: State, summary: &str, fingerprint: &str) -> Option<AskedShort> {
    (state == State::Waiting).then(|| AskedShort {
        summary: summary.to_string(),
        fingerprint: fingerprint.to_string(),
    })
}

/// The rows of `snap` at `now`: panes without an agent left out, most urgent first (then the
/// newest evidence, then the target), as `panes` and the picker order them; folders under
/// `home` shown as `~/…`.
pub fn list(snap: &Snap, now: Time, home: &Path) -> List {
    let icons = crate::segment::Icons::default();
    let age = |at: Option<Time>| at.map(|t| (now - t).num_seconds().max(0));
    let mut panes: Vec<Row> = snap
        .panes
        .iter()
        .filter(|p| p.state != State::None)
        .map(|p| Row {
            id: p.pane_id.clone(),
            host: None,
            agent: p.agent.clone(),
            glyph: if p.glyph.is_empty() {
                icons.glyph(p.state, p.seen).to_string()
            } else {
                p.glyph.clone()
            },
            state: p.state,
            seen: p.seen,
            reason: p.reason.clone(),
            target: p.target.clone(),
            folder: folder(&p.cwd, home),
            at: p.at,
            age_secs: age(p.at),
            context_percent: p.usage.as_ref().and_then(|u| u.context_percent),
            cost_usd: p.usage.as_ref().and_then(|u| u.cost_usd),
            request: p
                .request
                .as_ref()
                .and_then(|r| listed(p.state, &r.summary, &r.fingerprint)),
        })
        .collect();
    let mut limits = snap.limits.clone();
    let mut down = Vec::new();
    for h in &snap.hosts {
        if let crate::remote::link::Link::Down { reason } = &h.link {
            down.push(Down {
                host: h.host.clone(),
                reason: reason.clone(),
            });
        }
        for p in h.panes().iter().filter(|p| p.state != State::None) {
            limits.extend(p.limits.iter().cloned());
            panes.push(Row {
                id: format!("{}:{}", h.host, p.pane_id),
                host: Some(h.host.clone()),
                agent: p.agent.clone(),
                glyph: icons.glyph(p.state, p.seen).to_string(),
                state: p.state,
                seen: p.seen,
                reason: p.reason.clone(),
                target: p.target.clone(),
                folder: None,
                at: p.at,
                age_secs: age(p.at),
                context_percent: p.usage.as_ref().and_then(|u| u.context_percent),
                cost_usd: p.usage.as_ref().and_then(|u| u.cost_usd),
                request: p
                    .request
                    .as_ref()
                    .and_then(|r| listed(p.state, &r.summary, &r.fingerprint)),
            });
        }
    }
    panes.sort_by(|a, b| {
        crate::state::urgent_first(
            (a.state, a.seen, a.at, &a.target),
            (b.state, b.seen, b.at, &b.target),
        )
    });
    List {
        panes,
        limits: crate::usage::merge_limits(&limits),
        down,
    }
}

/// The folder `cwd` as the page shows it: `~` for `home` and `~/…` under it, any other
/// folder as it is; none when empty. A `home` of `/` (no real home) abbreviates nothing.
pub fn folder(cwd: &str, home: &Path) -> Option<String> {
    if cwd.is_empty() {
        return None;
    }
    let under = (home.parent().is_some())
        .then(|| Path::new(cwd).strip_prefix(home).ok())
        .flatten();
    Some(match under {
        Some(rest) if rest.as_os_str().is_empty() => "~".to_string(),
        Some(rest) => format!("~/{}", rest.display()),
        None => cwd.to_string(),
    })
}

/// A pane id from the page: `%3` (local) or `host:%3`; anything else is `None`.
pub fn parse_id(id: &str) -> Option<(Option<&str>, &str)> {
    let (host, pane) = match id.rsplit_once(':') {
        Some((h, p)) => (Some(h), p),
        None => (None, id),
    };
    let digits = pane.strip_prefix('%')?;
    let ok_pane = !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit());
    let ok_host = host.map_or(true, |h| {
        !h.is_empty()
            && h.len() <= 255
            && h.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-._@".contains(&b))
    });
    (ok_pane && ok_host).then_some((host, pane))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pane(id: &str, state: State, at: i64) -> SnapPane {
        SnapPane {
            pane_id: id.into(),
            target: format!("main:{}.0", &id[1..]),
            agent: Some("claude".into()),
            state,
            seen: false,
            reason: None,
            at: Some(crate::scan::testkit::t(at)),
            glyph: String::new(),
            transcript: None,
            usage: None,
            cwd: "/src/app".into(),
            request: None,
        }
    }

    #[test]
    fn rows_are_most_urgent_first_and_agentless_panes_left_out() {
        let snap = Snap {
            panes: vec![
                pane("%1", State::Idle, 50),
                pane("%2", State::Waiting, 10),
                pane("%3", State::Working, 40),
                pane("%4", State::None, 60),
                pane("%5", State::Working, 45),
            ],
            ..Snap::default()
        };
        let l = list(&snap, crate::scan::testkit::t(100), Path::new("/home/me"));
        let ids: Vec<&str> = l.panes.iter().map(|r| r.id.as_str()).collect();
        assert_eq!(ids, ["%2", "%5", "%3", "%1"]);
        assert_eq!(l.panes[0].age_secs, Some(90));
        assert_eq!(l.panes[0].folder.as_deref(), Some("/src/app"));
        assert!(
            !l.panes[0].glyph.is_empty(),
            "a glyph even when none was written"
        );
    }

    #[test]
    fn only_a_waiting_panes_request_is_listed() {
        let mut w = pane("%1", State::Waiting, 0);
        let asked = Asked {
            kind: "permission".into(),
            tool: "Bash".into(),
            summary: "rm -rf build".into(),
            text: "rm -rf build".into(),
            fingerprint: "fp1".into(),
        };
        w.request = Some(asked.clone());
        let mut idle = pane("%2", State::Idle, 0);
        idle.request = Some(asked);
        let l = list(
            &Snap {
                panes: vec![w, idle],
                ..Snap::default()
            },
            crate::scan::testkit::t(1),
            Path::new("/home/me"),
        );
        assert_eq!(l.panes[0].request.as_ref().unwrap().fingerprint, "fp1");
        assert_eq!(l.panes[1].request, None);
    }

    #[test]
    fn folders_under_home_are_shown_as_tilde() {
        let home = Path::new("/home/me");
        let shown = |cwd: &str| folder(cwd, home);
        assert_eq!(
            shown("/home/me/work/infra").as_deref(),
            Some("~/work/infra")
        );
        assert_eq!(shown("/home/me").as_deref(), Some("~"));
        assert_eq!(shown("/home/me/").as_deref(), Some("~"));
        assert_eq!(shown("/home/meg/x").as_deref(), Some("/home/meg/x"));
        assert_eq!(shown("/srv/app").as_deref(), Some("/srv/app"));
        assert_eq!(shown(""), None);
        assert_eq!(
            folder("/srv/app", Path::new("/")).as_deref(),
            Some("/srv/app")
        );
        let mut p = pane("%1", State::Idle, 0);
        p.cwd = "/home/me/work/infra".into();
        let snap = Snap {
            panes: vec![p],
            ..Snap::default()
        };
        let l = list(&snap, crate::scan::testkit::t(1), home);
        assert_eq!(l.panes[0].folder.as_deref(), Some("~/work/infra"));
    }

    #[test]
    fn ids_are_a_pane_or_a_host_and_a_pane() {
        assert_eq!(parse_id("%3"), Some((None, "%3")));
        assert_eq!(parse_id("box:%12"), Some((Some("box"), "%12")));
        assert_eq!(parse_id("u@box.lan:%1"), Some((Some("u@box.lan"), "%1")));
        for bad in ["3", "%", "%3a", ":%3", "a b:%3", "main:1.0", "%3;ls", ""] {
            assert_eq!(parse_id(bad), None, "{bad}");
        }
    }
}
