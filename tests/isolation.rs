//! No test reaches the user's own files: every run the shared helpers (`tests/common`) start
//! gets a temporary `HOME`, state folder, XDG folders and agent folders.
//!
//! The check runs the helpers in a child of this test binary whose environment points at a
//! tripwire — a home with agentpane state, config, `~/.ssh` and `~/.claude` in it, set up as
//! a user's would be — and then finds the tripwire as it was: no file added, changed or
//! removed, and (the filesystem records reads: every file's access time is set older than
//! its modification time, which relatime and strictatime both update on the next read) none
//! read.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime};

use common::{agentpane_without_server, FakeAgent, TmuxServer, Watch};

/// What the helpers run: a command without a server, a server with an agent, its watcher.
#[test]
fn helpers_run_agentpane_in_temporary_folders() {
    let run = agentpane_without_server(&["status"]);
    assert_eq!((run.code, run.stdout.as_str()), (0, ""), "{run:?}");
    let run = agentpane_without_server(&["doctor", "--json"]);
    assert_eq!(
        run.json()["socket_path"],
        serde_json::Value::Null,
        "{run:?}"
    );

    let server = TmuxServer::start();
    let pane = server.spawn(&FakeAgent::claude().fixture(common::CLAUDE_ANSWER));
    let watch = Watch::start(&server, &[]);
    let run = server.agentpane(&["last", &pane]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(watch.stop(), 0);
}

/// The variables a run uses to find the user's files, and where the tripwire puts each.
const TRIPWIRE_ENV: &[(&str, &str)] = &[
    ("HOME", "home"),
    ("AGENTPANE_STATE_DIR", "home/.local/state/agentpane"),
    ("XDG_STATE_HOME", "home/.local/state"),
    ("XDG_CONFIG_HOME", "home/.config"),
    ("XDG_DATA_HOME", "home/.local/share"),
    ("XDG_CACHE_HOME", "home/.cache"),
    ("CLAUDE_CONFIG_DIR", "home/.claude"),
    ("CODEX_HOME", "home/.codex"),
];

/// A user's files, as agentpane and the agents keep them.
const TRIPWIRE_FILES: &[&str] = &[
    "home/.local/state/agentpane/state.json",
    "home/.local/state/agentpane/watch.log",
    "home/.config/agentpane/config.toml",
    "home/.ssh/config",
    "home/.ssh/known_hosts",
    "home/.claude/settings.json",
    "home/.claude/projects/p/s.jsonl",
    "home/.claude.json",
    "home/.codex/config.toml",
    "home/.local/share/opencode/opencode.db",
];

/// Every file under `root` with its length, modification and access time.
fn survey(root: &Path) -> BTreeMap<PathBuf, (u64, SystemTime, SystemTime)> {
    walkdir::WalkDir::new(root)
        .into_iter()
        .map(|e| e.expect("walk the tripwire"))
        .filter(|e| e.file_type().is_file())
        .map(|e| {
            let meta = e.metadata().expect("tripwire metadata");
            let times = (meta.modified().unwrap(), meta.accessed().unwrap());
            (e.path().to_path_buf(), (meta.len(), times.0, times.1))
        })
        .collect()
}

/// Sets `file`'s access time a day before its modification time, so that a read shows.
fn age_access(file: &Path) {
    let f = std::fs::File::options().write(true).open(file).unwrap();
    let modified = f.metadata().unwrap().modified().unwrap();
    let times = std::fs::FileTimes::new()
        .set_accessed(modified - Duration::from_secs(86_400))
        .set_modified(modified);
    f.set_times(times).expect("set the access time");
}

/// Whether reading a file in `dir` updates its access time here (not on a `noatime` mount).
fn reads_are_recorded(dir: &Path) -> bool {
    let probe = dir.join("probe");
    std::fs::write(&probe, "probe").unwrap();
    age_access(&probe);
    let before = std::fs::metadata(&probe).unwrap().accessed().unwrap();
    std::fs::read(&probe).unwrap();
    let after = std::fs::metadata(&probe).unwrap().accessed().unwrap();
    std::fs::remove_file(&probe).unwrap();
    after > before
}

#[test]
fn the_helpers_never_touch_the_users_home() {
    let tmp = tempfile::tempdir().unwrap();
    let wire = tmp.path().join("wire");
    for rel in TRIPWIRE_FILES {
        let file = wire.join(rel);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, format!("the user's own {rel}\n")).unwrap();
        age_access(&file);
    }
    let reads = reads_are_recorded(tmp.path());
    let before = survey(&wire);

    let mut child = Command::new(std::env::current_exe().unwrap());
    child
        .args(["--exact", "helpers_run_agentpane_in_temporary_folders"])
        .args(["--test-threads", "1", "--nocapture"])
        .env_remove("TMUX")
        .env_remove("TMUX_PANE");
    for (key, rel) in TRIPWIRE_ENV {
        child.env(key, wire.join(rel));
    }
    let out = child.output().expect("run the helpers under the tripwire");
    let told = || {
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    };
    assert!(out.status.success(), "the helpers failed:\n{}", told());
    assert!(
        told().contains("1 passed"),
        "the helpers did not run:\n{}",
        told()
    );

    let after = survey(&wire);
    let added: Vec<_> = after.keys().filter(|p| !before.contains_key(*p)).collect();
    assert!(added.is_empty(), "a test wrote the user's files: {added:?}");
    for (file, (len, modified, accessed)) in &before {
        let Some((len2, modified2, accessed2)) = after.get(file) else {
            panic!("a test removed the user's {}", file.display());
        };
        assert!(
            (len, modified) == (len2, modified2),
            "a test changed the user's {}",
            file.display()
        );
        assert!(
            !reads || accessed == accessed2,
            "a test read the user's {}",
            file.display()
        );
    }
}

/// Where a test starts the binary itself: `Command::new(` naming it, outside `tests/common`.
fn spawns_outside_the_helpers(tests: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for entry in walkdir::WalkDir::new(tests) {
        let entry = entry.expect("walk tests/");
        let path = entry.path();
        if !path.extension().is_some_and(|e| e == "rs") || path.starts_with(tests.join("common")) {
            continue;
        }
        let text = std::fs::read_to_string(path).expect("read a test file");
        // Whitespace gone, so a call split over lines reads as one.
        let flat: String = text.chars().filter(|c| !c.is_whitespace()).collect();
        for (at, _) in flat.match_indices("Command::new(") {
            let arg = &flat[at + "Command::new(".len()..];
            let arg = &arg[..arg.find(')').unwrap_or(arg.len())];
            if ["agentpane_bin", "CARGO_BIN_EXE_agentpane", "BIN"]
                .iter()
                .any(|name| arg.contains(name))
            {
                found.push(format!("{}: Command::new({arg})", path.display()));
            }
        }
    }
    found
}

/// Every run of the binary starts from the helpers that give it a temporary world
/// (`common::agentpane_in`, `agentpane_with_env`, `TmuxServer`), the ones the tripwire above
/// checks.
#[test]
fn every_test_starts_agentpane_through_the_helpers() {
    let tests = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let found = spawns_outside_the_helpers(&tests);
    assert!(
        found.is_empty(),
        "start agentpane with common::agentpane_in or agentpane_with_env: {found:#?}"
    );
}
