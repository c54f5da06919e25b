//! A stand-in for an agent's model API: a plain HTTP/1.1 server on 127.0.0.1 (std only) that
//! hands each request to a scripted handler and streams its reply, recording every request so
//! tests can check what the client sent (e.g. a routed prompt arriving byte-exact).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// One request as the client sent it.
#[derive(Debug, Clone)]
pub struct Request {
    pub method: String,
    /// Path with query, e.g. `/v1/messages?beta=true`.
    pub path: String,
    /// Header names lower-cased.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Request {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The body as JSON, when it is JSON.
    pub fn json(&self) -> Option<serde_json::Value> {
        serde_json::from_slice(&self.body).ok()
    }
}

/// A piece of a streamed reply: wait `delay`, then write `data`.
#[derive(Debug, Clone)]
pub struct Chunk {
    pub delay: Duration,
    pub data: String,
}

/// What the stand-in answers.
#[derive(Debug, Clone)]
pub enum Reply {
    /// A whole body with a status and content type.
    Body {
        status: u16,
        content_type: String,
        body: String,
        headers: Vec<(String, String)>,
    },
    /// `text/event-stream`, written chunk by chunk, then the connection closes; `headers`
    /// are sent with it.
    Stream {
        chunks: Vec<Chunk>,
        headers: Vec<(String, String)>,
    },
}

impl Reply {
    pub fn json(status: u16, body: serde_json::Value) -> Reply {
        Reply::Body {
            status,
            content_type: "application/json".into(),
            body: body.to_string(),
            headers: Vec::new(),
        }
    }

    /// Server-sent events `(event name or "", data)` sent at once.
    pub fn sse(events: Vec<(String, String)>) -> Reply {
        Reply::sse_paced(events, Duration::ZERO)
    }

    /// Server-sent events with `pace` before each one.
    pub fn sse_paced(events: Vec<(String, String)>, pace: Duration) -> Reply {
        let chunks = events
            .into_iter()
            .map(|(event, data)| Chunk {
                delay: pace,
                data: if event.is_empty() {
                    format!("data: {data}\n\n")
                } else {
                    format!("event: {event}\ndata: {data}\n\n")
                },
            })
            .collect();
        Reply::Stream {
            chunks,
            headers: Vec::new(),
        }
    }

    /// A 429 with `retry-after-ms: ms` added (other replies unchanged): a client that
    /// honours it retries after `ms` instead of its own growing back-off, so a scenario
    /// waits out its silent retries in seconds. It sets only the pause: the client still
    /// makes every retry and shows what it shows after them.
    pub fn retry_after_ms(self, ms: u64) -> Reply {
        match self {
            Reply::Body { status: 429, .. } => {
                self.with_headers(vec![("retry-after-ms".into(), ms.to_string())])
            }
            other => other,
        }
    }

    /// The same reply with `headers` added.
    pub fn with_headers(self, extra: Vec<(String, String)>) -> Reply {
        let add = |h: &mut Vec<(String, String)>| h.extend(extra);
        match self {
            Reply::Stream {
                chunks,
                mut headers,
            } => {
                add(&mut headers);
                Reply::Stream { chunks, headers }
            }
            Reply::Body {
                status,
                content_type,
                body,
                mut headers,
            } => {
                add(&mut headers);
                Reply::Body {
                    status,
                    content_type,
                    body,
                    headers,
                }
            }
        }
    }
}

type Handler = dyn Fn(&Request) -> Reply + Send + Sync;

/// The running stand-in; stops on drop.
pub struct MockServer {
    addr: SocketAddr,
    requests: Arc<Mutex<Vec<Request>>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl MockServer {
    /// Listens on an ephemeral port of 127.0.0.1 and serves each connection on its own thread.
    pub fn start(handler: impl Fn(&Request) -> Reply + Send + Sync + 'static) -> MockServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        let addr = listener.local_addr().expect("local addr");
        let requests = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let handler: Arc<Handler> = Arc::new(handler);
        let thread = {
            let (requests, stop) = (requests.clone(), stop.clone());
            std::thread::spawn(move || {
                for stream in listener.incoming() {
                    if stop.load(Ordering::SeqCst) {
                        break;
                    }
                    let Ok(stream) = stream else { continue };
                    let (requests, handler, stop) =
                        (requests.clone(), handler.clone(), stop.clone());
                    std::thread::spawn(move || serve(stream, &requests, &*handler, &stop));
                }
            })
        };
        MockServer {
            addr,
            requests,
            stop,
            thread: Some(thread),
        }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// Every request received so far, in arrival order.
    pub fn requests(&self) -> Vec<Request> {
        self.requests.lock().unwrap().clone()
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(self.addr);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Serves requests on one connection until the client closes it, a reply streams (streams
/// end the connection), or the server stops.
fn serve(stream: TcpStream, requests: &Mutex<Vec<Request>>, handler: &Handler, stop: &AtomicBool) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(120)));
    let mut writer = match stream.try_clone() {
        Ok(w) => w,
        Err(_) => return,
    };
    let mut reader = BufReader::new(stream);
    while !stop.load(Ordering::SeqCst) {
        let Some(request) = read_request(&mut reader) else {
            return;
        };
        requests.lock().unwrap().push(request.clone());
        match handler(&request) {
            Reply::Body {
                status,
                content_type,
                body,
                headers,
            } => {
                let mut head = format!(
                    "HTTP/1.1 {status} {}\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\n",
                    reason(status),
                    body.len()
                );
                for (k, v) in headers {
                    head.push_str(&format!("{k}: {v}\r\n"));
                }
                head.push_str("\r\n");
                if writer.write_all(head.as_bytes()).is_err()
                    || writer.write_all(body.as_bytes()).is_err()
                {
                    return;
                }
            }
            Reply::Stream { chunks, headers } => {
                let mut head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\
                                cache-control: no-cache\r\nconnection: close\r\n"
                    .to_string();
                for (k, v) in headers {
                    head.push_str(&format!("{k}: {v}\r\n"));
                }
                head.push_str("\r\n");
                if writer.write_all(head.as_bytes()).is_err() {
                    return;
                }
                for chunk in chunks {
                    if stop.load(Ordering::SeqCst) {
                        return;
                    }
                    std::thread::sleep(chunk.delay);
                    if writer.write_all(chunk.data.as_bytes()).is_err() || writer.flush().is_err() {
                        return;
                    }
                }
                return;
            }
        }
    }
}

fn read_request(reader: &mut BufReader<TcpStream>) -> Option<Request> {
    let mut line = String::new();
    if reader.read_line(&mut line).ok()? == 0 {
        return None;
    }
    let mut parts = line.split_whitespace();
    let method = parts.next()?.to_string();
    let path = parts.next()?.to_string();
    let mut headers = Vec::new();
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).ok()? == 0 {
            return None;
        }
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
        }
    }
    let get = |name: &str| {
        headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v): &(String, String)| v.clone())
    };
    let mut body = Vec::new();
    if get("transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked")) {
        loop {
            let mut size = String::new();
            reader.read_line(&mut size).ok()?;
            let n = usize::from_str_radix(size.trim().split(';').next()?, 16).ok()?;
            let mut chunk = vec![0; n + 2];
            reader.read_exact(&mut chunk).ok()?;
            if n == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..n]);
        }
    } else if let Some(n) = get("content-length").and_then(|v| v.parse::<usize>().ok()) {
        body = vec![0; n];
        reader.read_exact(&mut body).ok()?;
    }
    Some(Request {
        method,
        path,
        headers,
        body,
    })
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        404 => "Not Found",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        529 => "Overloaded",
        _ => "Status",
    }
}
