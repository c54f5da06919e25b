//! Which process is Copilot CLI, and which session log is its own (docs/agents/copilot.md).
//!
//! The npm package starts `node …/.bin/copilot` (a loader, comm `node`), which starts the
//! native binary of its platform package, `…/@github/copilot-linux-x64/copilot`, whose threads
//! make its comm `MainThread`. The native process owns the session; the standalone installer
//! starts it with no node parent. A session's folder names its owner: `inuse.<PID>.lock` (the
//! pid as text) and `inuse.<PID>.hold`, which that pid holds open with an exclusive `flock`;
//! both are removed at a clean exit and left behind by a crash or `SIGKILL`. The pid also holds
//! an `inuse.<PID>.hold` in its package cache (`~/.cache/copilot/pkg/<platform>/<version>/`):
//! only the one under `session-state/` names a session.

use std::path::{Path, PathBuf};

use crate::proctree::procfs;

/// The kernel name (`comm`) of the native process: Node's main thread name, since the binary
/// is a Node single-executable application.
pub const NATIVE_COMM: &str = "MainThread";

/// The executable's name in every platform package and in the standalone install.
pub const EXE_NAME: &str = "copilot";

/// The environment variable that moves Copilot's home (`$HOME/.copilot` by default).
pub const HOME_VAR: &str = "COPILOT_HOME";

/// Copilot's home under a user's `HOME`.
pub const DOT_DIR: &str = ".copilot";

/// The folder of session folders under the home.
pub const SESSION_STATE: &str = "session-state";

/// The session log inside a session folder; written from the first prompt on (the folder,
/// `workspace.yaml` and the lock exist from start-up).
pub const EVENTS_FILE: &str = "events.jsonl";

/// The npm platform packages (`@github/copilot-<platform>`) that ship the native binary.
pub const PLATFORM_PACKAGES: [&str; 8] = [
    "copilot-linux-x64",
    "copilot-linux-arm64",
    "copilot-linuxmusl-x64",
    "copilot-linuxmusl-arm64",
    "copilot-darwin-x64",
    "copilot-darwin-arm64",
    "copilot-win32-x64",
    "copilot-win32-arm64",
];

/// True for the native Copilot process: an executable named `copilot`, in a platform package
/// or anywhere else (the standalone install), whose comm is [`NATIVE_COMM`] or `copilot`.
/// `exe` is `/proc/PID/exe` (or `argv[0]` when that is unreadable).
pub fn is_native(comm: &str, exe: &Path) -> bool {
    exe.file_name().is_some_and(|n| n == EXE_NAME) && (comm == NATIVE_COMM || comm == EXE_NAME)
}

/// True when `exe` lies in one of the npm platform packages (`…/@github/copilot-linux-x64/…`).
pub fn in_platform_package(exe: &Path) -> bool {
    exe.components().any(|c| {
        c.as_os_str()
            .to_str()
            .is_some_and(|name| PLATFORM_PACKAGES.contains(&name))
    })
}

/// True for the npm loader: `node …/.bin/copilot` or `node …/@github/copilot/npm-loader.js`.
/// It owns no session: the native child it starts does.
pub fn is_loader(argv: &[String]) -> bool {
    let Some(first) = argv.first() else {
        return false;
    };
    let runner = Path::new(first)
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n == "node" || n.starts_with("node"));
    let script = argv.iter().skip(1).find(|a| !a.starts_with('-'));
    runner
        && script.is_some_and(|s| {
            s.ends_with("/.bin/copilot")
                || s.contains("@github/copilot/")
                || Path::new(s).file_name().is_some_and(|n| n == EXE_NAME)
        })
}

/// The home of a Copilot process: its `COPILOT_HOME`, else `<its HOME>/.copilot`, else
/// `fallback_home/.copilot`. The second value says which.
pub fn copilot_home(pid: u32, fallback_home: &Path) -> (PathBuf, &'static str) {
    crate::agents::locate::agent_root(pid, HOME_VAR, DOT_DIR, fallback_home)
}

/// The pid an `inuse.<PID>.lock` file name gives.
pub fn lock_pid(file_name: &str) -> Option<u32> {
    file_name
        .strip_prefix("inuse.")?
        .strip_suffix(".lock")?
        .parse()
        .ok()
}

/// One session folder as listed: its name (the session id), the `inuse.<PID>.lock` files in
/// it with their modification times (seconds since the epoch).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    pub id: String,
    pub locks: Vec<(u32, u64)>,
}

/// A session found for a process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    pub id: String,
    /// `<home>/session-state/<id>`.
    pub dir: PathBuf,
    /// `<dir>/events.jsonl`; it does not exist until the first prompt.
    pub events: PathBuf,
    /// How it was told: the `.hold` the process holds open, or a lock file naming the pid.
    pub via: Via,
}

