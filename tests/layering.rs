//! Imports flow one way along the pipeline (docs/design.md#the-pipeline): a lower stage never
//! names a higher one. These pairs once formed import circles; each circle meant a type lived
//! in the wrong module. A plain text scan of `crate::…` paths in the source is enough to keep
//! them from coming back.

use std::fs;
use std::path::{Path, PathBuf};

/// (lower stage: a file or folder under `src/`, higher module it must not name, why).
const RULES: &[(&str, &str, &str)] = &[
    (
        "agents",
        "resolve",
        "the locators are driven by resolve.rs; shared locator types live in agents/locate.rs",
    ),
    (
        "memory.rs",
        "alert",
        "the alert engine reads the memory; the alert key lives in memory.rs",
    ),
    (
        "evidence",
        "scan",
        "the scan folds evidence; `Source` lives in evidence/reconcile.rs",
    ),
];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every `.rs` file at `path` (the file itself, or all files below a folder).
fn rust_files(path: &Path) -> Vec<PathBuf> {
    if path.is_file() {
        return vec![path.to_path_buf()];
    }
    let mut out: Vec<PathBuf> = walkdir::WalkDir::new(path)
        .into_iter()
        .map(|e| {
            e.unwrap_or_else(|e| panic!("{}: {e}", path.display()))
                .into_path()
        })
        .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "rs"))
        .collect();
    out.sort();
    out
}

/// The code of a file without `//` comments (doc comments may mention any module).
fn code_of(text: &str) -> String {
    text.lines()
        .map(|l| match l.find("//") {
            Some(i) => &l[..i],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The module names a piece of code reaches through `crate::`: `crate::a::b` gives `a`, and a
/// group `crate::{a::x, b::{y, z}}` gives `a` and `b`.
fn crate_modules(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find("crate::") {
        rest = rest[i + "crate::".len()..].trim_start();
        if let Some(group) = rest.strip_prefix('{') {
            // Top-level names of a (possibly nested) group.
            let mut depth = 0;
            let mut item_start = true;
            let mut name = String::new();
            for c in group.chars() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => item_start = true,
                    c if item_start && (c.is_alphanumeric() || c == '_') => name.push(c),
                    _ if item_start && !name.is_empty() => {
                        out.push(std::mem::take(&mut name));
                        item_start = false;
                    }
                    _ => {}
                }
            }
            if !name.is_empty() {
                out.push(name);
            }
        } else {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                out.push(name);
            }
        }
    }
    out
}

#[test]
fn the_module_scan_sees_plain_paths_groups_and_inline_calls() {
    let code = "use crate::resolve::{Found, Via};\n\
                use crate::{events::{A, B}, alert::alert_key, scan};\n\
                fn f() { crate::memory::thread_key(r); }\n\
                // use crate::comment::Ignored;\n";
    let mods = crate_modules(&code_of(code));
    assert_eq!(mods, ["resolve", "events", "alert", "scan", "memory"]);
}

#[test]
fn lower_stages_never_name_higher_ones() {
    let mut broken = Vec::new();
    for (lower, higher, why) in RULES {
        let root = src().join(lower);
        let files = rust_files(&root);
        assert!(!files.is_empty(), "no source at {}", root.display());
        let higher_exists =
            src().join(format!("{higher}.rs")).is_file() || src().join(higher).is_dir();
        assert!(higher_exists, "module `{higher}` is gone: update RULES");
        for file in files {
            let text = fs::read_to_string(&file).unwrap();
            if crate_modules(&code_of(&text)).iter().any(|m| m == higher) {
                broken.push(format!(
                    "{} names crate::{higher} ({why})",
                    file.strip_prefix(src()).unwrap().display()
                ));
            }
        }
    }
    assert!(
        broken.is_empty(),
        "import circles are back:\n{}",
        broken.join("\n")
    );
}
