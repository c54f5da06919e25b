//! The picker without a terminal: rows in urgency order, their layout, what a key does, and
//! the screen as lines of text. The edge (`term.rs`, `mod.rs`) feeds it data and keys and
//! draws what [`Picker::render`] returns.

use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

use crate::events::Time;
use crate::scan::PaneReport;
use crate::segment::Icons;
use crate::state::State;
use crate::text::{terminal_line, terminal_safe};

/// One agent pane as the picker lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub pane_id: String,
    /// `session:window.pane`.
    pub target: String,
    pub glyph: String,
    pub state: State,
    pub seen: bool,
    pub agent: String,
    pub reason: Option<String>,
    /// The deciding event, else the last activity.
    pub at: Option<Time>,
    /// First line of the last answer.
    pub head: Option<String>,
    /// Unread channel mail for the member bound to this pane.
    pub unread: usize,
    /// While waiting: what the agent asks to decide.
    pub request: Option<crate::read::request::Request>,
    /// The context in use and the cost, compact (`38% $1.20`); empty when unknown.
    pub usage: String,
}

/// A pane's usage cell: the context in use, and the cost when the agent records one.
fn usage_cell(u: Option<&crate::usage::Usage>) -> String {
    let Some(u) = u else {
        return String::new();
    };
    let context = crate::usage::context_cell(u);
    match u.cost_usd {
        Some(_) => format!("{context} {}", crate::usage::cost_cell(u)),
        None => context,
    }
}

impl Row {
    /// The row of one scanned pane; `head` and `unread` come from the answer cache and the
    /// channels.
    pub fn of(r: &PaneReport, icons: &Icons, head: Option<String>, unread: usize) -> Row {
        let s = &r.status;
        Row {
            pane_id: r.resolved.pane.pane_id.clone(),
            target: r.resolved.pane.target(),
            glyph: icons.glyph(s.state, s.seen).to_string(),
            state: s.state,
            seen: s.seen,
            agent: r
                .resolved
                .agent
                .as_ref()
                .map_or_else(|| "-".into(), |a| a.kind.to_string()),
            reason: s.reason.clone(),
            at: s.at.or(s.last_activity),
            head,
            unread,
            request: s.request.clone(),
            usage: usage_cell(r.usage.as_deref().map(|m| &m.usage)),
        }
    }
}

impl Row {
    /// The row of a pane on a remote host: its id and target carry the host (`devbox:%3`,
    /// `devbox:work:1.0`), so every action names it as a `HOST:PANE` target.
    pub fn remote(host: &str, p: &crate::remote::doc::RemotePane, icons: &Icons) -> Row {
        Row {
            pane_id: format!("{host}:{}", p.pane_id),
            target: format!("{host}:{}", p.target),
            glyph: icons.glyph(p.state, p.seen).to_string(),
            state: p.state,
            seen: p.seen,
            agent: p.agent.clone().unwrap_or_else(|| "-".into()),
            reason: p.reason.clone(),
            at: p.at,
            head: p.answer_head.clone(),
            unread: 0,
            // y/n answer it there (`answer HOST:%N`), held to this fingerprint.
            request: p
                .request
                .as_ref()
                .filter(|_| p.state == State::Waiting)
                .map(crate::remote::doc::RemoteRequest::to_request),
            usage: usage_cell(p.usage.as_ref()),
        }
    }
}

/// Most urgent first; among equals the newest evidence, then tmux order.
pub fn order(rows: &mut [Row]) {
    rows.sort_by(|a, b| {
        crate::state::urgent_first(
            (a.state, a.seen, a.at, &a.target),
            (b.state, b.seen, b.at, &b.target),
        )
    });
}

/// A key, as far as the picker cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    Up,
    Down,
    PageUp,
    PageDown,
    Home,
    End,
    Enter,
    Esc,
    Char(char),
    /// Ctrl-C.
    Interrupt,
    Other,
}

