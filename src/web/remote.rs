//! The page's remote rows (docs/design.md#web-page): a pane on another host is shown and
//! decided through that host's own agentpane over the shared connection, as `agentpane answer
//! HOST:%N`, `last HOST:%N` and a route to `HOST:%N` do (`crate::remote::call`). The host
//! applies every rule itself; its text is untrusted and comes back as JSON strings.

use serde_json::json;

use super::body::{answer_body, reply_body};
use super::{error, reply, Shared};
use crate::remote::call::{self, Delivery};
use crate::remote::doc::RemotePane;
use crate::remote::ssh::Ssh;
use crate::remote::Host;
use crate::state::State;

/// `GET /api/pane/HOST:%N`: the whole last answer asked of the host (its head from the
/// watcher's link when the host cannot be asked) and, while waiting, the request the host's
/// document carries.
pub(super) fn detail(host: &Host, p: &RemotePane) -> serde_json::Value {
    let full = call::fetch_answer(&Ssh::from_env(), host, &p.pane_id)
        .ok()
        .flatten()
        .map(|a| a.text);
    let partial = full.is_none();
    let text = full.or_else(|| p.answer_head.clone());
    let request = p
        .request
        .as_ref()
        .filter(|_| p.state == State::Waiting)
        .map(|r| {
            // The host's dialog may offer "always"; this side cannot see it, so the page
            // offers allow and deny only.
            json!({"kind": r.kind, "tool": r.tool, "summary": r.summary, "text": r.text,
                   "fingerprint": r.fingerprint, "always": false})
        });
    json!({
        "id": format!("{host}:{}", p.pane_id), "host": host.as_str(), "target": p.target,
        "agent": p.agent, "state": p.state, "reason": p.reason,
        "answer": text.as_deref().map(super::blocks::blocks).unwrap_or_default(),
        "answer_partial": partial,
        "request": request,
        "can_reply": p.state != State::Waiting,
    })
}

/// `POST /api/pane/HOST:%N/answer`: the host's own `answer`, held to the fingerprint shown;
/// refused there → 409 with its reason, nothing typed.
pub(super) fn answer(
    shared: &Shared,
    req: tiny_http::Request,
    host: &Host,
    pane: &str,
    body: serde_json::Value,
) {
    let (b, choice) = match answer_body(body) {
        Ok(b) => b,
        Err((status, why)) => return error(req, status, &why),
    };
    if !crate::read::request::Request::is_fingerprint(&b.fingerprint) {
        return error(req, 400, "the fingerprint is not one agentpane shows");
    }
    let done = call::answer(
        &Ssh::from_env(),
        host,
        pane,
        choice == crate::answer::Choice::Allow,
        b.always,
        Some(&b.fingerprint),
    );
    let a = match done {
        Ok(a) => a,
        Err(e) => return error(req, 502, &format!("{e:#}")),
    };
    (shared.log)(&format!(
        "web: {} {host}:{pane} ({}): {}",
        b.decision,
        a.target,
        a.refused
            .as_ref()
            .map_or("answered".to_string(), |(_, why)| format!("refused: {why}"))
    ));
    let (status, body) = match &a.refused {
        Some((kind, why)) => (
            409,
            json!({"ok": false, "refused": why, "kind": kind, "keys": a.keys}),
        ),
        None => (200, json!({"ok": true, "keys": a.keys, "closed": a.closed})),
    };
    reply(req, status, "application/json", body.to_string().into())
}

/// `POST /api/pane/HOST:%N/reply`: the text on ssh's stdin to the host, which delivers it as
/// a route there does (queued while the agent is busy, refused for a shell).
pub(super) fn reply_text(
    shared: &Shared,
    req: tiny_http::Request,
    host: &Host,
    pane: &str,
    body: serde_json::Value,
) {
    let text = match reply_body(body) {
        Ok(t) => t,
        Err((status, why)) => return error(req, status, &why),
    };
    let d = Delivery {
        pane,
        from: "web",
        queue: true,
        json: true,
        ..Delivery::default()
    };
    let (code, out) = match call::deliver(&Ssh::from_env(), host, &d, &text) {
        Ok(done) => done,
        Err(e) => return error(req, 502, &format!("{e:#}")),
    };
    (shared.log)(&format!("web: reply for {host}:{pane}: exit {code}"));
    let said: serde_json::Value = serde_json::from_str(out.stdout.trim()).unwrap_or_default();
    let queued = said["outcome"] == "queued";
    let (status, body) = match code {
        crate::exit::OK => (
            if queued { 202 } else { 200 },
            json!({"ok": true, "queued": queued, "id": said["id"]}),
        ),
        _ => (409, json!({"ok": false, "refused": out.message})),
    };
    reply(req, status, "application/json", body.to_string().into())
}
