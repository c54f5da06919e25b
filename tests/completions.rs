//! `agentpane completions SHELL` and the hidden `agentpane man`, run as a user or a packager
//! would: non-empty, about this program's real subcommands, and (for the man page) roff.

mod common;

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
    // A packager's command, not a user's: hidden from --help.
    let (_, help, _) = run(&["--help"]);
    assert!(!help.contains("\n  man "), "{help}");
}
