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
    let findings = doctor::check(&facts);
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
