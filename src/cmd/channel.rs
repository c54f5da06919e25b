//! `agentpane channel …`: the typed mailbox between agent sessions (docs/design.md#channel). The
//! rules live in `crate::channel`; this file parses arguments, prints, and maps errors to exit
//! codes.

use std::io::{Read, Write};
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use chrono::Utc;
use serde::Serialize;

use crate::channel::{self, message, ChannelError, Joined, Kind, Message, Recipient, Seat};
use crate::cli::ChannelCommand;
use crate::paths;

/// The skill file `install-skill` writes.
pub const SKILL: &str = include_str!("../../skills/agentpane-channel/SKILL.md");

pub fn run(cmd: ChannelCommand) -> Result<i32> {
    match dispatch(cmd) {
        Ok(code) => Ok(code),
        Err(err) => match err.chain().find_map(|c| c.downcast_ref::<ChannelError>()) {
            Some(ce) => {
                eprintln!("agentpane: {err:#}");
                Ok(ce.exit_code())
            }
            None => Err(err),
        },
    }
}

fn dispatch(cmd: ChannelCommand) -> Result<i32> {
    match cmd {
        ChannelCommand::New { name } => {
            let info = channel::create(&name, seat().as_ref(), Utc::now())?;
            println!("{}", info.id);
            eprintln!(
                "channel {id} created; others join with: agentpane channel join {id} --as NAME",
                id = info.id
            );
        }
        ChannelCommand::Join { id, name } => {
            match channel::join(&id, &name, seat().as_ref(), Utc::now())? {
                Joined::Added => println!("joined channel {id} as {name}"),
                Joined::AlreadyMember => println!("{name} is already a member of channel {id}"),
            }
        }
        ChannelCommand::Send {
            id,
            name,
            to,
            kind,
            thread,
            json,
            text,
        } => {
            let kind: Kind = kind.parse().map_err(ChannelError::Invalid)?;
            let to: Recipient = to.parse().map_err(ChannelError::Invalid)?;
            let text = if text == "-" { read_stdin()? } else { text };
            let sent = channel::send(&id, &name, to, kind, thread.as_deref(), &text, Utc::now())?;
            warn_all(&sent.warnings);
            let h = &sent.message.header;
            if json {
                print_json(h)?;
            } else {
                println!(
                    "sent {} ({}, round {}, thread {})",
                    h.id, h.kind, h.round, h.thread
                );
            }
        }
        ChannelCommand::Watch {
            id,
            name,
            timeout,
            json,
        } => {
            let wait = channel::watch::parse_duration(&timeout).map_err(ChannelError::Invalid)?;
            let mut warn = |w: &str| eprintln!("agentpane: warning: {w}");
            let Some(unread) = channel::wait(&id, &name, wait, &mut warn)? else {
                return Err(ChannelError::Timeout {
                    id,
                    member: name,
                    timeout,
                }
                .into());
            };
            let shown: Vec<Message> = unread.messages.iter().map(clean).collect();
            if json {
                print_json(&shown)?;
            } else {
                print_for_agent(&id, &name, &shown)?;
            }
            // Only after printing: a reader killed mid-print sees the messages again.
            if let Some(upto) = &unread.upto {
                channel::mark_read(&id, &name, upto)?;
            }
        }
        ChannelCommand::List { id, json } => {
            let (info, listing) = channel::list(&id)?;
            warn_all(&listing.warnings);
            let messages: Vec<Message> = listing.messages.iter().map(clean).collect();
            if json {
                #[derive(Serialize)]
                struct Out<'a> {
                    channel: &'a channel::ChannelInfo,
                    messages: &'a [Message],
                }
                print_json(&Out {
                    channel: &info,
                    messages: &messages,
                })?;
            } else {
                print_list(&info, &messages)?;
            }
        }
        ChannelCommand::Close {
            id,
            thread,
            reason,
            name,
        } => {
            let sent = channel::close(&id, &thread, &reason, name.as_deref(), Utc::now())?;
            warn_all(&sent.warnings);
            println!("closed thread {thread} ({})", sent.message.header.id);
        }
        ChannelCommand::InstallSkill { dir } => {
            let path = install_skill(dir)?;
            println!("installed {}", path.display());
        }
    }
    Ok(crate::exit::OK)
}

/// The pane this command runs in, when inside tmux: recorded so the watcher can find the member.
/// The tmux pane this command runs in (`$TMUX_PANE`) and its server: the socket path that
/// starts `$TMUX`, which tmux sets beside it. `None` outside tmux.
fn seat() -> Option<Seat> {
    let pane = std::env::var("TMUX_PANE").ok()?;
    let server = std::env::var("TMUX").ok().and_then(|t| socket_of(&t));
    Some(Seat { pane, server })
}

/// The socket path in a `$TMUX` value (`/tmp/tmux-1000/default,1234,0`).
fn socket_of(tmux_env: &str) -> Option<String> {
    let (path, _) = tmux_env.rsplit_once(',')?.0.rsplit_once(',')?;
    Some(path.to_string()).filter(|p| !p.is_empty())
}

/// Bodies are re-sanitised on output: files may have been written by something else.
fn clean(m: &Message) -> Message {
    Message {
        header: m.header.clone(),
        body: message::sanitize_body(&m.body),
    }
}

