//! How the routed text is made (docs/design.md#routing): `raw` and `full-output` are chosen by the
//! caller; this file holds the two that compute: a deterministic `summary` and the `ai` command.

use std::time::Duration;

use anyhow::{bail, Context, Result};

use crate::exec;

/// Default size bound of a summary, in bytes.
pub const SUMMARY_MAX_BYTES: usize = 4000;
/// Longest headline kept, in bytes.
const HEADLINE_MAX_BYTES: usize = 800;
/// Most file paths listed.
const MAX_PATHS: usize = 30;

/// Deterministic compaction: the headline paragraph, the file paths mentioned, then the code
/// blocks in order while they fit. Same input, same output; never longer than `max_bytes`.
pub fn summary(text: &str, max_bytes: usize) -> String {
    let (prose, blocks) = split_code(text);
    let headline = prose
        .split("\n\n")
        .map(str::trim)
        .find(|p| !p.is_empty())
        .map(|p| cut(p, HEADLINE_MAX_BYTES))
        .unwrap_or_default();
    let mut out = headline;
    let paths = file_paths(&prose);
    if !paths.is_empty() {
        let mut section = String::from("\n\nFiles:");
        for p in paths {
            section.push_str("\n- ");
            section.push_str(&p);
        }
        push_if_fits(&mut out, &section, max_bytes);
    }
    for block in blocks {
        let section = format!("\n\n{block}");
        push_if_fits(&mut out, &section, max_bytes);
    }
    cut(out.trim(), max_bytes)
}

fn push_if_fits(out: &mut String, section: &str, max_bytes: usize) {
    if out.len() + section.len() <= max_bytes {
        out.push_str(section);
    }
}

/// Splits fenced code blocks (``` … ```, fences included) from the prose around them.
fn split_code(text: &str) -> (String, Vec<String>) {
    let mut prose = String::new();
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        let fence = line.trim_start().starts_with("```");
        match current.as_mut() {
            Some(block) => {
                block.push('\n');
                block.push_str(line);
                if fence {
                    blocks.push(current.take().unwrap_or_default());
                }
            }
            None if fence => current = Some(line.to_string()),
            None => {
                prose.push_str(line);
                prose.push('\n');
            }
        }
    }
    if let Some(open) = current {
        blocks.push(format!("{open}\n```"));
    }
    (prose, blocks)
}

/// Words of prose that look like file paths (`src/a.rs`, `./x/y`, `Cargo.toml`, `lib.rs:12`), in
/// order of first mention, without duplicates.
pub fn file_paths(text: &str) -> Vec<String> {
    let mut seen: Vec<String> = Vec::new();
    for word in text.split(|c: char| c.is_whitespace() || "`'\"()[]<>,;".contains(c)) {
        let w = word.trim_end_matches(['.', ':', '!', '?']);
        if looks_like_path(w) && !seen.iter().any(|s| s == w) {
            seen.push(w.to_string());
            if seen.len() == MAX_PATHS {
                break;
            }
        }
    }
    seen
}

fn looks_like_path(w: &str) -> bool {
    if w.len() < 3 || w.len() > 200 || w.contains("://") || w.starts_with("--") {
        return false;
    }
    if !w
        .chars()
        .all(|c| c.is_alphanumeric() || "/._-~:+@".contains(c))
    {
        return false;
    }
    let name = w.rsplit('/').next().unwrap_or(w);
    let name = name.split(':').next().unwrap_or(name);
    let has_ext = name.rsplit_once('.').is_some_and(|(stem, ext)| {
        stem.chars().last().is_some_and(char::is_alphanumeric)
            && (1..=5).contains(&ext.len())
            && ext.chars().all(|c| c.is_ascii_alphanumeric())
            && ext.chars().any(|c| c.is_ascii_alphabetic())
    });
    let slashy = w.contains('/') && w.chars().any(|c| c.is_alphabetic());
    has_ext || slashy
}

/// `text` cut to at most `max` bytes on a character boundary, with `…` when cut.
fn cut(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut end = max.saturating_sub('…'.len_utf8());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

/// The configured `ai` command: `AGENTPANE_AI_COMMAND` holds a program and its arguments,
/// split on whitespace (no shell), e.g. `claude -p` or `llm -m gpt-4o-mini`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AiCommand {
    pub program: String,
    pub args: Vec<String>,
    pub timeout: Duration,
}

impl AiCommand {
    /// Reads `AGENTPANE_AI_COMMAND` and `AGENTPANE_AI_TIMEOUT` (seconds, default 120).
    pub fn from_env() -> Result<AiCommand> {
        let spec = std::env::var("AGENTPANE_AI_COMMAND").unwrap_or_default();
        let timeout = std::env::var("AGENTPANE_AI_TIMEOUT")
            .ok()
            .and_then(|s| s.trim().parse::<f64>().ok())
            .filter(|s| s.is_finite() && *s > 0.0)
            .unwrap_or(120.0);
        AiCommand::parse(&spec, Duration::from_secs_f64(timeout))
    }

