use std::path::PathBuf;

use chrono::{TimeZone, Utc};

use super::*;
use crate::agents::claude::settings::Installed;
use crate::doctor::verified::Verified;

const HOME: &str = "/home/u";
const STATE: &str = "/home/u/.local/state/agentpane";

fn healthy() -> Facts {
    let now = Utc.timestamp_opt(1_800_000_000, 0).unwrap();
    Facts {
        now,
        home: PathBuf::from(HOME),
        exe: Some(PathBuf::from("/home/u/.cargo/bin/agentpane")),
        server: Server::Inside,
        tmux: Ok(TmuxFacts {
            version: "3.3a".into(),
            socket_path: "/tmp/tmux-1000/default".into(),
            options: ServerOptions {
                status_left: "[#S]".into(),
                status_right: "#{@agentpane_status} %H:%M".into(),
                window_status_format:
                    "#I:#W#{?@agentpane_window_status, #{@agentpane_window_status},}".into(),
                window_status_current_format: "#I:#W".into(),
                plugin: "/home/u/.tmux/plugins/agentpane".into(),
                plugin_bin: "/home/u/.tmux/plugins/agentpane/target/release/agentpane".into(),
                build: String::new(),
                build_log: String::new(),
                watch: String::new(),
                status_left_length: 10,
                status_right_length: 60,
                status_left_width: 4,
                status_right_width: 8,
                segment_width: 2,
                plugin_bin_gone: false,
            },
        }),
        watcher: Some(WatcherFacts {
            lock: PathBuf::from(STATE).join("watch_tmp_tmux-1000_default.lock"),
            pid: Some(4242),
            since: Some(now - chrono::Duration::minutes(90)),
            last_change: Some(now - chrono::Duration::seconds(12)),
            last_log: None,
        }),
        panes: vec![claude_pane()],
        hooks: vec![HookFacts {
            settings: PathBuf::from("/home/u/.claude/settings.json"),
            default: true,
            found: Ok(Installed {
                events: EVENTS.to_vec(),
                command: Some("/home/u/.cargo/bin/agentpane hook".into()),
            }),
            command_exists: true,
            panes: vec!["%3".into()],
            elsewhere: Vec::new(),
        }],
        hook_files: Vec::new(),
        state_dir: StateDirFacts {
            path: PathBuf::from(STATE),
            exists: true,
            symlink: false,
            is_dir: true,
            mode: 0o700,
            ours: true,
            untrusted: Vec::new(),
        },
        hosts: Vec::new(),
        notify: Default::default(),
        verified: vec![Verified {
            agent: "claude".into(),
            version: "2.1.332".into(),
        }],
    }
}

fn claude_pane() -> PaneFacts {
    PaneFacts {
        pane_id: "%3".into(),
        target: "work:1.0".into(),
        kind: AgentKind::Claude,
        pid: 777,
        version: Some("2.1.332".into()),
        root: Some(PathBuf::from("/home/u/.claude")),
        root_from: RootFrom::AgentHome,
        root_exists: true,
        agent_home: Some(PathBuf::from(HOME)),
        agent_state_dir: Some(PathBuf::from(STATE)),
        session_id: Some("80339175-220f-4fac-81f8-1940f9ff75d7".into()),
        transcript: Some(PathBuf::from(
            "/home/u/.claude/projects/-home-u-src/80339175-220f-4fac-81f8-1940f9ff75d7.jsonl",
        )),
        via: Via::SessionRecord,
        last_step: "session record: /home/u/.claude/sessions/777.json → sessionId 8033…".into(),
    }
}

/// A chain that found the agent and nothing after it.
fn broken(mut p: PaneFacts) -> PaneFacts {
    p.session_id = None;
    p.transcript = None;
    p.via = Via::None;
    p.last_step = format!(
        "session record: none at {}/sessions/777.json",
        p.root.as_ref().unwrap().display()
    );
    p
}

/// The healthy setup whose one pane's chain found the agent and nothing after it, edited.
fn with_broken_pane(edit: impl FnOnce(&mut PaneFacts)) -> Facts {
    let mut f = healthy();
    let mut p = broken(claude_pane());
    edit(&mut p);
    f.panes = vec![p];
    f
}

