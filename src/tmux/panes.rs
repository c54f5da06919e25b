//! `list-panes` output → typed [`Pane`] values.

use serde::Serialize;

/// Fields are separated by US (0x1f), which tmux never puts into names or titles (it drops
/// control characters from a title a program sets and refuses them in `select-pane -T`).
const SEP: char = '\u{1f}';

/// The `-F` format for `list-panes -a`, in the order [`parse_line`] expects.
pub const PANE_FORMAT: &str = "#{pane_id}\u{1f}#{pane_pid}\u{1f}#{session_name}\u{1f}#{window_index}\u{1f}#{window_name}\u{1f}#{pane_index}\u{1f}#{pane_current_path}\u{1f}#{pane_active}\u{1f}#{window_active}\u{1f}#{session_attached}\u{1f}#{pane_dead}\u{1f}#{window_id}\u{1f}#{pane_current_command}\u{1f}#{pane_tty}\u{1f}#{window_activity}\u{1f}#{pane_title}";

/// One tmux pane.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Pane {
    /// `%N`.
    pub pane_id: String,
    /// The pane's first process (usually a shell).
    pub pane_pid: u32,
    pub session: String,
    pub window_index: u32,
    pub window_name: String,
    /// `@N`.
    pub window_id: String,
    pub pane_index: u32,
    pub cwd: String,
    pub pane_active: bool,
    pub window_active: bool,
    /// Number of clients attached to the session.
    pub session_attached: u32,
    pub dead: bool,
    pub current_command: String,
    /// The pane's terminal (`/dev/pts/3`): the safety poll reads when it last had output.
    #[serde(skip)]
    pub tty: String,
    /// When the pane's window last had output, seconds since the epoch (`None` when tmux did
    /// not say). It changes all the time, so it is no part of a pane's identity either.
    #[serde(skip)]
    pub activity: Option<i64>,
    /// The terminal title the pane's program set (Gemini CLI keeps its status there). It
    /// changes all the time, so it is no part of a pane's identity (see [`Pane::same_pane`]).
    #[serde(skip)]
    pub title: String,
}

impl Pane {
    /// `session:window.pane`.
    pub fn target(&self) -> String {
        format!("{}:{}.{}", self.session, self.window_index, self.pane_index)
    }

    /// `session:window`.
    pub fn window_target(&self) -> String {
        format!("{}:{}", self.session, self.window_index)
    }

    /// Equal but for the title and the last output: the same pane running the same thing.
    pub fn same_pane(&self, other: &Pane) -> bool {
        let mut a = self.clone();
        a.title.clone_from(&other.title);
        a.activity = other.activity;
        a == *other
    }

    /// The user is looking at this pane right now.
    pub fn focused(&self) -> bool {
        self.pane_active && self.window_active && self.session_attached > 0
    }
}

/// Parses the whole output; malformed lines (a pane vanishing mid-listing) are skipped.
pub fn parse_list(out: &str) -> Vec<Pane> {
    out.lines().filter_map(parse_line).collect()
}

/// Parses one line of [`PANE_FORMAT`].
pub fn parse_line(line: &str) -> Option<Pane> {
    let f: Vec<&str> = line.split(SEP).collect();
    if f.len() < 16 {
        return None;
    }
    let flag = |s: &str| s == "1";
    Some(Pane {
        pane_id: f[0].to_string(),
        pane_pid: f[1].parse().ok()?,
        session: f[2].to_string(),
        window_index: f[3].parse().ok()?,
        window_name: f[4].to_string(),
        pane_index: f[5].parse().ok()?,
        cwd: f[6].to_string(),
        pane_active: flag(f[7]),
        window_active: flag(f[8]),
        session_attached: f[9].parse().unwrap_or(0),
        dead: flag(f[10]),
        window_id: f[11].to_string(),
        current_command: f[12].to_string(),
        tty: f[13].to_string(),
        activity: f[14].parse().ok(),
        // The last field: whatever it holds is the title.
        title: f[15..].join("\u{1f}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_with_spaces_hashes_and_unicode_survive() {
        let line = "%3\u{1f}4242\u{1f}my work #1\u{1f}2\u{1f}코드 리뷰 #x\u{1f}0\u{1f}/home/u/a b\u{1f}1\u{1f}0\u{1f}1\u{1f}0\u{1f}@7\u{1f}claude\u{1f}/dev/pts/3\u{1f}1796193805\u{1f}✦  Working… (a b) #1";
        let p = parse_line(line).unwrap();
        assert_eq!(p.pane_id, "%3");
        assert_eq!(p.pane_pid, 4242);
        assert_eq!(p.session, "my work #1");
        assert_eq!(p.window_name, "코드 리뷰 #x");
        assert_eq!(p.cwd, "/home/u/a b");
        assert_eq!(p.target(), "my work #1:2.0");
        assert!(p.pane_active && !p.window_active && !p.focused());
        assert_eq!(p.current_command, "claude");
        assert_eq!(p.activity, Some(1796193805));
        assert_eq!(p.title, "✦  Working… (a b) #1");
        let sep = parse_line(&format!("{line}\u{1f}more")).unwrap();
        assert_eq!(sep.title, "✦  Working… (a b) #1\u{1f}more");
        assert_eq!(sep.current_command, "claude");
        assert!(p.same_pane(&sep) && p != sep);
        let later = parse_line(&line.replace("1796193805", "1796193811")).unwrap();
        assert!(p.same_pane(&later) && p != later, "new output, same pane");
    }

    #[test]
    fn a_line_without_a_title_field_is_skipped() {
        let line = "%3\u{1f}4242\u{1f}s\u{1f}2\u{1f}w\u{1f}0\u{1f}/\u{1f}1\u{1f}0\u{1f}1\u{1f}0\u{1f}@7\u{1f}claude\u{1f}/dev/pts/3\u{1f}1";
        assert!(parse_line(line).is_none());
        assert_eq!(parse_line(&format!("{line}\u{1f}")).unwrap().title, "");
    }

    #[test]
    fn truncated_lines_are_skipped() {
        assert!(parse_line("%3\u{1f}12").is_none());
        assert!(parse_list("garbage\n\n").is_empty());
    }
}
