//! The JSON API behind the token (docs/design.md#web-page): the list, one pane's detail,
//! Allow/Deny held to the request the page showed, and a reply through the routing gate.

use std::io::Read;

use chrono::Utc;
use serde_json::json;

use super::body::{answer_body, reply_body};
use super::view::{self, Asked, Snap};
use super::{error, reply, Shared};
use crate::events::AgentKind;
use crate::state::State;

/// The largest request body read; a longer one is refused whole.
pub const MAX_BODY: usize = 64 * 1024;

/// The list as JSON (`GET /api/panes`, each `panes` event); `watcher: false` when no watcher
/// serves the tmux server (the list is then empty, and the page says why).
pub fn list_json(snap: &Snap, watched: bool) -> String {
    let list = view::list(snap, Utc::now(), &crate::paths::home_dir());
    let mut v = serde_json::to_value(&list).unwrap_or_else(|_| json!({}));
    v["watcher"] = json!(watched);
    v.to_string()
}

pub(super) fn handle(shared: &Shared, mut req: tiny_http::Request, path: &str) {
    let get = *req.method() == tiny_http::Method::Get;
    let post = *req.method() == tiny_http::Method::Post;
    if path == "/api/panes" {
        if !get {
            return error(req, 405, "GET only");
        }
        let (_, snap, watched) = shared.feed.snap();
        return reply(
            req,
            200,
            "application/json",
            list_json(&snap, watched).into(),
        );
    }
    let Some(rest) = path.strip_prefix("/api/pane/") else {
        return error(req, 404, "not found");
    };
    let (raw_id, action) = match rest.split_once('/') {
        Some((id, a)) => (id, Some(a)),
        None => (rest, None),
    };
    let Some(id) = percent_decode(raw_id) else {
        return error(req, 400, "bad pane id");
    };
    let Some((host, pane)) = view::parse_id(&id) else {
        return error(req, 400, "bad pane id: `%N` or `HOST:%N`");
    };
    let pane = pane.to_string();
    match (action, get, post) {
        (None, true, _) => detail(shared, req, host, &pane),
        (Some("answer" | "reply"), _, true) => {
            let body = match json_body(&mut req) {
                Ok(b) => b,
                Err((status, why)) => return error(req, status, &why),
            };
            if let Some(host) = host {
                let Some(host) = known_host(shared, host) else {
                    return error(req, 404, &format!("{host} is no host the watcher keeps"));
                };
                return if action == Some("answer") {
                    super::remote::answer(shared, req, &host, &pane, body)
                } else {
                    super::remote::reply_text(shared, req, &host, &pane, body)
                };
            }
            if action == Some("answer") {
                answer(shared, req, &pane, body)
            } else {
                reply_text(shared, req, &pane, body)
            }
        }
        (None, _, _) | (Some("answer" | "reply"), _, _) => error(req, 405, "method not allowed"),
        _ => error(req, 404, "not found"),
    }
}

/// The body of a POST as JSON: `application/json` only (a cross-site form cannot send it
/// without asking first), at most [`MAX_BODY`] bytes.
fn json_body(req: &mut tiny_http::Request) -> Result<serde_json::Value, (u16, String)> {
    let json = super::header(req, "Content-Type").is_some_and(|c| {
        c.split(';')
            .next()
            .is_some_and(|t| t.trim().eq_ignore_ascii_case("application/json"))
    });
    if !json {
        return Err((415, "Content-Type must be application/json".into()));
    }
    if req.body_length().is_some_and(|n| n > MAX_BODY) {
        return Err((413, format!("body larger than {MAX_BODY} bytes")));
    }
    let mut data = Vec::new();
    let read = req
        .as_reader()
        .take(MAX_BODY as u64 + 1)
        .read_to_end(&mut data);
    if read.is_err() {
        return Err((400, "cannot read the body".into()));
    }
    if data.len() > MAX_BODY {
        return Err((413, format!("body larger than {MAX_BODY} bytes")));
    }
    serde_json::from_slice(&data).map_err(|e| (400, format!("bad JSON: {e}")))
}