/// How a session was tied to its process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    /// The process holds `<dir>/inuse.<PID>.hold` open.
    HeldOpen,
    /// `<dir>/inuse.<PID>.lock` names the pid (the newest such lock when a crashed
    /// process with the same pid left one behind).
    LockFile,
}

/// The session of process `pid` under `home`, from what the process holds open (`open`, the
/// targets of `/proc/PID/fd`) or else the folder listing. Pure: the caller reads the disk.
pub fn session_of(home: &Path, pid: u32, open: &[PathBuf], listing: &[Listed]) -> Option<Session> {
    let root = home.join(SESSION_STATE);
    let hold = format!("inuse.{pid}.hold");
    let held = open.iter().find_map(|p| {
        let dir = p.parent()?;
        (p.file_name()? == hold.as_str() && dir.parent()? == root)
            .then(|| dir.file_name()?.to_str().map(str::to_string))
            .flatten()
    });
    let (id, via) = match held {
        Some(id) => (id, Via::HeldOpen),
        None => {
            let newest = listing
                .iter()
                .filter_map(|l| {
                    let (_, mtime) = l.locks.iter().find(|(p, _)| *p == pid)?;
                    Some((*mtime, &l.id))
                })
                .max()?;
            (newest.1.clone(), Via::LockFile)
        }
    };
    let dir = root.join(&id);
    Some(Session {
        events: dir.join(EVENTS_FILE),
        dir,
        id,
        via,
    })
}

/// Lists `<home>/session-state`: each session folder and the locks in it. Unreadable entries
/// are skipped.
pub fn list_sessions(home: &Path) -> Vec<Listed> {
    let Ok(dirs) = std::fs::read_dir(home.join(SESSION_STATE)) else {
        return Vec::new();
    };
    dirs.filter_map(Result::ok)
        .filter(|d| d.file_type().is_ok_and(|t| t.is_dir()))
        .filter_map(|d| {
            let id = d.file_name().to_str()?.to_string();
            let locks = std::fs::read_dir(d.path())
                .ok()?
                .filter_map(Result::ok)
                .filter_map(|f| {
                    let pid = lock_pid(f.file_name().to_str()?)?;
                    let mtime = crate::agents::locate::mtime_secs(&f.path()).unwrap_or(0);
                    Some((pid, mtime))
                })
                .collect();
            Some(Listed { id, locks })
        })
        .collect()
}

/// The session of the Copilot process `pid` whose home is `home`: what it holds open first
/// (one read of `/proc/PID/fd`), the lock files only when that says nothing.
pub fn find(home: &Path, pid: u32) -> Option<Session> {
    let open = procfs::open_files(pid);
    session_of(home, pid, &open, &[]).or_else(|| session_of(home, pid, &open, &list_sessions(home)))
}

/// The live session folders (a lock names a process) of `cwd` under `home` that have no
/// `events.jsonl` yet: where a fresh session's log will appear at its first prompt.
pub fn awaiting_log(home: &Path, cwd: &str) -> Vec<PathBuf> {
    let root = home.join(SESSION_STATE);
    list_sessions(home)
        .into_iter()
        .filter(|l| !l.locks.is_empty())
        .map(|l| root.join(l.id))
        .filter(|dir| !dir.join(EVENTS_FILE).exists())
        .filter(|dir| {
            std::fs::read_to_string(dir.join("workspace.yaml"))
                .is_ok_and(|y| workspace_field(&y, "cwd") == Some(cwd))
        })
        .collect()
}

