//! The HTTP edge: `tiny_http` on 127.0.0.1 only, a few threads answering
//! requests through [`App::handle`], and the caller's thread following
//! the logs. Bytes in, bytes out: every decision is in `routes.rs`.

use std::io::Write as _;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::access::Access;
use super::error::ViewError;
use super::routes::{App, Incoming, Reply};
use super::token::Token;
use crate::log::now_ms;

/// Threads answering requests.
const WORKERS: usize = 4;
/// How often the logs are looked at, at least; a rebuild that takes
/// longer spaces the looks out (twice its time), so a huge log never
/// keeps the viewer busy.
const FOLLOW_EVERY: Duration = Duration::from_millis(250);
/// Bodies smaller than this go out uncompressed.
const GZIP_FROM: usize = 1024;

/// A viewer listening on 127.0.0.1, not serving yet.
pub(crate) struct Viewer {
    server: Arc<tiny_http::Server>,
    app: Arc<App>,
}

impl Viewer {
    /// Checks the data dirs, draws a token, binds 127.0.0.1:`port` (a free
    /// port for `None`) and reads the logs once.
    pub(crate) fn bind(data_dirs: &[PathBuf], port: Option<u16>) -> Result<Viewer, ViewError> {
        if let Some(missing) = data_dirs.iter().find(|d| !d.is_dir()) {
            return Err(ViewError::NotADataDir(missing.clone()));
        }
        let token = Token::generate().map_err(ViewError::Token)?;
        let wanted = port.unwrap_or(0);
        let server =
            tiny_http::Server::http(("127.0.0.1", wanted)).map_err(|e| ViewError::Bind {
                port: wanted,
                message: e.to_string(),
            })?;
        let bound = server
            .server_addr()
            .to_ip()
            .map_or(wanted, |addr| addr.port());
        let app = App::new(Access::new(bound, token), data_dirs);
        app.refresh(now_ms());
        Ok(Viewer {
            server: Arc::new(server),
            app: Arc::new(app),
        })
    }

    /// The URL to open, with the token.
    pub(crate) fn url(&self) -> String {
        self.app.access().url()
    }

    /// Answers requests until the process ends, following the logs on
    /// this thread.
    pub(crate) fn serve(self) -> ! {
        for _ in 0..WORKERS {
            let server = Arc::clone(&self.server);
            let app = Arc::clone(&self.app);
            std::thread::spawn(move || {
                while let Ok(request) = server.recv() {
                    answer(&app, request);
                }
            });
        }
        loop {
            let started = Instant::now();
            self.app.refresh(now_ms());
            std::thread::sleep(FOLLOW_EVERY.max(started.elapsed() * 2));
        }
    }
}

/// Answers one request; a client that went away is no one's problem.
fn answer(app: &App, request: tiny_http::Request) {
    let header = |name: &'static str| {
        let mut values = request
            .headers()
            .iter()
            .filter(|h| h.field.equiv(name))
            .map(|h| h.value.as_str());
        values.next().map(|first| (first, values.next().is_some()))
    };
    // Two Host headers are no host at all.
    let host = header("Host").and_then(|(h, twice)| (!twice).then_some(h));
    let cookies: Vec<&str> = request
        .headers()
        .iter()
        .filter(|h| h.field.equiv("Cookie"))
        .map(|h| h.value.as_str())
        .collect();
    let cookie = (!cookies.is_empty()).then(|| cookies.join("; "));
    let gzip = header("Accept-Encoding").is_some_and(|(v, _)| v.contains("gzip"));
    let method = request.method().as_str().to_string();
    let reply = app.handle(
        &Incoming {
            method: &method,
            url: request.url(),
            host,
            cookie: cookie.as_deref(),
        },
        now_ms(),
    );
    let _ = request.respond(response(reply, gzip));
}

fn response(reply: Reply, gzip: bool) -> tiny_http::Response<std::io::Cursor<Vec<u8>>> {
    let headers = reply.headers();
    let (body, compressed) = if gzip && reply.body.len() >= GZIP_FROM {
        match compress(&reply.body) {
            Some(body) => (body, true),
            None => (reply.body, false),
        }
    } else {
        (reply.body, false)
    };
    let mut response = tiny_http::Response::from_data(body).with_status_code(reply.status);
    let extra = compressed.then_some(("Content-Encoding", "gzip".to_string()));
    for (name, value) in headers.into_iter().chain(extra) {
        if let Ok(h) = tiny_http::Header::from_bytes(name.as_bytes(), value.as_bytes()) {
            response.add_header(h);
        }
    }
    response
}

fn compress(body: &[u8]) -> Option<Vec<u8>> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    encoder.write_all(body).ok()?;
    encoder.finish().ok()
}
