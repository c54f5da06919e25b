//! A fake coding agent, for integration tests and `agentpane demo`.
//!
//! When the agentpane binary runs under the name of an agent it knows (`claude`, `codex`,
//! `gemini`, `opencode`, `qwen`, `copilot`, `pi`, `amp`, `aider`: [`AgentKind::name`]; a symlink or
//! copy) with `AGENTPANE_FAKE_AGENT` set, [`crate::run`] calls [`run`] instead of the CLI. The
//! fake then leaves the same traces on disk as the real agent, so the resolver finds it the real
//! way: Claude Code's session record and transcript, Codex's rollout, Gemini CLI's and Qwen
//! Code's chat logs, Copilot CLI's session folder and log, pi's session log ([`jsonl`]), opencode's SQLite
//! database, held open ([`opencode`]); an agent whose log
//! agentpane does not read (amp, aider) leaves nothing but its screen ([`ScreenOnly`]). Its
//! process is matched like the real one: by the name it was started under (`argv[0]`; for
//! opencode also the process name, which the symlink's name gives).
//!
//! Steps come from a fixture (the file named by `AGENTPANE_FAKE_AGENT`; `none` or empty for no
//! fixture): a recorded JSONL log, one line a step, or for opencode a SQL dump, one `INSERT`
//! row a step; for a screen-only fake, one line printed a step. Each step is made the fake's
//! own as it is written (fresh times, its session id, its folder). Pacing:
//!
//! - `AGENTPANE_FAKE_START=N|all`: steps written at start (default `all`, or `0` with a pace);
//! - `AGENTPANE_FAKE_PACE_MS=MS`: then one more step every MS milliseconds;
//! - `AGENTPANE_FAKE_REPEAT=1`: after the last step, the fixture again from its first step, as
//!   new records (a writer that never runs out, for benchmarks);
//! - stdin commands, one per line: `step [N]` (next N steps, default 1), `all`, `line TEXT`
//!   (write this step), `quit`.
//!
//! - `AGENTPANE_FAKE_LATE=1`: a first line on the screen, and the files only once `begin` is
//!   typed: a client that draws before it writes anything (Gemini CLI 0.61 writes its log
//!   about 2 s after it starts), with the test deciding when;
//! - `AGENTPANE_FAKE_SCREEN=FILE`: printed to the terminal after the start steps, so the pane
//!   shows what the real agent would (a permission dialog, a busy footer).
//! - `AGENTPANE_FAKE_ASK=1`: a fake Codex draws the approval dialog of the newest command call
//!   among its start steps, as Codex 0.171 draws it, after them.
//! - `AGENTPANE_FAKE_INBOX=FILE`: every other stdin line (what reached the agent's input box,
//!   e.g. a routed message) is appended to FILE, so tests see exactly what the agent got.
//! - `AGENTPANE_FAKE_VERSION=V`: the client version a fake Claude Code's session record
//!   claims (default `0.0.0-agentpane-fake`, a version never verified).
//! - `AGENTPANE_FAKE_DECIDE=1`: a fake Claude Code's dialog (its screen) waits for a key, as
//!   the demo's waiting pane does: `1`/`2` allow its pending call, `3`/Escape deny it
//!   ([`decide`]); no step is written by time.
//! - `AGENTPANE_FAKE_FRESH=1`: a fake Claude Code asked nothing yet: its session record at
//!   start, its transcript only with its first step (as the released client writes it at the
//!   first prompt).
//!
//! The fake stays alive until `quit`, stdin EOF, or a signal.

mod cline;
mod decide;
mod droid;
mod jsonl;
mod kimi;
mod opencode;

use std::ffi::OsStr;
use std::fs::{File, OpenOptions};
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result};

use crate::events::AgentKind;

/// The variable that turns the binary into a fake agent (its value: the fixture path).
pub const ENV: &str = "AGENTPANE_FAKE_AGENT";

/// A file whose bytes the fake prints after its start lines (a recorded screen).
pub const SCREEN_ENV: &str = "AGENTPANE_FAKE_SCREEN";

/// `1`: a fake Codex draws the dialog of the command its log asks about (see [`asked`]).
pub const ASK_ENV: &str = "AGENTPANE_FAKE_ASK";

/// A file the fake appends every non-command stdin line to (its input box).
pub const INBOX_ENV: &str = "AGENTPANE_FAKE_INBOX";

