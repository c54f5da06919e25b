//! Claude adapter.

pub mod locate;
pub mod parse;
pub mod screen;

use std::path::Path;

use crate::events::Time;

/// When the session of `transcript` last wrote to one of its subagent transcripts
/// (`<session id>/subagents/agent-<id>.jsonl` beside `<session id>.jsonl`): a background
/// agent at work, while the main transcript stays quiet. `None` when it has none.
pub fn subagent_life(transcript: &Path) -> Option<Time> {
    let dir = transcript.with_extension("").join("subagents");
    std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "jsonl"))
        .filter_map(|e| e.metadata().ok()?.modified().ok())
        .max()
        .map(Time::from)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, SystemTime};

    #[test]
    fn subagent_life_is_the_newest_subagent_write() {
        let root = tempfile::tempdir().expect("tempdir");
        let transcript = root.path().join("abc.jsonl");
        std::fs::write(&transcript, "{}\n").expect("write");
        assert_eq!(subagent_life(&transcript), None, "no subagents folder");
        let subagents = root.path().join("abc").join("subagents");
        std::fs::create_dir_all(&subagents).expect("mkdir");
        let at = |name: &str, ago: u64| {
            let f = std::fs::File::create(subagents.join(name)).expect("create");
            let t = SystemTime::now() - Duration::from_secs(ago);
            f.set_modified(t).expect("set mtime");
            Time::from(t)
        };
        at("agent-a1.jsonl", 600);
        let newest = at("agent-a2.jsonl", 30);
        at("notes.txt", 0);
        assert_eq!(subagent_life(&transcript), Some(newest));
    }
}
