//! A private desktop for the desktop-notification tests: Xvfb on a free display, a D-Bus
//! session bus of its own (no service activation, so nothing else ever starts on it) and
//! Debian's dunst as the notification daemon, with a configuration that records every
//! notification it shows and answers its context menu (the `dmenu` it runs) with the entry the
//! test names. Every process is ended by its PID on drop. Only the children a test starts get
//! `DISPLAY` and `DBUS_SESSION_BUS_ADDRESS` ([`Desktop::env`]); nothing touches the user's own
//! display or bus.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use super::{wait_until, DEADLINE};

/// One notification dunst showed.
#[derive(Debug, Clone)]
pub struct Shown {
    pub id: u32,
    pub app: String,
    pub summary: String,
    /// As sent: the markup the daemon was given.
    pub body: String,
}

pub struct Desktop {
    dir: tempfile::TempDir,
    display: String,
    bus: String,
    xvfb: Child,
    bus_pid: u32,
    dunst: Child,
}

impl Desktop {
    /// Starts the display, the bus and dunst; returns once dunst answers on the bus.
    pub fn start() -> Desktop {
        let dir = tempfile::tempdir().expect("temp dir");
        let (xvfb, display) = start_xvfb();
        let (bus_pid, bus) = start_bus(dir.path());
        let shown = dir.path().join("shown");
        std::fs::create_dir_all(&shown).unwrap();
        let record = script(
            dir.path(),
            "record.sh",
            &format!(
                "cd '{}' || exit 1\n\
                 printf '%s' \"$DUNST_APP_NAME\" > \"$DUNST_ID.app\"\n\
                 printf '%s' \"$DUNST_SUMMARY\" > \"$DUNST_ID.summary\"\n\
                 printf '%s' \"$DUNST_BODY\" > \"$DUNST_ID.body\"\n\
                 echo \"$DUNST_ID\" >> ids\n",
                shown.display()
            ),
        );
        // dunst pipes its context menu (`#Label (summary) [ID,action]` a line) to `dmenu`
        // and invokes the line it prints: the one the test asked for in `choice`. The menu is
        // moved into place whole, so the test never reads half of it.
        let pick = script(
            dir.path(),
            "pick.sh",
            &format!(
                "cd '{}' || exit 1\ncat > menu.part\nmv menu.part menu.txt\n\
                 grep -m1 -F -- \"$(cat choice)\" menu.txt\n",
                dir.path().display()
            ),
        );
        let config = dir.path().join("dunstrc");
        std::fs::write(
            &config,
            format!(
                "[global]\ndmenu = {}\n\n[record]\nappname = *\nscript = {}\n",
                pick.display(),
                record.display()
            ),
        )
        .unwrap();
        let dunst = Command::new("dunst")
            .args(["-config", config.to_str().unwrap()])
            .env("DISPLAY", &display)
            .env("DBUS_SESSION_BUS_ADDRESS", &bus)
            .env("HOME", dir.path())
            .env("XDG_CONFIG_HOME", dir.path())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start dunst (apt-get install dunst)");
        let desktop = Desktop {
            dir,
            display,
            bus,
            xvfb,
            bus_pid,
            dunst,
        };
        wait_until(DEADLINE, "dunst on the private bus", || {
            desktop.dunstctl(&["is-paused"]).is_some()
        });
        desktop
    }

