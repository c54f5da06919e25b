//! The page's secret: 32 random bytes, base64url, in `<state folder>/web/secret` (0600, folder
//! 0700). One per user, shared by all their tmux servers' pages: one URL to keep, and one
//! `--new-secret` revokes them all. A running server reads the file again on every refused
//! token and every few seconds, so a replaced secret ends its open pages.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context as _, Result};
use base64::Engine as _;

/// The secret file in the state folder `dir`.
pub fn path(dir: &Path) -> PathBuf {
    dir.join("web").join("secret")
}

/// The secret in `dir`, made on first use; with `new`, replaced by a fresh one.
pub fn load_or_create(dir: &Path, new: bool) -> Result<String> {
    let file = path(dir);
    if !new {
        if let Some(s) = read(dir) {
            return Ok(s);
        }
    }
    crate::paths::ensure_private_dir(file.parent().expect("web/secret has a parent"))?;
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)
        .map_err(|e| anyhow::anyhow!("no randomness for the secret: {e}"))?;
    let secret = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes);
    crate::paths::write_atomic(&file, secret.as_bytes())
        .with_context(|| format!("cannot write {}", file.display()))?;
    if read(dir).as_deref() != Some(secret.as_str()) {
        bail!("{} did not keep the new secret", file.display());
    }
    Ok(secret)
}

/// The secret in `dir` when there is a trusted one (the user's own file, not a symlink, not
/// writable by others) of the right shape.
pub fn read(dir: &Path) -> Option<String> {
    let data = crate::paths::read_trusted(&path(dir)).ok()?;
    let s = String::from_utf8(data).ok()?.trim().to_string();
    (s.len() >= 43
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'))
    .then_some(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn the_secret_is_made_once_private_and_replaced_on_request() {
        let dir = tempfile::tempdir().unwrap();
        let a = load_or_create(dir.path(), false).unwrap();
        assert_eq!(a.len(), 43, "32 bytes in base64url");
        assert_eq!(load_or_create(dir.path(), false).unwrap(), a, "kept");
        let mode = std::fs::metadata(path(dir.path()))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        let folder = std::fs::metadata(dir.path().join("web"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(folder & 0o777, 0o700);
        let b = load_or_create(dir.path(), true).unwrap();
        assert_ne!(a, b, "--new-secret");
        assert_eq!(read(dir.path()).as_deref(), Some(b.as_str()));
    }
}
