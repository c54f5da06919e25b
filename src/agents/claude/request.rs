//! The decision a Claude Code session waits on, from its transcript: the newest main-thread
//! `tool_use` that no `tool_result` answers yet, in full — the Bash command and its
//! description, the file and a short diff for Edit/Write, the URL for WebFetch, the question
//! for AskUserQuestion, the plan for ExitPlanMode.

use std::collections::HashSet;
use std::path::Path;

use serde_json::Value;

use crate::agents::fields::str_of;
use crate::read::request::{PromptKind, Request, RequestSource};

/// How far back the pending call is looked for (it is nearly always the last line).
const LOOK_BACK: usize = 400;

/// The pending call of `transcript`, if its newest main-thread tool call waits.
pub fn pending(transcript: &Path) -> Option<Request> {
    let mut answered: HashSet<String> = HashSet::new();
    let mut found = None;
    let budget = crate::read::Budget {
        max_bytes: 8 * 1024 * 1024,
        max_lines: LOOK_BACK,
    };
    crate::read::newest_records(transcript, budget, |v| match step(v, &mut answered) {
        Step::More => true,
        Step::Found(r) => {
            found = Some(r);
            false
        }
        Step::None => false,
    })
    .ok()?;
    found
}

enum Step {
    More,
    Found(Request),
    /// Nothing waits: a prompt or a closed turn came first.
    None,
}

/// One record, newest first.
fn step(v: &Value, answered: &mut HashSet<String>) -> Step {
    if v.get("isSidechain").and_then(Value::as_bool) == Some(true) {
        return Step::More;
    }
    let content = v.pointer("/message/content");
    match str_of(v, "type") {
        Some("user") => match content {
            Some(Value::Array(blocks)) => {
                let mut any_result = false;
                for b in blocks {
                    if str_of(b, "type") == Some("tool_result") {
                        any_result = true;
                        answered.extend(str_of(b, "tool_use_id").map(str::to_string));
                    }
                }
                if any_result {
                    Step::More
                } else {
                    Step::None
                }
            }
            Some(Value::String(_)) => Step::None,
            _ => Step::More,
        },
        Some("assistant") => {
            let Some(Value::Array(blocks)) = content else {
                return Step::More;
            };
            let pending = blocks.iter().rev().find(|b| {
                str_of(b, "type") == Some("tool_use")
                    && str_of(b, "id").is_some_and(|id| !answered.contains(id))
            });
            match pending {
                Some(b) => Step::Found(of_call(b)),
                // Text without a pending call after the newest one: that call was the turn's.
                None if blocks.iter().any(|b| str_of(b, "type") == Some("tool_use")) => Step::None,
                None => Step::More,
            }
        }
        _ => Step::More,
    }
}

/// One `tool_use` block as a request.
pub fn of_call(block: &Value) -> Request {
    let tool = str_of(block, "name").unwrap_or("tool");
    let id = str_of(block, "id").map(str::to_string);
    let input = block.get("input").unwrap_or(&Value::Null);
    let s = |k: &str| str_of(input, k).unwrap_or_default();
    let new = |kind, summary: &str, text: &str, key: &str| {
        Request::new(kind, tool, summary, text, id.clone(), RequestSource::Log).keyed(key)
    };
    match tool {
        "Bash" => {
            let (cmd, what) = (s("command"), s("description"));
            let text = if what.is_empty() {
                cmd.to_string()
            } else {
                format!("{cmd}\n\n{what}")
            };
            new(PromptKind::Permission, cmd, &text, cmd)
        }
        "Edit" | "MultiEdit" => {
            let path = s("file_path");
            let edits: Vec<(&str, &str)> = match input.get("edits") {
                Some(Value::Array(e)) => e
                    .iter()
                    .map(|e| {
                        (
                            str_of(e, "old_string").unwrap_or_default(),
                            str_of(e, "new_string").unwrap_or_default(),
                        )
                    })
                    .collect(),
                _ => vec![(s("old_string"), s("new_string"))],
            };
            let (minus, plus) = edits.iter().fold((0, 0), |(m, p), (o, n)| {
                (m + o.lines().count(), p + n.lines().count())
            });
            let mut text = format!("{path}\n");
            for (old, new) in &edits {
                text.extend(old.lines().map(|l| format!("- {l}\n")));
                text.extend(new.lines().map(|l| format!("+ {l}\n")));
            }
            let summary = format!("{path} (-{minus} +{plus})");
            new(PromptKind::Permission, &summary, &text, file_name(path))
        }
        "Write" => {
            let (path, body) = (s("file_path"), s("content"));
            let summary = format!("{path} ({} lines)", body.lines().count());
            let text = format!("{path}\n{body}");
            new(PromptKind::Permission, &summary, &text, file_name(path))
        }
        "WebFetch" => {
            let url = s("url");
            let text = format!("{url}\n\n{}", s("prompt"));
            new(PromptKind::Permission, url, &text, host(url))
        }
        "WebSearch" => new(PromptKind::Permission, s("query"), s("query"), ""),
        "AskUserQuestion" => {
            let mut text = String::new();
            let questions = input.get("questions").and_then(Value::as_array);
            for q in questions.into_iter().flatten() {
                text.push_str(str_of(q, "question").unwrap_or_default());
                text.push('\n');
                let options = q.get("options").and_then(Value::as_array);
                for o in options.into_iter().flatten() {
                    text.push_str(&format!("  - {}\n", str_of(o, "label").unwrap_or_default()));
                }
            }
            new(PromptKind::Question, &text, &text, "")
        }
        "ExitPlanMode" => new(PromptKind::Plan, s("plan"), s("plan"), ""),
        _ => {
            let text = serde_json::to_string_pretty(input).unwrap_or_default();
            new(PromptKind::Permission, &text, &text, "")
        }
    }
}