/// What the edge must do after a key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    None,
    Quit,
    /// Switch the client to this pane, then close.
    Jump(String),
    /// Route `from`'s answer into `to` (the `route` rules: queued while `to` is busy).
    Route {
        from: String,
        to: String,
    },
    /// Start a relay between `from` and `to` in the watcher, or stop the one that runs.
    Relay {
        from: String,
        to: String,
    },
    /// Load this pane's whole last answer and show it.
    ShowAnswer(String),
    /// Answer what this pane asks, held to the request shown (its fingerprint).
    Decide {
        pane: String,
        choice: crate::answer::Choice,
        fingerprint: String,
    },
}

/// Which screen is up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mode {
    List,
    /// A whole answer, scrolled to line `top` of its wrapped lines.
    Answer {
        title: String,
        text: String,
        top: usize,
    },
    /// What a waiting pane asks, before `y` allows it once or `n` denies it.
    Decide {
        pane: String,
        title: String,
        text: String,
        fingerprint: String,
    },
}

/// The terminal's size in cells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct View {
    pub width: usize,
    pub height: usize,
}

/// One line to draw; `reverse` marks the selection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    pub text: String,
    pub reverse: bool,
}

impl Line {
    fn plain(text: String) -> Line {
        Line {
            text,
            reverse: false,
        }
    }
}

/// The picker's state.
#[derive(Debug, Clone)]
pub struct Picker {
    pub rows: Vec<Row>,
    /// The selected pane (kept across refreshes by id).
    selected: Option<String>,
    pub mode: Mode,
    /// One line of feedback (a route's result, "no answer yet").
    pub message: Option<String>,
    /// The pane the picker was opened from: what `r` routes.
    pub from: Option<String>,
    /// Opened on one answer (the last-answer key): closing the answer closes the picker.
    answer_only: bool,
}

/// Lines above the list (title, column header) and below it (footer).
const LIST_CHROME: usize = 3;

impl Picker {
    pub fn new(from: Option<String>, answer_only: bool) -> Picker {
        Picker {
            rows: Vec::new(),
            selected: None,
            mode: Mode::List,
            message: None,
            from,
            answer_only,
        }
    }

    /// New data: ordered, the selection kept on the same pane when it is still there (else on
    /// the same position, else on the pane the picker came from, else the first row).
    pub fn set_rows(&mut self, mut rows: Vec<Row>) {
        order(&mut rows);
        let old = self.selected_index();
        let keep = self
            .selected
            .as_ref()
            .filter(|id| rows.iter().any(|r| &r.pane_id == *id))
            .cloned();
        self.selected = keep.or_else(|| match old {
            Some(i) if !rows.is_empty() => Some(rows[i.min(rows.len() - 1)].pane_id.clone()),
            _ => rows.first().map(|r| r.pane_id.clone()),
        });
        self.rows = rows;
    }

    /// The selected row's index.
    pub fn selected_index(&self) -> Option<usize> {
        let id = self.selected.as_ref()?;
        self.rows.iter().position(|r| &r.pane_id == id)
    }

    /// The selected row.
    pub fn selected(&self) -> Option<&Row> {
        self.selected_index().map(|i| &self.rows[i])
    }

    fn select(&mut self, index: usize) {
        if let Some(r) = self.rows.get(index.min(self.rows.len().saturating_sub(1))) {
            self.selected = Some(r.pane_id.clone());
        }
    }

    /// Shows an answer (sanitised: it is untrusted text) from its first line.
    pub fn show_answer(&mut self, title: String, text: &str) {
        self.mode = Mode::Answer {
            title: terminal_line(&title),
            text: terminal_safe(text).replace('\t', "    "),
            top: 0,
        };
    }

