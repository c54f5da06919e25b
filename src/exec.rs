//! The one place that spawns processes. Every external command (tmux, notify-send, alert and
//! transform commands) goes through [`run`], with a timeout, never through a shell.

use std::ffi::OsStr;
use std::io::{Read, Write};
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
    command
        .args(args)
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
    if !status.success() {
        return Err(ExecError::Failed {
            program: program.to_string(),
            status: status.to_string(),
            stderr: String::from_utf8_lossy(&stderr).trim().to_string(),
        });
    }
    Ok(Output { stdout, stderr })
}

fn drain<R: Read + Send + 'static>(pipe: Option<R>) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(mut p) = pipe {
            let _ = p.read_to_end(&mut buf);
        }
        buf
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
