//! The one place that spawns processes, always with a timeout. Programs we name (tmux,
//! osascript) go through [`run`] with their arguments, no shell. Commands the user wrote (the
//! alert command, the `ai` transform) go through [`run_shell`]: `sh -c CMD`, as tmux's
//! `run-shell` does, so the user's quoting, pipes and redirections work; untrusted text (an
//! answer, an alert) only ever reaches them on stdin.

use std::ffi::OsStr;
use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::Duration;

use wait_timeout::ChildExt;

/// Why a command did not produce output.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    #[error("`{program}` is not installed or not on PATH")]
    NotFound { program: String },
    #[error("could not run `{program}`: {source}")]
    Spawn {
        program: String,
        source: std::io::Error,
    },
    #[error("`{program}` did not finish within {timeout:?}")]
    Timeout { program: String, timeout: Duration },
    #[error("`{program}` failed ({status}): {stderr}")]
    Failed {
        program: String,
        status: String,
        stderr: String,
    },
}

/// What a finished command printed.
#[derive(Debug, Clone, Default)]
pub struct Output {
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

/// Finds an executable on PATH.
pub fn which(name: &str) -> Option<std::path::PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| {
            std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

/// Runs `program args…`, feeding `stdin` when given, killing it after `timeout`.
/// A non-zero exit is an error carrying its stderr.
pub fn run<I, S>(
    program: &str,
    args: I,
    stdin: Option<&[u8]>,
    timeout: Duration,
) -> Result<Output, ExecError>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let mut command = Command::new(program);
    command.args(args);
    finish(command, program, stdin, timeout, false)
}

/// Runs a prepared `command` (`program` names it in errors), feeding `stdin` when given,
/// killing it after `timeout`. A non-zero exit is no error: its code is returned with the
/// output (-1 when a signal ended it).
pub fn run_command(
    command: Command,
    program: &str,
    stdin: Option<&[u8]>,
    timeout: Duration,
) -> Result<(i32, Output), ExecError> {
    let (status, out) = finish_status(command, program, stdin, timeout, false)?;
    Ok((status.code().unwrap_or(-1), out))
}

/// Runs the user's `command` through `sh -c`, feeding `stdin` when given. The shell and all
/// it starts get a process group of their own, killed as a whole after `timeout`, so a
/// pipeline's children do not outlive it. Errors name the command; a non-zero exit carries
/// its stderr (`sh: 1: foo: not found` for a typo).
pub fn run_shell(
    command: &str,
    stdin: Option<&[u8]>,
    timeout: Duration,
) -> Result<Output, ExecError> {
    let mut sh = Command::new("sh");
    sh.arg("-c").arg(command).process_group(0);
    finish(sh, command, stdin, timeout, true)
}

/// Runs the user's `command` through `sh -c` in the foreground, as an agent runs a command the
/// user configured for it: its stdin is `head` then whatever `rest` still holds, its stdout
/// and stderr are this process's own (passed through unread). Waits for it, however long:
/// the agent that started this process bounds it. Its exit code (128 + the signal that ended
/// it).
pub fn run_shell_through(
    command: &str,
    head: Vec<u8>,
    mut rest: impl Read + Send + 'static,
) -> std::io::Result<i32> {
    use std::os::unix::process::ExitStatusExt;
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(command)
        .stdin(Stdio::piped())
        .spawn()?;
    let mut pipe = child.stdin.take().expect("stdin is piped");
    // Not joined: a command that never reads its input must not wait for ours to end.
    std::thread::spawn(move || {
        if pipe.write_all(&head).is_ok() {
            let _ = std::io::copy(&mut rest, &mut pipe);
        }
    });
    let status = child.wait()?;
    Ok(status
        .code()
        .unwrap_or_else(|| 128 + status.signal().unwrap_or(0)))
}

/// Spawns `command`, feeds and drains it, waits at most `timeout`; `program` names it in
/// errors. `group`: the command leads its own process group, killed whole on timeout.
fn finish(
    command: Command,
    program: &str,
    stdin: Option<&[u8]>,
    timeout: Duration,
    group: bool,
) -> Result<Output, ExecError> {
    let (status, out) = finish_status(command, program, stdin, timeout, group)?;
    if !status.success() {
        return Err(ExecError::Failed {
            program: program.to_string(),
            status: status.to_string(),
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    Ok(out)
}

/// As [`finish`], with the exit status whatever it is.
fn finish_status(
    mut command: Command,
    program: &str,
    stdin: Option<&[u8]>,
    timeout: Duration,
    group: bool,
) -> Result<(std::process::ExitStatus, Output), ExecError> {
    command
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().map_err(|source| {
        if source.kind() == std::io::ErrorKind::NotFound {
            ExecError::NotFound {
                program: program.to_string(),
            }
        } else {
            ExecError::Spawn {
                program: program.to_string(),
                source,
            }
        }
    })?;
    // Feed stdin and drain stdout/stderr on threads so a chatty or stubborn child never
    // deadlocks us against a full pipe.
    let writer = stdin.map(|data| {
        let data = data.to_vec();
        let mut pipe = child.stdin.take().expect("stdin is piped");
        std::thread::spawn(move || {
            let _ = pipe.write_all(&data);
        })
    });
    let out_reader = drain(child.stdout.take());
    let err_reader = drain(child.stderr.take());
    let status = match child.wait_timeout(timeout) {
        Ok(Some(status)) => status,
        Ok(None) => {
            if group {
                kill_group(child.id());
            }
            let _ = child.kill();
            let _ = child.wait();
            return Err(ExecError::Timeout {
                program: program.to_string(),
                timeout,
            });
        }
        Err(source) => {
            return Err(ExecError::Spawn {
                program: program.to_string(),
                source,
            })
        }
    };
    if let Some(w) = writer {
        let _ = w.join();
    }
    let stdout = out_reader.join().unwrap_or_default();
    let stderr = err_reader.join().unwrap_or_default();
    Ok((status, Output { stdout, stderr }))
}

/// Kills the process group led by `pid` (a child not yet reaped, so the id is still ours).
fn kill_group(pid: u32) {
    if let Ok(pid) = libc::pid_t::try_from(pid) {
        // SAFETY: kill(2) with a negative pid signals a process group; no memory is involved.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
}

fn drain<R: Read + Send + 'static>(pipe: Option<R>) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(mut p) = pipe {
            // At most MAX_OUTPUT kept (a child on another host may be hostile); the rest is
            // read and dropped, so the child never blocks on a full pipe.
            let _ = (&mut p).take(MAX_OUTPUT).read_to_end(&mut buf);
            let _ = std::io::copy(&mut p, &mut std::io::sink());
        }
        buf
    })
}

/// Most bytes of a child's stdout or stderr kept.
const MAX_OUTPUT: u64 = 32 << 20;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn which_finds_sh() {
        assert!(which("sh").is_some());
        assert!(which("agentpane-no-such-notifier").is_none());
    }

