//! The `ssh` command line (docs/design.md#remote-hosts): batch mode (never a prompt), a
//! connect timeout, and one shared connection per host (ControlMaster, its socket at a short
//! private path, [`super::control`]), so the watcher's stream, `last`, `route` and the picker
//! ride one TCP connection. Host resolution is ssh's own (`~/.ssh/config`, keys, jump hosts, the
//! agent); `$AGENTPANE_SSH_CONFIG` names another config file (`ssh -F`).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{bail, Context, Result};

use super::control::{self, Folder};
use super::Host;
use crate::exec::{self, Output};

/// Seconds ssh may take to connect before a host counts as unreachable.
pub const CONNECT_TIMEOUT_SECS: u32 = 5;
/// Seconds a shared connection stays open after its last user.
const PERSIST_SECS: u32 = 120;

/// How agentpane runs ssh.
#[derive(Debug, Clone)]
pub struct Ssh {
    /// `-F FILE` when set.
    config: Option<PathBuf>,
    /// Where the shared connections' sockets live (private).
    control: Folder,
    /// The agentpane to run on the remote (`agentpane`, found on the remote PATH).
    bin: String,
}

impl Ssh {
    /// From the environment: `$AGENTPANE_SSH_CONFIG`, `$AGENTPANE_REMOTE_BIN`, the sockets'
    /// folder ([`control::choose`]: `$XDG_RUNTIME_DIR`, `$TMPDIR`, `/tmp`).
    pub fn from_env() -> Ssh {
        let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
        let (runtime, tmpdir) = (var("XDG_RUNTIME_DIR"), var("TMPDIR"));
        let control = control::choose(
            runtime.as_deref().map(Path::new),
            tmpdir.as_deref().map(Path::new),
            crate::paths::euid(),
        );
        Ssh {
            config: var("AGENTPANE_SSH_CONFIG").map(PathBuf::from),
            control,
            bin: var("AGENTPANE_REMOTE_BIN")
                .and_then(|b| b.into_string().ok())
                .unwrap_or_else(|| "agentpane".into()),
        }
    }

    /// The arguments before the host: options only.
    fn options(&self, host: &Host) -> Vec<OsString> {
        let mut out: Vec<OsString> = Vec::new();
        if let Some(cfg) = &self.config {
            out.push("-F".into());
            out.push(cfg.into());
        }
        let control = self
            .control
            .path
            .join(control::socket_name(self.config.as_deref(), host));
        for opt in [
            "BatchMode=yes".to_string(),
            format!("ConnectTimeout={CONNECT_TIMEOUT_SECS}"),
            "ControlMaster=auto".to_string(),
            format!("ControlPath={}", control.display()),
            format!("ControlPersist={PERSIST_SECS}"),
            "ServerAliveInterval=15".to_string(),
            "ServerAliveCountMax=2".to_string(),
        ] {
            out.push("-o".into());
            out.push(opt.into());
        }
        out
    }

    /// `ssh OPTIONS -T -- HOST agentpane ARGS…`. Every remote argument is a fixed word or a
    /// checked value; anything else is refused here, before a shell on the host sees it.
    pub fn command(&self, host: &Host, remote: &[&str]) -> Result<Command> {
        let dir = &self.control.path;
        if self.control.shared_tmp {
            control::ensure_own_private(dir, crate::paths::euid())
        } else {
            crate::paths::ensure_private_dir(dir)
        }
        .with_context(|| format!("ssh control folder {}", dir.display()))?;
        let mut words = vec![self.bin.as_str()];
        words.extend_from_slice(remote);
        for w in &words {
            plain(w)?;
        }
        let mut cmd = Command::new("ssh");
        cmd.args(self.options(host))
            .arg("-T")
            .arg("--")
            .arg(host.as_str())
            .args(words);
        Ok(cmd)
    }

