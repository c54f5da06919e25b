//! Locator tests on temporary config roots. PIDs are ones that cannot exist, so `/proc`
//! readers find nothing, except where a test holds a file open itself.

use crate::agents::claude::locate as claude;
use crate::agents::codex::locate as codex;
use std::fs::{self, File};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use chrono::Utc;

use super::*;
use crate::agents::claude::locate::encode_cwd;
use crate::agents::locate::{cwd_matches, Found};
use crate::proctree::ProcInfo;

const NO_PID: u32 = 3_999_999_999;
const CWD: &str = "/work/proj";

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

fn set_mtime(path: &Path, secs: u64) {
    let f = File::options().append(true).open(path).unwrap();
    f.set_modified(UNIX_EPOCH + Duration::from_secs(secs))
        .unwrap();
}

/// Writes a Claude transcript for `id` in `folder`'s project dir, modified at `mtime`.
fn transcript(root: &Path, folder: &str, id: &str, cwd: &str, mtime: u64) -> PathBuf {
    let dir = root.join("projects").join(encode_cwd(folder));
    fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{id}.jsonl"));
    let line = serde_json::json!({"type": "user", "cwd": cwd, "sessionId": id});
    fs::write(
        &path,
        format!("{{\"type\":\"file-history-snapshot\"}}\n{line}\n"),
    )
    .unwrap();
    set_mtime(&path, mtime);
    path
}

fn record(root: &Path, pid: u32, id: &str, started_ms: u64) {
    let dir = root.join("sessions");
    fs::create_dir_all(&dir).unwrap();
    let rec = serde_json::json!({"pid": pid, "sessionId": id, "cwd": CWD, "startedAt": started_ms});
    fs::write(dir.join(format!("{pid}.json")), rec.to_string()).unwrap();
}

fn claude_locate(root: &Path, start: u64, claimed: &HashSet<String>) -> (Found, Vec<String>) {
    let cwds = vec![CWD.to_string()];
    let t = Target {
        pid: NO_PID,
        start,
        root,
        cwds: &cwds,
        claimed,
    };
    let mut steps = Vec::new();
    let found = claude::locate(&t, &mut TranscriptCache::in_memory(), &mut steps);
    (found, steps)
}

#[test]
fn claude_record_names_the_transcript() {
    let tmp = tempfile::tempdir().unwrap();
    let start = now_secs() - 100;
    let path = transcript(tmp.path(), CWD, "s-1", CWD, start + 50);
    record(tmp.path(), NO_PID, "s-1", start * 1000 + 900);
    let (found, steps) = claude_locate(tmp.path(), start, &HashSet::new());
    assert_eq!(
        found.transcript.as_deref(),
        Some(path.as_path()),
        "{steps:?}"
    );
    assert_eq!(found.via, Via::SessionRecord);
    assert_eq!(found.session_id.as_deref(), Some("s-1"));
    assert_eq!(found.record.unwrap().cwd.as_deref(), Some(CWD));
}

#[test]
fn claude_record_in_another_project_folder_is_found_by_scanning_and_cached() {
    let tmp = tempfile::tempdir().unwrap();
    let start = now_secs() - 100;
    let path = transcript(tmp.path(), "/elsewhere", "s-2", "/elsewhere", start + 5);
    record(tmp.path(), NO_PID, "s-2", start * 1000);
    let cwds = vec![CWD.to_string()];
    let none = HashSet::new();
    let t = Target {
        pid: NO_PID,
        start,
        root: tmp.path(),
        cwds: &cwds,
        claimed: &none,
    };
    let mut cache = TranscriptCache::in_memory();
    let found = claude::locate(&t, &mut cache, &mut Vec::new());
    assert_eq!(found.transcript.as_deref(), Some(path.as_path()));
    assert_eq!(found.via, Via::SessionRecord);
    let key = format!("claude:{}:s-2", tmp.path().display());
    assert_eq!(cache.get(&key).as_deref(), Some(path.as_path()));
    fs::remove_file(&path).unwrap();
    assert_eq!(cache.get(&key), None, "a vanished file leaves the cache");
}

