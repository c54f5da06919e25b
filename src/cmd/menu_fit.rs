//! Whether a `display-menu` fits its client. tmux draws no menu at all, and says nothing, when
//! the menu is taller or wider than the client's terminal (3.3a: its items plus 2 border lines,
//! its widest line plus 4 columns), so the `prefix + R` menu checks first and opens the picker
//! instead when it would not show.

use unicode_width::UnicodeWidthStr;

use crate::tmux::Tmux;

/// A client's terminal: columns and lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientSize {
    pub columns: usize,
    pub lines: usize,
}

/// The size of `client`'s terminal (tmux picks a client when there is none), if tmux tells it.
pub fn client_size(tmux: &Tmux, client: Option<&str>) -> Option<ClientSize> {
    let mut argv = vec!["display-message", "-p"];
    if let Some(c) = client {
        argv.extend(["-c", c]);
    }
    argv.push("#{client_width} #{client_height}");
    parse_size(&tmux.cmd(&argv).ok()?)
}

/// `160 45` → 160 columns, 45 lines; anything else (no client: empty fields) → none.
fn parse_size(out: &str) -> Option<ClientSize> {
    let (columns, lines) = out.trim().split_once(' ')?;
    Some(ClientSize {
        columns: columns.parse().ok().filter(|c| *c > 0)?,
        lines: lines.parse().ok().filter(|l| *l > 0)?,
    })
}

/// The terminal a menu titled `title` with `items` (`(name, key, command)`, names escaped for
/// tmux formats) needs: its widest line plus its border and padding, and a line per item plus
/// the border.
pub fn menu_size(title: &str, items: &[(String, String, String)]) -> ClientSize {
    let widest = items
        .iter()
        .map(|(name, key, _)| {
            let key = if key.is_empty() {
                0
            } else {
                key.width() + 3 // ` (1)`
            };
            shown_width(name) + key
        })
        .chain([shown_width(title)])
        .max()
        .unwrap_or(0);
    ClientSize {
        columns: widest + 4,
        lines: items.len() + 2,
    }
}

/// Whether a menu of `menu`'s size shows on a terminal of `client`'s.
pub fn fits(menu: ClientSize, client: ClientSize) -> bool {
    menu.columns <= client.columns && menu.lines <= client.lines
}

/// The width of text escaped for tmux formats, as drawn (`##` is one `#`).
fn shown_width(escaped: &str) -> usize {
    escaped.replace("##", "#").width()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn items(n: usize, name: &str) -> Vec<(String, String, String)> {
        (0..n)
            .map(|i| {
                let key = if i < 9 {
                    (i + 1).to_string()
                } else {
                    String::new()
                };
                (name.to_string(), key, "run-shell true".to_string())
            })
            .collect()
    }

    fn size(columns: usize, lines: usize) -> ClientSize {
        ClientSize { columns, lines }
    }

    // Measured on tmux 3.3a: a 24-line client draws 22 items, not 23; an 80-column one draws
    // a 72-cell name with a key (`… (1)`), not a 73-cell one.
    #[test]
    fn a_menu_fits_as_tmux_draws_it() {
        let client = size(80, 24);
        assert!(fits(menu_size(" T ", &items(22, "→ a")), client));
        assert!(!fits(menu_size(" T ", &items(23, "→ a")), client));
        assert!(!fits(menu_size(" T ", &items(30, "→ a")), client));
        assert!(fits(menu_size(" T ", &items(3, &"x".repeat(72))), client));
        assert!(!fits(menu_size(" T ", &items(3, &"x".repeat(73))), client));
        // Past the ninth item there is no key.
        let mut wide = items(10, "x");
        wide[9].0 = "y".repeat(76);
        assert!(fits(menu_size(" T ", &wide), client));
        wide[9].0 = "y".repeat(77);
        assert!(!fits(menu_size(" T ", &wide), client));
        // A long title widens the menu; `##` is drawn as one `#`.
        assert!(!fits(menu_size(&"t".repeat(77), &items(1, "x")), client));
        assert_eq!(menu_size("a##b", &[]).columns, 3 + 4);
    }

    #[test]
    fn the_client_size_is_read_from_tmux_or_not_at_all() {
        assert_eq!(parse_size("160 45\n"), Some(size(160, 45)));
        assert_eq!(parse_size(" \n"), None);
        assert_eq!(parse_size("0 0"), None);
        assert_eq!(parse_size("x 24"), None);
    }
}