/// A file to replay again from its first step once it ends.
pub const REPEAT_ENV: &str = "AGENTPANE_FAKE_REPEAT";

/// Which fake to run when the binary was started as an agent with [`ENV`] set.
pub fn requested(argv0: &OsStr) -> Option<AgentKind> {
    std::env::var_os(ENV)?;
    AgentKind::from_name(Path::new(argv0).file_name()?.to_str()?)
}

/// Runs the fake agent to the end; returns the exit code.
pub fn run(kind: AgentKind) -> i32 {
    match run_inner(kind) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("fake {kind}: {e:#}");
            2
        }
    }
}

/// One stdin command.
#[derive(Debug, PartialEq, Eq)]
enum Command {
    Step(usize),
    All,
    Line(String),
    Quit,
    /// Not a command: text typed or pasted into the agent.
    Input(String),
    /// A key decided the dialog on screen: allowed (`true`) or denied.
    Decide(bool),
}

fn parse_command(line: &str) -> Option<Command> {
    let line = line.trim();
    let (word, rest) = line.split_once(' ').unwrap_or((line, ""));
    match word {
        "step" if rest.trim().is_empty() => Some(Command::Step(1)),
        "step" => rest.trim().parse().ok().map(Command::Step),
        "all" => Some(Command::All),
        "line" if !rest.trim().is_empty() => Some(Command::Line(rest.trim().to_string())),
        "quit" | "exit" => Some(Command::Quit),
        _ => None,
    }
}

fn run_inner(kind: AgentKind) -> Result<()> {
    let fixture = std::env::var(ENV).unwrap_or_default();
    let lines: Vec<String> = if fixture.is_empty() || fixture == "none" || fixture == "1" {
        Vec::new()
    } else {
        let text = std::fs::read_to_string(&fixture)
            .with_context(|| format!("cannot read fixture {fixture}"))?;
        match kind {
            AgentKind::Opencode | AgentKind::Kilo => opencode::steps(&text),
            _ => text
                .lines()
                .filter(|l| !l.trim().is_empty())
                .map(str::to_string)
                .collect(),
        }
    };
    let deciding = kind == AgentKind::Claude && decide::requested();
    let pace = std::env::var("AGENTPANE_FAKE_PACE_MS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .filter(|ms| *ms > 0 && !deciding)
        .map(Duration::from_millis);
    let start = match std::env::var("AGENTPANE_FAKE_START").ok().as_deref() {
        Some("all") => lines.len(),
        Some(n) => n.parse().unwrap_or(0),
        None if pace.is_some() => 0,
        None => lines.len(),
    };
    let hold = std::env::var("AGENTPANE_FAKE_HOLD").is_ok_and(|v| v == "1");
    let repeat = std::env::var(REPEAT_ENV).is_ok_and(|v| v == "1");
    if std::env::var("AGENTPANE_FAKE_LATE").is_ok_and(|v| v == "1") {
        println!(
            "fake {kind} pid {} starting: type begin",
            std::process::id()
        );
        let mut line = String::new();
        while line.trim() != "begin" {
            line.clear();
            if std::io::stdin().read_line(&mut line)? == 0 {
                return Ok(()); // stdin closed before it began
            }
        }
    }
    let asks = std::env::var(ASK_ENV)
        .is_ok_and(|v| v == "1")
        .then(|| asked(kind, &lines[..start.min(lines.len())]))
        .flatten();
    let call = deciding
        .then(|| decide::pending_call(&lines[..start.min(lines.len())]))
        .flatten();
    if deciding {
        decide::single_keys();
    }
    let mut sink = create_sink(kind, &lines, hold)?;
    let mut steps = Steps::new(lines, sink.consumed(), repeat);
    let mut write_next = |sink: &mut Box<dyn Sink>, n: usize| -> Result<()> {
        for _ in 0..n {
            match steps.next() {
                Some((line, again)) => {
                    if again {
                        sink.restart();
                    }
                    sink.append(line)?;
                }
                None => break,
            }
        }
        Ok(())
    };
    write_next(&mut sink, start)?;
    println!(
        "fake {kind} pid {} writing {}",
        std::process::id(),
        sink.target().display()
    );
    if let Some(screen) = std::env::var_os(SCREEN_ENV) {
        // Paint a recorded screen (e.g. a permission dialog) as the real agent would.
        let text = std::fs::read(&screen)
            .with_context(|| format!("cannot read {}", Path::new(&screen).display()))?;
        let mut out = std::io::stdout().lock();
        out.write_all(&text)?;
        out.flush()?;
    }
    if let Some(dialog) = asks {
        let mut out = std::io::stdout().lock();
        out.write_all(dialog.as_bytes())?;
        out.flush()?;
    }
    let commands = spawn_stdin_reader(deciding);
    loop {
        let got = match pace {
            Some(p) => commands.recv_timeout(p),
            None => commands
                .recv()
                .map_err(|_| mpsc::RecvTimeoutError::Disconnected),
        };
        match got {
            Ok(Command::Step(n)) => {
                write_next(&mut sink, n)?;
            }
            Ok(Command::All) => {
                write_next(&mut sink, usize::MAX)?;
            }
            Ok(Command::Line(l)) => sink.append(&l)?,
            Ok(Command::Input(text)) => received(&text)?,
            Ok(Command::Decide(allow)) => {
                let input = call.as_ref().map(|(_, i)| i.clone()).unwrap_or_default();
                let mut out = std::io::stdout().lock();
                out.write_all(decide::after(allow, &input).as_bytes())?;
                out.flush()?;
                match (&call, allow) {
                    (Some((id, _)), true) => {
                        for record in decide::allowed(id) {
                            sink.append(&record)?;
                        }
                    }
                    // The recorded rejection.
                    _ => write_next(&mut sink, usize::MAX)?,
                }
            }
            Ok(Command::Quit) | Err(mpsc::RecvTimeoutError::Disconnected) => break,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                write_next(&mut sink, 1)?;
            }
        }
    }
    sink.finish();
    Ok(())
}

