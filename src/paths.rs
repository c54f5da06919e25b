//! Where agentpane keeps its state, and how it writes there: private folders (0700, symlinks
//! refused), private files (0600), atomic replacement with fsync so a crash never leaves a
//! half-written queue, journal or alert memory.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

/// `$AGENTPANE_STATE_DIR`, else `$XDG_STATE_HOME/agentpane`, else `~/.local/state/agentpane`.
pub fn state_dir() -> PathBuf {
    let var = |k: &str| std::env::var_os(k).map(PathBuf::from);
    if let Some(dir) = state_dir_override(var) {
        return dir;
    }
    directories::BaseDirs::new()
        .and_then(|b| b.state_dir().map(Path::to_path_buf))
        .map(|d| d.join("agentpane"))
        .unwrap_or_else(|| home_dir().join(".local/state/agentpane"))
}

/// The state folder a process uses (e.g. an agent's, where its `agentpane hook` writes), `var`
/// reading one variable of its environment: the same rule as [`state_dir`]. `None` without a
/// `HOME`.
pub fn state_dir_in(var: impl Fn(&str) -> Option<PathBuf>) -> Option<PathBuf> {
    state_dir_override(&var).or_else(|| {
        var("HOME")
            .filter(|h| !h.as_os_str().is_empty())
            .map(|h| h.join(".local/state/agentpane"))
    })
}

/// [`state_dir`] when agentpane may act on what it holds: missing (the first writer creates it,
/// 0700) or a real folder of the user's that others cannot write to ([`distrust`]). An error
/// that says why and how to fix it otherwise.
pub fn trusted_state_dir() -> Result<PathBuf> {
    let dir = state_dir();
    match fs::symlink_metadata(&dir) {
        Err(_) => Ok(dir),
        Ok(meta) if meta.file_type().is_symlink() => bail!(
            "state folder {} is a symlink, which agentpane refuses: replace it by a real folder \
             (`mkdir -m 700`)",
            dir.display()
        ),
        Ok(meta) if !meta.is_dir() => bail!("state folder {} is not a folder", dir.display()),
        Ok(meta) => match distrust(&dir, &meta) {
            Some(why) => bail!("state {why}, or set AGENTPANE_STATE_DIR to a folder of yours"),
            None => Ok(dir),
        },
    }
}

/// `$AGENTPANE_STATE_DIR`, else `$XDG_STATE_HOME/agentpane`, read through `var`.
fn state_dir_override(var: impl Fn(&str) -> Option<PathBuf>) -> Option<PathBuf> {
    let set = |k: &str| var(k).filter(|v| !v.as_os_str().is_empty());
    set("AGENTPANE_STATE_DIR").or_else(|| set("XDG_STATE_HOME").map(|d| d.join("agentpane")))
}

/// The folder in the state folder `state` for what belongs to the tmux server at
/// `socket_path` (`#{socket_path}`): its watcher's snapshot, lock and log, its alert and
/// observation memories. Pane ids such as `%1` repeat across servers, so nothing of one server
/// may be read as another's. `servers/<name>`, the name the socket path with `/` written `+`
/// and any other byte but `[A-Za-z0-9._-]` (a leading `.` too) as `%XX`: readable, and two
/// paths never share a folder. Pure: the caller creates it ([`ensure_private_dir`]).
pub fn server_dir(state: &Path, socket_path: &str) -> PathBuf {
    let mut name = String::new();
    for (i, b) in socket_path.trim_start_matches('/').bytes().enumerate() {
        match b {
            b'/' => name.push('+'),
            b'.' if i == 0 => name.push_str("%2E"),
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'.' | b'_' | b'-' => name.push(b as char),
            _ => name.push_str(&format!("%{b:02X}")),
        }
    }
    if name.is_empty() {
        name.push('%');
    }
    state.join("servers").join(name)
}

/// `$XDG_CONFIG_HOME/agentpane` (or the platform equivalent).
pub fn config_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("XDG_CONFIG_HOME").filter(|v| !v.is_empty()) {
        return PathBuf::from(dir).join("agentpane");
    }
    directories::BaseDirs::new()
        .map(|b| b.config_dir().join("agentpane"))
        .unwrap_or_else(|| home_dir().join(".config/agentpane"))
}

