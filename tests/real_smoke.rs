//! The real-client harness itself: the pin list parses, the API stand-in serves and records a
//! request, and a missing client is installed on first use or fails the run naming what is
//! missing.

mod common;
mod real;

use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use real::http::{MockServer, Reply};

#[test]
fn pin_list_names_claude_and_codex() {
    let pins = real::pinned();
    assert!(pins.iter().any(|(a, _)| a == "claude"), "{pins:?}");
    assert!(pins.iter().any(|(a, _)| a == "codex"), "{pins:?}");
}

#[test]
fn stand_in_streams_and_records() {
    let api = MockServer::start(|req| {
        if req.path.starts_with("/json") {
            Reply::json(200, serde_json::json!({"ok": true}))
        } else {
            Reply::sse(vec![
                ("ping".into(), "{}".into()),
                (String::new(), "[DONE]".into()),
            ])
        }
    });
    let mut s = TcpStream::connect(("127.0.0.1", api.port())).unwrap();
    let body = r#"{"prompt":"hi"}"#;
    write!(
        s,
        "POST /stream HTTP/1.1\r\nHost: x\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    assert!(out.starts_with("HTTP/1.1 200"), "{out}");
    assert!(out.contains("event: ping\ndata: {}\n\n"), "{out}");
    assert!(out.ends_with("data: [DONE]\n\n"), "{out}");
    let reqs = api.requests();
    assert_eq!(reqs.len(), 1);
    assert_eq!(reqs[0].path, "/stream");
    assert_eq!(reqs[0].json().unwrap()["prompt"], "hi");
}

/// Every release of the pin list is installed (on first use, by the harness) and has its
/// program where [`real::Client::program`] looks.
#[test]
#[cfg_attr(skip_real, ignore = "AGENTPANE_SKIP_REAL: real clients not run")]
fn every_pinned_client_is_installed() {
    let pins = real::pinned();
    let agents: BTreeSet<&str> = pins.iter().map(|(a, _)| a.as_str()).collect();
    for agent in agents {
        let want: Vec<&str> = pins
            .iter()
            .filter(|(a, _)| a == agent)
            .map(|(_, v)| v.as_str())
            .collect();
        let clients = real::installed(agent);
        let got: Vec<&str> = clients.iter().map(|c| c.version.as_str()).collect();
        assert_eq!(got, want, "{agent}");
        for client in &clients {
            assert!(client.program().is_file(), "{}", client.label());
        }
    }
}

/// Runs [`every_pinned_client_is_installed`] in a child of this binary, whatever
/// `AGENTPANE_SKIP_REAL` built, with the clients cache `clients` and `PATH` `path`; whether
/// it passed, and what it printed.
fn install_probe(clients: &Path, path: &OsStr, pins: Option<&Path>) -> (bool, String) {
    let mut child = Command::new(std::env::current_exe().unwrap());
    child
        .args(["--exact", "every_pinned_client_is_installed"])
        .args(["--include-ignored", "--test-threads", "1", "--nocapture"])
        .env("AGENTPANE_CLIENTS", clients)
        .env("PATH", path)
        .env_remove("AGENTPANE_CLIENTS_FILE")
        .env_remove("CI");
    if let Some(pins) = pins {
        child.env("AGENTPANE_CLIENTS_FILE", pins);
    }
    let out = child.output().expect("run the install probe");
    let told = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), told)
}

#[test]
fn a_missing_client_without_npm_fails_naming_what_is_missing() {
    let tmp = tempfile::tempdir().unwrap();
    let empty_bin = tmp.path().join("bin");
    std::fs::create_dir_all(&empty_bin).unwrap();
    let (passed, told) = install_probe(&tmp.path().join("clients"), empty_bin.as_os_str(), None);
    assert!(!passed, "a missing client read as passed:\n{told}");
    for needed in [
        "claude 2.1.197",
        "not installed",
        "npm and node not on PATH",
        "AGENTPANE_SKIP_REAL=1",
    ] {
        assert!(told.contains(needed), "no {needed:?} in:\n{told}");
    }
}