/// The approval dialog a Codex whose log ends on `lines` would draw: that of the newest
/// command call (`exec_command`'s `cmd`, with its `justification` as the reason).
fn asked(kind: AgentKind, lines: &[String]) -> Option<String> {
    if kind != AgentKind::Codex {
        return None;
    }
    lines.iter().rev().find_map(|line| {
        let v: serde_json::Value = serde_json::from_str(line).ok()?;
        let call = &v["payload"];
        if call["type"] != "function_call" {
            return None;
        }
        let args: serde_json::Value = serde_json::from_str(call["arguments"].as_str()?).ok()?;
        let reason = args["justification"].as_str().unwrap_or_default();
        Some(crate::agents::codex::dialogs::drawn_run(
            args["cmd"].as_str()?,
            reason,
        ))
    })
}

/// The fixture's steps in order, from the first one not used up at creation; with `repeat`,
/// the same steps again after the last.
struct Steps {
    lines: Vec<String>,
    first: usize,
    next: usize,
    repeat: bool,
}

impl Steps {
    fn new(lines: Vec<String>, consumed: usize, repeat: bool) -> Steps {
        let first = consumed.min(lines.len());
        Steps {
            lines,
            first,
            next: first,
            repeat,
        }
    }

    /// The next step, and whether it starts the fixture over. `None` once done, and with
    /// nothing to repeat: a `usize::MAX` step count with `repeat` must still end.
    fn next(&mut self) -> Option<(&str, bool)> {
        let mut again = false;
        if self.next >= self.lines.len() {
            if !self.repeat || self.first >= self.lines.len() || self.next == usize::MAX {
                return None;
            }
            self.next = self.first;
            again = true;
        }
        self.next += 1;
        Some((&self.lines[self.next - 1], again))
    }
}

/// Reads stdin commands on a thread (with `keys`, single keys: [`decide::read_keys`]); the
/// channel closes at EOF or on `quit`.
fn spawn_stdin_reader(keys: bool) -> mpsc::Receiver<Command> {
    let (tx, rx) = mpsc::channel();
    if keys {
        std::thread::spawn(move || {
            decide::read_keys(tx, |l| {
                parse_command(l).unwrap_or_else(|| Command::Input(l.to_string()))
            })
        });
        return rx;
    }
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines() {
            let Ok(line) = line else { break };
            match parse_command(&line) {
                Some(Command::Quit) => break,
                Some(cmd) => {
                    if tx.send(cmd).is_err() {
                        break;
                    }
                }
                None => {
                    if tx.send(Command::Input(line)).is_err() {
                        break;
                    }
                }
            }
        }
    });
    rx
}

