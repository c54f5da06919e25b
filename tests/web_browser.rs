//! The page of `agentpane web` (docs/design.md#web-page) in a real browser: Debian's headless
//! Chromium at a phone's size (`tests/common/browser.rs`), against `agentpane web`, a watcher
//! and fake agents in a private tmux server, through the page's stable hooks (`#panes`,
//! `li.pane[data-state]`, `#detail`, `#answer`, `#request`, `#allow`, `#deny`, `#reply`,
//! `#send`, `#result`, `#auth-error`). Nothing is reached but 127.0.0.1.

mod common;

use std::time::{Duration, Instant};

use agentpane::events::AgentKind;
use common::browser::{js_str, Browser, Page};
use common::web::WebServer;
use common::{descendants, wait_until, FakeAgent, TmuxServer, Watch, DEADLINE};
use serde_json::{json, Value};

/// Markup that runs if the page ever treats model text as HTML: each sets `window.__ran`.
const HOSTILE: &str =
    "<script>window.__ran = 'script'</script><img src=x onerror=\"window.__ran = 'img'\">";

/// The Codex mid-turn fixture and the id of its open turn.
const CODEX_BUSY: &str = "codex/derived-prefix/kvsankar-session-01.prefix-L1-7.mid-turn.jsonl";
const CODEX_TURN: &str = "019e9625-806b-7343-9798-a7ca2de29a04";

/// A server with its watcher, and `agentpane web` on it.
fn world() -> (TmuxServer, Watch, WebServer) {
    let server = TmuxServer::start();
    let watch = Watch::start(&server, &[]);
    let web = WebServer::start(&server, &[]);
    (server, watch, web)
}

/// A fake Claude Code in `work/<dir>` waiting on its permission dialog
/// ([`FakeAgent::asking`]); its pane.
fn claude_asking(server: &TmuxServer, dir: &str) -> String {
    server.spawn(&FakeAgent::asking().in_dir(dir))
}

/// A fake Codex asking to run `cmd` (its approval dialog drawn); its pane.
fn codex_asking(server: &TmuxServer, cmd: &str) -> String {
    let rollout = [
        json!({"timestamp": "", "type": "turn_context", "payload": {"turn_id": "t1", "cwd": ""}}),
        json!({"timestamp": "", "type": "event_msg", "payload": {"type": "task_started", "turn_id": "t1"}}),
        json!({"timestamp": "", "type": "response_item", "payload": {
            "type": "function_call", "name": "exec_command", "call_id": "call_1",
            "arguments": json!({"cmd": cmd, "justification": "check"}).to_string()}}),
    ]
    .map(|l| l.to_string())
    .join("\n");
    let path = server.path().join("codex-asks.jsonl");
    std::fs::write(&path, rollout + "\n").unwrap();
    server.spawn(
        &FakeAgent::codex()
            .env("AGENTPANE_FAKE_AGENT", path.to_str().unwrap())
            .env("AGENTPANE_FAKE_ASK", "1")
            .in_dir("codex-asks"),
    )
}

/// The page's rows as `(data-id, data-state)`, top to bottom.
fn rows(page: &Page) -> Vec<(String, String)> {
    let v = page.eval(
        "[...document.querySelectorAll('#panes li.pane')].map(li => [li.dataset.id, li.dataset.state])",
    );
    serde_json::from_value(v).expect("rows")
}

/// The model's markup never ran: no dialog, the global it sets undefined, no element built.
fn nothing_ran(page: &Page) {
    assert_eq!(page.eval("window.__ran ?? null"), Value::Null, "markup ran");
    assert_eq!(page.dialogs(), 0, "a dialog opened");
    assert_eq!(page.count("#detail img, #detail script, #panes img"), 0);
}

