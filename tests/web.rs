//! `agentpane web` over HTTP (`ureq`), against fake agents on a private tmux server with its
//! watcher: the list and its states, the event stream, a pane's answer as blocks, Allow held
//! to the request shown, a reply through the routing gate — and the attacks: no token, a
//! wrong one (then rate-limited), a forged Origin, a rebinding Host, a stale fingerprint,
//! markup in an answer and a request, a form post, bodies too large or not JSON.

mod common;

use std::io::{BufRead, BufReader};
use std::time::{Duration, Instant};

use common::web::{client, WebServer};
use common::{wait_until, FakeAgent, TmuxServer, Watch, DEADLINE};
use serde_json::{json, Value};

/// The fake Claude Code waiting for a decision, in its own folder; its pane.
fn claude_asking(server: &TmuxServer) -> String {
    server.spawn(&FakeAgent::claude_asking().in_dir("asking"))
}

/// A server with its watcher, and `agentpane web` on it.
fn world() -> (TmuxServer, Watch, WebServer) {
    let server = TmuxServer::start();
    let watch = Watch::start(&server, &[]);
    let web = WebServer::start(&server, &[]);
    (server, watch, web)
}

/// Waits until the list shows `pane` in `state`; its row.
fn row_in(web: &WebServer, pane: &str, state: &str) -> Value {
    let mut row = None;
    wait_until(DEADLINE, &format!("{pane} listed {state}"), || {
        row = web.row(pane).filter(|r| r["state"] == state);
        row.is_some()
    });
    row.unwrap()
}

#[test]
fn the_list_shows_every_agent_with_its_state_most_urgent_first() {
    let (server, _watch, web) = world();
    let idle = server.spawn(&FakeAgent::idle(agentpane::events::AgentKind::Codex).in_dir("idle"));
    let asking = claude_asking(&server);
    let waiting = row_in(&web, &asking, "waiting");
    row_in(&web, &idle, "your-turn");
    let list = web.get_json("/api/panes");
    let ids: Vec<&str> = list["panes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids.first(),
        Some(&asking.as_str()),
        "waiting first: {list:#}"
    );
    assert_eq!(waiting["agent"], "claude", "{waiting:#}");
    assert!(
        !waiting["glyph"].as_str().unwrap().is_empty(),
        "{waiting:#}"
    );
    assert!(
        waiting["target"].as_str().unwrap().contains(':'),
        "session:window.pane: {waiting:#}"
    );
    assert!(
        waiting["folder"].as_str().unwrap().ends_with("/asking"),
        "{waiting:#}"
    );
    assert!(waiting["age_secs"].as_i64().is_some(), "{waiting:#}");
    let fp = waiting["request"]["fingerprint"].as_str().unwrap_or("");
    assert!(
        !fp.is_empty(),
        "a waiting row carries its request: {waiting:#}"
    );
    assert!(
        waiting["request"]["summary"]
            .as_str()
            .unwrap()
            .contains("mix phx.server"),
        "{waiting:#}"
    );
}

/// Reads server-sent events from `reader` until one named `name` arrives; its data.
fn next_event(reader: &mut impl BufRead, name: &str) -> Option<String> {
    let mut event = String::new();
    let mut data = String::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end_matches('\n');
        if line.is_empty() {
            if event == name {
                return Some(data);
            }
            event.clear();
            data.clear();
        } else if let Some(e) = line.strip_prefix("event: ") {
            event = e.to_string();
        } else if let Some(d) = line.strip_prefix("data: ") {
            data.push_str(d);
        }
    }
}

/// The event stream of `web`, opened with `token`.
fn events(web: &WebServer, token: &str) -> BufReader<ureq::BodyReader<'static>> {
    let resp = client()
        .get(&format!("{}/api/events", web.base))
        .header("Authorization", &format!("Bearer {token}"))
        .call()
        .expect("GET /api/events");
    assert_eq!(resp.status().as_u16(), 200);
    let ct = resp.headers()["content-type"].to_str().unwrap().to_string();
    assert_eq!(ct, "text/event-stream");
    BufReader::new(resp.into_body().into_reader())
}

