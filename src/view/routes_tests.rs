use super::*;
use crate::protocol::AttemptStartedRecord;
use crate::protocol::{Event, Record};
use crate::view::token::{Token, cookie_name};

const PORT: u16 = 4321;
const HOST: Option<&str> = Some("127.0.0.1:4321");

fn token() -> String {
    "5a".repeat(32)
}

/// An app over one data dir: a bare job with an open attempt, an
/// artifact holding markup, and a symlink from `runs/` to a file outside.
fn app() -> (tempfile::TempDir, App) {
    let tmp = tempfile::tempdir().unwrap();
    let records = [
        Record {
            seq: 1,
            ts_ms: 1,
            job: Some("a".into()),
            attempt: None,
            event: Event::bare_enqueued(2),
        },
        Record {
            seq: 2,
            ts_ms: 2,
            job: Some("a".into()),
            attempt: Some(1),
            event: Event::AttemptStarted(AttemptStartedRecord {
                pid: 9,
                agent: None,
            }),
        },
    ];
    let bytes: Vec<u8> = records.iter().flat_map(Record::encode).collect();
    std::fs::write(tmp.path().join("events.log"), bytes).unwrap();
    let attempt = tmp.path().join("runs/a/1");
    std::fs::create_dir_all(&attempt).unwrap();
    std::fs::write(attempt.join("verify-1.log"), "<script>alert(1)</script>\n").unwrap();
    std::fs::write(tmp.path().join("secret"), "not beneath runs/").unwrap();
    std::os::unix::fs::symlink(tmp.path().join("secret"), attempt.join("link")).unwrap();
    let access = Access::new(PORT, Token::from_bytes(&[0x5a; 32]));
    let app = App::new(access, &[tmp.path().to_path_buf()]);
    app.refresh(10);
    (tmp, app)
}

fn get<'a>(url: &'a str, host: Option<&'a str>, cookie: Option<&'a str>) -> Incoming<'a> {
    Incoming {
        method: "GET",
        url,
        host,
        cookie,
    }
}

fn header(reply: &Reply, name: &str) -> Option<String> {
    reply
        .headers()
        .into_iter()
        .find(|(n, _)| *n == name)
        .map(|(_, v)| v)
}

#[test]
fn a_foreign_host_is_refused_before_anything_else() {
    let (_tmp, app) = app();
    let url = format!("/?token={}", token());
    for host in [Some("evil.example"), Some("evil.example:4321"), None] {
        let reply = app.handle(&get(&url, host, None), 0);
        assert_eq!(reply.status, 403, "{host:?}");
        assert_eq!(reply.set_cookie, None);
    }
    let reply = app.handle(&get("not a path", Some("evil.example"), None), 0);
    assert_eq!(reply.status, 403);
}

#[test]
fn without_the_token_nothing_is_served() {
    let (_tmp, app) = app();
    for url in [
        "/",
        "/app.js",
        "/api/jobs",
        "/runs/0/a/1/verify-1.log",
        "/?token=5a5a",
    ] {
        let reply = app.handle(&get(url, HOST, None), 0);
        assert_eq!(reply.status, 401, "{url}");
        assert!(
            !String::from_utf8_lossy(&reply.body).contains("jobs"),
            "{url}"
        );
    }
    let wrong = format!("{}={}", cookie_name(PORT), "00".repeat(32));
    assert_eq!(
        app.handle(&get("/api/jobs", HOST, Some(&wrong)), 0).status,
        401
    );
}