    /// What `key` does in the current mode.
    pub fn key(&mut self, key: Key, view: View) -> Action {
        if key == Key::Interrupt {
            return Action::Quit;
        }
        if matches!(self.mode, Mode::Answer { .. }) {
            return self.answer_key(key, view);
        }
        if let Mode::Decide {
            pane, fingerprint, ..
        } = &self.mode
        {
            let choice = match key {
                Key::Char('y') => crate::answer::Choice::Allow,
                Key::Char('n') => crate::answer::Choice::Deny,
                Key::Esc | Key::Char('q') => {
                    self.mode = Mode::List;
                    return Action::None;
                }
                _ => return Action::None,
            };
            let action = Action::Decide {
                pane: pane.clone(),
                choice,
                fingerprint: fingerprint.clone(),
            };
            self.mode = Mode::List;
            return action;
        }
        self.message = None;
        let page = view.height.saturating_sub(LIST_CHROME).max(1);
        let at = self.selected_index().unwrap_or(0);
        match key {
            Key::Up | Key::Char('k') => self.select(at.saturating_sub(1)),
            Key::Down | Key::Char('j') => self.select(at + 1),
            Key::PageUp => self.select(at.saturating_sub(page)),
            Key::PageDown => self.select(at + page),
            Key::Home | Key::Char('g') => self.select(0),
            Key::End | Key::Char('G') => self.select(usize::MAX),
            Key::Esc | Key::Char('q') => return Action::Quit,
            Key::Enter => {
                if let Some(r) = self.selected() {
                    return Action::Jump(r.pane_id.clone());
                }
            }
            Key::Char('p') => {
                if let Some(r) = self.selected() {
                    return Action::ShowAnswer(r.pane_id.clone());
                }
            }
            Key::Char('r') => return self.route_action(),
            Key::Char('l') => {
                return match self.route_action() {
                    Action::Route { from, to } => Action::Relay { from, to },
                    other => other,
                }
            }
            Key::Char('y') | Key::Char('n') => self.show_request(),
            _ => {}
        }
        Action::None
    }

    /// Selects the most urgent pane that waits on a decision and shows what it asks; false
    /// when none does.
    pub fn open_decision(&mut self) -> bool {
        let Some(i) = self
            .rows
            .iter()
            .position(|r| r.state == State::Waiting && r.request.is_some())
        else {
            return false;
        };
        self.select(i);
        self.show_request();
        true
    }

    /// Shows what the selected pane asks (`y`/`n` then answer it), or says it asks nothing.
    fn show_request(&mut self) {
        let Some(row) = self.selected() else {
            return;
        };
        match (&row.request, row.state) {
            (Some(r), State::Waiting) => {
                let title = format!(
                    "{} {} asks ({}): y allow once · n deny · q back",
                    row.target, row.agent, r.tool
                );
                self.mode = Mode::Decide {
                    pane: row.pane_id.clone(),
                    title: terminal_line(&title),
                    text: terminal_safe(&r.text).replace('\t', "    "),
                    fingerprint: r.fingerprint.clone(),
                };
            }
            _ => self.message = Some(format!("{} is not waiting on a decision", row.target)),
        }
    }

    fn route_action(&mut self) -> Action {
        let (Some(from), Some(to)) = (self.from.clone(), self.selected().cloned()) else {
            self.message = Some("nothing to route: no pane to route from".into());
            return Action::None;
        };
        if from == to.pane_id {
            self.message = Some(format!(
                "{} is the pane you came from: pick another one to route into",
                to.target
            ));
            return Action::None;
        }
        Action::Route {
            from,
            to: to.pane_id,
        }
    }

    fn answer_key(&mut self, key: Key, view: View) -> Action {
        let answer_only = self.answer_only;
        let Mode::Answer { text, top, .. } = &mut self.mode else {
            return Action::None;
        };
        let body = view.height.saturating_sub(2).max(1);
        let last_top = wrap(text, view.width).len().saturating_sub(body);
        match key {
            Key::Up | Key::Char('k') => *top = top.saturating_sub(1),
            Key::Down | Key::Char('j') | Key::Enter => *top = (*top + 1).min(last_top),
            Key::PageUp | Key::Char('b') => *top = top.saturating_sub(body),
            Key::PageDown | Key::Char(' ') | Key::Char('f') => *top = (*top + body).min(last_top),
            Key::Home | Key::Char('g') => *top = 0,
            Key::End | Key::Char('G') => *top = last_top,
            Key::Esc | Key::Char('q') if answer_only => return Action::Quit,
            Key::Esc | Key::Char('q') => self.mode = Mode::List,
            _ => {}
        }
        Action::None
    }

