//! Status-line output (docs/design.md#tmux-surface): the global segment (`⚡2 ●1 ⚠1`) and the
//! per-window summary, as pure functions over scan reports. The one-shot commands and the watcher
//! share them, so the status line reads the same with or without a watcher.

mod limits;
mod window;

pub use limits::{context_over, context_token, limit_token, tightest, Thresholds};
pub use window::{most_urgent, pane_detail, window_tops, windows, PaneDetail, WindowSummary};

use std::collections::HashMap;

use serde::Serialize;

use crate::events::Time;
use crate::scan::PaneReport;
use crate::state::State;

/// The default segment layout: only non-zero parts are shown, extra spaces collapse.
/// `{down}` names remote hosts that cannot be reached (empty without any).
/// `{limit}` is the tightest plan window once it reaches its threshold (empty before).
pub const DEFAULT_FORMAT: &str =
    "{working} {your_turn} {waiting} {attention}{reset} {stalled} {down} {limit}";

/// One glyph per state (configurable with `--icons` / `AGENTPANE_ICONS`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Icons {
    pub working: String,
    pub your_turn: String,
    pub waiting: String,
    pub attention: String,
    pub stalled: String,
    pub idle: String,
    /// `your-turn` the user has already looked at.
    pub seen: String,
    /// Prefix of the rate-limit countdown.
    pub reset: String,
    /// A window whose pane's context passed its threshold.
    pub context: String,
}

impl Default for Icons {
    fn default() -> Icons {
        Icons {
            working: "⚡".into(),
            your_turn: "●".into(),
            waiting: "⏸".into(),
            attention: "⚠".into(),
            stalled: "⏳".into(),
            idle: String::new(),
            seen: String::new(),
            reset: " ↻".into(),
            context: "◕".into(),
        }
    }
}

impl Icons {
    /// Applies `name=glyph,name=glyph` overrides (names as in JSON: `your-turn` or
    /// `your_turn`). Unknown names are reported so a typo in `@agentpane-icons` is visible.
    pub fn with_overrides(mut self, spec: &str) -> Result<Icons, String> {
        for part in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (name, glyph) = part
                .split_once('=')
                .ok_or_else(|| format!("icon `{part}` is not NAME=GLYPH"))?;
            let slot = match name.trim().replace('-', "_").as_str() {
                "working" => &mut self.working,
                "your_turn" => &mut self.your_turn,
                "waiting" => &mut self.waiting,
                "attention" => &mut self.attention,
                "stalled" => &mut self.stalled,
                "idle" => &mut self.idle,
                "seen" => &mut self.seen,
                "reset" => &mut self.reset,
                "context" => &mut self.context,
                other => return Err(format!("unknown icon name `{other}`")),
            };
            *slot = glyph.to_string();
        }
        Ok(self)
    }

    /// The glyph for a state as shown in a window name (`your-turn` already seen has its own).
    pub fn glyph(&self, state: State, seen: bool) -> &str {
        match state {
            State::Working => &self.working,
            State::YourTurn if seen => &self.seen,
            State::YourTurn => &self.your_turn,
            State::Waiting => &self.waiting,
            State::Attention => &self.attention,
            State::Stalled => &self.stalled,
            State::Idle => &self.idle,
            State::None => "",
        }
    }
}

/// How many agents are in each state.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    pub working: usize,
    pub your_turn: usize,
    pub waiting: usize,
    pub attention: usize,
    pub stalled: usize,
    pub idle: usize,
    pub seen: usize,
    /// The earliest future rate-limit reset among `attention` agents.
    pub resets_at: Option<Time>,
}

impl Counts {
    /// Counts the agent panes in `reports` (panes without an agent are not counted).
    pub fn of(reports: &[PaneReport], now: Time) -> Counts {
        let mut c = Counts::default();
        for r in reports {
            let s = &r.status;
            c.add(s.state, s.seen, s.resets_at, now);
        }
        c
    }

