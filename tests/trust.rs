//! No other user steers agentpane (docs/design.md#reliability): a state folder another user
//! owns, or others can write to, is refused with the fix, so a queued message planted there —
//! naming the victim's agent by pid and start time, both readable in /proc — never reaches it.
//! Tests run as root, so "another user" is uid 65534 (nobody) by `chown`.

mod common;

use std::os::unix::fs::{chown, MetadataExt, PermissionsExt};
use std::path::Path;
use std::time::Duration;

use agentpane::route::queue::Queued;
use common::{wait_until, TmuxServer, DEADLINE};

const NOBODY: u32 = 65534;

/// Writes a queued message for the agent in `dst` into `queue`, as another user could.
fn plant(server: &TmuxServer, queue: &Path, dst: &str, id: &str, text: &str, age_s: i64) {
    let msg = Queued {
        id: id.into(),
        created: chrono::Utc::now() - chrono::Duration::seconds(age_s),
        server: server.tmux(&["display-message", "-p", "#{socket_path}"]),
        src: "%0".into(),
        dst: dst.into(),
        text: text.into(),
        submit: true,
        recipient: Some(server.recipient(dst)),
    };
    std::fs::create_dir_all(queue).unwrap();
    let file = queue.join(format!("{id}.json"));
    std::fs::write(&file, serde_json::to_vec(&msg).unwrap()).unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
}

fn set_mode(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

#[test]
fn a_queued_message_planted_in_a_state_folder_others_control_is_not_delivered() {
    let server = TmuxServer::start();
    let (victim, inbox) = server.inbox_agent("victim");
    let state = server.state_dir();
    let queue = state.join("queue");
    plant(
        &server,
        &queue,
        &victim,
        "20260101-000000-000-1-0",
        "PLANTED",
        0,
    );
    // Who we are: the owner of what this test made.
    let me = std::fs::metadata(server.path()).unwrap().uid();

    // Another user's folder, open to all: refused, with who owns it and what to do.
    for dir in [&state, &queue] {
        chown(dir, Some(NOBODY), None).unwrap();
        set_mode(dir, 0o777);
    }
    let run = server.agentpane(&["route-queue", "--deliver", "--json"]);
    assert_ne!(run.code, 0, "{run:?}");
    assert!(
        run.stderr.contains(&format!(
            "state folder {} is owned by uid {NOBODY}, not you (uid {me})",
            state.display()
        )),
        "{run:?}"
    );
    assert_eq!(run.stdout, "", "{run:?}");
    // The watcher will not start on it either; the status segment shows nothing.
    let watch = server.agentpane(&["watch", "--exit-after", "1", "--no-notify"]);
    assert_ne!(watch.code, 0, "{watch:?}");
    assert!(watch.stderr.contains("is owned by uid"), "{watch:?}");
    let status = server.agentpane(&["status"]);
    assert_eq!((status.code, status.stdout.as_str()), (0, ""), "{status:?}");
    let doctor = server.agentpane(&["doctor"]);
    assert!(
        doctor
            .stdout
            .contains("belongs to another user: agentpane refuses it"),
        "{doctor:?}"
    );

    // The user's own folder, but writable by others: refused, with the `chmod` that fixes it.
    for dir in [&state, &queue] {
        chown(dir, Some(me), None).unwrap();
    }
    let run = server.agentpane(&["route-queue", "--deliver", "--json"]);
    assert_ne!(run.code, 0, "{run:?}");
    assert!(
        run.stderr.contains(&format!(
            "state folder {0} is writable by others (mode 0777): agentpane does not act on what \
             others can change; run `chmod go-w {0}`",
            state.display()
        )),
        "{run:?}"
    );
    std::thread::sleep(Duration::from_millis(500));
    assert!(!read(&inbox).contains("PLANTED"), "{}", read(&inbox));

    // A sub-folder open to others is refused the same way.
    set_mode(&state, 0o700);
    let run = server.agentpane(&["route-queue", "--deliver", "--json"]);
    assert_ne!(run.code, 0, "{run:?}");
    assert!(
        run.stderr.contains(&format!(
            "folder {} is writable by others (mode 0777)",
            queue.display()
        )),
        "{run:?}"
    );
    let doctor = server.agentpane(&["doctor"]);
    assert!(
        doctor
            .stdout
            .contains("queue is writable by others (mode 0777): agentpane refuses it"),
        "{doctor:?}"
    );

    // Fixed as the message says: the same message (the user's own file now) goes out — it was
    // the folder alone that stopped it. A file another user owns stays where it is, unread,
    // though it is older and would go first.
    set_mode(&queue, 0o700);
    plant(
        &server,
        &queue,
        &victim,
        "20250101-000000-000-1-0",
        "FOREIGN",
        3600,
    );
    chown(
        queue.join("20250101-000000-000-1-0.json"),
        Some(NOBODY),
        None,
    )
    .unwrap();
    let run = server.agentpane(&["route-queue", "--deliver", "--json"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.json()["id"], "20260101-000000-000-1-0", "{run:?}");
    wait_until(DEADLINE, "the user's own queued text in the agent", || {
        read(&inbox).contains("PLANTED")
    });
    assert!(!read(&inbox).contains("FOREIGN"), "{}", read(&inbox));
}
