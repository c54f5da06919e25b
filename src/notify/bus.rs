//! The freedesktop notification service (`org.freedesktop.Notifications`) on the session bus,
//! spoken in-process through notify-rust: a notification's texts travel in a D-Bus message to
//! the daemon and are never part of any process's argument list. This is the desktop
//! channel's seam to the bus; what is shown and what a click does is decided in
//! [`super::desktop`].

use std::sync::mpsc;
use std::time::Duration;

use notify_rust::{Notification, NotificationResponse, Urgency};

/// How long [`reachable`] waits for the service to answer.
const PROBE: Duration = Duration::from_secs(3);

/// Whether the notification service answers on the session bus within a few seconds (a bus
/// that takes the call but never answers is not reachable).
pub fn reachable() -> bool {
    let (tx, rx) = mpsc::channel();
    let probe = std::thread::Builder::new()
        .name("desktop-probe".into())
        .spawn(move || {
            let _ = tx.send(notify_rust::get_server_information().is_ok());
        });
    probe.is_ok() && rx.recv_timeout(PROBE).unwrap_or(false)
}

/// One notification to show: its texts (already cleaned) and its actions, `(key, label)`.
pub struct Shown<'a> {
    pub summary: &'a str,
    pub body: &'a str,
    pub actions: &'a [(&'a str, &'a str)],
    /// Kept on screen until the person acts (a decision waits for them).
    pub critical: bool,
}

/// Shows `n` and, when it offers actions, waits at most `limit` for the person to pick one;
/// its key. `None` when it offers none, closed, or the time ran out. Then it is closed, so no
/// click comes later. Showing and waiting run in one `block_on` on the calling thread, which
/// carries the connection meanwhile.
pub fn show(n: &Shown, limit: Duration) -> anyhow::Result<Option<String>> {
    let mut notification = Notification::new();
    notification
        .appname("agentpane")
        .summary(n.summary)
        .body(n.body);
    for (key, label) in n.actions {
        notification.action(key, label);
    }
    if n.critical {
        notification.urgency(Urgency::Critical);
    }
    let waits = !n.actions.is_empty();
    zbus::block_on(async {
        let handle = notification.show_async().await?;
        if !waits {
            return Ok(None);
        }
        let mut picked = None;
        let clicked = handle.wait_for_action_async(|r| {
            if let NotificationResponse::Action(key) = r {
                picked = Some(key.clone());
            }
        });
        // Picked or timed out, it is done: closed, so its buttons are gone and the next
        // notification of this pane is never folded into it (dunst stacks duplicates).
        let expired = async {
            match zruntime::SharedRuntime::current() {
                Ok(runtime) => runtime.sleep(limit).await,
                // No timer: the wait ends when the notification closes.
                Err(_) => std::future::pending().await,
            }
        };
        futures_lite::future::or(clicked, expired).await;
        handle.close_async().await;
        Ok(picked)
    })
}