/// A field of a session's `workspace.yaml` (`cwd`, `name`, `created_at`, …): flat
/// `key: value` lines, read without a YAML parser.
pub fn workspace_field<'a>(yaml: &'a str, key: &str) -> Option<&'a str> {
    yaml.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        (k == key).then(|| v.trim()).filter(|v| !v.is_empty())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agents::copilot::testkit::fixture;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn the_native_binary_and_the_loader_are_told_apart() {
        let exe = Path::new(
            "/root/.cache/agentpane-clients/copilot@1.0.102/node_modules/@github/copilot-linux-x64/copilot",
        );
        assert!(is_native("MainThread", exe));
        assert!(in_platform_package(exe));
        assert!(is_native(
            "copilot",
            Path::new("/home/u/.local/bin/copilot")
        ));
        assert!(!in_platform_package(Path::new(
            "/home/u/.local/bin/copilot"
        )));
        assert!(!is_native("MainThread", Path::new("/usr/bin/node")));
        assert!(!is_native("bash", exe));
        let loader = s(&[
            "node",
            "/root/.cache/agentpane-clients/copilot@1.0.102/node_modules/.bin/copilot",
        ]);
        assert!(is_loader(&loader));
        assert!(is_loader(&s(&[
            "/usr/bin/node",
            "/usr/lib/node_modules/@github/copilot/npm-loader.js"
        ])));
        assert!(!is_loader(&s(&["node", "/srv/app/server.js"])));
        assert!(!is_loader(&s(&[exe.to_str().unwrap()])));
    }

    #[test]
    fn lock_names_give_the_pid() {
        assert_eq!(lock_pid("inuse.23458.lock"), Some(23458));
        assert_eq!(lock_pid("inuse.23458.hold"), None);
        assert_eq!(lock_pid("inuse.x.lock"), None);
        assert_eq!(lock_pid(".workspace-fork.lock"), None);
    }

    #[test]
    fn the_recorded_layouts_name_their_owner_while_it_runs() {
        // `ls -la` of real session folders: before the first prompt, live, after a clean
        // exit (SIGHUP), after SIGKILL, and one session held by two processes.
        let text = fixture("session-folder.txt");
        let sections: Vec<&str> = text.split("\n# ").collect();
        let pids: Vec<Vec<u32>> = sections
            .iter()
            .map(|s| {
                s.lines()
                    .filter_map(|l| l.split_whitespace().last())
                    .filter_map(lock_pid)
                    .collect()
            })
            .collect();
        assert_eq!(
            pids,
            vec![
                vec![28675],
                vec![29473],
                vec![],
                vec![2037],
                // `copilot --continue` of the live session, "Resume anyway": both own it.
                vec![30539, 30710],
            ]
        );
        assert!(
            !sections[0].contains(EVENTS_FILE),
            "no log before the first prompt"
        );
        assert!(sections[1].contains(EVENTS_FILE));
        assert!(sections[2].contains(EVENTS_FILE) && !sections[2].contains("inuse."));
    }

    #[test]
    fn the_held_file_wins_over_a_stale_lock_of_a_reused_pid() {
        let home = Path::new("/h/.copilot");
        let listing = vec![
            Listed {
                id: "old".into(),
                locks: vec![(2037, 100)],
            },
            Listed {
                id: "new".into(),
                locks: vec![(2037, 200), (999, 300)],
            },
            Listed {
                id: "other".into(),
                locks: vec![(999, 400)],
            },
        ];
        // No fd seen: the newest lock naming the pid.
        let found = session_of(home, 2037, &[], &listing).unwrap();
        assert_eq!((found.id.as_str(), found.via), ("new", Via::LockFile));
        assert_eq!(found.events, home.join("session-state/new/events.jsonl"));
        // The process holds the old folder's `.hold` open: that is its session. The
        // package cache's `.hold` is no session.
        let open = vec![
            PathBuf::from("/h/.cache/copilot/pkg/linux-x64/1.0.102/inuse.2037.hold"),
            PathBuf::from("/h/.copilot/session-state/old/inuse.2037.hold"),
        ];
        let found = session_of(home, 2037, &open, &listing).unwrap();
        assert_eq!((found.id.as_str(), found.via), ("old", Via::HeldOpen));
        assert_eq!(session_of(home, 4242, &[], &listing), None);
    }

    #[test]
    fn a_session_on_disk_is_found_by_its_lock() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path();
        let session = home.join("session-state/d38a9ca2-0b42-42fe-9b64-bf880971459a");
        std::fs::create_dir_all(&session).unwrap();
        std::fs::write(session.join("inuse.23458.lock"), "23458\n").unwrap();
        std::fs::write(session.join("inuse.23458.hold"), "").unwrap();
        std::fs::create_dir_all(home.join("session-state/.session-operation-locks")).unwrap();
        let listing = list_sessions(home);
        let found = session_of(home, 23458, &[], &listing).unwrap();
        assert_eq!(found.id, "d38a9ca2-0b42-42fe-9b64-bf880971459a");
        assert_eq!(found.dir, session);
        assert_eq!(session_of(home, 1, &[], &listing), None);
    }

    #[test]
    fn workspace_yaml_fields() {
        let yaml = fixture("workspace.yaml");
        assert_eq!(workspace_field(&yaml, "cwd"), Some("/tmp/cpl/run1/proj"));
        assert_eq!(
            workspace_field(&yaml, "id"),
            Some("d38a9ca2-0b42-42fe-9b64-bf880971459a")
        );
        assert_eq!(workspace_field(&yaml, "name"), Some("Say hello please"));
        assert_eq!(workspace_field(&yaml, "nothing"), None);
    }
}
