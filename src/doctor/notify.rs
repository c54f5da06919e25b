//! The notification channels' findings (docs/design.md#notifications): each channel that
//! `@agentpane-notify` turns on, whether it can work here.

use crate::notify::{http, Channel, Config};
use crate::tmux::version_at_least;

use super::{Finding, Level, Topic};

/// What doctor knows of the notification setup.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NotifyFacts {
    /// The settings; `None` when the server could not be asked.
    pub config: Option<Config>,
    /// The desktop's notification service answers on the session bus (`osascript` on macOS).
    pub notifier: bool,
}

fn finding(level: Level, text: String, fix: Option<String>) -> Finding {
    Finding {
        topic: Topic::Notify,
        level,
        text,
        fix,
    }
}

/// One finding per channel turned on, and one per bad option.
pub fn checks(f: &NotifyFacts, tmux_version: &str) -> Vec<Finding> {
    let Some(c) = &f.config else {
        return Vec::new();
    };
    let mut out: Vec<Finding> = c
        .problems
        .iter()
        .map(|p| {
            finding(
                Level::Fix,
                format!("notifications: {p}"),
                Some("correct the option (README, Notifications)".into()),
            )
        })
        .collect();
    let test = |ch: Channel| format!("agentpane notify test {}", ch.name());
    for &ch in &c.channels {
        let url = |value: &Option<String>, option: &str| match value {
            None => finding(
                Level::Fix,
                format!("{}: {option} is not set", ch.name()),
                Some(format!("tmux set -g {option} https://…")),
            ),
            Some(u) => match http::check_url(u) {
                Ok(()) => finding(
                    Level::Ok,
                    format!("{}: posts to {u} (try: {})", ch.name(), test(ch)),
                    None,
                ),
                Err(e) => finding(
                    Level::Fix,
                    format!("{}: {e:#}", ch.name()),
                    Some(format!("tmux set -g {option} with an http(s) address")),
                ),
            },
        };
        out.push(match ch {
            Channel::Ntfy => url(&c.ntfy_url, "@agentpane-ntfy-url"),
            Channel::Webhook => url(&c.webhook_url, "@agentpane-webhook-url"),
            Channel::Desktop if f.notifier => finding(
                Level::Ok,
                format!(
                    "desktop: the notification service answers (try: {})",
                    test(ch)
                ),
                None,
            ),
            Channel::Desktop => finding(
                Level::Fix,
                "desktop: no notification service answers on the session bus".into(),
                Some(
                    "run a notification daemon (your desktop's, or dunst) in the session the \
                     watcher starts from (DBUS_SESSION_BUS_ADDRESS)"
                        .into(),
                ),
            ),
            Channel::Terminal if !c.osc.is_empty() || version_at_least(tmux_version, (3, 3)) => {
                finding(
                    Level::Ok,
                    format!(
                        "terminal: written to the attached clients' terminals (try: {})",
                        test(ch)
                    ),
                    None,
                )
            }
            Channel::Terminal => finding(
                Level::Note,
                format!(
                    "terminal: tmux {tmux_version} does not tell which terminal a client runs \
                     in (3.3 does): OSC 777 and OSC 9 are both sent"
                ),
                Some("tmux set -g @agentpane-terminal-osc 777 (or 9, or 99 for kitty)".into()),
            ),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(values: &[&str], notifier: bool) -> NotifyFacts {
        NotifyFacts {
            config: Some(Config::parse(values)),
            notifier,
        }
    }

    fn levels(f: &[Finding]) -> Vec<Level> {
        f.iter().map(|x| x.level).collect()
    }

    #[test]
    fn each_channel_on_is_checked() {
        let f = facts(
            &[
                "terminal desktop ntfy webhook",
                "https://ntfy.sh/t",
                "",
                "file:///x",
            ],
            false,
        );
        let got = checks(&f, "3.4");
        assert_eq!(
            levels(&got),
            [Level::Ok, Level::Fix, Level::Ok, Level::Fix],
            "{got:#?}"
        );
        assert!(got[1].text.contains("session bus"));
        assert!(got[3].text.contains("not an http"), "{}", got[3].text);
    }

    #[test]
    fn nothing_on_nothing_said_and_bad_options_are_told() {
        assert!(checks(&facts(&[""], true), "3.4").is_empty());
        let got = checks(&facts(&["ntfy"], true), "3.2");
        assert_eq!(levels(&got), [Level::Fix]);
        assert!(got[0].text.contains("@agentpane-ntfy-url"));
        let got = checks(&facts(&["terminal pager"], true), "3.2");
        assert_eq!(levels(&got), [Level::Fix, Level::Note], "{got:#?}");
    }
}
