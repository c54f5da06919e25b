//! opencode message rows → normalised events (the same ones the Claude and Codex adapters
//! produce, so one state engine classifies all agents). What the real client (1.18.33) writes:
//!
//! - a prompt is a `user` message; each model step of the turn is an `assistant` message whose
//!   `parentID` is that prompt;
//! - a step that called tools ends with `finish: "tool-calls"` (sometimes `"unknown"`), the
//!   step that answers with `finish: "stop"`, both with `time.completed`; a streaming step has
//!   neither;
//! - a tool part goes `pending` → `running` → `completed`/`error`; while it waits for the
//!   user's permission it is `running` with no `metadata` (nothing on disk says "waiting": the
//!   screen does, see `evidence::pane`);
//! - a failed request sets `error: {name: "APIError", data: {message, statusCode}}` (also
//!   `ProviderAuthError`, …) and `time.completed`; Escape mid-stream sets
//!   `MessageAbortedError`; Escape while opencode waits to retry a failed request completes
//!   the message with neither `finish` nor `error`; rejecting a tool in the permission dialog
//!   fails that tool part ("The user rejected permission …") and ends the turn after the
//!   `tool-calls` step.

use crate::events::{ApiError, Event, EventKind, Time};

use super::store::{MessageRow, PartRow};

/// Milliseconds since the epoch → time.
pub fn time_ms(ms: i64) -> Option<Time> {
    chrono::DateTime::from_timestamp_millis(ms)
}

/// The events of `messages` (oldest first), in order.
pub fn events(messages: &[MessageRow]) -> Vec<Event> {
    let mut out = Vec::new();
    for m in messages {
        match m.role.as_str() {
            "user" => out.push(event(EventKind::UserPrompt, m, m.created_ms)),
            "assistant" => assistant(m, &mut out),
            _ => {}
        }
    }
    out
}

fn event(kind: EventKind, m: &MessageRow, at_ms: i64) -> Event {
    Event {
        kind,
        sidechain: false,
        at: time_ms(at_ms),
        key: Some(m.id.clone()),
        message_id: Some(m.id.clone()),
    }
}

fn assistant(m: &MessageRow, out: &mut Vec<Event>) {
    out.push(event(EventKind::AssistantOther, m, m.created_ms));
    for p in m.parts.iter().filter(|p| p.kind == "tool") {
        tool(m, p, out);
    }
    // Any write to the message or its parts is proof of life for the open step.
    let latest = m
        .parts
        .iter()
        .map(|p| p.updated_ms)
        .chain([m.updated_ms])
        .max()
        .unwrap_or(m.created_ms);
    let Some(done) = m.completed_ms else {
        out.push(event(EventKind::Progress, m, latest));
        return;
    };
    let kind = match (m.error_name.as_deref(), m.finish.as_deref()) {
        (Some("MessageAbortedError"), _) => EventKind::Interrupted,
        (Some(name), _) => EventKind::ApiError(api_error(name, m)),
        (None, Some("stop")) => EventKind::AssistantText { closes: Some(true) },
        (None, Some(_)) if step_continues(m) && rejected(m) => EventKind::Interrupted,
        (None, Some(_)) if step_continues(m) => EventKind::AssistantOther,
        (None, Some(_)) => EventKind::AssistantText { closes: Some(true) },
        (None, None) => EventKind::Interrupted,
    };
    out.push(event(kind, m, done));
}

/// opencode runs another step after these finishes (its prompt loop ends the turn on any
/// other): `tool-calls`, and `unknown`, which 1.18.33 also writes for a tool step now and then.
pub fn continues(finish: &str) -> bool {
    matches!(finish, "tool-calls" | "unknown")
}

/// Whether another step follows the finished step `m`: a finish of [`continues`], or — Kilo
/// 7.7.7, whose provider code maps the stand-in's `tool_calls` to `"other"` — `"other"` on a
/// step that called tools (Kilo ran the next step after each such step it wrote).
pub fn step_continues(m: &MessageRow) -> bool {
    match m.finish.as_deref() {
        Some(f) if continues(f) => true,
        Some("other") => m.parts.iter().any(|p| p.kind == "tool"),
        _ => false,
    }
}