    #[test]
    fn captures_stdout_and_feeds_stdin() {
        let out = run(
            "cat",
            [] as [&str; 0],
            Some(b"hello"),
            Duration::from_secs(5),
        )
        .unwrap();
        assert_eq!(out.stdout, b"hello");
    }

    #[test]
    fn a_flood_of_output_is_cut_and_the_child_still_ends() {
        let out = run(
            "head",
            ["-c", "40000000", "/dev/zero"],
            None,
            Duration::from_secs(20),
        )
        .unwrap();
        assert_eq!(out.stdout.len() as u64, MAX_OUTPUT);
    }

    #[test]
    fn missing_program_is_not_found() {
        let err = run(
            "agentpane-no-such-program",
            ["x"],
            None,
            Duration::from_secs(1),
        )
        .unwrap_err();
        assert!(matches!(err, ExecError::NotFound { .. }), "{err}");
    }

    #[test]
    fn hanging_program_times_out() {
        let err = run("sleep", ["5"], None, Duration::from_millis(100)).unwrap_err();
        assert!(matches!(err, ExecError::Timeout { .. }), "{err}");
    }

    #[test]
    fn shell_commands_keep_their_quoting_and_pipes() {
        let dir = tempfile::tempdir().unwrap();
        let out_file = dir.path().join("a b.txt");
        let cmd = format!("tr a-z A-Z | cat > '{}' && echo done", out_file.display());
        let out = run_shell(&cmd, Some(b"hello"), Duration::from_secs(5)).unwrap();
        assert_eq!(std::fs::read_to_string(&out_file).unwrap(), "HELLO");
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "done");
    }

    #[test]
    fn shell_timeout_kills_the_whole_pipeline() {
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("late");
        // The `sleep` in the pipeline is a grandchild: killing only `sh` would leave it running
        // and the marker would appear a second later.
        let cmd = format!("sleep 1 && touch '{}' | cat", marker.display());
        let err = run_shell(&cmd, None, Duration::from_millis(200)).unwrap_err();
        assert!(matches!(err, ExecError::Timeout { .. }), "{err}");
        std::thread::sleep(Duration::from_millis(1500));
        assert!(!marker.exists(), "a pipeline child outlived the timeout");
    }

    #[test]
    fn shell_typo_is_a_failure_naming_the_command() {
        let err = run_shell("agentpane-no-such-cmd --x", None, Duration::from_secs(5)).unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("`agentpane-no-such-cmd --x` failed"),
            "{text}"
        );
        assert!(text.contains("not found"), "{text}");
    }

    #[test]
    fn failure_carries_stderr() {
        let err = run(
            "sh",
            ["-c", "echo boom >&2; exit 3"],
            None,
            Duration::from_secs(5),
        )
        .unwrap_err();
        assert!(err.to_string().contains("boom"), "{err}");
    }
}
