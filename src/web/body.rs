//! The bodies of the page's POSTs, checked (docs/design.md#web-page): the same rules for a
//! pane here and on a host.

use serde::Deserialize;

/// The body of `POST …/answer`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct AnswerBody {
    pub decision: String,
    #[serde(default)]
    pub always: bool,
    #[serde(default)]
    confirm: bool,
    pub fingerprint: String,
}

/// The body of `POST …/answer` checked: the choice, or (status, why).
pub(super) fn answer_body(
    body: serde_json::Value,
) -> Result<(AnswerBody, crate::answer::Choice), (u16, String)> {
    let b: AnswerBody =
        serde_json::from_value(body).map_err(|e| (400, format!("bad answer: {e}")))?;
    let choice = match b.decision.as_str() {
        "allow" => crate::answer::Choice::Allow,
        "deny" => crate::answer::Choice::Deny,
        _ => return Err((400, "decision must be \"allow\" or \"deny\"".into())),
    };
    if b.fingerprint.trim().is_empty() {
        return Err((400, "the fingerprint of the request shown is needed".into()));
    }
    if b.always && !b.confirm {
        return Err((400, "\"always\" needs \"confirm\": true".into()));
    }
    if b.always && choice == crate::answer::Choice::Deny {
        return Err((400, "\"always\" goes with allow only".into()));
    }
    Ok((b, choice))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ReplyBody {
    pub text: String,
}

/// The text of `POST …/reply`, sanitized as a route's; or (status, why).
pub(super) fn reply_body(body: serde_json::Value) -> Result<String, (u16, String)> {
    let b: ReplyBody =
        serde_json::from_value(body).map_err(|e| (400, format!("bad reply: {e}")))?;
    let text = crate::route::sanitize::sanitize(&b.text);
    if text.trim().is_empty() {
        return Err((400, "nothing to send".into()));
    }
    Ok(text)
}
