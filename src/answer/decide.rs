//! The rule for answering a dialog from outside its pane, on observed values
//! (docs/design.md#deciding-from-anywhere): keys go in only when, at that moment, the agent has
//! the pane's foreground, no one is typing in the pane, its log (where it records requests)
//! still shows the request the person was shown pending, and the screen shows that request's
//! dialog. Anything else is refused with the reason, and nothing is typed.

use serde::Serialize;

use crate::read::dialog::OnScreen;
use crate::read::request::{PromptKind, Request};
use crate::route::recipient::Refusal;
use crate::tmux::ClientNow;

/// A key that came into the pane through a client this many whole seconds ago, or fewer, means
/// someone is at the pane. tmux shows a client's last key in whole seconds, so a key less
/// than 3 s before the look always counts, and one up to 4 s before may. The window it
/// covers is the agent's: a key it has read but not yet drawn nor logged leaves the dialog up
/// and the request pending, and Claude Code 2.1.332 on a loaded machine was seen to take
/// longer than 300 ms for that.
pub const TYPED_WITHIN: i64 = 3;

/// The answer asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Choice {
    /// Allow this once (with `--always`: and do not ask again, where the agent offers it).
    Allow,
    /// Deny.
    Deny,
}

/// What was observed of the pane at one moment.
#[derive(Debug, Clone)]
pub struct Facts {
    /// Whether the agent has its pane's foreground (and why not).
    pub foreground: Result<(), Refusal>,
    /// Whether the agent's log records each request until it is answered.
    pub logs: bool,
    /// What its log shows pending (only read when it logs requests).
    pub logged: Option<Request>,
    /// The dialog on its screen.
    pub screen: Option<OnScreen>,
    /// Someone typing in the pane (see [`typing`]).
    pub typing: Option<Typing>,
}

/// Someone at the pane, seen without the agent's help.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Typing {
    /// A key came in through tmux client `client`, which shows the pane, `ago` whole seconds
    /// ago.
    Key { client: String, ago: i64 },
    /// `bytes` of input wait in the pane's terminal, not yet read by the agent.
    Unread { bytes: u64 },
}

impl std::fmt::Display for Typing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Typing::Key { client, ago: 0 } => {
                write!(f, "a key came in through client {client} just now")
            }
            Typing::Key { client, ago } => {
                write!(f, "a key came in through client {client} {ago} s ago")
            }
            Typing::Unread { bytes } => write!(
                f,
                "{bytes} byte(s) of typing wait in its terminal, not yet read by the agent"
            ),
        }
    }
}

/// Whether someone is typing in `pane`: input its agent has not read yet (`unread` bytes in
/// its terminal), or a key within [`TYPED_WITHIN`] seconds of `now` (seconds since the epoch)
/// through a client that shows it — other than `caller`, the client (name or terminal) the
/// answer itself comes from, whose keys went to the picker or prompt that asks.
pub fn typing(
    pane: &str,
    clients: &[ClientNow],
    caller: Option<&str>,
    unread: u64,
    now: i64,
) -> Option<Typing> {
    if unread > 0 {
        return Some(Typing::Unread { bytes: unread });
    }
    clients
        .iter()
        .filter(|c| c.pane == pane)
        .filter(|c| caller.map_or(true, |me| c.name != me && c.tty != me))
        .map(|c| (c, (now - c.activity).max(0)))
        .filter(|(_, ago)| *ago <= TYPED_WITHIN)
        .min_by_key(|(_, ago)| *ago)
        .map(|(c, ago)| Typing::Key {
            client: c.name.clone(),
            ago,
        })
}

