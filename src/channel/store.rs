//! The channel on disk: `channels/<id>/` (0700) holding `channel.json`, `PROTOCOL.md`, a
//! `messages/` folder with one 0600 file per message, `cursors/<member>` (each member's last
//! read message id) and a `.lock` that serialises senders so the rules see a settled history.
//!
//! A message is written to a hidden temp file (O_EXCL, 0600, fsync), then hard-linked to its
//! final name — `link(2)` never replaces an existing file, so a name collision is detected and
//! retried one millisecond later, and a reader never sees a half-written message.

use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions};
use std::io::{ErrorKind, Read};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

use super::message::{self, Header, Kind, Message, Recipient};
use super::ChannelError;
use crate::events::Time;
use crate::paths;
use crate::paths::FileLock;

/// Members a channel holds at most.
pub const MAX_MEMBERS: usize = 5;
/// Message files bigger than this are skipped when reading.
const MAX_FILE_BYTES: u64 = 1024 * 1024;
/// Temp files older than this were left by a crashed sender and are removed.
const STALE_TEMP: Duration = Duration::from_secs(3600);
/// The rules every channel folder carries, for the agents to read.
pub const PROTOCOL: &str = include_str!("protocol.md");

/// `channel.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChannelInfo {
    pub id: String,
    pub owner: String,
    pub members: Vec<String>,
    pub max_members: usize,
    pub created: Time,
    /// The tmux pane (`%3`) each member was in when it created or joined the channel, so the
    /// watcher can show unread counts on that pane and deliver there.
    #[serde(default)]
    pub panes: BTreeMap<String, String>,
    /// The tmux server (socket path) of each member's pane: pane ids repeat on every server,
    /// so only that server's watcher shows the count or delivers. Members recorded before
    /// servers were have none, and every server serves them as before.
    #[serde(default)]
    pub servers: BTreeMap<String, String>,
}

impl ChannelInfo {
    /// Records that `member` runs at `seat` (its pane, and its server when known).
    pub fn seat(&mut self, member: &str, seat: &Seat) {
        self.panes.insert(member.to_string(), seat.pane.clone());
        match &seat.server {
            Some(s) => self.servers.insert(member.to_string(), s.clone()),
            None => self.servers.remove(member),
        };
    }

    /// True when `member`'s pane belongs to the server at `socket_path` (or its server is
    /// unknown: an old record).
    pub fn on_server(&self, member: &str, socket_path: &str) -> bool {
        self.servers.get(member).map_or(true, |s| s == socket_path)
    }
}

/// Where a member runs: its tmux pane (`%3`) and, when known, that pane's server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seat {
    pub pane: String,
    /// The server's socket path (`#{socket_path}`, the first field of `$TMUX`).
    pub server: Option<String>,
}

/// Messages read from the folder, plus what was skipped and why.
#[derive(Debug, Default)]
pub struct Listing {
    /// Well-formed messages, in id (= time) order.
    pub messages: Vec<Message>,
    /// One line per skipped file.
    pub warnings: Vec<String>,
    /// The newest message-like file name seen (well-formed or not), for cursors.
    pub newest: Option<String>,
}

/// A message about to be written; the id and time are chosen by [`ChannelDir::write_message`].
#[derive(Debug, Clone)]
pub struct NewMessage {
    /// `None`: the message starts its own thread.
    pub thread: Option<String>,
    pub kind: Kind,
    pub from: String,
    pub to: Recipient,
    pub round: u32,
    pub body: String,
}

/// Where all channels live: `<state dir>/channels`.
pub fn channels_root() -> PathBuf {
    paths::state_dir().join("channels")
}

