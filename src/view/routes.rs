//! What the viewer answers, as plain values: a request's method, target,
//! `Host` and `Cookie` in, a [`Reply`] out (status, type, body, headers).
//! Access is decided first, for every path (the page, its script, the JSON,
//! the artifacts); then the path picks the view. The server only moves
//! bytes.

use std::path::PathBuf;
use std::sync::{Mutex, RwLock};

use super::access::{Access, Admit};
use super::assets;
use super::compare::{Kind, compare_view};
use super::json::page_json;
use super::model::Model;
use super::page::job_page;
use super::query::Target;
use super::rows::list_view;
use super::token::set_cookie;
use crate::beneath;

/// The policy of every page, script and JSON document: nothing but the
/// viewer's own script, style and JSON; no inline script, no plugins, no
/// frames, no forms.
pub(super) const PAGE_CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
     connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; \
     frame-ancestors 'none'";
/// The policy of an artifact: shown as text, in a sandbox that runs nothing.
pub(super) const ARTIFACT_CSP: &str = "default-src 'none'; sandbox; frame-ancestors 'none'";

/// One request, as far as the routes care.
#[derive(Debug, Clone, Copy)]
pub(super) struct Incoming<'a> {
    pub method: &'a str,
    pub url: &'a str,
    /// The `Host` header (`None` when missing or given twice).
    pub host: Option<&'a str>,
    /// The `Cookie` header(s), joined.
    pub cookie: Option<&'a str>,
}

/// One answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Reply {
    pub status: u16,
    pub content_type: &'static str,
    pub body: Vec<u8>,
    pub set_cookie: Option<String>,
    /// An artifact: the stricter policy.
    pub artifact: bool,
}

impl Reply {
    fn new(status: u16, content_type: &'static str, body: impl Into<Vec<u8>>) -> Reply {
        Reply {
            status,
            content_type,
            body: body.into(),
            set_cookie: None,
            artifact: false,
        }
    }

    fn text(status: u16, body: &str) -> Reply {
        Reply::new(status, "text/plain; charset=utf-8", format!("{body}\n"))
    }

    fn json(body: String) -> Reply {
        Reply::new(200, "application/json", body)
    }

    /// Every header of the reply but its length.
    pub(super) fn headers(&self) -> Vec<(&'static str, String)> {
        let csp = if self.artifact {
            ARTIFACT_CSP
        } else {
            PAGE_CSP
        };
        let mut headers = vec![
            ("Content-Type", self.content_type.to_string()),
            ("Content-Security-Policy", csp.to_string()),
            ("X-Content-Type-Options", "nosniff".to_string()),
            ("Referrer-Policy", "no-referrer".to_string()),
            ("Cache-Control", "no-store".to_string()),
            ("X-Frame-Options", "DENY".to_string()),
            ("Cross-Origin-Opener-Policy", "same-origin".to_string()),
            ("Cross-Origin-Resource-Policy", "same-origin".to_string()),
        ];
        if let Some(cookie) = &self.set_cookie {
            headers.push(("Set-Cookie", cookie.clone()));
        }
        headers
    }
}

/// The viewer's state: who may ask, and the data dirs followed.
#[derive(Debug)]
pub(super) struct App {
    access: Access,
    model: RwLock<Model>,
    list: Mutex<Option<(u64, String)>>,
}

impl App {
    pub(super) fn new(access: Access, data_dirs: &[PathBuf]) -> App {
        App {
            access,
            model: RwLock::new(Model::new(data_dirs)),
            list: Mutex::new(None),
        }
    }

    pub(super) fn access(&self) -> &Access {
        &self.access
    }

    /// Reads what the logs gained; whether anything changed.
    pub(super) fn refresh(&self, now_ms: u64) -> bool {
        let mut model = self.model.write().unwrap_or_else(|p| p.into_inner());
        model.refresh(now_ms)
    }

    /// The answer to `request`.
    pub(super) fn handle(&self, request: &Incoming<'_>, now_ms: u64) -> Reply {
        let target = Target::parse(request.url);
        let query_token = target.as_ref().and_then(|t| t.get("token"));
        let set_cookie_now = match self.access.admit(request.host, query_token, request.cookie) {
            Admit::WrongHost => return forbidden_host(),
            Admit::NoToken => {
                return Reply::text(
                    401,
                    "the viewer needs its token: open the URL `agent-runtime view` printed",
                );
            }
            Admit::Yes { set_cookie } => set_cookie,
        };
        let Some(target) = target else {
            return Reply::text(400, "bad request target");
        };
        let mut reply = if request.method == "GET" {
            self.route(&target, now_ms)
        } else {
            Reply::text(405, "the viewer only reads: GET")
        };
        if set_cookie_now {
            reply.set_cookie = Some(set_cookie(self.access.port(), self.access.token()));
        }
        reply
    }