#[test]
fn the_token_opens_the_page_sets_the_cookie_and_the_cookie_opens_the_rest() {
    let (_tmp, app) = app();
    let url = format!("/?token={}", token());
    let page = app.handle(&get(&url, HOST, None), 0);
    assert_eq!(page.status, 200);
    assert_eq!(page.content_type, "text/html; charset=utf-8");
    let cookie = page.set_cookie.clone().unwrap();
    assert!(
        cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"),
        "{cookie}"
    );
    assert_eq!(
        header(&page, "Content-Security-Policy").as_deref(),
        Some(PAGE_CSP)
    );
    assert_eq!(
        header(&page, "X-Content-Type-Options").as_deref(),
        Some("nosniff")
    );
    assert_eq!(
        header(&page, "Referrer-Policy").as_deref(),
        Some("no-referrer")
    );
    let sent = cookie.split(';').next().unwrap();
    let localhost = Some("localhost:4321");
    let js = app.handle(&get("/app.js", localhost, Some(sent)), 0);
    assert_eq!((js.status, js.set_cookie.as_deref()), (200, None));
    assert!(js.content_type.starts_with("text/javascript"));
    let jobs = app.handle(&get("/api/jobs", HOST, Some(sent)), 0);
    assert_eq!(jobs.status, 200);
    let doc: serde_json::Value = serde_json::from_slice(&jobs.body).unwrap();
    assert_eq!(doc["jobs"][0]["instance"], "a");
    assert_eq!(doc["jobs"][0]["state"], "running");
    assert_eq!(
        app.handle(&get("/nothing", HOST, Some(sent)), 0).status,
        404
    );
    let post = Incoming {
        method: "POST",
        ..get("/api/jobs", HOST, Some(sent))
    };
    assert_eq!(app.handle(&post, 0).status, 405);
}

#[test]
fn an_unchanged_version_is_said_in_one_line() {
    let (_tmp, app) = app();
    let url = format!("/api/jobs?token={}", token());
    let doc: serde_json::Value =
        serde_json::from_slice(&app.handle(&get(&url, HOST, None), 0).body).unwrap();
    let version = doc["version"].as_u64().unwrap();
    let again = format!("{url}&since={version}");
    let reply = app.handle(&get(&again, HOST, None), 0);
    assert_eq!(
        String::from_utf8(reply.body).unwrap(),
        format!("{{\"version\":{version},\"unchanged\":true}}")
    );
}

#[test]
fn artifacts_are_text_under_the_strict_policy_and_only_beneath_runs() {
    let (_tmp, app) = app();
    let t = token();
    let ok = app.handle(
        &get(&format!("/runs/0/a/1/verify-1.log?token={t}"), HOST, None),
        0,
    );
    assert_eq!(ok.status, 200);
    assert_eq!(ok.content_type, "text/plain; charset=utf-8");
    assert_eq!(
        header(&ok, "Content-Security-Policy").as_deref(),
        Some(ARTIFACT_CSP)
    );
    for url in [
        "/runs/0/a/1/link",
        "/runs/0/../secret",
        "/runs/0/%2e%2e/secret",
        "/runs/0/a%2F..%2F..%2Fsecret",
        "/runs/0/a/1",
    ] {
        let reply = app.handle(&get(&format!("{url}?token={t}"), HOST, None), 0);
        assert_eq!(reply.status, 403, "{url}");
        assert!(
            !String::from_utf8_lossy(&reply.body).contains("not beneath"),
            "{url}"
        );
    }
    for url in ["/runs/0/a/1/none", "/runs/7/a/1/verify-1.log", "/runs/x/a"] {
        let reply = app.handle(&get(&format!("{url}?token={t}"), HOST, None), 0);
        assert_eq!(reply.status, 404, "{url}");
    }
}

#[test]
fn a_job_page_lists_the_attempt_s_files_with_links() {
    let (_tmp, app) = app();
    let url = format!("/api/job?run=0&id=a&token={}", token());
    let reply = app.handle(&get(&url, HOST, None), 0);
    assert_eq!(
        reply.status,
        200,
        "{:?}",
        String::from_utf8_lossy(&reply.body)
    );
    let doc: serde_json::Value = serde_json::from_slice(&reply.body).unwrap();
    assert_eq!(doc["result"]["instance"], "a");
    let blocks = doc["detail"]["blocks"].as_array().unwrap();
    assert!(
        !blocks.iter().any(|b| b["pre"]["c"] == "prompt"),
        "a bare task has no prompt: {doc}"
    );
    let files = doc["attempts"][0]["files"].as_array().unwrap();
    let names: Vec<&str> = files.iter().map(|f| f["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["verify-1.log"], "the symlink is not listed");
    assert_eq!(files[0]["href"], "/runs/0/a/1/verify-1.log");
    let missing = format!("/api/job?run=0&id=zz&token={}", token());
    assert_eq!(app.handle(&get(&missing, HOST, None), 0).status, 404);
    let bad = format!("/api/job?token={}", token());
    assert_eq!(app.handle(&get(&bad, HOST, None), 0).status, 400);
}
