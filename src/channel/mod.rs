//! The channel (docs/design.md#channel): a typed file mailbox so agents in different panes can ask
//! each other questions without a human copying text, and without "thanks → you're welcome"
//! loops. Messages are files written by code (never by the model), the reply rules are checked
//! by `send`, and `watch` blocks until someone else writes.
//!
//! Library API for other stages (the watcher): [`unread_count`], [`pending_for`] and
//! [`pane_members`] read without changing anything; [`Message::is_escalation`] spots the close
//! a human must see. User docs: `docs/channel.md`.

pub mod message;
pub mod rules;
pub mod store;
pub mod watch;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result};
use serde::Serialize;
use thiserror::Error;

pub use message::{Kind, Message, Recipient};
pub use rules::{Refusal, MAX_ROUNDS};
pub use store::{ChannelDir, ChannelInfo, Listing, Seat, MAX_MEMBERS};

use crate::events::Time;
use store::NewMessage;

/// The sender name agentpane uses for messages it writes itself (the ESCALATED close, a close
/// without `--as`). No member may take it.
pub const SYSTEM_SENDER: &str = "agentpane";

/// Exit codes of `agentpane channel …` beyond the crate-wide ones (0 ok, 2 bad input).
pub mod exit {
    /// `send` refused the message by a rule (reply rules, acknowledgement-only).
    pub const REFUSED: i32 = 1;
    /// `watch` saw nothing new before `--timeout`.
    pub const TIMEOUT: i32 = 4;
    /// The thread hit the round limit: the message was refused and the thread closed with
    /// `ESCALATED`.
    pub const ESCALATED: i32 = 5;
}

/// Errors a caller may want to tell apart (each has its own exit code).
#[derive(Debug, Error)]
pub enum ChannelError {
    #[error("unknown channel {id}: there is no {}", dir.display())]
    UnknownChannel { id: String, dir: PathBuf },
    #[error(
        "{name} is not a member of channel {id} (members: {}); join first with \
         `agentpane channel join {id} --as {name}`",
        members.join(", ")
    )]
    UnknownMember {
        id: String,
        name: String,
        members: Vec<String>,
    },
    #[error("channel {id} is full: it already has {max} members ({})", members.join(", "))]
    Full {
        id: String,
        max: usize,
        members: Vec<String>,
    },
    #[error("{0}")]
    Invalid(String),
    #[error("the message is {len} bytes; the limit is {max}")]
    TooLong { len: usize, max: usize },
    #[error("message refused")]
    Refused(#[from] Refusal),
    #[error(
        "message refused: thread {thread} already had {MAX_ROUNDS} rounds. It is now closed with \
         ESCALATED ({close_id}): stop and hand this question to your human user"
    )]
    Escalated { thread: String, close_id: String },
    #[error("no new message for {member} in channel {id} within {timeout}")]
    Timeout {
        id: String,
        member: String,
        timeout: String,
    },
}

impl ChannelError {
    /// The documented exit code for this error.
    pub fn exit_code(&self) -> i32 {
        match self {
            // An unknown member is bad input, like an unknown channel, not a broken rule.
            ChannelError::Refused(Refusal::UnknownRecipient(_)) => crate::exit::USAGE,
            ChannelError::Refused(_) => exit::REFUSED,
            ChannelError::Escalated { .. } => exit::ESCALATED,
            ChannelError::Timeout { .. } => exit::TIMEOUT,
            _ => crate::exit::USAGE,
        }
    }
}

/// What `send` wrote, plus files it skipped while reading the history.
#[derive(Debug)]
pub struct Sent {
    pub message: Message,
    pub warnings: Vec<String>,
}

/// Unread messages for one member.
#[derive(Debug, Default)]
pub struct Unread {
    /// From others, to this member or to all, newer than the cursor.
    pub messages: Vec<Message>,
    pub warnings: Vec<String>,
    /// Where the cursor goes once these are shown.
    pub upto: Option<String>,
}

/// One channel a member belongs to, for the watcher.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Membership {
    pub channel: String,
    pub unread: usize,
}