    /// Counts one agent (a local report's status, or a remote pane's).
    pub fn add(&mut self, state: State, seen: bool, resets_at: Option<Time>, now: Time) {
        match state {
            State::Working => self.working += 1,
            State::YourTurn if seen => self.seen += 1,
            State::YourTurn => self.your_turn += 1,
            State::Waiting => self.waiting += 1,
            State::Attention => {
                self.attention += 1;
                if let Some(reset) = resets_at.filter(|t| *t > now) {
                    self.resets_at = Some(self.resets_at.map_or(reset, |old| old.min(reset)));
                }
            }
            State::Stalled => self.stalled += 1,
            State::Idle => self.idle += 1,
            State::None => {}
        }
    }
}

/// Renders the segment. Placeholders: `{working}` `{your_turn}` `{waiting}` `{attention}`
/// `{stalled}` `{idle}` `{seen}` expand to icon+count, or nothing when the count is zero;
/// `{working_count}` etc. to the bare number; `{reset}` to the rate-limit countdown;
/// `{total}` to the number of agents. Empty when there are no agents. Runs of spaces collapse and
/// the ends are trimmed, so empty parts leave no gaps. The result is always one line; it is empty
/// when nothing shows.
pub fn render(format: &str, icons: &Icons, counts: &Counts, now: Time) -> String {
    render_with(format, icons, counts, &[], now)
}

/// [`render`] with more placeholders (`{hosts}`, `{down}` for remote hosts, `{limit}` for
/// the tightest plan window, [`limit_token`]). The segment is not empty when one of them has
/// a value, even with no agents.
pub fn render_with(
    format: &str,
    icons: &Icons,
    counts: &Counts,
    extra: &[(&str, String)],
    now: Time,
) -> String {
    let parts: [(&str, &str, usize); 7] = [
        ("working", &icons.working, counts.working),
        ("your_turn", &icons.your_turn, counts.your_turn),
        ("waiting", &icons.waiting, counts.waiting),
        ("attention", &icons.attention, counts.attention),
        ("stalled", &icons.stalled, counts.stalled),
        ("idle", &icons.idle, counts.idle),
        ("seen", &icons.seen, counts.seen),
    ];
    let mut values: HashMap<String, String> = HashMap::new();
    let mut total = 0;
    for (name, icon, n) in parts {
        total += n;
        let shown = if n == 0 {
            String::new()
        } else {
            format!("{icon}{n}")
        };
        values.insert(name.to_string(), shown);
        values.insert(format!("{name}_count"), n.to_string());
    }
    values.insert("total".into(), total.to_string());
    let reset = counts
        .resets_at
        .map(|t| format!("{}{}", icons.reset, countdown(t, now)))
        .unwrap_or_default();
    values.insert("reset".into(), reset);
    for name in ["hosts", "down", "limit"] {
        values.insert(name.into(), String::new());
    }
    for (name, value) in extra {
        values.insert(name.to_string(), value.clone());
    }

    if total == 0 && extra.iter().all(|(_, v)| v.is_empty()) {
        return String::new();
    }
    let expanded = expand(format, &values);
    let one_line: String = expanded
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    one_line
        .split(' ')
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// `41m`, `2h05m`, `30s`: time left until `at`.
pub fn countdown(at: Time, now: Time) -> String {
    let secs = (at - now).num_seconds().max(0);
    if secs >= 3600 {
        format!("{}h{:02}m", secs / 3600, (secs % 3600) / 60)
    } else if secs >= 60 {
        format!("{}m", (secs + 59) / 60)
    } else {
        format!("{secs}s")
    }
}

/// Replaces `{name}` with `values[name]`; unknown placeholders are kept as written.
fn expand(format: &str, values: &HashMap<String, String>) -> String {
    let mut out = String::with_capacity(format.len());
    let mut rest = format;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        match after.find('}') {
            Some(close) if values.contains_key(&after[..close]) => {
                out.push_str(&values[&after[..close]]);
                rest = &after[close + 1..];
            }
            _ => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests;