/// The first finding about `topic`.
fn one(f: &Facts, topic: Topic) -> Finding {
    check(f)
        .into_iter()
        .find(|x| x.topic == topic)
        .expect("a finding about the topic")
}

fn fixes(f: &Facts) -> Vec<Finding> {
    check(f)
        .into_iter()
        .filter(|x| x.level == Level::Fix)
        .collect()
}

/// The one finding to fix, whose text and fix contain the given words.
fn only_fix(f: &Facts, topic: Topic, text: &[&str], remedy: &[&str]) -> Finding {
    let found = fixes(f);
    assert_eq!(found.len(), 1, "{found:#?}");
    let x = found.into_iter().next().unwrap();
    assert_eq!(x.topic, topic, "{x:#?}");
    for w in text {
        assert!(x.text.contains(w), "`{w}` not in the text: {x:#?}");
    }
    let remedy_text = x.fix.clone().unwrap_or_default();
    for w in remedy {
        assert!(remedy_text.contains(w), "`{w}` not in the fix: {x:#?}");
    }
    x
}

#[test]
fn a_healthy_setup_is_all_ticks() {
    let found = check(&healthy());
    assert!(found.iter().all(|x| x.level == Level::Ok), "{found:#?}");
    assert!(crate::doctor::all_good(&found));
    let pane = found.iter().find(|x| x.topic == Topic::Pane).unwrap();
    assert_eq!(
        pane.text,
        "%3 work:1.0 claude 2.1.332 pid 777: ~/.claude → session 80339175 → \
         ~/.claude/projects/-home-u-src/80339175-220f-4fac-81f8-1940f9ff75d7.jsonl (via session-record)"
    );
    let watcher = found.iter().find(|x| x.topic == Topic::Watcher).unwrap();
    assert!(
        watcher.text.contains("pid 4242") && watcher.text.contains("running for 1h"),
        "{watcher:#?}"
    );
}

#[test]
fn no_tmux_server_says_how_to_name_one() {
    let mut f = healthy();
    f.server = Server::Default;
    f.tmux = Err(TmuxProblem::NoServer(String::new()));
    f.watcher = None;
    f.panes.clear();
    f.hooks[0].panes.clear();
    only_fix(&f, Topic::Tmux, &["no tmux server"], &["-L NAME"]);
}

#[test]
fn old_tmux_cannot_open_popups() {
    let mut f = healthy();
    f.tmux.as_mut().unwrap().version = "3.1c".into();
    only_fix(&f, Topic::Tmux, &["3.1c", "popups"], &["3.2"]);
    f.tmux.as_mut().unwrap().version = "3.2a".into();
    assert!(fixes(&f).is_empty());
}

#[test]
fn a_plugin_that_never_ran_is_named() {
    let mut f = healthy();
    let o = &mut f.tmux.as_mut().unwrap().options;
    o.plugin.clear();
    o.plugin_bin.clear();
    o.status_right = "#{agentpane_status} %H:%M".into();
    o.window_status_format = "#I:#W#{agentpane_window_status}".into();
    f.watcher.as_mut().unwrap().pid = None;
    let found = fixes(&f);
    let topics: Vec<Topic> = found.iter().map(|x| x.topic).collect();
    assert_eq!(
        topics,
        [
            Topic::Plugin,
            Topic::StatusFormat,
            Topic::WindowFormat,
            Topic::Watcher
        ],
        "{found:#?}"
    );
    assert!(found[0]
        .fix
        .as_deref()
        .unwrap()
        .contains("@plugin 'agentpane/agentpane'"));
    assert!(found[1].text.contains("still holds #{agentpane_status}"));
    assert!(found[3].fix.as_deref().unwrap().contains("watch"));
}

#[test]
fn a_status_line_without_the_segment_says_what_to_add() {
    let mut f = healthy();
    f.tmux.as_mut().unwrap().options.status_right = "%H:%M".into();
    only_fix(
        &f,
        Topic::StatusFormat,
        &["neither status-right nor status-left"],
        &["set -g status-right '#{agentpane_status}"],
    );
}