    /// Runs `agentpane ARGS…` on `host` and waits at most `timeout`, `stdin` fed on ssh's
    /// stdin. Returns the remote exit code (ssh's 255: the connection failed) and the output.
    pub fn run(
        &self,
        host: &Host,
        remote: &[&str],
        stdin: Option<&[u8]>,
        timeout: Duration,
    ) -> Result<(i32, Output)> {
        let cmd = self.command(host, remote)?;
        let (code, out) = exec::run_command(cmd, "ssh", stdin, timeout)
            .with_context(|| format!("ssh to {host}"))?;
        if code == 255 {
            bail!(
                "cannot reach {host} over ssh: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        Ok((code, out))
    }

    /// `ssh [-F FILE] -t -- HOST tmux attach -t TARGET` as words, for a local window a person
    /// types in (no batch mode: it may ask for what it needs). `target` must be plain.
    pub fn attach_words(&self, host: &Host, target: &str) -> Result<Vec<String>> {
        plain(target)?;
        let mut out = vec!["ssh".to_string()];
        if let Some(cfg) = &self.config {
            out.extend(["-F".to_string(), cfg.display().to_string()]);
        }
        out.extend(["-t", "--", host.as_str(), "tmux", "attach", "-t", target].map(String::from));
        Ok(out)
    }

    /// Ends the shared connection to `host`, if one is open (`ssh -O exit`).
    pub fn close(&self, host: &Host) {
        let mut args = self.options(host);
        args.extend([
            "-O".into(),
            "exit".into(),
            "--".into(),
            host.as_str().into(),
        ]);
        let _ = exec::run("ssh", args, None, Duration::from_secs(5));
    }
}

/// What a remote agentpane's failure means, from its exit code and the line it printed: a
/// missing agentpane or another version of it are said in words a person can act on.
pub fn explain(host: &Host, code: Option<i32>, line: &str) -> String {
    let line = line.trim();
    if code == Some(127) || line.ends_with("command not found") || line.ends_with("not found") {
        format!(
            "{line}: agentpane is not on {host}'s PATH for `ssh {host} COMMAND` (install it \
             there, or set $AGENTPANE_REMOTE_BIN)"
        )
    } else if line.contains("unrecognized subcommand") || line.contains("unexpected argument") {
        format!("{line}: {host} runs another agentpane; install the same agentpane on both hosts")
    } else {
        line.to_string()
    }
}

/// A word for the remote command line: letters, digits and `% . _ : @ = / + -` only.
fn plain(word: &str) -> Result<()> {
    let ok = !word.is_empty()
        && word.bytes().all(|b| {
            b.is_ascii_alphanumeric()
                || matches!(
                    b,
                    b'%' | b'.' | b'_' | b':' | b'@' | b'=' | b'/' | b'+' | b'-'
                )
        });
    if !ok {
        bail!("refusing to put `{word}` on a remote command line");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ssh() -> Ssh {
        Ssh {
            config: Some("/tmp/cfg".into()),
            control: Folder {
                path: std::env::temp_dir().join("agentpane-ssh-test"),
                shared_tmp: false,
            },
            bin: "agentpane".into(),
        }
    }

    #[test]
    fn the_command_is_batch_shared_and_ends_options_before_the_host() {
        let host = Host::parse("devbox").unwrap();
        let cmd = ssh().command(&host, &["serve"]).unwrap();
        let args: Vec<String> = cmd
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let joined = args.join(" ");
        assert!(
            joined.starts_with("-F /tmp/cfg -o BatchMode=yes"),
            "{joined}"
        );
        assert!(joined.contains("ControlMaster=auto"), "{joined}");
        assert!(joined.ends_with("-T -- devbox agentpane serve"), "{joined}");
    }

    #[test]
    fn a_missing_or_older_remote_agentpane_is_explained() {
        let host = Host::parse("devbox").unwrap();
        let missing = explain(&host, Some(127), "sh: 1: agentpane: not found");
        assert!(missing.contains("not on devbox's PATH"), "{missing}");
        let older = explain(&host, Some(2), "error: unrecognized subcommand 'serve'");
        assert!(older.contains("install the same agentpane"), "{older}");
        assert_eq!(explain(&host, Some(1), "no answer"), "no answer");
    }

    #[test]
    fn shell_syntax_never_reaches_the_remote_command_line() {
        let host = Host::parse("devbox").unwrap();
        for bad in ["a b", "$(id)", "`id`", "a;b", "'", "\n"] {
            assert!(ssh().command(&host, &["last", bad]).is_err(), "{bad:?}");
        }
    }
}