    /// The screen: at most `view.height` lines, none wider than `view.width` cells.
    pub fn render(&self, now: Time, view: View) -> Vec<Line> {
        let mut lines = match &self.mode {
            Mode::List => self.render_list(now, view),
            Mode::Answer { title, text, top } => self.render_answer(title, text, *top, view),
            Mode::Decide { title, text, .. } => self.render_answer(title, text, 0, view),
        };
        lines.truncate(view.height);
        for l in &mut lines {
            l.text = fit(&l.text, view.width);
        }
        lines
    }

    fn render_list(&self, now: Time, view: View) -> Vec<Line> {
        let count = match self.rows.len() {
            1 => "1 agent pane".to_string(),
            n => format!("{n} agent panes"),
        };
        let mut lines = vec![Line::plain(format!(" agentpane · {count}"))];
        if self.rows.is_empty() {
            lines.push(Line::plain(
                " no coding agent runs in any pane of this tmux server".into(),
            ));
        } else {
            let widths = Widths::of(&self.rows);
            lines.push(Line::plain(widths.header()));
            let body = view.height.saturating_sub(LIST_CHROME).max(1);
            let sel = self.selected_index().unwrap_or(0);
            let first = (sel + 1).saturating_sub(body);
            for (i, row) in self.rows.iter().enumerate().skip(first).take(body) {
                lines.push(Line {
                    text: widths.row(row, now),
                    reverse: i == sel,
                });
            }
        }
        while lines.len() + 1 < view.height {
            lines.push(Line::plain(String::new()));
        }
        let help = match &self.from {
            Some(from) => format!(
                " ↑↓/jk move · ⏎ jump · r route {from} here · l relay · p answer · y/n decide · q quit"
            ),
            None => " ↑↓/jk move · ⏎ jump · p answer · y/n decide · q quit".to_string(),
        };
        let footer = match &self.message {
            Some(m) => format!(" {}", terminal_line(m)),
            None => help,
        };
        lines.push(Line {
            text: footer,
            reverse: false,
        });
        lines
    }

    fn render_answer(&self, title: &str, text: &str, top: usize, view: View) -> Vec<Line> {
        let wrapped = wrap(text, view.width);
        let body = view.height.saturating_sub(2).max(1);
        let top = top.min(wrapped.len().saturating_sub(body));
        let mut lines = vec![Line {
            text: format!(" {title}"),
            reverse: true,
        }];
        lines.extend(
            wrapped
                .iter()
                .skip(top)
                .take(body)
                .cloned()
                .map(Line::plain),
        );
        while lines.len() + 1 < view.height {
            lines.push(Line::plain(String::new()));
        }
        let shown_to = (top + body).min(wrapped.len());
        let close = if self.answer_only { "close" } else { "back" };
        lines.push(Line::plain(format!(
            " lines {}–{shown_to} of {} · ↑↓ scroll · q {close}",
            (top + 1).min(wrapped.len()),
            wrapped.len()
        )));
        lines
    }
}

/// Column widths for a set of rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Widths {
    glyph: usize,
    target: usize,
    agent: usize,
    reason: usize,
    usage: usize,
}

/// The reason column never takes more than this.
const MAX_REASON: usize = 24;

impl Widths {
    pub fn of(rows: &[Row]) -> Widths {
        let max = |f: &dyn Fn(&Row) -> usize, floor: usize| {
            rows.iter().map(f).max().unwrap_or(0).max(floor)
        };
        Widths {
            glyph: max(&|r| r.glyph.width(), 1),
            target: max(&|r| terminal_line(&r.target).width(), "TARGET".len()),
            agent: max(&|r| r.agent.width(), "AGENT".len()),
            reason: max(&|r| reason(r).width().min(MAX_REASON), "STATE".len()),
            usage: max(&|r| terminal_line(&r.usage).width(), "CTX".len()),
        }
    }

