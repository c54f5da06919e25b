//! A fake Claude Code whose permission dialog a key decides (`AGENTPANE_FAKE_DECIDE=1`, the
//! demo's waiting pane): its terminal passes single keys (no line editing, no echo), as the
//! real client's does; `1` or `2` (the dialog's yes options) allows the pending call, `3` or
//! Escape denies it. On a deny the fixture's remaining steps are written (the recorded
//! rejection); on an allow, the call's result and an answer that ends the turn — the fake runs
//! no command. Either way the dialog is cleared.

use std::io::Read;
use std::sync::mpsc::Sender;

use serde_json::{json, Value};

use super::Command;

/// `1`: the dialog on the fake's screen waits for a key.
pub const ENV: &str = "AGENTPANE_FAKE_DECIDE";

/// Whether this fake's dialog is decided by a key.
pub fn requested() -> bool {
    std::env::var(ENV).is_ok_and(|v| v == "1")
}

/// What a key does to the dialog: `Some(true)` allows, `Some(false)` denies.
pub fn decision(key: u8) -> Option<bool> {
    match key {
        b'1' | b'2' => Some(true),
        b'3' | 0x1b => Some(false),
        _ => None,
    }
}

/// Turns off line editing and echo on stdin's terminal (when it is one), so one key arrives
/// as it is pressed.
pub fn single_keys() {
    // SAFETY: termios calls on fd 0 with a zeroed, then filled, struct.
    unsafe {
        let mut t: libc::termios = std::mem::zeroed();
        if libc::tcgetattr(0, &mut t) != 0 {
            return;
        }
        t.c_lflag &= !(libc::ICANON | libc::ECHO);
        t.c_cc[libc::VMIN] = 1;
        t.c_cc[libc::VTIME] = 0;
        libc::tcsetattr(0, libc::TCSANOW, &t);
    }
}

/// Reads stdin a byte at a time: a deciding key while the dialog is up becomes
/// [`Command::Decide`], anything else is gathered into lines read as commands (`parse`).
pub fn read_keys(tx: Sender<Command>, parse: fn(&str) -> Command) {
    let mut line = Vec::new();
    let mut decided = false;
    for byte in std::io::stdin().lock().bytes() {
        let Ok(b) = byte else { break };
        let cmd = match decision(b).filter(|_| !decided) {
            Some(allow) => {
                decided = true;
                Command::Decide(allow)
            }
            None if b == b'\n' || b == b'\r' => {
                let text = String::from_utf8_lossy(&line).into_owned();
                line.clear();
                if text.trim().is_empty() {
                    continue;
                }
                parse(&text)
            }
            None => {
                line.push(b);
                continue;
            }
        };
        let quit = cmd == Command::Quit;
        if quit || tx.send(cmd).is_err() {
            break;
        }
    }
}

/// The newest tool call among `steps` (Claude Code transcript lines): its id and input.
pub fn pending_call(steps: &[String]) -> Option<(String, Value)> {
    steps.iter().rev().find_map(|line| {
        let v: Value = serde_json::from_str(line).ok()?;
        let blocks = v.pointer("/message/content")?.as_array()?;
        blocks
            .iter()
            .rev()
            .find(|b| b["type"] == "tool_use")
            .and_then(|b| Some((b["id"].as_str()?.to_string(), b["input"].clone())))
    })
}

/// The records Claude Code writes once call `id` is allowed and ran, here with the fake's
/// own words (it runs nothing), then an answer that ends the turn.
pub fn allowed(id: &str) -> [String; 2] {
    let result = json!({"type": "user", "isSidechain": false, "timestamp": "", "message": {
        "role": "user", "content": [{"type": "tool_result", "tool_use_id": id,
        "content": "(agentpane demo: allowed; the demo runs no command)", "is_error": false}]}});
    let answer = json!({"type": "assistant", "isSidechain": false, "timestamp": "", "message": {
        "role": "assistant", "type": "message", "stop_reason": "end_turn", "content": [{
        "type": "text", "text": "Allowed from outside the pane. This is agentpane's demo: \
        no command ran, so the turn ends here."}]}});
    [result.to_string(), answer.to_string()]
}

/// What the screen shows once decided, in place of the dialog.
pub fn after(allow: bool, input: &Value) -> String {
    let command = input["command"].as_str().unwrap_or_default();
    let what = if allow {
        "allowed (the demo runs no command)"
    } else {
        "User rejected: No"
    };
    // Clear the screen, then the call and how it was decided.
    format!("\x1b[2J\x1b[H⏺ Bash({command})\n  ⎿  {what}\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dialogs_numbers_and_escape_decide() {
        assert_eq!(decision(b'1'), Some(true));
        assert_eq!(decision(b'2'), Some(true));
        assert_eq!(decision(b'3'), Some(false));
        assert_eq!(decision(0x1b), Some(false));
        assert_eq!(decision(b'x'), None);
    }

    #[test]
    fn the_newest_call_is_the_pending_one() {
        let steps = [
            r#"{"type":"user","message":{"content":"run it"}}"#.to_string(),
            r#"{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls"}}]}}"#.to_string(),
            r#"{"type":"progress"}"#.to_string(),
        ];
        let (id, input) = pending_call(&steps).unwrap();
        assert_eq!(id, "t1");
        assert_eq!(input["command"], "ls");
        assert!(after(true, &input).contains("Bash(ls)"));
    }
}
