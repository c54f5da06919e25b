//! The document a remote agentpane streams (docs/design.md#remote-hosts): one JSON object per
//! line, its panes as the remote watcher last saw them. The remote is another machine, so its
//! document is read strictly: a size limit, a schema version checked first (a different
//! agentpane answers with a clear message), unknown fields and odd values refused, never a panic.

use serde::{Deserialize, Serialize};

use crate::events::Time;
use crate::segment::PaneDetail;
use crate::state::State;

/// The version of this document's shape; bumped when a field changes meaning or goes away.
/// (2: each pane's `turn_key`, which relays across hosts follow.)
pub const SCHEMA: u32 = 2;
/// Longest document (one line) read from a remote.
pub const MAX_DOC_BYTES: usize = 1 << 20;
/// Most panes one remote may report.
pub const MAX_PANES: usize = 2_000;
/// Longest text field (target, reason, message).
const MAX_FIELD: usize = 1_024;

/// One streamed document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Document {
    /// [`SCHEMA`] of the agentpane that wrote it.
    pub schema: u32,
    /// That agentpane's version (for messages).
    pub agentpane: String,
    /// The remote's agent panes.
    pub panes: Vec<RemotePane>,
    /// Why the remote has no panes to tell (no tmux server there), when it has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// One agent pane on the remote.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RemotePane {
    /// `%N` on the remote tmux server.
    pub pane_id: String,
    /// `session:window.pane` there.
    pub target: String,
    /// The agent's name (kept as text: a newer remote may know agents this one does not).
    pub agent: Option<String>,
    pub state: State,
    pub seen: bool,
    pub reason: Option<String>,
    /// The key of the pane's last turn (a relay sees a new one as a new answer).
    #[serde(default)]
    pub turn_key: Option<String>,
    pub at: Option<Time>,
    pub resets_at: Option<Time>,
}

impl RemotePane {
    /// The remote side: a pane of the local watcher's snapshot.
    pub fn from_detail(d: &PaneDetail) -> RemotePane {
        RemotePane {
            pane_id: d.pane_id.clone(),
            target: d.target.clone(),
            agent: d.agent.map(|a| a.to_string()),
            state: d.state,
            seen: d.seen,
            reason: d.reason.clone(),
            turn_key: d.turn_key.clone(),
            at: d.at,
            resets_at: d.resets_at,
        }
    }
}

impl Document {
    /// A document of this agentpane.
    pub fn new(panes: Vec<RemotePane>, note: Option<String>) -> Document {
        Document {
            schema: SCHEMA,
            agentpane: env!("CARGO_PKG_VERSION").to_string(),
            panes,
            note,
        }
    }

    /// One line of JSON (no newline inside).
    pub fn to_line(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// Why a remote document was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DocError {
    #[error("the remote document is larger than {MAX_DOC_BYTES} bytes")]
    TooLarge,
    #[error(
        "the remote runs agentpane {version} (remote schema {theirs}); this agentpane {ours} \
         speaks schema {SCHEMA}: install the same agentpane on both hosts",
        ours = env!("CARGO_PKG_VERSION")
    )]
    Schema { theirs: u64, version: String },
    #[error("the remote document is not valid: {0}")]
    Invalid(String),
}

/// Just enough to read the version before anything else.
#[derive(Deserialize)]
struct Probe {
    schema: Option<serde_json::Value>,
    agentpane: Option<serde_json::Value>,
}

/// Parses and checks one document.
pub fn parse(line: &[u8]) -> Result<Document, DocError> {
    if line.len() > MAX_DOC_BYTES {
        return Err(DocError::TooLarge);
    }
    let probe: Probe =
        serde_json::from_slice(line).map_err(|e| DocError::Invalid(short(&e.to_string())))?;
    let version = match probe.agentpane {
        Some(serde_json::Value::String(v)) => clip(&v, 40),
        _ => "of unknown version".to_string(),
    };
    match probe.schema.as_ref().and_then(serde_json::Value::as_u64) {
        Some(s) if s == u64::from(SCHEMA) => {}
        Some(theirs) => return Err(DocError::Schema { theirs, version }),
        None => return Err(DocError::Invalid("no schema version".into())),
    }
    let doc: Document =
        serde_json::from_slice(line).map_err(|e| DocError::Invalid(short(&e.to_string())))?;
    check(&doc)?;
    Ok(doc)
}

