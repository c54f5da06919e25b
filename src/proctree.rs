//! The process tree (docs/design.md#resolving-a-pane): one process-table snapshot per scan, stored
//! as plain values, and a pure breadth-first walk from a pane's PID to the agent process beneath
//! it.
//!
//! [`ProcTable::capture`] is the only part that touches the system; everything else works on
//! a table built from [`ProcInfo`] values, so tests hand it synthetic tables (cycles, vanished
//! parents, reused PIDs, wrappers).

use std::collections::{HashMap, HashSet, VecDeque};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use crate::events::AgentKind;

/// One process, as captured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcInfo {
    pub pid: u32,
    pub ppid: Option<u32>,
    /// The kernel's short name (`comm`).
    pub name: String,
    /// The command line; empty when unreadable or not captured.
    pub argv: Vec<String>,
    /// The executable; `None` when unreadable (another user's process) or not captured.
    pub exe: Option<PathBuf>,
    /// Start time, seconds since the epoch (0 when unknown).
    pub start: u64,
}

/// Which agents count, by executable name, and by the package path of a script a runtime
/// (`node`) runs. Defaults to every [`AgentKind`], with no package known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Matcher {
    kinds: Vec<AgentKind>,
    /// Script path fragments (`@openai/codex/`) and the agent each stands for; an entry
    /// without `/` is the title a runtime gives itself (`kimi-code`).
    packages: Vec<(&'static str, AgentKind)>,
}

impl Default for Matcher {
    fn default() -> Matcher {
        Matcher::new(AgentKind::ALL.to_vec())
    }
}

impl Matcher {
    /// Only these agents.
    pub fn new(kinds: Vec<AgentKind>) -> Matcher {
        Matcher {
            kinds,
            packages: Vec::new(),
        }
    }

    /// Also recognises a script under one of these package paths as its agent.
    pub fn with_packages(mut self, packages: Vec<(&'static str, AgentKind)>) -> Matcher {
        self.packages = packages;
        self
    }

    /// `$AGENTPANE_AGENTS` (comma-separated names, e.g. `claude,codex`) when set and valid,
    /// else every known agent. Unknown names are ignored.
    pub fn from_env() -> Matcher {
        match std::env::var("AGENTPANE_AGENTS") {
            Ok(list) => {
                let kinds: Vec<AgentKind> = list
                    .split(',')
                    .filter_map(|n| AgentKind::from_name(n.trim()))
                    .collect();
                if kinds.is_empty() {
                    Matcher::default()
                } else {
                    Matcher::new(kinds)
                }
            }
            Err(_) => Matcher::default(),
        }
    }

    /// The agent `proc` is, and whether it runs as a script under an interpreter (a wrapper
    /// that may hand the session to a native child).
    pub fn kind_of(&self, proc: &ProcInfo) -> Option<(AgentKind, bool)> {
        let exe_name = proc.exe.as_deref().and_then(Path::file_name).map(os_lossy);
        let argv0 = proc.argv.first().map(|a| basename(a));
        let runner = exe_name
            .as_deref()
            .or(argv0.as_deref())
            .is_some_and(is_interpreter)
            || is_interpreter(&proc.name);
        let direct = [exe_name.as_deref(), argv0.as_deref()]
            .into_iter()
            .flatten()
            .find_map(|n| self.known(n));
        if let Some(kind) = direct {
            return Some((kind, runner));
        }
        if runner {
            // A runtime that retitled itself (`process.title`): its command line is the title.
            if let [title] = proc.argv.as_slice() {
                return self.titled(title).map(|k| (k, true));
            }
            // `node [--flags] /usr/bin/claude …`: the first non-flag argument is the script.
            let script = proc.argv.iter().skip(1).find(|a| !a.starts_with('-'))?;
            return self.script_kind(script).map(|k| (k, true));
        }
        if proc.argv.is_empty() {
            // Command line unreadable or not captured: the kernel name is all we have.
            return self.known(&proc.name).map(|k| (k, false));
        }
        None
    }

    fn known(&self, name: &str) -> Option<AgentKind> {
        let stem = strip_script_ext(name);
        self.kinds.iter().copied().find(|k| k.name() == stem)
    }

    fn script_kind(&self, script: &str) -> Option<AgentKind> {
        if let Some(k) = self.known(&basename(script)) {
            return Some(k);
        }
        // npm installs run `node …/@anthropic-ai/claude-code/cli.js`,
        // `…/@openai/codex/bin/codex.js`.
        self.packages
            .iter()
            .find(|(p, k)| p.contains('/') && script.contains(p) && self.kinds.contains(k))
            .map(|(_, k)| *k)
    }

    /// The agent whose process title (a package entry without `/`) `title` is.
    fn titled(&self, title: &str) -> Option<AgentKind> {
        self.packages
            .iter()
            .find(|(p, k)| !p.contains('/') && *p == title && self.kinds.contains(k))
            .map(|(_, k)| *k)
    }
}

/// The agent found under a pane.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentMatch {
    pub kind: AgentKind,
    pub pid: u32,
    /// Start time of the agent process, seconds since the epoch.
    pub start: u64,
    /// PIDs from the pane process down to the agent, both included.
    pub chain: Vec<u32>,
}

