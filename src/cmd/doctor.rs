//! `doctor [--json]`: gathers the facts, checks them (`crate::doctor`), prints one line per
//! finding — or one JSON object — and exits 0 when nothing needs a fix, 1 otherwise.

use anyhow::Result;
use chrono::Utc;

use super::Context;
use crate::cli::DoctorArgs;
use crate::doctor::{self, Finding, Report};
use crate::exit;

pub fn run(args: DoctorArgs, ctx: &Context) -> Result<i32> {
    let mut facts = doctor::gather(&ctx.socket, Utc::now());
    facts.hosts = super::remote::views(&ctx.tmux(), &ctx.remote_hosts()?);
    let mut findings = doctor::check(&facts);
    findings.extend(web_finding(&ctx.tmux()));
    let good = doctor::all_good(&findings);
    if args.json {
        let report = Report {
            ok: good,
            socket_path: facts.tmux.as_ref().ok().map(|t| t.socket_path.as_str()),
            findings: &findings,
        };
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", text(&findings));
    }
    Ok(if good { exit::OK } else { exit::NOTHING })
}

/// Whether the page `@agentpane-web` asks the watcher to serve answers; nothing when the
/// option is unset.
fn web_finding(tmux: &crate::tmux::Tmux) -> Option<Finding> {
    let value = tmux
        .cmd(&["show-option", "-gqv", crate::web::OPTION])
        .ok()?;
    let socket = tmux.socket_path().ok()?;
    let running = crate::web::running_addr(&crate::paths::state_dir(), &socket);
    web_check(&value, running)
}

/// The finding for `@agentpane-web` set to `value`, with the page found at `running`.
fn web_check(value: &str, running: Option<std::net::SocketAddr>) -> Option<Finding> {
    let opt = crate::web::OPTION;
    let finding = |level, text: String, fix: Option<String>| Finding {
        topic: doctor::Topic::Web,
        level,
        text,
        fix,
    };
    match (crate::web::parse_option(value), running) {
        (Ok(None), _) => None,
        (Err(why), _) => Some(finding(
            doctor::Level::Fix,
            why,
            Some(format!("set -g {opt} on (or an ADDR:PORT)")),
        )),
        (Ok(Some(_)), Some(addr)) => Some(finding(
            doctor::Level::Ok,
            format!("the page for your phone is served at {addr} (`agentpane web --url` prints its URL)"),
            None,
        )),
        (Ok(Some(want)), None) => Some(finding(
            doctor::Level::Fix,
            format!("{opt} asks for the page at {want}, but none answers (the port in use? the watcher not restarted?)"),
            Some("see watch.log, then `agentpane watch --replace`".into()),
        )),
    }
}

/// One line per finding, its fix indented below it, and a last line counting the fixes;
/// terminal-safe (a finding quotes paths, pane commands, a remote's error).
fn text(findings: &[Finding]) -> String {
    let mut out = String::new();
    for f in findings {
        out.push_str(&format!("{} {}\n", f.level.mark(), f.text));
        if let Some(fix) = &f.fix {
            out.push_str(&format!("    fix: {fix}\n"));
        }
    }
    let to_fix = findings
        .iter()
        .filter(|f| f.level == doctor::Level::Fix)
        .count();
    match to_fix {
        0 => out.push_str("all good\n"),
        1 => out.push_str("1 thing to fix\n"),
        n => out.push_str(&format!("{n} things to fix\n")),
    }
    crate::text::terminal_safe(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::{assert_terminal_safe, HOSTILE};

    #[test]
    fn the_web_option_is_checked_only_when_set() {
        assert_eq!(web_check("", None), None);
        assert_eq!(web_check("off", None), None);
        let up = web_check("on", Some("127.0.0.1:7878".parse().unwrap())).unwrap();
        assert_eq!(up.level, doctor::Level::Ok);
        let down = web_check("127.0.0.1:7878", None).unwrap();
        assert_eq!(down.level, doctor::Level::Fix);
        assert!(down.text.contains("none answers"), "{}", down.text);
        assert_eq!(
            web_check("nonsense", None).unwrap().level,
            doctor::Level::Fix
        );
    }

    #[test]
    fn doctor_prints_findings_terminal_safe() {
        let finding = Finding {
            topic: doctor::Topic::Host,
            level: doctor::Level::Fix,
            text: format!("host devbox is unreachable: {HOSTILE}"),
            fix: Some(format!("run {HOSTILE}")),
        };
        let out = text(&[finding]);
        assert_terminal_safe(&out);
        assert!(
            out.contains("unreachable: abcdef\n    fix: run abcdef\n"),
            "{out}"
        );
    }
}
