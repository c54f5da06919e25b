//! What Claude Code's transcript says about usage (docs/design.md#usage): each assistant
//! record's `message.usage` and `message.model`. One API message is written as one record per
//! content block, each repeating the message's usage: its `message.id` is the key, so it
//! counts once. Claude Code writes no cost and no plan window in its transcript.

use std::borrow::Cow;
use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use crate::usage::Reading;

/// The window of every Claude model agentpane knows, in tokens.
const WINDOW: u64 = 200_000;
/// The window of a model chosen with the `[1m]` suffix (`sonnet[1m]`).
const WINDOW_1M: u64 = 1_000_000;
/// The families whose window is [`WINDOW`] unless the `[1m]` choice says otherwise.
const KNOWN: [&str; 6] = [
    "claude-opus-4",
    "claude-sonnet-4",
    "claude-haiku-4",
    "claude-3-7-sonnet",
    "claude-3-5-sonnet",
    "claude-3-5-haiku",
];

/// The fields of a transcript record usage needs; the rest of the line (its content, often
/// most of it) is skipped, not decoded.
#[derive(Deserialize)]
struct Record<'a> {
    #[serde(rename = "type", borrow)]
    kind: Option<Cow<'a, str>>,
    #[serde(rename = "isSidechain", default)]
    sidechain: bool,
    #[serde(borrow)]
    timestamp: Option<Cow<'a, str>>,
    #[serde(borrow)]
    message: Option<Message<'a>>,
}

#[derive(Deserialize)]
struct Message<'a> {
    #[serde(borrow)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    model: Option<Cow<'a, str>>,
    usage: Option<Counts>,
}

#[derive(Deserialize)]
struct Counts {
    #[serde(default)]
    input_tokens: u64,
    #[serde(default)]
    cache_read_input_tokens: u64,
    #[serde(default)]
    cache_creation_input_tokens: u64,
    #[serde(default)]
    output_tokens: u64,
}

/// One transcript line's usage: `None` for anything but an assistant record with usage.
pub fn usage(line: &[u8]) -> Option<Reading> {
    // Most lines (tool results, prompts) carry no usage: not decoded.
    if !crate::agents::fields::contains(line, b"\"usage\"") {
        return None;
    }
    let r: Record = serde_json::from_slice(line).ok()?;
    if r.kind.as_deref() != Some("assistant") {
        return None;
    }
    let msg = r.message?;
    let u = msg.usage?;
    let prompt = u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens;
    // `<synthetic>`: a message Claude Code made up itself (an API error), no model's.
    let model = msg
        .model
        .filter(|m| !m.starts_with('<'))
        .map(Cow::into_owned);
    let at = r
        .timestamp
        .and_then(|t| chrono::DateTime::parse_from_rfc3339(&t).ok())
        .map(|t| t.with_timezone(&chrono::Utc));
    Some(Reading {
        key: msg.id.map(Cow::into_owned),
        // A subagent's request fills its own context, not the session's.
        model: model.filter(|_| !r.sidechain),
        // A record with no prompt tokens (a synthetic message) says nothing of the context.
        context_tokens: (!r.sidechain && prompt > 0).then_some(prompt),
        input: prompt,
        output: u.output_tokens,
        at,
        ..Reading::default()
    })
}

/// The window of `model`: a million when the session chose the `[1m]` variant (its
/// `--model`, `ANTHROPIC_MODEL` or the `model` of its settings), else the known families'
/// 200k; `None` for a model agentpane does not know.
pub fn context_window(model: &str, pid: Option<u32>, home: &Path) -> Option<u64> {
    if !KNOWN.iter().any(|k| model.starts_with(k)) {
        return None;
    }
    let chosen = pid.and_then(|pid| chosen_model(pid, home));
    Some(if chosen.is_some_and(|m| m.ends_with("[1m]")) {
        WINDOW_1M
    } else {
        WINDOW
    })
}

/// The model the process `pid` was told to use: its `--model`, else `ANTHROPIC_MODEL`, else
/// the `model` of its settings.
fn chosen_model(pid: u32, home: &Path) -> Option<String> {
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    let args: Vec<&[u8]> = cmdline.split(|b| *b == 0).collect();
    let flag = args
        .windows(2)
        .find_map(|w| (w[0] == b"--model").then(|| String::from_utf8_lossy(w[1]).into_owned()));
    if flag.is_some() {
        return flag;
    }
    let env = crate::proctree::procfs::environ(pid).unwrap_or_default();
    if let Some(m) = env.get("ANTHROPIC_MODEL") {
        return Some(m.to_string());
    }
    let (root, _) = super::locate::config_root(pid, home);
    let settings = std::fs::read(root.join("settings.json")).ok()?;
    let v: Value = serde_json::from_slice(&settings).ok()?;
    crate::agents::fields::str_of(&v, "model").map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::usage::Tally;

    fn fixture(rel: &str) -> String {
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)).unwrap()
    }

    #[test]
    fn a_message_streamed_over_several_lines_counts_once() {
        // 152 API messages over more lines, each line of one message repeating its usage;
        // the sums of each message's last line, worked out apart from this reader.
        let log = fixture(
            "fixtures/real/claude/marot-spotter/258c7280-ae70-4798-800f-63464d01a85d.jsonl",
        );
        let readings: Vec<Reading> = log.lines().filter_map(|l| usage(l.as_bytes())).collect();
        assert_eq!(
            readings[0].key, readings[1].key,
            "msg_01EEiRWu… over two lines"
        );
        assert_eq!(readings[0].context_tokens, Some(3 + 8037 + 17842));
        let mut tally = Tally::default();
        readings.into_iter().for_each(|r| tally.push(r));
        let u = tally.usage(context_window("claude-opus-4-6", None, Path::new("/")));
        assert_eq!(u.model.as_deref(), Some("claude-opus-4-6"));
        assert_eq!(u.context_tokens, Some(77334));
        assert_eq!(u.context_window, Some(200_000));
        assert_eq!(
            (u.session_input, u.session_output),
            (Some(15_121_271), Some(38_899))
        );
        assert_eq!(u.cost_usd, None, "Claude Code logs no cost");
    }

    #[test]
    fn other_records_and_unknown_models_say_nothing() {
        assert_eq!(usage(br#"{"type":"user","message":{"usage":{}}}"#), None);
        assert_eq!(usage(b"not json \"usage\""), None);
        assert_eq!(context_window("gpt-5", None, Path::new("/")), None);
        assert_eq!(
            context_window("claude-sonnet-4-5-20250929", None, Path::new("/")),
            Some(200_000)
        );
    }
}
