//! One watcher per tmux server: an exclusive `flock` on `watch.lock` in the server's own
//! folder ([`crate::paths::server_dir`]). The kernel drops the lock when the process dies, so
//! a crashed watcher never blocks the next one.

use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::paths::FileLock;

/// A held lock; released on drop.
pub type ServerLock = FileLock;

/// The lock file for the server at `socket_path`, in the state folder `state`.
pub fn lock_path(state: &Path, socket_path: &str) -> PathBuf {
    crate::paths::server_dir(state, socket_path).join("watch.lock")
}

/// The lock a watcher of an agentpane from before per-server folders holds for the server at
/// `socket_path`: `watch<socket path>.lock` at the top of the state folder `state`. Such a
/// watcher may still run after an upgrade; it serves the server as well.
pub fn legacy_lock_path(state: &Path, socket_path: &str) -> PathBuf {
    let name: String = socket_path
        .chars()
        .map(|c| match c {
            'a'..='z' | 'A'..='Z' | '0'..='9' | '-' | '.' => c,
            _ => '_',
        })
        .collect();
    state.join(format!("watch{name}.lock"))
}

/// Takes the lock, or `Ok(None)` when another watcher holds it. The server's folder must
/// exist (an error otherwise: no watcher made it, so none runs).
pub fn try_lock(state: &Path, socket_path: &str) -> Result<Option<ServerLock>> {
    FileLock::try_acquire(&lock_path(state, socket_path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_lock_on_the_same_server_is_refused_until_released() {
        let dir = tempfile::tempdir().unwrap();
        for s in ["/tmp/tmux-0/default", "/tmp/tmux-0/other"] {
            crate::paths::ensure_private_dir(&crate::paths::server_dir(dir.path(), s)).unwrap();
        }
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
    fn the_old_lock_keeps_its_old_name() {
        let p = legacy_lock_path(Path::new("/s"), "/tmp/tmux-1000/my sock");
        assert_eq!(p, Path::new("/s/watch_tmp_tmux-1000_my_sock.lock"));
    }

    #[test]
    fn the_lock_lives_in_the_servers_folder() {
        let p = lock_path(Path::new("/s"), "/tmp/tmux-1000/my sock");
        assert_eq!(
            p,
            Path::new("/s/servers/tmp+tmux-1000+my%20sock/watch.lock")
        );
    }
}
