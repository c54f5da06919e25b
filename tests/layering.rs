//! Imports flow one way along the pipeline (docs/design.md#the-pipeline): a lower stage never
//! names a higher one. This test reads every file under `src/`, collects the module paths its
//! code names (`crate::…`, `super::…`, `self::…`, groups included) and checks that the import
//! graph has no circle, at every level of the tree:
//! - among the top-level modules (`src/X.rs` or `src/X/` is node X), and
//! - inside every folder, among its sibling files and sub-folders.
//!
//! A folder's own root (`mod.rs`, or `X.rs` next to `X/`) belongs to the folder, not to one of
//! its children: its children may name items it declares (`super::Type`), and it names its
//! children to wire them up, so it is the folder's node one level up and no node inside.
//! `lib.rs` is the crate's root in the same sense (it declares every module and dispatches to
//! `cmd`) and `main.rs` is a separate crate that only calls `agentpane::run`, so neither is a
//! node. Every other module, `cmd` and `cli` included, is checked.
//!
//! When a circle exists the test prints it: the modules in order and, for each step, one
//! `file:line` that makes it.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

// ---------------------------------------------------------------------------------------------
// Reading the source: comments and literals blanked, then tokens with their line.

/// `text` with comments and the contents of string and char literals replaced by spaces, so
/// that a doc comment or a message that mentions `crate::x` is not an import. Newlines are kept
/// so that line numbers still match the file.
fn code_of(text: &str) -> Vec<char> {
    let src: Vec<char> = text.chars().collect();
    let mut out = Vec::with_capacity(src.len());
    let blank = |c: char| if c == '\n' { '\n' } else { ' ' };
    let at = |i: usize| src.get(i).copied();
    let mut i = 0;
    while i < src.len() {
        let c = src[i];
        let prev_ident = i > 0 && is_ident(src[i - 1]);
        if c == '/' && at(i + 1) == Some('/') {
            while i < src.len() && src[i] != '\n' {
                out.push(' ');
                i += 1;
            }
        } else if c == '/' && at(i + 1) == Some('*') {
            let mut depth = 0usize;
            while i < src.len() {
                if src[i] == '/' && at(i + 1) == Some('*') {
                    depth += 1;
                    out.extend([' ', ' ']);
                    i += 2;
                } else if src[i] == '*' && at(i + 1) == Some('/') {
                    depth = depth.saturating_sub(1);
                    out.extend([' ', ' ']);
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    out.push(blank(src[i]));
                    i += 1;
                }
            }
        } else if c == 'r' && !prev_ident && matches!(at(i + 1), Some('"') | Some('#')) {
            // Raw string r"…", r#"…"#: count the hashes, find the matching close.
            let mut j = i + 1;
            let mut hashes = 0;
            while at(j) == Some('#') {
                hashes += 1;
                j += 1;
            }
            if at(j) != Some('"') {
                // `r#ident` (a raw identifier): plain code.
                out.push(c);
                i += 1;
                continue;
            }
            out.extend(std::iter::repeat(' ').take(j + 1 - i));
            i = j + 1;
            while i < src.len() {
                if src[i] == '"' && (1..=hashes).all(|k| at(i + k) == Some('#')) {
                    out.extend(std::iter::repeat(' ').take(hashes + 1));
                    i += hashes + 1;
                    break;
                }
                out.push(blank(src[i]));
                i += 1;
            }
        } else if c == '"' {
            out.push(' ');
            i += 1;
            while i < src.len() {
                match src[i] {
                    '\\' => {
                        out.push(' ');
                        if let Some(n) = at(i + 1) {
                            out.push(blank(n));
                        }
                        i += 2;
                    }
                    '"' => {
                        out.push(' ');
                        i += 1;
                        break;
                    }
                    other => {
                        out.push(blank(other));
                        i += 1;
                    }
                }
            }
        } else if c == '\'' {
            // A char literal ('x', '\n', '\u{1F600}') or a lifetime ('a): only the first is
            // blanked.
            let close = if at(i + 1) == Some('\\') {
                (i + 2..src.len().min(i + 12)).find(|&k| src[k] == '\'')
            } else if at(i + 2) == Some('\'') {
                Some(i + 2)
            } else {
                None
            };
            match close {
                Some(end) => {
                    out.extend(std::iter::repeat(' ').take(end + 1 - i));
                    i = end + 1;
                }
                None => {
                    out.push(c);
                    i += 1;
                }
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    Path, // `::`
    Open,
    Close,
    Comma,
    Star,
    Other(char),
}

/// The tokens of blanked code, each with its 1-based line.
fn tokens(code: &[char]) -> Vec<(Tok, usize)> {
    let mut out = Vec::new();
    let mut line = 1;
    let mut i = 0;
    while i < code.len() {
        let c = code[i];
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c.is_whitespace() {
            i += 1;
        } else if is_ident(c) {
            let start = i;
            while i < code.len() && is_ident(code[i]) {
                i += 1;
            }
            out.push((Tok::Ident(code[start..i].iter().collect()), line));
        } else if c == ':' && code.get(i + 1) == Some(&':') {
            out.push((Tok::Path, line));
            i += 2;
        } else {
            let tok = match c {
                '{' => Tok::Open,
                '}' => Tok::Close,
                ',' => Tok::Comma,
                '*' => Tok::Star,
                other => Tok::Other(other),
            };
            out.push((tok, line));
            i += 1;
        }
    }
    out
}

/// One path named in code: its segments as written (`crate`, `super`, `self` kept) and where.
#[derive(Debug, Clone, PartialEq)]
struct Named {
    /// The module the code is in (the file's module plus any inline `mod x { … }`).
    within: Vec<String>,
    segments: Vec<String>,
    line: usize,
}

/// Every `crate::…`, `super::…` and `self::…` path in `code`, groups expanded
/// (`crate::{a::x, b::{y, z}}` gives `crate::a::x`, `crate::b::y`, `crate::b::z`).
fn named_paths(code: &str, module: &[String]) -> Vec<Named> {
    let toks = tokens(&code_of(code));
    let mut out = Vec::new();
    // Inline modules: (name, brace depth inside them).
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    let mut i = 0;
    while i < toks.len() {
        match &toks[i].0 {
            Tok::Open => depth += 1,
            Tok::Close => {
                if inline.last().is_some_and(|(_, d)| *d == depth) {
                    inline.pop();
                }
                depth = depth.saturating_sub(1);
            }
            Tok::Ident(word) if word == "mod" => {
                if let (Some((Tok::Ident(name), _)), Some((Tok::Open, _))) =
                    (toks.get(i + 1), toks.get(i + 2))
                {
                    inline.push((name.clone(), depth + 1));
                }
            }
            Tok::Ident(word)
                if matches!(word.as_str(), "crate" | "super" | "self")
                    && toks.get(i + 1).is_some_and(|t| t.0 == Tok::Path)
                    && (i == 0 || toks[i - 1].0 != Tok::Path) =>
            {
                let mut within = module.to_vec();
                within.extend(inline.iter().map(|(n, _)| n.clone()));
                let line = toks[i].1;
                let mut paths = Vec::new();
                let next = path_tree(&toks, i, Vec::new(), &mut paths);
                out.extend(paths.into_iter().map(|segments| Named {
                    within: within.clone(),
                    segments,
                    line,
                }));
                // Skip what the path consumed, but let braces it opened and closed count.
                for (t, _) in toks.iter().take(next).skip(i) {
                    match t {
                        Tok::Open => depth += 1,
                        Tok::Close => depth = depth.saturating_sub(1),
                        _ => {}
                    }
                }
                i = next;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// Reads a path starting at `toks[i]` after `prefix`, pushes its expansions to `out` and
/// returns the index after it.
fn path_tree(
    toks: &[(Tok, usize)],
    mut i: usize,
    prefix: Vec<String>,
    out: &mut Vec<Vec<String>>,
) -> usize {
    let mut segs = prefix;
    loop {
        match toks.get(i).map(|t| &t.0) {
            Some(Tok::Ident(name)) => {
                if name == "self" && !segs.is_empty() {
                    // `a::{self, b}`: `self` is the prefix itself.
                } else {
                    segs.push(name.clone());
                }
                i += 1;
            }
            Some(Tok::Star) => {
                segs.push("*".into());
                i += 1;
                out.push(segs);
                return i;
            }
            Some(Tok::Open) => {
                i += 1;
                loop {
                    match toks.get(i).map(|t| &t.0) {
                        None => return i,
                        Some(Tok::Close) => return i + 1,
                        Some(Tok::Comma) => i += 1,
                        Some(Tok::Ident(_)) | Some(Tok::Star) | Some(Tok::Open) => {
                            let before = i;
                            i = path_tree(toks, i, segs.clone(), out);
                            if i == before {
                                i += 1;
                            }
                        }
                        Some(_) => i += 1,
                    }
                }
            }
            _ => {
                out.push(segs);
                return i;
            }
        }
        if toks.get(i).map(|t| &t.0) == Some(&Tok::Path) {
            i += 1;
        } else {
            out.push(segs);
            return i;
        }
    }
}

/// The module a path names, from the crate root, or `None` when it climbs above the root.
fn absolute(named: &Named) -> Option<Vec<String>> {
    let mut segs = named.segments.iter();
    let first = segs.next()?;
    let mut base = match first.as_str() {
        "crate" => Vec::new(),
        "self" => named.within.clone(),
        "super" => {
            let mut b = named.within.clone();
            b.pop()?;
            b
        }
        _ => return None,
    };
    let mut rest = segs.peekable();
    while rest.peek().is_some_and(|s| *s == "super") {
        rest.next();
        base.pop()?;
    }
    base.extend(rest.cloned());
    Some(base)
}

// ---------------------------------------------------------------------------------------------
// The graph.

/// Where an edge comes from: one file and line.
type Edges = BTreeMap<(String, String), String>;

/// Per folder (its module path, `[]` for the top level): its children and the edges among them.
#[derive(Default)]
struct Tree {
    children: BTreeMap<Vec<String>, BTreeSet<String>>,
    edges: BTreeMap<Vec<String>, Edges>,
}

/// The module path of a file under `src/`: `a/b.rs` → `[a, b]`, `a/mod.rs` → `[a]`; `None`
/// for the crate roots and anything that is not a Rust file.
fn module_of(rel: &Path) -> Option<Vec<String>> {
    if !rel.extension().is_some_and(|x| x == "rs") {
        return None;
    }
    let mut parts: Vec<String> = rel
        .with_extension("")
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    if matches!(parts.as_slice(), [root] if root == "lib" || root == "main") || parts.is_empty() {
        return None;
    }
    Some(parts)
}

fn build(root: &Path) -> Result<Tree, String> {
    let mut files = Vec::new();
    for entry in walkdir::WalkDir::new(root).sort_by_file_name() {
        let entry = entry.map_err(|e| format!("{}: {e}", root.display()))?;
        let rel = entry
            .path()
            .strip_prefix(root)
            .unwrap_or(entry.path())
            .to_path_buf();
        if entry.file_type().is_file() {
            if let Some(module) = module_of(&rel) {
                files.push((rel, module));
            }
        }
    }
    let mut tree = Tree::default();
    for (_, module) in &files {
        for k in 0..module.len() {
            tree.children
                .entry(module[..k].to_vec())
                .or_default()
                .insert(module[k].clone());
        }
    }
    let mut texts = Vec::new();
    let mut aliases = BTreeMap::new();
    for (rel, module) in &files {
        let text =
            fs::read_to_string(root.join(rel)).map_err(|e| format!("{}: {e}", rel.display()))?;
        aliases.extend(reexports(&text, module));
        texts.push(text);
    }
    for ((rel, module), text) in files.iter().zip(&texts) {
        for named in named_paths(text, module) {
            // A name re-exported elsewhere (`pub use shared::Shared` in `agents/mod.rs`) is
            // the module that declares it.
            let Some(target) = absolute(&named).map(|t| through(t, &aliases)) else {
                continue;
            };
            let from = &named.within;
            let d = from.iter().zip(&target).take_while(|(a, b)| a == b).count();
            let (Some(x), Some(y)) = (from.get(d), target.get(d)) else {
                continue;
            };
            let folder = from[..d].to_vec();
            let Some(siblings) = tree.children.get(&folder) else {
                continue;
            };
            // Only files and folders count: an inline `mod tests` or an item of the folder's
            // root is not a sibling.
            if !siblings.contains(x) || !siblings.contains(y) || x == y {
                continue;
            }
            tree.edges
                .entry(folder)
                .or_default()
                .entry((x.clone(), y.clone()))
                .or_insert_with(|| format!("src/{}:{}", rel.display(), named.line));
        }
    }
    Ok(tree)
}

/// The circles among `nodes`: each strongly connected part of more than one node, as one
/// cycle through it (first node repeated at the end).
fn circles(nodes: &BTreeSet<String>, edges: &Edges) -> Vec<Circle> {
    let next = |n: &str| -> Vec<String> {
        edges
            .keys()
            .filter(|(a, _)| a == n)
            .map(|(_, b)| b.clone())
            .collect()
    };
    let reach = |from: &str| -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.to_string()];
        while let Some(n) = todo.pop() {
            for m in next(&n) {
                if seen.insert(m.clone()) {
                    todo.push(m);
                }
            }
        }
        seen
    };
    let mut done = BTreeSet::new();
    let mut out = Vec::new();
    for n in nodes {
        if done.contains(n) || !reach(n).contains(n) {
            continue;
        }
        // The shortest way back to `n` (breadth first), which is one circle.
        let mut came_from: BTreeMap<String, String> = BTreeMap::new();
        let mut queue = std::collections::VecDeque::from([n.clone()]);
        'search: while let Some(cur) = queue.pop_front() {
            for m in next(&cur) {
                if m == *n {
                    came_from.insert(format!("{n}\0end"), cur.clone());
                    break 'search;
                }
                if !came_from.contains_key(&m) {
                    came_from.insert(m.clone(), cur.clone());
                    queue.push_back(m);
                }
            }
        }
        let mut cycle = vec![n.clone()];
        let mut cur = came_from.get(&format!("{n}\0end")).cloned();
        while let Some(c) = cur {
            if c == *n || cycle.len() > nodes.len() {
                break;
            }
            cycle.push(c.clone());
            cur = came_from.get(&c).cloned();
        }
        cycle.push(n.clone());
        cycle.reverse();
        // Everything on a circle with `n` is reported once, through `n`, with the other edges
        // inside the same knot (any of them may be the one to cut).
        let part: BTreeSet<String> = reach(n)
            .into_iter()
            .filter(|m| reach(m).contains(n))
            .collect();
        let inside: Vec<(String, String)> = edges
            .keys()
            .filter(|(a, b)| part.contains(a) && part.contains(b))
            .filter(|e| !cycle.windows(2).any(|w| w[0] == e.0 && w[1] == e.1))
            .cloned()
            .collect();
        done.extend(part);
        out.push(Circle { cycle, inside });
    }
    out
}

/// One knot of the graph: a shortest circle through it and the other edges among its nodes.
#[derive(Debug, PartialEq)]
struct Circle {
    cycle: Vec<String>,
    inside: Vec<(String, String)>,
}

/// The nodes in an order where every edge points to an earlier node (lowest first), or `None`
/// when there is a circle.
fn order(nodes: &BTreeSet<String>, edges: &Edges) -> Option<Vec<String>> {
    let mut left: BTreeSet<String> = nodes.clone();
    let mut out = Vec::new();
    while !left.is_empty() {
        let ready: Vec<String> = left
            .iter()
            .filter(|n| !edges.keys().any(|(a, b)| a == *n && left.contains(b)))
            .cloned()
            .collect();
        if ready.is_empty() {
            return None;
        }
        for n in ready {
            left.remove(&n);
            out.push(n);
        }
    }
    Some(out)
}

fn describe(folder: &[String], circle: &Circle, edges: &Edges) -> String {
    let cycle = &circle.cycle;
    let name = if folder.is_empty() {
        "src/ (top level)".to_string()
    } else {
        format!("src/{}/", folder.join("/"))
    };
    let mut s = format!("circle in {name}: {}\n", cycle.join(" → "));
    for pair in cycle.windows(2) {
        let key = (pair[0].clone(), pair[1].clone());
        let at = edges.get(&key).map(String::as_str).unwrap_or("?");
        s.push_str(&format!("    {} → {}  ({at})\n", pair[0], pair[1]));
    }
    if !circle.inside.is_empty() {
        s.push_str("  other edges among the same modules:\n");
        for (a, b) in &circle.inside {
            let at = edges
                .get(&(a.clone(), b.clone()))
                .map(String::as_str)
                .unwrap_or("?");
            s.push_str(&format!("    {a} → {b}  ({at})\n"));
        }
    }
    s
}

#[test]
fn the_import_graph_has_no_circle_at_any_level() {
    let tree = match build(&src()) {
        Ok(t) => t,
        Err(e) => panic!("reading src/: {e}"),
    };
    assert!(
        tree.children.get(&Vec::new()).is_some_and(|c| c.len() > 5),
        "found almost no modules under src/"
    );
    let mut report = String::new();
    for (folder, nodes) in &tree.children {
        let edges = tree.edges.get(folder).cloned().unwrap_or_default();
        for cycle in circles(nodes, &edges) {
            report.push_str(&describe(folder, &cycle, &edges));
        }
    }
    assert!(
        report.is_empty(),
        "import circles (a lower module must not name a higher one):\n{report}"
    );
    let top = tree.children.get(&Vec::new()).cloned().unwrap_or_default();
    let edges = tree.edges.get(&Vec::new()).cloned().unwrap_or_default();
    if let Some(order) = order(&top, &edges) {
        println!("top-level order, lowest first: {}", order.join(" < "));
    }
}

// ---------------------------------------------------------------------------------------------
// Pairs that once went wrong, each with the reason the lower one must stay lower. The circle
// test already forbids them while the opposite edge exists; these keep them out for good.

/// (lower: a top-level module, higher module it must not name, why).
const RULES: &[(&str, &str, &str)] = &[
    (
        "agents",
        "resolve",
        "the locators are driven by resolve.rs; shared locator types live in agents/locate.rs",
    ),
    (
        "memory",
        "alert",
        "the alert engine reads the memory; the alert key lives in memory.rs",
    ),
    (
        "evidence",
        "scan",
        "the scan folds evidence; `Source` lives in state.rs",
    ),
];

#[test]
fn lower_stages_never_name_higher_ones() {
    let tree = match build(&src()) {
        Ok(t) => t,
        Err(e) => panic!("reading src/: {e}"),
    };
    let top = tree.children.get(&Vec::new()).cloned().unwrap_or_default();
    let edges = tree.edges.get(&Vec::new()).cloned().unwrap_or_default();
    let mut broken = Vec::new();
    for (lower, higher, why) in RULES {
        assert!(
            top.contains(*lower),
            "module `{lower}` is gone: update RULES"
        );
        assert!(
            top.contains(*higher),
            "module `{higher}` is gone: update RULES"
        );
        if let Some(at) = edges.get(&(lower.to_string(), higher.to_string())) {
            broken.push(format!("{at} names crate::{higher} from {lower} ({why})"));
        }
    }
    assert!(
        broken.is_empty(),
        "import circles are back:\n{}",
        broken.join("\n")
    );
}

// ---------------------------------------------------------------------------------------------
// The reader itself.

fn strs(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

fn absolutes(code: &str, module: &[&str]) -> Vec<Vec<String>> {
    named_paths(code, &strs(module))
        .iter()
        .filter_map(absolute)
        .collect()
}

#[test]
fn the_reader_sees_plain_paths_groups_relative_paths_and_inline_modules() {
    let code = "use crate::resolve::{Found, Via};\n\
                use crate::{events::{A, B}, alert::alert_key, scan};\n\
                fn f() { crate::memory::thread_key(r); }\n\
                // use crate::comment::Ignored;\n\
                /* crate::block::Ignored /* nested */ crate::still::Ignored */\n\
                const S: &str = \"crate::string::Ignored\";\n\
                const R: &str = r#\"crate::raw::Ignored\"#;\n\
                fn g<'a>(c: char) -> bool { c == '{' && crate::after_char::x() }\n\
                use super::sibling::{self, Thing};\n\
                mod tests { use super::super::other::X; use super::*; }\n\
                use crate::after_mod::Y;\n";
    let got = absolutes(code, &["a", "b"]);
    let want: Vec<Vec<String>> = [
        &["resolve", "Found"][..],
        &["resolve", "Via"],
        &["events", "A"],
        &["events", "B"],
        &["alert", "alert_key"],
        &["scan"],
        &["memory", "thread_key"],
        &["after_char", "x"],
        &["a", "sibling"],
        &["a", "sibling", "Thing"],
        &["a", "other", "X"],
        &["a", "b", "*"],
        &["after_mod", "Y"],
    ]
    .iter()
    .map(|v| strs(v))
    .collect();
    assert_eq!(got, want);
}

#[test]
fn the_reader_does_not_panic_on_odd_input() {
    for code in [
        "",
        "crate::",
        "use crate::{",
        "use crate::{a::{",
        "super::super::super::x",
        "'",
        "\"unterminated",
        "r#\"unterminated",
        "/* unterminated",
        "}}}} mod x { {{",
        "'\\u{1F600}' é crate::ü::x",
        "r#crate::x",
    ] {
        let _ = absolutes(code, &["a"]);
        let _ = absolutes(code, &[]);
    }
}

#[test]
fn a_circle_is_found_and_named_with_its_edges() {
    let nodes: BTreeSet<String> = strs(&["a", "b", "c", "d"]).into_iter().collect();
    let mut edges = Edges::new();
    for (x, y) in [("a", "b"), ("b", "c"), ("c", "a"), ("d", "a")] {
        edges.insert((x.into(), y.into()), format!("src/{x}.rs:1"));
    }
    let found = circles(&nodes, &edges);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].cycle, strs(&["a", "b", "c", "a"]));
    assert!(found[0].inside.is_empty());
    assert!(describe(&[], &found[0], &edges).contains("c → a  (src/c.rs:1)"));
    assert_eq!(order(&nodes, &edges), None);
    edges.remove(&("c".into(), "a".into()));
    assert!(circles(&nodes, &edges).is_empty());
    assert_eq!(order(&nodes, &edges), Some(strs(&["c", "b", "a", "d"])));
}

#[test]
fn a_circle_through_a_re_exported_name_is_found() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let write = |rel: &str, text: &str| {
        let path = dir.path().join(rel);
        fs::create_dir_all(path.parent().expect("a parent")).expect("a folder");
        fs::write(path, text).expect("a file");
    };
    // `a::x` names `a::Thing`, which `a/mod.rs` re-exports from `a::y` (through `a::z`'s
    // re-export), and `a::y` names `a::x`.
    write(
        "a/mod.rs",
        "pub mod x; pub mod y; pub mod z; pub use z::Thing;\n",
    );
    write("a/z.rs", "pub use super::y::Thing;\n");
    write("a/x.rs", "pub fn f() {}\nuse super::Thing;\n");
    write("a/y.rs", "pub struct Thing;\nfn g() { super::x::f() }\n");
    write("b.rs", "\n");
    let tree = build(dir.path()).expect("the tree");
    let folder = strs(&["a"]);
    let nodes = &tree.children[&folder];
    let edges = tree.edges.get(&folder).cloned().unwrap_or_default();
    assert_eq!(
        edges.get(&("x".into(), "y".into())).map(String::as_str),
        Some("src/a/x.rs:2")
    );
    let found = circles(nodes, &edges);
    assert_eq!(found.len(), 1, "{edges:?}");
    assert_eq!(found[0].cycle, strs(&["x", "y", "x"]));
}

// ---------------------------------------------------------------------------------------------
// The agents' registry sits above every agent (docs/design.md#adding-an-agent): it lists them,
// so nothing an agent or a helper the agents share calls may live in it or name it, and the
// helpers the agents share name no agent.

/// What a folder root re-exports with `pub use`: the name it is known by in the folder →
/// the path it stands for (`pub use registry::{of, all}` in `agents/mod.rs` makes
/// `crate::agents::of` stand for `crate::agents::registry::of`).
fn reexports(code: &str, module: &[String]) -> BTreeMap<Vec<String>, Vec<String>> {
    let toks = tokens(&code_of(code));
    let mut out = BTreeMap::new();
    let ident = |i: usize, w: &str| matches!(toks.get(i), Some((Tok::Ident(x), _)) if x == w);
    for i in 0..toks.len() {
        if !ident(i, "pub") {
            continue;
        }
        // `pub use` or `pub(crate) use`.
        let at = if ident(i + 1, "use") {
            i + 2
        } else if ident(i + 4, "use") && ident(i + 2, "crate") {
            i + 5
        } else {
            continue;
        };
        let mut paths = Vec::new();
        path_tree(&toks, at, Vec::new(), &mut paths);
        for segments in paths {
            let target = if matches!(
                segments.first().map(String::as_str),
                Some("crate" | "self" | "super")
            ) {
                absolute(&Named {
                    within: module.to_vec(),
                    segments,
                    line: 0,
                })
            } else {
                Some(module.iter().chain(&segments).cloned().collect())
            };
            let Some(target) = target.filter(|t| t.last().is_some_and(|n| n != "*")) else {
                continue;
            };
            let mut alias = module.to_vec();
            alias.extend(target.last().cloned());
            out.insert(alias, target);
        }
    }
    out
}

/// `target` with a re-exported name at its start replaced by what it stands for, until it
/// names no re-export (a chain of them is followed; a loop of them stops).
fn through(mut target: Vec<String>, aliases: &BTreeMap<Vec<String>, Vec<String>>) -> Vec<String> {
    for _ in 0..=aliases.len() {
        let Some(k) = (1..=target.len())
            .rev()
            .find(|k| aliases.contains_key(&target[..*k]))
        else {
            break;
        };
        let real = &aliases[&target[..k]];
        target = real.iter().chain(&target[k..]).cloned().collect();
    }
    target
}

/// The names declared at the top of a file's code (`fn x`, `const X`, `static X`), with or
/// without `pub`.
fn declared(code: &str) -> BTreeSet<String> {
    let toks = tokens(&code_of(code));
    toks.windows(2)
        .filter_map(|w| match (&w[0].0, &w[1].0) {
            (Tok::Ident(kw), Tok::Ident(name))
                if matches!(kw.as_str(), "fn" | "const" | "static") =>
            {
                Some(name.clone())
            }
            _ => None,
        })
        .collect()
}

/// Every file under `src/agents/` as (path under `src/`, module, text).
fn agents_files() -> Vec<(PathBuf, Vec<String>, String)> {
    let root = src();
    walkdir::WalkDir::new(root.join("agents"))
        .sort_by_file_name()
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .filter_map(|e| {
            let rel = e.path().strip_prefix(&root).ok()?.to_path_buf();
            let module = module_of(&rel)?;
            let text = fs::read_to_string(e.path()).ok()?;
            Some((rel, module, text))
        })
        .collect()
}

/// One breach of the agents' layering: `file:line names path (why)`.
fn agents_breaches(files: &[(PathBuf, Vec<String>, String)]) -> Vec<String> {
    let agents = strs(&["agents"]);
    let root_file = files.iter().find(|(_, m, _)| *m == agents);
    let aliases = root_file.map_or_else(BTreeMap::new, |(_, m, t)| reexports(t, m));
    let Some((_, registry, registry_text)) = files.iter().find(|(_, _, t)| {
        let toks = tokens(&code_of(t));
        toks.windows(2).any(|w| {
            matches!((&w[0].0, &w[1].0), (Tok::Ident(k), Tok::Ident(n))
                if (k == "const" || k == "static") && n == "REGISTRY")
        })
    }) else {
        return vec!["no file under src/agents/ declares REGISTRY".into()];
    };
    // A registry in the folder root is known by its items; one in its own file by its path.
    let items = declared(registry_text);
    let names_registry = |t: &[String]| {
        t.starts_with(registry)
            && (*registry != agents || t.get(registry.len()).is_some_and(|n| items.contains(n)))
    };
    // Each folder under src/agents/ is one agent; each file there is shared by them.
    let agent_folders: BTreeSet<String> = files
        .iter()
        .filter(|(r, m, _)| m.len() == 2 && r.file_name().is_some_and(|n| n == "mod.rs"))
        .map(|(_, m, _)| m[1].clone())
        .collect();
    let mut out = Vec::new();
    for (rel, module, text) in files {
        // The registry is its file and anything under it.
        if *module == agents || (*registry != agents && module.starts_with(registry)) {
            continue;
        }
        let in_agent = agent_folders.contains(&module[1]);
        for named in named_paths(text, module) {
            let Some(target) = absolute(&named).map(|t| through(t, &aliases)) else {
                continue;
            };
            let at = format!("src/{}:{}", rel.display(), named.line);
            let path = target.join("::");
            if names_registry(&target) {
                out.push(format!("{at} names {path}: the registry lists the agents, so nothing under it may name it"));
            } else if !in_agent
                && target.len() >= 2
                && target[0] == "agents"
                && agent_folders.contains(&target[1])
            {
                out.push(format!(
                    "{at} names {path}: a helper the agents share names no agent"
                ));
            }
        }
    }
    out
}

#[test]
fn no_agent_or_shared_helper_names_the_registry_and_no_shared_helper_names_an_agent() {
    let files = agents_files();
    assert!(files.len() > 20, "found almost no files under src/agents/");
    let breaches = agents_breaches(&files);
    assert!(
        breaches.is_empty(),
        "the agents' layering is broken:\n{}",
        breaches.join("\n")
    );
}

#[test]
fn a_re_exported_registry_lookup_is_the_registry() {
    let file = |rel: &str, module: &[&str], text: &str| {
        (PathBuf::from(rel), strs(module), text.to_string())
    };
    let files = vec![
        file(
            "agents/mod.rs",
            &["agents"],
            "pub mod kilo; pub mod registry; pub use registry::{of, all};\n",
        ),
        file(
            "agents/registry.rs",
            &["agents", "registry"],
            "const REGISTRY: [&dyn A; 1] = [&super::kilo::Kilo];\npub fn of() {}\n",
        ),
        file(
            "agents/fields.rs",
            &["agents", "fields"],
            "fn f() { crate::agents::all(); super::kilo::g(); }\n",
        ),
        file(
            "agents/kilo/mod.rs",
            &["agents", "kilo"],
            "fn f() { crate::agents::of(); crate::agents::fields::x(); }\n",
        ),
        // Under the registry: it may name the registry and the agents.
        file(
            "agents/registry/stores.rs",
            &["agents", "registry", "stores"],
            "use super::of; use crate::agents::kilo::KILO;\n",
        ),
    ];
    let got = agents_breaches(&files);
    assert_eq!(got.len(), 3, "{got:?}");
    assert!(
        got[0].starts_with("src/agents/fields.rs:1 names agents::registry::all"),
        "{got:?}"
    );
    assert!(
        got[1].starts_with("src/agents/fields.rs:1 names agents::kilo::g"),
        "{got:?}"
    );
    assert!(
        got[2].starts_with("src/agents/kilo/mod.rs:1 names agents::registry::of"),
        "{got:?}"
    );
}
