//! The notification settings, read from tmux options in one `display-message -p` (so a
//! session's or pane's own value wins over the global one) and parsed here without I/O.

use chrono::NaiveTime;

use crate::state::{urgency, State};
use crate::tmux::{Tmux, TmuxError};

use super::Channel;

/// The options read, in this order.
const OPTIONS: [&str; 10] = [
    "@agentpane-notify",
    "@agentpane-ntfy-url",
    "@agentpane-notify-click",
    "@agentpane-webhook-url",
    "@agentpane-webhook-format",
    "@agentpane-notify-quiet",
    "@agentpane-terminal-osc",
    "@agentpane-notify-min-terminal",
    "@agentpane-notify-min-ntfy",
    "@agentpane-notify-min-webhook",
];
/// Also read: the desktop channel's minimum.
const MIN_DESKTOP: &str = "@agentpane-notify-min-desktop";

/// A webhook's body shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WebhookFormat {
    /// `{"text": …}`.
    Slack,
    /// `{"content": …}`.
    Discord,
    /// matrix-hookshot's generic webhook: `{"text": …, "username": "agentpane"}`.
    Matrix,
    /// The whole notification as JSON.
    #[default]
    Json,
}

impl WebhookFormat {
    fn parse(s: &str) -> Result<WebhookFormat, String> {
        match s.trim() {
            "" | "json" => Ok(WebhookFormat::Json),
            "slack" => Ok(WebhookFormat::Slack),
            "discord" => Ok(WebhookFormat::Discord),
            "matrix" => Ok(WebhookFormat::Matrix),
            other => Err(format!(
                "@agentpane-webhook-format: {other:?} is none of slack, discord, matrix, json"
            )),
        }
    }
}

/// Which OSC sequence(s) the terminal channel writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Osc {
    /// `OSC 777 ; notify ; title ; body` (foot, WezTerm, Ghostty, urxvt, VTE).
    N777,
    /// `OSC 9 ; text` (iTerm2, WezTerm, Ghostty, Windows Terminal).
    N9,
    /// `OSC 99` (kitty).
    N99,
}

impl Osc {
    fn parse_list(s: &str) -> Result<Vec<Osc>, String> {
        s.split([' ', ',', '+'])
            .filter(|w| !w.is_empty())
            .map(|w| match w {
                "777" => Ok(Osc::N777),
                "9" => Ok(Osc::N9),
                "99" => Ok(Osc::N99),
                other => Err(format!(
                    "@agentpane-terminal-osc: {other:?} is none of 777, 9, 99"
                )),
            })
            .collect()
    }
}

/// Quiet hours, local time: `start` inclusive, `end` exclusive, across midnight when
/// `end < start`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quiet {
    pub start: NaiveTime,
    pub end: NaiveTime,
}

impl Quiet {
    fn parse(s: &str) -> Result<Option<Quiet>, String> {
        let s = s.trim();
        if s.is_empty() || s == "off" {
            return Ok(None);
        }
        let bad = || format!("@agentpane-notify-quiet: {s:?} is not HH:MM-HH:MM");
        let (a, b) = s.split_once('-').ok_or_else(bad)?;
        let time = |t: &str| NaiveTime::parse_from_str(t.trim(), "%H:%M").map_err(|_| bad());
        Ok(Some(Quiet {
            start: time(a)?,
            end: time(b)?,
        }))
    }

    /// True when `now` falls in the quiet hours.
    pub fn covers(&self, now: NaiveTime) -> bool {
        if self.start <= self.end {
            self.start <= now && now < self.end
        } else {
            now >= self.start || now < self.end
        }
    }
}

/// Everything the channels need to know.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Config {
    pub channels: Vec<Channel>,
    pub ntfy_url: Option<String>,
    /// A web address a phone opens when the notification is tapped (ntfy's `Click`).
    pub click: Option<String>,
    pub webhook_url: Option<String>,
    pub webhook_format: WebhookFormat,
    pub quiet: Option<Quiet>,
    /// Empty: chosen per client terminal.
    pub osc: Vec<Osc>,
    /// Per channel, the least urgent state it is sent (`None`: every alert).
    pub min: Vec<(Channel, State)>,
    /// What was wrong in the options (each part skipped, the rest used).
    pub problems: Vec<String>,
}

impl Config {
    /// Reads the options as `pane` (else the server's globals) sees them.
    pub fn read(tmux: &Tmux, pane: Option<&str>) -> Result<Config, TmuxError> {
        let format = OPTIONS
            .iter()
            .chain([&MIN_DESKTOP])
            .map(|o| format!("#{{{o}}}"))
            .collect::<Vec<_>>()
            .join("\u{1f}");
        let out = tmux.format(pane, &format)?;
        Ok(Config::parse(&out.split('\u{1f}').collect::<Vec<_>>()))
    }