/// The first half of [`ProcTable::capture`], which needs no pane: every process's pid, ppid,
/// name and start time. A one-shot scan takes it while tmux lists the panes.
pub struct Skeleton {
    table: ProcTable,
}

impl Skeleton {
    /// Reads every process's pid, ppid, name and start time.
    pub fn take() -> Skeleton {
        use sysinfo::{ProcessRefreshKind, ProcessesToUpdate, System};
        // sysinfo keeps each process's `stat` file open for its next refresh, but this
        // `System` is dropped at once: a scan of 300 processes would push the descriptors
        // past 256, and growing a threaded process's descriptor table waits for an RCU grace
        // period (10–20 ms, most of a scan's wall time).
        static NO_KEPT_FILES: std::sync::Once = std::sync::Once::new();
        NO_KEPT_FILES.call_once(|| {
            sysinfo::set_open_files_limit(0);
        });
        let mut sys = System::new();
        sys.refresh_processes_specifics(
            ProcessesToUpdate::All,
            true,
            ProcessRefreshKind::nothing().without_tasks(),
        );
        let table = ProcTable::from_procs(sys.processes().values().map(|p| ProcInfo {
            pid: p.pid().as_u32(),
            ppid: p.parent().map(|pp| pp.as_u32()),
            name: os_lossy(p.name()),
            argv: Vec::new(),
            exe: None,
            start: p.start_time(),
        }));
        Skeleton { table }
    }

    /// The table, with command line and executable of every descendant of `roots` (read
    /// straight from `/proc/PID/cmdline` and `/proc/PID/exe`: a fuller refresh read two more
    /// files a process). A root the skeleton does not know (a pane opened after it was taken)
    /// takes it again.
    pub fn finish(self, roots: &[u32]) -> ProcTable {
        let mut table = if roots.iter().all(|r| self.table.procs.contains_key(r)) {
            self.table
        } else {
            Skeleton::take().table
        };
        // Two threads share the reads (each one the kernel's work on another process).
        let pids = table.descendants(roots);
        let read = |pids: &[u32]| -> Vec<(u32, Vec<String>, Option<PathBuf>)> {
            pids.iter()
                .map(|&pid| {
                    (
                        pid,
                        procfs::cmdline(pid).unwrap_or_default(),
                        procfs::exe(pid),
                    )
                })
                .collect()
        };
        let (first, second) = pids.split_at(pids.len() / 2);
        let read_all = std::thread::scope(|s| {
            let other = (!first.is_empty()).then(|| s.spawn(|| read(first)));
            let mut got = read(second);
            match other.map(|h| h.join()) {
                Some(Ok(more)) => got.extend(more),
                Some(Err(_)) => got.extend(read(first)),
                None => {}
            }
            got
        });
        for (pid, argv, exe) in read_all {
            if let Some(info) = table.procs.get_mut(&pid) {
                info.argv = argv;
                info.exe = exe;
            }
        }
        table
    }
}

