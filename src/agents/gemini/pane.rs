//! What Gemini CLI's pane says that its log cannot: a tool call waiting for approval (calls
//! are logged only once complete) and a turn still running after a text reply. Gemini CLI
//! keeps the terminal title current (`◇  Ready`, `✦  Working…`, `⏲  Working…`,
//! `✋  Action Required`, each followed by the folder), and draws its approval dialog with
//! the tool's name (`Allow execution of [Shell]?`).

use crate::state::Source;
use crate::state::{age, State, Status, Windows};

/// The state Gemini CLI puts in the terminal title.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Title {
    Ready,
    Working,
    ActionRequired,
}

/// Reads a pane title; `None` when it is not one of Gemini CLI's status titles (the user
/// turned `ui.dynamicWindowTitle` off, or another program set it).
pub fn title_state(title: &str) -> Option<Title> {
    let t = title.trim_start();
    if t.starts_with("✋") {
        Some(Title::ActionRequired)
    } else if t.starts_with("◇") {
        Some(Title::Ready)
    } else if t.starts_with("✦") || t.starts_with("⏲") {
        Some(Title::Working)
    } else {
        None
    }
}

/// The last `n` non-empty lines of a screen, without the dialog box's borders.
fn dialog_lines(screen: &str, n: usize) -> Vec<&str> {
    let lines: Vec<&str> = screen
        .lines()
        .map(|l| {
            l.trim()
                .trim_start_matches(['│', '╭', '╰'])
                .trim_end_matches(['│', '╮', '╯'])
                .trim()
        })
        .filter(|l| !l.is_empty())
        .collect();
    lines[lines.len().saturating_sub(n)..].to_vec()
}

/// A dialog option without the selection marker: `1. Allow once`.
fn option(line: &str) -> &str {
    line.trim_start_matches(['●', '○', '❯', '›', '>', ' '])
}

/// Whether `line` is an approval dialog's title.
pub fn is_title(line: &str) -> bool {
    line.starts_with("Allow execution of")
        || line == "Apply this change?"
        || line == "Do you want to proceed?"
}

/// The approval dialog on screen, if any, and the tool it asks about.
pub fn dialog_tool(screen: &str) -> Option<Option<String>> {
    let tail = dialog_lines(screen, 40);
    let (at, tool) = tail.iter().enumerate().rev().find_map(|(i, l)| {
        let tool = if let Some(rest) = l.strip_prefix("Allow execution of MCP tool \"") {
            Some(rest.split('"').next().unwrap_or_default().to_string())
        } else if let Some(rest) = l.strip_prefix("Allow execution of [") {
            Some(rest.split(']').next().unwrap_or_default().to_string())
        } else if *l == "Apply this change?" {
            Some("Edit".to_string())
        } else if *l == "Do you want to proceed?" {
            None
        } else {
            return None;
        };
        Some((i, tool.filter(|t| !t.is_empty())))
    })?;
    let approves = tail[at + 1..]
        .iter()
        .map(|l| option(l))
        .any(|l| l.starts_with("1. Allow") || l.starts_with("1. Yes"));
    approves.then_some(tool)
}

/// How long an open turn stays quiet in the log before the screen is checked for the
/// spent-quota dialog (the log holds only the prompt while it is up).
pub const QUOTA_LOOK: std::time::Duration = std::time::Duration::from_secs(3);

/// The spent-quota dialog on screen, if any: its first line (`Usage limit reached for
/// gemini-2.5-flash.`), above the `Keep trying` / `Stop` choice.
pub fn quota_dialog(screen: &str) -> Option<String> {
    let tail = dialog_lines(screen, 20);
    let at = tail
        .iter()
        .rposition(|l| l.starts_with("Usage limit reached for "))?;
    let choice = |word: &str| {
        tail[at + 1..].iter().any(|l| {
            option(l)
                .split_once(". ")
                .is_some_and(|(n, rest)| n.parse::<u8>().is_ok() && rest == word)
        })
    };
    (choice("Keep trying") && choice("Stop")).then(|| tail[at].trim_end_matches('.').to_string())
}

/// True when Gemini CLI's input box still holds text (a prompt not submitted). The box is the
/// `> ` line under the last rule (`────`); empty, it shows `Type your message…`.
pub fn input_pending(screen: &str) -> bool {
    let lines: Vec<&str> = screen.lines().collect();
    let Some(rule) = lines
        .iter()
        .rposition(|l| l.trim_start().starts_with("────"))
    else {
        return false;
    };
    lines[rule + 1..]
        .iter()
        .filter_map(|l| l.trim_start().strip_prefix('>'))
        .map(str::trim)
        .next()
        .is_some_and(|rest| !rest.is_empty() && !rest.starts_with("Type your message"))
}