/// The last component of a path (the dialog names the file, not always its folder).
fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// The host of a URL (the dialog names the domain).
fn host(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    rest.split(['/', '?', '#']).next().unwrap_or(rest)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn pending_in(lines: &[&str]) -> Option<Request> {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        for l in lines {
            writeln!(f, "{l}").unwrap();
        }
        pending(f.path())
    }

    const PROMPT: &str = r#"{"type":"user","message":{"role":"user","content":"run it"}}"#;

    #[test]
    fn the_real_pending_bash_call_is_the_request() {
        let text =
            include_str!("../../../fixtures/real-clients/claude-2.1.197/permission-pending.jsonl");
        let lines: Vec<&str> = text.lines().collect();
        let r = pending_in(&lines).expect("a pending call");
        assert_eq!(r.tool, "Bash");
        assert_eq!(r.summary, "touch agentpane-tool-ran.txt");
        assert_eq!(
            r.text,
            "touch agentpane-tool-ran.txt\n\nCreate a marker file"
        );
        assert_eq!(r.call_id.as_deref(), Some("toolu_agentpane0005"));
        assert_eq!(r.kind, PromptKind::Permission);
        assert_eq!(r.from, RequestSource::Log);
    }

    #[test]
    fn an_answered_call_or_a_new_prompt_leaves_nothing_pending() {
        let call = r#"{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls"}}]}}"#;
        let result = r#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":"a"}]}}"#;
        assert!(pending_in(&[PROMPT, call]).is_some());
        assert_eq!(pending_in(&[PROMPT, call, result]), None);
        assert_eq!(pending_in(&[PROMPT, call, PROMPT]), None);
        assert_eq!(pending_in(&[PROMPT]), None);
        // A subagent's pending call is not the main thread's.
        let side = r#"{"type":"assistant","isSidechain":true,"message":{"content":[{"type":"tool_use","id":"s1","name":"Bash","input":{"command":"ls"}}]}}"#;
        assert_eq!(pending_in(&[PROMPT, side]), None);
    }

    #[test]
    fn of_parallel_calls_the_unanswered_one_waits() {
        let calls = r#"{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls"}},{"type":"tool_use","id":"t2","name":"Bash","input":{"command":"rm x"}}]}}"#;
        let first = r#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":"a"}]}}"#;
        let r = pending_in(&[PROMPT, calls, first]).unwrap();
        assert_eq!(r.summary, "rm x");
    }

    #[test]
    fn edits_writes_urls_and_questions_read_as_people_check_them() {
        let call = |name: &str, input: Value| {
            of_call(&serde_json::json!({"type":"tool_use","id":"t","name":name,"input":input}))
        };
        let edit = call(
            "Edit",
            serde_json::json!({"file_path":"/w/src/main.rs","old_string":"a\nb","new_string":"c"}),
        );
        assert_eq!(edit.summary, "/w/src/main.rs (-2 +1)");
        assert_eq!(edit.text, "/w/src/main.rs\n- a\n- b\n+ c");
        assert_eq!(edit.key, "main.rs");
        let write = call(
            "Write",
            serde_json::json!({"file_path":"/w/notes.md","content":"x\ny\n"}),
        );
        assert_eq!(write.summary, "/w/notes.md (2 lines)");
        let fetch = call(
            "WebFetch",
            serde_json::json!({"url":"https://example.com/a?b","prompt":"summarise"}),
        );
        assert_eq!(fetch.summary, "https://example.com/a?b");
        assert_eq!(fetch.key, "example.com");
        let ask = call(
            "AskUserQuestion",
            serde_json::json!({"questions":[{"question":"Which db?","options":[{"label":"pg"},{"label":"sqlite"}]}]}),
        );
        assert_eq!(ask.kind, PromptKind::Question);
        assert_eq!(ask.summary, "Which db?");
        assert_eq!(ask.text, "Which db?\n  - pg\n  - sqlite");
        let mcp = call("mcp__x__y", serde_json::json!({"a": 1}));
        assert_eq!(mcp.kind, PromptKind::Permission);
        assert!(mcp.text.contains("\"a\": 1"));
    }
}