/// The user's home directory.
pub fn home_dir() -> PathBuf {
    directories::BaseDirs::new()
        .map(|b| b.home_dir().to_path_buf())
        .or_else(|| std::env::var_os("HOME").map(PathBuf::from))
        .unwrap_or_else(|| PathBuf::from("/"))
}

/// Every `*.json` file in `dir` that reads as a `T`, in `order`. A file that cannot be read or
/// decoded, or that is not [trusted](distrust), is skipped and left in place (a half-written one never shows: records are written
/// with [`write_atomic`]). The queue, the outbox and the relay registrations are such folders.
pub fn json_records<T: serde::de::DeserializeOwned>(
    dir: &Path,
    order: impl FnMut(&T, &T) -> std::cmp::Ordering,
) -> std::io::Result<Vec<T>> {
    let mut out: Vec<T> = fs::read_dir(dir)?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .filter_map(|p| serde_json::from_slice(&read_trusted(&p).ok()?).ok())
        .collect();
    out.sort_by(order);
    Ok(out)
}

/// Creates `dir` (and parents) as 0700; refuses a symlink at `dir` itself, and an existing
/// `dir` that is not [trusted](distrust).
pub fn ensure_private_dir(dir: &Path) -> Result<()> {
    match fs::symlink_metadata(dir) {
        Ok(meta) if meta.file_type().is_symlink() => {
            bail!("refusing to use {}: it is a symlink", dir.display())
        }
        Ok(meta) if meta.is_dir() => match distrust(dir, &meta) {
            Some(why) => bail!("{why}"),
            None => Ok(()),
        },
        Ok(_) => bail!("{} exists and is not a folder", dir.display()),
        Err(_) => fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .with_context(|| format!("cannot create {}", dir.display())),
    }
}

/// Why agentpane must not act on a folder or file: someone else could have put a queued
/// message or a record there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Distrust {
    /// Another user (this uid) owns it.
    Owner(u32),
    /// Others can write to it (this mode).
    Writable(u32),
}

impl Distrust {
    /// The rule OpenSSH applies to `~/.ssh`: trusted when owned by `me` and not writable by
    /// group or others. Pure.
    pub fn of(uid: u32, mode: u32, me: u32) -> Option<Distrust> {
        if uid != me {
            return Some(Distrust::Owner(uid));
        }
        (mode & 0o022 != 0).then_some(Distrust::Writable(mode & 0o7777))
    }

    /// What is wrong with `path`, e.g. `is writable by others (mode 0777)`.
    pub fn problem(&self) -> String {
        match self {
            Distrust::Owner(uid) => format!("is owned by uid {uid}, not you (uid {})", euid()),
            Distrust::Writable(mode) => format!("is writable by others (mode {mode:04o})"),
        }
    }

    /// What the user does about it.
    pub fn fix(&self, path: &Path) -> String {
        match self {
            Distrust::Owner(_) => {
                format!("move {} away (agentpane makes a new one)", path.display())
            }
            Distrust::Writable(_) => format!("run `chmod go-w {}`", path.display()),
        }
    }
}

/// Why agentpane must not act on the folder or file at `path` (`meta`, read without following
/// a symlink), as one message with the fix; `None` when it is the user's own and only theirs to
/// change ([`Distrust::of`]).
pub fn distrust(path: &Path, meta: &fs::Metadata) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let why = Distrust::of(meta.uid(), meta.mode(), euid())?;
    let what = if meta.is_dir() { "folder" } else { "file" };
    Some(format!(
        "{what} {} {}: agentpane does not act on what others can change; {}",
        path.display(),
        why.problem(),
        why.fix(path)
    ))
}

/// The [`Distrust`] of the folder `dir` leads to (through a symlink too), for a reader that
/// must not fail: `None` when it is the user's own, missing, or not a folder.
pub fn distrusted_folder(dir: &Path) -> Option<Distrust> {
    use std::os::unix::fs::MetadataExt;
    let meta = fs::metadata(dir).ok().filter(fs::Metadata::is_dir)?;
    Distrust::of(meta.uid(), meta.mode(), euid())
}

