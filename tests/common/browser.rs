//! A real browser for the page's tests: Debian's headless Chromium, driven over the Chrome
//! DevTools Protocol (`headless_chrome`), in a phone-sized window with a fresh profile of its
//! own, ended by its pid when the test drops it.
//!
//! ```ignore
//! let browser = Browser::start();
//! let page = browser.open(&url);
//! page.wait_js("the list", "document.querySelectorAll('li.pane').length === 3");
//! page.click("li.pane[data-state=idle]");
//! ```
//!
//! Every wait polls a condition with a deadline; none sleeps a fixed time. A missing Chromium
//! fails the test with how to install it (CI installs it: `.ci/run`).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use headless_chrome::browser::tab::point::Point;
use headless_chrome::protocol::cdp::types::Event;
use headless_chrome::protocol::cdp::Emulation::SetDeviceMetricsOverride;
use headless_chrome::protocol::cdp::Page::CaptureScreenshotFormatOption;
use headless_chrome::{LaunchOptions, Tab};

use super::{wait_until_else, DEADLINE};

/// Where Debian's `chromium` package puts the browser.
pub const CHROMIUM: &str = "/usr/bin/chromium";

/// A phone's viewport, in CSS pixels.
pub const PHONE: (u32, u32) = (390, 844);

/// A headless Chromium of the test's own.
pub struct Browser {
    // Field order is drop order: the browser (its process, killed by pid) before its profile.
    browser: headless_chrome::Browser,
    pid: u32,
    scale: u32,
    _home: tempfile::TempDir,
}

impl Browser {
    /// A phone-sized browser at the device's usual pixel ratio for tests (1).
    pub fn start() -> Browser {
        Browser::start_scaled(1)
    }

    /// A phone-sized browser drawing `scale` device pixels per CSS pixel (2 for a sharp
    /// picture).
    pub fn start_scaled(scale: u32) -> Browser {
        assert!(
            Path::new(CHROMIUM).exists(),
            "no Chromium at {CHROMIUM}: the page's tests need it (apt-get install chromium; \
             .ci/run installs it)"
        );
        // The browser's HOME and profile: a temporary folder, never the user's.
        let home = tempfile::tempdir().expect("a temporary folder for the browser");
        let profile = home.path().join("profile");
        let scale_flag = format!("--force-device-scale-factor={scale}");
        // Without the background-networking flags Chromium keeps calling home on a network
        // that has no way out.
        let args: Vec<&std::ffi::OsStr> = [
            "--disable-quic",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-domain-reliability",
            "--no-default-browser-check",
            "--hide-scrollbars",
            scale_flag.as_str(),
        ]
        .into_iter()
        .map(std::ffi::OsStr::new)
        .collect();
        let env = [("HOME", home.path())]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string_lossy().into_owned()))
            .collect();
        let options = LaunchOptions {
            headless: true,
            sandbox: false,
            enable_gpu: false,
            window_size: Some(PHONE),
            path: Some(PathBuf::from(CHROMIUM)),
            user_data_dir: Some(profile),
            args,
            process_envs: Some(env),
            // A test may wait minutes on a real client with the browser idle meanwhile.
            idle_browser_timeout: Duration::from_secs(600),
            ..LaunchOptions::default()
        };
        let browser = headless_chrome::Browser::new(options)
            .unwrap_or_else(|e| panic!("start {CHROMIUM}: {e:#}"));
        let pid = browser.get_process_id().expect("the browser's pid");
        Browser {
            browser,
            pid,
            scale,
            _home: home,
        }
    }

    /// The browser's pid (its main process; its helpers are its children).
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// A new tab showing `url` at a phone's size, loaded.
    pub fn open(&self, url: &str) -> Page {
        self.open_sized(url, PHONE)
    }

    /// A new tab showing `url` in a viewport of `size` CSS pixels, loaded.
    pub fn open_sized(&self, url: &str, size: (u32, u32)) -> Page {
        let tab = self.browser.new_tab().expect("a new tab");
        tab.set_default_timeout(DEADLINE);
        // No pauses between keys and clicks: the tests wait for what they look for.
        tab.set_slow_motion_multiplier(0.0);
        // A phone's viewport, pixel ratio and mobile layout (a new tab does not take the
        // window's size).
        let phone: SetDeviceMetricsOverride = serde_json::from_value(serde_json::json!({
            "width": size.0, "height": size.1, "deviceScaleFactor": self.scale,
            "mobile": true,
        }))
        .expect("device metrics");
        tab.call_method(phone).expect("a phone's viewport");
        // In front, as the tab a person looks at: a background tab may draw no frames.
        tab.activate().expect("the tab in front");
        let dialogs = Arc::new(AtomicUsize::new(0));
        let seen = dialogs.clone();
        let weak = Arc::downgrade(&tab);
        tab.add_event_listener(Arc::new(move |event: &Event| {
            if let Event::PageJavascriptDialogOpening(_) = event {
                seen.fetch_add(1, Ordering::SeqCst);
                // Dismissed at once (off the thread that delivers events, which the answer
                // needs), so a script that got to run cannot hang the test.
                let weak = weak.clone();
                std::thread::spawn(move || weak.upgrade().map(|t| t.get_dialog().dismiss()));
            }
        }))
        .expect("listen for dialogs");
        tab.navigate_to(url)
            .and_then(|t| t.wait_until_navigated())
            .unwrap_or_else(|e| panic!("open {url}: {e:#}"));
        Page { tab, dialogs }
    }
}

/// A tab of a [`Browser`].
pub struct Page {
    tab: Arc<Tab>,
    dialogs: Arc<AtomicUsize>,
}

