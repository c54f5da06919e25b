//! The document a remote agentpane streams (docs/design.md#remote-hosts): one JSON object per
//! line, its panes as the remote watcher last saw them. The remote is another machine, so its
//! document is read strictly: a size limit, a schema version checked first (a different
//! agentpane answers with a clear message), unknown fields and odd values refused, never a
//! panic. What one pane holds concerns that pane alone: its text is cleaned, and a pane
//! agentpane could not have written is left out with a note, the host and its other panes kept.

use serde::{Deserialize, Serialize};

use crate::events::Time;
use crate::read::request::{PromptKind, Request, RequestSource};
use crate::segment::PaneDetail;
use crate::state::State;
use crate::usage::{Limit, Usage};

/// The version of this document's shape; bumped when a field changes meaning, goes away or
/// comes (an older reader refuses a field it does not know, so it says "install the same
/// agentpane" rather than "not valid"). (2: each pane's `turn_key`, which relays across hosts
/// follow; 3: each pane's `answer_head`, `usage` and `limits`; 4: a waiting pane's `request`,
/// which `answer HOST:%N` is held to.)
pub const SCHEMA: u32 = 4;
/// The oldest schema still read: its documents lack only fields that are optional here.
pub const OLDEST_SCHEMA: u32 = 2;
/// Longest answer head a remote sends, in characters (what the picker shows; `panes` shows
/// fewer).
pub const HEAD_CHARS: usize = 200;
/// Longest request text a remote sends, in characters (lines kept).
pub const REQUEST_CHARS: usize = 4_000;
/// Longest document (one line) read from a remote.
pub const MAX_DOC_BYTES: usize = 1 << 20;
/// Most panes one remote may report.
pub const MAX_PANES: usize = 2_000;
/// Most plan windows one pane may report.
const MAX_LIMITS: usize = 16;
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
    /// First line of the pane's last answer (at most [`HEAD_CHARS`]), when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer_head: Option<String>,
    /// What the session used (docs/design.md#usage); absent from an older remote's document.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// The plan windows the session revealed; one this agentpane cannot read (an agent it
    /// does not know) is left out, the pane kept.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "readable_limits"
    )]
    pub limits: Vec<Limit>,
    /// While `waiting`: what the agent asks (absent from an older remote's document).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<RemoteRequest>,
}

/// What a remote waiting pane asks: shown as a local pane's request is, and answered there by
/// its fingerprint.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RemoteRequest {
    pub kind: PromptKind,
    pub tool: String,
    pub summary: String,
    /// Everything asked with, its lines kept (at most [`REQUEST_CHARS`]).
    pub text: String,
    /// 16 hex digits ([`Request::is_fingerprint`]): it goes back on the host's command line.
    pub fingerprint: String,
}

/// A request as another agentpane prints it (its snapshot, `answer --json`): the fields a
/// remote is told, the others (that host's own) ignored.
#[derive(Debug, Clone, Deserialize)]
pub struct RequestSeen {
    pub kind: PromptKind,
    pub tool: String,
    pub summary: String,
    pub text: String,
    pub fingerprint: String,
}

impl From<RequestSeen> for RemoteRequest {
    fn from(r: RequestSeen) -> RemoteRequest {
        RemoteRequest {
            kind: r.kind,
            tool: r.tool,
            summary: r.summary,
            text: r.text,
            fingerprint: r.fingerprint,
        }
    }
}

impl RemoteRequest {
    pub fn from_request(r: &Request) -> RemoteRequest {
        RemoteRequest {
            kind: r.kind,
            tool: r.tool.clone(),
            summary: r.summary.clone(),
            text: r.text.clone(),
            fingerprint: r.fingerprint.clone(),
        }
    }

    /// As a local request, for what shows one (its fingerprint the host's; never recomputed).
    pub fn to_request(&self) -> Request {
        Request {
            kind: self.kind,
            tool: self.tool.clone(),
            summary: self.summary.clone(),
            text: self.text.clone(),
            call_id: None,
            from: RequestSource::Log,
            key: String::new(),
            fingerprint: self.fingerprint.clone(),
        }
    }
}

/// The plan windows of a remote pane that this agentpane can read, at most [`MAX_LIMITS`].
fn readable_limits<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<Limit>, D::Error> {
    let raw: Vec<serde_json::Value> = Deserialize::deserialize(d)?;
    Ok(raw
        .into_iter()
        .filter_map(|v| serde_json::from_value(v).ok())
        .take(MAX_LIMITS)
        .collect())
}