/// Channel ids: lowercase hex, 4–32 characters (they become folder names).
pub fn valid_channel_id(id: &str) -> bool {
    (4..=32).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// An open channel folder.
#[derive(Debug, Clone)]
pub struct ChannelDir {
    pub id: String,
    pub dir: PathBuf,
}

/// The channel's lock, held while a send checks the rules and writes; released on drop.
pub type Lock = FileLock;

impl ChannelDir {
    /// Creates a new channel owned by `owner`, with a fresh random id.
    pub fn create(
        owner: &str,
        seat: Option<&Seat>,
        now: Time,
    ) -> Result<(ChannelDir, ChannelInfo)> {
        let root = channels_root();
        paths::ensure_private_dir(&root)?;
        for _ in 0..16 {
            let id = random_id()?;
            let dir = root.join(&id);
            match fs::DirBuilder::new().create(&dir) {
                Ok(()) => {}
                Err(e) if e.kind() == ErrorKind::AlreadyExists => continue,
                Err(e) => {
                    return Err(e).with_context(|| format!("cannot create {}", dir.display()))
                }
            }
            fs::set_permissions(&dir, fs::Permissions::from_mode(0o700))
                .with_context(|| format!("cannot make {} private", dir.display()))?;
            let ch = ChannelDir {
                id: id.clone(),
                dir,
            };
            paths::ensure_private_dir(&ch.messages_dir())?;
            paths::ensure_private_dir(&ch.cursors_dir())?;
            let mut info = ChannelInfo {
                id,
                owner: owner.to_string(),
                members: vec![owner.to_string()],
                max_members: MAX_MEMBERS,
                created: now,
                panes: BTreeMap::new(),
                servers: BTreeMap::new(),
            };
            if let Some(seat) = seat {
                info.seat(owner, seat);
            }
            paths::write_atomic(&ch.dir.join("PROTOCOL.md"), PROTOCOL.as_bytes())?;
            ch.save_info(&info)?;
            return Ok((ch, info));
        }
        bail!("could not find a free channel id in {}", root.display())
    }

    /// Opens an existing channel; unknown ids and symlinked folders are refused.
    pub fn open(id: &str) -> Result<ChannelDir> {
        let root = channels_root();
        let dir = root.join(id);
        if !valid_channel_id(id) {
            return Err(ChannelError::UnknownChannel {
                id: id.to_string(),
                dir,
            }
            .into());
        }
        for d in [&root, &dir] {
            match fs::symlink_metadata(d) {
                Ok(m) if m.file_type().is_symlink() => {
                    bail!("refusing to use {}: it is a symlink", d.display())
                }
                Ok(m) if m.is_dir() => {}
                _ => {
                    let dir = dir.clone();
                    return Err(ChannelError::UnknownChannel {
                        id: id.to_string(),
                        dir,
                    }
                    .into());
                }
            }
        }
        if !dir.join("channel.json").is_file() {
            return Err(ChannelError::UnknownChannel {
                id: id.to_string(),
                dir,
            }
            .into());
        }
        let ch = ChannelDir {
            id: id.to_string(),
            dir,
        };
        paths::ensure_private_dir(&ch.messages_dir())?;
        paths::ensure_private_dir(&ch.cursors_dir())?;
        Ok(ch)
    }

    /// `<channel>/messages`.
    pub fn messages_dir(&self) -> PathBuf {
        self.dir.join("messages")
    }

    fn cursors_dir(&self) -> PathBuf {
        self.dir.join("cursors")
    }

    /// Takes the channel's exclusive lock (blocking). Senders hold it while they check the rules
    /// and write, so two sends never judge the same history.
    pub fn lock(&self) -> Result<Lock> {
        FileLock::acquire(&self.dir.join(".lock"))
    }

    /// Reads `channel.json`.
    pub fn info(&self) -> Result<ChannelInfo> {
        let path = self.dir.join("channel.json");
        let text = read_small(&path, MAX_FILE_BYTES)?;
        serde_json::from_str(&text)
            .with_context(|| format!("{} is not a channel file", path.display()))
    }

    /// Replaces `channel.json` atomically.
    pub fn save_info(&self, info: &ChannelInfo) -> Result<()> {
        let mut json = serde_json::to_vec_pretty(info)?;
        json.push(b'\n');
        paths::write_atomic(&self.dir.join("channel.json"), &json)
    }

    /// The ids (file stems) of all message files, sorted; odd names become warnings, and temp
    /// files left by crashed senders are removed.
    fn message_ids(&self) -> Result<(Vec<String>, Vec<String>)> {
        let dir = self.messages_dir();
        let mut ids = Vec::new();
        let mut warnings = Vec::new();
        let entries =
            fs::read_dir(&dir).with_context(|| format!("cannot read {}", dir.display()))?;
        for entry in entries {
            let entry = entry.with_context(|| format!("cannot read {}", dir.display()))?;
            let path = entry.path();
            let Some(name) = entry.file_name().to_str().map(str::to_string) else {
                warnings.push(format!(
                    "skipping {}: the name is not UTF-8",
                    path.display()
                ));
                continue;
            };
            if name.starts_with('.') {
                remove_if_stale(&path);
                continue;
            }
            match name
                .strip_suffix(".md")
                .map(|stem| (stem, message::parse_id(stem)))
            {
                Some((stem, Ok(_))) => ids.push(stem.to_string()),
                _ => warnings.push(format!(
                    "skipping {}: not a message file name",
                    path.display()
                )),
            }
        }
        ids.sort();
        Ok((ids, warnings))
    }

    /// Reads the messages whose id sorts after `after` (all when `None`). Malformed files are
    /// skipped with a warning.
    pub fn list(&self, after: Option<&str>) -> Result<Listing> {
        let (ids, mut warnings) = self.message_ids()?;
        let mut listing = Listing::default();
        for id in ids
            .into_iter()
            .filter(|id| after.map_or(true, |a| id.as_str() > a))
        {
            let path = self.messages_dir().join(format!("{id}.md"));
            match read_message(&path, &id) {
                Ok(m) => listing.messages.push(m),
                Err(reason) => warnings.push(format!("skipping {}: {reason}", path.display())),
            }
            listing.newest = Some(id);
        }
        listing.warnings = warnings;
        Ok(listing)
    }

    /// Writes a message under a fresh, unique, time-ordered name and returns it. Call with the
    /// lock held: the name is later than every existing one, so name order is send order.
    pub fn write_message(&self, new: NewMessage, now: Time) -> Result<Message> {
        let (ids, _) = self.message_ids()?;
        let newest_ms = ids
            .last()
            .and_then(|id| message::parse_id(id).ok())
            .map(|(ms, _)| ms);
        let ms = now
            .timestamp_millis()
            .max(newest_ms.map_or(i64::MIN, |n| n + 1));
        self.write_from(new, ms)
    }

    /// Writes `new` at millisecond `ms`, or the first later millisecond whose name is free.
    fn write_from(&self, new: NewMessage, mut ms: i64) -> Result<Message> {
        let dir = self.messages_dir();
        for _ in 0..1000 {
            let id = message::make_id(ms, &new.from);
            let msg = Message {
                header: Header {
                    id: id.clone(),
                    thread: new.thread.clone().unwrap_or_else(|| id.clone()),
                    kind: new.kind,
                    from: new.from.clone(),
                    to: new.to.clone(),
                    round: new.round,
                    created: message::ms_to_time(ms),
                },
                body: new.body.clone(),
            };
            let tmp = dir.join(format!(
                ".{id}.{}.{}.tmp",
                std::process::id(),
                random_suffix()
            ));
            paths::create_exclusive(&tmp, message::render(&msg).as_bytes())
                .with_context(|| format!("cannot write a message into {}", dir.display()))?;
            let target = dir.join(format!("{id}.md"));
            // link(2) refuses an existing name: a concurrent writer that took it wins, we retry.
            let linked = fs::hard_link(&tmp, &target);
            let _ = fs::remove_file(&tmp);
            match linked {
                Ok(()) => {
                    if let Ok(d) = File::open(&dir) {
                        let _ = d.sync_all();
                    }
                    return Ok(msg);
                }
                Err(e) if e.kind() == ErrorKind::AlreadyExists => ms += 1,
                Err(e) => {
                    return Err(e).with_context(|| format!("cannot create {}", target.display()))
                }
            }
        }
        bail!("no free message name in {} after 1000 tries", dir.display())
    }

    /// The last message id `member` has read, if any.
    pub fn cursor(&self, member: &str) -> Result<Option<String>> {
        let path = self.cursors_dir().join(member);
        match read_small(&path, 256) {
            Ok(text) => {
                let id = text.trim();
                Ok(message::parse_id(id).is_ok().then(|| id.to_string()))
            }
            Err(e) if is_not_found(&e) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Records that `member` has read everything up to `id`.
    pub fn set_cursor(&self, member: &str, id: &str) -> Result<()> {
        paths::write_atomic(
            &self.cursors_dir().join(member),
            format!("{id}\n").as_bytes(),
        )
    }
}

fn is_not_found(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == ErrorKind::NotFound)
    })
}

