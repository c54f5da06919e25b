//! The call Codex waits on, read from its rollout. Codex 0.171.0 writes the model's call (a
//! `response_item` `function_call`, e.g. `exec_command` with its `cmd` and `justification`)
//! before it asks, and the call's `function_call_output` only once it was answered (and run,
//! or refused); a turn's end (`task_complete`, `turn_aborted`) leaves nothing pending. A call
//! that runs without asking is pending here too until it ends: the screen tells the two apart
//! (only a dialog on screen is answered).

use serde_json::Value;

use crate::read::request::{PromptKind, Request, RequestSource};

/// The newest call in the current turn of `records` (oldest first) with no output yet, as a
/// request, when it is one Codex's dialogs ask about: a command, or a patch.
pub fn pending(records: &[Value]) -> Option<Request> {
    let mut open: Vec<(String, Request)> = Vec::new();
    for r in records {
        let p = &r["payload"];
        let kind = p["type"].as_str().unwrap_or_default();
        match (r["type"].as_str().unwrap_or_default(), kind) {
            ("turn_context", _)
            | (
                "event_msg",
                "task_started" | "turn_started" | "task_complete" | "turn_complete"
                | "turn_aborted",
            ) => open.clear(),
            ("response_item", "function_call_output" | "custom_tool_call_output") => {
                let id = p["call_id"].as_str().unwrap_or_default();
                open.retain(|(open_id, _)| open_id != id);
            }
            ("response_item", "function_call" | "custom_tool_call" | "local_shell_call") => {
                let id = p["call_id"].as_str().unwrap_or_default().to_string();
                if let Some(req) = request(p, &id) {
                    open.push((id, req));
                }
            }
            _ => {}
        }
    }
    open.pop().map(|(_, r)| r)
}

/// One call as the request its dialog shows; `None` for a call no dialog of Codex's asks
/// about.
fn request(p: &Value, id: &str) -> Option<Request> {
    let name = p["name"].as_str().unwrap_or_default();
    // `function_call` carries its arguments as a JSON string; `custom_tool_call` its input.
    let args: Value = p["arguments"]
        .as_str()
        .and_then(|a| serde_json::from_str(a).ok())
        .unwrap_or(Value::Null);
    let call_id = (!id.is_empty()).then(|| id.to_string());
    if name == "apply_patch" || args["input"].is_string() && name.contains("patch") {
        let patch = p["input"]
            .as_str()
            .or_else(|| args["input"].as_str())
            .unwrap_or_default();
        let file = patch.lines().find_map(|l| {
            ["*** Update File: ", "*** Add File: ", "*** Delete File: "]
                .iter()
                .find_map(|m| l.strip_prefix(m))
        })?;
        let base = file.rsplit('/').next().unwrap_or(file).trim();
        return Some(
            Request::new(
                PromptKind::Permission,
                "edit",
                file.trim(),
                patch,
                call_id,
                RequestSource::Log,
            )
            .keyed(base),
        );
    }
    let command = match (&args["cmd"], &args["command"], &p["action"]["command"]) {
        (Value::String(cmd), _, _) => cmd.clone(),
        (_, Value::Array(argv), _) | (_, _, Value::Array(argv)) => shell_words(argv),
        _ => return None,
    };
    let command = command.trim();
    let program = command.split_whitespace().next()?;
    let program = program.rsplit('/').next().unwrap_or(program);
    let reason = args["justification"].as_str().unwrap_or_default();
    let text = if reason.is_empty() {
        format!("$ {command}")
    } else {
        format!("$ {command}\n\nReason: {reason}")
    };
    Some(
        Request::new(
            PromptKind::Permission,
            program,
            &format!("$ {command}"),
            &text,
            call_id,
            RequestSource::Log,
        )
        .keyed(command),
    )
}

