//! What the watcher writes into tmux options, as a pure function of the reports, and the diff
//! against what it wrote last, so options are set only when they change
//! (docs/design.md#tmux-surface).

use std::collections::BTreeMap;

use crate::alert::Alert;
use crate::events::Time;
use crate::remote::link::HostView;
use crate::scan::PaneReport;
use crate::segment::{self, Counts, Icons};
use crate::state::State;
use crate::tmux::{OptionChange, Scope};

/// Global segment option.
pub const STATUS: &str = "@agentpane_status";
/// Per-window most urgent glyph.
pub const WINDOW_STATUS: &str = "@agentpane_window_status";
/// Per-pane state name.
pub const PANE_STATUS: &str = "@agentpane_pane_status";
/// Per-window flag while an alert is on display there.
pub const ALERT_FLAG: &str = "@agentpane_alert";

/// Option values by (scope, name).
pub type Options = BTreeMap<(Scope, String), String>;

/// The options the reports call for. The global segment is always present (empty when there
/// are no agents) so a stale value from an earlier run is overwritten.
pub fn desired<'a>(
    reports: &[PaneReport],
    shown: impl Iterator<Item = &'a Alert>,
    format: &str,
    icons: &Icons,
    now: Time,
) -> Options {
    let context = segment::Thresholds::default().context;
    desired_with_hosts(reports, &[], ("", context), shown, format, icons, now)
}

/// [`desired`] with the remote hosts' views merged into the global segment, `limit` as its
/// `{limit}` ([`segment::limit_token`]), and each window's context token
/// ([`segment::context_token`]) after its glyph once a pane's context reaches `context` %.
pub fn desired_with_hosts<'a>(
    reports: &[PaneReport],
    hosts: &[HostView],
    (limit, context): (&str, f64),
    shown: impl Iterator<Item = &'a Alert>,
    format: &str,
    icons: &Icons,
    now: Time,
) -> Options {
    let mut out = Options::new();
    let mut counts = Counts::of(reports, now);
    let mut extra = crate::remote::status_parts(hosts, icons, &mut counts, now);
    extra.push(("limit", limit.to_string()));
    let line = segment::render_with(format, icons, &counts, &extra, now);
    out.insert((Scope::Global, STATUS.into()), line);
    for top in segment::window_tops(reports) {
        let window = &top.resolved.pane.window_id;
        let glyph = icons.glyph(top.status.state, top.status.seen);
        let usages = reports
            .iter()
            .filter(|r| &r.resolved.pane.window_id == window)
            .filter_map(|r| r.usage.as_ref().map(|m| &m.usage));
        let full = segment::context_token(usages, context, &icons.context);
        let value = match (glyph.is_empty(), full.is_empty()) {
            (true, true) => continue,
            (false, false) => format!("{glyph} {full}"),
            _ => format!("{glyph}{full}"),
        };
        out.insert((Scope::Window(window.clone()), WINDOW_STATUS.into()), value);
    }
    for r in reports {
        let s = &r.status;
        if s.state == State::None {
            continue;
        }
        let value = if s.state == State::YourTurn && s.seen {
            "seen"
        } else {
            s.state.as_str()
        };
        out.insert(
            (
                Scope::Pane(r.resolved.pane.pane_id.clone()),
                PANE_STATUS.into(),
            ),
            value.to_string(),
        );
    }
    for a in shown {
        out.insert(
            (Scope::Window(a.window.clone()), ALERT_FLAG.into()),
            "1".into(),
        );
    }
    out
}

/// The changes that turn `old` into `new`: sets for new or changed values, unsets for gone ones.
pub fn diff(old: &Options, new: &Options) -> Vec<OptionChange> {
    let mut changes = Vec::new();
    for (key, value) in new {
        if old.get(key) != Some(value) {
            let (scope, name) = key;
            changes.push(OptionChange {
                scope: scope.clone(),
                name: name.clone(),
                value: Some(value.clone()),
            });
        }
    }
    for key @ (scope, name) in old.keys() {
        if !new.contains_key(key) {
            changes.push(OptionChange {
                scope: scope.clone(),
                name: name.clone(),
                value: None,
            });
        }
    }
    changes
}