/// A snapshot of the process table.
#[derive(Debug, Clone, Default)]
pub struct ProcTable {
    procs: HashMap<u32, ProcInfo>,
    children: HashMap<u32, Vec<u32>>,
}

impl ProcTable {
    /// A table from plain values (tests, and [`ProcTable::capture`]).
    pub fn from_procs(procs: impl IntoIterator<Item = ProcInfo>) -> ProcTable {
        let procs: HashMap<u32, ProcInfo> = procs.into_iter().map(|p| (p.pid, p)).collect();
        let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
        for p in procs.values() {
            if let Some(ppid) = p.ppid.filter(|pp| *pp != p.pid) {
                children.entry(ppid).or_default().push(p.pid);
            }
        }
        for kids in children.values_mut() {
            kids.sort_unstable();
        }
        ProcTable { procs, children }
    }

    /// Takes one snapshot of the system's process table. Every process gets pid, ppid, name
    /// and start time; command line and executable are read only for the descendants of
    /// `roots` (the pane PIDs), which is all the walk looks at.
    pub fn capture(roots: &[u32]) -> ProcTable {
        Skeleton::take().finish(roots)
    }
    /// Every process of the snapshot, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = &ProcInfo> {
        self.procs.values()
    }

    /// The process with this PID, if it was alive at the snapshot.
    pub fn get(&self, pid: u32) -> Option<&ProcInfo> {
        self.procs.get(&pid)
    }

    /// Every process in the snapshot, in no particular order.
    pub fn all(&self) -> impl Iterator<Item = &ProcInfo> {
        self.procs.values()
    }

    /// Number of processes in the snapshot.
    pub fn len(&self) -> usize {
        self.procs.len()
    }

    /// True when the snapshot holds no process.
    pub fn is_empty(&self) -> bool {
        self.procs.is_empty()
    }

    /// Children of `pid`. A "child" that started before its parent is not one: its real
    /// parent died and the PID was reused by a newer process.
    pub fn children(&self, pid: u32) -> impl Iterator<Item = &ProcInfo> {
        let parent_start = self.procs.get(&pid).map_or(0, |p| p.start);
        self.children
            .get(&pid)
            .into_iter()
            .flatten()
            .filter_map(|c| self.procs.get(c))
            .filter(move |c| c.start == 0 || c.start >= parent_start)
    }

    /// Every process under `roots` (roots included when alive), each once.
    pub fn descendants(&self, roots: &[u32]) -> Vec<u32> {
        let mut seen = HashSet::new();
        let mut queue: VecDeque<u32> = roots
            .iter()
            .copied()
            .filter(|r| self.procs.contains_key(r))
            .collect();
        let mut out = Vec::new();
        while let Some(pid) = queue.pop_front() {
            if !seen.insert(pid) {
                continue;
            }
            out.push(pid);
            queue.extend(self.children(pid).map(|c| c.pid));
        }
        out
    }

    /// Breadth-first from `root` (the pane's process, itself included) to the first agent
    /// process; then down through wrappers (`node …/codex` → native `codex`) to the
    /// innermost process of the same agent, which is the one that owns the session.
    pub fn find_agent(&self, root: u32, matcher: &Matcher) -> Option<AgentMatch> {
        let mut parent: HashMap<u32, u32> = HashMap::new();
        let mut seen = HashSet::new();
        let mut queue = VecDeque::from([root]);
        let mut found = None;
        while let Some(pid) = queue.pop_front() {
            if !seen.insert(pid) {
                continue;
            }
            let Some(proc) = self.procs.get(&pid) else {
                continue;
            };
            if let Some((kind, wrapper)) = matcher.kind_of(proc) {
                found = Some((pid, kind, wrapper));
                break;
            }
            for child in self.children(pid) {
                if !seen.contains(&child.pid) {
                    parent.entry(child.pid).or_insert(pid);
                    queue.push_back(child.pid);
                }
            }
        }
        let (mut pid, kind, mut wrapper) = found?;
        let mut chain = vec![pid];
        let mut cur = pid;
        while let Some(&up) = parent.get(&cur) {
            chain.push(up);
            cur = up;
        }
        chain.reverse();
        while wrapper {
            let inner = self
                .children(pid)
                .filter(|c| !chain.contains(&c.pid))
                .filter_map(|c| match matcher.kind_of(c) {
                    Some((k, w)) if k == kind => Some((c.pid, w)),
                    _ => None,
                })
                // A native child beats another wrapper layer.
                .min_by_key(|(_, w)| *w);
            match inner {
                Some((child, child_wrapper)) => {
                    pid = child;
                    wrapper = child_wrapper;
                    chain.push(child);
                }
                None => break,
            }
        }
        Some(AgentMatch {
            kind,
            pid,
            start: self.procs.get(&pid).map_or(0, |p| p.start),
            chain,
        })
    }
}

