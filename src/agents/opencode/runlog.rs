//! opencode's shared text log (`<data root>/log/opencode.log`, one file for every process of a
//! user), read to tell two opencode processes in one folder apart. Each process writes its own
//! `run=<id>` on every line; its first line (`message="creating instance" directory=…`) comes
//! soon after it starts, and `message=created id=ses_…` lines name the sessions it created
//! (`session.id=ses_…` on the lines of the turns it runs). So process start → run → sessions.
//!
//! The log only grows: it is read from where the last read ended (at most [`TAIL`] bytes from
//! its end the first time), never whole at each scan.

use std::collections::{HashMap, HashSet};
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// The most of the log read at once (the first read starts this far from its end).
pub const TAIL: u64 = 4 << 20;

/// How long after its process started a run's first line may come (opencode took 18 s on a
/// loaded machine to write it); a run later than this is no process's that started before.
pub const START_LAG_MS: i64 = 45_000;

/// What the log says of one run (one opencode process).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Run {
    pub id: String,
    /// Time of its `creating instance` line, ms since the epoch; `None` when that line was
    /// before the part of the log read (the run cannot be tied to a process).
    pub first_ms: Option<i64>,
    /// The folder its instance was created for.
    pub directory: Option<String>,
    /// Sessions it created or ran turns in, in the order first seen.
    pub sessions: Vec<String>,
}

/// The runs of one log, kept between scans and brought up to date by reading what was added.
#[derive(Debug, Default)]
pub struct RunLog {
    read_to: u64,
    carry: Vec<u8>,
    runs: HashMap<String, Run>,
}

impl RunLog {
    /// Reads what was appended to `path` since the last read (its last [`TAIL`] bytes the
    /// first time). A log that shrank was replaced: it is read again from the start.
    pub fn update(&mut self, path: &Path) -> std::io::Result<()> {
        let mut file = std::fs::File::open(path)?;
        let len = file.metadata()?.len();
        if len < self.read_to {
            *self = RunLog::default();
        }
        let start = self.read_to.max(len.saturating_sub(TAIL));
        let skip_partial = start > self.read_to;
        if skip_partial {
            self.carry.clear();
        }
        file.seek(SeekFrom::Start(start))?;
        let mut buf = Vec::with_capacity((len - start) as usize);
        file.take(len - start).read_to_end(&mut buf)?;
        self.read_to = start + buf.len() as u64;
        let mut text = std::mem::take(&mut self.carry);
        let from = if skip_partial {
            // The read began inside a line: that line is incomplete.
            buf.iter()
                .position(|&b| b == b'\n')
                .map_or(buf.len(), |i| i + 1)
        } else {
            0
        };
        text.extend_from_slice(&buf[from..]);
        let complete = text.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        self.carry = text.split_off(complete);
        self.feed(&String::from_utf8_lossy(&text));
        Ok(())
    }

    /// Takes complete lines of the log.
    pub fn feed(&mut self, text: &str) {
        for line in text.lines() {
            let Some(l) = parse_line(line) else { continue };
            let run = self.runs.entry(l.run.to_string()).or_insert_with(|| Run {
                id: l.run.to_string(),
                ..Run::default()
            });
            match l.what {
                What::Instance { directory } => {
                    if run.first_ms.map_or(true, |f| l.ms.is_some_and(|ms| ms < f)) {
                        run.first_ms = l.ms;
                        run.directory = Some(directory.to_string());
                    }
                }
                What::Session(id) => {
                    if !run.sessions.iter().any(|s| s == id) {
                        run.sessions.push(id.to_string());
                    }
                }
                What::Other => {}
            }
        }
    }

    /// Every run seen.
    pub fn runs(&self) -> impl Iterator<Item = &Run> {
        self.runs.values()
    }
}

/// One line of the log, as far as telling runs apart needs.
#[derive(Debug, PartialEq, Eq)]
struct Line<'a> {
    run: &'a str,
    ms: Option<i64>,
    what: What<'a>,
}

