//! What Copilot CLI's screen says (captured with `tmux capture-pane -p -J`). The session log
//! already shows approvals and questions (see [`super::parse::pending`]); the screen confirms
//! them and is all there is before the first prompt. Copilot 1.0.102 draws:
//! - an approval as a rounded box at the bottom, in place of the input box: the intention, the
//!   command in an inner box, `Do you want to run this command?` (or `… use this tool?`,
//!   `… modify <file>?`, `… read this path?`, …), options `❯ 1. Yes` / `2. Yes, and don't ask
//!   again …` / `3. No, and tell Copilot what to do differently (Esc to stop)` and the footer
//!   `↑/↓ to navigate · enter to select · esc to cancel`;
//! - an `ask_user` question as `Copilot needs information.`, the message, the choices and
//!   `↑/↓ select · enter accept · ctrl+d decline · esc cancel`;
//! - a busy footer `○ Working esc esc edit prompt` (`● Working · 109 B esc esc interrupt` while
//!   text streams), an idle one `← open sidebar · Interactive · Manual Approval · / commands …`;
//! - a failed turn as `✗ <error>`, an Escape as `● Operation cancelled by user`.
//!
//! While it retries a failed model call (a 429: five retries over ~60 s) the screen shows only
//! the busy footer: no retry line to read (the process log has one line per failure, see
//! [`super::log`]).

/// Lines from the bottom searched for a dialog (the approval box is ~20 lines high).
const NEAR_BOTTOM: usize = 40;

/// What a dialog asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DialogKind {
    /// Run a command, use a tool, edit or read a file, fetch a URL?
    Permission,
    /// An `ask_user` question.
    Question,
}

/// A dialog on screen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dialog {
    pub kind: DialogKind,
    /// `bash`, `edit`, `read`, `url`, `mcp`, `tool` — from the question asked.
    pub tool: Option<String>,
    /// The command in the inner box (approvals), the message (questions).
    pub detail: Option<String>,
    /// The question line as shown (`Do you want to run this command?`).
    pub title: String,
}

impl Dialog {
    /// As a request, read from the screen.
    pub fn request(&self) -> crate::read::request::Request {
        use crate::read::request::{PromptKind, Request, RequestSource};
        let kind = match self.kind {
            DialogKind::Permission => PromptKind::Permission,
            DialogKind::Question => PromptKind::Question,
        };
        let detail = self.detail.as_deref().unwrap_or(&self.title);
        let text = format!("{detail}\n{}", self.title);
        Request::new(
            kind,
            self.tool.as_deref().unwrap_or_default(),
            detail,
            &text,
            None,
            RequestSource::Screen,
        )
    }

    /// The `waiting` reason, as [`super::parse::Pending::reason`] words it.
    pub fn reason(&self) -> String {
        match (self.kind, &self.tool, &self.detail) {
            (DialogKind::Permission, Some(t), Some(d)) => {
                format!("permission: {t} ({})", crate::text::chars(d, 60))
            }
            (DialogKind::Permission, Some(t), None) => format!("permission: {t}"),
            (DialogKind::Permission, None, _) => "permission".into(),
            (DialogKind::Question, _, _) => "question".into(),
        }
    }
}

/// The approval dialog or question on screen, if one is up.
pub fn dialog(screen: &str) -> Option<Dialog> {
    let clean = strip_ansi_escapes::strip_str(screen);
    let all: Vec<&str> = clean.lines().collect();
    let end = all.iter().rposition(|l| !l.trim().is_empty())? + 1;
    let lines = &all[end.saturating_sub(NEAR_BOTTOM)..end];
    permission(lines).or_else(|| question(lines))
}

/// The keys of the approval dialog on `screen`: its numbered yes and "don't ask again" by
/// number (1.0.102 takes a digit as the choice), deny by Escape — a digit for its "No, and tell
/// Copilot what to do differently" only moves the selection there, while Escape stops the call
/// as that label says.
pub fn choices(screen: &str) -> crate::read::dialog::Choices {
    let clean = strip_ansi_escapes::strip_str(screen);
    let lines: Vec<&str> = clean.lines().collect();
    let Some(at) = approval_title(&lines) else {
        return Default::default();
    };
    let mut c = crate::read::dialog::numbered_choices(&lines[at + 1..]);
    c.deny = Some(vec!["Escape".to_string()]);
    c
}

/// The labels of the approval dialog's options on `screen`, in order: the numbered run under
/// its question (see [`crate::read::dialog::numbered`]).
pub fn options(screen: &str) -> Vec<String> {
    let clean = strip_ansi_escapes::strip_str(screen);
    let lines: Vec<&str> = clean.lines().collect();
    approval_title(&lines).map_or_else(Vec::new, |at| {
        crate::read::dialog::numbered_labels(&lines[at + 1..])
    })
}