/// Appends a line the agent received to its inbox file, when it has one.
fn received(text: &str) -> Result<()> {
    let Some(path) = std::env::var_os(INBOX_ENV) else {
        return Ok(());
    };
    let mut f = OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .with_context(|| format!("cannot open {}", Path::new(&path).display()))?;
    writeln!(f, "{text}")?;
    Ok(())
}

/// Where a fake agent leaves its traces.
trait Sink {
    /// The file it writes (shown on its screen).
    fn target(&self) -> &Path;
    /// Fixture steps used up while creating (a log's first line).
    fn consumed(&self) -> usize;
    /// Writes one fixture step, made the fake's own.
    fn append(&mut self, step: &str) -> Result<()>;
    /// The fixture starts over (`AGENTPANE_FAKE_REPEAT`): what comes now is new records.
    fn restart(&mut self) {}
    /// Cleans up on a clean exit.
    fn finish(self: Box<Self>);
}

fn create_sink(kind: AgentKind, steps: &[String], hold: bool) -> Result<Box<dyn Sink>> {
    Ok(match kind {
        // Kilo keeps opencode's store under its own name.
        AgentKind::Opencode | AgentKind::Kilo => Box::new(opencode::Store::create(kind.name())?),
        AgentKind::Claude
        | AgentKind::Codex
        | AgentKind::Gemini
        | AgentKind::Qwen
        | AgentKind::Copilot
        | AgentKind::Pi => Box::new(jsonl::JsonlLog::create(kind, steps, hold)?),
        AgentKind::Cline => Box::new(cline::Session::create()?),
        AgentKind::Amp | AgentKind::Aider => Box::new(ScreenOnly::default()),
        AgentKind::Kimi => Box::new(kimi::KimiLog::create()?),
        AgentKind::Droid => Box::new(droid::Log::create(steps)?),
    })
}

/// An agent whose log agentpane does not read: each step is a line on its screen, the only
/// trace the resolver and the scan can see.
#[derive(Default)]
struct ScreenOnly {
    none: PathBuf,
}

impl Sink for ScreenOnly {
    fn target(&self) -> &Path {
        &self.none
    }

    fn consumed(&self) -> usize {
        0
    }

    fn append(&mut self, step: &str) -> Result<()> {
        let mut out = std::io::stdout().lock();
        writeln!(out, "{step}")?;
        out.flush()?;
        Ok(())
    }

    fn finish(self: Box<Self>) {}
}

fn env_dir(name: &str) -> Option<PathBuf> {
    std::env::var_os(name)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

fn open_append(path: &Path) -> Result<File> {
    OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .with_context(|| format!("cannot open {}", path.display()))
}

/// A random version-4 UUID (std's randomly keyed hasher is the entropy source).
fn random_uuid() -> String {
    use std::hash::{BuildHasher, Hasher};
    let word = || {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u128(
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0),
        );
        h.write_u32(std::process::id());
        h.finish()
    };
    let (a, b) = (word(), word());
    format!(
        "{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}",
        a >> 32,
        (a >> 16) & 0xffff,
        a & 0xfff,
        0x8000 | (b >> 48) & 0x3fff,
        b & 0xffff_ffff_ffff
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_parse() {
        assert_eq!(parse_command("step"), Some(Command::Step(1)));
        assert_eq!(parse_command(" step 3 "), Some(Command::Step(3)));
        assert_eq!(parse_command("step x"), None);
        assert_eq!(parse_command("all"), Some(Command::All));
        assert_eq!(
            parse_command("line {\"a\":1}"),
            Some(Command::Line("{\"a\":1}".into()))
        );
        assert_eq!(parse_command("quit"), Some(Command::Quit));
        assert_eq!(parse_command("dance"), None);
    }

    #[test]
    fn uuids_look_like_uuids_and_differ() {
        let (a, b) = (random_uuid(), random_uuid());
        assert_ne!(a, b);
        assert_eq!(a.len(), 36);
        assert_eq!(a.as_bytes()[14], b'4');
        assert!(
            crate::agents::codex::home::session_id_of(Path::new(&format!(
                "rollout-2026-01-01T00-00-00-{a}.jsonl"
            )))
            .is_some()
        );
    }
}