    /// The column titles, aligned with [`Widths::row`].
    pub fn header(&self) -> String {
        format!(
            " {} {}  {}  {}  {:>4}  {}  {:<4}  LAST ANSWER",
            pad("", self.glyph),
            pad("TARGET", self.target),
            pad("AGENT", self.agent),
            pad("STATE", self.reason),
            "AGE",
            pad("CTX", self.usage),
            "MAIL",
        )
    }

    /// One row: glyph, target, agent, reason (or state), age, context and cost, unread mail,
    /// answer head.
    pub fn row(&self, r: &Row, now: Time) -> String {
        let age =
            r.at.map_or_else(|| "-".into(), |at| crate::text::age(now, at));
        let mail = if r.unread > 0 {
            format!("✉{}", r.unread)
        } else {
            String::new()
        };
        // A waiting row shows what it asks instead of its last answer.
        let head = match &r.request {
            Some(q) => format!("▸ {}", terminal_line(&q.summary)),
            None => r.head.as_deref().map(terminal_line).unwrap_or_default(),
        };
        let line = format!(
            " {} {}  {}  {}  {:>4}  {}  {}  {head}",
            pad(&r.glyph, self.glyph),
            pad(&terminal_line(&r.target), self.target),
            pad(&r.agent, self.agent),
            pad(&fit(&reason(r), MAX_REASON), self.reason),
            age,
            pad(&terminal_line(&r.usage), self.usage),
            pad(&mail, 4),
        );
        line.trim_end().to_string()
    }
}

/// The reason, else the state's name (`your-turn (seen)` once looked at).
fn reason(r: &Row) -> String {
    if let Some(reason) = r.reason.as_deref().filter(|s| !s.is_empty()) {
        return terminal_line(reason);
    }
    match r.state {
        State::YourTurn if r.seen => "your-turn (seen)".into(),
        s => s.as_str().into(),
    }
}

/// `text` padded with spaces to `width` cells.
fn pad(text: &str, width: usize) -> String {
    let w = text.width();
    format!("{text}{}", " ".repeat(width.saturating_sub(w)))
}

/// `text` cut to at most `width` cells, `…` marking a cut.
pub fn fit(text: &str, width: usize) -> String {
    if text.width() <= width {
        return text.to_string();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = c.width().unwrap_or(0);
        if used + w + 1 > width {
            break;
        }
        out.push(c);
        used += w;
    }
    if width > 0 {
        out.push('…');
    }
    out
}