impl RemotePane {
    /// The remote side: a pane of the local watcher's snapshot, with the head of its last
    /// answer.
    pub fn from_detail(d: &PaneDetail, answer_head: Option<String>) -> RemotePane {
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
            answer_head,
            usage: d.usage.clone(),
            limits: d.limits.clone(),
            request: d.request.as_ref().map(RemoteRequest::from_request),
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
        Some(s) if (u64::from(OLDEST_SCHEMA)..=u64::from(SCHEMA)).contains(&s) => {}
        Some(theirs) => return Err(DocError::Schema { theirs, version }),
        None => return Err(DocError::Invalid("no schema version".into())),
    }
    let doc: Document =
        serde_json::from_slice(line).map_err(|e| DocError::Invalid(short(&e.to_string())))?;
    check(doc)
}

/// Checks what concerns the whole document, then each pane on its own: text fields are
/// cleaned ([`clean_text`]); a pane whose id or agent name is not what agentpane writes is
/// dropped and named in the note. One odd pane never hides the host or its other panes.
fn check(mut doc: Document) -> Result<Document, DocError> {
    if doc.panes.len() > MAX_PANES {
        return Err(DocError::Invalid(format!("more than {MAX_PANES} panes")));
    }
    doc.agentpane = clean_text(&doc.agentpane);
    let mut dropped = Vec::new();
    doc.panes.retain_mut(|p| match pane_problem(p) {
        Some(why) => {
            dropped.push(why);
            false
        }
        None => {
            p.target = clean_text(&p.target);
            p.reason = p.reason.as_deref().map(clean_text);
            p.turn_key = p.turn_key.as_deref().map(clean_text);
            p.answer_head = p
                .answer_head
                .as_deref()
                .map(|h| crate::text::chars(&clean_text(h), HEAD_CHARS));
            if let Some(u) = &mut p.usage {
                u.model = u.model.as_deref().map(clean_text);
            }
            for l in &mut p.limits {
                l.name = clean_text(&l.name);
            }
            if let Some(r) = p.request.take() {
                match clean_request(r) {
                    Ok(r) => p.request = Some(r),
                    Err(why) => dropped.push(format!("{}'s request ({why})", p.pane_id)),
                }
            }
            true
        }
    });
    let dropped = (!dropped.is_empty())
        .then(|| format!("{} pane(s) left out: {}", dropped.len(), dropped.join(", ")));
    let note = [doc.note.as_deref().map(clean_text), dropped]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join("; ");
    doc.note = (!note.is_empty()).then(|| clean_text(&note));
    Ok(doc)
}

/// A request a host printed, cleaned as a document's is; one whose fingerprint agentpane
/// could not have written keeps none (nothing can be held to it).
pub fn clean_seen(r: RemoteRequest) -> RemoteRequest {
    let mut r = clean_fields(r);
    if !Request::is_fingerprint(&r.fingerprint) {
        r.fingerprint.clear();
    }
    r
}

/// A document's request: `Err` when its fingerprint is not one agentpane writes (it would go
/// back on the host's command line).
fn clean_request(r: RemoteRequest) -> Result<RemoteRequest, String> {
    if !Request::is_fingerprint(&r.fingerprint) {
        return Err(format!("fingerprint {:?}", clip(&r.fingerprint, 20)));
    }
    Ok(clean_fields(r))
}

/// A request's text cleaned as the rest is: its lines kept, each cleaned ([`clean_text`]),
/// at most [`REQUEST_CHARS`].
fn clean_fields(mut r: RemoteRequest) -> RemoteRequest {
    r.tool = crate::text::chars(&clean_text(&r.tool), 64);
    r.summary = crate::text::chars(&clean_text(&r.summary), HEAD_CHARS);
    let lines: Vec<String> = r.text.lines().map(clean_text).collect();
    r.text = crate::text::chars(&lines.join("\n"), REQUEST_CHARS);
    r
}

/// Why a pane cannot be shown at all: an id that is no tmux pane id (it is handed back to
/// the host on a command line) or an agent name that is no plain word.
fn pane_problem(p: &RemotePane) -> Option<String> {
    if !is_pane_id(&p.pane_id) {
        return Some(format!("pane id {:?}", clip(&p.pane_id, 20)));
    }
    match &p.agent {
        Some(a)
            if a.is_empty()
                || a.len() > 32
                || !a.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-') =>
        {
            Some(format!("{} agent name {:?}", p.pane_id, clip(a, 20)))
        }
        _ => None,
    }
}