    /// The environment a child needs to reach this desktop.
    pub fn env(&self) -> [(&'static str, String); 2] {
        [
            ("DISPLAY", self.display.clone()),
            ("DBUS_SESSION_BUS_ADDRESS", self.bus.clone()),
        ]
    }

    /// `dunstctl ARGS` on this desktop's bus: its output when it succeeded.
    pub fn dunstctl(&self, args: &[&str]) -> Option<String> {
        let out = Command::new("dunstctl")
            .args(args)
            .env("DBUS_SESSION_BUS_ADDRESS", &self.bus)
            .env("DISPLAY", &self.display)
            .output()
            .ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// Every notification shown so far, oldest first.
    pub fn shown(&self) -> Vec<Shown> {
        let dir = self.dir.path().join("shown");
        let read = |id: &str, ext: &str| {
            std::fs::read_to_string(dir.join(format!("{id}.{ext}"))).unwrap_or_default()
        };
        std::fs::read_to_string(dir.join("ids"))
            .unwrap_or_default()
            .lines()
            .filter_map(|id| {
                Some(Shown {
                    id: id.parse().ok()?,
                    app: read(id, "app"),
                    summary: read(id, "summary"),
                    body: read(id, "body"),
                })
            })
            .collect()
    }

    /// Waits for a notification that passes `want`.
    pub fn wait_shown(&self, what: &str, want: impl Fn(&Shown) -> bool) -> Shown {
        self.wait_shown_else(what, want, String::new)
    }

    /// [`wait_shown`](Self::wait_shown), a failure also telling what `tell` says.
    pub fn wait_shown_else(
        &self,
        what: &str,
        want: impl Fn(&Shown) -> bool,
        tell: impl FnOnce() -> String,
    ) -> Shown {
        let mut found = None;
        super::wait_until_else(
            DEADLINE,
            what,
            || {
                found = self.shown().into_iter().find(|s| want(s));
                found.is_some()
            },
            || format!("shown: {:#?}\n{}", self.shown(), tell()),
        );
        found.unwrap()
    }

    /// Picks `action` (`jump`, `allow`, `deny`) of notification `id` from dunst's context
    /// menu, as a person does; panics when the menu does not offer it.
    pub fn pick(&self, id: u32, action: &str) {
        let entry = format!("[{id},{action}]");
        std::fs::write(self.dir.path().join("choice"), &entry).unwrap();
        let menu = self.dir.path().join("menu.txt");
        let _ = std::fs::remove_file(&menu);
        assert!(self.dunstctl(&["context"]).is_some(), "dunstctl context");
        wait_until(DEADLINE, "dunst's context menu", || menu.exists());
        let offered = std::fs::read_to_string(&menu).unwrap_or_default();
        assert!(offered.contains(&entry), "{entry} not offered:\n{offered}");
    }

    /// The actions the context menu offers now for notification `id`.
    pub fn offered(&self, id: u32) -> Vec<String> {
        std::fs::write(self.dir.path().join("choice"), "no such entry").unwrap();
        let menu = self.dir.path().join("menu.txt");
        let _ = std::fs::remove_file(&menu);
        assert!(self.dunstctl(&["context"]).is_some(), "dunstctl context");
        wait_until(DEADLINE, "dunst's context menu", || menu.exists());
        let tail = format!("[{id},");
        std::fs::read_to_string(&menu)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| Some(l.split(&tail).nth(1)?.trim_end_matches(']').to_string()))
            .collect()
    }
}

impl Drop for Desktop {
    fn drop(&mut self) {
        let _ = self.dunst.kill();
        let _ = self.dunst.wait();
        let _ = Command::new("kill")
            .args(["-TERM", &self.bus_pid.to_string()])
            .status();
        let _ = self.xvfb.kill();
        let _ = self.xvfb.wait();
    }
}

/// An executable shell script `name` in `dir`.
fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// Xvfb on a display no other server has: Xvfb itself finds a free one and says which
/// (`-displayfd`), so tests starting at once never share one.
fn start_xvfb() -> (Child, String) {
    use std::io::BufRead;
    use std::os::fd::{FromRawFd, OwnedFd};
    let mut fds = [0; 2];
    // SAFETY: pipe(2) fills both descriptors, owned below.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0, "pipe");
    let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    let xvfb = Command::new("Xvfb")
        .args(["-displayfd", &fds[1].to_string(), "-nolisten", "tcp"])
        .args(["-screen", "0", "800x600x24"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start Xvfb (apt-get install xvfb)");
    drop(write);
    let mut line = String::new();
    std::io::BufReader::new(std::fs::File::from(read))
        .read_line(&mut line)
        .expect("Xvfb's display number");
    let n: u32 = line.trim().parse().expect("Xvfb's display number");
    (xvfb, format!(":{n}"))
}

/// A session bus of its own, listening in `dir`, that activates no service: its pid and
/// address.
fn start_bus(dir: &Path) -> (u32, String) {
    let config = dir.join("bus.conf");
    std::fs::write(
        &config,
        format!(
            "<!DOCTYPE busconfig PUBLIC \"-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN\"\n \
             \"http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd\">\n\
             <busconfig><type>session</type><listen>unix:dir={}</listen>\
             <policy context=\"default\"><allow send_destination=\"*\" eavesdrop=\"true\"/>\
             <allow eavesdrop=\"true\"/><allow own=\"*\"/></policy></busconfig>\n",
            dir.display()
        ),
    )
    .unwrap();
    let out = Command::new("dbus-daemon")
        .arg(format!("--config-file={}", config.display()))
        .args(["--fork", "--print-address=1", "--print-pid=1"])
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .expect("start dbus-daemon");
    let text = String::from_utf8_lossy(&out.stdout);
    let mut lines = text.lines();
    let address = lines.next().unwrap_or_default().to_string();
    let pid = lines.next().and_then(|p| p.trim().parse().ok());
    match pid {
        Some(pid) if out.status.success() && !address.is_empty() => (pid, address),
        _ => panic!("dbus-daemon: {text}"),
    }
}
