//! What the safety poll learns without asking tmux (docs/design.md#watcher). Spawning one
//! `tmux list-panes` client per poll was most of an idle watcher's cost; two facts tell
//! whether tmux has anything new to say about the panes it listed last:
//!
//! - each pane's foreground, from `/proc/PANE_PID/stat`: the first process's name (an `exec`
//!   changes it) and the process group its terminal sends input to (a job started or ended:
//!   an agent launched from the shell, or gone);
//! - when an agent pane's terminal last had output, from the terminal file's modification
//!   time: a title, a dialog or a screen-only agent's state only changes with output.
//!
//! A pane opened, closed or focused is told by the plugin's tmux hooks (a nudge), and the
//! resolutions are redone every [`super::RESOLVE_MAX_AGE`] whatever the probe says.

use std::sync::Arc;

use crate::proctree::procfs;
use crate::resolve::Resolved;
use crate::tmux::Pane;

/// How long after an agent pane's last output the safety poll still asks tmux, in seconds.
/// The kernel moves a terminal's modification time only when its 8-second step changes, so
/// an output can read as up to 8 s older than it is; 20 s leaves every output at least two
/// polls of tmux at the default 5 s poll.
pub const QUIET_SECS: i64 = 20;

/// A pane's foreground as the kernel holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Front {
    /// The pane's first process's name (`comm`).
    name: String,
    /// The foreground process group of its terminal.
    group: i32,
}

impl Front {
    /// Parses `/proc/PID/stat`; `None` when the line is not one.
    fn parse(stat: &str) -> Option<Front> {
        let name = stat.get(stat.find('(')? + 1..stat.rfind(')')?)?.to_string();
        Some(Front {
            name,
            group: procfs::parse_stat(stat)?.tpgid,
        })
    }

    /// The pane's front now; `None` when its first process is gone.
    fn of(pane_pid: u32) -> Option<Front> {
        Front::parse(&std::fs::read_to_string(format!("/proc/{pane_pid}/stat")).ok()?)
    }
}

/// When a terminal last had output, seconds since the epoch (to the kernel's 8 s step).
fn last_output(tty: &str) -> Option<i64> {
    if tty.is_empty() {
        return None;
    }
    rustix::fs::stat(tty).ok().map(|st| st.st_mtime)
}

/// True when `tty` is known to have had no output for [`QUIET_SECS`] before `now` (seconds
/// since the epoch): the agent in it draws nothing, so it writes nothing either.
pub fn quiet(tty: &str, now: i64) -> bool {
    last_output(tty).is_some_and(|at| !lately(at, now))
}

/// Whether an output at `at` is within [`QUIET_SECS`] of `now` (seconds since the epoch).
fn lately(at: i64, now: i64) -> bool {
    now - at < QUIET_SECS
}

/// The panes' fronts as of the last `list-panes`, in its order.
#[derive(Debug, Default)]
pub struct Probes {
    fronts: Vec<Option<Front>>,
}

impl Probes {
    /// Taken right after tmux listed `panes`.
    pub fn take(panes: &[Pane]) -> Probes {
        Probes {
            fronts: panes.iter().map(|p| Front::of(p.pane_pid)).collect(),
        }
    }

    /// True when tmux may have news about the panes of `resolved` (resolved from the listing
    /// these probes were taken at, in its order): an agent pane had output within
    /// [`QUIET_SECS`] of `now` (seconds since the epoch), or a foreground changed. A
    /// foreground is read again only for a pane whose terminal had output lately (or whose
    /// output time is unknown): a job starts or ends with output (the shell echoes the
    /// command typed, the agent draws, the prompt comes back), so a quiet terminal costs one
    /// `stat` and no `/proc` read.
    pub fn news(&self, resolved: &[Arc<Resolved>], now: i64) -> bool {
        resolved.len() != self.fronts.len()
            || resolved.iter().zip(&self.fronts).any(|(r, then)| {
                let pane = &r.pane;
                pane_news(then, last_output(&pane.tty), r.agent.is_some(), now, || {
                    Front::of(pane.pane_pid)
                })
            })
    }
}