/// Warnings quote what they skipped (a file name, a bad header line): terminal-safe.
fn warn_all(warnings: &[String]) {
    for w in warnings {
        eprintln!("agentpane: warning: {}", crate::text::terminal_line(w));
    }
}

fn print_json<T: Serialize + ?Sized>(value: &T) -> Result<()> {
    let mut out = std::io::stdout().lock();
    serde_json::to_writer_pretty(&mut out, value)?;
    writeln!(out)?;
    out.flush()?;
    Ok(())
}

fn read_stdin() -> Result<String> {
    let mut bytes = Vec::new();
    let limit = (message::MAX_BODY_BYTES as u64) * 4;
    std::io::stdin()
        .take(limit + 1)
        .read_to_end(&mut bytes)
        .context("cannot read the message from stdin")?;
    if bytes.len() as u64 > limit {
        bail!("the message on stdin is larger than {limit} bytes");
    }
    String::from_utf8(bytes).context("the message on stdin is not UTF-8")
}

/// Each message in its file form, with the command to answer it when an answer is owed.
fn print_for_agent(id: &str, me: &str, messages: &[Message]) -> Result<()> {
    let mut out = std::io::stdout().lock();
    for m in messages {
        let h = &m.header;
        write!(out, "{}", message::render(m))?;
        if h.kind.is_ask() {
            writeln!(
                out,
                "(answer once, only if you can: agentpane channel send {id} --as {me} --to {} \
                 --type response --thread {} -)",
                h.from, h.thread
            )?;
        } else if m.is_escalation() {
            writeln!(
                out,
                "(thread {} is escalated: stop and tell your human user)",
                h.thread
            )?;
        } else {
            writeln!(out, "(no reply: {} messages are never answered)", h.kind)?;
        }
        writeln!(out)?;
    }
    // Surface a closed stdout now, before the caller moves the read cursor.
    out.flush()?;
    Ok(())
}

fn print_list(info: &channel::ChannelInfo, messages: &[Message]) -> Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(list_text(info, messages).as_bytes())?;
    Ok(())
}

/// The channel and its messages for a person, terminal-safe: `channel.json` and the message
/// files may have been written by something else than agentpane.
fn list_text(info: &channel::ChannelInfo, messages: &[Message]) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "channel {} (owner {}; members {}/{}: {})",
        info.id,
        info.owner,
        info.members.len(),
        channel::MAX_MEMBERS,
        info.members.join(", ")
    );
    for m in messages {
        let h = &m.header;
        let _ = writeln!(
            out,
            "{}  {} round {}  {} -> {}  thread {}",
            h.id, h.kind, h.round, h.from, h.to, h.thread
        );
        for line in m.body.lines() {
            let _ = writeln!(out, "    {line}");
        }
    }
    crate::text::terminal_safe(&out).into_owned()
}

/// Writes SKILL.md to `<dir>/agentpane-channel/SKILL.md`; the default dir is the Claude Code
/// skills folder (`$CLAUDE_CONFIG_DIR/skills`, else `~/.claude/skills`).
fn install_skill(dir: Option<PathBuf>) -> Result<PathBuf> {
    let base = dir.unwrap_or_else(|| {
        std::env::var_os("CLAUDE_CONFIG_DIR")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .unwrap_or_else(|| paths::home_dir().join(".claude"))
            .join("skills")
    });
    let folder = base.join("agentpane-channel");
    std::fs::create_dir_all(&folder)
        .with_context(|| format!("cannot create {}", folder.display()))?;
    let path = folder.join("SKILL.md");
    paths::write_atomic(&path, SKILL.as_bytes())?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::{assert_terminal_safe, HOSTILE};

    #[test]
    fn the_socket_path_is_what_tmux_env_starts_with() {
        let server = |v: &str| socket_of(v);
        assert_eq!(
            server("/tmp/tmux-1000/default,1234,0").as_deref(),
            Some("/tmp/tmux-1000/default")
        );
        assert_eq!(
            server("/tmp/a,b/sock,1,0").as_deref(),
            Some("/tmp/a,b/sock")
        );
        assert_eq!(server(""), None);
        assert_eq!(server("/tmp/sock"), None);
        assert_eq!(server(",1,0"), None);
    }

    #[test]
    fn channel_list_is_terminal_safe() {
        let info = channel::ChannelInfo {
            id: "abcd".into(),
            owner: format!("x{HOSTILE}"),
            members: vec![format!("x{HOSTILE}"), "bob".into()],
            max_members: channel::MAX_MEMBERS,
            created: Utc::now(),
            panes: Default::default(),
            servers: Default::default(),
        };
        let message = Message {
            header: message::Header {
                id: "20260612-211504-321-bob".into(),
                thread: "20260612-211504-321-bob".into(),
                kind: Kind::Info,
                from: "bob".into(),
                to: Recipient::All,
                round: 0,
                created: Utc::now(),
            },
            body: format!("{HOSTILE}\n"),
        };
        let out = list_text(&info, &[message]);
        assert_terminal_safe(&out);
        assert!(out.contains("(owner xabcdef; members 2/"), "{out}");
        assert!(out.contains("\n    abcdef\n"), "{out}");
    }
}