/// A member that created or joined a channel from a tmux pane, with its unread count.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PaneMember {
    pub channel: String,
    pub member: String,
    /// tmux pane id, e.g. `%3`.
    pub pane: String,
    pub unread: usize,
}

/// Whether `join` added the member.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Joined {
    Added,
    AlreadyMember,
}

fn check_member_name(name: &str) -> Result<(), ChannelError> {
    message::check_name(name).map_err(ChannelError::Invalid)?;
    if name.eq_ignore_ascii_case("all") || name.eq_ignore_ascii_case(SYSTEM_SENDER) {
        return Err(ChannelError::Invalid(format!(
            "{name:?} is reserved; pick another name"
        )));
    }
    Ok(())
}

fn require_member(info: &ChannelInfo, name: &str) -> Result<(), ChannelError> {
    if info.members.iter().any(|m| m == name) {
        Ok(())
    } else {
        Err(ChannelError::UnknownMember {
            id: info.id.clone(),
            name: name.to_string(),
            members: info.members.clone(),
        })
    }
}

/// tmux pane ids look like `%12`; anything else is not recorded.
pub fn valid_pane(pane: &str) -> bool {
    pane.len() > 1 && pane.starts_with('%') && pane[1..].bytes().all(|b| b.is_ascii_digit())
}

/// Creates a channel with `owner` as its first member, remembering its tmux `seat` if given.
pub fn create(owner: &str, seat: Option<&Seat>, now: Time) -> Result<ChannelInfo> {
    check_member_name(owner)?;
    let (_, info) = ChannelDir::create(owner, seat.filter(|s| valid_pane(&s.pane)), now)?;
    Ok(info)
}

/// Adds `name` to channel `id` (at most [`MAX_MEMBERS`]) and tells the others with an `info`.
/// The newcomer's cursor starts after the existing history. Joining again only updates the
/// member's tmux `seat`.
pub fn join(id: &str, name: &str, seat: Option<&Seat>, now: Time) -> Result<Joined> {
    check_member_name(name)?;
    let seat = seat.filter(|s| valid_pane(&s.pane));
    let ch = ChannelDir::open(id)?;
    let _lock = ch.lock()?;
    let mut info = ch.info()?;
    if info.members.iter().any(|m| m == name) {
        if let Some(seat) = seat {
            let before = info.clone();
            info.seat(name, seat);
            if info != before {
                ch.save_info(&info)?;
            }
        }
        return Ok(Joined::AlreadyMember);
    }
    if info.members.len() >= info.max_members.min(MAX_MEMBERS) {
        return Err(ChannelError::Full {
            id: id.to_string(),
            max: MAX_MEMBERS,
            members: info.members,
        }
        .into());
    }
    let before = ch.list(None)?.newest;
    info.members.push(name.to_string());
    if let Some(seat) = seat {
        info.seat(name, seat);
    }
    ch.save_info(&info)?;
    if let Some(newest) = before {
        ch.set_cursor(name, &newest)?;
    }
    let notice = NewMessage {
        thread: None,
        kind: Kind::Info,
        from: name.to_string(),
        to: Recipient::All,
        round: 1,
        body: message::join_notice(name),
    };
    ch.write_message(notice, now)?;
    Ok(Joined::Added)
}

/// Sends a message after checking the rules of [`rules::check`]. On the round limit the draft
/// is refused, an `ESCALATED` close is written, and [`ChannelError::Escalated`] returned.
pub fn send(
    id: &str,
    from: &str,
    to: Recipient,
    kind: Kind,
    thread: Option<&str>,
    text: &str,
    now: Time,
) -> Result<Sent> {
    let draft = Outgoing {
        from,
        to,
        kind,
        thread,
        text,
    };
    send_checked(id, draft, true, now)
}