#[test]
fn the_no_watcher_setup_with_status_commands_is_fine() {
    let mut f = healthy();
    let o = &mut f.tmux.as_mut().unwrap().options;
    o.watch = "off".into();
    o.status_right = "#('/x/agentpane' -S '/tmp/tmux-1000/default' status) %H:%M".into();
    o.window_status_format = "#I:#W #('/x/agentpane' pane-status --window #{window_id})".into();
    f.watcher.as_mut().unwrap().pid = None;
    assert!(fixes(&f).is_empty(), "{:#?}", fixes(&f));
}

#[test]
fn missing_window_glyphs_are_only_a_note() {
    let mut f = healthy();
    let o = &mut f.tmux.as_mut().unwrap().options;
    o.window_status_format = "#I:#W".into();
    let found = check(&f);
    let w = found
        .iter()
        .find(|x| x.topic == Topic::WindowFormat)
        .unwrap();
    assert_eq!(w.level, Level::Note);
    assert!(crate::doctor::all_good(&found));
}

#[test]
fn a_dead_watcher_shows_its_last_words_and_how_to_restart_it() {
    let mut f = healthy();
    let w = f.watcher.as_mut().unwrap();
    w.pid = None;
    w.last_log = Some("2026-01-01T00:00:00Z agentpane watch[9]: stopped: ServerGone".into());
    only_fix(
        &f,
        Topic::Watcher,
        &["no watcher runs", "stopped: ServerGone"],
        &["tmux run-shell ~/.tmux/plugins/agentpane/agentpane.tmux"],
    );
}

#[test]
fn the_plugin_without_a_binary_tells_each_way_out() {
    let mut f = healthy();
    f.tmux.as_mut().unwrap().options.plugin_bin.clear();
    f.watcher.as_mut().unwrap().pid = None;
    let found = fixes(&f);
    let plugin = found.iter().find(|x| x.topic == Topic::Plugin).unwrap();
    let remedy = plugin.fix.as_deref().unwrap();
    assert!(
        remedy.contains("@agentpane-bin /home/u/.cargo/bin/agentpane"),
        "{remedy}"
    );
    assert!(remedy.contains("rustup"), "{remedy}");

    let o = &mut f.tmux.as_mut().unwrap().options;
    o.build = "building".into();
    o.build_log = format!("{STATE}/build.log");
    let plugin = one(&f, Topic::Plugin);
    assert_eq!(plugin.level, Level::Note);

    f.tmux.as_mut().unwrap().options.build = "failed".into();
    let failed = fixes(&f);
    let plugin = failed.iter().find(|x| x.topic == Topic::Plugin).unwrap();
    assert!(plugin
        .fix
        .as_deref()
        .unwrap()
        .contains("~/.local/state/agentpane/build.log"));
}

#[test]
fn no_binary_is_one_finding_not_three() {
    // What the plugin leaves without a binary: the status placeholder rewritten to its hint,
    // the window placeholders untouched, no watcher.
    let mut f = healthy();
    let o = &mut f.tmux.as_mut().unwrap().options;
    o.plugin_bin.clear();
    o.window_status_format = "#I:#W#{agentpane_window_status}".into();
    o.window_status_current_format = "#I:#W#{agentpane_window_status}".into();
    f.watcher.as_mut().unwrap().pid = None;
    only_fix(
        &f,
        Topic::Plugin,
        &["found no agentpane binary"],
        &["@agentpane-bin"],
    );
    assert!(check(&f)
        .iter()
        .all(|x| !x.text.contains("load the plugin after")));
    // While it builds, nothing to fix at all.
    let o = &mut f.tmux.as_mut().unwrap().options;
    o.build = "building".into();
    assert!(fixes(&f).is_empty(), "{:#?}", fixes(&f));
    // A binary that is gone is the one cause too.
    let o = &mut f.tmux.as_mut().unwrap().options;
    o.build.clear();
    o.plugin_bin = "/home/u/src/agentpane/target/release/agentpane".into();
    o.plugin_bin_gone = true;
    only_fix(
        &f,
        Topic::Plugin,
        &["binary ~/src/agentpane/target/release/agentpane is gone"],
        &["tmux run-shell ~/.tmux/plugins/agentpane/agentpane.tmux"],
    );
    f.tmux.as_mut().unwrap().options.plugin_bin_gone = false;
    // With a binary, the same placeholders are the plugin loaded too early.
    f.tmux.as_mut().unwrap().options.plugin_bin = "/bin/agentpane".into();
    f.watcher.as_mut().unwrap().pid = Some(4242);
    only_fix(
        &f,
        Topic::WindowFormat,
        &["window-status-format still holds"],
        &["load the plugin after"],
    );
}