/// Why no key was typed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    /// The pane runs no agent, or not the one that asked, or something else has its terminal.
    #[error("{0}")]
    Pane(Refusal),
    #[error("someone is typing in {pane}: {how}; answer there, or again once it is quiet")]
    Typing { pane: String, how: Typing },
    #[error("no dialog on screen in {pane}")]
    NoDialog { pane: String },
    #[error("already answered: {pane} no longer waits on {what}")]
    AlreadyAnswered { pane: String, what: String },
    #[error("nothing waits in {pane}: its log shows no pending request")]
    NothingPending { pane: String },
    #[error("the dialog changed: {pane} now asks {now}")]
    Changed { pane: String, now: String },
    #[error("the dialog changed: the screen in {pane} does not show {what}")]
    NotOnScreen { pane: String, what: String },
    #[error("{pane} asks a question: it is answered in its pane, never for you")]
    Question { pane: String },
    #[error("{pane} asks to approve a plan: that is decided in its pane")]
    Plan { pane: String },
    #[error(
        "this dialog in {pane} offers no \"don't ask again\"; answer `allow` without --always"
    )]
    NoAlways { pane: String },
    #[error("agentpane does not know the keys that answer this dialog in {pane}; answer it there")]
    NoKeys { pane: String },
    /// Between two looks before a key, the dialog on screen stopped being the one decided on:
    /// nothing more typed.
    #[error(
        "the dialog in {pane} changed before key {key} of the answer (now: {now}); nothing \
         more typed, answer it there"
    )]
    Moved {
        pane: String,
        /// Which key (from 1) was about to go in.
        key: usize,
        now: String,
    },
    /// Some keys went in, then the dialog did not show the step they open: nothing more typed.
    #[error(
        "the dialog in {pane} did not show \"{step}\" after the first keys; nothing more typed, \
         answer it there"
    )]
    Unfinished { pane: String, step: String },
}

impl Refused {
    /// The short name scripts match on (`--json`'s `refusal`).
    pub fn kind(&self) -> &'static str {
        match self {
            Refused::Pane(Refusal::NotAnAgent { .. }) => "not-an-agent",
            Refused::Pane(Refusal::Gone(_)) => "gone",
            Refused::Pane(Refusal::Away(_)) => "away",
            Refused::Typing { .. } => "person-typing",
            Refused::NoDialog { .. } => "no-dialog",
            Refused::AlreadyAnswered { .. } => "already-answered",
            Refused::NothingPending { .. } => "nothing-pending",
            Refused::Changed { .. } | Refused::NotOnScreen { .. } | Refused::Moved { .. } => {
                "dialog-changed"
            }
            Refused::Question { .. } => "question",
            Refused::Plan { .. } => "plan",
            Refused::NoAlways { .. } => "no-always",
            Refused::NoKeys { .. } => "no-keys",
            Refused::Unfinished { .. } => "unfinished",
        }
    }
}

/// The keys to type and the request they answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    pub request: Request,
    pub keys: Vec<String>,
    /// A line the screen must show before the last key: the dialog's own step the keys
    /// before it open (`Choices::deny_step`, `Choices::always_step`).
    pub step: Option<&'static str>,
}

/// A request in a few words: `Bash: rm -rf build`.
pub fn words(r: &Request) -> String {
    match (r.tool.is_empty(), r.summary.is_empty()) {
        (false, false) => format!("{}: {}", r.tool, crate::text::chars(&r.summary, 80)),
        (false, true) => r.tool.clone(),
        _ => crate::text::chars(&r.summary, 80),
    }
}

