//! The test world for `tests/channel.rs`: the real binary, a private state dir and home.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

/// One isolated world: its own state dir and home.
pub struct World {
    _tmp: tempfile::TempDir,
    pub state: PathBuf,
    pub home: PathBuf,
}

impl World {
    pub fn new() -> World {
        let tmp = tempfile::tempdir().unwrap();
        let state = tmp.path().join("state");
        let home = tmp.path().join("home");
        fs::create_dir_all(&home).unwrap();
        World {
            _tmp: tmp,
            state,
            home,
        }
    }

    pub fn cmd(&self, args: &[&str]) -> Command {
        let mut c = crate::common::agentpane_in(self._tmp.path());
        c.args(args)
            .env("AGENTPANE_STATE_DIR", &self.state)
            .env("HOME", &self.home)
            .env_remove("XDG_STATE_HOME")
            .env_remove("CLAUDE_CONFIG_DIR")
            .env_remove("TMUX_PANE")
            .stdin(Stdio::null());
        c
    }

    pub fn run(&self, args: &[&str]) -> Output {
        self.cmd(args).output().unwrap()
    }

    /// Runs and expects exit 0; returns stdout.
    pub fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(
            out.status.success(),
            "{args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    /// Runs and expects exit `code`; returns stderr.
    pub fn fails(&self, args: &[&str], code: i32) -> String {
        let out = self.run(args);
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(code), "{args:?}: stderr {stderr}");
        stderr
    }

    /// A channel owned by the first name, joined by the others.
    pub fn channel(&self, names: &[&str]) -> String {
        let id = self
            .ok(&["channel", "new", "--as", names[0]])
            .trim()
            .to_string();
        for n in &names[1..] {
            self.ok(&["channel", "join", &id, "--as", n]);
        }
        id
    }

    pub fn dir(&self, id: &str) -> PathBuf {
        self.state.join("channels").join(id)
    }

    pub fn message_files(&self, id: &str) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(self.dir(id).join("messages"))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        names
    }

    /// Starts a `channel send` from `from` to `to` of type `kind`.
    pub fn msg(&self, id: &str, from: &str, to: &str, kind: &str) -> Send<'_> {
        let args = [
            "channel", "send", id, "--as", from, "--to", to, "--type", kind,
        ];
        Send {
            world: self,
            args: args.iter().map(|a| a.to_string()).collect(),
        }
    }

    pub fn list(&self, id: &str) -> Value {
        serde_json::from_str(&self.ok(&["channel", "list", id, "--json"])).unwrap()
    }
}

/// A `channel send` being built.
pub struct Send<'w> {
    world: &'w World,
    args: Vec<String>,
}

impl Send<'_> {
    pub fn thread(mut self, thread: &str) -> Self {
        self.args
            .extend(["--thread".to_string(), thread.to_string()]);
        self
    }

    pub fn argv(&self, text: &str) -> Vec<String> {
        let mut args = self.args.clone();
        args.push(text.to_string());
        args
    }

    /// Sends with `--json` and expects success; returns (id, thread).
    pub fn ok(self, text: &str) -> (String, String) {
        let mut args = self.argv(text);
        args.insert(2, "--json".to_string());
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let v: Value = serde_json::from_str(&self.world.ok(&args)).unwrap();
        (
            v["id"].as_str().unwrap().to_string(),
            v["thread"].as_str().unwrap().to_string(),
        )
    }

    /// Sends and expects exit `code`; returns stderr.
    pub fn fails(self, text: &str, code: i32) -> String {
        let args = self.argv(text);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        self.world.fails(&args, code)
    }
}

pub fn mode(path: &Path) -> u32 {
    fs::symlink_metadata(path).unwrap().permissions().mode() & 0o777
}

/// Waits for a child with a generous deadline; kills it and fails when it does not end.
pub fn wait_with_deadline(mut child: Child, deadline: Duration) -> Output {
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > deadline {
            let _ = child.kill();
            panic!("child did not finish within {deadline:?}");
        }
        thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// `Command` built by [`World::cmd`] but running another program with the same environment.
pub trait SpawnWith {
    fn spawn_with(&mut self, program: &str, args: &[&str]) -> Child;
}

impl SpawnWith for Command {
    fn spawn_with(&mut self, program: &str, args: &[&str]) -> Child {
        let mut c = Command::new(program);
        c.args(args);
        for (k, v) in self.get_envs() {
            match v {
                Some(v) => c.env(k, v),
                None => c.env_remove(k),
            };
        }
        c.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        c.spawn().unwrap()
    }
}
