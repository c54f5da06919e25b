//! Typing an answer's keys, each one after a fresh look at the pane: the agent still has its
//! foreground, its screen still shows the dialog the answer was decided on (same request, same
//! options) — or, for the last key of an answer through a step of the dialog's own, that
//! step — and no one is typing there. The first look that fails stops the answer; no key
//! after it is typed.

use super::decide::{self, Plan, Refused, Typing};
use crate::read::dialog::OnScreen;
use crate::route::recipient::Refusal;

/// The pane an answer's keys go to, as the key loop looks at it.
pub trait Pane {
    /// Whether the agent still has the pane's foreground (asked before every key after the
    /// first: the first's was part of the decision).
    fn foreground(&mut self) -> Result<(), Refusal>;
    /// The dialog on its screen now.
    fn dialog(&mut self) -> Option<OnScreen>;
    /// Whether its screen shows a line holding `step`, within a moment.
    fn shows(&mut self, step: &str) -> bool;
    /// Someone typing in it now; `first`: before the answer's first key (after it, input
    /// waiting in its terminal is ours).
    fn typing(&mut self, first: bool) -> Option<Typing>;
    /// Types `key`, held to the foreground last seen; `false` when that changed just before.
    fn press(&mut self, key: &str) -> anyhow::Result<bool>;
}

/// Types `plan`'s keys into `pane` (tmux id `id`), one at a time after the looks above, held
/// to `shown`, the dialog the plan was made from. The keys typed and, when it stopped, why.
pub fn press_keys(
    id: &str,
    plan: &Plan,
    shown: &OnScreen,
    pane: &mut impl Pane,
) -> anyhow::Result<(Vec<String>, Option<Refused>)> {
    let mut typed = Vec::new();
    for (i, key) in plan.keys.iter().enumerate() {
        if let Err(why) = look(id, plan, shown, pane, i) {
            return Ok((typed, Some(why)));
        }
        if !pane.press(key)? {
            let why = Refused::Pane(Refusal::Away(format!(
                "{id}'s foreground changed just before the answer"
            )));
            return Ok((typed, Some(why)));
        }
        typed.push(key.clone());
    }
    Ok((typed, None))
}

/// The looks before key `i` (from 0) of `plan`.
fn look(
    id: &str,
    plan: &Plan,
    shown: &OnScreen,
    pane: &mut impl Pane,
    i: usize,
) -> Result<(), Refused> {
    if i > 0 {
        pane.foreground().map_err(Refused::Pane)?;
    }
    match plan.step.filter(|_| i > 0 && i + 1 == plan.keys.len()) {
        // The last key of an answer through a step of the dialog's own: only once it is up
        // (the dialog itself is gone by then).
        Some(step) if !pane.shows(step) => {
            return Err(Refused::Unfinished {
                pane: id.to_string(),
                step: step.to_string(),
            })
        }
        Some(_) => {}
        None => decide::still_shown(id, i + 1, shown, pane.dialog().as_ref())?,
    }
    // The last look, just before the key: a person's key reaches tmux before the agent, so
    // one pressed up to here is seen.
    match pane.typing(i == 0) {
        Some(how) => Err(Refused::Typing {
            pane: id.to_string(),
            how,
        }),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::dialog::Choices;
    use crate::read::request::{PromptKind, Request, RequestSource};

    /// A pane whose screen shows `screens` in turn, one per look (the last one from then on).
    #[derive(Default)]
    struct Scripted {
        screens: Vec<Option<OnScreen>>,
        looks: usize,
        step_up: bool,
        pressed: Vec<String>,
    }

    impl Pane for Scripted {
        fn foreground(&mut self) -> Result<(), Refusal> {
            Ok(())
        }
        fn dialog(&mut self) -> Option<OnScreen> {
            let at = self.looks.min(self.screens.len() - 1);
            self.looks += 1;
            self.screens[at].clone()
        }
        fn shows(&mut self, _step: &str) -> bool {
            self.step_up
        }
        fn typing(&mut self, _first: bool) -> Option<Typing> {
            None
        }
        fn press(&mut self, key: &str) -> anyhow::Result<bool> {
            self.pressed.push(key.to_string());
            Ok(true)
        }
    }

    fn dialog(command: &str, options: &[&str]) -> OnScreen {
        OnScreen {
            request: Request::new(
                PromptKind::Permission,
                "cat",
                command,
                command,
                None,
                RequestSource::Screen,
            ),
            choices: Choices::default(),
            options: options.iter().map(|o| o.to_string()).collect(),
        }
    }

    fn plan(keys: &[&str], step: Option<&'static str>) -> Plan {
        Plan {
            request: dialog("$ cat a", &[]).request,
            keys: keys.iter().map(|k| k.to_string()).collect(),
            step,
        }
    }

    const OPTIONS: &[&str] = &["Allow once", "Allow always", "Reject"];

    #[test]
    fn every_key_goes_in_while_the_dialog_shown_stays_up() {
        let shown = dialog("$ cat a", OPTIONS);
        let mut pane = Scripted {
            screens: vec![Some(shown.clone())],
            ..Default::default()
        };
        let (typed, why) =
            press_keys("%1", &plan(&["Right", "Enter"], None), &shown, &mut pane).expect("typed");
        assert_eq!((typed, why), (vec!["Right".into(), "Enter".into()], None));
        assert_eq!(pane.looks, 2, "one look before each key");
    }

    #[test]
    fn a_screen_that_changes_between_keys_stops_the_answer() {
        let shown = dialog("$ cat a", OPTIONS);
        let other_request = dialog("$ rm -rf /", OPTIONS);
        let other_options = dialog("$ cat a", &["Allow once", "Reject"]);
        for now in [Some(other_request), Some(other_options), None] {
            let mut pane = Scripted {
                screens: vec![Some(shown.clone()), now],
                ..Default::default()
            };
            let (typed, why) =
                press_keys("%1", &plan(&["Right", "Enter"], None), &shown, &mut pane).unwrap();
            assert_eq!(typed, ["Right"]);
            assert_eq!(pane.pressed, ["Right"], "nothing more pressed");
            let why = why.expect("refused");
            assert_eq!(why.kind(), "dialog-changed");
            assert!(why.to_string().contains("before key 2"), "{why}");
        }
        // Changed before the first key: nothing typed at all.
        let mut pane = Scripted {
            screens: vec![Some(dialog("$ rm -rf /", OPTIONS))],
            ..Default::default()
        };
        let (typed, why) = press_keys("%1", &plan(&["1"], None), &shown, &mut pane).unwrap();
        assert!(typed.is_empty() && pane.pressed.is_empty());
        assert_eq!(
            why.unwrap().to_string(),
            "the dialog in %1 changed before key 1 of the answer (now: cat: $ rm -rf /); \
             nothing more typed, answer it there"
        );
    }

    #[test]
    fn the_last_key_through_the_dialog_s_own_step_waits_for_the_step() {
        let shown = dialog("$ cat a", OPTIONS);
        // The dialog is gone once its step is up: the step, not the dialog, is looked for.
        for (step_up, typed) in [(true, vec!["Escape", "Enter"]), (false, vec!["Escape"])] {
            let mut pane = Scripted {
                screens: vec![Some(shown.clone()), None],
                step_up,
                ..Default::default()
            };
            let plan = plan(&["Escape", "Enter"], Some("Reject permission"));
            let (got, why) = press_keys("%1", &plan, &shown, &mut pane).unwrap();
            assert_eq!(got, typed);
            assert_eq!(why.map(|w| w.kind()), (!step_up).then_some("unfinished"));
        }
    }
}