#[test]
fn a_record_whose_session_has_no_transcript_yet_never_takes_a_neighbours() {
    // What Claude Code wrote in one folder: session B ran `/clear` (its record moved to a new
    // id at once), session C is fresh; neither new id has a transcript yet, B's old one is
    // the folder's newest and no live record names it any more.
    let tmp = tempfile::tempdir().unwrap();
    let start = now_secs() - 600;
    transcript(tmp.path(), CWD, "b-before-clear", CWD, start + 300);
    let fixture =
        include_str!("../../fixtures/real-clients/claude-2.1.332/fresh-session-record.json");
    let mut rec: serde_json::Value = serde_json::from_str(fixture).unwrap();
    rec["pid"] = NO_PID.into();
    rec["cwd"] = CWD.into();
    rec["startedAt"] = (start * 1000).into();
    rec.as_object_mut().unwrap().remove("procStart");
    fs::create_dir_all(tmp.path().join("sessions")).unwrap();
    fs::write(
        tmp.path().join(format!("sessions/{NO_PID}.json")),
        rec.to_string(),
    )
    .unwrap();
    let (found, steps) = claude_locate(tmp.path(), start, &HashSet::new());
    assert_eq!(found.transcript, None, "{steps:?}");
    assert_eq!(found.via, Via::None);
    assert_eq!(found.session_id.as_deref(), rec["sessionId"].as_str());
    assert!(steps.iter().any(|s| s.contains("none yet")), "{steps:?}");
}

#[test]
fn without_a_record_a_transcript_that_began_before_the_agent_is_not_its() {
    // A fresh session whose record cannot be read yet, beside a neighbour's old session
    // that was written to after the fresh one started (Claude Code 2.1.197 after `/clear`).
    let tmp = tempfile::tempdir().unwrap();
    let start = now_secs() - 60;
    let path = transcript(tmp.path(), CWD, "neighbour-old", CWD, start + 30);
    let began = chrono::DateTime::from_timestamp(start as i64 - 300, 0).unwrap();
    let line = serde_json::json!({"type": "user", "cwd": CWD, "timestamp": began.to_rfc3339()});
    fs::write(&path, format!("{line}\n")).unwrap();
    set_mtime(&path, start + 30);
    let (found, steps) = claude_locate(tmp.path(), start, &HashSet::new());
    assert_eq!(found.transcript, None, "{steps:?}");
    // The same file begun after the agent started is its own.
    let began = chrono::DateTime::from_timestamp(start as i64 + 5, 0).unwrap();
    let line = serde_json::json!({"type": "user", "cwd": CWD, "timestamp": began.to_rfc3339()});
    fs::write(&path, format!("{line}\n")).unwrap();
    set_mtime(&path, start + 30);
    let (found, steps) = claude_locate(tmp.path(), start, &HashSet::new());
    assert_eq!(
        found.transcript.as_deref(),
        Some(path.as_path()),
        "{steps:?}"
    );
}

#[test]
fn a_newer_transcript_in_the_folder_does_not_replace_the_records() {
    let tmp = tempfile::tempdir().unwrap();
    let start = now_secs() - 600;
    let ours = transcript(tmp.path(), CWD, "old", CWD, start + 10);
    transcript(tmp.path(), CWD, "new", CWD, start + 300);
    record(tmp.path(), NO_PID, "old", start * 1000);
    let (found, steps) = claude_locate(tmp.path(), start, &HashSet::new());
    assert_eq!(
        found.transcript.as_deref(),
        Some(ours.as_path()),
        "{steps:?}"
    );
    assert_eq!(found.via, Via::SessionRecord);
}

#[test]
fn a_newer_transcript_owned_by_another_live_agent_is_not_ours() {
    let tmp = tempfile::tempdir().unwrap();
    let start = now_secs() - 600;
    let ours = transcript(tmp.path(), CWD, "ours", CWD, start + 10);
    transcript(tmp.path(), CWD, "theirs", CWD, start + 300);
    record(tmp.path(), NO_PID, "ours", start * 1000);
    let claimed = HashSet::from(["theirs".to_string()]);
    let (found, _) = claude_locate(tmp.path(), start, &claimed);
    assert_eq!(found.transcript.as_deref(), Some(ours.as_path()));
    assert_eq!(found.via, Via::SessionRecord);
}

