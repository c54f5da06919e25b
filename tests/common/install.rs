//! What an install starts from: a fresh clone of this repository, a PATH without agentpane
//! or cargo, and a fake `cargo` that "builds" by copying the binary under test.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::agentpane_bin;

/// The system part of a server's PATH in these tests, which must hold neither agentpane nor
/// cargo (checked by [`assert_bare_system_path`], so a test cannot pass by finding them).
pub const SYSTEM_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// `program` in one of [`SYSTEM_PATH`]'s folders.
pub fn on_system_path(program: &str) -> Option<PathBuf> {
    SYSTEM_PATH
        .split(':')
        .map(|d| Path::new(d).join(program))
        .find(|p| p.exists())
}

/// Panics when agentpane or cargo is on [`SYSTEM_PATH`].
pub fn assert_bare_system_path() {
    assert_eq!(
        on_system_path("agentpane"),
        None,
        "agentpane is on {SYSTEM_PATH}"
    );
    assert_eq!(on_system_path("cargo"), None, "cargo is on {SYSTEM_PATH}");
}

/// A fresh clone of this repository at `dest`, as `git clone` (or TPM) makes it. The plugin
/// files are then copied from the working tree, so an uncommitted change to the plugin is
/// what is tested.
pub fn clone_to(dest: &Path) -> PathBuf {
    let out = Command::new("git")
        .args([
            "clone",
            "--quiet",
            "--no-hardlinks",
            env!("CARGO_MANIFEST_DIR"),
        ])
        .arg(dest)
        .output()
        .expect("run git clone");
    assert!(
        out.status.success(),
        "git clone: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    for file in ["agentpane.tmux", "tmux/agentpane.tmux"] {
        std::fs::copy(
            Path::new(env!("CARGO_MANIFEST_DIR")).join(file),
            dest.join(file),
        )
        .expect("copy the plugin file");
    }
    assert!(!dest.join("target").exists(), "a fresh clone has no build");
    dest.to_path_buf()
}

/// The fake `cargo` in `bin`: records each call in `<bin>/cargo-calls`, waits for
/// `<bin>/go`, then puts the binary under test where `cargo build --release` would — as a
/// new file, the way cargo does, since a running binary cannot be written over.
pub fn fake_cargo(bin: &Path) {
    let script = format!(
        "#!/bin/sh\n\
         echo \"$PWD $*\" >> '{calls}'\n\
         while [ ! -e '{go}' ]; do sleep 0.05; done\n\
         echo '   Compiling agentpane (fake cargo)'\n\
         mkdir -p target/release && cp '{exe}' target/release/agentpane.new\n\
         mv -f target/release/agentpane.new target/release/agentpane\n",
        calls = bin.join("cargo-calls").display(),
        go = bin.join("go").display(),
        exe = agentpane_bin(),
    );
    write_script(&bin.join("cargo"), &script);
}

/// An executable file at `path` holding `script`.
pub fn write_script(path: &Path, script: &str) {
    std::fs::write(path, script).expect("write a script");
    let mut perms = std::fs::metadata(path).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(path, perms).unwrap();
}

/// The calls the fake cargo in `bin` recorded: `<folder> <args>` each.
pub fn cargo_calls(bin: &Path) -> Vec<String> {
    std::fs::read_to_string(bin.join("cargo-calls"))
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}