#[derive(Debug, PartialEq, Eq)]
enum What<'a> {
    /// `message="creating instance" directory=…`: the run's first line.
    Instance {
        directory: &'a str,
    },
    /// `message=created id=ses_…` or any `session.id=ses_…`.
    Session(&'a str),
    Other,
}

/// The value of `key=` in a `key=value key="quoted value"` line.
fn field<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let mut at = 0;
    while let Some(i) = line[at..].find(key) {
        let i = at + i;
        at = i + key.len();
        let starts_field = i == 0 || line.as_bytes()[i - 1] == b' ';
        if !starts_field || !line[at..].starts_with('=') {
            continue;
        }
        let rest = &line[at + 1..];
        return Some(match rest.strip_prefix('"') {
            Some(q) => &q[..q.find('"').unwrap_or(q.len())],
            None => &rest[..rest.find(' ').unwrap_or(rest.len())],
        });
    }
    None
}

fn parse_line<'a>(line: &'a str) -> Option<Line<'a>> {
    let run = field(line, "run")?;
    let ms = field(line, "timestamp")
        .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
        .map(|t| t.timestamp_millis());
    let message = field(line, "message").unwrap_or("");
    let session = |id: &'a str| id.starts_with("ses_").then_some(id);
    let what = match message {
        "creating instance" => match field(line, "directory") {
            Some(directory) => What::Instance { directory },
            None => What::Other,
        },
        "created" => field(line, "id")
            .and_then(session)
            .map_or(What::Other, What::Session),
        _ => field(line, "session.id")
            .and_then(session)
            .map_or(What::Other, What::Session),
    };
    Some(Line { run, ms, what })
}

/// A live opencode process for [`assign`]: its pid and start (seconds since the epoch).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Started {
    pub pid: u32,
    pub start: u64,
}

/// Ties runs to the live processes of one folder and database (`procs`, all of them): a run
/// is a process's when that process is the only one not yet tied that started before the
/// run's first line (within [`START_LAG_MS`]). Runs are taken oldest first. A run that no
/// untied process can have written, though a tied one could, means an earlier tie may be
/// wrong (a process that has since exited wrote the earlier run): those processes are left
/// untied. Returns pid → run id.
pub fn assign<'a>(procs: &[Started], runs: &[&'a Run]) -> HashMap<u32, &'a str> {
    let mut runs: Vec<(&Run, i64)> = runs
        .iter()
        .filter_map(|r| r.first_ms.map(|f| (*r, f)))
        .collect();
    runs.sort_by_key(|(r, f)| (*f, r.id.clone()));
    let mut tied: HashMap<u32, &'a str> = HashMap::new();
    let mut doubtful: HashSet<u32> = HashSet::new();
    for (run, first) in runs {
        let could: Vec<&Started> = procs
            .iter()
            .filter(|p| {
                // Process start is rounded down to the second; allow one for clock rounding.
                let started = p.start as i64 * 1000;
                started <= first + 1000 && first - started <= START_LAG_MS
            })
            .collect();
        let free: Vec<&&Started> = could
            .iter()
            .filter(|p| !tied.contains_key(&p.pid))
            .collect();
        match free.as_slice() {
            [one] => {
                tied.insert(one.pid, run.id.as_str());
            }
            [] => doubtful.extend(could.iter().map(|p| p.pid)),
            _ => {
                // Several could have written it: none of them is tied by this run, and none
                // may take a later one on its own either.
                for p in free {
                    tied.insert(p.pid, "");
                }
            }
        }
    }
    tied.retain(|pid, run| !run.is_empty() && !doubtful.contains(pid));
    tied
}