#[test]
fn transcripts_older_than_the_process_are_not_stale_replacements() {
    let tmp = tempfile::tempdir().unwrap();
    let start = now_secs() - 60;
    // `--resume` of an old session: its file is the record's, older files do not matter.
    let ours = transcript(tmp.path(), CWD, "resumed", CWD, start + 30);
    transcript(tmp.path(), CWD, "ancient", CWD, start - 5000);
    record(tmp.path(), NO_PID, "resumed", start * 1000);
    let (found, _) = claude_locate(tmp.path(), start, &HashSet::new());
    assert_eq!(found.transcript.as_deref(), Some(ours.as_path()));
}

#[test]
fn corrupt_record_falls_back_to_the_cwd_transcript() {
    let tmp = tempfile::tempdir().unwrap();
    let start = now_secs() - 60;
    let path = transcript(tmp.path(), CWD, "s-3", CWD, start + 30);
    fs::create_dir_all(tmp.path().join("sessions")).unwrap();
    fs::write(
        tmp.path().join(format!("sessions/{NO_PID}.json")),
        b"{\"pid\": 12, \"sess",
    )
    .unwrap();
    let (found, steps) = claude_locate(tmp.path(), start, &HashSet::new());
    assert_eq!(found.transcript.as_deref(), Some(path.as_path()));
    assert_eq!(found.via, Via::Cwd);
    assert_eq!(found.record, None);
    assert!(
        steps.iter().any(|s| s.contains("not a JSON object")),
        "{steps:?}"
    );
}

#[test]
fn record_of_an_earlier_process_with_the_same_pid_is_ignored() {
    let tmp = tempfile::tempdir().unwrap();
    let start = now_secs() - 60;
    transcript(tmp.path(), CWD, "previous", CWD, start - 3000);
    let current = transcript(tmp.path(), CWD, "current", CWD, start + 20);
    record(tmp.path(), NO_PID, "previous", (start - 3600) * 1000);
    let (found, steps) = claude_locate(tmp.path(), start, &HashSet::new());
    assert_eq!(found.transcript.as_deref(), Some(current.as_path()));
    assert_eq!(found.via, Via::Cwd);
    assert!(
        steps.iter().any(|s| s.contains("earlier process")),
        "{steps:?}"
    );
}

#[test]
fn nothing_to_find_reports_every_link() {
    let tmp = tempfile::tempdir().unwrap();
    let (found, steps) = claude_locate(tmp.path(), now_secs(), &HashSet::new());
    assert_eq!(found, Found::default());
    assert_eq!(steps.len(), 3, "{steps:?}");
    assert!(steps[0].starts_with("session record: none"));
}

#[test]
fn claude_transcript_held_open_is_found_through_proc_fd() {
    let tmp = tempfile::tempdir().unwrap();
    let start = now_secs() - 60;
    let path = transcript(tmp.path(), "/somewhere/else", "held", "/x", start - 999);
    let sub = tmp.path().join("projects/-x/held/subagents");
    fs::create_dir_all(&sub).unwrap();
    let _sub_file = File::create(sub.join("agent-a1.jsonl")).unwrap();
    let _held = File::open(&path).unwrap();
    let cwds = vec![CWD.to_string()];
    let none = HashSet::new();
    let t = Target {
        pid: std::process::id(),
        start,
        root: tmp.path(),
        cwds: &cwds,
        claimed: &none,
    };
    let found = claude::locate(&t, &mut TranscriptCache::in_memory(), &mut Vec::new());
    assert_eq!(found.transcript.as_deref(), Some(path.as_path()));
    assert_eq!(found.via, Via::OpenFile);
}

fn rollout(root: &Path, day: &str, name: &str, cwd: &str, started: &str, mtime: u64) -> PathBuf {
    let dir = root.join("sessions").join(day);
    fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    let meta = serde_json::json!({"timestamp": started, "type": "session_meta",
        "payload": {"id": "x", "timestamp": started, "cwd": cwd}});
    fs::write(&path, format!("{meta}\n")).unwrap();
    set_mtime(&path, mtime);
    path
}