/// An argument vector as one line (`bash -lc 'x'` is shown as `x`, as Codex's dialog does).
fn shell_words(argv: &[Value]) -> String {
    let words: Vec<&str> = argv.iter().filter_map(Value::as_str).collect();
    match words.as_slice() {
        [shell, flag, script] if shell.ends_with("sh") && flag.starts_with('-') => {
            script.to_string()
        }
        _ => words.join(" "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn records(lines: &[&str]) -> Vec<Value> {
        lines
            .iter()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    /// As Codex 0.171.0 wrote them while its dialog asked (recorded; trimmed).
    const TURN: &str = r#"{"timestamp":"2026-12-02T16:01:28.726Z","ordinal":5,"type":"turn_context","payload":{"turn_id":"t1","cwd":"/w/proj","approval_policy":"on-request"}}"#;
    const USER: &str = r#"{"timestamp":"2026-12-02T16:01:28.738Z","ordinal":7,"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"TOOL please"}]}}"#;
    const CALL: &str = r#"{"timestamp":"2026-12-02T16:01:28.803Z","ordinal":9,"type":"response_item","payload":{"type":"function_call","id":"fc_mock","name":"exec_command","arguments":"{\"cmd\":\"touch approved.txt\",\"sandbox_permissions\":\"require_escalated\",\"justification\":\"the mock needs it\"}","call_id":"call_mock"}}"#;
    const OUTPUT: &str = r#"{"timestamp":"2026-12-02T16:01:30Z","type":"response_item","payload":{"type":"function_call_output","call_id":"call_mock","output":"ok"}}"#;

    #[test]
    fn the_call_codex_asks_about_is_pending_until_its_output() {
        let r = pending(&records(&[TURN, USER, CALL])).expect("pending");
        assert_eq!(r.tool, "touch");
        assert_eq!(r.summary, "$ touch approved.txt");
        assert_eq!(r.text, "$ touch approved.txt\n\nReason: the mock needs it");
        assert_eq!(r.call_id.as_deref(), Some("call_mock"));
        assert_eq!(r.from, RequestSource::Log);
        // Its dialog on screen is this request's.
        let screen = "  Would you like to run the following command?\n\n  Reason: the mock needs it\n\n  $ touch approved.txt\n\n› 1. Yes, proceed (y)\n  2. Yes, and don't ask again for commands that start with `touch approved.txt` (p)\n  3. No, and tell Codex what to do differently (esc)\n";
        let shown = crate::agents::Agent::on_screen(&crate::agents::codex::Codex, screen).unwrap();
        assert!(r.shown_in(&shown.request));
        // Answered: its output follows.
        assert_eq!(pending(&records(&[TURN, USER, CALL, OUTPUT])), None);
    }

    #[test]
    fn a_call_of_an_ended_turn_is_not_pending() {
        for end in [
            r#"{"type":"event_msg","payload":{"type":"turn_aborted","reason":"interrupted"}}"#,
            r#"{"type":"event_msg","payload":{"type":"task_complete","turn_id":"t1"}}"#,
        ] {
            assert_eq!(pending(&records(&[TURN, CALL, end])), None);
        }
        // The next turn's context starts afresh.
        assert_eq!(pending(&records(&[CALL, TURN, USER])), None);
    }

    #[test]
    fn commands_as_argument_vectors_and_patches_are_read_too() {
        let shell = r#"{"type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"bash\",\"-lc\",\"rm -rf build\"]}","call_id":"c2"}}"#;
        let r = pending(&records(&[TURN, shell])).unwrap();
        assert_eq!(
            (r.tool.as_str(), r.summary.as_str()),
            ("rm", "$ rm -rf build")
        );
        let patch = r#"{"type":"response_item","payload":{"type":"custom_tool_call","name":"apply_patch","input":"*** Begin Patch\n*** Update File: docs/README.md\n+hello\n*** End Patch","call_id":"c3"}}"#;
        let r = pending(&records(&[TURN, shell, patch])).unwrap();
        assert_eq!(
            (r.tool.as_str(), r.summary.as_str()),
            ("edit", "docs/README.md")
        );
        let screen = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/fixtures/panes/codex/codex-tui-approval-patch.txt"
        ))
        .unwrap();
        let shown = crate::agents::Agent::on_screen(&crate::agents::codex::Codex, &screen).unwrap();
        let readme = pending(&records(&[
            TURN,
            r#"{"type":"response_item","payload":{"type":"custom_tool_call","name":"apply_patch","input":"*** Begin Patch\n*** Update File: README.md\n+hello\n*** End Patch","call_id":"c4"}}"#,
        ]))
        .unwrap();
        assert!(readme.shown_in(&shown.request), "{:?}", shown.request);
        // A call no dialog asks about (a web search) is not a request.
        let other = r#"{"type":"response_item","payload":{"type":"function_call","name":"web_search","arguments":"{\"query\":\"x\"}","call_id":"c5"}}"#;
        assert_eq!(pending(&records(&[TURN, other])), None);
    }
}