/// Closes `thread` with `reason`, as `by` (a member) or, without `by`, as agentpane itself
/// (for a human closing a thread from the shell).
pub fn close(id: &str, thread: &str, reason: &str, by: Option<&str>, now: Time) -> Result<Sent> {
    let draft = Outgoing {
        from: by.unwrap_or(SYSTEM_SENDER),
        to: Recipient::All,
        kind: Kind::Close,
        thread: Some(thread),
        text: reason,
    };
    send_checked(id, draft, by.is_some(), now)
}

struct Outgoing<'a> {
    from: &'a str,
    to: Recipient,
    kind: Kind,
    thread: Option<&'a str>,
    text: &'a str,
}

fn send_checked(id: &str, out: Outgoing<'_>, member_only: bool, now: Time) -> Result<Sent> {
    let Outgoing {
        from,
        to,
        kind,
        thread,
        text,
    } = out;
    let body = message::sanitize_body(text);
    if body.len() > message::MAX_BODY_BYTES {
        return Err(ChannelError::TooLong {
            len: body.len(),
            max: message::MAX_BODY_BYTES,
        }
        .into());
    }
    let ch = ChannelDir::open(id)?;
    let _lock = ch.lock()?;
    let info = ch.info()?;
    if member_only {
        require_member(&info, from)?;
    }
    let history = ch.list(None)?;
    let draft = rules::Draft {
        from,
        to: &to,
        kind,
        thread,
        body: &body,
    };
    let decision =
        rules::check(draft, &history.messages, &info.members).map_err(ChannelError::from)?;
    match decision {
        rules::Decision::Send { thread, round } => {
            let new = NewMessage {
                thread,
                kind,
                from: from.to_string(),
                to,
                round,
                body,
            };
            let message = ch.write_message(new, now)?;
            Ok(Sent {
                message,
                warnings: history.warnings,
            })
        }
        rules::Decision::Escalate { thread, round } => {
            let quoted: String = body.lines().map(|l| format!("> {l}\n")).collect();
            let close = NewMessage {
                thread: Some(thread.clone()),
                kind: Kind::Close,
                from: SYSTEM_SENDER.to_string(),
                to: Recipient::All,
                round: round - 1,
                body: format!(
                    "ESCALATED: thread {thread} reached the limit of {MAX_ROUNDS} rounds without \
                     being resolved. {from} tried to send a {kind} for round {round} to {to}; it was \
                     refused. A human takes over from here.\n\nThe refused {kind}:\n\n{quoted}"
                ),
            };
            let written = ch.write_message(close, now)?;
            Err(ChannelError::Escalated {
                thread,
                close_id: written.header.id,
            }
            .into())
        }
    }
}

/// The channel's description and all its messages.
pub fn list(id: &str) -> Result<(ChannelInfo, Listing)> {
    let ch = ChannelDir::open(id)?;
    let info = ch.info()?;
    Ok((info, ch.list(None)?))
}

/// Unread messages of `member` in an open channel (reads only).
pub(crate) fn unread_in(ch: &ChannelDir, member: &str) -> Result<Unread> {
    let cursor = ch.cursor(member)?;
    let listing = ch.list(cursor.as_deref())?;
    let messages = listing
        .messages
        .into_iter()
        .filter(|m| m.header.from != member && m.header.to.includes(member))
        .collect();
    Ok(Unread {
        messages,
        warnings: listing.warnings,
        upto: listing.newest,
    })
}

/// Opens channel `id` and checks that `member` belongs to it.
pub fn open_as(id: &str, member: &str) -> Result<ChannelDir> {
    let ch = ChannelDir::open(id)?;
    require_member(&ch.info()?, member)?;
    Ok(ch)
}

/// Blocks until `member` has unread messages (see [`watch::wait_for_unread`]); `None` after
/// `timeout`. Does not move the cursor: call [`mark_read`] once they are shown.
pub fn wait(
    id: &str,
    member: &str,
    timeout: Duration,
    warn: &mut dyn FnMut(&str),
) -> Result<Option<Unread>> {
    let ch = open_as(id, member)?;
    watch::wait_for_unread(&ch, member, timeout, warn)
}