    fn route(&self, target: &Target, now_ms: u64) -> Reply {
        let model = self.model.read().unwrap_or_else(|p| p.into_inner());
        let since = target.get("since").and_then(|s| s.parse::<u64>().ok());
        if since == Some(model.version) && target.segments.first().is_some_and(|s| s == "api") {
            return Reply::json(format!(
                "{{\"version\":{},\"unchanged\":true}}",
                model.version
            ));
        }
        match target.path().as_slice() {
            [] | ["index.html"] => Reply::new(200, "text/html; charset=utf-8", assets::INDEX_HTML),
            ["app.js"] => Reply::new(200, "text/javascript; charset=utf-8", assets::APP_JS),
            ["app.css"] => Reply::new(200, "text/css; charset=utf-8", assets::APP_CSS),
            ["detail.js"] => Reply::new(200, "text/javascript; charset=utf-8", assets::DETAIL_JS),
            ["detail.css"] => Reply::new(200, "text/css; charset=utf-8", assets::DETAIL_CSS),
            ["api", "jobs"] => Reply::json(self.list_json(&model, now_ms)),
            ["api", "job"] => self.job_json(&model, target, now_ms),
            ["api", "compare"] => {
                let kind = match target.get("kind") {
                    Some("run") => Kind::Run,
                    _ => Kind::Provider,
                };
                let view = compare_view(&model, kind, target.get("a"), target.get("b"));
                Reply::json(page_json(&view))
            }
            // A data dir's file as a job's details link it, beneath runs/.
            ["runs", run, rest @ ..] | ["data", run, "runs", rest @ ..] => {
                artifact(&model, run, rest)
            }
            _ => Reply::text(404, "no such page"),
        }
    }

    fn list_json(&self, model: &Model, now_ms: u64) -> String {
        let mut cache = self.list.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((version, json)) = cache.as_ref()
            && *version == model.version
        {
            return json.clone();
        }
        let json = page_json(&list_view(model, now_ms));
        *cache = Some((model.version, json.clone()));
        json
    }

    fn job_json(&self, model: &Model, target: &Target, now_ms: u64) -> Reply {
        let run = target.get("run").and_then(|r| r.parse::<usize>().ok());
        let (Some(index), Some(id)) = (run, target.get("id")) else {
            return Reply::text(400, "a job page needs run=N and id=INSTANCE");
        };
        let Some(run) = model.runs.get(index) else {
            return Reply::text(404, "no such data dir");
        };
        let Some(result) = run.job_with_artifacts(id, now_ms) else {
            return Reply::text(404, "no such job in this data dir");
        };
        // Built afresh: the files of an attempt (per-test output) may
        // appear without an event.
        Reply::json(page_json(&job_page(
            model.version,
            index,
            run,
            &result,
            now_ms,
        )))
    }
}

fn forbidden_host() -> Reply {
    Reply::text(
        403,
        "the viewer answers only requests for 127.0.0.1:PORT or localhost:PORT",
    )
}

/// An artifact of data dir `run`, beneath its `runs/`, as text.
fn artifact(model: &Model, run: &str, rest: &[&str]) -> Reply {
    let Some(run) = run.parse::<usize>().ok().and_then(|i| model.runs.get(i)) else {
        return Reply::text(404, "no such data dir");
    };
    if rest.is_empty()
        || rest
            .iter()
            .any(|s| matches!(*s, "." | "..") || s.contains(['/', '\0']))
    {
        return Reply::text(
            403,
            "refused: an artifact path is plain names beneath runs/",
        );
    }
    let rel: PathBuf = rest.iter().collect();
    match run.artifacts.read(&rel) {
        Ok(bytes) => Reply {
            artifact: true,
            ..Reply::new(200, "text/plain; charset=utf-8", bytes)
        },
        Err(beneath::Error::NotFound) => Reply::text(404, "no such artifact"),
        Err(beneath::Error::TooLarge { size, cap }) => Reply::text(
            413,
            &format!("the artifact is {size} bytes, over the viewer's cap of {cap}"),
        ),
        Err(e @ beneath::Error::Io(_)) => Reply::text(500, &format!("failed to read it: {e}")),
        Err(e) => Reply::text(403, &format!("refused: it {e}")),
    }
}

#[cfg(test)]
#[path = "routes_tests.rs"]
mod tests;
