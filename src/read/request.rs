//! What a `waiting` agent asks the human to decide (docs/design.md#deciding-from-anywhere): the
//! tool, a one-line summary and the full text, read from the agent's log where it records the
//! pending call, else from the dialog on its screen. The fingerprint names exactly what was
//! shown, so an answer can be held to it.

use std::hash::Hasher;

use serde::{Deserialize, Serialize};

/// What kind of decision the dialog asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PromptKind {
    /// Run a tool / command / edit?
    Permission,
    /// A question with choices (Claude's AskUserQuestion).
    Question,
    /// Approve a plan (Claude's plan mode exit).
    Plan,
}

/// Where a request was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RequestSource {
    /// The agent's own log (a pending tool call, a permission record).
    Log,
    /// The dialog on its screen.
    Screen,
}

/// Longest full text kept (a huge heredoc or file content is cut, marked `…`).
const MAX_TEXT: usize = 4000;
/// Longest summary.
const MAX_SUMMARY: usize = 100;

/// A pending decision as agentpane shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Request {
    pub kind: PromptKind,
    /// `Bash`, `Edit`, `WebFetch`, `AskUserQuestion`; the agent's own names.
    pub tool: String,
    /// One line: the command, the file and its change, the URL, the question.
    pub summary: String,
    /// Everything the agent asks with (command and description, a short diff, …).
    pub text: String,
    /// The agent's own id of the call, when its log has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub call_id: Option<String>,
    pub from: RequestSource,
    /// What must be visible in the dialog for it to be this request's (the command, the
    /// file's name, the URL's host); empty when the tool alone says it.
    #[serde(skip)]
    pub key: String,
    /// Names this request exactly: an answer carries it to say what the person saw.
    pub fingerprint: String,
}

impl Request {
    /// A request; `text` and `summary` are cut to size, and the fingerprint is taken.
    pub fn new(
        kind: PromptKind,
        tool: &str,
        summary: &str,
        text: &str,
        call_id: Option<String>,
        from: RequestSource,
    ) -> Request {
        let summary = summary.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
        let mut r = Request {
            kind,
            tool: crate::text::bounded(tool, 64),
            summary: crate::text::chars(summary.trim(), MAX_SUMMARY),
            text: crate::text::chars(text.trim_end(), MAX_TEXT),
            call_id,
            from,
            key: String::new(),
            fingerprint: String::new(),
        };
        r.fingerprint = r.fingerprint_of();
        r
    }

    /// Whether `s` has the shape of a fingerprint (16 lowercase hex digits), so it may go on
    /// a remote command line.
    pub fn is_fingerprint(s: &str) -> bool {
        s.len() == 16 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    }

    /// The same request, with what its dialog must show.
    pub fn keyed(mut self, key: &str) -> Request {
        self.key = crate::text::chars(key.trim(), 200);
        self
    }

    fn fingerprint_of(&self) -> String {
        let mut h = fnv::FnvHasher::default();
        for part in [
            self.tool.as_str(),
            self.text.as_str(),
            self.call_id.as_deref().unwrap_or(""),
        ] {
            h.write(part.as_bytes());
            h.write_u8(0x1f);
        }
        format!("{:016x}", h.finish())
    }

    /// Whether `shown`, the dialog on screen, is this request's dialog: the same tool where
    /// the screen names one, and this request's key (or, without one, its summary) among
    /// the dialog's lines. Whitespace is ignored: a dialog wraps and indents long commands.
    pub fn shown_in(&self, shown: &Request) -> bool {
        if shown.kind != self.kind {
            return false;
        }
        let same_tool = shown.tool.is_empty()
            || self.tool.is_empty()
            || shown.tool.eq_ignore_ascii_case(&self.tool);
        if !same_tool {
            return false;
        }
        let want = if self.key.is_empty() {
            &self.summary
        } else {
            &self.key
        };
        // A long command is cut on screen; its start is enough to tell two apart.
        let want: String = squash(want).chars().take(60).collect();
        let dialog = squash(&shown.text);
        want.is_empty() || dialog.contains(&want)
    }
}

/// `text` without whitespace (and without the `…` a cut line ends with).
pub fn squash(text: &str) -> String {
    text.chars()
        .filter(|c| !c.is_whitespace() && *c != '…')
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bash(cmd: &str, id: Option<&str>) -> Request {
        Request::new(
            PromptKind::Permission,
            "Bash",
            cmd,
            cmd,
            id.map(str::to_string),
            RequestSource::Log,
        )
        .keyed(cmd)
    }

    fn screen(tool: &str, text: &str) -> Request {
        Request::new(
            PromptKind::Permission,
            tool,
            text,
            text,
            None,
            RequestSource::Screen,
        )
    }

    #[test]
    fn fingerprints_tell_tool_text_and_call_apart() {
        let a = bash("rm -rf build", Some("t1"));
        assert_eq!(a.fingerprint, bash("rm -rf build", Some("t1")).fingerprint);
        assert_ne!(a.fingerprint, bash("rm -rf build", Some("t2")).fingerprint);
        assert_ne!(a.fingerprint, bash("rm -rf built", Some("t1")).fingerprint);
        assert_eq!(a.fingerprint.len(), 16);
    }

    #[test]
    fn a_dialog_shows_a_request_when_its_key_is_among_its_lines() {
        let r = bash("touch agentpane-tool-ran.txt", None);
        let wrapped = screen("Bash", "Bash command\n  touch agentpane-\n  tool-ran.txt\n");
        assert!(r.shown_in(&wrapped));
        assert!(!r.shown_in(&screen("Bash", "Bash command\n  touch other.txt")));
        assert!(!r.shown_in(&screen("Edit", "touch agentpane-tool-ran.txt")));
        // A screen that names no tool is judged by its lines alone.
        assert!(r.shown_in(&screen("", "$ touch agentpane-tool-ran.txt")));
    }

    #[test]
    fn a_long_command_matches_by_its_start() {
        let long = format!("echo {}", "x".repeat(300));
        let r = bash(&long, None);
        let cut = screen("Bash", &format!("echo {}…", "x".repeat(80)));
        assert!(r.shown_in(&cut));
    }

    #[test]
    fn a_question_is_never_a_permissions_dialog() {
        let q = Request::new(
            PromptKind::Question,
            "AskUserQuestion",
            "Which?",
            "Which?",
            None,
            RequestSource::Log,
        );
        assert!(!q.shown_in(&screen("AskUserQuestion", "Which?")));
    }

    #[test]
    fn text_and_summary_are_cut_to_size() {
        let r = bash(&"y".repeat(10_000), None);
        assert!(r.text.chars().count() <= MAX_TEXT + 1);
        assert!(r.summary.chars().count() <= MAX_SUMMARY + 1);
    }
}