/// `text` wrapped to `width` cells per line: at the last space that fits, else mid-word (a
/// blank line stays a line).
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let mut out = Vec::new();
    for line in text.lines() {
        let mut cur = String::new();
        for c in line.chars() {
            if cur.width() + c.width().unwrap_or(0) > width && !cur.is_empty() {
                match cur.rfind(' ').filter(|&at| at > 0) {
                    Some(at) => {
                        let rest = cur[at + 1..].to_string();
                        cur.truncate(at);
                        out.push(std::mem::replace(&mut cur, rest));
                    }
                    None => out.push(std::mem::take(&mut cur)),
                }
            }
            cur.push(c);
        }
        out.push(cur);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{TimeZone, Utc};

    fn t(secs: i64) -> Time {
        Utc.timestamp_opt(1_700_000_000 + secs, 0).unwrap()
    }

    fn row(id: &str, state: State, at: i64) -> Row {
        Row {
            pane_id: id.into(),
            target: format!("main:{}.0", &id[1..]),
            glyph: Icons::default().glyph(state, false).into(),
            state,
            seen: false,
            agent: "claude".into(),
            reason: None,
            at: Some(t(at)),
            head: None,
            unread: 0,
            request: None,
            usage: String::new(),
        }
    }

    const VIEW: View = View {
        width: 100,
        height: 12,
    };

    fn ids(p: &Picker) -> Vec<&str> {
        p.rows.iter().map(|r| r.pane_id.as_str()).collect()
    }

    #[test]
    fn y_and_n_show_the_request_first_then_answer_what_was_shown() {
        use crate::answer::Choice;
        use crate::read::request::{PromptKind, Request, RequestSource};
        let mut waiting = row("%3", State::Waiting, 10);
        let req = Request::new(
            PromptKind::Permission,
            "Bash",
            "rm -rf build",
            "rm -rf build\n\nClean the \x1b[31mbuild",
            Some("t1".into()),
            RequestSource::Log,
        );
        waiting.request = Some(req.clone());
        let p_rows = || vec![row("%4", State::YourTurn, 5), waiting.clone()];
        let mut p = Picker::new(None, false);
        p.set_rows(p_rows());
        // The first `y` only shows what is asked, sanitised.
        assert_eq!(p.key(Key::Char('y'), VIEW), Action::None);
        let screen: Vec<String> = p.render(t(20), VIEW).into_iter().map(|l| l.text).collect();
        assert!(
            screen[0].contains("main:3.0 claude asks (Bash)"),
            "{screen:?}"
        );
        assert!(screen.iter().any(|l| l.contains("rm -rf build")));
        assert!(screen.iter().all(|l| !l.contains('\x1b')));
        // Then `n` denies exactly that request.
        assert_eq!(
            p.key(Key::Char('n'), VIEW),
            Action::Decide {
                pane: "%3".into(),
                choice: Choice::Deny,
                fingerprint: req.fingerprint.clone(),
            }
        );
        assert_eq!(p.mode, Mode::List);
        // `q` backs out without answering.
        p.key(Key::Char('y'), VIEW);
        assert_eq!(p.key(Key::Char('q'), VIEW), Action::None);
        assert_eq!(p.mode, Mode::List);
        // A row that asks nothing says so.
        p.key(Key::Down, VIEW);
        assert_eq!(p.key(Key::Char('y'), VIEW), Action::None);
        assert_eq!(p.mode, Mode::List);
        assert_eq!(
            p.message.as_deref(),
            Some("main:4.0 is not waiting on a decision")
        );
        // Opened to decide: on the waiting row, its request shown.
        let mut p = Picker::new(None, false);
        p.set_rows(p_rows());
        assert!(p.open_decision());
        assert_eq!(p.selected().map(|r| r.pane_id.as_str()), Some("%3"));
        assert!(matches!(p.mode, Mode::Decide { .. }));
        let mut none = Picker::new(None, false);
        none.set_rows(vec![row("%4", State::YourTurn, 5)]);
        assert!(!none.open_decision());
    }

    #[test]
    fn most_urgent_first_then_newest_then_target() {
        let mut seen = row("%5", State::YourTurn, 50);
        seen.seen = true;
        let mut p = Picker::new(None, false);
        p.set_rows(vec![
            row("%1", State::Working, 10),
            seen,
            row("%2", State::YourTurn, 5),
            row("%3", State::Attention, 1),
            row("%4", State::YourTurn, 9),
            row("%6", State::Idle, 99),
        ]);
        assert_eq!(ids(&p), ["%3", "%4", "%2", "%1", "%5", "%6"]);
        assert_eq!(p.selected().unwrap().pane_id, "%3", "the first row");
    }

    #[test]
    fn selection_follows_its_pane_across_refreshes() {
        let mut p = Picker::new(None, false);
        p.set_rows(vec![
            row("%1", State::Working, 1),
            row("%2", State::Idle, 1),
        ]);
        assert_eq!(p.key(Key::Char('j'), VIEW), Action::None);
        assert_eq!(p.selected().unwrap().pane_id, "%2");
        // %2 becomes the most urgent: it moves to the top and stays selected.
        p.set_rows(vec![
            row("%1", State::Working, 1),
            row("%2", State::Attention, 2),
        ]);
        assert_eq!(p.selected_index(), Some(0));
        assert_eq!(p.selected().unwrap().pane_id, "%2");
        // It vanishes: the selection stays at that position.
        p.set_rows(vec![row("%1", State::Working, 1)]);
        assert_eq!(p.selected().unwrap().pane_id, "%1");
    }

    #[test]
    fn keys_move_jump_route_show_and_quit() {
        let mut p = Picker::new(Some("%1".into()), false);
        p.set_rows(vec![
            row("%1", State::YourTurn, 3),
            row("%2", State::Working, 2),
            row("%3", State::Idle, 1),
        ]);
        assert_eq!(p.key(Key::Up, VIEW), Action::None, "stays on the first row");
        assert_eq!(p.selected_index(), Some(0));
        assert_eq!(p.key(Key::Char('r'), VIEW), Action::None);
        assert!(p.message.as_deref().unwrap().contains("came from"));
        p.key(Key::Down, VIEW);
        assert!(p.message.is_none(), "a key clears the last message");
        assert_eq!(
            p.key(Key::Char('r'), VIEW),
            Action::Route {
                from: "%1".into(),
                to: "%2".into()
            }
        );
        assert_eq!(
            p.key(Key::Char('l'), VIEW),
            Action::Relay {
                from: "%1".into(),
                to: "%2".into()
            }
        );
        assert_eq!(p.key(Key::End, VIEW), Action::None);
        assert_eq!(p.key(Key::Enter, VIEW), Action::Jump("%3".into()));
        assert_eq!(p.key(Key::Char('k'), VIEW), Action::None);
        assert_eq!(p.key(Key::Char('p'), VIEW), Action::ShowAnswer("%2".into()));
        assert_eq!(p.key(Key::Char('x'), VIEW), Action::None);
        assert_eq!(p.key(Key::Char('q'), VIEW), Action::Quit);
        assert_eq!(p.key(Key::Esc, VIEW), Action::Quit);
        assert_eq!(p.key(Key::Interrupt, VIEW), Action::Quit);
    }

    #[test]
    fn routing_needs_a_pane_to_come_from() {
        let mut p = Picker::new(None, false);
        p.set_rows(vec![row("%1", State::Idle, 1)]);
        assert_eq!(p.key(Key::Char('r'), VIEW), Action::None);
        assert!(p.message.is_some());
        let mut empty = Picker::new(Some("%1".into()), false);
        empty.set_rows(Vec::new());
        assert_eq!(empty.key(Key::Enter, VIEW), Action::None);
        assert_eq!(empty.key(Key::Char('p'), VIEW), Action::None);
    }

    #[test]
    fn answer_scrolls_within_bounds_and_q_goes_back_or_closes() {
        let text: String = (1..=30).map(|i| format!("line {i}\n")).collect();
        let mut p = Picker::new(None, false);
        p.set_rows(vec![row("%1", State::YourTurn, 1)]);
        p.show_answer("main:1.0".into(), &text);
        let view = View {
            width: 40,
            height: 12,
        };
        let screen = p.render(t(0), view);
        assert_eq!(screen.len(), 12);
        assert_eq!(screen[1].text, "line 1");
        assert!(screen[11].text.contains("lines 1–10 of 30"), "{screen:?}");
        p.key(Key::End, view);
        assert_eq!(p.render(t(0), view)[1].text, "line 21");
        p.key(Key::Down, view);
        assert_eq!(
            p.render(t(0), view)[10].text,
            "line 30",
            "clamped at the end"
        );
        p.key(Key::PageUp, view);
        assert_eq!(p.render(t(0), view)[1].text, "line 11");
        p.key(Key::Home, view);
        p.key(Key::Up, view);
        assert_eq!(p.render(t(0), view)[1].text, "line 1");
        assert_eq!(p.key(Key::Char('q'), view), Action::None);
        assert_eq!(p.mode, Mode::List, "q goes back to the list");

        let mut only = Picker::new(None, true);
        only.show_answer("x".into(), "hi");
        assert!(only.render(t(0), view)[11].text.ends_with("q close"));
        assert_eq!(only.key(Key::Esc, view), Action::Quit);
    }

    #[test]
    fn rows_are_aligned_cut_to_the_width_and_free_of_controls() {
        let mut a = row("%1", State::Waiting, 0);
        a.reason = Some("permission: Bash".into());
        a.head = Some("Done.\x1b[2J all \u{9b}1mgood".into());
        a.unread = 2;
        a.usage = usage_cell(Some(&crate::usage::Usage {
            context_percent: Some(38.2),
            cost_usd: Some(1.2),
            ..Default::default()
        }));
        let mut b = row("%12", State::Working, -125);
        b.agent = "codex".into();
        b.usage = usage_cell(Some(&crate::usage::Usage {
            context_tokens: Some(22549),
            ..Default::default()
        }));
        b.target = "work\x07:3.1".into();
        let mut p = Picker::new(Some("%1".into()), false);
        p.set_rows(vec![a, b]);
        let screen = p.render(t(0), VIEW);
        let text: Vec<&str> = screen.iter().map(|l| l.text.as_str()).collect();
        assert_eq!(text[0], " agentpane · 2 agent panes");
        assert_eq!(
            text[1],
            "    TARGET    AGENT   STATE              AGE  CTX        MAIL  LAST ANSWER"
        );
        assert_eq!(
            text[2],
            " ⏸  main:1.0  claude  permission: Bash    0s  38% $1.20  ✉2    Done. all good"
        );
        assert_eq!(
            text[3],
            " ⚡ work:3.1  codex   working             2m  22.5k"
        );
        assert!(screen[2].reverse && !screen[3].reverse);
        assert_eq!(screen.len(), VIEW.height);
        assert!(text[11].contains("r route %1 here"), "{}", text[11]);
        let narrow = p.render(
            t(0),
            View {
                width: 20,
                height: 5,
            },
        );
        assert!(narrow.iter().all(|l| l.text.width() <= 20), "{narrow:?}");
        assert!(narrow[2].text.ends_with('…'));
    }

    #[test]
    fn tiny_terminals_get_what_fits() {
        let mut p = Picker::new(Some("%1".into()), false);
        p.set_rows(
            (1..30)
                .map(|i| row(&format!("%{i}"), State::Idle, i))
                .collect(),
        );
        p.key(Key::End, VIEW);
        for (width, height) in [(1, 1), (3, 2), (10, 4)] {
            let view = View { width, height };
            let screen = p.render(t(0), view);
            assert!(screen.len() <= height, "{screen:?}");
            assert!(screen.iter().all(|l| l.text.width() <= width), "{screen:?}");
            if height >= 4 {
                assert!(
                    screen.iter().any(|l| l.reverse),
                    "the selection stays visible"
                );
            }
        }
        p.show_answer("t".into(), "x\n".repeat(50).as_str());
        let view = View {
            width: 2,
            height: 1,
        };
        p.key(Key::End, view);
        assert_eq!(p.render(t(0), view).len(), 1);
    }

    #[test]
    fn wrapping_and_fitting_count_cells() {
        assert_eq!(wrap("abcdef\n\nxy", 4), ["abcd", "ef", "", "xy"]);
        assert_eq!(wrap("one two three", 8), ["one two", "three"]);
        assert_eq!(wrap("a verylongword", 5), ["a", "veryl", "ongwo", "rd"]);
        assert_eq!(wrap("⚡⚡⚡", 4), ["⚡⚡", "⚡"]);
        assert_eq!(fit("abcdef", 4), "abc…");
        assert_eq!(fit("⚡⚡⚡", 5), "⚡⚡…");
        assert_eq!(fit("ab", 4), "ab");
    }
}
