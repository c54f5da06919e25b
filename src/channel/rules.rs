//! The rules that keep two polite agents from talking forever (docs/design.md#loop-guard), as pure
//! functions over the channel's history: who may answer what, the round limit, and the
//! acknowledgement filter. No disk, no clock.

use thiserror::Error;

use super::message::{Kind, Message, Recipient};

/// Asks (request/task) allowed in one thread; the next one escalates to a human.
pub const MAX_ROUNDS: u32 = 3;

/// What a member wants to send.
#[derive(Debug, Clone, Copy)]
pub struct Draft<'a> {
    pub from: &'a str,
    pub to: &'a Recipient,
    pub kind: Kind,
    /// The thread named with `--thread`, if any.
    pub thread: Option<&'a str>,
    /// The body, already sanitised.
    pub body: &'a str,
}

/// What `send` should do with a draft that passed the rules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Write it in `thread` (`None`: it starts its own thread) with `round`.
    Send { thread: Option<String>, round: u32 },
    /// The thread already had [`MAX_ROUNDS`] asks: refuse the draft and close the thread with
    /// `ESCALATED` so a human takes over.
    Escalate { thread: String, round: u32 },
}

/// Why `send` refuses a draft. Each message tells the agent what to do instead.
#[derive(Debug, Clone, Error, PartialEq, Eq)]
pub enum Refusal {
    #[error("the message is empty")]
    Empty,
    #[error(
        "acknowledgement-only messages are not sent (thanks, ok, got it, 收到, 감사 …): \
         this is how loops start. Send nothing, or send new information"
    )]
    AckOnly,
    #[error("{0} is not a member of this channel")]
    UnknownRecipient(String),
    #[error("you cannot send a message to yourself")]
    ToSelf,
    #[error("there is no thread {0} in this channel (see `agentpane channel list`)")]
    UnknownThread(String),
    #[error("thread {thread} is closed ({reason}); do not reopen it")]
    Closed { thread: String, reason: String },
    #[error("a {0} needs --thread: the thread it belongs to")]
    NeedsThread(Kind),
    #[error(
        "thread {thread} was started by a {kind}, which gets no reply; \
         ask in a new thread (omit --thread) only if you need something"
    )]
    NotAskThread { thread: String, kind: Kind },
    #[error("nothing to answer in thread {thread}: {why}")]
    NothingToAnswer { thread: String, why: String },
    #[error(
        "you already answered round {round} of thread {thread}; a response gets no reply, \
         wait for a follow-up request"
    )]
    AlreadyAnswered { thread: String, round: u32 },
    #[error("a response goes to the asker only: use --to {asker}")]
    WrongAddressee { asker: String },
}

/// Checks `draft` against `history` (all messages of the channel, sorted by id) and the
/// channel's `members`.
pub fn check(
    draft: Draft<'_>,
    history: &[Message],
    members: &[String],
) -> Result<Decision, Refusal> {
    if draft.body.trim().is_empty() {
        return Err(Refusal::Empty);
    }
    if draft.kind != Kind::Close && is_ack_only(draft.body, draft.kind, members) {
        return Err(Refusal::AckOnly);
    }
    if let Recipient::Member(to) = draft.to {
        if to == draft.from {
            return Err(Refusal::ToSelf);
        }
        if !members.iter().any(|m| m == to) {
            return Err(Refusal::UnknownRecipient(to.clone()));
        }
    }
    let Some(thread_id) = draft.thread else {
        return match draft.kind {
            Kind::Request | Kind::Task | Kind::Info | Kind::Status => Ok(Decision::Send {
                thread: None,
                round: 1,
            }),
            Kind::Response | Kind::Close => Err(Refusal::NeedsThread(draft.kind)),
        };
    };
    let thread = open_thread(history, thread_id)?;
    let asks: Vec<&Message> = thread
        .iter()
        .copied()
        .filter(|m| m.header.kind.is_ask())
        .collect();
    let current_round = asks.len().max(1) as u32;
    match draft.kind {
        Kind::Request | Kind::Task => {
            let first = thread[0];
            if !first.header.kind.is_ask() {
                return Err(Refusal::NotAskThread {
                    thread: thread_id.to_string(),
                    kind: first.header.kind,
                });
            }
            let round = asks.len() as u32 + 1;
            if round > MAX_ROUNDS {
                Ok(Decision::Escalate {
                    thread: thread_id.to_string(),
                    round,
                })
            } else {
                Ok(Decision::Send {
                    thread: Some(thread_id.to_string()),
                    round,
                })
            }
        }
        Kind::Response => {
            let ask = ask_to_answer(&thread, thread_id, draft)?;
            Ok(Decision::Send {
                thread: Some(thread_id.to_string()),
                round: ask.header.round,
            })
        }
        Kind::Info | Kind::Status | Kind::Close => Ok(Decision::Send {
            thread: Some(thread_id.to_string()),
            round: current_round,
        }),
    }
}