/// Where the approval dialog's question is (`Do you want to run this command?`): the lowest
/// such line, under what it asks about.
fn approval_title(lines: &[&str]) -> Option<usize> {
    lines.iter().rposition(|l| {
        let c = content(l);
        c.starts_with("Do you want to ") && c.ends_with('?')
    })
}

fn permission(lines: &[&str]) -> Option<Dialog> {
    let at = approval_title(lines)?;
    let below = &lines[at + 1..];
    let answers = crate::read::dialog::numbered_labels(below)
        .iter()
        .any(|o| crate::read::dialog::yes_label(o));
    let footer = below.iter().any(|l| {
        let c = content(l);
        c.contains("enter to select") && c.contains("esc to cancel")
    });
    if !answers || !footer || below.iter().any(|l| idle_footer(l)) {
        return None;
    }
    let title = content(lines[at]).to_string();
    // The box's own top border, then its lines down to the question.
    let top = lines[..at]
        .iter()
        .rposition(|l| l.trim_start().starts_with('╭'))?;
    let inner = lines[top + 1..at].iter().map(|l| content(l)).find_map(|c| {
        let c = c.strip_prefix('│')?.strip_suffix('│')?.trim();
        (!c.is_empty()).then(|| c.to_string())
    });
    Some(Dialog {
        kind: DialogKind::Permission,
        tool: tool_of(&title).map(str::to_string),
        detail: inner,
        title,
    })
}

fn question(lines: &[&str]) -> Option<Dialog> {
    let at = lines
        .iter()
        .rposition(|l| content(l) == "Copilot needs information.")?;
    let below = &lines[at + 1..];
    let footer = below.iter().any(|l| {
        let c = content(l);
        c.contains("enter accept") && c.contains("esc cancel")
    });
    if !footer || below.iter().any(|l| idle_footer(l)) {
        return None;
    }
    Some(Dialog {
        kind: DialogKind::Question,
        tool: Some("ask_user".into()),
        detail: below
            .iter()
            .map(|l| content(l))
            .find(|c| !c.is_empty())
            .map(str::to_string),
        title: "Copilot needs information.".into(),
    })
}

/// The tool a dialog's question is about.
fn tool_of(title: &str) -> Option<&'static str> {
    let q = title.strip_prefix("Do you want to ")?;
    let tool = match q {
        q if q.starts_with("run this command") || q.starts_with("re-run this command") => "bash",
        q if q.starts_with("use this tool") || q.starts_with("allow this tool call") => "tool",
        q if q.starts_with("approve this re") => "mcp",
        q if q.starts_with("read this path") => "read",
        q if q.starts_with("modify ")
            || q.starts_with("create ")
            || q.starts_with("edit ")
            || q.starts_with("delete ")
            || q.starts_with("perform ") =>
        {
            "edit"
        }
        q if q.contains("URL") || q.starts_with("allow this access") => "url",
        _ => return None,
    };
    Some(tool)
}

/// What the footer line says the client is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Footer {
    /// `○ Working …`: a turn runs (a model call, a retry, a tool).
    Working,
    /// The idle footer: the input box waits for a prompt.
    Idle,
}

/// The footer of the last painted line, if it is one of Copilot's.
pub fn footer(screen: &str) -> Option<Footer> {
    let clean = strip_ansi_escapes::strip_str(screen);
    let last = clean.lines().rev().find(|l| !l.trim().is_empty())?;
    let l = last.trim_start();
    if ["○ Working", "● Working", "◉ Working"]
        .iter()
        .any(|w| l.starts_with(w))
    {
        Some(Footer::Working)
    } else if idle_footer(l) {
        Some(Footer::Idle)
    } else {
        None
    }
}

/// The error of the turn that just failed (`✗ 400 model stand-in does not exist`), when it is
/// the last thing above the input box.
pub fn failed(screen: &str) -> Option<String> {
    let clean = strip_ansi_escapes::strip_str(screen);
    let lines: Vec<&str> = clean.lines().filter(|l| !l.trim().is_empty()).collect();
    let input = lines
        .iter()
        .rposition(|l| l.trim_start().starts_with('❯'))?;
    // The path line and a rule sit between the last output and the input box; a submitted
    // prompt (`❯ text`) above them means the error belongs to an earlier turn.
    lines[..input]
        .iter()
        .rev()
        .take(4)
        .take_while(|l| !l.trim_start().starts_with('❯'))
        .find_map(|l| l.trim_start().strip_prefix("✗ "))
        .map(|e| crate::text::chars(e.trim(), 200))
}

/// The line count of a collapsed paste in the input box: Copilot 1.0.102 shows a bracketed
/// paste of more than 10 lines as `❯ [Paste #N - M lines]` (and submits the full text); a
/// shorter or single-line paste shows as typed.
pub fn paste_placeholder(screen: &str) -> Option<usize> {
    let clean = strip_ansi_escapes::strip_str(screen);
    let input = clean
        .lines()
        .rev()
        .find(|l| l.trim_start().starts_with('❯'))?;
    let rest = input.trim_start().strip_prefix('❯')?.trim();
    let inner = rest.strip_prefix("[Paste #")?.split_once("]")?.0;
    let (_, count) = inner.split_once(" - ")?;
    count.strip_suffix(" lines")?.trim().parse().ok()
}

