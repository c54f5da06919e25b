//! The capture fallback (docs/design.md#extraction): when a pane has no transcript, read its
//! screen. The capture is ANSI-stripped, the agent's chrome is removed (prompt boxes, spinners,
//! "esc to interrupt", footers, tool-call blocks), and the last answer block is kept.
//!
//! Screen layouts recognised (see `fixtures/captures/`):
//! - Claude Code: answers start with `⏺ ` at column 0 and continue indented by two spaces;
//!   tool calls are `⏺ Name(args)` followed by `⎿` result lines; the composer is `❯`/`>`
//!   between `─` rules (or a `╭─╮ │ > │ ╰─╯` box); spinners lead with `✻ ✽ ✶ ✳ ✢ ·`.
//! - Codex: answers start with `• ` (older versions: a `codex` header line), tool blocks
//!   are `• Ran …`/`• Explored` with `└` lines; the prompt is `›` (older: `▌`); footers
//!   carry "context left", "⏎ send", "ctrl+c".

use crate::events::AgentKind;

/// Characters that lead a spinner/status line at column 0.
const SPINNERS: [char; 10] = ['✻', '✽', '✶', '✳', '✢', '·', '*', '✺', '✹', '◐'];
/// Prompt markers at column 0.
const PROMPTS: [char; 4] = ['❯', '>', '›', '▌'];
/// Fragments that only ever appear in agent chrome (footers, status lines, hints).
const CHROME_FRAGMENTS: [&str; 22] = [
    "esc to interrupt",
    "ctrl+c to interrupt",
    "? for shortcuts",
    "for shortcuts",
    "context left",
    "auto-accept edits",
    "accept edits on",
    "bypass permissions on",
    "plan mode on",
    "shift+tab to cycle",
    "⏎ send",
    "⏎ newline",
    "ctrl+c to exit",
    "ctrl+c again",
    "Press Ctrl-C again",
    "Press Ctrl-D again",
    "ctrl+j newline",
    "ctrl+t transcript",
    "Context left until auto-compact",
    "tokens used",
    "/ for commands",
    "Esc to clear again",
];
/// Questions an agent asks before it goes on (permission and approval dialogs): what is
/// under them is not an answer, and an answer above them belongs to an earlier turn.
const DIALOG_FRAGMENTS: [&str; 5] = [
    "Would you like to run",
    "Would you like to make",
    "Press enter to confirm",
    "Do you want to proceed",
    "Do you want to make this edit",
];
/// Codex tool-block headers (`• Ran cargo test`), which are not answers.
const CODEX_TOOL_HEADS: [&str; 16] = [
    "Ran ",
    "Running ",
    "Explored",
    "Exploring",
    "Edited ",
    "Editing ",
    "Read ",
    "Search",
    "Updated Plan",
    "Added ",
    "Deleted ",
    "Called ",
    "Calling ",
    "Waited",
    "Working",
    "Applied ",
];

/// How one screen line reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Starts an answer (`⏺ text`, `• text`, a `codex` header); carries the text offset.
    AnswerStart(usize),
    /// Starts a tool call or tool result.
    Tool,
    /// A user prompt or the composer.
    Prompt,
    /// Footer, spinner, rule, box, banner.
    Chrome,
    /// An indented or plain line: continues whatever block is open.
    Text,
    Blank,
}

/// Removes ANSI escape sequences and turns the result into text (lossy UTF-8).
pub fn strip_ansi(raw: &[u8]) -> String {
    let plain = strip_ansi_escapes::strip(raw);
    let text = String::from_utf8_lossy(&plain);
    text.lines()
        .map(str::trim_end)
        .collect::<Vec<_>>()
        .join("\n")
        .trim_matches('\n')
        .to_string()
}

