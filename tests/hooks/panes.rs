//! Prompt detection on recorded pane captures (fixtures/panes/).

use super::*;

#[test]
fn prompt_detection_on_recorded_captures() {
    let cases: &[(&str, Option<(PromptKind, &str)>)] = &[
        (
            "claude/aoe-2.1.2-permission-bash.txt",
            Some((PromptKind::Permission, "permission: Bash")),
        ),
        (
            "claude/aoe-2.1.2-question-checkbox.txt",
            Some((PromptKind::Question, "question")),
        ),
        ("claude/aoe-2.1.2-running-thinking.txt", None),
        (
            "claude/claudeless-2.1.12-permission-bash.txt",
            Some((PromptKind::Permission, "permission: Bash")),
        ),
        (
            "claude/claudeless-2.1.12-permission-edit.txt",
            Some((PromptKind::Permission, "permission: Edit")),
        ),
        (
            "claude/claudeless-2.1.12-permission-write.txt",
            Some((PromptKind::Permission, "permission: Write")),
        ),
        ("claude/claudeless-2.1.12-trust-prompt.txt", None),
        ("claude/claudeless-2.1.12-after-response.txt", None),
        ("claude/reconstructed-prose-proceed.txt", None),
        ("claude/reconstructed-prose-proceed-line.txt", None),
        (
            "codex/codex-tui-approval-exec.txt",
            Some((PromptKind::Permission, "permission: echo")),
        ),
        (
            "codex/codex-tui-approval-exec-2025.txt",
            Some((PromptKind::Permission, "permission: echo")),
        ),
        (
            "codex/codex-tui-approval-patch.txt",
            Some((PromptKind::Permission, "permission: edit")),
        ),
        (
            "codex/reconstructed-ts-allow-command.txt",
            Some((PromptKind::Permission, "permission: npm")),
        ),
        ("codex/reconstructed-prose-would-you-like.txt", None),
    ];
    let listed: Vec<&str> = cases.iter().map(|c| c.0).collect();
    for dir in ["claude", "codex"] {
        for entry in fs::read_dir(fixture(dir)).unwrap().flatten() {
            let rel = format!("{dir}/{}", entry.file_name().to_string_lossy());
            assert!(
                listed.contains(&rel.as_str()),
                "fixture {rel} has no expectation"
            );
        }
    }
    for (file, want) in cases {
        let text = fs::read_to_string(fixture(file)).unwrap();
        let got = detect_prompt(&text).map(|e| match e {
            PaneEvidence::Prompt(p) => (p.kind, p.reason()),
            other => panic!("{file}: {other:?}"),
        });
        let want = want.map(|(k, r)| (k, r.to_string()));
        assert_eq!(got, want, "{file}");
    }
}

#[test]
fn prompt_detection_survives_ansi_and_box_borders() {
    let text = fs::read_to_string(fixture("claude/claudeless-2.1.12-permission-edit.txt")).unwrap();
    let colored: String = text
        .lines()
        .map(|l| format!("\x1b[38;5;246m{l}\x1b[0m\n"))
        .collect();
    assert!(matches!(
        detect_prompt(&colored),
        Some(PaneEvidence::Prompt(_))
    ));
    let boxed = "│ Bash command                              │\n│   rm -rf build                            │\n│ Do you want to proceed?                   │\n│ ❯ 1. Yes                                  │\n│   2. No, and tell Claude what to do differently (esc) │\n";
    let Some(PaneEvidence::Prompt(p)) = detect_prompt(boxed) else {
        panic!("boxed dialog not recognised");
    };
    assert_eq!(p.reason(), "permission: Bash");
    for prose in [
        "I will proceed with the refactor now.\n",
        "Do you want to proceed? Let me know.\n1. Yes\n",
        "Should we proceed?\n❯ 1. Yes\n",
        "",
    ] {
        assert_eq!(detect_prompt(prose), None, "{prose:?}");
    }
}
