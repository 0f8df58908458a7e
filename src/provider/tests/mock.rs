//! A tiny HTTP server on 127.0.0.1 that replays canned responses, one per
//! connection, and records what it was sent. It serves exactly as many
//! connections as it has responses and gives up waiting after a few
//! seconds, so a test never hangs on it.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::Value;

/// How long the server waits for the next connection before stopping.
const ACCEPT_LIMIT: Duration = Duration::from_secs(10);

/// One canned response.
#[derive(Debug, Clone)]
pub(super) enum Reply {
    /// A complete response; `Connection: close` is always added.
    Http {
        status: u16,
        headers: Vec<(String, String)>,
        body: String,
    },
    /// These bytes, then the connection is closed.
    Raw(String),
    /// Read the request, answer nothing for this long, then close.
    Stall(Duration),
}

impl Reply {
    pub(super) fn json(status: u16, body: &Value) -> Reply {
        Reply::Http {
            status,
            headers: Vec::new(),
            body: body.to_string(),
        }
    }

    pub(super) fn with_header(self, name: &str, value: &str) -> Reply {
        match self {
            Reply::Http {
                status,
                mut headers,
                body,
            } => {
                headers.push((name.to_string(), value.to_string()));
                Reply::Http {
                    status,
                    headers,
                    body,
                }
            }
            other => other,
        }
    }
}

/// One request as received.
#[derive(Debug, Clone)]
pub(super) struct Recorded {
    /// e.g. `POST /v1/chat/completions HTTP/1.1`
    pub(crate) request_line: String,
    /// Names lower-cased.
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: Value,
}

impl Recorded {
    pub(super) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

pub(super) struct MockServer {
    port: u16,
    handle: JoinHandle<Vec<Recorded>>,
}

impl MockServer {
    pub(super) fn start(replies: Vec<Reply>) -> MockServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        listener.set_nonblocking(true).unwrap();
        let handle = std::thread::spawn(move || serve(&listener, replies));
        MockServer { port, handle }
    }

    /// The base URL, as a provider file would give it (`.../v1`).
    pub(super) fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    /// The server root, for the anthropic provider (it adds `/v1/messages`).
    pub(super) fn root_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Waits for the server to stop; the requests it received.
    pub(super) fn finish(self) -> Vec<Recorded> {
        self.handle.join().unwrap()
    }
}

/// A URL where nothing listens.
pub(super) fn refused_url() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    format!("http://127.0.0.1:{port}/v1")
}

fn serve(listener: &TcpListener, replies: Vec<Reply>) -> Vec<Recorded> {
    let mut recorded = Vec::new();
    for reply in replies {
        let Some(stream) = accept(listener) else {
            break;
        };
        if let Some(request) = handle(stream, &reply) {
            recorded.push(request);
        }
    }
    recorded
}

fn accept(listener: &TcpListener) -> Option<TcpStream> {
    let deadline = Instant::now() + ACCEPT_LIMIT;
    while Instant::now() < deadline {
        match listener.accept() {
            Ok((stream, _)) => return Some(stream),
            Err(_) => std::thread::sleep(Duration::from_millis(5)),
        }
    }
    None
}

fn handle(stream: TcpStream, reply: &Reply) -> Option<Recorded> {
    stream.set_nonblocking(false).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    let mut reader = BufReader::new(stream.try_clone().ok()?);
    let mut request_line = String::new();
    reader.read_line(&mut request_line).ok()?;
    let mut headers = Vec::new();
    let mut length = 0usize;
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).ok()?;
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            let name = name.trim().to_ascii_lowercase();
            let value = value.trim().to_string();
            if name == "content-length" {
                length = value.parse().unwrap_or(0);
            }
            headers.push((name, value));
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    let recorded = Recorded {
        request_line: request_line.trim_end().to_string(),
        headers,
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
    };
    let mut stream = stream;
    match reply {
        Reply::Http {
            status,
            headers,
            body,
        } => {
            let mut head = format!(
                "HTTP/1.1 {status} Mock\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n",
                body.len()
            );
            for (name, value) in headers {
                head.push_str(&format!("{name}: {value}\r\n"));
            }
            head.push_str("\r\n");
            let _ = stream.write_all(head.as_bytes());
            let _ = stream.write_all(body.as_bytes());
        }
        Reply::Raw(bytes) => {
            let _ = stream.write_all(bytes.as_bytes());
        }
        Reply::Stall(time) => std::thread::sleep(*time),
    }
    let _ = stream.flush();
    let _ = stream.shutdown(std::net::Shutdown::Both);
    Some(recorded)
}