/// The last answer block on a captured screen, or `None` when there is nothing but chrome.
/// In an agent's pane only an answer block counts: a start-up banner, an empty prompt or a
/// dialog waiting for a decision is no answer. Without an agent the whole text without chrome
/// lines comes back; a pane's answer never asks for that (a pane without an agent has none).
pub fn last_answer(raw: &[u8], agent: Option<AgentKind>) -> Option<String> {
    let text = strip_ansi(raw);
    let lines: Vec<&str> = text.lines().collect();
    let kinds = classify_lines(&lines, agent);
    let start = kinds
        .iter()
        .rposition(|k| matches!(k, Kind::AnswerStart(_)));
    if agent.is_some() {
        let dialog = lines
            .iter()
            .skip(start.map_or(0, |s| s + 1))
            .any(|l| DIALOG_FRAGMENTS.iter().any(|f| l.contains(f)));
        if start.is_none() || dialog {
            return None;
        }
    }
    let Some(start) = start else {
        let kept: Vec<&str> = lines
            .iter()
            .zip(&kinds)
            .filter(|(_, k)| matches!(k, Kind::Text | Kind::Blank))
            .map(|(l, _)| *l)
            .collect();
        return non_empty(kept.join("\n"));
    };
    let Kind::AnswerStart(offset) = kinds[start] else {
        return None;
    };
    let mut block: Vec<String> = Vec::new();
    let first = &lines[start][offset..];
    if !first.trim().is_empty() {
        block.push(first.to_string());
    }
    for (line, kind) in lines.iter().zip(&kinds).skip(start + 1) {
        match kind {
            Kind::Text | Kind::Blank => block.push(dedent(line).to_string()),
            _ => break,
        }
    }
    non_empty(block.join("\n"))
}

fn non_empty(s: String) -> Option<String> {
    let t = s.trim_matches('\n').trim_end();
    let t = t.trim_start_matches('\n');
    if t.trim().is_empty() {
        None
    } else {
        Some(t.to_string())
    }
}

/// Continuation lines are indented by two columns under the marker.
fn dedent(line: &str) -> &str {
    line.strip_prefix("  ").unwrap_or(line.trim_start())
}

fn classify_lines(lines: &[&str], agent: Option<AgentKind>) -> Vec<Kind> {
    let mut kinds = Vec::with_capacity(lines.len());
    let mut in_box = false;
    let mut in_tool = false;
    for line in lines {
        let trimmed = line.trim();
        let kind = if trimmed.is_empty() {
            Kind::Blank
        } else if in_box {
            if trimmed.starts_with('╰') {
                in_box = false;
            }
            Kind::Chrome
        } else if trimmed.starts_with('╭') {
            in_box = !trimmed.ends_with('╯') || !trimmed.contains('╰');
            Kind::Chrome
        } else {
            classify(line, agent)
        };
        // Lines under a tool call (indented, or `⎿`/`└` results) belong to the tool block.
        let kind = match kind {
            Kind::Tool => {
                in_tool = true;
                Kind::Tool
            }
            Kind::Text if in_tool => Kind::Tool,
            Kind::Blank => {
                in_tool = false;
                Kind::Blank
            }
            other => {
                in_tool = false;
                other
            }
        };
        kinds.push(kind);
    }
    kinds
}

fn classify(line: &str, agent: Option<AgentKind>) -> Kind {
    let trimmed = line.trim();
    let first = line.chars().next().unwrap_or(' ');
    if CHROME_FRAGMENTS.iter().any(|f| trimmed.contains(f)) {
        return Kind::Chrome;
    }
    if is_rule(trimmed) {
        return Kind::Chrome;
    }
    if trimmed.starts_with('⎿')
        || trimmed.starts_with('└')
        || agent.is_some_and(|a| crate::agents::of(a).tool_line(trimmed, first))
    {
        return Kind::Tool;
    }
    if let Some(rest) = line.strip_prefix("⏺ ").or_else(|| line.strip_prefix("● ")) {
        return if is_tool_call(rest) {
            Kind::Tool
        } else {
            Kind::AnswerStart(line.len() - rest.len())
        };
    }
    if let Some(rest) = line.strip_prefix("• ") {
        return if CODEX_TOOL_HEADS.iter().any(|h| rest.starts_with(h)) {
            Kind::Tool
        } else {
            Kind::AnswerStart(line.len() - rest.len())
        };
    }
    if trimmed == "codex" && first == 'c' {
        return Kind::AnswerStart(line.len());
    }
    if trimmed == "user" && first == 'u' {
        return Kind::Prompt;
    }
    if PROMPTS.contains(&first) {
        return Kind::Prompt;
    }
    if first == '│' || trimmed.starts_with(['▐', '▝', '▘', '▛', '▜', '█']) {
        return Kind::Chrome;
    }
    if SPINNERS.contains(&first) && line[first.len_utf8()..].starts_with(' ') {
        return Kind::Chrome;
    }
    if trimmed.starts_with("✻ Worked for") || trimmed.starts_with("─ Worked for") {
        return Kind::Chrome;
    }
    Kind::Text
}

