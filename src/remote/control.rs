//! Where ssh's shared connections keep their sockets (docs/design.md#remote-hosts). A Unix
//! socket's path has room for 104 bytes on the BSDs and macOS (108 on Linux), and ssh binds
//! its master at the path plus `.` and 16 random characters before renaming it, so a folder
//! under a long home (`/home/first.last@emea.corp.example.com/.local/state/…`) made every
//! host unreachable while `ssh host` by hand worked. The socket is a short name (16 hex of
//! a hash of the ssh config and the host, as ssh's own `%C` hashes the host, port and user)
//! in the first of these folders that keeps the whole path short enough: the user's private
//! runtime folder (`$XDG_RUNTIME_DIR/agentpane`), `$TMPDIR/agentpane-UID`,
//! `/tmp/agentpane-UID`. A folder in a shared tmp is made 0700 and used only while it is the
//! user's own and 0700.

use std::hash::Hasher as _;
use std::os::unix::fs::{DirBuilderExt as _, MetadataExt as _};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context as _, Result};

use super::Host;

/// Longest socket path: 104 bytes less the NUL and the 17 bytes ssh appends while binding.
pub const MAX_PATH: usize = 104 - 1 - 17;
/// Length of a socket's name ([`socket_name`]).
const NAME_LEN: usize = 16;

/// The folder for the sockets, and whether it lies in a shared tmp folder (then it must be
/// made and checked as [`ensure_own_private`] does).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Folder {
    pub path: PathBuf,
    pub shared_tmp: bool,
}

/// The first folder whose sockets' paths fit [`MAX_PATH`]: `$XDG_RUNTIME_DIR/agentpane`,
/// `$TMPDIR/agentpane-UID`, else `/tmp/agentpane-UID` (which always fits).
pub fn choose(runtime: Option<&Path>, tmpdir: Option<&Path>, uid: u32) -> Folder {
    let fits = |p: &Path| p.as_os_str().len() + 1 + NAME_LEN <= MAX_PATH;
    let own = format!("agentpane-{uid}");
    if let Some(dir) = runtime.map(|r| r.join("agentpane")).filter(|d| fits(d)) {
        return Folder {
            path: dir,
            shared_tmp: false,
        };
    }
    let path = tmpdir
        .map(|t| t.join(&own))
        .filter(|d| fits(d))
        .unwrap_or_else(|| Path::new("/tmp").join(&own));
    Folder {
        path,
        shared_tmp: true,
    }
}

/// The socket's name for `host` reached through the ssh config `config`: the same for every
/// agentpane of this user that reaches that host alike, 16 hex characters.
pub fn socket_name(config: Option<&Path>, host: &Host) -> String {
    let mut h = fnv::FnvHasher::default();
    if let Some(c) = config {
        h.write(c.as_os_str().as_encoded_bytes());
    }
    h.write(&[0]);
    h.write(host.as_str().as_bytes());
    format!("{:016x}", h.finish())
}

/// Makes `dir` (in a tmp folder others write to) as a 0700 folder of `uid`'s, or checks the
/// one there: it must be a real folder (no symlink), owned by `uid`, mode 0700; else an error
/// saying what to remove.
pub fn ensure_own_private(dir: &Path, uid: u32) -> Result<()> {
    if let Err(e) = std::fs::DirBuilder::new().mode(0o700).create(dir) {
        if e.kind() != std::io::ErrorKind::AlreadyExists {
            return Err(e).with_context(|| format!("cannot create {}", dir.display()));
        }
    }
    let meta =
        std::fs::symlink_metadata(dir).with_context(|| format!("cannot read {}", dir.display()))?;
    let mode = meta.mode() & 0o7777;
    if !meta.file_type().is_dir() || meta.uid() != uid || mode != 0o700 {
        bail!(
            "refusing {} for ssh's sockets: it is not a folder of yours with mode 0700 \
             (owner {}, mode {mode:o}); remove it",
            dir.display(),
            meta.uid()
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_home_without_a_runtime_folder_gets_a_short_socket_in_tmp() {
        let long = Path::new(
            "/home/firstname.lastname@emea.corp.example.com/.local/state/agentpane/xdg-runtime",
        );
        let host = Host::parse("devbox").unwrap();
        // The runtime folder while it is short enough.
        let f = choose(Some(Path::new("/run/user/1000")), None, 1000);
        assert_eq!(f.path, Path::new("/run/user/1000/agentpane"));
        assert!(!f.shared_tmp);
        // None, or one too long: `$TMPDIR`, else `/tmp`.
        for runtime in [None, Some(long)] {
            let f = choose(runtime, Some(Path::new("/var/tmp")), 1000);
            assert_eq!(f.path, Path::new("/var/tmp/agentpane-1000"));
            assert!(f.shared_tmp);
            let f = choose(runtime, Some(long), 4_294_967_294);
            assert_eq!(f.path, Path::new("/tmp/agentpane-4294967294"));
            let socket = f.path.join(socket_name(Some(long), &host));
            assert!(socket.as_os_str().len() <= MAX_PATH, "{socket:?}");
        }
    }

    #[test]
    fn each_config_and_host_has_a_socket_of_its_own() {
        let (a, b) = (Host::parse("devbox").unwrap(), Host::parse("gpu1").unwrap());
        let cfg = Path::new("/x/ssh_config");
        let name = socket_name(Some(cfg), &a);
        assert_eq!(name.len(), NAME_LEN);
        assert!(name.bytes().all(|c| c.is_ascii_hexdigit()));
        assert_eq!(name, socket_name(Some(cfg), &a));
        assert_ne!(name, socket_name(Some(cfg), &b));
        assert_ne!(name, socket_name(None, &a));
    }

    #[test]
    fn a_shared_tmp_folder_that_is_not_ours_and_private_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let me = crate::paths::euid();
        let dir = tmp.path().join("agentpane-x");
        ensure_own_private(&dir, me).unwrap();
        assert_eq!(std::fs::metadata(&dir).unwrap().mode() & 0o777, 0o700);
        ensure_own_private(&dir, me).expect("ours, 0700: used again");
        // Another user's folder.
        let err = ensure_own_private(&dir, me + 1).unwrap_err().to_string();
        assert!(err.contains("not a folder of yours"), "{err}");
        // Ours but open to others.
        let open = tmp.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        assert!(ensure_own_private(&open, me).is_err());
        // A symlink to a private folder of ours.
        let link = tmp.path().join("link");
        std::os::unix::fs::symlink(&dir, &link).unwrap();
        assert!(ensure_own_private(&link, me).is_err());
    }
}