impl Page {
    /// The value of the JavaScript expression `expr` (passed through JSON).
    pub fn eval(&self, expr: &str) -> serde_json::Value {
        let wrapped = format!("JSON.stringify({expr}) ?? 'null'");
        let out = self
            .tab
            .evaluate(&wrapped, false)
            .unwrap_or_else(|e| panic!("evaluate {expr}: {e:#}"));
        match out.value {
            Some(serde_json::Value::String(s)) => serde_json::from_str(&s).expect("JSON"),
            other => panic!(
                "evaluate {expr}: no value ({other:?}, {:?})",
                out.description
            ),
        }
    }

    /// Waits until the JavaScript expression `cond` is true; panics naming `what` (and what
    /// the page showed) after the deadline.
    pub fn wait_js(&self, what: &str, cond: &str) {
        self.wait_js_within(DEADLINE, what, cond);
    }

    /// [`wait_js`](Self::wait_js) with a deadline of the caller's.
    pub fn wait_js_within(&self, deadline: Duration, what: &str, cond: &str) {
        wait_until_else(
            deadline,
            what,
            || self.eval(&format!("!!({cond})")) == serde_json::Value::Bool(true),
            || format!("the page's text:\n{}", self.text("body")),
        );
    }

    /// Waits until an element matches `selector`.
    pub fn wait_for(&self, selector: &str) {
        self.wait_js(
            &format!("an element {selector}"),
            &format!("document.querySelector({})", js_str(selector)),
        );
    }

    /// Waits until the element `selector` shows `text` somewhere in its text.
    pub fn wait_text(&self, selector: &str, text: &str) {
        self.wait_js(
            &format!("{selector} to show {text:?}"),
            &format!(
                "(document.querySelector({})?.textContent ?? '').includes({})",
                js_str(selector),
                js_str(text)
            ),
        );
    }

    /// The text of the first element matching `selector` ("" when there is none).
    pub fn text(&self, selector: &str) -> String {
        let v = self.eval(&format!(
            "document.querySelector({})?.textContent ?? ''",
            js_str(selector)
        ));
        v.as_str().unwrap_or_default().to_string()
    }

    /// How many elements match `selector`.
    pub fn count(&self, selector: &str) -> usize {
        let v = self.eval(&format!(
            "document.querySelectorAll({}).length",
            js_str(selector)
        ));
        v.as_u64().expect("a count") as usize
    }

    /// Taps the element `selector`: a real mouse click at its middle (scrolled into view),
    /// once it is there and nothing covers it (the point is taken and checked in one step).
    pub fn click(&self, selector: &str) {
        let sel = js_str(selector);
        let find = format!(
            "(() => {{ const e = document.querySelector({sel}); if (!e) return null; \
             e.scrollIntoView({{block: 'center', inline: 'center', behavior: 'instant'}}); \
             const r = e.getBoundingClientRect(); \
             const x = r.left + r.width / 2, y = r.top + r.height / 2; \
             const hit = document.elementFromPoint(x, y); \
             return r.width > 0 && hit && hit.closest({sel}) ? [x, y] : null; }})()"
        );
        let mut at = None;
        wait_until_else(
            DEADLINE,
            &format!("{selector} to tap"),
            || {
                at = serde_json::from_value::<Option<(f64, f64)>>(self.eval(&find))
                    .expect("a point or null");
                at.is_some()
            },
            || format!("the page's text:\n{}", self.text("body")),
        );
        let (x, y) = at.expect("a point");
        self.tab
            .click_point(Point { x, y })
            .unwrap_or_else(|e| panic!("tap {selector}: {e:#}"));
    }

    /// Taps the element `selector` and enters `text` there as a phone's keyboard does (one
    /// insertion: the page sees its `input` event).
    pub fn type_into(&self, selector: &str, text: &str) {
        self.click(selector);
        self.tab
            .send_character(text)
            .unwrap_or_else(|e| panic!("type into {selector}: {e:#}"));
    }

    /// How many JavaScript dialogs (`alert`, `confirm`, `prompt`) the page has opened.
    pub fn dialogs(&self) -> usize {
        self.dialogs.load(Ordering::SeqCst)
    }

    /// Reloads the page and waits until it has loaded.
    pub fn reload(&self) {
        self.tab
            .reload(false, None)
            .and_then(|t| t.wait_until_navigated())
            .expect("reload");
    }

    /// The page as it looks now, as a PNG at `path`.
    pub fn screenshot(&self, path: &Path) {
        let png = self
            .tab
            .capture_screenshot(CaptureScreenshotFormatOption::Png, None, None, true)
            .expect("a screenshot");
        std::fs::write(path, png).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
    }
}

/// agentpane's page, through its stable hooks (docs/design.md#web-page).
impl Page {
    /// The selector of `pane`'s row in the list.
    pub fn row(pane: &str) -> String {
        format!("li.pane[data-id={}]", js_str(pane))
    }

    /// Waits until the list shows `pane` in `state`.
    pub fn wait_row(&self, pane: &str, state: &str) {
        self.wait_js(
            &format!("{pane} listed {state}"),
            &format!(
                "document.querySelector({})?.dataset.state === {}",
                js_str(&Page::row(pane)),
                js_str(state)
            ),
        );
    }

    /// Taps `pane`'s row and waits for its detail (its answer drawn). The page updates its
    /// rows in place, so a tap spanning an update still lands on the row.
    pub fn tap_pane(&self, pane: &str) {
        self.click(&Page::row(pane));
        self.wait_js(
            "the detail",
            "!document.querySelector('#detail').hidden \
             && document.querySelector('#answer').children.length > 0",
        );
    }
}

/// `s` as a JavaScript string literal.
pub fn js_str(s: &str) -> String {
    serde_json::Value::String(s.to_string()).to_string()
}
