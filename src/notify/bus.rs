//! The freedesktop notification service (`org.freedesktop.Notifications`) on the session bus,
//! spoken in-process through notify-rust: a notification's texts travel in a D-Bus message to
//! the daemon and are never part of any process's argument list. This is the desktop
//! channel's seam to the bus; what is shown and what a click does is decided in
//! [`super::desktop`].

use std::sync::{mpsc, Arc};
use std::time::Duration;

use notify_rust::{Notification, NotificationHandle, NotificationResponse, Urgency};

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

/// Shows `n`; the handle to wait on.
pub fn show(n: &Shown) -> anyhow::Result<NotificationHandle> {
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
    Ok(notification.show()?)
}

/// Waits at most `limit` for the person to pick one of the notification's actions; its key.
/// `None` when the notification closed or the time ran out — then it is closed, so no click
/// comes later. The wait runs on a thread of its own that ends when the notification closes.
pub fn wait_for_action(handle: NotificationHandle, limit: Duration) -> Option<String> {
    let handle = Arc::new(handle);
    let (tx, rx) = mpsc::channel();
    let waiting = Arc::clone(&handle);
    let waiter = std::thread::Builder::new()
        .name("desktop-wait".into())
        .spawn(move || {
            zbus::block_on(waiting.wait_for_action_async(|r| {
                let _ = tx.send(match r {
                    NotificationResponse::Action(key) => Some(key.clone()),
                    _ => None,
                });
            }))
        });
    if waiter.is_err() {
        return None;
    }
    match rx.recv_timeout(limit) {
        Ok(picked) => picked,
        Err(mpsc::RecvTimeoutError::Timeout) => {
            zbus::block_on(handle.close_async());
            None
        }
        Err(mpsc::RecvTimeoutError::Disconnected) => None,
    }
}