/// The ask a response from `draft.from` answers: the latest request/task in the thread from
/// someone else, addressed to the responder (or to all), that the responder has not answered
/// yet — from the `--to` member when several are waiting.
fn ask_to_answer<'a>(
    thread: &[&'a Message],
    thread_id: &str,
    draft: Draft<'_>,
) -> Result<&'a Message, Refusal> {
    let me = draft.from;
    let answered = |ask: &Message| {
        thread.iter().any(|m| {
            m.header.kind == Kind::Response
                && m.header.from == me
                && m.header.id > ask.header.id
                && m.header.to == Recipient::Member(ask.header.from.clone())
        })
    };
    let for_me: Vec<&Message> = thread
        .iter()
        .copied()
        .filter(|m| m.header.kind.is_ask() && m.header.from != me && m.header.to.includes(me))
        .collect();
    let pending: Vec<&Message> = for_me.iter().copied().filter(|a| !answered(a)).collect();
    if let Some(ask) = pending
        .iter()
        .rev()
        .find(|a| *draft.to == Recipient::Member(a.header.from.clone()))
    {
        return Ok(ask);
    }
    if let Some(ask) = pending.last() {
        return Err(Refusal::WrongAddressee {
            asker: ask.header.from.clone(),
        });
    }
    if let Some(ask) = for_me.last() {
        return Err(Refusal::AlreadyAnswered {
            thread: thread_id.to_string(),
            round: ask.header.round,
        });
    }
    let why = match thread.iter().rev().find(|m| m.header.kind.is_ask()) {
        None => "it has no request or task".to_string(),
        Some(ask) if ask.header.from == me => "its latest request is your own".to_string(),
        Some(ask) => format!(
            "its latest {} is addressed to {}, not to you",
            ask.header.kind, ask.header.to
        ),
    };
    Err(Refusal::NothingToAnswer {
        thread: thread_id.to_string(),
        why,
    })
}

/// The messages of thread `id` (in id order), refusing unknown and closed threads.
fn open_thread<'a>(history: &'a [Message], id: &str) -> Result<Vec<&'a Message>, Refusal> {
    let thread: Vec<&Message> = history.iter().filter(|m| m.header.thread == id).collect();
    if thread.is_empty() {
        return Err(Refusal::UnknownThread(id.to_string()));
    }
    if let Some(close) = thread.iter().find(|m| m.header.kind == Kind::Close) {
        let reason = close.body.lines().next().unwrap_or("").trim();
        return Err(Refusal::Closed {
            thread: id.to_string(),
            reason: format!(
                "{} by {}",
                crate::text::chars(reason, 121),
                close.header.from
            ),
        });
    }
    Ok(thread)
}

/// Texts longer than this (in letters and digits) are never treated as acknowledgements.
const ACK_MAX_CHARS: usize = 60;