/// Reads the file at `path` when it is [trusted](distrust) and not a symlink; an error that
/// says why otherwise.
pub fn read_trusted(path: &Path) -> std::io::Result<Vec<u8>> {
    let mut f = open_trusted(path)?;
    let mut data = Vec::new();
    std::io::Read::read_to_end(&mut f, &mut data)?;
    Ok(data)
}

/// Opens the file at `path` for reading when it is [trusted](distrust) and not a symlink.
pub fn open_trusted(path: &Path) -> std::io::Result<File> {
    let f = OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
        .open(path)?;
    match distrust(path, &f.metadata()?) {
        Some(why) => Err(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            why,
        )),
        None => Ok(f),
    }
}

/// The effective uid of this process: who owns what agentpane creates.
pub fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// Replaces `path` with `data` atomically: a private temp file in the same folder, fsync,
/// rename, fsync of the folder. Readers see the old or the new content, never a mix.
pub fn write_atomic(path: &Path, data: &[u8]) -> Result<()> {
    write_via_temp(path, data, true)
}

/// [`write_atomic`] without waiting for the disk: for a file rebuilt whole at every change
/// (the watcher's snapshot), which a crash may leave one version behind but never torn. The
/// two fsyncs were most of what a watcher's wake cost when a pane's state kept changing.
pub fn replace(path: &Path, data: &[u8]) -> Result<()> {
    write_via_temp(path, data, false)
}

fn write_via_temp(path: &Path, data: &[u8], durable: bool) -> Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .with_context(|| format!("{} has no file name", path.display()))?;
    let tmp = dir.join(format!(
        ".{}.{}.{}.tmp",
        name.to_string_lossy(),
        std::process::id(),
        unique_suffix()
    ));
    let result = (|| -> Result<()> {
        let mut f = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&tmp)
            .with_context(|| format!("cannot create {}", tmp.display()))?;
        f.write_all(data)
            .with_context(|| format!("cannot write {}", tmp.display()))?;
        if durable {
            f.sync_all()
                .with_context(|| format!("cannot sync {}", tmp.display()))?;
        }
        fs::rename(&tmp, path).with_context(|| format!("cannot replace {}", path.display()))?;
        if durable {
            if let Ok(d) = File::open(dir) {
                let _ = d.sync_all();
            }
        }
        Ok(())
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Creates `path` exclusively (O_EXCL) as 0600 with `data`, fsynced. Fails if it exists.
/// On a write failure the partial file is removed.
pub fn create_exclusive(path: &Path, data: &[u8]) -> std::io::Result<()> {
    let mut f = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)?;
    let written = f.write_all(data).and_then(|_| f.sync_all());
    if let Err(e) = written {
        drop(f);
        let _ = fs::remove_file(path);
        return Err(e);
    }
    Ok(())
}

/// Sets 0600 on an existing file.
pub fn make_private(path: &Path) -> Result<()> {
    fs::set_permissions(path, fs::Permissions::from_mode(0o600))
        .with_context(|| format!("cannot set permissions on {}", path.display()))
}