    /// Splits `spec` into program and arguments.
    pub fn parse(spec: &str, timeout: Duration) -> Result<AiCommand> {
        let mut words = spec.split_whitespace().map(str::to_string);
        let Some(program) = words.next() else {
            bail!(
                "--transform ai needs a command: set AGENTPANE_AI_COMMAND, e.g. \
                 AGENTPANE_AI_COMMAND='claude -p' (program and arguments, no shell)"
            );
        };
        Ok(AiCommand {
            program,
            args: words.collect(),
            timeout,
        })
    }

    /// Feeds `prompt` on stdin and returns stdout. Failure, timeout or empty output is an
    /// error, so nothing is sent.
    pub fn run(&self, prompt: &str) -> Result<String> {
        let out = exec::run(
            &self.program,
            &self.args,
            Some(prompt.as_bytes()),
            self.timeout,
        )
        .with_context(|| {
            format!(
                "the ai transform (`{}`) failed; nothing was sent",
                self.program
            )
        })?;
        let text = String::from_utf8_lossy(&out.stdout).trim().to_string();
        if text.is_empty() {
            bail!(
                "the ai transform (`{}`) printed nothing; nothing was sent",
                self.program
            );
        }
        Ok(text)
    }
}

/// The prompt given to the `ai` command.
pub fn ai_prompt(answer: &str, instruction: &str) -> String {
    let ask = if instruction.trim().is_empty() {
        "Rewrite the following answer from a coding agent as a compact hand-over for another \
         coding agent: keep decisions, file paths, commands and code exactly; drop pleasantries."
    } else {
        instruction.trim()
    };
    format!("{ask}\n\n<answer>\n{answer}\n</answer>\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    const ANSWER: &str = "I fixed the off-by-one in `src/route/queue.rs` and updated tests/route.rs.\nIt was the loop bound.\n\nSecond paragraph with more words, see https://example.com/x.rs.\n\n```rust\nfor i in 0..n {\n    step(i);\n}\n```\n\nThen run `cargo test` in ./crates/core/ and check Cargo.toml:12.\n\n```sh\ncargo test\n```\n";

    #[test]
    fn summary_keeps_headline_paths_and_code() {
        let s = summary(ANSWER, SUMMARY_MAX_BYTES);
        assert!(s.starts_with("I fixed the off-by-one in `src/route/queue.rs` and updated tests/route.rs.\nIt was the loop bound.\n\nFiles:\n- src/route/queue.rs\n- tests/route.rs\n- ./crates/core/\n- Cargo.toml:12"), "{s}");
        assert!(s.contains("```rust\nfor i in 0..n {\n    step(i);\n}\n```"));
        assert!(s.ends_with("```sh\ncargo test\n```"));
        assert!(!s.contains("Second paragraph"));
        assert!(!s.contains("example.com"));
    }

    #[test]
    fn summary_is_deterministic_and_bounded() {
        let big = format!(
            "{}\n\n```\n{}\n```\n",
            "word ".repeat(400),
            "x".repeat(9000)
        );
        let a = summary(&big, 1000);
        assert_eq!(a, summary(&big, 1000));
        assert!(a.len() <= 1000, "{}", a.len());
        assert!(a.ends_with('…'));
        assert!(
            !a.contains("xxxx"),
            "a code block larger than the budget is left out"
        );
        let uni = "가".repeat(500);
        assert!(summary(&uni, 100).len() <= 100);
    }

    #[test]
    fn unterminated_code_block_is_closed() {
        let s = summary("Head.\n\n```\nlet x = 1;", 500);
        assert_eq!(s, "Head.\n\n```\nlet x = 1;\n```");
    }

    #[test]
    fn ai_command_is_split_without_a_shell() {
        let c = AiCommand::parse("llm -m 'a b'", Duration::from_secs(1)).unwrap();
        assert_eq!(c.program, "llm");
        assert_eq!(c.args, ["-m", "'a", "b'"]);
        assert!(AiCommand::parse("  ", Duration::from_secs(1)).is_err());
    }

    #[test]
    fn ai_command_output_failure_and_timeout() {
        let ok = AiCommand::parse("tr a-z A-Z", Duration::from_secs(5)).unwrap();
        assert_eq!(ok.run("hello").unwrap(), "HELLO");
        let fails = AiCommand::parse("false", Duration::from_secs(5)).unwrap();
        assert!(fails
            .run("x")
            .unwrap_err()
            .to_string()
            .contains("nothing was sent"));
        let slow = AiCommand::parse("sleep 5", Duration::from_millis(200)).unwrap();
        let err = format!("{:#}", slow.run("x").unwrap_err());
        assert!(err.contains("did not finish"), "{err}");
        let silent = AiCommand::parse("true", Duration::from_secs(5)).unwrap();
        assert!(silent
            .run("x")
            .unwrap_err()
            .to_string()
            .contains("printed nothing"));
    }
}