/// Thanks, greetings, receipts and filler: never a message on their own.
#[rustfmt::skip]
const ALWAYS: &[&str] = &[
    // English
    "thanks", "thank", "thankyou", "thx", "thnx", "ty", "tysm", "cheers", "appreciated",
    "appreciate", "much", "very", "so", "a", "lot", "again", "for", "the", "your", "you", "all",
    "everyone", "team", "help", "helpful", "info", "answer", "reply", "response", "got", "gotcha",
    "it", "noted", "understood", "understand", "roger", "that", "ack", "acknowledged", "received",
    "welcome", "re", "problem", "worries", "my", "pleasure", "anytime", "likewise", "too", "same",
    "here", "to", "and", "glad", "happy", "helped", "hi", "hello", "hey", "bye", "goodbye", "see",
    "later", "have", "nice", "day", "i", "we", "will", "keep", "in", "mind", "touch", "dear",
    "friend", "question", "asking",
    // other Latin-script languages
    "danke", "schön", "merci", "beaucoup", "gracias", "de", "nada", "obrigado", "obrigada",
    "grazie", "prego",
    // Chinese
    "谢谢", "谢", "多谢", "感谢", "非常", "你", "您", "不客气", "不用谢", "客气", "辛苦了", "辛苦", "你好", "再见", "收到", "已收到",
    "明白", "明白了", "了解", "知道了", "懂了", "了", "啦", "哈", "呀", "啊",
    // Japanese
    "ありがとう", "ありがとうございます", "ありがとうございました", "どういたしまして", "こちらこそ", "よろしく", "よろしくお願いします", "お疲れ様です",
    "こんにちは", "了解です", "承知しました", "承知", "わかりました", "分かりました", "です",
    // Korean
    "감사", "감사합니다", "감사해요", "고마워", "고마워요", "고맙습니다", "천만에요", "아니에요", "저야말로", "별말씀을요", "안녕", "안녕하세요",
    "수고하셨습니다", "수고", "알겠습니다", "알겠어요", "알았어", "확인", "확인했습니다", "잘", "받았습니다",
];

/// Bare agreement: an acknowledgement in most messages, but a real answer in a `response`
/// ("May I delete the cache?" — "ok").
#[rustfmt::skip]
const AGREEMENT: &[&str] = &[
    "ok", "okay", "okey", "k", "kk", "yes", "yep", "yeah", "yup", "sure", "fine", "alright",
    "right", "correct", "agreed", "agree", "exactly", "do", "sounds", "good", "great", "cool",
    "perfect", "awesome", "excellent", "lgtm", "no", "nope", "好", "好的", "是", "是的", "对", "可以", "行",
    "没问题", "네", "예", "좋아요", "はい", "いいえ", "아니요",
];

/// True when `text` says nothing but thanks/ok/got it (in a few languages), possibly with
/// member names, punctuation and emoji around it. Only short texts qualify.
pub fn is_ack_only(text: &str, kind: Kind, members: &[String]) -> bool {
    let normalised = text.to_lowercase();
    let tokens: Vec<&str> = normalised
        .split(|c: char| !c.is_alphanumeric())
        .filter(|t| !t.is_empty())
        .collect();
    if tokens.iter().map(|t| t.chars().count()).sum::<usize>() > ACK_MAX_CHARS {
        return false;
    }
    let names: Vec<String> = members.iter().map(|m| m.to_lowercase()).collect();
    let mut vocab: Vec<&str> = ALWAYS.to_vec();
    vocab.extend(names.iter().map(String::as_str));
    if kind != Kind::Response {
        vocab.extend_from_slice(AGREEMENT);
    }
    tokens.iter().all(|t| segments(t, &vocab))
}

