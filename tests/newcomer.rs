//! A newcomer's first hour, scripted: a fresh clone in a fresh HOME (no `~/.tmux.conf`, no
//! `~/.config`), each README step in the README's order, its commands taken from README.md
//! itself — so this test breaks when the README changes and what it says stops working.
//!
//! 1. the demo (the top block's `cargo run --release -- demo`, run as the built binary with
//!    `--seconds`: `cargo run --release` would only build that binary again, for minutes);
//! 2. the tests: the top block's `cargo test` is this suite, which is running;
//! 3. the `run-shell` install: the README's tmux lines and its `run-shell
//!    ~/src/agentpane/agentpane.tmux`, in the `~/.tmux.conf` of a server `a` whose PATH has
//!    cargo (a fake one that puts the binary under test where `cargo build --release` would:
//!    the plugin's own build step runs, a second real build of the clone would take minutes;
//!    for the same reason the install table's `cargo install` rows are not run);
//! 4. the TPM install on a second server `b` beside it (its own config, the README's lines
//!    and TPM's `run` line; TPM is a local stand-in that runs the cloned plugin as TPM's `run`
//!    does, no network): first without cargo (the hint), then with cargo as the README's way
//!    out says (`tmux set-environment -g PATH "$PATH"`, then `prefix + I`);
//! 5. the keys of the README's key table, bound on both servers;
//! 6. `doctor` with the binary where the README says it is, exit 0 on both servers;
//! 7. the completion lines, into the fresh HOME;
//! 8. a remote host: the README's `@agentpane-hosts` line and `tmux source ~/.tmux.conf`, the
//!    host a real sshd (tests/common/sshd.rs) in front of a third server.
//!
//! Throughout, the second server's status never shows the first's state or hosts.
//! The details of each step have their own tests (tests/demo.rs, tests/first_run.rs,
//! tests/plugin.rs, tests/doctor.rs, tests/completions.rs, tests/remote.rs); this is the
//! ordered walk through all of them in one HOME.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use common::install::{
    assert_bare_system_path, cargo_calls, clone_to, fake_cargo, write_script, SYSTEM_PATH,
};
use common::readme::{block, code_starting, commands, section, README};
use common::sshd::Sshd;
use common::{
    agentpane_with_env, wait_until, wait_until_else, world_env, FakeAgent, TmuxServer,
    CLAUDE_ANSWER, DEADLINE,
};

/// The newcomer's world: one HOME (and the state and agent folders in it) for every shell,
/// server and run.
struct World {
    root: tempfile::TempDir,
}

impl World {
    fn new() -> World {
        let root = tempfile::tempdir().expect("temp dir");
        std::fs::create_dir_all(root.path().join("home")).expect("HOME");
        World { root }
    }

    fn home(&self) -> PathBuf {
        self.root.path().join("home")
    }

    /// A folder of the world (made).
    fn dir(&self, name: &str) -> PathBuf {
        let d = self.root.path().join(name);
        std::fs::create_dir_all(&d).expect("a folder");
        d
    }

