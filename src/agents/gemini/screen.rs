//! A Gemini CLI turn that gets no reply: what 0.61.0 shows while it retries a failed API call.
//!
//! It retries 429, 499 and 5xx answers (and dropped connections) up to 10 attempts, 5 s to
//! 30 s apart, and shows none of it: it works out a `Trying to reach <model> (Attempt 2/10)`
//! line (or, by default, `This is taking a bit longer, we're still on it.`) but its status row
//! never draws it, the title stays `✦  Working…`, and its chat log holds only the prompt until
//! an attempt succeeds or the last one fails (docs/agents/gemini.md#retries). What is on
//! screen is the loading line right under the prompt, counting up with nothing in between:
//! `⠼ Thinking... (esc to cancel, 34s)`. A reply that streams shows its text (`✦ …`), a tool
//! its box, a thinking model its thought, between the two; so a prompt left that long with
//! nothing under it is taken for a retry loop, without the attempt or the wait, which the
//! client does not show.

use crate::agents::retry::Retrying;

/// How long a prompt goes unanswered before it reads as a retry loop: past a slow first token,
/// and short of the client's fourth attempt (5 + 10 + 20 s of waits, less 30 % jitter).
pub const NO_REPLY: u64 = 30;

/// Lines above the loading line that can hold the prompt it answers.
const PROMPT_ABOVE: usize = 20;

/// The seconds in the loading line's timer: `34s`, `1m 5s`, `2m`, `1h 3s`.
fn seconds(timer: &str) -> Option<u64> {
    let mut total = 0;
    for part in timer.split_whitespace() {
        let (n, unit) = part.split_at(part.find(|c: char| !c.is_ascii_digit())?);
        let n: u64 = n.parse().ok()?;
        total += n * match unit {
            "h" => 3600,
            "m" => 60,
            "s" => 1,
            _ => return None,
        };
    }
    Some(total)
}

/// The seconds a prompt has waited for its first word, when the screen shows the loading line
/// right under it: `⠼ Thinking... (esc to cancel, 34s)`.
fn unanswered_for(screen: &str) -> Option<u64> {
    let clean = strip_ansi_escapes::strip_str(screen);
    let lines: Vec<&str> = clean
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let at = lines
        .iter()
        .rposition(|l| l.contains("Thinking... (esc to cancel, "))?;
    // The loading line sits just above the input box: nothing but its hint after it.
    let loading = lines[at];
    let before = loading.split("Thinking... ").next()?;
    if before.chars().count() > 2 {
        return None; // text before the spinner: not the loading line
    }
    let timer = loading
        .split("(esc to cancel, ")
        .nth(1)?
        .split(')')
        .next()?;
    // Walk up to the prompt: anything else in between (a reply, a tool, a thought) is an
    // answer arriving.
    let prompt = lines[..at]
        .iter()
        .rev()
        .take(PROMPT_ABOVE)
        .position(|l| l.starts_with("> "))?;
    let between = &lines[at - prompt..at];
    let answering = between.iter().any(|l| l.starts_with(['✦', '╭', '│', '╰']));
    if answering {
        return None;
    }
    seconds(timer)
}

/// A prompt unanswered for [`NO_REPLY`] s or more, read as the retry loop Gemini CLI does not
/// show: no attempt, limit or wait, as it gives none.
pub fn retrying(screen: &str) -> Option<Retrying> {
    let waited = unanswered_for(screen).filter(|s| *s >= NO_REPLY)?;
    Some(Retrying {
        error: format!("no reply from the API for {waited} s"),
        attempt: None,
        limit: None,
        next_in: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const RETRY: &str =
        include_str!("../../../fixtures/real-clients/gemini-0.61.0/retry-screen.txt");
    const RECOVERED: &str =
        include_str!("../../../fixtures/real-clients/gemini-0.61.0/retry-recovered.txt");

    #[test]
    fn a_prompt_left_unanswered_reads_as_a_retry_loop() {
        let r = retrying(RETRY).expect("the unanswered prompt");
        assert!(r.attempt.is_none() && r.limit.is_none() && r.next_in.is_none());
        assert!(
            r.reason().starts_with("no reply from the API for ")
                && r.reason().ends_with(" s — retrying"),
            "{}",
            r.reason()
        );
        assert_eq!(retrying(RECOVERED), None);
    }

    #[test]
    fn the_timer_is_read_in_its_own_units() {
        assert_eq!(seconds("34s"), Some(34));
        assert_eq!(seconds("1m 5s"), Some(65));
        assert_eq!(seconds("2m"), Some(120));
        assert_eq!(seconds("1h 3s"), Some(3603));
        assert_eq!(seconds("soon"), None);
    }

    #[test]
    fn a_fresh_prompt_or_an_answer_on_its_way_is_no_retry_loop() {
        let rule = "─".repeat(40);
        let wait = |between: &str, timer: &str| {
            format!(
                " > hello\n{between} ⠼ Thinking... (esc to cancel, {timer})      ? for shortcuts\n\
                 {rule}\n >   Type your message or @path/to/file\n"
            )
        };
        assert_eq!(unanswered_for(&wait("", "34s")), Some(34));
        assert_eq!(unanswered_for(&wait("", "1m 5s")), Some(65));
        assert_eq!(retrying(&wait("", "12s")), None, "a slow first token");
        let streaming = wait("✦ Here is a long answer, still streaming\n", "1m 5s");
        assert_eq!(retrying(&streaming), None);
        let tool = wait("╭────╮\n│ ✓  Shell sleep 60 │\n╰────╯\n", "1m 5s");
        assert_eq!(retrying(&tool), None);
        // A thinking model shows its thought in the loading line, not `Thinking...`.
        let thought = format!(" > hello\n ⠼ Analyzing the request (esc to cancel, 45s)\n{rule}\n");
        assert_eq!(retrying(&thought), None);
        // An answer that quotes the loading line is history, not the loading line.
        let quoted = " > hello\n✦ It said: Thinking... (esc to cancel, 45s)\n";
        assert_eq!(retrying(quoted), None);
    }
}