fn idle_footer(line: &str) -> bool {
    let c = content(line);
    c.contains(" · / commands · ") || c.starts_with("← open sidebar")
}

/// A line without the dialog's box border.
fn content(line: &str) -> &str {
    let t = line.trim();
    let t = t.strip_prefix('│').unwrap_or(t);
    let t = t.strip_suffix('│').unwrap_or(t);
    t.trim()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agents::copilot::testkit::fixture;

    fn screen(name: &str) -> String {
        fixture(&format!("screens/{name}.txt"))
    }

    #[test]
    fn the_approval_dialog_names_tool_and_command() {
        let d = dialog(&screen("approval")).expect("the dialog");
        assert_eq!(d.kind, DialogKind::Permission);
        assert_eq!(d.title, "Do you want to run this command?");
        assert_eq!(d.detail.as_deref(), Some("touch hello.txt"));
        assert_eq!(d.reason(), "permission: bash (touch hello.txt)");
        let c = choices(&screen("approval"));
        assert_eq!(c.allow, Some(vec!["1".to_string()]));
        assert_eq!(c.always, Some(vec!["2".to_string()]));
        assert_eq!(c.deny, Some(vec!["Escape".to_string()]));
        assert_eq!(choices(&screen("start")), Default::default());
    }

    #[test]
    fn lines_of_the_command_are_never_its_options() {
        use crate::read::dialog::with_option_like_lines;
        let shown = with_option_like_lines(&screen("approval"), "│ touch hello.txt");
        assert_eq!(
            dialog(&shown).expect("the dialog").detail.as_deref(),
            Some("touch hello.txt")
        );
        let c = choices(&shown);
        assert_eq!(c.allow, Some(vec!["1".to_string()]));
        assert_eq!(c.always, Some(vec!["2".to_string()]));
        assert_eq!(c.deny, Some(vec!["Escape".to_string()]));
        assert_eq!(options(&shown).len(), 3, "{:?}", options(&shown));
    }

    #[test]
    fn the_question_form_is_a_question() {
        let d = dialog(&screen("ask-user")).expect("the form");
        assert_eq!(d.kind, DialogKind::Question);
        assert_eq!(d.detail.as_deref(), Some("Which color?"));
        assert_eq!(d.reason(), "question");
    }

    #[test]
    fn no_dialog_once_answered_or_on_any_other_screen() {
        for name in [
            "start",
            "plain-0.5s",
            "plain-done",
            "streaming",
            "aborted",
            "approved-done",
            "esc-at-approval",
            "ask-answered",
            "400",
            "429-retrying",
            "429-failed",
            "exit",
        ] {
            assert_eq!(dialog(&screen(name)), None, "{name}");
        }
        // A dialog with the idle footer under it is history, not a live dialog.
        let painted: String = screen("approval")
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| format!("{l}\n"))
            .collect();
        assert!(dialog(&painted).is_some());
        let history = format!(
            "{painted} ← open sidebar · Interactive · Manual Approval · / commands · ? help\n"
        );
        assert_eq!(dialog(&history), None);
        // Prose that asks the same.
        assert_eq!(
            dialog(" ● Do you want to run this command?\n ❯ 1. Yes\n"),
            None
        );
    }

    #[test]
    fn the_footer_says_working_or_idle() {
        assert_eq!(footer(&screen("plain-0.5s")), Some(Footer::Working));
        assert_eq!(footer(&screen("streaming")), Some(Footer::Working));
        // A 429 being retried: only the busy footer.
        assert_eq!(footer(&screen("429-retrying")), Some(Footer::Working));
        assert_eq!(footer(&screen("plain-done")), Some(Footer::Idle));
        assert_eq!(footer(&screen("exit")), None);
    }

    #[test]
    fn a_long_paste_shows_as_a_placeholder() {
        assert_eq!(paste_placeholder(&screen("paste-placeholder")), Some(20));
        // Three lines show as typed.
        let three = screen("paste-three-lines");
        assert_eq!(paste_placeholder(&three), None);
        assert!(three.contains("❯ line one"));
        assert_eq!(paste_placeholder(&screen("plain-done")), None);
    }

    #[test]
    fn a_failed_turn_shows_its_error() {
        assert_eq!(
            failed(&screen("400")).as_deref(),
            Some("400 model stand-in does not exist")
        );
        assert!(failed(&screen("429-failed"))
            .unwrap()
            .ends_with("Last error: 429 quota exceeded for stand-in"));
        assert_eq!(failed(&screen("plain-done")), None);
        assert_eq!(failed(&screen("429-retrying")), None);
    }
}
