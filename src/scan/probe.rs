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

use crate::proctree::procfs;
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

/// The panes' fronts as of the last `list-panes`.
#[derive(Debug, Default)]
pub struct Probes {
    fronts: Vec<(String, Option<Front>)>,
}

impl Probes {
    /// Taken right after tmux listed `panes`.
    pub fn take(panes: &[Pane]) -> Probes {
        Probes {
            fronts: panes
                .iter()
                .map(|p| (p.pane_id.clone(), Front::of(p.pane_pid)))
                .collect(),
        }
    }

    /// True when tmux may have news about `panes` (listed when these probes were taken):
    /// a foreground changed, or a pane `is_agent` calls one had output within
    /// [`QUIET_SECS`] of `now` (seconds since the epoch).
    pub fn news(&self, panes: &[Pane], is_agent: impl Fn(&Pane) -> bool, now: i64) -> bool {
        let fronts = panes.iter().map(|p| Front::of(p.pane_pid));
        let outputs = panes
            .iter()
            .map(|p| is_agent(p).then(|| last_output(&p.tty)).flatten());
        self.differs(fronts, outputs, now)
    }

    /// [`Probes::news`] from what was read: each pane's front now and, for agent panes, its
    /// terminal's last output.
    fn differs(
        &self,
        fronts: impl ExactSizeIterator<Item = Option<Front>>,
        outputs: impl Iterator<Item = Option<i64>>,
        now: i64,
    ) -> bool {
        fronts.len() != self.fronts.len()
            || fronts
                .zip(&self.fronts)
                .any(|(now, (_, then))| &now != then)
            || outputs.flatten().any(|at| now - at < QUIET_SECS)
    }
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

    fn probes(fronts: &[Option<Front>]) -> Probes {
        Probes {
            fronts: fronts
                .iter()
                .enumerate()
                .map(|(i, f)| (format!("%{i}"), f.clone()))
                .collect(),
        }
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
    fn quiet_panes_with_the_same_foreground_are_no_news() {
        let then = probes(&[front("bash", 10), front("bash", 20)]);
        let now = 1_000_000;
        let quiet = [Some(now - QUIET_SECS), None];
        assert!(!then.differs(
            [front("bash", 10), front("bash", 20)].into_iter(),
            quiet.into_iter(),
            now
        ));
    }

    #[test]
    fn a_job_started_an_exec_a_pane_gone_or_recent_output_is_news() {
        let then = probes(&[front("bash", 10), front("bash", 20)]);
        let now = 1_000_000;
        let quiet = || [None, None].into_iter();
        let same = [front("bash", 10), front("bash", 20)];
        // An agent started from the shell: its job took the terminal.
        let started = [front("bash", 10), front("bash", 31)];
        assert!(then.differs(started.into_iter(), quiet(), now));
        // The first process replaced itself (`exec claude`).
        let exec = [front("claude", 10), front("bash", 20)];
        assert!(then.differs(exec.into_iter(), quiet(), now));
        // The pane's process is gone, or a pane more or fewer.
        let gone = [None, front("bash", 20)];
        assert!(then.differs(gone.into_iter(), quiet(), now));
        assert!(then.differs([front("bash", 10)].into_iter(), quiet(), now));
        // An agent pane wrote to its terminal lately.
        let recent = [None, Some(now - QUIET_SECS + 1)];
        assert!(then.differs(same.into_iter(), recent.into_iter(), now));
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
