//! Notifications away from the terminal (docs/design.md#desktop-notifications): one per
//! alert, on the channels the user turns on.

pub mod desktop;
