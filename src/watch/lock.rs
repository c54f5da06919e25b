//! One watcher per tmux server: an exclusive `flock` on a file in the state folder named
//! after the server's socket path. The kernel drops the lock when the process dies, so a
//! crashed watcher never blocks the next one.

use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::paths::FileLock;

/// A held lock; released on drop.
pub type ServerLock = FileLock;

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
    FileLock::try_acquire(&lock_path(dir, socket_path))
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
