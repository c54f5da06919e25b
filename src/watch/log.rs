//! The watcher's log: stderr plus `watch.log` in its server's folder of the state folder
//! ([`crate::paths::server_dir`]; a watcher started by the plugin has no terminal). The file is rotated once it passes 1 MiB.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;
use std::sync::OnceLock;

const MAX_LOG: u64 = 1 << 20;

/// The log's file name, in the server's folder.
pub const FILE: &str = "watch.log";

static LOG_FILE: OnceLock<PathBuf> = OnceLock::new();

/// Sends later log lines to `path` too.
pub fn init(path: PathBuf) {
    let _ = LOG_FILE.set(path);
}

/// Logs one line with a timestamp. Never fails.
pub fn line(msg: &str) {
    let stamped = format!(
        "{} agentpane watch[{}]: {msg}",
        chrono::Utc::now().format("%Y-%m-%dT%H:%M:%S%.3fZ"),
        std::process::id()
    );
    eprintln!("{stamped}");
    let Some(path) = LOG_FILE.get() else {
        return;
    };
    if std::fs::metadata(path).is_ok_and(|m| m.len() > MAX_LOG) {
        let _ = std::fs::rename(path, path.with_extension("log.old"));
    }
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(path);
    if let Ok(mut f) = file {
        let _ = writeln!(f, "{stamped}");
    }
}
