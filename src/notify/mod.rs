//! Notifications away from the terminal (docs/design.md#desktop-notifications): one per
//! alert, on the channels the user turns on.

#[cfg(all(unix, not(target_os = "macos")))]
mod bus;
pub mod desktop;
