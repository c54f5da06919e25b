//! Agent adapters: one folder per agent, each implementing [`Agent`] (the one interface the
//! pipeline asks anything of an agent through); the files beside them are what the agents
//! share, below every agent; [`registry`] lists the agents, above them all
//! (docs/design.md#adding-an-agent).

pub mod agent;
pub mod aider;
pub mod amp;
pub mod claude;
pub mod cline;
pub mod codex;
pub mod copilot;
pub mod droid;
pub mod fields;
pub mod gemini;
pub mod kilo;
pub mod kimi;
pub mod locate;
pub mod opencode;
pub mod pi;
pub mod qwen;
pub mod record;
pub mod registry;
pub mod retry;
pub mod screen;
pub mod shared;
pub mod start_order;
#[cfg(test)]
pub mod testkit;

pub use agent::{Agent, AnswerReader, AnswerStep, HookFile, LookBack, Lookup};
pub use registry::stores::{self, Depth, Stores};
pub use registry::{
    all, announced_in, detect_line, folders, keeps_a_store, never_news, of, own_reader,
    owner_of_path, packages, parse_fragments, parse_line, reads_log, reads_title, request_of,
    retrying, shows_retries, sources, UNTOLD,
};
pub use shared::Shared;