/// Everything the watcher set, unset (on exit, so no stale state lingers in the status line).
pub fn clear_all(old: &Options) -> Vec<OptionChange> {
    let mut changes = diff(old, &Options::new());
    for c in &mut changes {
        if c.scope == Scope::Global {
            c.value = Some(String::new());
        }
    }
    changes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::testkit::{report, t};
    use crate::segment::DEFAULT_FORMAT;

    fn opts(reports: &[PaneReport]) -> Options {
        desired(
            reports,
            std::iter::empty(),
            DEFAULT_FORMAT,
            &Icons::default(),
            t(0),
        )
    }

    #[test]
    fn nothing_changes_nothing_is_set() {
        let r = [report(1, 1, State::Working, 0)];
        assert!(diff(&opts(&r), &opts(&r)).is_empty());
    }

    #[test]
    fn first_publish_sets_global_window_and_pane() {
        let changes = diff(&Options::new(), &opts(&[report(1, 4, State::YourTurn, 0)]));
        let names: Vec<(Scope, &str, Option<&str>)> = changes
            .iter()
            .map(|c| (c.scope.clone(), c.name.as_str(), c.value.as_deref()))
            .collect();
        assert_eq!(
            names,
            [
                (Scope::Global, STATUS, Some("●1")),
                (Scope::Window("@4".into()), WINDOW_STATUS, Some("●")),
                (Scope::Pane("%1".into()), PANE_STATUS, Some("your-turn")),
            ]
        );
    }

    #[test]
    fn a_window_whose_pane_fills_its_context_shows_how_full_after_its_glyph() {
        let mut full = report(1, 4, State::YourTurn, 0);
        let mut low = report(2, 5, State::Working, 0);
        let measured = |percent: f64| {
            Some(std::sync::Arc::new(crate::usage::Metered {
                usage: crate::usage::Usage {
                    context_percent: Some(percent),
                    ..Default::default()
                },
                limits: Vec::new(),
            }))
        };
        full.usage = measured(92.4);
        low.usage = measured(40.0);
        let o = opts(&[full, low]);
        let window = |w: &str| o.get(&(Scope::Window(w.into()), WINDOW_STATUS.to_string()));
        assert_eq!(window("@4").map(String::as_str), Some("● ◕92%"));
        assert_eq!(
            window("@5").map(String::as_str),
            Some(Icons::default().working.as_str())
        );
    }

    #[test]
    fn a_closed_pane_is_unset_and_the_segment_emptied() {
        let before = opts(&[report(1, 4, State::Working, 0)]);
        let changes = diff(&before, &opts(&[]));
        assert_eq!(changes.len(), 3);
        assert_eq!(changes[0].value.as_deref(), Some(""));
        assert!(changes[1..].iter().all(|c| c.value.is_none()));
    }

    #[test]
    fn alerts_flag_their_window() {
        let r = report(1, 4, State::YourTurn, 0);
        let alert = crate::alert::Alert {
            agent: None,
            pane: "%1".into(),
            target: "s:4.1".into(),
            window: "@4".into(),
            state: State::YourTurn,
            reason: None,
            turn_key: None,
            transcript: None,
            at: t(0),
            key: "k".into(),
            request: None,
            usage: None,
        };
        let o = desired(
            &[r],
            [&alert].into_iter(),
            DEFAULT_FORMAT,
            &Icons::default(),
            t(0),
        );
        assert_eq!(
            o.get(&(Scope::Window("@4".into()), ALERT_FLAG.into()))
                .map(String::as_str),
            Some("1")
        );
    }

    #[test]
    fn clearing_keeps_the_global_option_but_empties_it() {
        let before = opts(&[report(1, 4, State::Working, 0)]);
        let c = clear_all(&before);
        assert!(c
            .iter()
            .any(|c| c.scope == Scope::Global && c.value.as_deref() == Some("")));
        assert!(c
            .iter()
            .filter(|c| c.scope != Scope::Global)
            .all(|c| c.value.is_none()));
    }
}