#[test]
fn the_page_lists_every_pane_most_urgent_first_and_follows_a_change_live() {
    let (server, _watch, web) = world();
    let busy = server.spawn(&FakeAgent::codex().fixture(CODEX_BUSY).in_dir("busy"));
    let idle = server.spawn(&FakeAgent::idle(AgentKind::Claude).in_dir("idle"));
    let asking = claude_asking(&server, "asking");

    let browser = Browser::start();
    let page = browser.open(&web.url);
    page.wait_row(&asking, "waiting");
    page.wait_row(&idle, "your-turn");
    page.wait_row(&busy, "working");
    let listed = rows(&page);
    assert_eq!(
        listed,
        [
            (asking.clone(), "waiting".to_string()),
            (idle.clone(), "your-turn".to_string()),
            (busy.clone(), "working".to_string()),
        ],
        "every pane, most urgent first"
    );
    let waiting = Page::row(&asking);
    assert_eq!(page.text(&format!("{waiting} .agent")), "claude");
    assert!(page.text(&format!("{waiting} .state")).contains("waiting"));
    let (target, _) = common::notify::place(&server, &asking);
    assert_eq!(page.text(&format!("{waiting} .target")), target);
    assert!(page.text(&waiting).contains("mix phx.server"), "the ask");
    // Made for a phone: its width, nothing wider.
    assert_eq!(page.eval("innerWidth"), 390);
    assert_eq!(
        page.eval("document.documentElement.scrollWidth <= innerWidth"),
        true,
        "the list fits a phone's width"
    );

    // The busy Codex ends its turn: the row follows within a second of the watcher's
    // snapshot, without a reload.
    // The row is updated in place: its node survives (a tap spanning the update lands).
    page.eval("window.__same_page = true");
    let mark = format!(
        "document.querySelector({}).__kept = true",
        js_str(&Page::row(&busy))
    );
    page.eval(&mark);
    server.codex_completes(&busy, CODEX_TURN, "Done.");
    let shown = "document.querySelector(ROW)?.dataset.state === 'your-turn'"
        .replace("ROW", &js_str(&Page::row(&busy)));
    let snapshot = server.server_dir().join("state.json");
    let end = Instant::now() + DEADLINE;
    let mut written = None;
    let lag = loop {
        assert!(
            Instant::now() < end,
            "the change never showed: {:?}",
            rows(&page)
        );
        if written.is_none() && server.snapshot_row(&busy)["state"] == "your-turn" {
            let snap: Value = serde_json::from_slice(&std::fs::read(&snapshot).unwrap()).unwrap();
            let at: chrono::DateTime<chrono::Utc> =
                serde_json::from_value(snap["written_at"].clone()).unwrap();
            written = Some(at);
        }
        if page.eval(&shown) == true {
            let now = chrono::Utc::now();
            let at = written.unwrap_or_else(|| {
                // Shown before this loop saw the snapshot: the snapshot's own time.
                let snap: Value =
                    serde_json::from_slice(&std::fs::read(&snapshot).unwrap()).unwrap();
                serde_json::from_value(snap["written_at"].clone()).unwrap()
            });
            break now - at;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    eprintln!(
        "the page showed the change {} ms after the snapshot",
        lag.num_milliseconds()
    );
    assert!(
        lag < chrono::Duration::seconds(1),
        "shown {lag:?} after the snapshot"
    );
    assert_eq!(page.eval("window.__same_page ?? false"), true, "no reload");
    assert_eq!(rows(&page)[0].0, asking, "the waiting pane still first");
    let row = Page::row(&busy);
    assert_eq!(
        page.eval(&format!(
            "document.querySelector({}).__kept ?? false",
            js_str(&row)
        )),
        true,
        "the row's node was replaced, not updated"
    );
    assert!(page.text(&format!("{row} .state")).contains("your-turn"));
}

#[test]
fn tapping_an_idle_pane_shows_its_answer_with_markup_as_text_and_a_reply_reaches_it() {
    let (server, _watch, web) = world();
    let answer = format!(
        "# Fixed\n\nThe parser choked on {HOSTILE} in a title.\n\n- one\n- two\n\n```rust\nfn main() {{}}\n```\n"
    );
    let answered = server.claude_answering("answered", &answer);
    let (inbox_pane, inbox) = server.inbox_agent("inbox");

    let browser = Browser::start();
    let page = browser.open(&web.url);
    page.wait_row(&answered, "your-turn");
    page.tap_pane(&answered);
    page.wait_text("#answer", "The parser choked on");
    assert_eq!(page.text("#answer h3"), "Fixed");
    assert_eq!(page.count("#answer ul li"), 2);
    assert_eq!(page.text("#answer pre code"), "fn main() {}");
    let font = page.eval("getComputedStyle(document.querySelector('#answer pre code')).fontFamily");
    assert!(
        font.as_str().unwrap().contains("monospace"),
        "code in a monospace font: {font}"
    );
    assert!(
        page.text("#answer").contains(HOSTILE),
        "markup shown as its text: {:?}",
        page.text("#answer")
    );
    nothing_ran(&page);
    assert_eq!(
        page.eval("document.querySelector('#request-box').hidden"),
        true
    );

    // Back to the list, then the inbox agent: a reply typed on the page reaches its input.
    page.click("#back");
    // A Claude Code asked nothing yet: idle.
    page.wait_row(&inbox_pane, "idle");
    page.click(&Page::row(&inbox_pane));
    page.wait_js(
        "the reply box",
        "!document.querySelector('#reply-box').hidden",
    );
    page.type_into("#reply", "please also run the tests");
    page.click("#send");
    page.wait_text("#result", "Sent");
    wait_until(DEADLINE, "the reply in the agent's input", || {
        std::fs::read_to_string(&inbox)
            .unwrap_or_default()
            .contains("please also run the tests")
    });
    let got = std::fs::read_to_string(&inbox).unwrap();
    assert_eq!(
        got.matches("please also run the tests").count(),
        1,
        "{got:?}"
    );
}

#[test]
fn a_waiting_panes_request_shows_in_full_and_deny_or_allow_answers_it_once() {
    let (server, watch, web) = world();
    let hostile = format!("echo '{HOSTILE}' > /dev/null");
    let codex = codex_asking(&server, &hostile);
    let denied = claude_asking(&server, "denied");
    let allowed = claude_asking(&server, "allowed");
    let stale = claude_asking(&server, "stale");

    let browser = Browser::start();
    let page = browser.open(&web.url);

    // The request in full; its markup is text.
    page.wait_row(&codex, "waiting");
    page.tap_pane(&codex);
    page.wait_text("#request", &hostile);
    nothing_ran(&page);
    page.click("#back");

    // Deny: the fake Claude Code refuses the call and hands the turn back.
    page.wait_row(&denied, "waiting");
    page.tap_pane(&denied);
    page.wait_text("#request", "mix phx.server 2>&1 | head -80");
    assert_eq!(
        page.eval("document.querySelector('#allow').offsetParent !== null"),
        true
    );
    page.click("#deny");
    page.wait_text("#result", "Denied.");
    page.wait_js(
        "the request gone",
        "document.querySelector('#request-box').hidden",
    );
    page.click("#back");
    page.wait_js(
        "the denied pane no longer waiting",
        &format!(
            "document.querySelector({})?.dataset.state !== 'waiting'",
            js_str(&Page::row(&denied))
        ),
    );

    // Allow: the call goes on, once.
    page.tap_pane(&allowed);
    page.wait_text("#request", "mix phx.server");
    page.click("#allow");
    page.wait_text("#result", "Allowed once.");
    page.click("#back");
    page.wait_js(
        "the allowed pane no longer waiting",
        &format!(
            "document.querySelector({})?.dataset.state !== 'waiting'",
            js_str(&Page::row(&allowed))
        ),
    );

    // A stale page: the page shows a dialog; without the watcher the page learns nothing
    // more, and the dialog is answered at the terminal. Allow on the page is refused with the
    // reason, and nothing is typed.
    page.wait_row(&stale, "waiting");
    page.tap_pane(&stale);
    page.wait_text("#request", "mix phx.server");
    drop(watch);
    server.tmux(&["send-keys", "-t", &stale, "3"]);
    wait_until(DEADLINE, "the dialog gone from the screen", || {
        !server
            .tmux(&["capture-pane", "-p", "-t", &stale])
            .contains("Do you want to proceed?")
    });
    let transcript = server.agentpane(&["resolve", &stale, "--json"]).json()["transcript"]
        .as_str()
        .expect("a transcript")
        .to_string();
    let written = std::fs::read_to_string(&transcript).unwrap();
    page.click("#allow");
    page.wait_text("#result", "Refused, nothing typed");
    let result = page.text("#result");
    assert!(
        result.contains("no longer waits on the request you saw"),
        "{result}"
    );
    assert_eq!(
        std::fs::read_to_string(&transcript).unwrap(),
        written,
        "the agent got nothing more"
    );
    nothing_ran(&page);
}

#[test]
fn the_page_without_its_secret_shows_the_error_and_no_pane() {
    let (server, _watch, web) = world();
    let idle = server.spawn(&FakeAgent::idle(AgentKind::Claude));
    let browser = Browser::start();
    let right = browser.open(&web.url);
    right.wait_row(&idle, "your-turn");

    let base = web.url.split_once('#').unwrap().0;
    let wrong = format!("{base}#t=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA");
    for url in [wrong.as_str(), base] {
        let page = browser.open(url);
        page.wait_js(
            "the token error",
            "!document.querySelector('#auth-error').hidden",
        );
        assert!(
            page.text("#auth-error").contains("secret"),
            "{}",
            page.text("#auth-error")
        );
        assert_eq!(page.count("li.pane"), 0, "{url}: no pane shown");
        assert_eq!(page.text("#panes"), "");
        assert_eq!(page.eval("document.querySelector('#detail').hidden"), true);
    }
}

/// The README's picture of the page (docs/img/web.png): two phone screens side by side, the
/// list of demo-like panes and a waiting pane's request with Allow and Deny, drawn at twice
/// the CSS pixels. `scripts/web-capture.sh` runs this test with `AGENTPANE_WEB_PICTURE=FILE`
/// to write it; otherwise it goes to a temporary folder, and the test checks what it shows.
#[test]
fn the_readme_picture_shows_the_list_and_a_waiting_panes_request_with_its_buttons() {
    // The agents' folders are the world's `work/…`; the page shows them from a HOME there.
    let server = TmuxServer::start();
    let _watch = Watch::start(&server, &[]);
    let web = WebServer::start_env(&server, &[], &[("HOME", server.path())]);
    let asking = claude_asking(&server, "infra");
    let busy = server.spawn(&FakeAgent::codex().fixture(CODEX_BUSY).in_dir("web"));
    let idle = [
        server.spawn(&FakeAgent::idle(AgentKind::Claude).in_dir("api")),
        server.spawn(&FakeAgent::idle(AgentKind::Gemini).in_dir("docs")),
        server.spawn(&FakeAgent::idle(AgentKind::Opencode).in_dir("cli")),
        server.spawn(&FakeAgent::idle(AgentKind::Qwen).in_dir("site")),
        server.spawn(&FakeAgent::idle(AgentKind::Pi).in_dir("notes")),
    ];
    let dir = tempfile::tempdir().unwrap();
    let scale = 2;
    let browser = Browser::start_scaled(scale);
    let page = browser.open(&web.url);
    page.wait_row(&asking, "waiting");
    page.wait_row(&busy, "working");
    for pane in &idle {
        page.wait_row(pane, "your-turn");
    }
    page.wait_text("#live", "live");
    assert_eq!(
        page.text(&format!("{} .folder", Page::row(&asking))),
        "~/work/infra",
        "a folder under HOME as ~/…"
    );
    let list = dir.path().join("list.png");
    page.screenshot(&list);

    page.tap_pane(&asking);
    page.wait_text("#request", "mix phx.server 2>&1 | head -80");
    for button in ["#allow", "#deny"] {
        let seen = format!(
            "(r => r.width > 0 && r.bottom <= innerHeight)(document.querySelector({}).getBoundingClientRect())",
            js_str(button)
        );
        assert_eq!(page.eval(&seen), true, "{button} on the first screen");
    }
    let ask = dir.path().join("ask.png");
    page.screenshot(&ask);

    let (w, h) = common::browser::PHONE;
    let gap = 24;
    let sheet = dir.path().join("sheet.html");
    std::fs::write(
        &sheet,
        format!(
            "<!doctype html><meta name=viewport content=\"width=device-width\">\
             <style>body{{margin:0;background:#d9dde3;display:flex;gap:{gap}px;padding:{gap}px}}\
             img{{width:{w}px;height:{h}px;border-radius:18px;box-shadow:0 2px 10px #0004}}</style>\
             <img src=list.png><img src=ask.png>"
        ),
    )
    .unwrap();
    let size = (2 * w + 3 * gap, h + 2 * gap);
    let sheet_page = browser.open_sized(&format!("file://{}", sheet.display()), size);
    sheet_page.wait_js(
        "both screens drawn",
        "[...document.images].every(i => i.complete && i.naturalWidth > 0)",
    );
    let out = std::env::var_os("AGENTPANE_WEB_PICTURE")
        .map_or_else(|| dir.path().join("web.png"), std::path::PathBuf::from);
    sheet_page.screenshot(&out);
    let png = std::fs::read(&out).unwrap();
    let dims = |at: usize| u32::from_be_bytes(png[at..at + 4].try_into().unwrap());
    assert_eq!(
        (dims(16), dims(20)),
        (size.0 * scale, size.1 * scale),
        "the picture's size in pixels"
    );
}

/// The harness itself, on a page of the test's own: it reads, types, taps and waits, and the
/// browser (with every helper process it started) ends with the test.
#[test]
fn the_browser_reads_types_taps_and_ends_with_the_test() {
    let dir = tempfile::tempdir().unwrap();
    let page_file = dir.path().join("page.html");
    std::fs::write(
        &page_file,
        "<!doctype html><meta name=viewport content=\"width=device-width\"><textarea id=t></textarea><button id=b>go</button><p id=out></p>\
         <script>document.getElementById('b').onclick = () => setTimeout(() => \
         document.getElementById('out').textContent = 'got ' + \
         document.getElementById('t').value, 100);</script>",
    )
    .unwrap();
    let browser = Browser::start();
    let pid = browser.pid();
    let page = browser.open(&format!("file://{}", page_file.display()));
    assert_eq!(page.eval("innerWidth"), 390, "a phone-sized viewport");
    page.type_into("#t", "<b>hi</b>");
    page.click("#b");
    page.wait_text("#out", "got <b>hi</b>");
    assert_eq!(page.count("#out b"), 0);
    assert_eq!(page.dialogs(), 0);
    page.eval("setTimeout(() => alert('x'), 0)");
    wait_until(DEADLINE, "the alert seen", || page.dialogs() == 1);
    page.wait_js("the page runs on after the alert", "true");
    let png = dir.path().join("shot.png");
    page.screenshot(&png);
    assert!(std::fs::read(&png).unwrap().starts_with(b"\x89PNG"));

    let helpers = descendants(pid);
    assert!(!helpers.is_empty(), "Chromium's helper processes");
    drop(page);
    drop(browser);
    wait_until(DEADLINE, "the browser and its helpers ended", || {
        std::iter::once(pid)
            .chain(helpers.iter().copied())
            .all(|p| !is_alive(p))
    });
}

/// Whether process `pid` runs (a zombie does not).
fn is_alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            s.rsplit_once(')')
                .map(|(_, rest)| rest.trim().starts_with('Z'))
        })
        .is_some_and(|zombie| !zombie)
}