/// Text shown in a status line or a picker: one line of at most [`MAX_FIELD`] bytes, a TAB
/// a space, other control and bidi characters dropped (model text, such as a background
/// agent's description, may hold any of them).
pub fn clean_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len().min(MAX_FIELD));
    for c in s.chars() {
        let c = match c {
            '\t' => ' ',
            c if c.is_control() || is_bidi(c) => continue,
            c => c,
        };
        if out.len() + c.len_utf8() > MAX_FIELD {
            break;
        }
        out.push(c);
    }
    out
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
            answer_head: Some("Done: the tests pass.".into()),
            usage: None,
            limits: Vec::new(),
            request: None,
        }
    }

    #[test]
    fn a_written_document_reads_back() {
        let doc = Document::new(vec![pane()], None);
        assert_eq!(parse(doc.to_line().as_bytes()).unwrap(), doc);
    }

    #[test]
    fn usage_and_plan_windows_travel_and_an_older_remote_without_them_still_reads() {
        let mut p = pane();
        p.usage = Some(Usage {
            model: Some("gpt-5.5\u{1b}[2J".into()),
            context_tokens: Some(22549),
            context_window: Some(258400),
            ..Usage::default()
        });
        p.limits = vec![Limit {
            agent: crate::events::AgentKind::Codex,
            name: "5h".into(),
            used_percent: 15.0,
            window_minutes: Some(300),
            resets_at: chrono::DateTime::from_timestamp(1780638395, 0),
            seen_at: None,
        }];
        let doc = parse(Document::new(vec![p.clone()], None).to_line().as_bytes()).unwrap();
        assert_eq!(doc.panes[0].limits, p.limits);
        assert_eq!(
            doc.panes[0].usage.as_ref().unwrap().model.as_deref(),
            Some("gpt-5.5[2J")
        );
        // A window of an agent this agentpane does not know is left out, the pane kept.
        let mut line = Document::new(vec![p.clone()], None).to_line();
        line = line.replace(
            r#""limits":["#,
            r#""limits":[{"agent":"newagent","name":"5h","used_percent":1.0,"window_minutes":null,"resets_at":null,"seen_at":null},"#,
        );
        let doc = parse(line.as_bytes()).unwrap();
        assert_eq!(doc.panes[0].limits, p.limits);
        let old = r#"{"schema":2,"agentpane":"0.9","panes":[{"pane_id":"%1","target":"a","agent":"codex","state":"idle","seen":false,"reason":null,"at":null,"resets_at":null}]}"#;
        let doc = parse(old.as_bytes()).unwrap();
        assert_eq!(
            (doc.panes[0].usage.as_ref(), doc.panes[0].limits.len()),
            (None, 0)
        );
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
            r#"{"schema":2,"agentpane":"x","panes":[{"pane_id":"%1","target":"a","agent":null,"state":"dancing","seen":false,"reason":null,"at":null,"resets_at":null}]}"#.to_string(),
            format!(r#"{{"schema":2,"agentpane":"{}","panes":[]}}"#, "a".repeat(MAX_DOC_BYTES)),
            "[".repeat(100_000),
            String::new(),
        ];
        for c in &cases {
            assert!(parse(c.as_bytes()).is_err(), "accepted {}", clip(c, 200));
        }
    }

    #[test]
    fn a_tab_in_one_pane_s_text_is_cleaned_and_the_host_keeps_every_pane() {
        let mut odd = pane();
        odd.pane_id = "%4".into();
        odd.reason = Some("background agent:\tfix\u{1b}[2J the \u{202e}tests".into());
        odd.target = "work:\t2.0".into();
        let line = Document::new(vec![pane(), odd], None).to_line();
        let doc = parse(line.as_bytes()).expect("one pane's odd text never refuses the host");
        assert_eq!(doc.panes.len(), 2);
        assert_eq!(doc.panes[0], pane());
        assert_eq!(
            doc.panes[1].reason.as_deref(),
            Some("background agent: fix[2J the tests")
        );
        assert_eq!(doc.panes[1].target, "work: 2.0");
        assert_eq!(doc.note, None);
    }

    #[test]
    fn a_pane_agentpane_could_not_have_written_is_left_out_with_a_note() {
        let mut shell = pane();
        shell.pane_id = "%1; rm -rf /".into();
        let mut odd_agent = pane();
        odd_agent.pane_id = "%5".into();
        odd_agent.agent = Some("claude code".into());
        let long = "x".repeat(MAX_FIELD + 100);
        let mut long_text = pane();
        long_text.pane_id = "%6".into();
        long_text.reason = Some(long);
        let line = Document::new(vec![shell, pane(), odd_agent, long_text], None).to_line();
        let doc = parse(line.as_bytes()).unwrap();
        let ids: Vec<&str> = doc.panes.iter().map(|p| p.pane_id.as_str()).collect();
        assert_eq!(ids, ["%3", "%6"]);
        assert_eq!(doc.panes[1].reason.as_ref().unwrap().len(), MAX_FIELD);
        let note = doc.note.unwrap();
        assert!(
            note.starts_with("2 pane(s) left out: pane id \"%1; rm -rf /\"")
                && note.contains("%5 agent name \"claude code\""),
            "{note}"
        );
    }

    #[test]
    fn an_older_remote_without_answer_heads_still_reads() {
        let line = r#"{"schema":2,"agentpane":"0.1.0","panes":[{"pane_id":"%1","target":"main:1.0","agent":"claude","state":"your-turn","seen":false,"reason":null,"at":null,"resets_at":null}]}"#;
        let doc = parse(line.as_bytes()).expect("a schema-2 document");
        assert_eq!(doc.panes.len(), 1);
        assert_eq!(doc.panes[0].answer_head, None);
        // And this agentpane writes the head only when there is one.
        let mut p = pane();
        p.answer_head = None;
        assert!(!Document::new(vec![p], None)
            .to_line()
            .contains("answer_head"));
    }

    #[test]
    fn an_answer_head_is_one_clean_line_of_bounded_length() {
        let mut p = pane();
        p.answer_head = Some(format!("All\tdone\u{1b}[2J \u{202e}{}", "é".repeat(1_000)));
        let line = Document::new(vec![p], None).to_line();
        let head = parse(line.as_bytes()).unwrap().panes[0]
            .answer_head
            .clone()
            .unwrap();
        assert!(head.starts_with("All done[2J éé"), "{head}");
        assert_eq!(head.chars().count(), HEAD_CHARS);
        assert!(head.ends_with('…'), "{head}");
    }

    #[test]
    fn a_waiting_pane_s_request_travels_cleaned_and_a_hostile_fingerprint_never_does() {
        let asked = Request::new(
            PromptKind::Permission,
            "Bash",
            "rm -rf build",
            "rm -rf build\u{1b}[2J\n\u{202e}# clean",
            Some("t1".into()),
            RequestSource::Log,
        );
        let mut p = pane();
        p.state = State::Waiting;
        p.request = Some(RemoteRequest::from_request(&asked));
        let doc = parse(Document::new(vec![p.clone()], None).to_line().as_bytes()).unwrap();
        let r = doc.panes[0].request.as_ref().expect("the request travels");
        assert_eq!(r.fingerprint, asked.fingerprint);
        assert_eq!(
            r.text, "rm -rf build[2J\n# clean",
            "lines kept, each cleaned"
        );
        assert_eq!(r.to_request().fingerprint, asked.fingerprint);

        for bad in ["$(reboot)", "00000000 0000000", "0123456789abcdef;x", ""] {
            let mut odd = p.clone();
            odd.request.as_mut().unwrap().fingerprint = bad.into();
            let doc = parse(Document::new(vec![odd], None).to_line().as_bytes()).unwrap();
            assert_eq!(doc.panes.len(), 1, "the pane is kept");
            assert_eq!(doc.panes[0].request, None, "{bad:?}");
            assert!(doc.note.unwrap().contains("%3's request (fingerprint"));
        }
        // A schema-3 remote sends no request; its documents still read.
        let old = r#"{"schema":3,"agentpane":"0.9","panes":[{"pane_id":"%1","target":"a","agent":"claude","state":"waiting","seen":false,"reason":"permission","at":null,"resets_at":null}]}"#;
        assert_eq!(parse(old.as_bytes()).unwrap().panes[0].request, None);
    }

    proptest! {
        #[test]
        fn any_bytes_are_refused_or_valid_never_a_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
            if let Ok(doc) = parse(&bytes) {
                prop_assert!((OLDEST_SCHEMA..=SCHEMA).contains(&doc.schema));
            }
        }

        #[test]
        fn any_text_in_fields_comes_out_clean(target in ".{0,64}", reason in ".{0,64}") {
            let mut p = pane();
            p.target = target;
            p.reason = Some(reason);
            let line = Document::new(vec![p], None).to_line();
            let doc = parse(line.as_bytes()).expect("text alone never refuses a document");
            let p = &doc.panes[0];
            prop_assert!(!p.target.chars().any(|c| c.is_control() || is_bidi(c)));
            prop_assert!(!p.reason.as_deref().unwrap_or("").chars().any(|c| c.is_control() || is_bidi(c)));
        }
    }
}
