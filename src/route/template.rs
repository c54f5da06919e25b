//! Templates wrap a routed answer with its context (docs/design.md#routing): `{answer}`,
//! `{source}`, `{cwd}`, `{instruction}`. Substitution is one pass over the template, so an answer
//! that itself contains `{instruction}` stays literal text.

use std::path::Path;

use anyhow::{bail, Context, Result};

/// Built-in templates by name.
pub const BUILTINS: [(&str, &str); 3] = [
    (
        "review",
        "Review the answer below from {source} (working in {cwd}). List concrete bugs, risks \
         and missing cases, most important first; say so plainly if it looks right.\n\
         {instruction}\n\n<answer>\n{answer}\n</answer>",
    ),
    (
        "continue",
        "{source} (working in {cwd}) finished with the answer below. Continue the work from \
         where it stopped.\n{instruction}\n\n<answer>\n{answer}\n</answer>",
    ),
    (
        "ask",
        "{instruction}\n\nContext: the last answer from {source} (working in {cwd}):\n\n\
         <answer>\n{answer}\n</answer>",
    ),
];

/// Bytes read from a template file at most.
const MAX_TEMPLATE_BYTES: u64 = 64 * 1024;

/// The values a template may refer to.
#[derive(Debug, Clone, Default)]
pub struct Vars<'a> {
    pub answer: &'a str,
    /// e.g. `claude in %3 (work:1.0)`.
    pub source: &'a str,
    pub cwd: &'a str,
    pub instruction: &'a str,
}

/// A loaded template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    pub name: String,
    pub body: String,
}

impl Template {
    /// A built-in by name, else the file at `spec`.
    pub fn load(spec: &str) -> Result<Template> {
        if let Some((name, body)) = BUILTINS.iter().find(|(n, _)| *n == spec) {
            return Ok(Template {
                name: name.to_string(),
                body: body.to_string(),
            });
        }
        let path = Path::new(spec);
        if !path.is_file() {
            let names: Vec<&str> = BUILTINS.iter().map(|(n, _)| *n).collect();
            bail!(
                "no template `{spec}`: not a built-in ({}) and not a readable file",
                names.join(", ")
            );
        }
        let len = path.metadata().map(|m| m.len()).unwrap_or(0);
        if len > MAX_TEMPLATE_BYTES {
            bail!("template {} is larger than 64 KiB", path.display());
        }
        let body = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read template {}", path.display()))?;
        Ok(Template {
            name: spec.to_string(),
            body,
        })
    }

    /// True when the template uses `{instruction}`.
    pub fn wants_instruction(&self) -> bool {
        self.body.contains("{instruction}")
    }

    /// Fills the placeholders. A line holding only `{instruction}` disappears when there is
    /// no instruction, so built-ins read well either way.
    pub fn render(&self, vars: &Vars) -> Result<String> {
        if self.name == "ask" && vars.instruction.trim().is_empty() {
            bail!("template `ask` needs --instruction TEXT (the question to ask)");
        }
        let body = if vars.instruction.trim().is_empty() {
            self.body
                .split_inclusive('\n')
                .filter(|l| l.trim() != "{instruction}")
                .collect::<String>()
        } else {
            self.body.clone()
        };
        Ok(substitute(&body, vars))
    }
}

/// What is sent when no template is given: the text alone, or the instruction above it.
pub fn plain(vars: &Vars) -> String {
    if vars.instruction.trim().is_empty() {
        vars.answer.to_string()
    } else {
        format!("{}\n\n{}", vars.instruction.trim_end(), vars.answer)
    }
}

/// One left-to-right pass; unknown `{…}` stays as written.
fn substitute(body: &str, vars: &Vars) -> String {
    let mut out = String::with_capacity(body.len() + vars.answer.len());
    let mut rest = body;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let tail = &rest[open..];
        let hit = [
            ("{answer}", vars.answer),
            ("{source}", vars.source),
            ("{cwd}", vars.cwd),
            ("{instruction}", vars.instruction),
        ]
        .into_iter()
        .find(|(key, _)| tail.starts_with(key));
        match hit {
            Some((key, value)) => {
                out.push_str(value);
                rest = &tail[key.len()..];
            }
            None => {
                out.push('{');
                rest = &tail[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars<'a>(answer: &'a str, instruction: &'a str) -> Vars<'a> {
        Vars {
            answer,
            source: "claude in %3 (work:1.0)",
            cwd: "/src/app",
            instruction,
        }
    }

    #[test]
    fn review_fills_every_placeholder() {
        let t = Template::load("review").unwrap();
        let out = t.render(&vars("fn main() {}", "focus on errors")).unwrap();
        assert!(out.starts_with(
            "Review the answer below from claude in %3 (work:1.0) (working in /src/app)."
        ));
        assert!(out.contains("\nfocus on errors\n"));
        assert!(out.ends_with("<answer>\nfn main() {}\n</answer>"));
    }

    #[test]
    fn empty_instruction_line_disappears() {
        let t = Template::load("continue").unwrap();
        let out = t.render(&vars("done", "")).unwrap();
        assert!(!out.contains("{instruction}"));
        assert!(out.contains("stopped.\n\n<answer>"), "{out}");
    }

    #[test]
    fn placeholders_inside_the_answer_are_not_expanded() {
        let t = Template::load("review").unwrap();
        let out = t.render(&vars("use {instruction} and {cwd}", "x")).unwrap();
        assert!(out.contains("use {instruction} and {cwd}"));
    }

    #[test]
    fn ask_requires_an_instruction() {
        let t = Template::load("ask").unwrap();
        let err = t.render(&vars("a", " ")).unwrap_err().to_string();
        assert!(err.contains("--instruction"), "{err}");
        let out = t.render(&vars("a", "Why?")).unwrap();
        assert!(out.starts_with("Why?\n\nContext:"));
    }

    #[test]
    fn template_file_and_unknown_names() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("t.txt");
        std::fs::write(&f, "[{source}] {answer} {unknown} {").unwrap();
        let t = Template::load(f.to_str().unwrap()).unwrap();
        assert_eq!(
            t.render(&vars("A", "")).unwrap(),
            "[claude in %3 (work:1.0)] A {unknown} {"
        );
        let err = Template::load("no-such-template").unwrap_err().to_string();
        assert!(err.contains("review, continue, ask"), "{err}");
    }

    #[test]
    fn plain_puts_the_instruction_first() {
        assert_eq!(plain(&vars("A", "")), "A");
        assert_eq!(plain(&vars("A", "Check this")), "Check this\n\nA");
    }
}