/// The user rejected one of the step's tools in the permission dialog: opencode stops there.
fn rejected(m: &MessageRow) -> bool {
    m.parts.iter().any(|p| {
        p.status.as_deref() == Some("error")
            && p.error
                .as_deref()
                .is_some_and(|e| e.contains("rejected permission"))
    })
}

fn tool(m: &MessageRow, p: &PartRow, out: &mut Vec<Event>) {
    // The part id, not the provider's call id: providers may reuse call ids across steps.
    let id = p.id.clone();
    let name = p.tool.clone().unwrap_or_else(|| "tool".into());
    out.push(Event {
        kind: EventKind::ToolUse {
            ids: vec![id.clone()],
            names: vec![name],
        },
        sidechain: false,
        at: time_ms(p.updated_ms),
        key: Some(m.id.clone()),
        message_id: Some(m.id.clone()),
    });
    if matches!(p.status.as_deref(), Some("completed" | "error")) {
        out.push(Event {
            kind: EventKind::ToolResult { ids: vec![id] },
            sidechain: false,
            at: time_ms(p.updated_ms),
            key: Some(m.id.clone()),
            message_id: Some(m.id.clone()),
        });
    }
}

/// An error as the reason a person acts on: `auth`, `rate limit`, `quota exceeded`, or
/// `api error 400: <message>`.
fn api_error(name: &str, m: &MessageRow) -> ApiError {
    let message = m.error_message.as_deref().unwrap_or("").trim();
    let short = crate::text::chars(message.lines().next().unwrap_or(""), 80);
    let kind = match (name, m.status_code) {
        ("ProviderAuthError", _) | (_, Some(401 | 403)) => "auth".to_string(),
        (_, Some(429)) => "rate limit".to_string(),
        (_, Some(402)) => "quota exceeded".to_string(),
        (_, Some(code)) if short.is_empty() => format!("api error {code}"),
        (_, Some(code)) => format!("api error {code}: {short}"),
        (_, None) if short.is_empty() => format!("error: {name}"),
        (_, None) => format!("error: {short}"),
    };
    ApiError {
        kind,
        text: crate::text::bounded(message, 500),
        resets_at: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agents::opencode::store::{self, testkit};
    use crate::state::{classify, Observation, State, Windows};

    const SESSION: &str = "ses_dcc45fdafffevJwm88T7RhVzyq";

    /// The state of the recorded session cut after its `n` first messages, `secs` after the
    /// last write.
    fn state_after(sql: &str, keep: usize, secs: i64) -> (State, Option<String>) {
        let dir = tempfile::tempdir().unwrap();
        let db = testkit::db_from(dir.path(), sql);
        let mut all = store::latest_messages(&db, SESSION, 100).unwrap().unwrap();
        all.truncate(keep);
        let last = all.iter().map(|m| m.updated_ms).max().unwrap();
        let now = time_ms(last).unwrap() + chrono::Duration::seconds(secs);
        let s = classify(
            &events(&all),
            now,
            &Windows::default(),
            Observation::default(),
        );
        (s.state, s.reason)
    }

    /// Role, finish and error name of each recorded message.
    type Row = (String, Option<String>, Option<String>);

    fn roles(sql: &str) -> Vec<Row> {
        let dir = tempfile::tempdir().unwrap();
        let db = testkit::db_from(dir.path(), sql);
        store::latest_messages(&db, SESSION, 100)
            .unwrap()
            .unwrap()
            .into_iter()
            .map(|m| (m.role, m.finish, m.error_name))
            .collect()
    }

    #[test]
    fn each_recorded_turn_end_reads_as_the_real_client_showed_it() {
        let sql = testkit::fixture("session.sql");
        let r = roles(&sql);
        let find = |pred: &dyn Fn(&Row) -> bool| r.iter().position(pred).unwrap() + 1;
        // 1. "hello there" answered.
        let answered = find(&|m| m.1.as_deref() == Some("stop"));
        assert_eq!(
            state_after(&sql, answered, 2),
            (State::YourTurn, None),
            "answered"
        );
        // 2. the bash step done, the answer still to come: working.
        let tools = find(&|m| m.1.as_deref() == Some("tool-calls"));
        assert_eq!(state_after(&sql, tools, 2).0, State::Working);
        // 3. Escape while a 429 was being retried: no finish, no error.
        let retry_abort = find(&|m| m.0 == "assistant" && m.1.is_none() && m.2.is_none());
        assert_eq!(
            state_after(&sql, retry_abort, 2),
            (State::YourTurn, Some("interrupted".into()))
        );
        // 4. Escape mid-stream.
        let aborted = find(&|m| m.2.as_deref() == Some("MessageAbortedError"));
        assert_eq!(
            state_after(&sql, aborted, 2),
            (State::YourTurn, Some("interrupted".into()))
        );
        // 5. 400 and 401 from the API.
        let bad = find(&|m| m.2.as_deref() == Some("APIError"));
        assert_eq!(
            state_after(&sql, bad, 2),
            (
                State::Attention,
                Some("api error 400: model stand-in does not exist".into())
            )
        );
        let auth = r.len() - 2;
        assert_eq!(
            state_after(&sql, auth, 2),
            (State::Attention, Some("auth".into()))
        );
        // 6. a bash call rejected in the permission dialog: the turn is over, the user did it.
        assert_eq!(
            state_after(&sql, r.len(), 2),
            (State::YourTurn, Some("interrupted".into()))
        );
        // A prompt just sent: working.
        assert_eq!(state_after(&sql, bad - 1, 1).0, State::Working);
    }

    #[test]
    fn a_step_finished_unknown_continues_the_turn() {
        let dir = tempfile::tempdir().unwrap();
        let db = testkit::db_from(dir.path(), &testkit::fixture("unknown-finish.sql"));
        let all = store::latest_messages(&db, "ses_dcc1975e1ffel1i4bnDPC2h7UL", 10)
            .unwrap()
            .unwrap();
        assert_eq!(all[1].finish.as_deref(), Some("unknown"));
        let now = time_ms(all[2].created_ms).unwrap();
        for keep in [2, 3] {
            let s = classify(
                &events(&all[..keep]),
                now,
                &Windows::default(),
                Observation::default(),
            );
            assert_eq!(s.state, State::Working, "after {keep} messages: {s:?}");
        }
    }

    #[test]
    fn a_call_id_reused_by_the_provider_does_not_hide_a_pending_tool() {
        // The stand-in, like some providers, names every call `call_1`.
        let tool = |id: &str, status: &str| PartRow {
            id: id.into(),
            kind: "tool".into(),
            updated_ms: 2_000,
            tool: Some("bash".into()),
            call_id: Some("call_1".into()),
            status: Some(status.into()),
            ..PartRow::default()
        };
        let step = |id: &str, part: PartRow, done: bool| MessageRow {
            id: id.into(),
            role: "assistant".into(),
            created_ms: 1_000,
            updated_ms: 2_000,
            completed_ms: done.then_some(2_000),
            finish: done.then(|| "tool-calls".to_string()),
            parts: vec![part],
            ..MessageRow::default()
        };
        let messages = [
            step("msg_1", tool("prt_1", "completed"), true),
            step("msg_2", tool("prt_2", "running"), false),
        ];
        let now = time_ms(3_000).unwrap();
        let s = classify(
            &events(&messages),
            now,
            &Windows::default(),
            Observation::default(),
        );
        assert_eq!(s.reason.as_deref(), Some("tool: bash"));
    }

    #[test]
    fn a_tool_waiting_for_permission_and_a_stream_in_flight_are_open_turns() {
        let sql = testkit::fixture("in-flight.sql");
        let (state, reason) = state_after(&sql, 2, 3);
        assert_eq!(
            (state, reason.as_deref()),
            (State::Working, Some("tool: bash"))
        );
        let (state, reason) = state_after(&sql, 4, 3);
        assert_eq!((state, reason), (State::Working, None));
    }
}