#[test]
fn the_event_stream_brings_a_change_within_a_second_of_the_snapshot() {
    let (server, _watch, web) = world();
    let mut stream = events(&web, &web.token);
    let first: Value = serde_json::from_str(&next_event(&mut stream, "panes").unwrap()).unwrap();
    assert!(first["panes"].as_array().unwrap().is_empty(), "{first:#}");
    let pane = server.spawn(&FakeAgent::idle(agentpane::events::AgentKind::Claude));
    let snapshot = server.server_dir().join("state.json");
    let deadline = Instant::now() + DEADLINE;
    loop {
        assert!(
            Instant::now() < deadline,
            "the new pane never came as an event"
        );
        let data = next_event(&mut stream, "panes").expect("the stream stays open");
        let got = chrono::Utc::now();
        let list: Value = serde_json::from_str(&data).unwrap();
        if list["panes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["id"] == pane)
        {
            // The snapshot that listed it first, as the watcher wrote it.
            let snap: Value = serde_json::from_slice(&std::fs::read(&snapshot).unwrap()).unwrap();
            let written: chrono::DateTime<chrono::Utc> =
                serde_json::from_value(snap["written_at"].clone()).unwrap();
            let lag = got - written;
            assert!(
                lag < chrono::Duration::seconds(1),
                "event {lag:?} after the snapshot was written"
            );
            break;
        }
    }
}

#[test]
fn a_panes_detail_is_its_last_answer_as_blocks_and_markup_stays_text() {
    let (server, _watch, web) = world();
    let answer = "# Fixed\n\nThe bug was in <script>alert(1)</script> handling.\n\n- one\n- two\n\n```rust\nfn main() {}\n```";
    let pane = server.claude_answering("answered", answer);
    row_in(&web, &pane, "your-turn");
    let d = web.get_json(&WebServer::pane_path(&pane));
    let blocks = d["answer"].as_array().unwrap();
    let kinds: Vec<&str> = blocks.iter().map(|b| b["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["heading", "text", "list", "code"], "{d:#}");
    assert_eq!(
        blocks[1]["text"],
        "The bug was in <script>alert(1)</script> handling."
    );
    assert_eq!(blocks[3]["lang"], "rust");
    assert_eq!(blocks[3]["text"], "fn main() {}");
    assert_eq!(d["request"], Value::Null, "{d:#}");
    assert_eq!(d["can_reply"], true, "{d:#}");
}

#[test]
fn allow_answers_the_dialog_shown_once_and_a_stale_fingerprint_types_nothing() {
    let (server, _watch, web) = world();
    let pane = claude_asking(&server);
    row_in(&web, &pane, "waiting");
    let d = web.get_json(&WebServer::pane_path(&pane));
    let request = &d["request"];
    assert_eq!(request["tool"], "Bash", "{d:#}");
    assert!(
        request["text"].as_str().unwrap().contains("mix phx.server"),
        "{d:#}"
    );
    let fp = request["fingerprint"].as_str().unwrap().to_string();
    let path = format!("{}/answer", WebServer::pane_path(&pane));

    let (status, stale) = web.post(
        &path,
        &json!({"decision": "allow", "always": false, "fingerprint": "0000stale"}),
    );
    assert_eq!(status, 409, "{stale:#}");
    assert_eq!(stale["ok"], false);
    assert_eq!(stale["keys"], json!([]), "nothing typed: {stale:#}");
    row_in(&web, &pane, "waiting");

    let (status, always) = web.post(
        &path,
        &json!({"decision": "allow", "always": true, "fingerprint": fp}),
    );
    assert_eq!(
        status, 400,
        "\"always\" without the confirmation: {always:#}"
    );

    let (status, done) = web.post(
        &path,
        &json!({"decision": "allow", "always": false, "fingerprint": fp}),
    );
    assert_eq!(status, 200, "{done:#}");
    assert_eq!(done["ok"], true, "{done:#}");
    assert_eq!(done["keys"], json!(["1"]), "{done:#}");
    wait_until(DEADLINE, "the turn goes on past the dialog", || {
        web.row(&pane).is_some_and(|r| r["state"] != "waiting")
    });
    let (status, again) = web.post(
        &path,
        &json!({"decision": "allow", "always": false, "fingerprint": fp}),
    );
    assert_eq!(status, 409, "answered once only: {again:#}");
    assert_eq!(again["keys"], json!([]), "{again:#}");
}

#[test]
fn a_reply_reaches_an_idle_agents_input_is_queued_while_busy_and_never_reaches_a_shell() {
    let (server, _watch, web) = world();
    let (agent, inbox) = server.inbox_agent("inbox");
    row_in(&web, &agent, "idle");
    let (status, sent) = web.post(
        &format!("{}/reply", WebServer::pane_path(&agent)),
        &json!({"text": "please also run the tests"}),
    );
    assert_eq!(status, 200, "{sent:#}");
    assert_eq!(sent["queued"], false, "{sent:#}");
    wait_until(DEADLINE, "the reply in the agent's input", || {
        std::fs::read_to_string(&inbox)
            .unwrap_or_default()
            .contains("please also run the tests")
    });

    let busy = server.spawn(
        &FakeAgent::codex()
            .fixture("codex/derived-prefix/kvsankar-session-01.prefix-L1-7.mid-turn.jsonl")
            .in_dir("busy"),
    );
    row_in(&web, &busy, "working");
    let (status, queued) = web.post(
        &format!("{}/reply", WebServer::pane_path(&busy)),
        &json!({"text": "next"}),
    );
    assert_eq!(status, 202, "{queued:#}");
    assert_eq!(queued["queued"], true, "{queued:#}");
    let q = server.agentpane(&["route-queue", "--json"]);
    assert!(q.stdout.contains(queued["id"].as_str().unwrap()), "{q:?}");

    let shell = server.shell_pane("sh -i");
    let marker = server.path().join("ran");
    let (status, refused) = web.post(
        &format!("{}/reply", WebServer::pane_path(&shell)),
        &json!({"text": format!("touch {}", marker.display())}),
    );
    assert_eq!(status, 409, "{refused:#}");
    assert!(
        refused["refused"]
            .as_str()
            .unwrap()
            .contains("not a coding agent"),
        "{refused:#}"
    );
    std::thread::sleep(Duration::from_millis(300));
    assert!(!marker.exists(), "nothing ran in the shell");
}

/// A request to `web` with the given headers (no token unless given); status, headers, body.
fn raw(
    web: &WebServer,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<&[u8]>,
) -> (u16, ureq::http::HeaderMap, String) {
    let url = format!("{}{path}", web.base);
    let agent = client();
    let resp = if method == "POST" {
        let mut req = agent.post(&url);
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        req.send(body.unwrap_or(b""))
    } else {
        let mut req = agent.get(&url);
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        req.call()
    }
    .expect("request");
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    (
        status,
        headers,
        resp.into_body().read_to_string().unwrap_or_default(),
    )
}

#[test]
fn every_reply_carries_the_strict_headers_and_no_cookie() {
    let (_server, _watch, web) = world();
    let bearer = format!("Bearer {}", web.token);
    for (path, auth) in [
        ("/", None),
        ("/app.js", None),
        ("/api/panes", Some(bearer.as_str())),
        ("/api/panes", None),
    ] {
        let headers: Vec<(&str, &str)> = auth.map(|a| ("Authorization", a)).into_iter().collect();
        let (_, h, _) = raw(&web, "GET", path, &headers, None);
        let csp = h["content-security-policy"].to_str().unwrap();
        assert!(csp.contains("default-src 'none'"), "{path}: {csp}");
        assert!(csp.contains("script-src 'self'"), "{path}: {csp}");
        assert!(csp.contains("frame-ancestors 'none'"), "{path}: {csp}");
        assert_eq!(h["x-content-type-options"], "nosniff", "{path}");
        assert_eq!(h["referrer-policy"], "no-referrer", "{path}");
        assert_eq!(h["cache-control"], "no-store", "{path}");
        assert!(h.get("set-cookie").is_none(), "{path}");
    }
    let page = raw(&web, "GET", "/", &[], None).2;
    assert!(
        !page.contains(&web.token),
        "the page itself holds no secret"
    );
    let script = raw(&web, "GET", "/app.js", &[], None).2;
    assert!(!script.contains("innerHTML"), "the page builds text only");
}

#[test]
fn no_token_or_a_wrong_one_gets_nothing_and_wrong_ones_are_rate_limited_and_logged() {
    let (_server, _watch, web) = world();
    let (status, _, body) = raw(&web, "GET", "/api/panes", &[], None);
    assert_eq!(status, 401, "{body}");
    assert!(!body.contains("panes\""), "{body}");
    for i in 0..5 {
        let (status, _, body) = raw(
            &web,
            "GET",
            "/api/panes",
            &[(
                "Authorization",
                "Bearer wrong-secret-wrong-secret-wrong-secret-xx",
            )],
            None,
        );
        assert_eq!(status, 401, "wrong token {i}: {body}");
    }
    let right = format!("Bearer {}", web.token);
    let (status, _, body) = raw(
        &web,
        "GET",
        "/api/panes",
        &[("Authorization", &right)],
        None,
    );
    assert_eq!(status, 429, "refused for a minute after 5 wrong: {body}");
    let mut logged = String::new();
    wait_until(DEADLINE, "the wrong tokens logged", || {
        while let Ok(l) = web.stderr.try_recv() {
            logged.push_str(&l);
            logged.push('\n');
        }
        logged.matches("wrong token from 127.0.0.1").count() >= 5
    });
    assert!(!logged.contains(&web.token), "{logged}");
}

#[test]
fn a_rebinding_host_a_forged_origin_and_a_form_post_are_refused() {
    let (server, _watch, web) = world();
    let (agent, inbox) = server.inbox_agent("inbox");
    row_in(&web, &agent, "idle");
    let bearer = format!("Bearer {}", web.token);
    let port = web.host.rsplit_once(':').unwrap().1.to_string();
    // DNS rebinding: the attacker's name resolving to 127.0.0.1.
    let evil_host = format!("evil.example:{port}");
    let (status, _, _) = raw(&web, "GET", "/", &[("Host", &evil_host)], None);
    assert_eq!(status, 421);
    let (status, _, _) = raw(
        &web,
        "GET",
        "/api/panes",
        &[("Host", &evil_host), ("Authorization", &bearer)],
        None,
    );
    assert_eq!(status, 421);
    // The loopback names are this server's.
    let localhost = format!("localhost:{port}");
    let (status, _, _) = raw(
        &web,
        "GET",
        "/api/panes",
        &[("Host", &localhost), ("Authorization", &bearer)],
        None,
    );
    assert_eq!(status, 200);

    let reply = format!("{}/reply", WebServer::pane_path(&agent));
    let body = json!({"text": "forged"}).to_string();
    let (status, _, _) = raw(
        &web,
        "POST",
        &reply,
        &[
            ("Authorization", &bearer),
            ("Content-Type", "application/json"),
            ("Origin", "http://evil.example"),
        ],
        Some(body.as_bytes()),
    );
    assert_eq!(status, 403, "a forged Origin");
    let own = format!("http://{}", web.host);
    let (status, _, _) = raw(
        &web,
        "GET",
        "/api/panes",
        &[("Authorization", &bearer), ("Origin", &own)],
        None,
    );
    assert_eq!(status, 200, "the page's own Origin");
    // A link from another site opens the page, but another site's script calls no API.
    let cross = [("Sec-Fetch-Site", "cross-site")];
    assert_eq!(raw(&web, "GET", "/", &cross, None).0, 200);
    let (status, _, _) = raw(
        &web,
        "GET",
        "/api/panes",
        &[("Authorization", &bearer), cross[0]],
        None,
    );
    assert_eq!(status, 403, "a cross-site fetch");
    // What a cross-site form can send: no JSON content type.
    let (status, _, _) = raw(
        &web,
        "POST",
        &reply,
        &[
            ("Authorization", &bearer),
            ("Content-Type", "application/x-www-form-urlencoded"),
        ],
        Some(b"text=forged"),
    );
    assert_eq!(status, 415);
    let (status, _, why) = raw(
        &web,
        "POST",
        &reply,
        &[
            ("Authorization", &bearer),
            ("Content-Type", "application/json"),
        ],
        Some(b"{\"text\": "),
    );
    assert_eq!(status, 400, "{why}");
    assert!(why.contains("bad JSON"), "{why}");
    let huge = json!({"text": "x".repeat(70 * 1024)}).to_string();
    let (status, _, _) = raw(
        &web,
        "POST",
        &reply,
        &[
            ("Authorization", &bearer),
            ("Content-Type", "application/json"),
        ],
        Some(huge.as_bytes()),
    );
    assert_eq!(status, 413);
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        !std::fs::read_to_string(&inbox)
            .unwrap_or_default()
            .contains("forged"),
        "nothing refused reached the agent"
    );
}

#[test]
fn a_request_with_markup_comes_back_as_a_json_string() {
    let (server, _watch, web) = world();
    let call = json!({"timestamp": "", "type": "response_item", "payload": {
        "type": "function_call", "name": "exec_command", "call_id": "call_1",
        "arguments": json!({"cmd": "echo '<script>alert(1)</script>'", "justification": "x"}).to_string()}});
    let rollout = [
        json!({"timestamp": "", "type": "turn_context", "payload": {"turn_id": "t1", "cwd": ""}}),
        json!({"timestamp": "", "type": "event_msg", "payload": {"type": "task_started", "turn_id": "t1"}}),
        call,
    ]
    .map(|l| l.to_string())
    .join("\n");
    let path = server.path().join("asks.jsonl");
    std::fs::write(&path, rollout + "\n").unwrap();
    let pane = server.spawn(
        &FakeAgent::codex()
            .env("AGENTPANE_FAKE_AGENT", path.to_str().unwrap())
            .env("AGENTPANE_FAKE_ASK", "1"),
    );
    row_in(&web, &pane, "waiting");
    let (status, body) = web.get(&WebServer::pane_path(&pane));
    assert_eq!(status, 200, "{body}");
    let d: Value = serde_json::from_str(&body).unwrap();
    assert!(
        d["request"]["text"]
            .as_str()
            .unwrap()
            .contains("<script>alert(1)</script>"),
        "{d:#}"
    );
}

#[test]
fn a_new_secret_ends_open_streams_and_the_old_url_stops_working() {
    let (server, _watch, web) = world();
    let mut stream = events(&web, &web.token);
    next_event(&mut stream, "panes").expect("the first event");
    let run = server.agentpane(&["web", "--new-secret"]);
    assert_eq!(run.code, 0, "{run:?}");
    let (_, _, new_token) = common::web::split_url(run.stdout.lines().next().unwrap());
    assert_ne!(new_token, web.token);
    let started = Instant::now();
    assert!(next_event(&mut stream, "end").is_some(), "the stream ends");
    assert!(started.elapsed() < Duration::from_secs(5));
    let old = format!("Bearer {}", web.token);
    let (status, _, _) = raw(&web, "GET", "/api/panes", &[("Authorization", &old)], None);
    assert_eq!(status, 401);
    let new = format!("Bearer {new_token}");
    let (status, _, _) = raw(&web, "GET", "/api/panes", &[("Authorization", &new)], None);
    assert_eq!(status, 200);
}

#[test]
fn the_watcher_serves_the_page_when_asked_and_web_url_prints_it() {
    let server = TmuxServer::start();
    server.tmux(&["set-option", "-g", "@agentpane-web", "127.0.0.1:0"]);
    let _watch = Watch::start(&server, &[]);
    let mut url = String::new();
    wait_until(DEADLINE, "web --url finds the watcher's page", || {
        let run = server.agentpane(&["web", "--url"]);
        url = run.stdout.lines().next().unwrap_or("").to_string();
        run.code == 0
    });
    let (base, _, token) = common::web::split_url(&url);
    let resp = client()
        .get(&format!("{base}/api/panes"))
        .header("Authorization", &format!("Bearer {token}"))
        .call()
        .unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    let log = std::fs::read_to_string(server.server_dir().join("watch.log")).unwrap();
    assert!(log.contains("web: page served at"), "{log}");
    assert!(!log.contains(&token), "the secret is never logged: {log}");
    let options = server.tmux(&["show-options", "-g"]);
    assert!(!options.contains(&token), "nor in a tmux option");
}

#[test]
fn at_most_sixteen_streams_are_open_and_a_new_one_ends_the_oldest() {
    let (_server, _watch, web) = world();
    let mut oldest = events(&web, &web.token);
    next_event(&mut oldest, "panes").expect("the first event");
    let _others: Vec<_> = (0..16)
        .map(|_| {
            let mut s = events(&web, &web.token);
            next_event(&mut s, "panes").expect("each stream's first event");
            s
        })
        .collect();
    assert!(next_event(&mut oldest, "end").is_some(), "the oldest ended");
    let (status, _) = web.get("/api/panes");
    assert_eq!(status, 200, "the server still answers");
}
