//! Installing the pinned clients on first use: a test that finds one missing runs
//! `scripts/install-clients.sh` once per test process (the script takes a lock on the cache, so
//! test binaries started together install once too); without `npm` and `node` it cannot, and
//! says which is missing.

use std::io::Write;
use std::path::Path;
use std::process::Command;
use std::sync::Mutex;

/// What the install script and the clients need on `PATH`.
const NEEDS: &[&str] = &["npm", "node"];

/// Whether an executable `program` is on `PATH`.
fn on_path(program: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let Some(path) = std::env::var_os("PATH") else {
        return false;
    };
    std::env::split_paths(&path).any(|dir| {
        std::fs::metadata(dir.join(program))
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    })
}

/// Installs every client of the pin list `list` into `root`, once per test process: the
/// first caller runs the script, the others wait for it and get its outcome. `Err` says what
/// is missing or what failed.
pub fn ensure(root: &Path, list: &Path) -> Result<(), String> {
    static DONE: Mutex<Option<Result<(), String>>> = Mutex::new(None);
    let mut done = DONE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(result) = done.as_ref() {
        return result.clone();
    }
    let result = run(root, list);
    *done = Some(result.clone());
    result
}

fn run(root: &Path, list: &Path) -> Result<(), String> {
    let missing: Vec<&str> = NEEDS.iter().copied().filter(|p| !on_path(p)).collect();
    if !missing.is_empty() {
        return Err(format!("{} not on PATH", missing.join(" and ")));
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/install-clients.sh");
    // Straight to the terminal, past the harness's capture: the first install takes minutes.
    let _ = writeln!(
        std::io::stderr(),
        "real-client suite: installing the pinned clients into {} (first use; {})",
        root.display(),
        script.display()
    );
    let out = Command::new("bash")
        .arg(&script)
        .arg(list)
        .env("AGENTPANE_CLIENTS", root)
        .output()
        .map_err(|e| format!("could not run {}: {e}", script.display()))?;
    if out.status.success() {
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    let tail: Vec<&str> = stderr.lines().rev().take(10).collect();
    Err(format!(
        "{} failed ({}):\n{}",
        script.display(),
        out.status,
        tail.into_iter().rev().collect::<Vec<_>>().join("\n")
    ))
}
