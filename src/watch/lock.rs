//! One watcher per tmux server: an exclusive `flock` on a file in the state folder named
//! after the server's socket path. The kernel drops the lock when the process dies, so a
//! crashed watcher never blocks the next one. (`flock(2)` directly rather than
//! `File::try_lock`, which needs Rust 1.89 while the crate supports 1.80.)

use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// A held lock; released on drop.
#[derive(Debug)]
pub struct ServerLock {
    _file: File,
    pub path: PathBuf,
}

/// The lock file for the server at `socket_path`.
pub fn lock_path(dir: &Path, socket_path: &str) -> PathBuf {
    let name: String = socket_path
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect();
    dir.join(format!("watch{name}.lock"))
}

/// Takes the lock, or `Ok(None)` when another watcher holds it.
pub fn try_lock(dir: &Path, socket_path: &str) -> Result<Option<ServerLock>> {
    let path = lock_path(dir, socket_path);
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .mode(0o600)
        .open(&path)
        .with_context(|| format!("cannot open the watcher lock {}", path.display()))?;
    // SAFETY: flock on a descriptor this function owns for the call; no memory is shared.
    let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    if rc == 0 {
        return Ok(Some(ServerLock { _file: file, path }));
    }
    let err = std::io::Error::last_os_error();
    if err.kind() == std::io::ErrorKind::WouldBlock {
        Ok(None)
    } else {
        Err(err).with_context(|| format!("cannot lock {}", path.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_lock_on_the_same_server_is_refused_until_released() {
        let dir = tempfile::tempdir().unwrap();
        let first = try_lock(dir.path(), "/tmp/tmux-0/default").unwrap();
        assert!(first.is_some());
        assert!(try_lock(dir.path(), "/tmp/tmux-0/default")
            .unwrap()
            .is_none());
        assert!(try_lock(dir.path(), "/tmp/tmux-0/other").unwrap().is_some());
        drop(first);
        assert!(try_lock(dir.path(), "/tmp/tmux-0/default")
            .unwrap()
            .is_some());
    }

    #[test]
    fn lock_names_are_flat_file_names() {
        let p = lock_path(Path::new("/s"), "/tmp/tmux-1000/my sock");
        assert_eq!(p, Path::new("/s/watch_tmp_tmux-1000_my_sock.lock"));
    }
}