/// Moves `member`'s read cursor to `upto` (never backwards).
pub fn mark_read(id: &str, member: &str, upto: &str) -> Result<()> {
    let ch = open_as(id, member)?;
    if ch.cursor(member)?.is_some_and(|c| c.as_str() >= upto) {
        return Ok(());
    }
    ch.set_cursor(member, upto)
}

/// How many messages `member` has not read in channel `channel_id`. Changes nothing.
pub fn unread_count(channel_id: &str, member: &str) -> Result<usize> {
    let ch = open_as(channel_id, member)?;
    Ok(unread_in(&ch, member)?.messages.len())
}

/// Every channel `member` belongs to, with its unread count, sorted by channel id. Channels
/// that cannot be read are left out: this feeds a status display, which must not fail.
pub fn pending_for(member: &str) -> Result<Vec<Membership>> {
    Ok(channel_ids()?
        .into_iter()
        .filter_map(|id| {
            let unread = unread_count(&id, member).ok()?;
            Some(Membership {
                channel: id,
                unread,
            })
        })
        .collect())
}

/// The ids of all channel folders, sorted.
fn channel_ids() -> Result<Vec<String>> {
    let root = store::channels_root();
    let entries = match std::fs::read_dir(&root) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", root.display())),
    };
    let mut ids: Vec<String> = entries
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|id| store::valid_channel_id(id))
        .collect();
    ids.sort();
    Ok(ids)
}

/// Every member bound to a pane of the tmux server at `socket_path`, in every channel, with
/// unread counts: what a display needs to show "2 unread" on a pane. Unreadable channels are
/// left out.
pub fn pane_members(socket_path: &str) -> Result<Vec<PaneMember>> {
    Ok(pane_mail(socket_path)?
        .into_iter()
        .map(|m| PaneMember {
            unread: m.messages.len(),
            channel: m.channel,
            member: m.member,
            pane: m.pane,
        })
        .collect())
}

/// A pane-bound member's unread messages (what the watcher delivers into its pane).
#[derive(Debug, Clone)]
pub struct PaneMail {
    pub channel: String,
    pub member: String,
    /// tmux pane id.
    pub pane: String,
    /// From others, to this member or to all, oldest first.
    pub messages: Vec<Message>,
}

/// Every member bound to a pane of the tmux server at `socket_path`, with its unread messages
/// (empty lists included, so a display can clear). Pane ids repeat across servers: a member
/// that joined from another server is left out, one recorded without a server is not.
/// Unreadable channels are left out.
pub fn pane_mail(socket_path: &str) -> Result<Vec<PaneMail>> {
    let mut out = Vec::new();
    for id in channel_ids()? {
        let Ok(ch) = ChannelDir::open(&id) else {
            continue;
        };
        let Ok(info) = ch.info() else { continue };
        for (member, pane) in &info.panes {
            if !info.members.contains(member) || !info.on_server(member, socket_path) {
                continue;
            }
            let Ok(unread) = unread_in(&ch, member) else {
                continue;
            };
            out.push(PaneMail {
                channel: id.clone(),
                member: member.clone(),
                pane: pane.clone(),
                messages: unread.messages,
            });
        }
    }
    Ok(out)
}

/// Every `ESCALATED` close, with its channel id, among the messages newer than `seen[channel]`
/// (all of a channel not in `seen`); `seen` moves to each channel's newest message, so a
/// caller that keeps it reads each message once. Unreadable channels are left out.
pub fn escalations(seen: &mut BTreeMap<String, String>) -> Result<Vec<(String, Message)>> {
    let mut out = Vec::new();
    for id in channel_ids()? {
        let Ok(ch) = ChannelDir::open(&id) else {
            continue;
        };
        let Ok(listing) = ch.list(seen.get(&id).map(String::as_str)) else {
            continue;
        };
        if let Some(newest) = listing.newest {
            seen.insert(id.clone(), newest);
        }
        out.extend(
            listing
                .messages
                .into_iter()
                .filter(Message::is_escalation)
                .map(|m| (id.clone(), m)),
        );
    }
    Ok(out)
}