/// Word break: can `token` be cut entirely into words of `vocab`? (CJK has no spaces.)
fn segments(token: &str, vocab: &[&str]) -> bool {
    let n = token.len();
    let mut reach = vec![false; n + 1];
    reach[0] = true;
    for i in 0..n {
        if !reach[i] || !token.is_char_boundary(i) {
            continue;
        }
        for w in vocab {
            if token[i..].starts_with(w) {
                reach[i + w.len()] = true;
            }
        }
    }
    reach[n]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::channel::message::{make_id, ms_to_time, Header};

    fn members() -> Vec<String> {
        vec!["A".into(), "B".into(), "C".into()]
    }

    /// A tiny history builder: messages get increasing ids.
    #[derive(Default)]
    struct History(Vec<Message>);

    impl History {
        fn add(&mut self, kind: Kind, from: &str, to: &str, thread: Option<&str>) -> String {
            let ms = 1_781_298_904_000 + self.0.len() as i64;
            let id = make_id(ms, from);
            let thread = thread.map_or(id.clone(), str::to_string);
            let asks = self
                .0
                .iter()
                .filter(|m| m.header.thread == thread && m.header.kind.is_ask())
                .count() as u32;
            let round = if kind.is_ask() { asks + 1 } else { asks.max(1) };
            self.0.push(Message {
                header: Header {
                    id: id.clone(),
                    thread,
                    kind,
                    from: from.into(),
                    to: to.parse().unwrap(),
                    round,
                    created: ms_to_time(ms),
                },
                body: "body\n".into(),
            });
            id
        }

        fn check(
            &self,
            kind: Kind,
            from: &str,
            to: &str,
            thread: Option<&str>,
        ) -> Result<Decision, Refusal> {
            self.check_body(
                kind,
                from,
                to,
                thread,
                "Here is what I found: it parses the header.",
            )
        }

        fn check_body(
            &self,
            kind: Kind,
            from: &str,
            to: &str,
            thread: Option<&str>,
            body: &str,
        ) -> Result<Decision, Refusal> {
            let to: Recipient = to.parse().unwrap();
            let draft = Draft {
                from,
                to: &to,
                kind,
                thread,
                body,
            };
            check(draft, &self.0, &members())
        }
    }

    fn send(thread: Option<&str>, round: u32) -> Result<Decision, Refusal> {
        Ok(Decision::Send {
            thread: thread.map(str::to_string),
            round,
        })
    }

    #[test]
    fn request_without_thread_starts_a_thread() {
        let h = History::default();
        assert_eq!(h.check(Kind::Request, "A", "B", None), send(None, 1));
        assert_eq!(h.check(Kind::Task, "A", "all", None), send(None, 1));
        assert_eq!(h.check(Kind::Info, "A", "all", None), send(None, 1));
    }

    #[test]
    fn response_answers_a_request_addressed_to_the_sender() {
        let mut h = History::default();
        let t = h.add(Kind::Request, "A", "B", None);
        assert_eq!(
            h.check(Kind::Response, "B", "A", Some(&t)),
            send(Some(&t), 1)
        );
    }

    #[test]
    fn response_to_a_task_is_allowed_and_to_all_asks_anyone_may_answer_once() {
        let mut h = History::default();
        let t = h.add(Kind::Task, "A", "all", None);
        assert_eq!(
            h.check(Kind::Response, "C", "A", Some(&t)),
            send(Some(&t), 1)
        );
        h.add(Kind::Response, "C", "A", Some(&t));
        assert_eq!(
            h.check(Kind::Response, "B", "A", Some(&t)),
            send(Some(&t), 1)
        );
        assert!(matches!(
            h.check(Kind::Response, "C", "A", Some(&t)),
            Err(Refusal::AlreadyAnswered { round: 1, .. })
        ));
    }

    #[test]
    fn a_clarifying_question_and_the_original_both_get_answered() {
        let mut h = History::default();
        let t = h.add(Kind::Request, "A", "B", None);
        // B asks back before answering; A answers that, then B answers A's question.
        h.add(Kind::Request, "B", "A", Some(&t));
        assert_eq!(
            h.check(Kind::Response, "A", "B", Some(&t)),
            send(Some(&t), 2)
        );
        h.add(Kind::Response, "A", "B", Some(&t));
        assert_eq!(
            h.check(Kind::Response, "B", "A", Some(&t)),
            send(Some(&t), 1)
        );
        h.add(Kind::Response, "B", "A", Some(&t));
        for who in ["A", "B"] {
            let other = if who == "A" { "B" } else { "A" };
            assert!(matches!(
                h.check(Kind::Response, who, other, Some(&t)),
                Err(Refusal::AlreadyAnswered { .. })
            ));
        }
    }

    #[test]
    fn with_two_askers_waiting_the_addressee_picks_one_by_to() {
        let mut h = History::default();
        let t = h.add(Kind::Request, "A", "all", None);
        h.add(Kind::Request, "C", "all", Some(&t));
        assert_eq!(
            h.check(Kind::Response, "B", "A", Some(&t)),
            send(Some(&t), 1)
        );
        assert_eq!(
            h.check(Kind::Response, "B", "C", Some(&t)),
            send(Some(&t), 2)
        );
        h.add(Kind::Response, "B", "C", Some(&t));
        assert_eq!(
            h.check(Kind::Response, "B", "C", Some(&t)),
            Err(Refusal::WrongAddressee { asker: "A".into() })
        );
        assert_eq!(
            h.check(Kind::Response, "B", "A", Some(&t)),
            send(Some(&t), 1)
        );
    }

    #[test]
    fn response_needs_a_thread() {
        let h = History::default();
        assert_eq!(
            h.check(Kind::Response, "B", "A", None),
            Err(Refusal::NeedsThread(Kind::Response))
        );
    }

    #[test]
    fn response_to_a_request_for_someone_else_is_refused() {
        let mut h = History::default();
        let t = h.add(Kind::Request, "A", "B", None);
        assert!(matches!(
            h.check(Kind::Response, "C", "A", Some(&t)),
            Err(Refusal::NothingToAnswer { .. })
        ));
    }

    #[test]
    fn response_to_own_request_is_refused() {
        let mut h = History::default();
        let t = h.add(Kind::Request, "A", "all", None);
        assert!(matches!(
            h.check(Kind::Response, "A", "B", Some(&t)),
            Err(Refusal::NothingToAnswer { .. })
        ));
    }

    #[test]
    fn second_response_to_the_same_round_is_refused() {
        let mut h = History::default();
        let t = h.add(Kind::Request, "A", "B", None);
        h.add(Kind::Response, "B", "A", Some(&t));
        assert_eq!(
            h.check(Kind::Response, "B", "A", Some(&t)),
            Err(Refusal::AlreadyAnswered {
                thread: t.clone(),
                round: 1
            })
        );
    }

    #[test]
    fn response_goes_to_the_asker_only() {
        let mut h = History::default();
        let t = h.add(Kind::Request, "A", "B", None);
        assert_eq!(
            h.check(Kind::Response, "B", "C", Some(&t)),
            Err(Refusal::WrongAddressee { asker: "A".into() })
        );
        assert_eq!(
            h.check(Kind::Response, "B", "all", Some(&t)),
            Err(Refusal::WrongAddressee { asker: "A".into() })
        );
    }

    #[test]
    fn no_reply_to_response_info_status_or_close() {
        let mut h = History::default();
        let info = h.add(Kind::Info, "A", "all", None);
        let status = h.add(Kind::Status, "A", "B", None);
        for t in [&info, &status] {
            assert!(matches!(
                h.check(Kind::Response, "B", "A", Some(t)),
                Err(Refusal::NothingToAnswer { .. })
            ));
            assert!(matches!(
                h.check(Kind::Request, "B", "A", Some(t)),
                Err(Refusal::NotAskThread { .. })
            ));
        }
        // A response itself cannot be answered: the asker's answer slot is used up.
        let t = h.add(Kind::Request, "A", "B", None);
        h.add(Kind::Response, "B", "A", Some(&t));
        assert!(matches!(
            h.check(Kind::Response, "A", "B", Some(&t)),
            Err(Refusal::NothingToAnswer { .. })
        ));
        // Nothing at all goes into a closed thread.
        h.add(Kind::Close, "A", "all", Some(&t));
        for kind in Kind::ALL {
            assert!(
                matches!(
                    h.check(kind, "B", "A", Some(&t)),
                    Err(Refusal::Closed { .. })
                ),
                "{kind}"
            );
        }
    }

    #[test]
    fn follow_up_is_a_request_in_the_same_thread_with_the_next_round() {
        let mut h = History::default();
        let t = h.add(Kind::Request, "A", "B", None);
        h.add(Kind::Response, "B", "A", Some(&t));
        assert_eq!(
            h.check(Kind::Request, "A", "B", Some(&t)),
            send(Some(&t), 2)
        );
        h.add(Kind::Request, "A", "B", Some(&t));
        assert_eq!(
            h.check(Kind::Response, "B", "A", Some(&t)),
            send(Some(&t), 2)
        );
        h.add(Kind::Response, "B", "A", Some(&t));
        assert_eq!(
            h.check(Kind::Request, "A", "B", Some(&t)),
            send(Some(&t), 3)
        );
        h.add(Kind::Request, "A", "B", Some(&t));
        assert_eq!(
            h.check(Kind::Response, "B", "A", Some(&t)),
            send(Some(&t), 3)
        );
        h.add(Kind::Response, "B", "A", Some(&t));
        assert_eq!(
            h.check(Kind::Request, "A", "B", Some(&t)),
            Ok(Decision::Escalate {
                thread: t.clone(),
                round: 4
            })
        );
        assert_eq!(
            h.check(Kind::Task, "B", "A", Some(&t)),
            Ok(Decision::Escalate {
                thread: t.clone(),
                round: 4
            })
        );
        // Status and info still fit in the thread at its current round.
        assert_eq!(h.check(Kind::Status, "B", "A", Some(&t)), send(Some(&t), 3));
    }

    #[test]
    fn unknown_thread_recipient_and_self_are_refused() {
        let h = History::default();
        let ghost = make_id(1, "A");
        assert_eq!(
            h.check(Kind::Request, "A", "B", Some(&ghost)),
            Err(Refusal::UnknownThread(ghost.clone()))
        );
        assert_eq!(
            h.check(Kind::Request, "A", "Z", None),
            Err(Refusal::UnknownRecipient("Z".into()))
        );
        assert_eq!(h.check(Kind::Request, "A", "A", None), Err(Refusal::ToSelf));
        assert_eq!(
            h.check_body(Kind::Info, "A", "B", None, " \n"),
            Err(Refusal::Empty)
        );
    }

    #[test]
    fn close_needs_an_open_thread_and_may_say_anything() {
        let mut h = History::default();
        let t = h.add(Kind::Request, "A", "B", None);
        assert_eq!(
            h.check_body(Kind::Close, "A", "all", Some(&t), "done"),
            send(Some(&t), 1)
        );
        assert_eq!(
            h.check(Kind::Close, "A", "all", None),
            Err(Refusal::NeedsThread(Kind::Close))
        );
    }

    #[test]
    fn acknowledgements_are_recognised_in_several_languages() {
        let m = members();
        for text in [
            "thanks",
            "Thank you!",
            "thx 🙏",
            "ok",
            "OK.",
            "Got it, thanks B!",
            "noted",
            "You're welcome!",
            "no problem, happy to help",
            "收到",
            "谢谢！",
            "好的，收到",
            "감사합니다",
            "고마워요~",
            "아니에요, 저야말로",
            "了解です",
            "ありがとうございます",
            "👍",
            "...",
            "Merci beaucoup",
            "Thanks a lot for your help, A.",
        ] {
            assert!(
                is_ack_only(text, Kind::Info, &m),
                "{text:?} should be an ack"
            );
        }
        for text in [
            "ok, but the parser breaks on CRLF",
            "thanks — which file holds the config?",
            "The function validates the header.",
            "收到，但是测试失败了",
            "Please review src/channel/rules.rs",
            "no",
        ] {
            let is_ack = is_ack_only(text, Kind::Info, &m);
            assert_eq!(is_ack, text == "no", "{text:?}");
        }
        let long = "thanks ".repeat(20);
        assert!(
            !is_ack_only(&long, Kind::Info, &m),
            "long texts are never acks"
        );
    }

    #[test]
    fn bare_agreement_is_an_answer_only_in_a_response() {
        let m = members();
        for text in ["ok", "yes", "no", "好的", "네", "sure, do it"] {
            assert!(!is_ack_only(text, Kind::Response, &m), "{text:?}");
            assert!(is_ack_only(text, Kind::Status, &m), "{text:?}");
        }
        assert!(is_ack_only("thanks!", Kind::Response, &m));
        assert!(is_ack_only("got it", Kind::Response, &m));
    }

    #[test]
    fn ack_check_runs_before_thread_rules() {
        let mut h = History::default();
        let t = h.add(Kind::Request, "A", "B", None);
        assert_eq!(
            h.check_body(Kind::Response, "B", "A", Some(&t), "Thanks for asking!"),
            Err(Refusal::AckOnly)
        );
        assert_eq!(
            h.check_body(Kind::Response, "B", "A", Some(&t), "yes"),
            send(Some(&t), 1)
        );
    }
}