#[test]
fn codex_falls_back_to_the_newest_rollout_for_the_cwd_started_after_the_process() {
    let tmp = tempfile::tempdir().unwrap();
    let now = Utc::now();
    let start = now.timestamp() as u64 - 120;
    let day = now.format("%Y/%m/%d").to_string();
    let iso = |secs: u64| {
        chrono::DateTime::from_timestamp(secs as i64, 0)
            .unwrap()
            .to_rfc3339()
    };
    let id = "019e9625-802f-7e91-840a-cfe88d14117a";
    let good = rollout(
        tmp.path(),
        &day,
        &format!("rollout-a-{id}.jsonl"),
        CWD,
        &iso(start + 1),
        start + 30,
    );
    rollout(
        tmp.path(),
        &day,
        "rollout-b.jsonl",
        "/other",
        &iso(start + 5),
        start + 90,
    );
    // Written recently but started before this process: another, older codex.
    rollout(
        tmp.path(),
        &day,
        "rollout-c.jsonl",
        CWD,
        &iso(start - 500),
        start + 80,
    );
    let cwds = vec![CWD.to_string()];
    let none = HashSet::new();
    let t = Target {
        pid: NO_PID,
        start,
        root: tmp.path(),
        cwds: &cwds,
        claimed: &none,
    };
    let mut steps = Vec::new();
    let found = codex::locate(&t, now, &ProcTable::default(), tmp.path(), &mut steps);
    assert_eq!(
        found.transcript.as_deref(),
        Some(good.as_path()),
        "{steps:?}"
    );
    assert_eq!(found.via, Via::Cwd);
    assert_eq!(found.session_id.as_deref(), Some(id));
}

#[test]
fn codex_rollout_held_open_wins() {
    let tmp = tempfile::tempdir().unwrap();
    let path = rollout(
        tmp.path(),
        "2020/01/01",
        "rollout-held.jsonl",
        "/x",
        "bad",
        1000,
    );
    let _held = File::open(&path).unwrap();
    let cwds = vec![CWD.to_string()];
    let none = HashSet::new();
    let t = Target {
        pid: std::process::id(),
        start: now_secs(),
        root: tmp.path(),
        cwds: &cwds,
        claimed: &none,
    };
    let found = codex::locate(
        &t,
        Utc::now(),
        &ProcTable::default(),
        tmp.path(),
        &mut Vec::new(),
    );
    assert_eq!(found.transcript.as_deref(), Some(path.as_path()));
    assert_eq!(found.via, Via::OpenFile);
}

fn pane(id: &str, pid: u32, dead: bool) -> Pane {
    Pane {
        pane_id: id.into(),
        pane_pid: pid,
        session: "s".into(),
        window_index: 0,
        window_name: "w".into(),
        window_id: "@1".into(),
        pane_index: 0,
        cwd: CWD.into(),
        pane_active: true,
        window_active: true,
        session_attached: 0,
        dead,
        current_command: "bash".into(),
        tty: String::new(),
        activity: None,
        title: String::new(),
    }
}

fn proc(pid: u32, ppid: u32, argv: &[&str]) -> ProcInfo {
    ProcInfo {
        pid,
        ppid: Some(ppid),
        name: argv[0].into(),
        argv: argv.iter().map(|s| s.to_string()).collect(),
        exe: None,
        start: 10,
    }
}