/// Readers of `/proc/PID/…` for one process. Each returns `None` (or nothing) when the
/// process vanished or belongs to another user; callers fall back, never fail.
pub mod procfs {
    use std::io::Read;
    use std::os::unix::ffi::OsStrExt;
    use std::path::PathBuf;

    /// Most bytes read of one `/proc` file (a command line or environment is at most a few
    /// hundred KiB).
    const MAX_READ: u64 = 4 << 20;

    /// The bytes of a `/proc` file. Not `std::fs::read`: its size hint asks the file's size
    /// and position first, two more system calls for a file whose size reads 0, at every one
    /// of a scan's hundreds of reads.
    fn read(path: &str) -> Option<Vec<u8>> {
        let mut buf = Vec::with_capacity(1024);
        std::fs::File::open(path)
            .ok()?
            .take(MAX_READ)
            .read_to_end(&mut buf)
            .ok()?;
        Some(buf)
    }

    /// [`read`] as text (lossy: `/proc` text is the kernel's, a name may be any bytes).
    fn read_text(path: &str) -> Option<String> {
        read(path).map(|b| String::from_utf8_lossy(&b).into_owned())
    }

    /// The process's command line, when readable and not empty.
    pub fn cmdline(pid: u32) -> Option<Vec<String>> {
        let raw = read(&format!("/proc/{pid}/cmdline"))?;
        let argv: Vec<String> = raw
            .split(|b| *b == 0)
            .filter(|a| !a.is_empty())
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect();
        (!argv.is_empty()).then_some(argv)
    }

    /// The process's executable, when readable; without the ` (deleted)` the kernel adds once
    /// the file was replaced (an upgrade while it runs).
    pub fn exe(pid: u32) -> Option<PathBuf> {
        let link = std::fs::read_link(format!("/proc/{pid}/exe")).ok()?;
        let text = link.as_os_str().as_bytes();
        Some(match text.strip_suffix(b" (deleted)") {
            Some(kept) => PathBuf::from(std::ffi::OsStr::from_bytes(kept)),
            None => link,
        })
    }

    /// The process's environment, when readable.
    pub fn environ(pid: u32) -> Option<Environ> {
        let raw = read(&format!("/proc/{pid}/environ"))?;
        Some(parse_environ(raw))
    }

    /// The NUL-separated `KEY=value` list of `/proc/PID/environ`, kept as read: a lookup scans
    /// for the one name asked (an agent's environment holds a hundred names; a locator asks
    /// two or three), instead of building a map of them all.
    pub fn parse_environ(raw: Vec<u8>) -> Environ {
        Environ(raw)
    }

    /// A process's environment (see [`parse_environ`]).
    #[derive(Debug, Clone, Default)]
    pub struct Environ(Vec<u8>);

    impl Environ {
        /// `name`'s value: the last `name=` entry, as a map built from the list would hold it;
        /// an entry that is not UTF-8 counts as absent.
        pub fn get(&self, name: &str) -> Option<&str> {
            if name.contains('=') {
                return None;
            }
            let key = name.as_bytes();
            self.0.rsplit(|b| *b == 0).find_map(|kv| {
                let value = kv.strip_prefix(key)?.strip_prefix(b"=")?;
                std::str::from_utf8(value).ok()
            })
        }
    }