#[test]
fn a_missing_client_is_installed_on_first_use_and_kept() {
    let tmp = tempfile::tempdir().unwrap();
    let bin = tmp.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let calls = tmp.path().join("npm-calls");
    // An npm that installs a package as the registry's would: its `bin` under the prefix, a
    // postinstall (copying the program into the package's `bin/`, as Kilo's does) and a
    // dependency's install script (building into its `build/`, as node-pty's does), which
    // `npm install --ignore-scripts` leaves out and `npm rebuild` runs: every package's, or
    // those of the packages it names.
    let npm = format!(
        "#!/bin/sh\necho \"$*\" >> '{calls}'\ncmd=$1\nshift\nnames=\n\
         while [ $# -gt 0 ]; do case $1 in --prefix) dir=$2; shift;; -*) ;; \
         *) names=\"$names $1\";; esac; shift; done\n\
         pkg=\"$dir/node_modules/@openai/codex\"\ndep=\"$dir/node_modules/native-dep\"\n\
         if [ \"$cmd\" = install ]; then\n\
         mkdir -p \"$dir/node_modules/.bin\" \"$pkg/bin\" \"$dep\"\n\
         printf '#!/bin/sh\\n' > \"$dir/node_modules/.bin/codex\"\n\
         chmod +x \"$dir/node_modules/.bin/codex\"\n\
         printf 'cp \"$1/.bin/codex\" \"$1/@openai/codex/bin/.codex\"\\n' > \"$pkg/postinstall\"\n\
         printf 'mkdir -p \"$1/native-dep/build\"; touch \"$1/native-dep/build/dep.node\"\\n' \
         > \"$dep/postinstall\"\n\
         else if [ -z \"$names\" ]; then names=$(cd \"$dir/node_modules\" && ls -d */ @*/*/); fi; \
         for n in $names; do s=\"$dir/node_modules/${{n%/}}/postinstall\"; \
         if [ -f \"$s\" ]; then sh \"$s\" \"$dir/node_modules\"; fi; done; fi\n",
        calls = calls.display()
    );
    for (name, body) in [("npm", npm.as_str()), ("node", "#!/bin/sh\n")] {
        let file = bin.join(name);
        std::fs::write(&file, body).unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let pins = tmp.path().join("clients.txt");
    std::fs::write(
        &pins,
        "codex 0.0.1 @openai/codex\ncodex 0.0.2 @openai/codex @openai/codex-linux-x64@0.0.9\n",
    )
    .unwrap();
    let mut path = vec![bin.clone()];
    path.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    let path = std::env::join_paths(path).unwrap();
    let cache = tmp.path().join("clients");

    let (passed, told) = install_probe(&cache, &path, Some(&pins));
    assert!(passed, "the first use did not install:\n{told}");
    let installs = || std::fs::read_to_string(&calls).unwrap_or_default();
    let first = installs();
    let lines: Vec<&str> = first.lines().collect();
    assert_eq!(lines.len(), 4, "{first}");
    for version in ["0.0.1", "0.0.2"] {
        assert!(
            first.contains(&format!("@openai/codex@{version}")),
            "{first}"
        );
        let dir = cache.join(format!("codex@{version}+scripts"));
        assert!(dir.join(".installed").is_file());
        assert!(
            dir.join("node_modules/@openai/codex/bin/.codex").is_file(),
            "the client's postinstall did not run for {version}:\n{first}"
        );
        assert!(
            dir.join("node_modules/native-dep/build/dep.node").is_file(),
            "the dependency's install script did not run for {version}:\n{first}"
        );
    }
    // Every package's scripts, offline.
    assert!(
        lines[3].starts_with("rebuild ") && lines[3].contains(" --offline"),
        "{first}"
    );
    let (passed, told) = install_probe(&cache, &path, Some(&pins));
    assert!(passed, "the second use failed:\n{told}");
    assert_eq!(installs(), first, "installed again");
}

/// The test files of the real-client binaries: each `tests/real_*.rs` that runs clients
/// (`mod real;`) but this one, and `tests/real_claude/`.
fn real_client_test_files() -> Vec<PathBuf> {
    let tests = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let mut files = Vec::new();
    for entry in std::fs::read_dir(&tests)
        .unwrap()
        .chain(std::fs::read_dir(tests.join("real_claude")).unwrap())
    {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let binary =
            name.starts_with("real_") && name != "real_smoke.rs" && text.contains("\nmod real;");
        if path.extension().is_some_and(|e| e == "rs")
            && (binary || path.parent().unwrap().ends_with("real_claude"))
        {
            files.push(path);
        }
    }
    files
}

/// `AGENTPANE_SKIP_REAL=1` leaves out every real-client test (cargo counts it as ignored):
/// each `#[test]` there is ignored under `cfg(skip_real)`, or always.
#[test]
fn every_real_client_test_is_left_out_by_the_opt_out() {
    let files = real_client_test_files();
    assert!(files.len() > 10, "{files:?}");
    let mut bare = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let lines: Vec<&str> = text.lines().map(str::trim).collect();
        for (i, line) in lines.iter().enumerate() {
            let next = lines.get(i + 1).copied().unwrap_or("");
            if *line == "#[test]"
                && !next.starts_with("#[ignore")
                && !next.starts_with("#[cfg_attr(skip_real, ignore")
            {
                bare.push(format!("{}:{}", file.display(), i + 1));
            }
        }
    }
    assert!(
        bare.is_empty(),
        "real-client tests AGENTPANE_SKIP_REAL does not leave out: {bare:#?}"
    );
}