/// Reads a regular file of at most `max` bytes as UTF-8; symlinks are refused.
fn read_small(path: &Path, max: u64) -> Result<String> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
        .open(path)
        .with_context(|| format!("cannot open {}", path.display()))?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        bail!("{} is not a regular file", path.display());
    }
    if meta.len() > max {
        bail!("{} is larger than {max} bytes", path.display());
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(max + 1).read_to_end(&mut bytes)?;
    String::from_utf8(bytes).with_context(|| format!("{} is not UTF-8", path.display()))
}

/// Reads and checks one message file; the reason is short enough for a warning line.
fn read_message(path: &Path, id: &str) -> Result<Message, String> {
    let text = read_small(path, MAX_FILE_BYTES).map_err(|e| format!("{e:#}"))?;
    let msg = message::parse(&text).map_err(|e| e.to_string())?;
    if msg.header.id != id {
        return Err(format!(
            "its id {} does not match the file name",
            msg.header.id
        ));
    }
    Ok(msg)
}

fn remove_if_stale(path: &Path) {
    let old = fs::symlink_metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| SystemTime::now().duration_since(t).ok())
        .is_some_and(|age| age > STALE_TEMP);
    if old && path.extension().is_some_and(|e| e == "tmp") {
        let _ = fs::remove_file(path);
    }
}

