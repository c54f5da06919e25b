//! The released Claude Code clients (every pinned version, `tests/real/clients.txt`) in a
//! private tmux server against a stand-in for the Anthropic API (`tests/real/anthropic.rs`):
//! what agentpane shows for each real turn. One module per scenario group; `rig` starts a
//! client and reads agentpane's views.

mod common;
mod live;
mod real;

#[path = "real_claude/agents.rs"]
mod agents;
#[path = "real_claude/answer.rs"]
mod answer;
#[path = "real_claude/desktop.rs"]
mod desktop;
#[path = "real_claude/errors.rs"]
mod errors;
#[path = "real_claude/folders.rs"]
mod folders;
#[path = "real_claude/hooks.rs"]
mod hooks;
#[path = "real_claude/limits.rs"]
mod limits;
#[path = "real_claude/notify.rs"]
mod notify;
#[path = "real_claude/permission.rs"]
mod permission;
#[path = "real_claude/retry.rs"]
mod retry;
#[path = "real_claude/rig.rs"]
mod rig;
#[path = "real_claude/safety.rs"]
mod safety;
#[path = "real_claude/turns.rs"]
mod turns;
#[path = "real_claude/usage.rs"]
mod usage;
#[path = "real_claude/web.rs"]
mod web;