fn check(doc: &Document) -> Result<(), DocError> {
    let bad = |what: String| Err(DocError::Invalid(what));
    if doc.panes.len() > MAX_PANES {
        return bad(format!("more than {MAX_PANES} panes"));
    }
    text_ok("agentpane", &doc.agentpane)?;
    if let Some(n) = &doc.note {
        text_ok("note", n)?;
    }
    for p in &doc.panes {
        if !is_pane_id(&p.pane_id) {
            return bad(format!("pane id {:?}", clip(&p.pane_id, 20)));
        }
        text_ok("target", &p.target)?;
        if let Some(a) = &p.agent {
            if a.is_empty()
                || a.len() > 32
                || !a.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
            {
                return bad(format!("agent name {:?}", clip(a, 20)));
            }
        }
        if let Some(r) = &p.reason {
            text_ok("reason", r)?;
        }
        if let Some(k) = &p.turn_key {
            text_ok("turn_key", k)?;
        }
    }
    Ok(())
}

/// Text shown in a status line or a picker: bounded, one line, no control characters.
fn text_ok(field: &str, s: &str) -> Result<(), DocError> {
    if s.len() > MAX_FIELD {
        return Err(DocError::Invalid(format!(
            "{field} longer than {MAX_FIELD}"
        )));
    }
    if s.chars().any(|c| c.is_control() || is_bidi(c)) {
        return Err(DocError::Invalid(format!("control character in {field}")));
    }
    Ok(())
}

fn is_bidi(c: char) -> bool {
    matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `%` and 1 to 9 digits: a tmux pane id.
pub fn is_pane_id(s: &str) -> bool {
    s.strip_prefix('%')
        .is_some_and(|n| (1..=9).contains(&n.len()) && n.bytes().all(|b| b.is_ascii_digit()))
}

fn clip(s: &str, n: usize) -> String {
    s.chars()
        .take(n)
        .filter(|c| !c.is_control())
        .collect::<String>()
}

fn short(s: &str) -> String {
    clip(s, 160)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn pane() -> RemotePane {
        RemotePane {
            pane_id: "%3".into(),
            target: "work:1.0".into(),
            agent: Some("claude".into()),
            state: State::YourTurn,
            seen: false,
            reason: None,
            turn_key: Some("msg_1".into()),
            at: None,
            resets_at: None,
        }
    }

    #[test]
    fn a_written_document_reads_back() {
        let doc = Document::new(vec![pane()], None);
        assert_eq!(parse(doc.to_line().as_bytes()).unwrap(), doc);
    }

    #[test]
    fn another_schema_says_which_versions_differ() {
        let line = r#"{"schema":7,"agentpane":"9.9.9","panes":[],"whatever":1}"#;
        let err = parse(line.as_bytes()).unwrap_err();
        assert!(matches!(err, DocError::Schema { theirs: 7, .. }), "{err}");
        let text = err.to_string();
        assert!(
            text.contains("9.9.9") && text.contains("same agentpane"),
            "{text}"
        );
    }

    #[test]
    fn hostile_documents_are_refused() {
        let cases = [
            r#"{"agentpane":"x","panes":[]}"#.to_string(),
            r#"{"schema":"2","agentpane":"x","panes":[]}"#.to_string(),
            r#"{"schema":2,"agentpane":"x","panes":[],"extra":true}"#.to_string(),
            r#"{"schema":2,"agentpane":"x","panes":[{"pane_id":"%1; rm -rf /","target":"a","agent":null,"state":"idle","seen":false,"reason":null,"at":null,"resets_at":null}]}"#.to_string(),
            r#"{"schema":2,"agentpane":"x","panes":[{"pane_id":"%1","target":"a\u001b[2J","agent":null,"state":"idle","seen":false,"reason":null,"at":null,"resets_at":null}]}"#.to_string(),
            r#"{"schema":2,"agentpane":"x","panes":[{"pane_id":"%1","target":"a","agent":null,"state":"dancing","seen":false,"reason":null,"at":null,"resets_at":null}]}"#.to_string(),
            format!(r#"{{"schema":2,"agentpane":"{}","panes":[]}}"#, "a".repeat(MAX_DOC_BYTES)),
            "[".repeat(100_000),
            String::new(),
        ];
        for c in &cases {
            assert!(parse(c.as_bytes()).is_err(), "accepted {}", clip(c, 200));
        }
    }

    proptest! {
        #[test]
        fn any_bytes_are_refused_or_valid_never_a_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
            if let Ok(doc) = parse(&bytes) {
                prop_assert_eq!(doc.schema, SCHEMA);
            }
        }

        #[test]
        fn any_text_in_fields_is_refused_or_clean(target in ".{0,64}", reason in ".{0,64}") {
            let mut p = pane();
            p.target = target;
            p.reason = Some(reason);
            let line = Document::new(vec![p], None).to_line();
            if let Ok(doc) = parse(line.as_bytes()) {
                let p = &doc.panes[0];
                prop_assert!(!p.target.chars().any(char::is_control));
                prop_assert!(!p.reason.as_deref().unwrap_or("").chars().any(char::is_control));
            }
        }
    }
}