    /// The world's environment, with `PATH` and `more`.
    fn env(&self, path: &str, more: &[(&str, &str)]) -> Vec<(String, String)> {
        let mut env: Vec<(String, String)> = world_env(self.root.path())
            .into_iter()
            .map(|(k, v)| (k, v.to_string_lossy().into_owned()))
            .collect();
        env.push(("PATH".into(), path.into()));
        env.extend(more.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        env
    }

    /// A tmux server `-L <unique>` of this world, started as a person starts one: `tmux -f
    /// CONF new-session`.
    fn server(&self, conf: &Path, path: &str, more: &[(&str, &str)]) -> TmuxServer {
        let env = self.env(path, more);
        let refs: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        TmuxServer::start_with_config(&refs, conf)
    }

    /// One README line in `sh` in this world with `path`, as typed in a shell inside
    /// `server` when one is given (`$TMUX` names it, as tmux sets it for its panes).
    fn sh(&self, line: &str, path: &str, server: Option<&TmuxServer>) -> Output {
        let out = self.run(line, path, server);
        assert!(
            out.status.success(),
            "`{line}` failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }

    /// [`World::sh`] whatever its exit code.
    fn run(&self, line: &str, path: &str, server: Option<&TmuxServer>) -> Output {
        let mut cmd = Command::new("sh");
        cmd.args(["-ec", line])
            .env_clear()
            .envs(self.env(path, &[]))
            .stdin(Stdio::null());
        if let Some(s) = server {
            let socket = s.tmux(&["display-message", "-p", "#{socket_path}"]);
            cmd.env("TMUX", format!("{socket},1,0"));
        }
        cmd.output().expect("run sh")
    }
}

/// `agentpane ARGS` on `server`, from a shell whose PATH has the binary at `exe` (where
/// the README says the install put it).
fn agentpane_at(world: &World, exe: &Path, server: &TmuxServer, args: &str) -> Output {
    let path = format!("{}:{SYSTEM_PATH}", exe.parent().unwrap().display());
    world.run(&format!("agentpane -L {} {args}", server.name), &path, None)
}

fn option(server: &TmuxServer, name: &str) -> String {
    server.tmux(&["show", "-gqv", name])
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// A Claude Code version the real-client suite verifies (tests/real/clients.txt).
fn verified_claude() -> String {
    include_str!("real/clients.txt")
        .lines()
        .filter_map(|l| l.strip_prefix("claude "))
        .filter_map(|l| l.split_whitespace().next())
        .next_back()
        .expect("a pinned claude")
        .to_string()
}

/// The keys of the README's key table: (key, its option); `off` keys are unbound.
fn readme_keys(install: &str) -> Vec<(String, String)> {
    install
        .lines()
        .filter(|l| l.starts_with("| `") || l.starts_with("| off |"))
        .map(|l| {
            let cells: Vec<&str> = l.split('|').map(|c| c.trim().trim_matches('`')).collect();
            (cells[1].to_string(), cells[2].to_string())
        })
        .collect()
}

/// The prefix-table line of `key` on `server`, if bound.
fn binding(server: &TmuxServer, key: &str) -> Option<String> {
    let keys = server.tmux(&["list-keys", "-T", "prefix"]);
    keys.lines()
        .find(|l| l.split_whitespace().nth(3) == Some(key))
        .map(str::to_string)
}

/// The stand-in for TPM: what its `run` line does for a plugin already cloned — each listed
/// plugin's `*.tmux` files run, output dropped — and `prefix + I`, which runs it again.
fn tpm_stand_in(home: &Path) {
    let dir = home.join(".tmux/plugins/tpm");
    std::fs::create_dir_all(&dir).unwrap();
    let script = "#!/bin/sh\n\
                  tmux bind-key I run-shell \"$0\"\n\
                  for p in $(tmux show-options -gqv @plugin); do\n\
                  \tfor f in \"$HOME/.tmux/plugins/${p##*/}\"/*.tmux; do \"$f\" >/dev/null 2>&1; done\n\
                  done\n";
    write_script(&dir.join("tpm"), script);
}

#[test]
fn a_newcomer_follows_the_readme_in_order() {
    assert_bare_system_path();
    let world = World::new();
    let home = world.home();
    assert!(!home.join(".tmux.conf").exists() && !home.join(".config").exists());
    let top = block(README, "sh");
    let install = section("## Install");

    // 1. The demo, as the README's first line says.
    let demo = commands(top)
        .into_iter()
        .find(|l| l.contains(" demo"))
        .expect("the demo line");
    let demo = demo.split('#').next().unwrap().trim();
    let args = demo
        .strip_prefix("cargo run --release -- ")
        .unwrap_or_else(|| panic!("the demo line runs the built binary: {demo}"));
    let tmp = world.dir("tmp");
    let out = agentpane_with_env(&world_env(world.root.path()))
        .args(args.split_whitespace())
        .args(["--seconds", "3"])
        .env("TMPDIR", &tmp)
        .stdin(Stdio::null())
        .output()
        .expect("run the demo");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        text(&out).contains("what `agentpane panes` shows now:"),
        "{}",
        text(&out)
    );

    // 2. The tests: the README's command is the suite this test is part of.
    assert!(commands(top).iter().any(|l| l.starts_with("cargo test")));

    // 3. The run-shell install: a clone in ~/src/agentpane, the README's tmux lines with its
    // run-shell line last, on server `a` whose PATH has cargo.
    let clone = clone_to(&home.join("src/agentpane"));
    let lines = commands(block(install, "tmux"));
    assert_eq!(lines.len(), 4, "{lines:?}");
    assert!(lines[3].starts_with("set -g @plugin"), "{lines:?}");
    let run_shell = code_starting(install, "run-shell ");
    let conf_a = home.join(".tmux.conf");
    std::fs::write(&conf_a, format!("{}\n{run_shell}\n", lines[..3].join("\n"))).unwrap();
    let cargo_a = world.dir("cargo-bin");
    fake_cargo(&cargo_a);
    std::fs::write(cargo_a.join("go"), b"").unwrap();
    let path_a = format!("{}:{SYSTEM_PATH}", cargo_a.display());
    // Its remote host (step 8) is reached through the test sshd's client config.
    let devbox = TmuxServer::start();
    devbox.spawn(&FakeAgent::claude().fixture(CLAUDE_ANSWER));
    let sshd = Sshd::new(&devbox);
    let ssh_config = sshd.config();
    let runtime = world.dir("run");
    let a = world.server(
        &conf_a,
        &path_a,
        &[
            ("AGENTPANE_SSH_CONFIG", ssh_config.to_str().unwrap()),
            ("XDG_RUNTIME_DIR", runtime.to_str().unwrap()),
        ],
    );
    a.tmux(&["set", "-g", "@agentpane-notify", "off"]);
    a.spawn(
        &FakeAgent::claude()
            .fixture(CLAUDE_ANSWER)
            .env("AGENTPANE_FAKE_VERSION", &verified_claude()),
    );
    let built_a = clone.join("target/release/agentpane");
    wait_until(DEADLINE, "server a's segment", || {
        option(&a, "@agentpane_status") == "●1"
    });
    assert_eq!(option(&a, "@agentpane_bin"), built_a.to_str().unwrap());

    // 4. TPM on server `b`, beside `a`: the README's lines with TPM's `run` line, the plugin
    // where TPM clones it, no cargo on b's PATH.
    let tpm_run = code_starting(install, "run '~/.tmux/plugins/tpm/tpm'");
    let plugin = clone_to(&home.join(".tmux/plugins/agentpane"));
    tpm_stand_in(&home);
    let conf_b = world.dir("b").join("tmux.conf");
    std::fs::write(&conf_b, format!("{}\n{tpm_run}\n", lines.join("\n"))).unwrap();
    let b = world.server(&conf_b, SYSTEM_PATH, &[]);
    let hint = "agentpane: no binary — prefix + H";
    wait_until(DEADLINE, "the no-binary hint on b", || {
        option(&b, "@agentpane_status") == hint
    });
    // The way out the README gives: cargo on the PATH of a new shell, the server given it,
    // `prefix + I` (the stand-in's binding runs TPM again).
    let set_path = code_starting(install, "tmux set-environment -g PATH");
    let cargo_b = world.dir("cargo-bin-b");
    fake_cargo(&cargo_b);
    std::fs::write(cargo_b.join("go"), b"").unwrap();
    let path_b = format!("{}:{SYSTEM_PATH}", cargo_b.display());
    world.sh(&set_path, &path_b, Some(&b));
    let prefix_i = binding(&b, "I").expect("TPM's prefix + I");
    assert!(prefix_i.contains("tpm"), "{prefix_i}");
    b.tmux(&[
        "run-shell",
        &home.join(".tmux/plugins/tpm/tpm").to_string_lossy(),
    ]);
    let built_b = plugin.join("target/release/agentpane");
    wait_until_else(
        DEADLINE,
        "b's plugin built and its watcher running",
        || option(&b, "@agentpane_bin") == built_b.to_str().unwrap() && b.watcher_pid().is_some(),
        || {
            format!(
                "cargo calls {:?}, PATH {:?}, status {:?}, bin {:?}, build.log {:?}",
                cargo_calls(&cargo_b),
                b.tmux(&["show-environment", "-g", "PATH"]),
                option(&b, "@agentpane_status"),
                option(&b, "@agentpane_bin"),
                std::fs::read_to_string(world.root.path().join("state/build.log")),
            )
        },
    );
    assert_eq!(option(&b, "@agentpane_status"), "", "b has no agent");

    // 5. The keys of the README's table, bound on both servers once the plugin run that
    // started the watcher is done ("off" ones unbound).
    let keys = readme_keys(install);
    assert!(keys.len() >= 5, "{keys:?}");
    let ours = |line: Option<String>| line.is_some_and(|l| l.contains("agentpane"));
    for server in [&a, &b] {
        wait_until_else(
            DEADLINE,
            &format!("the README's keys on {}", server.name),
            || {
                keys.iter()
                    .filter(|(key, _)| key != "off")
                    .all(|(key, _)| ours(binding(server, key)))
            },
            || server.tmux(&["list-keys", "-T", "prefix"]),
        );
    }

    // 6. doctor, as the README runs it from a shell, with the binary where it says the
    // plugin put it: exit 0 on a fresh, working install, each server its own.
    let doctor = code_starting(section("## Troubleshooting"), "agentpane -L NAME doctor");
    let doctor = doctor.strip_prefix("agentpane -L NAME ").unwrap();
    for (server, exe) in [(&a, &built_a), (&b, &built_b)] {
        let out = agentpane_at(&world, exe, server, doctor);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    }

    // 7. Completions, into the fresh HOME, with the built binary on PATH.
    let path_c = format!("{}:/usr/bin:/bin", built_a.parent().unwrap().display());
    for line in common::readme::completion_lines() {
        world.sh(&line, &path_c, None);
    }
    for file in [
        ".local/share/bash-completion/completions/agentpane",
        ".zfunc/_agentpane",
        ".config/fish/completions/agentpane.fish",
        ".local/share/man/man1/agentpane.1",
    ] {
        let len = std::fs::metadata(home.join(file)).map_or(0, |m| m.len());
        assert!(len > 0, "{file} was not written");
    }

    // 8. A remote host: the README's hosts line in ~/.tmux.conf, then its reload command
    // from a shell in server a.
    let remote = section("### Remote hosts over SSH");
    let hosts = code_starting(remote, "set -g @agentpane-hosts");
    let reload = code_starting(remote, "tmux source");
    assert!(remote.contains(&format!(
        "`{hosts}` in `~/.tmux.conf`, above the plugin line"
    )));
    let conf = std::fs::read_to_string(&conf_a).unwrap();
    let conf = conf.replace(&run_shell, &format!("{hosts}\n{run_shell}"));
    std::fs::write(&conf_a, conf).unwrap();
    world.sh(&reload, &path_b, Some(&a));
    wait_until_else(
        Duration::from_secs(40),
        "devbox's agent on a",
        || {
            let s = option(&a, "@agentpane_status");
            s.contains("●2") && s.contains("gpu1 ✕")
        },
        || {
            format!(
                "status {:?}, hosts {:?}, watch.log {}",
                option(&a, "@agentpane_status"),
                option(&a, "@agentpane-hosts"),
                common::sshd::read(&a.server_dir().join("watch.log"))
            )
        },
    );
    let out = agentpane_at(&world, &built_a, &a, "panes");
    assert!(text(&out).contains("devbox:main:"), "{}", text(&out));

    // Two servers, one HOME: b never shows a's agents or hosts, now that a shows both.
    assert_eq!(option(&b, "@agentpane_status"), "");
    let out = agentpane_at(&world, &built_b, &b, "status");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "",
        "{}",
        text(&out)
    );
    drop(sshd);
}