/// Eight hex digits from the kernel's random source.
fn random_id() -> Result<String> {
    let mut bytes = [0u8; 4];
    File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .context("cannot read /dev/urandom")?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

fn random_suffix() -> String {
    let mut bytes = [0u8; 6];
    let read = File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut bytes));
    if read.is_err() {
        let nanos = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        bytes[..4].copy_from_slice(&nanos.to_le_bytes());
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_member_without_a_server_is_on_every_server_one_with_a_server_on_its_own() {
        // A record written before servers were kept.
        let old = r#"{"id":"abcd","owner":"A","members":["A","B"],"max_members":5,
            "created":"2026-06-12T21:15:04Z","panes":{"A":"%1"}}"#;
        let mut info: ChannelInfo = serde_json::from_str(old).unwrap();
        assert!(info.on_server("A", "/tmp/tmux-1/default"));
        assert!(info.on_server("A", "/tmp/tmux-1/work"));
        let seat = |server: Option<&str>| Seat {
            pane: "%2".into(),
            server: server.map(String::from),
        };
        info.seat("B", &seat(Some("/tmp/tmux-1/work")));
        assert_eq!(info.panes["B"], "%2");
        assert!(info.on_server("B", "/tmp/tmux-1/work"));
        assert!(!info.on_server("B", "/tmp/tmux-1/default"));
        // Seated again where the server is unknown: no stale server stays behind.
        info.seat("B", &seat(None));
        assert!(info.on_server("B", "/tmp/tmux-1/default"));
    }

    fn scratch() -> (tempfile::TempDir, ChannelDir) {
        let tmp = tempfile::tempdir().unwrap();
        let ch = ChannelDir {
            id: "abcd".into(),
            dir: tmp.path().join("abcd"),
        };
        paths::ensure_private_dir(&ch.messages_dir()).unwrap();
        paths::ensure_private_dir(&ch.cursors_dir()).unwrap();
        (tmp, ch)
    }

    fn info_from(from: &str) -> NewMessage {
        NewMessage {
            thread: None,
            kind: Kind::Info,
            from: from.into(),
            to: Recipient::All,
            round: 1,
            body: "hello there\n".into(),
        }
    }

    #[test]
    fn a_taken_name_moves_the_message_one_millisecond_later() {
        let (_tmp, ch) = scratch();
        let ms = 1_781_298_904_321;
        let taken = ch.messages_dir().join("20260612-211504-321-A.md");
        fs::write(&taken, "someone else's").unwrap();
        let msg = ch.write_from(info_from("A"), ms).unwrap();
        assert_eq!(msg.header.id, "20260612-211504-322-A");
        assert_eq!(
            fs::read_to_string(&taken).unwrap(),
            "someone else's",
            "never clobbered"
        );
        let listing = ch.list(None).unwrap();
        assert_eq!(listing.messages, vec![msg]);
        assert_eq!(
            listing.warnings.len(),
            1,
            "the foreign file is reported: {:?}",
            listing.warnings
        );
    }

    #[test]
    fn names_never_go_back_in_time() {
        let (_tmp, ch) = scratch();
        let late = message::ms_to_time(1_781_298_904_321);
        let early = message::ms_to_time(1_781_298_000_000);
        let first = ch.write_message(info_from("B"), late).unwrap();
        let second = ch.write_message(info_from("A"), early).unwrap();
        assert!(
            second.header.id > first.header.id,
            "{} > {}",
            second.header.id,
            first.header.id
        );
        assert_eq!(
            second.header.created,
            message::ms_to_time(1_781_298_904_322)
        );
    }

    #[test]
    fn cursor_round_trips_and_ignores_garbage() {
        let (_tmp, ch) = scratch();
        assert_eq!(ch.cursor("A").unwrap(), None);
        ch.set_cursor("A", "20260612-211504-321-B").unwrap();
        assert_eq!(
            ch.cursor("A").unwrap().as_deref(),
            Some("20260612-211504-321-B")
        );
        fs::write(ch.cursors_dir().join("A"), "../../etc/passwd").unwrap();
        assert_eq!(ch.cursor("A").unwrap(), None);
    }

    #[test]
    fn stale_temp_files_are_ignored_and_fresh_ones_kept() {
        let (_tmp, ch) = scratch();
        let tmp = ch.messages_dir().join(".20260612-211504-321-A.1.2.tmp");
        fs::write(&tmp, "---\nhalf").unwrap();
        let listing = ch.list(None).unwrap();
        assert!(listing.messages.is_empty() && listing.warnings.is_empty());
        assert!(
            tmp.exists(),
            "a fresh temp file may belong to a sender still writing"
        );
    }

    #[test]
    fn channel_ids_are_short_hex() {
        let id = random_id().unwrap();
        assert_eq!(id.len(), 8);
        assert!(valid_channel_id(&id));
        for bad in ["", "abc", "../etc", "ABCD", "abcg", &"a".repeat(33)] {
            assert!(!valid_channel_id(bad), "{bad:?}");
        }
    }
}