#[test]
fn a_status_right_too_short_for_the_segment_is_a_note() {
    // tmux's default status-right-length, 40: the clock and a 30-column title leave the
    // segment 5 columns.
    let mut f = healthy();
    let o = &mut f.tmux.as_mut().unwrap().options;
    o.status_right_length = 40;
    o.status_right_width = 37;
    o.segment_width = 2;
    let found = check(&f);
    let short = found
        .iter()
        .find(|x| x.text.contains("status-right-length is 40"))
        .expect("a note on status-right-length");
    assert_eq!(short.level, Level::Note);
    assert!(short.text.contains("takes 35 columns"), "{short:#?}");
    assert!(
        short
            .fix
            .as_deref()
            .unwrap()
            .contains("set -g status-right-length 60"),
        "{short:#?}"
    );
    assert!(crate::doctor::all_good(&found));
    // The segment on the left side is measured against status-left-length.
    let o = &mut f.tmux.as_mut().unwrap().options;
    o.status_right = "%H:%M".into();
    o.status_left = "#{@agentpane_status} ".into();
    let found = check(&f);
    assert!(
        found
            .iter()
            .any(|x| x.text.starts_with("status-left-length is 10")),
        "{found:#?}"
    );
    // Enough room: no word.
    let o = &mut f.tmux.as_mut().unwrap().options;
    o.status_left_length = 60;
    assert!(check(&f).iter().all(|x| !x.text.contains("-length is")));
}

#[test]
fn a_session_without_a_conversation_is_not_broken() {
    let mut f = healthy();
    f.panes[0].transcript = None;
    let pane = one(&f, Topic::Pane);
    assert_eq!(pane.level, Level::Ok);
    assert!(pane.text.ends_with("no conversation yet"), "{pane:#?}");
}

#[test]
fn a_broken_chain_under_another_users_agent_blames_the_unreadable_environment() {
    let f = with_broken_pane(|p| {
        p.root_from = RootFrom::Unreadable;
        p.agent_home = None;
    });
    only_fix(
        &f,
        Topic::Pane,
        &["broke at: session record: none", "another user"],
        &["run the agent as yourself"],
    );
}

#[test]
fn a_config_override_naming_a_missing_folder_is_the_cause() {
    let f = with_broken_pane(|p| {
        p.root = Some(PathBuf::from("/srv/claude-conf"));
        p.root_from = RootFrom::Override("CLAUDE_CONFIG_DIR".into());
        p.root_exists = false;
    });
    only_fix(
        &f,
        Topic::Pane,
        &[
            "$CLAUDE_CONFIG_DIR",
            "config folder override",
            "/srv/claude-conf",
        ],
        &["check $CLAUDE_CONFIG_DIR"],
    );
}

#[test]
fn another_home_without_the_agents_folder_is_the_cause() {
    let f = with_broken_pane(|p| {
        p.root = Some(PathBuf::from("/other/.claude"));
        p.agent_home = Some(PathBuf::from("/other"));
        p.root_exists = false;
    });
    only_fix(
        &f,
        Topic::Pane,
        &[
            "another HOME (/other; yours is /home/u)",
            "its HOME /other, not yours",
        ],
        &["HOME"],
    );
}