/// One pane's part of [`Probes::news`]: `then` its front at the listing, `output` its
/// terminal's last output, `front` reads its front now.
fn pane_news(
    then: &Option<Front>,
    output: Option<i64>,
    agent: bool,
    now: i64,
    front: impl FnOnce() -> Option<Front>,
) -> bool {
    let recent = output.map(|at| lately(at, now));
    (agent && recent == Some(true)) || (recent != Some(false) && &front() != then)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn front(name: &str, group: i32) -> Option<Front> {
        Some(Front {
            name: name.into(),
            group,
        })
    }

    #[test]
    fn a_stat_line_gives_the_name_and_the_foreground_group() {
        let line = "4242 (my (odd) sh) S 1 4242 4242 34816 5150 4194560 0 0 0 0 0 0 0 0 20 0 1 0 \
                    987654 0 0";
        assert_eq!(Front::parse(line), front("my (odd) sh", 5150));
        assert_eq!(Front::parse("garbage"), None);
        assert_eq!(Front::parse("1 (x"), None);
    }

    #[test]
    fn a_terminal_is_quiet_once_its_last_output_is_old_enough() {
        let dir = tempfile::tempdir().unwrap();
        let tty = dir.path().join("pts");
        let file = std::fs::File::create(&tty).unwrap();
        let at = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000);
        file.set_modified(at).unwrap();
        let tty = tty.to_str().unwrap();
        assert!(!quiet(tty, 1_000_000 + QUIET_SECS - 1));
        assert!(quiet(tty, 1_000_000 + QUIET_SECS));
        // Unknown: not known to be quiet.
        assert!(!quiet("", 2_000_000));
        assert!(!quiet("/nonexistent/pts/9", 2_000_000));
    }

    #[test]
    fn a_quiet_pane_with_the_same_foreground_is_no_news() {
        let now = 1_000_000;
        let quiet = Some(now - QUIET_SECS);
        let unread = || -> Option<Front> { panic!("a quiet terminal's front is not read") };
        assert!(!pane_news(&front("bash", 10), quiet, false, now, unread));
        assert!(!pane_news(&front("claude", 10), quiet, true, now, unread));
        // Output lately in a shell, the same job in front: read, and no news.
        let recent = Some(now - 1);
        assert!(!pane_news(
            &front("bash", 10),
            recent,
            false,
            now,
            || front("bash", 10)
        ));
    }

    #[test]
    fn a_job_started_an_exec_a_pane_gone_or_agent_output_is_news() {
        let now = 1_000_000;
        let recent = Some(now - QUIET_SECS + 1);
        let was = front("bash", 10);
        // An agent started from the shell: its job took the terminal.
        assert!(pane_news(&was, recent, false, now, || front("bash", 31)));
        // The first process replaced itself (`exec claude`).
        assert!(pane_news(&was, recent, false, now, || front("claude", 10)));
        // The pane's process is gone.
        assert!(pane_news(&was, recent, false, now, || None));
        // A terminal whose output time is unknown is read every time.
        assert!(pane_news(&was, None, false, now, || front("bash", 31)));
        assert!(!pane_news(&was, None, false, now, || front("bash", 10)));
        // An agent pane wrote to its terminal lately: tmux is asked, whatever its front.
        assert!(pane_news(&was, recent, true, now, || front("bash", 10)));
    }

    #[test]
    fn a_terminal_file_has_an_output_time_and_a_missing_one_none() {
        let file = tempfile::NamedTempFile::new().unwrap();
        let at = last_output(file.path().to_str().unwrap()).unwrap();
        let now = chrono::Utc::now().timestamp();
        assert!((now - at).abs() < 60, "{at} vs {now}");
        assert_eq!(last_output("/nonexistent/pts/9"), None);
        assert_eq!(last_output(""), None);
        let me = Front::of(std::process::id()).unwrap();
        assert!(!me.name.is_empty());
    }
}
