//! Dispatch: the watcher's alerts become notifications on a router thread, then go to one
//! worker per channel, each behind a small queue that drops its oldest entry when full. The
//! watcher only ever pushes to a queue, so a hanging endpoint, a slow notifier or a stalled
//! terminal never delays a scan. Every failure and every drop is logged.

use std::collections::HashMap;
use std::sync::Arc;
use std::thread::JoinHandle;

use anyhow::{anyhow, Result};

use super::config::Config;
use super::queue::Queue;
use super::terminal::{self, Client};
use super::{desktop, http, Channel, Notification};
use crate::alert::Alert;
use crate::tmux::{Socket, Tmux};

/// Alerts waiting for the router, and notifications waiting for one channel.
const ROUTER_QUEUE: usize = 32;
const CHANNEL_QUEUE: usize = 16;

/// Where log lines go.
pub type Log = fn(&str);

/// One notification for one channel, with what it needs.
#[derive(Debug, Clone)]
pub struct Job {
    pub note: Notification,
    pub config: Arc<Config>,
    pub clients: Arc<Vec<Client>>,
    /// `agentpane notify test`: every attached client, one HTTP attempt.
    pub test: bool,
}

/// Sends `job` on `channel` now; what was done, or why it failed.
pub fn deliver(channel: Channel, job: &Job, socket: &Socket, log: Log) -> Result<String> {
    let attempts = if job.test { 1 } else { http::ATTEMPTS };
    let n = &job.note;
    let c = &job.config;
    let say = |e: &str| log(&format!("notify {}: {e}", channel.name()));
    match channel {
        Channel::Terminal => {
            let to = if job.test {
                job.clients.iter().collect()
            } else {
                terminal::recipients(&job.clients, n)
            };
            let reached = terminal::send(&to, &c.osc, n)?;
            Ok(format!("written to {reached} client terminal(s)"))
        }
        Channel::Desktop => {
            let program =
                desktop::notifier().ok_or_else(|| anyhow!("no notification service answers"))?;
            let alert = n.alert.clone().ok_or_else(|| anyhow!("no alert to show"))?;
            let mut d = desktop::Desktop::for_alert(&alert, program, socket.clone(), log);
            d.summary.clone_from(&n.title);
            d.body.clone_from(&n.body);
            desktop::send(d)?;
            Ok("shown".into())
        }
        Channel::Ntfy => {
            let url = c
                .ntfy_url
                .as_deref()
                .ok_or_else(|| anyhow!("@agentpane-ntfy-url is not set"))?;
            http::post(&http::ntfy(url, c.click.as_deref(), n), attempts, &say)?;
            Ok(format!("posted to {url}"))
        }
        Channel::Webhook => {
            let url = c
                .webhook_url
                .as_deref()
                .ok_or_else(|| anyhow!("@agentpane-webhook-url is not set"))?;
            http::post(&http::webhook(url, c.webhook_format, n), attempts, &say)?;
            Ok(format!("posted to {url}"))
        }
    }
}

/// An alert and the folder of its pane, as the watcher hands it over.
#[derive(Debug)]
struct Draft {
    alert: Alert,
    folder: String,
}

/// The router thread and its queue; drop or [`Dispatcher::finish`] to stop it.
pub struct Dispatcher {
    queue: Arc<Queue<Draft>>,
    router: Option<JoinHandle<()>>,
    log: Log,
}

impl Dispatcher {
    /// Starts the router for the tmux server at `socket`.
    pub fn start(socket: Socket, log: Log) -> Dispatcher {
        let queue = Queue::new(ROUTER_QUEUE);
        let router = {
            let queue = queue.clone();
            std::thread::spawn(move || Router::new(socket, log).run(&queue))
        };
        Dispatcher {
            queue,
            router: Some(router),
            log,
        }
    }

    /// Queues `alert` of a pane working in `folder`; never waits.
    pub fn send(&self, alert: &Alert, folder: &str) {
        let draft = Draft {
            alert: alert.clone(),
            folder: folder.to_string(),
        };
        if let Some(old) = self.queue.push(draft) {
            (self.log)(&format!("notify: queue full, dropped {}", old.alert.key));
        }
    }

    /// Stops the router once the queued alerts are routed. The channel workers are left to
    /// finish on their own (one may be waiting on a dead endpoint).
    pub fn finish(mut self) {
        self.queue.close();
        if let Some(r) = self.router.take() {
            let _ = r.join();
        }
    }
}

struct Worker {
    queue: Arc<Queue<Job>>,
}

struct Router {
    tmux: Tmux,
    socket: Socket,
    host: String,
    log: Log,
    workers: HashMap<Channel, Worker>,
}

impl Router {
    fn new(socket: Socket, log: Log) -> Router {
        Router {
            tmux: Tmux::new(socket.clone()),
            socket,
            host: super::hostname(),
            log,
            workers: HashMap::new(),
        }
    }

    fn run(mut self, queue: &Queue<Draft>) {
        while let Some(draft) = queue.pop() {
            self.route(draft);
        }
        for w in self.workers.values() {
            w.queue.close();
        }
    }

    fn route(&mut self, draft: Draft) {
        let log = self.log;
        let key = &draft.alert.key;
        // An account's alert (a plan window) has no pane: the global options are its.
        let pane = Some(draft.alert.pane.as_str()).filter(|p| !p.is_empty());
        let config = match Config::read(&self.tmux, pane) {
            Ok(c) => c,
            Err(e) => return log(&format!("notify: cannot read the options: {e}")),
        };
        for p in &config.problems {
            log(&format!("notify: {p}"));
        }
        if config.channels.is_empty() {
            return;
        }
        let now = chrono::Local::now().time();
        if config.quiet.is_some_and(|q| q.covers(now)) {
            return log(&format!("notify: quiet hours, {key} not sent"));
        }
        let clients = terminal::clients(&self.tmux).unwrap_or_else(|e| {
            log(&format!("notify: cannot list the clients: {e}"));
            Vec::new()
        });
        // The engine alerts no pane a person looks at; they may have gone there since.
        if pane.is_some() && clients.iter().any(|c| c.pane == draft.alert.pane) {
            return log(&format!(
                "notify: {} is in view, {key} not sent",
                draft.alert.pane
            ));
        }
        let job = Job {
            note: Notification::new(&draft.alert, &self.host, &draft.folder),
            config: Arc::new(config),
            clients: Arc::new(clients),
            test: false,
        };
        for &channel in &job.config.channels {
            if !job.config.wants(channel, job.note.state) {
                continue;
            }
            let worker = self
                .workers
                .entry(channel)
                .or_insert_with(|| start_worker(channel, self.socket.clone(), log));
            if let Some(old) = worker.queue.push(job.clone()) {
                log(&format!(
                    "notify {}: queue full, dropped {}",
                    channel.name(),
                    old.note.alert.map(|a| a.key).unwrap_or_default()
                ));
            }
        }
    }
}

fn start_worker(channel: Channel, socket: Socket, log: Log) -> Worker {
    let queue = Queue::<Job>::new(CHANNEL_QUEUE);
    let q = queue.clone();
    std::thread::spawn(move || {
        while let Some(job) = q.pop() {
            let key = job
                .note
                .alert
                .as_ref()
                .map(|a| a.key.as_str())
                .unwrap_or("");
            match deliver(channel, &job, &socket, log) {
                Ok(done) => log(&format!("notify {}: {key} {done}", channel.name())),
                Err(e) => log(&format!("notify {}: {key} failed: {e:#}", channel.name())),
            }
        }
    });
    Worker { queue }
}