#[test]
fn an_unverified_version_is_the_likely_cause_of_a_chain_that_found_nothing() {
    let f = with_broken_pane(|p| {
        p.version = Some("2.9.0".into());
    });
    only_fix(
        &f,
        Topic::Pane,
        &["claude 2.9.0 was never verified (verified: 2.1.332)"],
        &["agentpane resolve %3"],
    );
    let v = one(&f, Topic::Versions);
    assert_eq!(v.level, Level::Note);
    assert!(v.text.contains("2.9.0: not verified"), "{v:#?}");
}

#[test]
fn an_ambiguous_chain_says_why_no_transcript_is_shown() {
    let mut f = with_broken_pane(|p| {
        p.kind = AgentKind::Codex;
        p.via = Via::Ambiguous;
        p.version = None;
    });
    f.hooks[0].panes.clear();
    only_fix(
        &f,
        Topic::Pane,
        &["several codex sessions"],
        &["own folder"],
    );
}

#[test]
fn screen_only_agents_are_listed_without_a_chain() {
    let mut f = healthy();
    let mut p = claude_pane();
    p.kind = AgentKind::Aider;
    p.root = None;
    p.root_from = RootFrom::NotRead;
    p.version = None;
    f.panes = vec![p];
    let found = check(&f);
    assert!(found.iter().all(|x| x.level == Level::Ok), "{found:#?}");
    assert!(found.iter().all(|x| x.topic != Topic::Versions));
}

#[test]
fn absent_hooks_for_a_claude_pane_name_the_install_command() {
    let mut f = healthy();
    f.hooks[0].found = Ok(Installed::default());
    // Hooks are optional: a note, with the command, and nothing to fix.
    let hooks = one(&f, Topic::Hooks);
    assert_eq!(hooks.level, Level::Note, "{hooks:#?}");
    assert!(
        hooks
            .text
            .contains("no agentpane hooks in ~/.claude/settings.json, which Claude Code in %3"),
        "{hooks:#?}"
    );
    assert!(hooks
        .fix
        .as_deref()
        .unwrap()
        .contains("`agentpane hooks install`"));
    assert!(fixes(&f).is_empty(), "{:#?}", fixes(&f));
    f.hooks[0].panes.clear();
    f.panes.clear();
    assert!(fixes(&f).is_empty());
}

#[test]
fn hooks_of_another_config_root_name_its_settings_file() {
    let mut f = healthy();
    f.hooks[0].default = false;
    f.hooks[0].settings = PathBuf::from("/other/.claude/settings.json");
    f.hooks[0].found = Ok(Installed::default());
    let hooks = one(&f, Topic::Hooks);
    assert!(
        hooks.text.contains("/other/.claude/settings.json"),
        "{hooks:#?}"
    );
    assert!(hooks
        .fix
        .as_deref()
        .unwrap()
        .contains("agentpane hooks install --settings /other/.claude/settings.json"));
}

#[test]
fn partial_or_dangling_hooks_are_reinstalled() {
    let mut f = healthy();
    f.hooks[0]
        .found
        .as_mut()
        .unwrap()
        .events
        .retain(|e| *e != "Stop");
    only_fix(
        &f,
        Topic::Hooks,
        &["lacks agentpane's Stop hooks"],
        &["hooks install"],
    );
    let mut f = healthy();
    f.hooks[0].command_exists = false;
    only_fix(&f, Topic::Hooks, &["does not exist"], &["hooks install"]);
}

#[test]
fn hook_events_written_to_another_state_folder_are_lost() {
    let mut f = healthy();
    f.hooks[0].elsewhere = vec![("%3".into(), PathBuf::from("/other/.local/state/agentpane"))];
    only_fix(
        &f,
        Topic::Hooks,
        &["%3 go to /other/.local/state/agentpane"],
        &[&format!("AGENTPANE_STATE_DIR={STATE}")],
    );
}

#[test]
fn a_state_folder_open_to_others_is_closed() {
    let mut f = healthy();
    f.state_dir.mode = 0o755;
    only_fix(
        &f,
        Topic::StateDir,
        &["mode 0755"],
        &["chmod 700 ~/.local/state/agentpane"],
    );
    let mut f = healthy();
    f.state_dir.symlink = true;
    only_fix(&f, Topic::StateDir, &["symlink"], &["mkdir -m 700"]);
    let mut f = healthy();
    f.state_dir.ours = false;
    only_fix(&f, Topic::StateDir, &["another user"], &["chown"]);
}