fn unique_suffix() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos() as u64)
        .unwrap_or(0);
    nanos ^ (COUNTER.fetch_add(1, Ordering::Relaxed) << 32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_replaces_and_is_private() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("q.json");
        write_atomic(&p, b"one").unwrap();
        write_atomic(&p, b"two").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"two");
        let mode = fs::metadata(&p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let leftovers = fs::read_dir(dir.path()).unwrap().count();
        assert_eq!(leftovers, 1, "no temp files left behind");
    }

    #[test]
    fn private_dir_refuses_symlinks() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real");
        fs::create_dir(&real).unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        assert!(ensure_private_dir(&link).is_err());
        let fresh = dir.path().join("a/b");
        ensure_private_dir(&fresh).unwrap();
        let mode = fs::metadata(&fresh).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
    }

    #[test]
    fn a_folder_or_file_others_control_is_refused_with_the_fix() {
        let dir = tempfile::tempdir().unwrap();
        let open = dir.path().join("open");
        fs::create_dir(&open).unwrap();
        fs::set_permissions(&open, fs::Permissions::from_mode(0o777)).unwrap();
        let err = format!("{:#}", ensure_private_dir(&open).unwrap_err());
        assert!(err.contains("writable by others (mode 0777)"), "{err}");
        assert!(
            err.contains(&format!("chmod go-w {}", open.display())),
            "{err}"
        );
        fs::set_permissions(&open, fs::Permissions::from_mode(0o755)).unwrap();
        ensure_private_dir(&open).unwrap();
        let file = open.join("q.json");
        fs::write(&file, b"{}").unwrap();
        fs::set_permissions(&file, fs::Permissions::from_mode(0o664)).unwrap();
        assert!(read_trusted(&file).is_err());
        fs::set_permissions(&file, fs::Permissions::from_mode(0o644)).unwrap();
        assert_eq!(read_trusted(&file).unwrap(), b"{}");
        // Tests run as root: another user is simulated by giving the folder to nobody.
        std::os::unix::fs::chown(&file, Some(65534), None).unwrap();
        assert!(read_trusted(&file).is_err());
        std::os::unix::fs::chown(&open, Some(65534), None).unwrap();
        let err = format!("{:#}", ensure_private_dir(&open).unwrap_err());
        let want = format!("is owned by uid 65534, not you (uid {})", euid());
        assert!(err.contains(&want), "{err}");
    }

    #[test]
    fn each_tmux_server_has_its_own_readable_folder() {
        let s = Path::new("/st");
        let default = server_dir(s, "/tmp/tmux-1000/default");
        assert_eq!(default, Path::new("/st/servers/tmp+tmux-1000+default"));
        let work = server_dir(s, "/tmp/tmux-1000/work");
        assert_ne!(default, work);
        // Names that a plain `/` → `_` would join stay apart, and nothing leaves `servers/`.
        assert_ne!(server_dir(s, "/tmp/a_b"), server_dir(s, "/tmp/a/b"));
        assert_ne!(server_dir(s, "/tmp/a+b"), server_dir(s, "/tmp/a/b"));
        assert_eq!(
            server_dir(s, "/tmp/my sock%"),
            Path::new("/st/servers/tmp+my%20sock%25")
        );
        for odd in ["/..", "..", "/", "", "/tmp/../x"] {
            let d = server_dir(s, odd);
            assert_eq!(d.parent(), Some(Path::new("/st/servers")), "{odd:?}: {d:?}");
            let name = d.file_name().unwrap().to_str().unwrap();
            assert!(
                name != "." && name != ".." && !name.contains('/'),
                "{odd:?}"
            );
        }
    }

    #[test]
    fn exclusive_create_refuses_existing() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("m.md");
        create_exclusive(&p, b"x").unwrap();
        assert!(create_exclusive(&p, b"y").is_err());
        assert_eq!(fs::read(&p).unwrap(), b"x");
    }
}

/// An exclusive advisory lock (`flock(2)`) on a file, released on drop — and by the kernel when
/// the process dies, so a crash never leaves a stale lock behind.
#[derive(Debug)]
pub struct FileLock {
    _file: File,
    pub path: PathBuf,
}

impl FileLock {
    /// Waits for the lock.
    pub fn acquire(path: &Path) -> Result<FileLock> {
        let file = lock_file(path)?;
        rustix::fs::flock(&file, rustix::fs::FlockOperation::LockExclusive)
            .with_context(|| format!("cannot lock {}", path.display()))?;
        Ok(FileLock {
            _file: file,
            path: path.to_path_buf(),
        })
    }