/// The keys for `choice` (and `always`) in `pane`, given what the person was `shown` (a
/// request's fingerprint; `None`: whatever the pane asks now, which the caller shows) and what
/// is observed now; else why not.
pub fn decide(
    pane: &str,
    shown: Option<&str>,
    choice: Choice,
    always: bool,
    facts: &Facts,
) -> Result<Plan, Refused> {
    let p = || pane.to_string();
    facts.foreground.clone().map_err(Refused::Pane)?;
    // Before the dialog is read: a key the agent has taken but not yet drawn leaves the old
    // dialog up, and ours would reach what it draws next.
    if let Some(how) = &facts.typing {
        return Err(Refused::Typing {
            pane: p(),
            how: how.clone(),
        });
    }
    // The dialog the person was shown, read from the screen before the log recorded its
    // call (Claude Code 2.1.197 was seen to write a call a minute after showing its dialog):
    // while it is up and the log has no other call pending, it is what waits.
    let unlogged = facts.screen.as_ref().filter(|d| {
        facts.logs && facts.logged.is_none() && shown == Some(d.request.fingerprint.as_str())
    });
    let current = if let Some(d) = unlogged {
        &d.request
    } else if facts.logs {
        match &facts.logged {
            Some(r) => r,
            None if shown.is_some() => {
                return Err(Refused::AlreadyAnswered {
                    pane: p(),
                    what: "the request you saw".into(),
                })
            }
            None => return Err(Refused::NothingPending { pane: p() }),
        }
    } else {
        match &facts.screen {
            Some(d) => &d.request,
            None => return Err(Refused::NoDialog { pane: p() }),
        }
    };
    if let Some(fp) = shown {
        // The person may have been shown the dialog read from the screen before the log
        // recorded its call: that dialog's fingerprint counts while it is still up (and is
        // the logged request's, checked below).
        let on_screen = facts
            .screen
            .as_ref()
            .is_some_and(|d| d.request.fingerprint == fp);
        if current.fingerprint != fp && !on_screen {
            return Err(Refused::Changed {
                pane: p(),
                now: words(current),
            });
        }
    }
    match current.kind {
        PromptKind::Permission => {}
        PromptKind::Question => return Err(Refused::Question { pane: p() }),
        PromptKind::Plan => return Err(Refused::Plan { pane: p() }),
    }
    let Some(dialog) = &facts.screen else {
        return Err(Refused::NoDialog { pane: p() });
    };
    if facts.logs && unlogged.is_none() && !current.shown_in(&dialog.request) {
        return Err(Refused::NotOnScreen {
            pane: p(),
            what: words(current),
        });
    }
    if dialog.request.kind != PromptKind::Permission {
        return Err(Refused::Question { pane: p() });
    }
    let (keys, step) = match (choice, always) {
        (Choice::Allow, false) => (dialog.choices.allow.clone(), None),
        (Choice::Allow, true) => match &dialog.choices.always {
            Some(k) => (Some(k.clone()), dialog.choices.always_step),
            None if dialog.choices.allow.is_some() => return Err(Refused::NoAlways { pane: p() }),
            None => (None, None),
        },
        (Choice::Deny, _) => (dialog.choices.deny.clone(), dialog.choices.deny_step),
    };
    match keys {
        Some(keys) if !keys.is_empty() => Ok(Plan {
            request: current.clone(),
            keys,
            step,
        }),
        _ => Err(Refused::NoKeys { pane: p() }),
    }
}