/// The log of the opencode whose database is `db`: `log/opencode.log` beside it.
pub fn path_for(db: &Path) -> Option<PathBuf> {
    Some(db.parent()?.join("log").join("opencode.log"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: &str = include_str!("../../../fixtures/real-clients/opencode-1.18.33/two-runs.log");

    fn ms(t: &str) -> i64 {
        chrono::DateTime::parse_from_rfc3339(t)
            .unwrap()
            .timestamp_millis()
    }

    fn secs(t: &str) -> u64 {
        (ms(t) / 1000) as u64
    }

    #[test]
    fn a_real_log_names_each_run_s_start_folder_and_sessions() {
        let mut log = RunLog::default();
        log.feed(LOG);
        let mut runs: Vec<&Run> = log.runs().collect();
        runs.sort_by_key(|r| r.first_ms);
        assert_eq!(runs.len(), 2);
        assert_eq!(runs[0].id, "623bef9d");
        assert_eq!(runs[0].first_ms, Some(ms("2026-12-02T10:40:30.870Z")));
        assert_eq!(runs[0].directory.as_deref(), Some("/w/work/shared"));
        assert_eq!(runs[0].sessions, ["ses_dc9a82bf0ffeWbaVEJtq7kKwFn"]);
        assert_eq!(runs[1].id, "7c55b62b");
        assert_eq!(runs[1].sessions, ["ses_dc9a757c5ffeQfK9T03chWj1Jz"]);
    }

    #[test]
    fn each_process_gets_the_run_that_began_after_it_started() {
        let mut log = RunLog::default();
        log.feed(LOG);
        let runs: Vec<&Run> = log.runs().collect();
        let a = Started {
            pid: 1,
            start: secs("2026-12-02T10:40:12Z"),
        };
        let b = Started {
            pid: 2,
            start: secs("2026-12-02T10:41:14Z"),
        };
        let tied = assign(&[a, b], &runs);
        assert_eq!(tied.get(&1), Some(&"623bef9d"));
        assert_eq!(tied.get(&2), Some(&"7c55b62b"));
        // Both started before either run began: nothing tells them apart.
        let b_early = Started {
            start: secs("2026-12-02T10:40:20Z"),
            ..b
        };
        assert!(assign(&[a, b_early], &runs).is_empty());
        // Alone, the first process started before the second run, but that run came long
        // after it: only its own run is its.
        assert_eq!(assign(&[a], &runs).get(&1), Some(&"623bef9d"));
    }

    #[test]
    fn a_run_no_untied_process_could_write_undoes_the_earlier_tie() {
        // p started at 0; an exited process started at 2 wrote run x at 5; p's own run y at 17.
        let run = |id: &str, first: i64| Run {
            id: id.into(),
            first_ms: Some(first * 1000),
            directory: Some("/w".into()),
            sessions: vec![],
        };
        let (x, y) = (run("x", 5), run("y", 17));
        let p = Started { pid: 1, start: 0 };
        assert!(assign(&[p], &[&x, &y]).is_empty());
        assert_eq!(assign(&[p], &[&y]).get(&1), Some(&"y"));
    }

    #[test]
    fn the_log_is_read_from_where_the_last_read_ended() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("opencode.log");
        let (head, tail) = LOG.split_at(LOG.find("run=7c55b62b message=\"creating").unwrap());
        // The first write ends inside a line: it is taken once complete.
        std::fs::write(&path, head).unwrap();
        let mut log = RunLog::default();
        log.update(&path).unwrap();
        assert_eq!(log.runs().count(), 1);
        std::fs::write(&path, LOG).unwrap();
        log.update(&path).unwrap();
        assert_eq!(log.runs().count(), 2);
        let second = log.runs().find(|r| r.id == "7c55b62b").unwrap();
        assert!(second.first_ms.is_some(), "{second:?}");
        assert!(tail.starts_with("run=7c55b62b"));
        // Replaced by a shorter log: read again from its start.
        std::fs::write(&path, head).unwrap();
        log.update(&path).unwrap();
        assert_eq!(log.runs().count(), 1);
    }

    #[test]
    fn fields_are_read_quoted_or_bare_and_only_at_a_field_start() {
        let l = r#"timestamp=2026-12-02T10:41:31.204Z level=INFO run=7c55b62b message="creating instance" directory=/w/a b"#;
        let line = parse_line(l).unwrap();
        assert_eq!(line.run, "7c55b62b");
        assert_eq!(line.what, What::Instance { directory: "/w/a" });
        assert_eq!(field("xrun=1 run=2", "run"), Some("2"));
        assert_eq!(parse_line("no fields here"), None);
    }
}