    /// Takes the lock, or `Ok(None)` when another process holds it.
    pub fn try_acquire(path: &Path) -> Result<Option<FileLock>> {
        let file = lock_file(path)?;
        match rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => Ok(Some(FileLock {
                _file: file,
                path: path.to_path_buf(),
            })),
            Err(rustix::io::Errno::WOULDBLOCK) => Ok(None),
            Err(e) => Err(e).with_context(|| format!("cannot lock {}", path.display())),
        }
    }

    /// Waits at most `limit` for the lock; `Ok(None)` when it stayed taken.
    pub fn acquire_within(path: &Path, limit: std::time::Duration) -> Result<Option<FileLock>> {
        let until = std::time::Instant::now() + limit;
        loop {
            if let Some(lock) = FileLock::try_acquire(path)? {
                return Ok(Some(lock));
            }
            if std::time::Instant::now() >= until {
                return Ok(None);
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
    }
}

/// The pid of the process holding a `flock` on the file at `path`, from `/proc/locks`
/// (read without taking the lock, so a watcher starting at that moment is never refused).
pub fn lock_holder(path: &Path) -> Option<u32> {
    use std::os::unix::fs::MetadataExt;
    let meta = fs::metadata(path).ok()?;
    let locks = fs::read_to_string("/proc/locks").ok()?;
    holder_in_proc_locks(&locks, meta.dev(), meta.ino())
}

/// The `FLOCK` line of `/proc/locks` for device `dev`, inode `ino` (`1: FLOCK ADVISORY WRITE
/// 4242 08:01:1234 0 EOF`; waiters, marked `->`, hold nothing).
fn holder_in_proc_locks(locks: &str, dev: u64, ino: u64) -> Option<u32> {
    let want = format!(
        "{:02x}:{:02x}:{ino}",
        rustix::fs::major(dev),
        rustix::fs::minor(dev)
    );
    locks.lines().find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        match fields.as_slice() {
            [_, "FLOCK", _, _, pid, id, ..] if *id == want => pid.parse().ok(),
            _ => None,
        }
    })
}

/// The lock file itself: created 0600, never through a symlink.
fn lock_file(path: &Path) -> Result<File> {
    OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .mode(0o600)
        .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
        .open(path)
        .with_context(|| format!("cannot open the lock {}", path.display()))
}

#[cfg(test)]
mod lock_tests {
    use super::*;

    #[test]
    fn the_holder_of_a_lock_is_read_from_proc_locks() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.lock");
        let held = FileLock::acquire(&p).unwrap();
        assert_eq!(lock_holder(&p), Some(std::process::id()));
        drop(held);
        assert_eq!(lock_holder(&p), None);
    }

    #[test]
    fn proc_locks_lines_match_device_and_inode_and_skip_waiters() {
        let locks = "1: POSIX  ADVISORY  WRITE 11 08:01:77 0 EOF\n\
                     2: FLOCK  ADVISORY  WRITE 22 08:01:77 0 EOF\n\
                     2: -> FLOCK  ADVISORY  WRITE 33 08:01:77 0 EOF\n";
        let dev = rustix::fs::makedev(8, 1);
        assert_eq!(holder_in_proc_locks(locks, dev, 77), Some(22));
        assert_eq!(holder_in_proc_locks(locks, dev, 78), None);
        assert_eq!(
            holder_in_proc_locks(locks, rustix::fs::makedev(8, 2), 77),
            None
        );
    }

    #[test]
    fn another_process_state_folder_follows_its_environment() {
        let env = |kv: &'static [(&str, &str)]| {
            move |k: &str| {
                kv.iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| PathBuf::from(v))
            }
        };
        assert_eq!(
            state_dir_in(env(&[("HOME", "/h"), ("AGENTPANE_STATE_DIR", "/s")])),
            Some(PathBuf::from("/s"))
        );
        assert_eq!(
            state_dir_in(env(&[("HOME", "/h"), ("XDG_STATE_HOME", "/x")])),
            Some(PathBuf::from("/x/agentpane"))
        );
        assert_eq!(
            state_dir_in(env(&[("HOME", "/h"), ("XDG_STATE_HOME", "")])),
            Some(PathBuf::from("/h/.local/state/agentpane"))
        );
        assert_eq!(state_dir_in(env(&[])), None);
    }

    #[test]
    fn a_held_lock_is_refused_until_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.lock");
        let first = FileLock::acquire(&p).unwrap();
        assert!(FileLock::try_acquire(&p).unwrap().is_none());
        let waited = FileLock::acquire_within(&p, std::time::Duration::from_millis(20)).unwrap();
        assert!(waited.is_none());
        drop(first);
        assert!(FileLock::try_acquire(&p).unwrap().is_some());
    }
}