#[test]
fn a_state_folder_others_can_write_is_reported_as_refused() {
    let mut f = healthy();
    f.state_dir.mode = 0o777;
    only_fix(
        &f,
        Topic::StateDir,
        &["writable by others (mode 0777): agentpane refuses it"],
        &["chmod 700 ~/.local/state/agentpane"],
    );
    let mut f = healthy();
    f.state_dir.untrusted = vec![
        (
            PathBuf::from(format!("{STATE}/queue")),
            crate::paths::Distrust::Writable(0o777),
        ),
        (
            PathBuf::from(format!("{STATE}/queue/x.json")),
            crate::paths::Distrust::Owner(65534),
        ),
    ];
    only_fix(
        &f,
        Topic::StateDir,
        &["~/.local/state/agentpane/queue is writable by others (mode 0777): agentpane refuses it (and 1 more)"],
        &["chmod go-w ~/.local/state/agentpane/queue"],
    );
}

#[test]
fn a_pi_pane_without_agentpane_s_extension_says_how_to_add_it() {
    let mut f = healthy();
    let mut facts = crate::doctor::HookFileFacts {
        agent: AgentKind::Pi,
        path: PathBuf::from("/home/u/.pi/agent/extensions/agentpane.ts"),
        installed: false,
        panes: vec!["%5".into(), "%6".into()],
        unlinked: vec!["%5".into(), "%6".into()],
    };
    f.hook_files = vec![facts.clone()];
    let found = only_fix(
        &f,
        Topic::Hooks,
        &["pi in %5, %6", "~/.pi/agent/extensions/agentpane.ts"],
        &["agentpane hooks install --agent pi", "restart pi"],
    );
    assert_eq!(found.level, Level::Fix);
    // Installed, one pane started before it: a note, nothing to fix.
    facts.installed = true;
    facts.unlinked = vec!["%6".into()];
    f.hook_files = vec![facts.clone()];
    assert!(fixes(&f).is_empty());
    let note = check(&f)
        .into_iter()
        .find(|x| x.text.contains("started before agentpane's pi extension"))
        .expect("a note");
    assert_eq!(note.level, Level::Note);
    assert!(
        note.text.contains("%6") && !note.text.contains("%5"),
        "{note:?}"
    );
    // Every pane tied to its session: a tick.
    facts.unlinked.clear();
    f.hook_files = vec![facts];
    let tick = check(&f)
        .into_iter()
        .find(|x| x.text.starts_with("agentpane's pi extension"))
        .expect("a tick");
    assert_eq!(tick.level, Level::Ok);
}

#[test]
fn a_remote_host_reads_up_with_its_agents_or_down_with_the_command_to_try() {
    use crate::remote::doc::Document;
    use crate::remote::link::{HostView, Link};
    let mut f = healthy();
    f.hosts = vec![
        HostView {
            host: "devbox".into(),
            link: Link::Up {
                doc: Document::new(Vec::new(), None),
            },
            since: f.now,
        },
        HostView {
            host: "gpu1".into(),
            link: Link::Down {
                reason: "ssh: connect to host gpu1 port 22: Connection refused".into(),
            },
            since: f.now,
        },
    ];
    let found: Vec<Finding> = check(&f)
        .into_iter()
        .filter(|x| x.topic == Topic::Host)
        .collect();
    assert_eq!(found.len(), 2);
    assert_eq!(found[0].level, Level::Ok);
    assert!(
        found[0].text.starts_with("host devbox: agentpane "),
        "{found:?}"
    );
    assert_eq!(found[1].level, Level::Fix);
    assert!(found[1].text.contains("Connection refused"), "{found:?}");
    assert!(
        found[1]
            .fix
            .as_deref()
            .unwrap()
            .contains("ssh -o BatchMode=yes gpu1 agentpane serve --once"),
        "{found:?}"
    );
}