/// Whether `now`, the dialog on screen at the look before key `key` (from 1), is still `shown`,
/// the one the answer was decided on: the same request and the same options, in order. A
/// selection that moved (an answer chosen by arrows) is the same dialog.
pub fn still_shown(
    pane: &str,
    key: usize,
    shown: &OnScreen,
    now: Option<&OnScreen>,
) -> Result<(), Refused> {
    match now {
        Some(d)
            if d.request.fingerprint == shown.request.fingerprint && d.options == shown.options =>
        {
            Ok(())
        }
        _ => Err(Refused::Moved {
            pane: pane.to_string(),
            key,
            now: now.map_or_else(|| "no dialog".to_string(), |d| words(&d.request)),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::dialog::Choices;
    use crate::read::request::RequestSource;

    const PANE: &str = "%3";

    fn logged(cmd: &str, id: &str) -> Request {
        Request::new(
            PromptKind::Permission,
            "Bash",
            cmd,
            &format!("{cmd}\n\nRun it"),
            Some(id.into()),
            RequestSource::Log,
        )
        .keyed(cmd)
    }

    fn keys(k: &str) -> Option<Vec<String>> {
        Some(vec![k.to_string()])
    }

    fn dialog(tool: &str, text: &str) -> OnScreen {
        OnScreen {
            request: Request::new(
                PromptKind::Permission,
                tool,
                text,
                text,
                None,
                RequestSource::Screen,
            ),
            choices: Choices {
                allow: keys("1"),
                always: keys("2"),
                deny: keys("3"),
                deny_step: None,
                always_step: None,
            },
            options: ["Yes", "Yes, and don't ask again", "No"]
                .map(str::to_string)
                .to_vec(),
        }
    }

    /// A Claude Code-like pane: the log records `touch a.txt` pending, its dialog is up.
    fn waiting() -> Facts {
        Facts {
            foreground: Ok(()),
            logs: true,
            logged: Some(logged("touch a.txt", "toolu_1")),
            screen: Some(dialog(
                "Bash",
                "touch a.txt\nRun it\nDo you want to proceed?",
            )),
            typing: None,
        }
    }

    fn shown() -> String {
        logged("touch a.txt", "toolu_1").fingerprint
    }

    fn keys_of(r: Result<Plan, Refused>) -> Vec<String> {
        r.expect("allowed").keys
    }

    #[test]
    fn the_dialog_the_person_saw_gets_its_keys() {
        let f = waiting();
        let fp = shown();
        assert_eq!(
            keys_of(decide(PANE, Some(&fp), Choice::Allow, false, &f)),
            ["1"]
        );
        assert_eq!(
            keys_of(decide(PANE, Some(&fp), Choice::Allow, true, &f)),
            ["2"]
        );
        assert_eq!(
            keys_of(decide(PANE, Some(&fp), Choice::Deny, false, &f)),
            ["3"]
        );
        // Without a fingerprint: what the pane asks now (the caller shows it).
        let plan = decide(PANE, None, Choice::Allow, false, &f).unwrap();
        assert_eq!(plan.request.summary, "touch a.txt");
    }

    #[test]
    fn a_request_the_log_no_longer_shows_pending_was_already_answered() {
        let f = Facts {
            logged: None,
            ..waiting()
        };
        let r = decide(PANE, Some(&shown()), Choice::Allow, false, &f).unwrap_err();
        assert_eq!(r.kind(), "already-answered");
        // The person answered, the dialog closed, the log not yet written: still refused.
        let f = Facts {
            screen: None,
            ..waiting()
        };
        let r = decide(PANE, Some(&shown()), Choice::Allow, false, &f).unwrap_err();
        assert_eq!(r.kind(), "no-dialog");
        let f = Facts {
            logged: None,
            screen: None,
            ..waiting()
        };
        assert_eq!(
            decide(PANE, None, Choice::Deny, false, &f)
                .unwrap_err()
                .kind(),
            "nothing-pending"
        );
    }

    #[test]
    fn the_next_request_is_not_the_one_the_person_saw() {
        // Same command asked again after an answer: a new call id, a new fingerprint.
        let f = Facts {
            logged: Some(logged("touch a.txt", "toolu_2")),
            ..waiting()
        };
        let r = decide(PANE, Some(&shown()), Choice::Allow, false, &f).unwrap_err();
        assert_eq!(r.kind(), "dialog-changed");
        assert!(r.to_string().contains("Bash: touch a.txt"), "{r}");
        // Another command.
        let f = Facts {
            logged: Some(logged("rm -rf /", "toolu_2")),
            screen: Some(dialog("Bash", "rm -rf /")),
            ..waiting()
        };
        let r = decide(PANE, Some(&shown()), Choice::Deny, false, &f).unwrap_err();
        assert_eq!(
            r.to_string(),
            "the dialog changed: %3 now asks Bash: rm -rf /"
        );
    }

    #[test]
    fn a_dialog_shown_before_the_log_recorded_it_is_still_that_request() {
        let f = waiting();
        let seen_on_screen = f.screen.as_ref().unwrap().request.fingerprint.clone();
        assert_eq!(
            keys_of(decide(
                PANE,
                Some(&seen_on_screen),
                Choice::Allow,
                false,
                &f
            )),
            ["1"]
        );
        // Once that dialog is gone, its fingerprint names nothing.
        let f = Facts {
            screen: Some(dialog("Bash", "rm -rf /")),
            logged: Some(logged("rm -rf /", "toolu_2")),
            ..waiting()
        };
        assert_eq!(
            decide(PANE, Some(&seen_on_screen), Choice::Allow, false, &f)
                .unwrap_err()
                .kind(),
            "dialog-changed"
        );
    }

    #[test]
    fn a_dialog_the_log_has_not_recorded_yet_is_answered_as_shown() {
        let f = Facts {
            logged: None,
            ..waiting()
        };
        let on_screen = f.screen.as_ref().unwrap().request.fingerprint.clone();
        let plan = decide(PANE, Some(&on_screen), Choice::Deny, false, &f).unwrap();
        assert_eq!(plan.keys, ["3"]);
        assert_eq!(plan.request.from, RequestSource::Screen);
        // Another fingerprint, or none, is not that dialog.
        for shown in [Some(shown().as_str()), Some("0123456789abcdef")] {
            assert_eq!(
                decide(PANE, shown, Choice::Allow, false, &f)
                    .unwrap_err()
                    .kind(),
                "already-answered"
            );
        }
        assert_eq!(
            decide(PANE, None, Choice::Allow, false, &f)
                .unwrap_err()
                .kind(),
            "nothing-pending"
        );
        // Someone typing still comes first.
        let f = Facts {
            typing: Some(Typing::Unread { bytes: 1 }),
            ..f
        };
        assert_eq!(
            decide(PANE, Some(&on_screen), Choice::Deny, false, &f)
                .unwrap_err()
                .kind(),
            "person-typing"
        );
    }

    #[test]
    fn the_screen_must_show_the_logged_request() {
        // The log says one thing, the screen shows another dialog (or another tool).
        for screen in [dialog("Bash", "rm -rf /"), dialog("Edit", "touch a.txt")] {
            let f = Facts {
                screen: Some(screen),
                ..waiting()
            };
            let r = decide(PANE, Some(&shown()), Choice::Allow, false, &f).unwrap_err();
            assert_eq!(r.kind(), "dialog-changed", "{r}");
        }
        let f = Facts {
            screen: None,
            ..waiting()
        };
        assert_eq!(
            decide(PANE, None, Choice::Allow, false, &f).unwrap_err(),
            Refused::NoDialog { pane: PANE.into() }
        );
    }

    #[test]
    fn nothing_is_typed_unless_the_agent_has_the_foreground() {
        for refusal in [
            Refusal::Gone("the claude (pid 9) in %3 has exited".into()),
            Refusal::Away("the claude (pid 9) in %3 is not in the foreground".into()),
            Refusal::NotAnAgent {
                pane: PANE.into(),
                runs: "bash".into(),
            },
        ] {
            let f = Facts {
                foreground: Err(refusal.clone()),
                ..waiting()
            };
            assert_eq!(
                decide(PANE, Some(&shown()), Choice::Allow, false, &f).unwrap_err(),
                Refused::Pane(refusal)
            );
        }
    }

    #[test]
    fn questions_and_plans_are_shown_never_answered() {
        for kind in [PromptKind::Question, PromptKind::Plan] {
            let q = Request::new(
                kind,
                "AskUserQuestion",
                "Which?",
                "Which?",
                None,
                RequestSource::Log,
            );
            let mut screen = dialog("AskUserQuestion", "Which?");
            screen.request.kind = kind;
            let f = Facts {
                logged: Some(q.clone()),
                screen: Some(screen),
                ..waiting()
            };
            for choice in [Choice::Allow, Choice::Deny] {
                let r = decide(PANE, Some(&q.fingerprint), choice, false, &f).unwrap_err();
                assert!(
                    matches!(r, Refused::Question { .. } | Refused::Plan { .. }),
                    "{r}"
                );
            }
        }
        // A screen-only agent whose screen shows a question.
        let mut screen = dialog("", "Which?");
        screen.request = Request::new(
            PromptKind::Question,
            "",
            "Which?",
            "Which?",
            None,
            RequestSource::Screen,
        );
        let f = Facts {
            logs: false,
            logged: None,
            screen: Some(screen),
            foreground: Ok(()),
            typing: None,
        };
        assert_eq!(
            decide(PANE, None, Choice::Allow, false, &f)
                .unwrap_err()
                .kind(),
            "question"
        );
    }

    #[test]
    fn always_only_where_the_dialog_offers_it() {
        let mut f = waiting();
        f.screen.as_mut().unwrap().choices.always = None;
        let r = decide(PANE, Some(&shown()), Choice::Allow, true, &f).unwrap_err();
        assert_eq!(r.kind(), "no-always");
        // `allow` is never taken as `always`, nor the other way round.
        assert_eq!(
            keys_of(decide(PANE, Some(&shown()), Choice::Allow, false, &f)),
            ["1"]
        );
        // A dialog whose keys agentpane does not know is answered in its pane.
        f.screen.as_mut().unwrap().choices = Choices::default();
        for (choice, always) in [
            (Choice::Allow, false),
            (Choice::Allow, true),
            (Choice::Deny, false),
        ] {
            let r = decide(PANE, Some(&shown()), choice, always, &f).unwrap_err();
            assert_eq!(r.kind(), "no-keys");
        }
    }

    #[test]
    fn an_agent_read_from_its_screen_is_held_to_the_dialog_shown() {
        let d = dialog(
            "shell",
            "$ touch a.txt\nWould you like to run the following command?",
        );
        let fp = d.request.fingerprint.clone();
        let f = Facts {
            foreground: Ok(()),
            logs: false,
            logged: None,
            screen: Some(d),
            typing: None,
        };
        assert_eq!(
            keys_of(decide(PANE, Some(&fp), Choice::Deny, false, &f)),
            ["3"]
        );
        let other = Facts {
            screen: Some(dialog("shell", "$ rm -rf /")),
            ..f.clone()
        };
        assert_eq!(
            decide(PANE, Some(&fp), Choice::Allow, false, &other)
                .unwrap_err()
                .kind(),
            "dialog-changed"
        );
        let gone = Facts { screen: None, ..f };
        assert_eq!(
            decide(PANE, Some(&fp), Choice::Allow, false, &gone)
                .unwrap_err()
                .kind(),
            "no-dialog"
        );
    }

    #[test]
    fn a_codex_command_of_several_lines_is_allowed_and_denied_by_its_own_options() {
        // A heredoc with a short first line and lines that read like options, as Codex
        // 0.171 logs the call and draws its dialog.
        let command = crate::read::dialog::option_like_command();
        let call = serde_json::json!({"type": "response_item", "payload": {
            "type": "function_call", "name": "exec_command", "call_id": "c1",
            "arguments": serde_json::json!({"cmd": command, "justification": "notes"})
                .to_string()}});
        let logged = crate::agents::codex::request::pending(&[call]).expect("pending");
        let screen = crate::agents::codex::dialogs::drawn_run(&command, "notes");
        let f = Facts {
            foreground: Ok(()),
            logs: true,
            logged: Some(logged.clone()),
            screen: crate::agents::of(crate::events::AgentKind::Codex).on_screen(&screen),
            typing: None,
        };
        let fp = Some(logged.fingerprint.as_str());
        assert_eq!(keys_of(decide(PANE, fp, Choice::Allow, false, &f)), ["1"]);
        assert_eq!(keys_of(decide(PANE, fp, Choice::Allow, true, &f)), ["2"]);
        assert_eq!(keys_of(decide(PANE, fp, Choice::Deny, false, &f)), ["3"]);
    }

    fn client(name: &str, pane: &str, activity: i64) -> ClientNow {
        ClientNow {
            name: name.into(),
            tty: format!("/dev/pts/{}", name.len()),
            pane: pane.into(),
            activity,
        }
    }

    #[test]
    fn a_key_through_a_client_on_the_pane_is_someone_typing_there() {
        let now = 1_000;
        // The person pressed a key in %3 two seconds ago.
        let clients = [client("work", "%1", now), client("desk", PANE, now - 2)];
        assert_eq!(
            typing(PANE, &clients, None, 0, now),
            Some(Typing::Key {
                client: "desk".into(),
                ago: 2
            })
        );
        // The margin, in tmux's whole seconds.
        for (ago, typed) in [(0, true), (TYPED_WITHIN, true), (TYPED_WITHIN + 1, false)] {
            let clients = [client("desk", PANE, now - ago)];
            assert_eq!(
                typing(PANE, &clients, None, 0, now).is_some(),
                typed,
                "{ago}"
            );
        }
        // A clock a second behind tmux's is not a key from the future.
        let ahead = [client("desk", PANE, now + 1)];
        assert_eq!(
            typing(PANE, &ahead, None, 0, now),
            Some(Typing::Key {
                client: "desk".into(),
                ago: 0
            })
        );
        // Keys through a client that shows another pane are typed elsewhere.
        assert_eq!(
            typing(PANE, &[client("work", "%1", now)], None, 0, now),
            None
        );
        // The client the answer comes from (by name or terminal): its keys went to the picker.
        let mine = [client("desk", PANE, now)];
        assert_eq!(typing(PANE, &mine, Some("desk"), 0, now), None);
        assert_eq!(typing(PANE, &mine, Some("/dev/pts/4"), 0, now), None);
        // ... but not another client's on the same pane.
        let both = [client("desk", PANE, now), client("tv", PANE, now - 1)];
        assert_eq!(
            typing(PANE, &both, Some("desk"), 0, now),
            Some(Typing::Key {
                client: "tv".into(),
                ago: 1
            })
        );
        // Input the agent has not read yet, however it came (send-keys too), is typing.
        assert_eq!(
            typing(PANE, &[], Some("desk"), 1, now),
            Some(Typing::Unread { bytes: 1 })
        );
    }

    #[test]
    fn nothing_is_typed_while_someone_types_in_the_pane() {
        let how = Typing::Key {
            client: "/dev/pts/7".into(),
            ago: 0,
        };
        let f = Facts {
            typing: Some(how.clone()),
            ..waiting()
        };
        for (choice, always) in [
            (Choice::Allow, false),
            (Choice::Allow, true),
            (Choice::Deny, false),
        ] {
            let r = decide(PANE, Some(&shown()), choice, always, &f).unwrap_err();
            assert_eq!(r.kind(), "person-typing");
            assert_eq!(
                r.to_string(),
                "someone is typing in %3: a key came in through client /dev/pts/7 just now; \
                 answer there, or again once it is quiet"
            );
        }
        // Even when the screen still shows the very dialog that was shown: the key may be
        // its answer, not yet drawn.
        assert_eq!(
            decide(PANE, None, Choice::Allow, false, &f).unwrap_err(),
            Refused::Typing {
                pane: PANE.into(),
                how
            }
        );
        // The pane's own state comes first: an agent away from its terminal is that.
        let f = Facts {
            foreground: Err(Refusal::Gone("gone".into())),
            ..f
        };
        assert_eq!(
            decide(PANE, None, Choice::Allow, false, &f)
                .unwrap_err()
                .kind(),
            "gone"
        );
    }

    #[test]
    fn a_deny_through_the_dialog_s_own_step_waits_for_it_before_its_last_key() {
        let mut f = waiting();
        let choices = &mut f.screen.as_mut().unwrap().choices;
        choices.deny = Some(vec!["Escape".into(), "Enter".into()]);
        choices.deny_step = Some("Reject permission");
        let plan = decide(PANE, Some(&shown()), Choice::Deny, false, &f).unwrap();
        assert_eq!(plan.keys, ["Escape", "Enter"]);
        assert_eq!(plan.step, Some("Reject permission"));
        // Allowing is its keys alone.
        let plan = decide(PANE, Some(&shown()), Choice::Allow, false, &f).unwrap();
        assert_eq!((plan.keys, plan.step), (vec!["1".to_string()], None));
        // Always, through its confirmation.
        let choices = &mut f.screen.as_mut().unwrap().choices;
        choices.always = Some(vec!["Right".into(), "Enter".into(), "Enter".into()]);
        choices.always_step = Some("Always allow");
        let plan = decide(PANE, Some(&shown()), Choice::Allow, true, &f).unwrap();
        assert_eq!(plan.step, Some("Always allow"));
    }
}
