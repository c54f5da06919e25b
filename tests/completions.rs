//! `agentpane completions SHELL`, `agentpane man` and `--help`, run as a user or a packager
//! would: about this program's real, visible subcommands and flags; the server flags only
//! where a command talks to tmux.

mod common;

use std::process::{Command, Stdio};

use clap::CommandFactory;
use common::TmuxServer;

fn run(args: &[&str]) -> (i32, String, String) {
    let world = tempfile::tempdir().unwrap();
    let out = common::agentpane_in(world.path())
        .args(args)
        .output()
        .expect("run agentpane");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn completions_for_each_shell_name_the_subcommands() {
    for (shell, marker) in [
        ("bash", "complete -F _agentpane"),
        ("zsh", "#compdef agentpane"),
        ("fish", "complete -c agentpane"),
    ] {
        let (code, stdout, stderr) = run(&["completions", shell]);
        assert_eq!(code, 0, "{shell}: {stderr}");
        assert!(stdout.contains(marker), "{shell}: no {marker:?}");
        for sub in [
            "route",
            "channel",
            "watch",
            "relay",
            "completions",
            "answer",
        ] {
            assert!(stdout.contains(sub), "{shell} completions lack {sub}");
        }
    }
}

#[test]
fn unknown_shell_is_a_usage_error() {
    let (code, stdout, stderr) = run(&["completions", "tcsh"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stdout.is_empty());
    assert!(
        stderr.contains("bash"),
        "the error lists the shells: {stderr}"
    );
}

#[test]
fn man_page_is_roff_with_the_subcommands() {
    let (code, stdout, stderr) = run(&["man"]);
    assert_eq!(code, 0, "{stderr}");
    // clap_mangen puts two groff compatibility lines (`.ie`/`.el`) before the title.
    let first_macro = stdout
        .lines()
        .find(|l| l.starts_with(".TH") || l.starts_with(".SH"))
        .unwrap_or_default();
    assert!(
        first_macro.starts_with(".TH agentpane 1"),
        "{first_macro:?}"
    );
    assert!(stdout.contains(".SH NAME"));
    assert!(stdout.contains(".SH SUBCOMMANDS"));
    for sub in ["route", "channel", "completions"] {
        assert!(stdout.contains(sub), "man page lacks {sub}");
    }
}

/// What the CLI hides, at any level: `(subcommand names, long flag names)`.
fn hidden(cmd: &clap::Command) -> (Vec<String>, Vec<String>) {
    let mut flags: Vec<String> = cmd
        .get_arguments()
        .filter(|a| a.is_hide_set())
        .filter_map(|a| a.get_long().map(str::to_owned))
        .collect();
    let mut subs = Vec::new();
    for sub in cmd.get_subcommands() {
        if sub.is_hide_set() {
            subs.push(sub.get_name().to_owned());
        }
        let (s, f) = hidden(sub);
        subs.extend(s);
        flags.extend(f);
    }
    (subs, flags)
}

#[test]
fn completions_offer_no_hidden_command_or_flag() {
    let (subs, flags) = hidden(&agentpane::cli::Cli::command());
    assert!(subs.contains(&"route-menu".to_owned()), "{subs:?}");
    assert!(flags.contains(&"exit-after".to_owned()), "{flags:?}");
    // How each shell's script offers a subcommand and a long flag.
    type Offers = fn(&str) -> String;
    let shells: [(&str, Offers, Offers); 5] = [
        ("bash", |s| format!("agentpane,{s})"), |f| format!("--{f} ")),
        ("zsh", |s| format!("'{s}:"), |f| format!("'--{f}[")),
        ("fish", |s| format!("-a \"{s}\""), |f| format!("-l {f} ")),
        (
            "elvish",
            |s| format!("cand {s} "),
            |f| format!("cand --{f} "),
        ),
        (
            "powershell",
            |s| format!("'agentpane;{s}'"),
            |f| format!("'--{f}'"),
        ),
    ];
    for (shell, offers_sub, offers_flag) in shells {
        let (code, stdout, stderr) = run(&["completions", shell]);
        assert_eq!(code, 0, "{shell}: {stderr}");
        assert!(stdout.contains(&offers_sub("status")), "{shell}: no status");
        assert!(stdout.contains(&offers_flag("json")), "{shell}: no --json");
        for sub in &subs {
            assert!(
                !stdout.contains(&offers_sub(sub)),
                "{shell} offers hidden {sub}"
            );
        }
        for flag in &flags {
            assert!(
                !stdout.contains(&offers_flag(flag)),
                "{shell} offers hidden --{flag}"
            );
        }
    }
}

#[test]
fn man_page_has_exit_status_and_names_no_missing_page() {
    let (code, page, stderr) = run(&["man"]);
    assert_eq!(code, 0, "{stderr}");
    let section = page
        .split(".SH \"EXIT STATUS\"")
        .nth(1)
        .expect("an EXIT STATUS section");
    for code in 0..=6 {
        assert!(
            section.contains(&format!("\\fB{code}\\fR")),
            "EXIT STATUS lacks {code}: {section}"
        );
    }
    // No `agentpane-classify(1)`: there are no per-command pages.
    for line in page.lines().filter(|l| l.contains("(1)")) {
        let line = line.replace("\\-", "-");
        assert!(
            !line.contains("agentpane-"),
            "a page that does not exist: {line}"
        );
    }
}

#[test]
fn help_lists_what_the_readme_runs() {
    let (_, help, _) = run(&["--help"]);
    for sub in ["man", "serve", "doctor", "completions"] {
        assert!(
            help.contains(&format!("\n  {sub} ")),
            "{sub} not in --help: {help}"
        );
    }
    for hidden in ["route-menu", "deliver-stdin", "nudge"] {
        assert!(!help.contains(&format!("\n  {hidden} ")), "{help}");
    }
}

#[test]
fn server_flags_are_listed_only_by_commands_that_talk_to_tmux() {
    for cmd in [
        &["classify"][..],
        &["completions"],
        &["man"],
        &["demo"],
        &["hook"],
        &["hooks", "install"],
        &["channel", "send"],
    ] {
        let (code, help, stderr) = run(&[cmd, &["--help"]].concat());
        assert_eq!(code, 0, "{cmd:?}: {stderr}");
        assert!(!help.contains("--socket-name"), "{cmd:?} lists -L: {help}");
        assert!(!help.contains("--host"), "{cmd:?} lists --host: {help}");
    }
    for cmd in [
        "status", "panes", "last", "route", "pick", "answer", "doctor", "watch",
    ] {
        let (_, help, _) = run(&[cmd, "--help"]);
        assert!(help.contains("-L, --socket-name"), "{cmd} lacks -L: {help}");
        assert!(help.contains("--host"), "{cmd} lacks --host: {help}");
    }
}

#[test]
fn server_flags_work_before_and_after_the_subcommand() {
    let server = TmuxServer::start();
    let nowhere = format!("agentpane-test-nowhere-{}", std::process::id());
    // `server.agentpane` puts `-L <server>` before the subcommand. The live private server
    // answers (exit 0); one that does not exist is exit 3: a flag after the subcommand wins.
    let run = server.agentpane(&["panes", "--json"]);
    assert_eq!(run.code, 0, "{run:?}");
    let run = server.agentpane(&["panes", "--json", "-L", &nowhere]);
    assert_eq!(run.code, 3, "{run:?}");
    let run = server.agentpane(&["panes", "--json", "-L", &server.name]);
    assert_eq!(run.code, 0, "{run:?}");
    let home = tempfile::tempdir().unwrap();
    let out = common::agentpane_in(home.path())
        .args(["panes", "--json", "-L", &nowhere])
        .output()
        .expect("run agentpane");
    assert_eq!(out.status.code(), Some(3), "{out:?}");
}

#[test]
fn demo_refuses_a_server_flag_instead_of_ignoring_it() {
    let tmp = tempfile::tempdir().unwrap();
    for args in [
        &["demo", "--seconds", "1", "-L", "work"][..],
        &["-L", "work", "demo", "--seconds", "1"],
        &["-S", "/nonexistent/sock", "demo", "--seconds", "1"],
    ] {
        let out = common::agentpane_in(tmp.path())
            .env("TMPDIR", tmp.path())
            .args(args)
            .stdin(Stdio::null())
            .output()
            .expect("run agentpane");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains("-L"), "{args:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{args:?} ran the demo");
    }
}

#[test]
fn readme_completion_lines_work_in_a_fresh_home() {
    let lines = common::readme::completion_lines();
    assert!(
        lines.iter().any(|l| l.contains("completions bash")),
        "{lines:?}"
    );
    let home = tempfile::tempdir().unwrap();
    let bin_dir = std::path::Path::new(common::agentpane_bin())
        .parent()
        .unwrap();
    let path = format!("{}:/usr/bin:/bin", bin_dir.display());
    for line in &lines {
        let out = Command::new("sh")
            .args(["-ec", line])
            .env_clear()
            .env("HOME", home.path())
            .env("PATH", &path)
            .env("AGENTPANE_STATE_DIR", home.path().join("state"))
            .output()
            .expect("run sh");
        assert!(
            out.status.success(),
            "{line}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    for file in [
        ".local/share/bash-completion/completions/agentpane",
        ".zfunc/_agentpane",
        ".config/fish/completions/agentpane.fish",
        ".local/share/man/man1/agentpane.1",
    ] {
        let len = std::fs::metadata(home.path().join(file)).map_or(0, |m| m.len());
        assert!(len > 0, "{file} was not written");
    }
}