/// Whether [`refine`] will look at the screen: an approval the title announces, or a quiet
/// working turn that may be the spent-quota dialog.
pub fn wants_screen(status: &Status, title: &str, now: crate::events::Time) -> bool {
    match title_state(title) {
        Some(Title::ActionRequired) => true,
        Some(Title::Working) => {
            status.state == State::Working
                && status.turn_open
                && age(now, status.last_activity) >= QUOTA_LOOK
        }
        Some(Title::Ready) | None => false,
    }
}

/// Folds the pane title (and, for an approval, the screen) onto the log's reading.
pub fn refine(
    status: Status,
    source: Source,
    title: Option<&str>,
    screen: impl FnOnce() -> Option<String>,
    now: crate::events::Time,
    windows: &Windows,
) -> (Status, Source) {
    let Some(title) = title.and_then(title_state) else {
        return (status, source);
    };
    let mut s = status;
    match title {
        Title::ActionRequired => {
            let tool = screen().as_deref().and_then(dialog_tool).flatten();
            s.state = State::Waiting;
            s.reason = Some(match tool {
                Some(t) => format!("permission: {t}"),
                None => "permission".into(),
            });
            s.turn_open = true;
            s.seen = false;
            (s, Source::Pane)
        }
        Title::Working => {
            // A spent quota: Gemini CLI asks whether to keep trying; the log shows only the
            // prompt until the human answers, and the title still says working.
            if s.state == State::Working && s.turn_open && age(now, s.last_activity) >= QUOTA_LOOK {
                if let Some(line) = screen().as_deref().and_then(quota_dialog) {
                    s.state = State::Attention;
                    s.reason = Some(format!("quota exceeded: {line} (Keep trying or Stop?)"));
                    s.seen = false;
                    return (s, Source::Pane);
                }
            }
            // A retry loop read from the screen (`Agent::retrying`) stands: the title says
            // working all the while.
            if matches!(s.state, State::Working | State::Waiting) || s.retry.is_some() {
                return (s, source);
            }
            if !s.turn_open {
                s.reason = None;
            }
            s.state = State::Working;
            s.turn_open = true;
            s.last_activity = Some(now);
            (s, Source::Pane)
        }
        Title::Ready => {
            // The log still shows an open turn: it ended without a closing record (an empty
            // reply), or the text reply is still settling. Right after a prompt the title
            // may lag the log, so only a turn quiet past the settle window is closed.
            let open = s.turn_open
                && matches!(s.state, State::Working | State::Stalled | State::Idle)
                && age(now, s.last_activity) >= windows.settle;
            if !open {
                return (s, source);
            }
            s.state = if age(now, s.last_activity) > windows.your_turn {
                State::Idle
            } else {
                State::YourTurn
            };
            s.reason = None;
            s.turn_open = false;
            s.at = s.last_activity.or(s.at);
            (s, Source::Pane)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DIALOG: &str = "\
 > TOOL:mkdir newdir
╭──────────────────────────────────────────────╮
│ ? Shell  mkdir newdir                        │
│ ╭──────────────────────────────────────────╮ │
│ │ mkdir newdir                             │ │
│ ╰──────────────────────────────────────────╯ │
│ Allow execution of [Shell]?                  │
│                                              │
│ ● 1. Allow once                              │
│   2. Allow for this session                  │
│   3. No, suggest changes (esc)               │
╰──────────────────────────────────────────────╯
";

    fn working() -> Status {
        let mut s = Status::idle();
        s.state = State::Working;
        s.turn_open = true;
        s.reason = Some("tool: pending".into());
        s.last_activity = Some(chrono::Utc::now());
        s
    }

    #[test]
    fn the_input_box_tells_a_held_prompt_from_an_empty_one() {
        let rule = "─".repeat(40);
        let held = format!(
            "{rule}\n Shift+Tab to accept edits\n > hello gemini\n workspace (/directory)\n"
        );
        let pasted = format!("{rule}\n > [Pasted Text: 8 lines]\n workspace\n");
        let empty = format!(
            " > hello gemini\n{rule}\n >   Type your message or @path/to/file\n workspace\n"
        );
        assert!(input_pending(&held));
        assert!(input_pending(&pasted));
        assert!(
            !input_pending(&empty),
            "the prompt above the box is history"
        );
        assert!(!input_pending(DIALOG));
    }

    #[test]
    fn titles() {
        assert_eq!(title_state("◇  Ready (proj)   "), Some(Title::Ready));
        assert_eq!(title_state("✦  Working… (proj)"), Some(Title::Working));
        assert_eq!(
            title_state("✦  Reading the file (proj)"),
            Some(Title::Working)
        );
        assert_eq!(title_state("⏲  Working… (proj)"), Some(Title::Working));
        assert_eq!(
            title_state("✋  Action Required (proj)"),
            Some(Title::ActionRequired)
        );
        assert_eq!(title_state("Gemini CLI (proj)"), None);
        assert_eq!(title_state("bash"), None);
    }

    #[test]
    fn the_approval_dialog_is_a_request_with_numbered_keys() {
        use crate::agents::Agent;
        let d = crate::agents::gemini::Gemini
            .on_screen(DIALOG)
            .expect("the dialog");
        assert_eq!(d.request.tool, "Shell");
        assert_eq!(d.request.summary, "mkdir newdir");
        assert!(d.request.text.ends_with("Allow execution of [Shell]?"));
        assert_eq!(d.choices.allow, Some(vec!["1".to_string()]));
        assert_eq!(d.choices.always, Some(vec!["2".to_string()]));
        assert_eq!(d.choices.deny, Some(vec!["3".to_string()]));
    }

    #[test]
    fn lines_of_the_command_are_never_its_options() {
        use crate::agents::Agent;
        let screen = crate::read::dialog::with_option_like_lines(DIALOG, "│ mkdir newdir");
        let d = crate::agents::gemini::Gemini
            .on_screen(&screen)
            .expect("the dialog");
        let keys = crate::read::dialog::single_keys(&d.choices);
        assert_eq!(keys, [Some("1"), Some("2"), Some("3")]);
        assert_eq!(d.options.len(), 3, "{:?}", d.options);
        assert_eq!(dialog_tool(&screen), Some(Some("Shell".into())));
    }

    #[test]
    fn the_approval_dialog_names_the_tool() {
        assert_eq!(dialog_tool(DIALOG), Some(Some("Shell".into())));
        assert_eq!(
            dialog_tool(" > Allow execution of [Shell]? is a question\n"),
            None
        );
        assert_eq!(dialog_tool("plain text\n"), None);
    }

    #[test]
    fn action_required_is_waiting_with_the_tool() {
        let now = chrono::Utc::now();
        let (s, src) = refine(
            working(),
            Source::Transcript,
            Some("✋  Action Required (proj)"),
            || Some(DIALOG.into()),
            now,
            &Windows::default(),
        );
        assert_eq!(s.state, State::Waiting);
        assert_eq!(s.reason.as_deref(), Some("permission: Shell"));
        assert_eq!(src, Source::Pane);
    }

    const QUOTA: &str =
        include_str!("../../../fixtures/real-clients/gemini-0.61.0/quota-dialog.txt");

    #[test]
    fn the_quota_dialog_is_read_from_the_screen() {
        assert_eq!(
            quota_dialog(QUOTA).as_deref(),
            Some("Usage limit reached for gemini-2.5-flash")
        );
        // Answered, the dialog is gone; its words in history are no dialog.
        let answered = QUOTA.replace("1. Keep trying", "");
        assert_eq!(quota_dialog(&answered), None);
        assert_eq!(quota_dialog(DIALOG), None);
        assert_eq!(quota_dialog(""), None);
    }

    #[test]
    fn a_quiet_working_turn_with_the_quota_dialog_needs_attention() {
        let now = chrono::Utc::now();
        let working_title = |s: Status, screen: &dyn Fn() -> Option<String>| {
            refine(
                s,
                Source::Transcript,
                Some("✦  Working… (p)"),
                screen,
                now,
                &Windows::default(),
            )
        };
        let mut quiet = working();
        quiet.reason = None;
        quiet.last_activity = Some(now - chrono::Duration::seconds(5));
        let (s, src) = working_title(quiet.clone(), &|| Some(QUOTA.into()));
        assert_eq!(s.state, State::Attention);
        assert_eq!(
            s.reason.as_deref(),
            Some("quota exceeded: Usage limit reached for gemini-2.5-flash (Keep trying or Stop?)")
        );
        assert_eq!(src, Source::Pane);
        // A turn that wrote moments ago is not looked at: the screen is not even captured.
        let (s, _) = working_title(working(), &|| panic!("captured a busy pane"));
        assert_eq!(s.state, State::Working);
        // Quiet, but no dialog (a long tool run): still working.
        let (s, _) = working_title(quiet, &|| Some(DIALOG.into()));
        assert_eq!(s.state, State::Working);
    }

    #[test]
    fn working_title_keeps_a_settled_reply_open() {
        let now = chrono::Utc::now();
        let mut done = Status::idle();
        done.state = State::YourTurn;
        let (s, _) = refine(
            done,
            Source::Transcript,
            Some("✦  Working… (p)"),
            || None,
            now,
            &Windows::default(),
        );
        assert_eq!(s.state, State::Working);
    }

    #[test]
    fn ready_title_closes_only_a_quiet_open_turn() {
        let now = chrono::Utc::now();
        let w = Windows::default();
        let (s, _) = refine(
            working(),
            Source::Transcript,
            Some("◇  Ready (p)"),
            || None,
            now,
            &w,
        );
        assert_eq!(s.state, State::Working, "fresh prompt: the title may lag");
        let mut quiet = working();
        quiet.last_activity = Some(now - chrono::Duration::seconds(10));
        let (s, _) = refine(
            quiet,
            Source::Transcript,
            Some("◇  Ready (p)"),
            || None,
            now,
            &w,
        );
        assert_eq!(s.state, State::YourTurn);
    }
}