/// `%XX` decoded; `None` for a broken escape or text that is not UTF-8.
pub fn percent_decode(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = std::str::from_utf8(b.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// A request as the page shows it.
fn asked(r: &crate::read::request::Request) -> Asked {
    Asked {
        kind: serde_json::to_value(r.kind)
            .ok()
            .and_then(|v| v.as_str().map(String::from))
            .unwrap_or_default(),
        tool: r.tool.clone(),
        summary: r.summary.clone(),
        text: r.text.clone(),
        fingerprint: r.fingerprint.clone(),
    }
}

/// `GET /api/pane/<id>`: the last answer as blocks and, while waiting, the request in full
/// as the pane shows it now (and whether its dialog offers "always").
fn detail(shared: &Shared, req: tiny_http::Request, host: Option<&str>, pane: &str) {
    let (_, snap, _) = shared.feed.snap();
    if let Some(host) = host {
        let found = snap
            .hosts
            .iter()
            .filter(|h| h.host == host)
            .flat_map(|h| h.panes())
            .find(|p| p.pane_id == pane);
        let (Some(p), Some(host)) = (found, known_host(shared, host)) else {
            return error(req, 404, "no such pane in the watcher's last look");
        };
        let body = super::remote::detail(&host, p);
        return reply(req, 200, "application/json", body.to_string().into());
    }
    let Some(p) = snap.panes.iter().find(|p| p.pane_id == pane) else {
        return error(req, 404, "no such pane in the watcher's last look");
    };
    let agent = p.agent.as_deref().and_then(AgentKind::from_name);
    let budget = crate::read::Budget {
        max_bytes: 8 * 1024 * 1024,
        max_lines: 20_000,
    };
    let answer = p.transcript.as_deref().and_then(|t| {
        crate::extract::last_answer_within(t, agent, budget)
            .ok()
            .flatten()
    });
    let request = if p.state == State::Waiting {
        match crate::answer::offered(&shared.tmux, pane) {
            Ok(Some((r, always))) => Some((asked(&r), always)),
            _ => p.request.clone().map(|r| (r, false)),
        }
    } else {
        None
    };
    let request = request.map(|(r, always)| {
        let mut v = serde_json::to_value(r).unwrap_or_else(|_| json!({}));
        v["always"] = json!(always);
        v
    });
    let body = json!({
        "id": pane, "host": null, "target": p.target, "agent": p.agent,
        "state": p.state, "reason": p.reason, "folder": view::folder(&p.cwd, &crate::paths::home_dir()),
        "answer": answer.as_ref().map(|a| super::blocks::blocks(&a.text)).unwrap_or_default(),
        "answer_at": answer.as_ref().and_then(|a| a.at),
        "answer_partial": false,
        "request": request,
        "can_reply": p.state != State::Waiting,
    });
    reply(req, 200, "application/json", body.to_string().into())
}

/// `host` when the watcher keeps a link to it (the page shows only those hosts).
fn known_host(shared: &Shared, host: &str) -> Option<crate::remote::Host> {
    let (_, snap, _) = shared.feed.snap();
    snap.hosts
        .iter()
        .any(|h| h.host == host)
        .then(|| crate::remote::Host::parse(host).ok())
        .flatten()
}

/// `POST /api/pane/<id>/answer`: [`crate::answer::answer`] held to the fingerprint the page
/// showed; refused (409, nothing typed) with the reason it gives.
fn answer(shared: &Shared, req: tiny_http::Request, pane: &str, body: serde_json::Value) {
    let (b, choice) = match answer_body(body) {
        Ok(b) => b,
        Err((status, why)) => return error(req, status, &why),
    };
    match crate::answer::answer(
        &shared.tmux,
        pane,
        choice,
        b.always,
        Some(&b.fingerprint),
        None,
    ) {
        Ok(a) => {
            (shared.log)(&format!(
                "web: {} {pane} ({}): {}",
                b.decision,
                a.target,
                a.refused
                    .as_ref()
                    .map_or("answered".to_string(), |r| format!("refused: {r}"))
            ));
            let (status, body) = match &a.refused {
                Some(r) => (
                    409,
                    json!({"ok": false, "refused": r.to_string(), "kind": r.kind(), "keys": a.keys}),
                ),
                None => (200, json!({"ok": true, "keys": a.keys, "closed": a.closed})),
            };
            reply(req, status, "application/json", body.to_string().into())
        }
        Err(e) => error(req, 404, &format!("{e:#}")),
    }
}

/// `POST /api/pane/<id>/reply`: the text into the agent's input box through the routing
/// gate, as `agentpane route` delivers: refused for a pane without an agent (a shell), queued
/// while the agent is busy (the watcher delivers it once it is free).
fn reply_text(shared: &Shared, req: tiny_http::Request, pane: &str, body: serde_json::Value) {
    let text = match reply_body(body) {
        Ok(t) => t,
        Err((status, why)) => return error(req, status, &why),
    };
    match deliver(shared, pane, text) {
        Ok((status, body)) => reply(req, status, "application/json", body.to_string().into()),
        Err(e) => error(req, 500, &format!("{e:#}")),
    }
}

fn deliver(shared: &Shared, pane: &str, text: String) -> anyhow::Result<(u16, serde_json::Value)> {
    use crate::route::{deliver, queue};
    let tmux = &shared.tmux;
    let reports = crate::scan::scan(tmux, Utc::now())?;
    let refused = |why: String| (409, json!({"ok": false, "refused": why}));
    let to = match crate::route::recipient::of_pane(tmux, &reports, pane) {
        Ok(to) => to,
        Err(why) => return Ok(refused(why.to_string())),
    };
    let busy = match deliver::readiness(tmux, &reports, pane, &to) {
        Ok(busy) => busy,
        Err(why) => return Ok(refused(why.to_string())),
    };
    let msg = queue::Queued {
        id: queue::new_id(),
        created: Utc::now(),
        server: shared.socket_path.clone(),
        src: "web".into(),
        dst: pane.to_string(),
        text,
        submit: true,
        recipient: Some(to),
    };
    let store = queue::Store::open_default()?;
    if let Some(why) = busy {
        store.enqueue(&msg)?;
        (shared.log)(&format!("web: reply for {pane} queued ({why})"));
        return Ok((
            202,
            json!({"ok": true, "queued": true, "id": msg.id,
                   "why": format!("{pane} is busy ({why}): queued; the watcher delivers it when it is free")}),
        ));
    }
    let done = deliver::deliver_one(&store, tmux, &msg, &reports);
    (shared.log)(&format!("web: reply for {pane}: {:?}", done.outcome));
    Ok(match done.outcome {
        queue::Outcome::Delivered => (200, json!({"ok": true, "queued": false, "id": msg.id})),
        _ => refused(done.detail.unwrap_or_else(|| "not delivered".into())),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pane_ids_from_a_url_are_decoded() {
        assert_eq!(percent_decode("%253").as_deref(), Some("%3"));
        assert_eq!(percent_decode("box%3A%2512").as_deref(), Some("box:%12"));
        assert_eq!(percent_decode("%"), None);
        assert_eq!(percent_decode("%zz"), None);
        assert_eq!(percent_decode("%ff"), None, "not UTF-8");
    }
}
