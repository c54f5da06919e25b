//! Alert sinks (docs/design.md#alerts), run on a worker thread so a slow or hanging sink never blocks the
//! watch loop: tmux `display-message`, the terminal bell in the alerting pane, a desktop
//! notification with its actions ([`crate::notify::desktop`]) when a notification service answers, and the user's `--alert-command`, run by
//! `sh -c` like tmux's `run-shell`, with the alert as one JSON object on stdin (the alert's
//! text, which quotes an agent, never reaches the command line). Every failure is logged,
//! none is fatal.
//!
//! The bell: tmux has no command that rings a pane's bell, so the worker writes one BEL byte
//! to the pane's tty (`#{pane_tty}`) — exactly what a program in the pane does to ring — and
//! tmux's own bell handling (`monitor-bell`, `bell-action`, the window's bell flag, the client
//! terminal's bell) takes it from there.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::sync::mpsc::{self, Sender};
use std::thread::JoinHandle;
use std::time::Duration;

use super::log;
use crate::alert::Alert;
use crate::exec;
use crate::notify::desktop::{self, Desktop};
use crate::tmux::{Socket, Tmux};

/// Which sinks run.
#[derive(Debug, Clone)]
pub struct SinkConfig {
    pub socket: Socket,
    pub message: bool,
    pub bell: bool,
    /// Where desktop notifications go, when there is a notifier.
    pub notifier: Option<desktop::Notifier>,
    /// The alert command, a shell command line run by `sh -c`.
    pub command: Option<String>,
    pub timeout: Duration,
}

/// The `--alert-command` to run; blank → none.
pub fn alert_command(cmd: &str) -> Option<String> {
    let cmd = cmd.trim();
    (!cmd.is_empty()).then(|| cmd.to_string())
}

/// The worker: send alerts in, drop the handle to stop it.
pub struct Sinks {
    tx: Option<Sender<Alert>>,
    worker: Option<JoinHandle<()>>,
}

impl Sinks {
    /// Starts the worker thread.
    pub fn start(config: SinkConfig) -> Sinks {
        let (tx, rx) = mpsc::channel::<Alert>();
        let worker = std::thread::spawn(move || {
            let tmux = Tmux::new(config.socket.clone());
            for alert in rx {
                deliver(&tmux, &config, &alert);
            }
        });
        Sinks {
            tx: Some(tx),
            worker: Some(worker),
        }
    }

    /// Queues an alert for every sink.
    pub fn send(&self, alert: Alert) {
        if let Some(tx) = &self.tx {
            let _ = tx.send(alert);
        }
    }

    /// Lets queued alerts finish (each sink is bounded by its timeout) and stops the worker.
    pub fn finish(mut self) {
        self.tx.take();
        if let Some(w) = self.worker.take() {
            let _ = w.join();
        }
    }
}

fn deliver(tmux: &Tmux, config: &SinkConfig, alert: &Alert) {
    let text = format!("agentpane: {}", alert.message());
    log::line(&format!("alert {text} [{}]", alert.key));
    if config.message {
        if let Err(e) = tmux.display_message(None, &text) {
            log::line(&format!("display-message failed: {e}"));
        }
    }
    // A plan window's alert is the account's: no pane to ring.
    if config.bell && !alert.pane.is_empty() {
        if let Err(e) = ring(tmux, &alert.pane) {
            log::line(&format!("bell for {} failed: {e}", alert.pane));
        }
    }
    if let Some(notifier) = &config.notifier {
        let d = Desktop::for_alert(alert, notifier.clone(), config.socket.clone(), log::line);
        if let Err(e) = desktop::send(d) {
            log::line(&format!("desktop notification failed: {e}"));
        }
    }
    if let Some(cmd) = &config.command {
        let mut json = match serde_json::to_vec(alert) {
            Ok(j) => j,
            Err(e) => {
                log::line(&format!("cannot serialise alert: {e}"));
                return;
            }
        };
        json.push(b'\n');
        if let Err(e) = exec::run_shell(cmd, Some(&json), config.timeout) {
            log::line(&format!("alert command failed: {e}"));
        }
    }
}

fn ring(tmux: &Tmux, pane: &str) -> anyhow::Result<()> {
    let tty = tmux.format(Some(pane), "#{pane_tty}")?;
    anyhow::ensure!(tty.starts_with("/dev/"), "pane {pane} has no tty");
    // O_NOCTTY: a watcher without a terminal must not adopt the pane's tty as its own.
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NOCTTY)
        .open(&tty)?;
    f.write_all(b"\x07")?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alert_command_is_kept_whole_for_the_shell() {
        assert_eq!(
            alert_command("  cat >> \"$HOME/a b\" | tee -a x  ").unwrap(),
            "cat >> \"$HOME/a b\" | tee -a x"
        );
        assert!(alert_command("   ").is_none());
    }

    #[test]
    fn alert_json_reaches_a_shell_pipeline_on_stdin_only() {
        let dir = tempfile::tempdir().unwrap();
        let config = SinkConfig {
            socket: Socket::Default,
            message: false,
            bell: false,
            notifier: None,
            // Quotes, a space in the path, a pipe: all the shell's to read.
            command: Some(format!(
                "cd '{}' && tr a-z A-Z | cat >> \"alerts log.jsonl\"",
                dir.path().display()
            )),
            timeout: Duration::from_secs(5),
        };
        let alert = Alert {
            agent: None,
            pane: "%1".into(),
            target: "w:1.0".into(),
            window: "@1".into(),
            state: crate::state::State::Attention,
            reason: Some("$(touch pwned) `touch pwned2`; touch pwned3".into()),
            turn_key: None,
            transcript: None,
            at: chrono::Utc::now(),
            key: "k".into(),
            request: None,
            usage: None,
        };
        deliver(&Tmux::new(Socket::Default), &config, &alert);
        let got = std::fs::read_to_string(dir.path().join("alerts log.jsonl")).unwrap();
        assert!(
            got.contains("$(TOUCH PWNED) `TOUCH PWNED2`; TOUCH PWNED3"),
            "{got}"
        );
        for name in ["pwned", "pwned2", "pwned3"] {
            assert!(!dir.path().join(name).exists(), "{name} was executed");
        }
    }
}
