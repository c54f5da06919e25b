//! User options and messages: what the watcher and the status commands write into tmux.

use super::{Tmux, TmuxError};

/// Where a user option lives.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scope {
    /// `set -g`.
    Global,
    /// `set -w -t @N`.
    Window(String),
    /// `set -p -t %N`.
    Pane(String),
}

/// One option to set (`Some`) or unset (`None`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OptionChange {
    pub scope: Scope,
    pub name: String,
    pub value: Option<String>,
}

impl OptionChange {
    fn args(&self) -> Vec<String> {
        let mut flags = String::from("-");
        match &self.scope {
            Scope::Global => flags.push('g'),
            Scope::Window(_) => flags.push('w'),
            Scope::Pane(_) => flags.push('p'),
        }
        if self.value.is_none() {
            flags.push('u');
        }
        // -q: a window or pane that closed since the scan is not an error worth stopping for.
        flags.push('q');
        let mut args = vec!["set-option".to_string(), flags];
        match &self.scope {
            Scope::Global => {}
            Scope::Window(t) | Scope::Pane(t) => {
                args.push("-t".into());
                args.push(t.clone());
            }
        }
        args.push(self.name.clone());
        if let Some(v) = &self.value {
            args.push(v.clone());
        }
        args
    }
}

impl Tmux {
    /// Applies option changes in one tmux call (`;`-separated). When the batch fails (a target
    /// vanished mid-way), each change is retried alone so the others still land.
    pub fn set_options(&self, changes: &[OptionChange]) -> Result<(), TmuxError> {
        if changes.is_empty() {
            return Ok(());
        }
        let mut all: Vec<String> = Vec::new();
        for (i, c) in changes.iter().enumerate() {
            if i > 0 {
                all.push(";".into());
            }
            all.extend(c.args());
        }
        let refs: Vec<&str> = all.iter().map(String::as_str).collect();
        if let Err(first) = self.cmd(&refs) {
            if matches!(first, TmuxError::NoServer(_) | TmuxError::Missing) {
                return Err(first);
            }
            for c in changes {
                let args = c.args();
                let refs: Vec<&str> = args.iter().map(String::as_str).collect();
                self.cmd(&refs)?;
            }
        }
        Ok(())
    }

    /// Reads a global option; `None` when unset or empty.
    pub fn show_option(&self, name: &str) -> Result<Option<String>, TmuxError> {
        let out = self.cmd(&["show-options", "-gqv", name])?;
        let v = out.trim_end_matches('\n');
        Ok((!v.is_empty()).then(|| v.to_string()))
    }

    /// Expands a format on the server (`display-message -p`), optionally for a target.
    pub fn format(&self, target: Option<&str>, format: &str) -> Result<String, TmuxError> {
        let mut args = vec!["display-message", "-p"];
        if let Some(t) = target {
            args.extend(["-t", t]);
        }
        args.push(format);
        Ok(self.cmd(&args)?.trim_end_matches('\n').to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn option_args_by_scope() {
        let g = OptionChange {
            scope: Scope::Global,
            name: "@agentpane_status".into(),
            value: Some("⚡1".into()),
        };
        assert_eq!(g.args(), ["set-option", "-gq", "@agentpane_status", "⚡1"]);
        let w = OptionChange {
            scope: Scope::Window("@3".into()),
            name: "@agentpane_window_status".into(),
            value: None,
        };
        assert_eq!(
            w.args(),
            ["set-option", "-wuq", "-t", "@3", "@agentpane_window_status"]
        );
        let p = OptionChange {
            scope: Scope::Pane("%7".into()),
            name: "@agentpane_pane_status".into(),
            value: Some("your-turn".into()),
        };
        assert_eq!(
            p.args(),
            [
                "set-option",
                "-pq",
                "-t",
                "%7",
                "@agentpane_pane_status",
                "your-turn"
            ]
        );
    }
}