    /// The files the process holds open (targets of `/proc/PID/fd/*` that are paths).
    pub fn open_files(pid: u32) -> Vec<PathBuf> {
        let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
            return Vec::new();
        };
        dir.filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
            .filter(|t| t.as_os_str().as_bytes().first() == Some(&b'/'))
            .collect()
    }

    /// The process's working directory.
    pub fn cwd(pid: u32) -> Option<PathBuf> {
        std::fs::read_link(format!("/proc/{pid}/cwd")).ok()
    }

    /// Start time in clock ticks since boot (field 22 of `/proc/PID/stat`), the value Claude
    /// Code records as `procStart` on Linux.
    pub fn start_ticks(pid: u32) -> Option<u64> {
        let stat = read_text(&format!("/proc/{pid}/stat"))?;
        parse_start_ticks(&stat)
    }

    /// When a process started, Unix milliseconds: its start ticks since boot on the wall
    /// clock of now (boot = now − uptime; both count suspended time), to ~10 ms. Whole
    /// seconds are too coarse: two panes opened within a second must still be told apart.
    pub fn start_ms(pid: u32) -> Option<u64> {
        let ticks = start_ticks(pid)?;
        // SAFETY: sysconf has no preconditions; it only reads a system constant.
        let hz = u64::try_from(unsafe { libc::sysconf(libc::_SC_CLK_TCK) })
            .ok()
            .filter(|hz| *hz > 0)?;
        let uptime = std::fs::read_to_string("/proc/uptime").ok()?;
        let uptime_ms = (uptime.split_whitespace().next()?.parse::<f64>().ok()? * 1000.0) as u64;
        let now_ms = u64::try_from(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .ok()?
                .as_millis(),
        )
        .ok()?;
        Some(now_ms.checked_sub(uptime_ms)? + ticks * 1000 / hz)
    }

    /// What `/proc/PID/stat` says about a process's place on its terminal.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct Stat {
        /// `R`, `S`, `D`, `T` (stopped, e.g. by Ctrl-Z), `t` (traced), `Z`, …
        pub state: char,
        /// The process group.
        pub pgrp: i32,
        /// The controlling terminal's device number (0 without one), in the kernel's encoding.
        pub tty_nr: u64,
        /// The foreground process group of that terminal (-1 without one).
        pub tpgid: i32,
        /// Start time in clock ticks since boot.
        pub start_ticks: u64,
    }

    impl Stat {
        /// Stopped by a signal (Ctrl-Z, SIGSTOP, a background read) or a tracer.
        pub fn stopped(&self) -> bool {
            matches!(self.state, 'T' | 't')
        }

        /// Its group is the one its terminal sends input to.
        pub fn in_foreground(&self) -> bool {
            self.tty_nr != 0 && self.tpgid > 0 && self.pgrp == self.tpgid
        }
    }

    /// The process's [`Stat`], when it exists.
    pub fn stat(pid: u32) -> Option<Stat> {
        parse_stat(&read_text(&format!("/proc/{pid}/stat"))?)
    }

    /// Parses a `stat` line (fields 3, 5, 7, 8 and 22).
    pub fn parse_stat(stat: &str) -> Option<Stat> {
        let after = &stat[stat.rfind(')')? + 1..];
        let f: Vec<&str> = after.split_whitespace().collect();
        Some(Stat {
            state: f.first()?.chars().next()?,
            pgrp: f.get(2)?.parse().ok()?,
            tty_nr: f.get(4)?.parse::<i64>().ok()? as u64,
            tpgid: f.get(5)?.parse().ok()?,
            start_ticks: f.get(19)?.parse().ok()?,
        })
    }

    /// The device number of a terminal file (`/dev/pts/3`) in the encoding of `stat`'s
    /// `tty_nr`, so the two compare.
    pub fn tty_device(path: &std::path::Path) -> Option<u64> {
        let st = rustix::fs::stat(path).ok()?;
        let (major, minor) = (
            u64::from(rustix::fs::major(st.st_rdev)),
            u64::from(rustix::fs::minor(st.st_rdev)),
        );
        Some((minor & 0xff) | (major << 8) | ((minor & !0xff) << 12))
    }

    /// The command name (`comm`) of a process, e.g. `bash`.
    pub fn comm(pid: u32) -> Option<String> {
        let name = read_text(&format!("/proc/{pid}/comm"))?;
        Some(name.trim_end().to_string()).filter(|n| !n.is_empty())
    }

    /// Field 22 of a `stat` line; the command name (field 2) may hold spaces and parentheses.
    pub fn parse_start_ticks(stat: &str) -> Option<u64> {
        let after = &stat[stat.rfind(')')? + 1..];
        after.split_whitespace().nth(19)?.parse().ok()
    }
}

