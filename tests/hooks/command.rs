//! The `hook` command: exit 0, silent stdout, bounded evidence, no lost events.

use super::*;

#[test]
fn hook_with_garbage_stdin_exits_zero_quickly_and_silently() {
    let home = Home::new();
    let inputs: [&[u8]; 6] = [
        b"",
        b"not json",
        b"\xff\xfe\x00garbage",
        b"{\"hook_event_name\":\"Stop\"}",
        b"{\"session_id\":\"../../etc/passwd\",\"hook_event_name\":\"Stop\"}",
        b"[1,2,3]",
    ];
    for input in inputs {
        let (out, elapsed) = home.run(&["hook"], input);
        assert_eq!(out.status.code(), Some(0), "{input:?}");
        assert!(
            out.stdout.is_empty(),
            "stdout must stay empty: {:?}",
            out.stdout
        );
        assert!(elapsed < Duration::from_secs(5), "{elapsed:?}");
    }
    let evidence = home.state().join("evidence");
    let files = fs::read_dir(&evidence).map(|d| d.count()).unwrap_or(0);
    assert_eq!(files, 0, "nothing recorded from bad input");
}

#[test]
fn hook_records_evidence_and_nudges_the_watcher() {
    let home = Home::new();
    let event = br#"{"session_id":"0d4b1c3e-1a2b","transcript_path":"/p/t.jsonl","cwd":"/w","permission_mode":"default","hook_event_name":"Notification","message":"Claude needs your permission to use Bash","notification_type":"permission_prompt"}"#;
    let mut env = home.env();
    env.push(("TMUX_PANE", PathBuf::from("%7")));
    let refs: Vec<(&str, &Path)> = env.iter().map(|(k, v)| (*k, v.as_path())).collect();
    let (out, _) = agentpane(&["hook"], &refs, event);
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty());
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let ev: HookEvidence = serde_json::from_slice(
        &fs::read(home.state().join("evidence/0d4b1c3e-1a2b.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(ev.pane.as_deref(), Some("%7"));
    assert_eq!(ev.transcript_path.as_deref(), Some(Path::new("/p/t.jsonl")));
    let p = ev.get(HookKind::PermissionPrompt).unwrap();
    assert_eq!(
        p.message.as_deref(),
        Some("Claude needs your permission to use Bash")
    );
    let nudge: Value =
        serde_json::from_slice(&fs::read(home.state().join("nudge")).unwrap()).unwrap();
    assert_eq!(nudge["session_id"], "0d4b1c3e-1a2b");
    assert_eq!(nudge["kind"], "permission-prompt");
    assert_eq!(nudge["pane"], "%7");
    let mode = fs::metadata(home.state().join("evidence"))
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o700);
}

#[test]
fn hook_keeps_huge_tool_events_bounded() {
    let home = Home::new();
    let big = "x".repeat(3 << 20);
    let event = format!(
        r#"{{"session_id":"s-big","hook_event_name":"PostToolUse","tool_name":"Read","message":"{}","tool_response":{{"content":"{big}"}}}}"#,
        "m".repeat(5000)
    );
    let (out, _) = home.run(&["hook"], event.as_bytes());
    assert_eq!(out.status.code(), Some(0));
    let bytes = fs::read(home.state().join("evidence/s-big.json")).unwrap();
    assert!(bytes.len() < 4096, "evidence stays small: {}", bytes.len());
    let ev: HookEvidence = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(
        ev.get(HookKind::PostToolUse).unwrap().tool.as_deref(),
        Some("Read")
    );
}

#[test]
fn concurrent_hooks_of_one_session_lose_no_event() {
    let home = Home::new();
    let events = [
        r#"{"session_id":"s-par","hook_event_name":"UserPromptSubmit"}"#,
        r#"{"session_id":"s-par","hook_event_name":"PreToolUse","tool_name":"Bash"}"#,
        r#"{"session_id":"s-par","hook_event_name":"PostToolUse","tool_name":"Bash"}"#,
        r#"{"session_id":"s-par","hook_event_name":"Notification","notification_type":"idle_prompt"}"#,
        r#"{"session_id":"s-par","hook_event_name":"Stop"}"#,
    ];
    let env = home.env();
    std::thread::scope(|scope| {
        for event in events {
            let env = &env;
            scope.spawn(move || {
                let refs: Vec<(&str, &Path)> = env.iter().map(|(k, v)| (*k, v.as_path())).collect();
                let (out, _) = agentpane(&["hook"], &refs, event.as_bytes());
                assert_eq!(out.status.code(), Some(0));
            });
        }
    });
    let ev: HookEvidence =
        serde_json::from_slice(&fs::read(home.state().join("evidence/s-par.json")).unwrap())
            .unwrap();
    let mut kinds: Vec<HookKind> = ev.events.iter().map(|r| r.kind).collect();
    kinds.sort();
    assert_eq!(
        kinds,
        [
            HookKind::UserPromptSubmit,
            HookKind::PreToolUse,
            HookKind::PostToolUse,
            HookKind::IdlePrompt,
            HookKind::Stop
        ]
    );
    let leftovers: Vec<_> = fs::read_dir(home.state().join("evidence"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(
        leftovers.len(),
        1,
        "no lock or temp files left: {leftovers:?}"
    );
}
