//! The pipeline names no agent (docs/design.md#adding-an-agent): outside `src/agents/`, code
//! asks an agent anything through `agents::of(kind)` and the registry, never through a `match`
//! on its kind or a path into its folder. A fifth agent then costs its folder and one registry
//! line, and no stage quietly treats an agent it does not name as another. The files that
//! must name agents are listed below with the reason; test code (`#[cfg(test)]` modules,
//! `tests.rs`, `testkit.rs`) may name any agent.

use std::fs;
use std::path::{Path, PathBuf};

use agentpane::events::AgentKind;

/// (file or folder under `src/`, why it names agents).
const ALLOWED: &[(&str, &str)] = &[
    ("agents", "each agent's own folder, and the registry"),
    (
        "events.rs",
        "`AgentKind`, the serialised identity, and its names",
    ),
    (
        "fake_agent",
        "the fake agents the tests and the demo run, one per kind",
    ),
    (
        "cmd/hooks.rs",
        "`hooks install|uninstall` edits Claude Code's settings.json, the one agent with \
         installable hooks",
    ),
    (
        "doctor/gather.rs",
        "checks the hooks `agentpane hooks install` puts in Claude Code's settings, the one \
         agent with installable hooks",
    ),
];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The code of a file without comments and without its test module.
fn code_of(text: &str) -> String {
    let text = match text.find("#[cfg(test)]") {
        Some(i) => &text[..i],
        None => text,
    };
    text.lines()
        .map(|l| match l.find("//") {
            Some(i) => &l[..i],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// What names a specific agent: a variant of its kind or a path into its folder.
fn agent_names() -> Vec<String> {
    let mut out = Vec::new();
    for kind in AgentKind::ALL {
        let variant = format!("{kind:?}");
        out.push(format!("AgentKind::{variant}"));
        out.push(format!("agents::{}", kind.name()));
    }
    out
}

fn allowed(rel: &Path) -> bool {
    ALLOWED.iter().any(|(p, _)| rel.starts_with(p))
}

#[test]
fn the_pipeline_names_no_agent() {
    let names = agent_names();
    let mut found = Vec::new();
    for entry in walkdir::WalkDir::new(src()) {
        let path = entry.expect("walk src").into_path();
        if path.extension().is_none_or(|x| x != "rs") {
            continue;
        }
        let rel = path.strip_prefix(src()).expect("under src").to_path_buf();
        let file = rel.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if allowed(&rel) || file == "tests.rs" || file == "testkit.rs" {
            continue;
        }
        let text = fs::read_to_string(&path).expect("read source");
        for (n, line) in code_of(&text).lines().enumerate() {
            for name in &names {
                if line.contains(name.as_str()) {
                    found.push(format!("src/{}:{}: {}", rel.display(), n + 1, line.trim()));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "pipeline code names an agent; ask it through `agents::of(kind)` (the `Agent` trait) \
         instead:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_allow_list_names_only_what_exists() {
    for (p, why) in ALLOWED {
        assert!(src().join(p).exists(), "src/{p} ({why}) does not exist");
    }
}

#[test]
fn the_check_sees_a_match_arm_on_a_kind() {
    let code =
        "match kind {\n    AgentKind::Codex => 250,\n    _ => 150,\n}\n// AgentKind::Gemini\n";
    let names = agent_names();
    let stripped = code_of(code);
    let hits: Vec<&str> = stripped
        .lines()
        .filter(|l| names.iter().any(|n| l.contains(n.as_str())))
        .map(str::trim)
        .collect::<Vec<_>>();
    assert_eq!(hits, ["AgentKind::Codex => 250,"]);
    assert_eq!(
        code_of("fn f() {}\n#[cfg(test)]\nmod tests { AgentKind::Claude }"),
        "fn f() {}"
    );
}