fn os_lossy(s: &OsStr) -> String {
    s.to_string_lossy().into_owned()
}

fn basename(path: &str) -> String {
    Path::new(path)
        .file_name()
        .map(os_lossy)
        .unwrap_or_else(|| path.to_string())
}

fn strip_script_ext(name: &str) -> &str {
    [".js", ".mjs", ".cjs", ".py"]
        .iter()
        .find_map(|ext| name.strip_suffix(ext))
        .unwrap_or(name)
}

/// Programs that run an agent as a script (`node /usr/bin/claude`) or launch it.
fn is_interpreter(name: &str) -> bool {
    const RUNNERS: [&str; 9] = [
        "node", "nodejs", "bun", "deno", "npx", "pnpx", "bunx", "uvx", "pipx",
    ];
    RUNNERS.contains(&name) || name.starts_with("python")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The matcher with the package paths of the agents that install through npm.
    fn npm() -> Matcher {
        Matcher::default().with_packages(vec![
            ("@anthropic-ai/claude-code/", AgentKind::Claude),
            ("@openai/codex/", AgentKind::Codex),
            ("@google/gemini-cli/", AgentKind::Gemini),
        ])
    }

    fn p(pid: u32, ppid: u32, argv: &[&str], start: u64) -> ProcInfo {
        let argv: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
        ProcInfo {
            pid,
            ppid: Some(ppid),
            name: argv.first().map(|a| basename(a)).unwrap_or_default(),
            exe: argv.first().map(PathBuf::from),
            argv,
            start,
        }
    }

    fn find(procs: Vec<ProcInfo>, root: u32) -> Option<AgentMatch> {
        ProcTable::from_procs(procs).find_agent(root, &npm())
    }

    #[test]
    fn shell_with_native_claude_child() {
        let m = find(
            vec![
                p(10, 1, &["/bin/bash"], 100),
                p(11, 10, &["/home/u/.local/bin/claude", "--resume"], 101),
            ],
            10,
        )
        .unwrap();
        assert_eq!((m.kind, m.pid, m.start), (AgentKind::Claude, 11, 101));
        assert_eq!(m.chain, vec![10, 11]);
    }

    #[test]
    fn pane_process_is_the_agent_itself() {
        let m = find(vec![p(20, 1, &["claude"], 5)], 20).unwrap();
        assert_eq!((m.kind, m.pid), (AgentKind::Claude, 20));
    }

    #[test]
    fn node_script_claude_is_found_through_argv1() {
        let m = find(
            vec![
                p(10, 1, &["-zsh"], 1),
                p(
                    12,
                    10,
                    &["/usr/bin/node", "--no-warnings", "/usr/bin/claude"],
                    2,
                ),
                // Claude's own tool call must not be taken for the agent.
                p(13, 12, &["/bin/bash", "-c", "codex exec hi"], 3),
                p(14, 13, &["codex", "exec", "hi"], 3),
            ],
            10,
        )
        .unwrap();
        assert_eq!((m.kind, m.pid), (AgentKind::Claude, 12));
    }

    #[test]
    fn codex_node_wrapper_hands_over_to_native_child() {
        let m = find(
            vec![
                p(10, 1, &["bash"], 1),
                p(11, 10, &["node", "/usr/local/bin/codex"], 2),
                p(
                    12,
                    11,
                    &["/usr/lib/node_modules/@openai/codex/vendor/x86_64/codex/codex"],
                    2,
                ),
            ],
            10,
        )
        .unwrap();
        assert_eq!((m.kind, m.pid), (AgentKind::Codex, 12));
        assert_eq!(m.chain, vec![10, 11, 12]);
    }

    #[test]
    fn native_agent_running_the_same_agent_as_a_tool_keeps_the_outer_one() {
        let m = find(
            vec![
                p(10, 1, &["bash"], 1),
                p(11, 10, &["claude"], 2),
                p(12, 11, &["claude", "-p", "summarise"], 3),
            ],
            10,
        )
        .unwrap();
        assert_eq!(m.pid, 11);
    }

    #[test]
    fn npm_package_path_identifies_the_agent() {
        let m = find(
            vec![p(
                30,
                1,
                &[
                    "node",
                    "/usr/lib/node_modules/@anthropic-ai/claude-code/cli.js",
                ],
                1,
            )],
            30,
        )
        .unwrap();
        assert_eq!(m.kind, AgentKind::Claude);
    }

    #[test]
    fn a_runtime_retitled_to_an_agent_title_is_that_agent() {
        // Kimi Code sets `process.title`: its command line becomes `kimi-code` alone, the
        // executable whichever node runs it.
        let matcher = Matcher::default().with_packages(vec![
            ("@moonshot-ai/kimi-code/", AgentKind::Kimi),
            ("kimi-code", AgentKind::Kimi),
        ]);
        let mut retitled = p(40, 1, &["kimi-code"], 1);
        retitled.exe = Some(PathBuf::from("/opt/n/node-linux-x64/bin/node"));
        retitled.name = "kimi-code".into();
        let m = ProcTable::from_procs([retitled])
            .find_agent(40, &matcher)
            .unwrap();
        assert_eq!(m.kind, AgentKind::Kimi);
        // A title is no path fragment: a script in a folder of that name is not the agent.
        let script = p(41, 1, &["node", "/home/me/kimi-code-notes/x.js"], 1);
        assert!(ProcTable::from_procs([script])
            .find_agent(41, &matcher)
            .is_none());
    }

    #[test]
    fn arguments_of_ordinary_programs_are_not_agents() {
        assert!(find(
            vec![p(10, 1, &["bash"], 1), p(11, 10, &["vim", "claude"], 2)],
            10
        )
        .is_none());
    }

    #[test]
    fn breadth_first_takes_the_shallowest_agent() {
        let m = find(
            vec![
                p(10, 1, &["bash"], 1),
                p(11, 10, &["make"], 2),
                p(12, 11, &["sh"], 2),
                p(13, 12, &["claude"], 3),
                p(14, 10, &["codex"], 4),
            ],
            10,
        )
        .unwrap();
        assert_eq!(m.pid, 14);
    }

    #[test]
    fn cycles_terminate() {
        // Corrupt table: 10 → 11 → 12 → 10.
        let mut a = p(10, 12, &["bash"], 1);
        a.ppid = Some(12);
        let procs = vec![a, p(11, 10, &["sh"], 1), p(12, 11, &["sh"], 1)];
        assert!(find(procs.clone(), 10).is_none());
        let t = ProcTable::from_procs(procs);
        assert_eq!(t.descendants(&[10]).len(), 3);
        // A process that is its own parent.
        let own = ProcTable::from_procs(vec![p(5, 5, &["claude"], 1)]);
        assert_eq!(own.find_agent(5, &Matcher::default()).unwrap().pid, 5);
    }

    #[test]
    fn vanished_pane_process_finds_nothing() {
        assert!(find(vec![p(11, 10, &["claude"], 2)], 10).is_none());
        assert!(ProcTable::default().descendants(&[10]).is_empty());
    }

    #[test]
    fn orphan_whose_parent_vanished_is_not_under_the_pane() {
        // 11 was the pane's child; the pane shell (10) vanished, 11 got reparented to 1.
        let m = find(vec![p(11, 1, &["claude"], 2), p(12, 1, &["bash"], 1)], 12);
        assert!(m.is_none());
    }

    #[test]
    fn reused_pid_is_not_a_child_of_a_younger_parent() {
        // claude (started 50) had parent PID 10, which died; PID 10 is now a new shell (start 90).
        let m = find(
            vec![p(10, 1, &["bash"], 90), p(11, 10, &["claude"], 50)],
            10,
        );
        assert!(m.is_none());
    }

    #[test]
    fn unreadable_command_line_falls_back_to_the_kernel_name() {
        let hidden = ProcInfo {
            pid: 11,
            ppid: Some(10),
            name: "codex".into(),
            argv: Vec::new(),
            exe: None,
            start: 2,
        };
        let m = find(vec![p(10, 1, &["bash"], 1), hidden], 10).unwrap();
        assert_eq!(m.kind, AgentKind::Codex);
    }

    #[test]
    fn matcher_list_is_configurable() {
        let t = ProcTable::from_procs(vec![p(10, 1, &["bash"], 1), p(11, 10, &["aider"], 2)]);
        assert!(t.find_agent(10, &Matcher::default()).is_some());
        let only = Matcher::new(vec![AgentKind::Claude, AgentKind::Codex]);
        assert!(t.find_agent(10, &only).is_none());
    }

    #[test]
    fn start_ms_is_near_now_for_this_process() {
        let now = chrono::Utc::now().timestamp_millis() as u64;
        let mine = procfs::start_ms(std::process::id()).expect("readable");
        assert!(
            mine <= now + 1000 && mine + 3_600_000 > now,
            "{mine} vs {now}"
        );
    }

    #[test]
    fn stat_start_ticks_survive_odd_command_names() {
        let stat = "42 (a) b (c) S 1 42 42 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 98765 1000 10";
        assert_eq!(procfs::parse_start_ticks(stat), Some(98765));
        assert_eq!(procfs::parse_start_ticks("garbage"), None);
        let env = procfs::parse_environ(
            b"A=1\0CLAUDE_CONFIG_DIR=/x=y\0junk\0AB=2\0A=3\0B=\xff\0C=\0".to_vec(),
        );
        assert_eq!(env.get("CLAUDE_CONFIG_DIR"), Some("/x=y"));
        assert_eq!(env.get("A"), Some("3"), "the last entry wins");
        assert_eq!(env.get("AB"), Some("2"));
        assert_eq!(env.get("junk"), None);
        assert_eq!(env.get("B"), None, "not UTF-8");
        assert_eq!(env.get("C"), Some(""));
        assert_eq!(env.get("A=1"), None);
        assert_eq!(env.get(""), None);
    }

    #[test]
    fn stat_tells_stopped_and_foreground_groups() {
        // A Ctrl-Z'd job: stopped, its group no longer the terminal's foreground group.
        let z =
            "7542 (sleep) T 7538 7542 7538 34816 7538 1077936128 0 0 0 0 0 0 0 0 20 0 1 0 555 0 0";
        let s = procfs::parse_stat(z).unwrap();
        assert_eq!(
            (s.state, s.pgrp, s.tty_nr, s.tpgid),
            ('T', 7542, 34816, 7538)
        );
        assert_eq!(s.start_ticks, 555);
        assert!(s.stopped() && !s.in_foreground());
        let fg = "7542 (a) b) S 7538 7542 7538 34816 7542 0 0 0 0 0 0 0 0 0 20 0 1 0 555 0 0";
        let s = procfs::parse_stat(fg).unwrap();
        assert!(!s.stopped() && s.in_foreground());
        // No controlling terminal: never in a foreground.
        let daemon = "9 (d) S 1 9 9 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5 0 0";
        assert!(!procfs::parse_stat(daemon).unwrap().in_foreground());
        assert_eq!(procfs::parse_stat("9 (d) S"), None);
    }

    #[test]
    fn this_process_stat_and_its_terminal_agree() {
        let me = procfs::stat(std::process::id()).unwrap();
        assert_eq!(
            Some(me.start_ticks),
            procfs::start_ticks(std::process::id())
        );
        if let Ok(tty) = std::fs::read_link("/proc/self/fd/0") {
            if tty.starts_with("/dev/pts") {
                assert_eq!(procfs::tty_device(&tty), Some(me.tty_nr));
            }
        }
    }

    #[test]
    fn capture_sees_this_process_with_its_command_line() {
        let me = std::process::id();
        let t = ProcTable::capture(&[me]);
        let info = t.get(me).expect("own process in snapshot");
        assert!(info.start > 0);
        assert!(!info.argv.is_empty());
        assert!(t.len() > 1);
    }
}
