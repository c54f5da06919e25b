//! The README's own lines, so a test of what it tells a user breaks when the README changes.

/// README.md as committed beside the tests.
pub const README: &str = include_str!("../../README.md");

/// The text under the heading `heading` (a whole line such as `## Install`), up to the next
/// heading of the same level.
pub fn section(heading: &str) -> &'static str {
    let level = heading.split(' ').next().unwrap_or("##");
    let body = README
        .split(&format!("{heading}\n"))
        .nth(1)
        .unwrap_or_else(|| panic!("the README has no `{heading}`"));
    let end = body
        .match_indices(&format!("\n{level} "))
        .map(|(i, _)| i)
        .next()
        .unwrap_or(body.len());
    &body[..end]
}

/// The first fenced block of language `lang` in `text`.
pub fn block(text: &'static str, lang: &str) -> &'static str {
    text.split(&format!("```{lang}\n"))
        .nth(1)
        .and_then(|b| b.split("\n```").next())
        .unwrap_or_else(|| panic!("no ```{lang} block in:\n{text}"))
}

/// The commands of a block: its lines without comments and blank lines.
pub fn commands(block: &str) -> Vec<String> {
    block
        .lines()
        .filter(|l| !l.trim_start().starts_with('#') && !l.trim().is_empty())
        .map(str::to_owned)
        .collect()
}

/// The shell lines of the "Completions and man page" block.
pub fn completion_lines() -> Vec<String> {
    commands(block(section("## Completions and man page"), "sh"))
}

/// The first inline code span in `text` that starts with `prefix` (code in a block's
/// comment counts too); a line break in it reads as a space, as Markdown shows it.
pub fn code_starting(text: &str, prefix: &str) -> String {
    text.replace('\n', " ")
        .split(&format!("`{prefix}"))
        .nth(1)
        .and_then(|rest| rest.split('`').next())
        .map(|rest| format!("{prefix}{rest}"))
        .unwrap_or_else(|| panic!("no `{prefix}…` in:\n{text}"))
}