/// A line made only of box-drawing rule characters.
fn is_rule(trimmed: &str) -> bool {
    trimmed.chars().count() >= 3
        && trimmed
            .chars()
            .all(|c| matches!(c, '─' | '━' | '═' | '-' | '╌' | '┄' | ' '))
        && trimmed.contains(['─', '━', '═', '╌', '┄'])
}

/// `Name(args)` right after the marker: a Claude Code tool call (`Bash(cargo test)`,
/// `Read(src/main.rs)`, `mcp__x__y (MCP)(…)`).
fn is_tool_call(rest: &str) -> bool {
    let open = match rest.find(" (MCP)(") {
        Some(i) => i,
        None => match rest.find('(') {
            Some(i) => i,
            None => return false,
        },
    };
    let name = &rest[..open];
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-:.".contains(c))
        && name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_uppercase() || name.contains("__"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_answer_after_tool_call() {
        let screen = "❯ read Cargo.toml\n\n⏺ Read(Cargo.toml)\n  ⎿  Read 14 lines\n\n⏺ The package is `demo`.\n\n  It has one binary.\n\n───────\n❯ \n───────\n  ? for shortcuts\n";
        assert_eq!(
            last_answer(screen.as_bytes(), Some(AgentKind::Claude)).as_deref(),
            Some("The package is `demo`.\n\nIt has one binary.")
        );
    }

    #[test]
    fn codex_answer_after_ran_block() {
        let screen = "› run the tests\n\n• Ran cargo test\n  └ test result: ok. 3 passed\n\n• All 3 tests pass.\n\n› Find and fix a bug in @filename\n\n  100% context left · ? for shortcuts\n";
        assert_eq!(
            last_answer(screen.as_bytes(), Some(AgentKind::Codex)).as_deref(),
            Some("All 3 tests pass.")
        );
    }

    #[test]
    fn only_chrome_is_no_answer() {
        let screen = "╭──────────╮\n│ > hi     │\n╰──────────╯\n  ? for shortcuts\n✻ Thinking… (3s · esc to interrupt)\n";
        assert_eq!(
            last_answer(screen.as_bytes(), Some(AgentKind::Claude)),
            None
        );
    }

    /// What Codex 0.171 shows before the first prompt (recorded in a real pane): no answer.
    #[test]
    fn codex_start_up_screen_is_no_answer() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/fixtures/real-clients/codex-0.171.0/startup-screen.txt"
        );
        let screen = std::fs::read(path).expect("fixture");
        assert_eq!(last_answer(&screen, Some(AgentKind::Codex)), None);
        let empty = "› Ask Codex to do anything\n\n  ? for shortcuts\n";
        assert_eq!(last_answer(empty.as_bytes(), Some(AgentKind::Codex)), None);
    }

    /// An approval dialog (Codex 0.171, recorded) is no answer, even under an older one.
    #[test]
    fn approval_dialog_is_no_answer() {
        let screen = "• The mock answer is 42.\n\n› TOOL please\n\n• Running touch approved.txt\n\n  Would you like to run the following command?\n\n  Reason: mock needs it\n\n  $ touch approved.txt\n\n› 1. Yes, proceed (y)\n  2. No, and tell Codex what to do differently (esc)\n\n  Press enter to confirm or esc to cancel\n";
        assert_eq!(last_answer(screen.as_bytes(), Some(AgentKind::Codex)), None);
    }

    #[test]
    fn plain_pane_keeps_its_text() {
        let screen = "\x1b[32muser@host\x1b[0m:~$ ls\nCargo.toml  src\n";
        assert_eq!(
            last_answer(screen.as_bytes(), None).as_deref(),
            Some("user@host:~$ ls\nCargo.toml  src")
        );
    }

    #[test]
    fn tool_call_names_are_recognised() {
        assert!(is_tool_call("Bash(cargo test)"));
        assert!(is_tool_call("Update(src/lib.rs)"));
        assert!(is_tool_call("mcp__github__get_issue (MCP)(owner: \"x\")"));
        assert!(!is_tool_call("The fix (in lib.rs) works."));
        assert!(!is_tool_call("done (mostly)"));
    }
}