    /// The values in the order of [`OPTIONS`] then the desktop minimum; missing ones blank.
    pub fn parse(values: &[&str]) -> Config {
        let v = |i: usize| values.get(i).map(|s| s.trim()).unwrap_or("");
        let url = |s: &str| (!s.is_empty()).then(|| s.to_string());
        let mut c = Config {
            ntfy_url: url(v(1)),
            click: url(v(2)),
            webhook_url: url(v(3)),
            ..Config::default()
        };
        c.channels = match v(0) {
            "" | "on" | "off" => Vec::new(),
            list => list
                .split([' ', ','])
                .filter(|w| !w.is_empty())
                .filter_map(|w| {
                    Channel::parse(w)
                        .map_err(|e| c.problems.push(format!("@agentpane-notify: {e}")))
                        .ok()
                })
                .fold(Vec::new(), |mut all, ch| {
                    if !all.contains(&ch) {
                        all.push(ch);
                    }
                    all
                }),
        };
        c.webhook_format = WebhookFormat::parse(v(4)).unwrap_or_else(|e| {
            c.problems.push(e);
            WebhookFormat::Json
        });
        c.quiet = Quiet::parse(v(5)).unwrap_or_else(|e| {
            c.problems.push(e);
            None
        });
        c.osc = Osc::parse_list(v(6)).unwrap_or_else(|e| {
            c.problems.push(e);
            Vec::new()
        });
        let mins = [
            (Channel::Terminal, v(7)),
            (Channel::Ntfy, v(8)),
            (Channel::Webhook, v(9)),
            (Channel::Desktop, v(10)),
        ];
        for (ch, s) in mins {
            if s.is_empty() {
                continue;
            }
            match state_named(s) {
                Some(state) => c.min.push((ch, state)),
                None => c.problems.push(format!(
                    "@agentpane-notify-min-{}: {s:?} is none of your-turn, stalled, waiting, attention",
                    ch.name()
                )),
            }
        }
        c
    }

    /// True when `channel` takes an alert of `state`.
    pub fn wants(&self, channel: Channel, state: State) -> bool {
        self.min
            .iter()
            .find(|(c, _)| *c == channel)
            .map_or(true, |(_, min)| {
                urgency(state, false) >= urgency(*min, false)
            })
    }
}

/// True when the server's `@agentpane-notify` lists channels (rather than the older `on` /
/// `off` of the plain desktop notification).
pub fn lists_channels(tmux: &Tmux) -> bool {
    tmux.show_option(OPTIONS[0])
        .ok()
        .flatten()
        .is_some_and(|v| !matches!(v.trim(), "on" | "off"))
}

fn state_named(s: &str) -> Option<State> {
    [
        State::YourTurn,
        State::Stalled,
        State::Waiting,
        State::Attention,
    ]
    .into_iter()
    .find(|st| st.as_str() == s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hm(h: u32, m: u32) -> NaiveTime {
        NaiveTime::from_hms_opt(h, m, 0).unwrap()
    }

    #[test]
    fn one_option_turns_on_the_channels_and_the_rest_set_them_up() {
        let c = Config::parse(&[
            "terminal ntfy webhook ntfy",
            "https://ntfy.sh/my-topic",
            "",
            "https://hooks.slack.com/services/X",
            "slack",
            "22:00-07:00",
            "",
            "",
            "waiting",
        ]);
        assert_eq!(
            c.channels,
            [Channel::Terminal, Channel::Ntfy, Channel::Webhook]
        );
        assert_eq!(c.ntfy_url.as_deref(), Some("https://ntfy.sh/my-topic"));
        assert_eq!(c.webhook_format, WebhookFormat::Slack);
        assert!(c.problems.is_empty(), "{:?}", c.problems);
        assert!(c.wants(Channel::Ntfy, State::Waiting));
        assert!(c.wants(Channel::Ntfy, State::Attention));
        assert!(!c.wants(Channel::Ntfy, State::YourTurn));
        assert!(c.wants(Channel::Terminal, State::YourTurn));
    }

    #[test]
    fn on_off_and_unset_leave_the_channels_off() {
        for v in ["", "on", "off"] {
            assert!(Config::parse(&[v]).channels.is_empty(), "{v}");
        }
    }

    #[test]
    fn a_bad_value_is_told_and_skipped() {
        let c = Config::parse(&[
            "terminal pager",
            "",
            "",
            "",
            "teams",
            "25:00-7",
            "",
            "12",
            "",
            "soon",
        ]);
        assert_eq!(c.channels, [Channel::Terminal]);
        assert_eq!(c.webhook_format, WebhookFormat::Json);
        assert!(c.quiet.is_none() && c.osc.is_empty() && c.min.is_empty());
        assert_eq!(c.problems.len(), 5, "{:?}", c.problems);
    }

    #[test]
    fn quiet_hours_across_midnight_and_within_a_day() {
        let night = Quiet::parse("22:00-07:00").unwrap().unwrap();
        assert!(night.covers(hm(23, 30)) && night.covers(hm(0, 0)) && night.covers(hm(6, 59)));
        assert!(!night.covers(hm(7, 0)) && !night.covers(hm(12, 0)));
        let lunch = Quiet::parse("12:00-13:00").unwrap().unwrap();
        assert!(lunch.covers(hm(12, 30)) && !lunch.covers(hm(13, 0)));
        assert_eq!(Quiet::parse("off").unwrap(), None);
    }

    #[test]
    fn osc_list() {
        assert_eq!(Osc::parse_list("777 9").unwrap(), [Osc::N777, Osc::N9]);
        assert_eq!(Osc::parse_list("99").unwrap(), [Osc::N99]);
    }
}