#[test]
fn resolver_says_where_the_chain_broke() {
    let table = ProcTable::from_procs(vec![
        proc(3_999_999_990, 1, &["bash"]),
        proc(3_999_999_991, 1, &["bash"]),
        proc(3_999_999_992, 3_999_999_991, &["aider"]),
    ]);
    let mut r = Resolver::new(
        table,
        Matcher::default(),
        TranscriptCache::in_memory(),
        Utc::now(),
    );
    let shell = r.resolve(&pane("%1", 3_999_999_990, false));
    assert_eq!((shell.agent.is_none(), shell.via), (true, Via::None));
    assert!(
        shell.steps[1].contains("no known agent"),
        "{:?}",
        shell.steps
    );
    let gone = r.resolve(&pane("%2", 3_999_999_989, false));
    assert!(gone.steps[1].contains("vanished"), "{:?}", gone.steps);
    let dead = r.resolve(&pane("%3", 3_999_999_990, true));
    assert!(dead.agent.is_none());
    let aider = r.resolve(&pane("%4", 3_999_999_991, false));
    assert_eq!(aider.agent.unwrap().kind, AgentKind::Aider);
    assert_eq!(aider.via, Via::None);
}

#[test]
fn cwd_matching_ignores_trailing_slashes() {
    let cwds = vec!["/a/b/".to_string(), "/".to_string()];
    assert!(cwd_matches("/a/b", &cwds));
    assert!(cwd_matches("/", &cwds));
    assert!(!cwd_matches("/a", &cwds));
    assert!(!cwd_matches("", &cwds));
}

#[test]
fn panes_resolved_on_two_threads_read_as_one_by_one_and_in_order() {
    let home = tempfile::tempdir().unwrap();
    let kinds = [
        "claude", "codex", "gemini", "qwen", "pi", "copilot", "opencode", "aider",
    ];
    let mut procs = Vec::new();
    let mut panes = Vec::new();
    for i in 0..24u32 {
        let shell = 3_999_990_000 + 2 * i;
        procs.push(proc(shell, 1, &["bash"]));
        procs.push(proc(shell + 1, shell, &[kinds[i as usize % kinds.len()]]));
        panes.push(pane(&format!("%{i}"), shell, false));
    }
    let resolver = || {
        let mut r = Resolver::new(
            ProcTable::from_procs(procs.clone()),
            Matcher::default(),
            TranscriptCache::in_memory(),
            Utc::now(),
        );
        r.home = home.path().to_path_buf();
        r
    };
    let mut split = resolver();
    assert!(
        !kinds_aside(
            &panes
                .iter()
                .map(|p| split.agent_kind(p))
                .collect::<Vec<_>>()
        )
        .is_empty(),
        "these panes are worth a second thread"
    );
    let together = split.resolve_all(&panes);
    let mut alone = resolver();
    let one_by_one: Vec<Resolved> = panes.iter().map(|p| alone.resolve(p)).collect();
    assert_eq!(together, one_by_one);
    assert_eq!(together[9].pane.pane_id, "%9");
    assert_eq!(together[9].agent.as_ref().unwrap().kind, AgentKind::Codex);
}

#[test]
fn a_kind_is_never_split_and_stores_stay_on_the_first_thread() {
    use AgentKind::*;
    let many = |k: AgentKind, n: usize| std::iter::repeat_n(Some(k), n);
    // Too few agent panes, or one kind only: one thread.
    assert!(kinds_aside(&many(Claude, 7).collect::<Vec<_>>()).is_empty());
    assert!(kinds_aside(&many(Claude, 30).collect::<Vec<_>>()).is_empty());
    // The kinds that keep a store and the screen-only ones stay; the others balance them.
    let mixed: Vec<Option<AgentKind>> = many(Opencode, 10)
        .chain(many(Kilo, 10))
        .chain(many(Claude, 10))
        .chain(many(Codex, 10))
        .chain(many(Aider, 10))
        .chain([None, None])
        .collect();
    let aside = kinds_aside(&mixed);
    assert!(
        aside.contains(&Claude) && aside.contains(&Codex),
        "{aside:?}"
    );
    assert!(!aside.iter().any(|k| matches!(k, Opencode | Kilo | Aider)));
    // Alone beside a store, the log kinds go to the second thread until it has as much.
    let beside: Vec<Option<AgentKind>> = many(Opencode, 4)
        .chain(many(Claude, 4))
        .chain(many(Gemini, 4))
        .chain(many(Pi, 4))
        .collect();
    assert_eq!(kinds_aside(&beside).len(), 2, "{:?}", kinds_aside(&beside));
}
