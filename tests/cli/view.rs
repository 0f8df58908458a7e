//! `view` through the real binary: it binds 127.0.0.1, prints a URL with
//! its token, refuses a foreign `Host` and a request without the token,
//! serves the page under a strict Content-Security-Policy, serves
//! artifacts only beneath `runs/` (no `..`, no symlink), keeps a hostile
//! file name as data, and follows a log that grows after it started.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use crate::harness::Sandbox;

/// A running `view`, killed when dropped.
pub struct Viewer {
    child: Child,
    pub url: String,
    pub port: u16,
    pub token: String,
    agent: ureq::Agent,
}

impl Drop for Viewer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One answer: status, headers (names lower case), body.
pub struct Got {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Got {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {}", self.body))
    }
}

impl Viewer {
    /// Starts `agent-runtime view ARGS...` and reads the URL it prints.
    pub fn start(sb: &Sandbox, args: &[&str]) -> Viewer {
        let mut child = sb
            .command(&[&["view"], args].concat())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let url = line
            .trim()
            .strip_prefix("view: ")
            .unwrap_or_else(|| panic!("no URL printed: {line:?}"))
            .to_string();
        let rest = url.strip_prefix("http://127.0.0.1:").unwrap();
        let (port, query) = rest.split_once('/').unwrap();
        let token = query.strip_prefix("?token=").unwrap().to_string();
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .proxy(None)
            .max_redirects(0)
            .timeout_global(Some(Duration::from_secs(30)))
            .build()
            .new_agent();
        Viewer {
            child,
            port: port.parse().unwrap(),
            url,
            token,
            agent,
        }
    }

    /// `GET path` (with `?token=` added when `with_token`), `Host` as given
    /// (`None`: what ureq sends, `127.0.0.1:PORT`).
    pub fn get(&self, path: &str, with_token: bool, host: Option<&str>) -> Got {
        let mut url = format!("http://127.0.0.1:{}{path}", self.port);
        if with_token {
            url.push(if path.contains('?') { '&' } else { '?' });
            url.push_str(&format!("token={}", self.token));
        }
        let mut request = self.agent.get(&url);
        if let Some(host) = host {
            request = request.header("Host", host);
        }
        let mut response = request.call().unwrap();
        let headers = response
            .headers()
            .iter()
            .map(|(n, v)| {
                (
                    n.as_str().to_lowercase(),
                    v.to_str().unwrap_or("").to_string(),
                )
            })
            .collect();
        Got {
            status: response.status().as_u16(),
            headers,
            body: response.body_mut().read_to_string().unwrap_or_default(),
        }
    }

    /// Polls the jobs JSON until `cond` holds or `limit` passes.
    pub fn wait_for(&self, limit: Duration, what: &str, cond: impl Fn(&serde_json::Value) -> bool) {
        let deadline = Instant::now() + limit;
        loop {
            let doc = self.get("/api/jobs", true, None).json();
            if cond(&doc) {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "timed out waiting for {what}: {doc}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// The hostile name the model writes.
const HOSTILE: &str = "<script>alert(1)<script>.txt";

/// A scripted job: it writes `out.txt` (`done` to pass, anything else to
/// fail its one hidden test), maybe another file, maybe sleeps in a tool
/// command first, verifies and finishes. Acceptance is a JUnit run whose
/// one test, `acceptance::out_is_done`, fails with an assertion message
/// unless `out.txt` says `done` (so the baseline fails as required).
pub struct ScriptedJob<'a> {
    pub id: &'a str,
    pub family: &'a str,
    pub out: &'a str,
    pub sleep_s: u32,
    pub extra_file: Option<&'a str>,
    pub prompt: &'a str,
}

const CHECK_SH: &str = "if grep -qx done out.txt 2>/dev/null; then f=''; else \
f='<failure message=\"assertion failed: left == right (left: 1, right: 5)\">out.txt is wrong</failure>'; fi
printf '<?xml version=\"1.0\"?>\n<testsuite name=\"acceptance\" tests=\"1\"><testcase classname=\"acceptance\" name=\"out_is_done\">%s</testcase></testsuite>\n' \"$f\" > report.xml
[ -z \"$f\" ]
";

/// Writes `job`'s manifest, script, source and acceptance files under
/// `dir/<id>/` and returns the manifest's path.
pub fn write_job(dir: &Path, job: &ScriptedJob<'_>) -> PathBuf {
    let root = dir.join(job.id);
    std::fs::create_dir_all(root.join("source")).unwrap();
    std::fs::create_dir_all(root.join("acceptance")).unwrap();
    std::fs::write(root.join("source/README.txt"), "write out.txt\n").unwrap();
    std::fs::write(root.join("acceptance/check.sh"), CHECK_SH).unwrap();
    let mut replies = Vec::new();
    if let Some(path) = job.extra_file {
        replies.push(serde_json::json!({"kind": "write_file", "path": path, "content": "x\n"}));
    }
    replies.push(serde_json::json!({"kind": "write_file", "path": "out.txt", "content": format!("{}\n", job.out)}));
    if job.sleep_s > 0 {
        replies.push(serde_json::json!({"kind": "run_tool", "program": "sleep", "args": [job.sleep_s.to_string()]}));
    }
    replies.push(serde_json::json!({"kind": "verify"}));
    replies.push(serde_json::json!({"kind": "finish", "summary": "wrote out.txt"}));
    let text: String = replies.iter().map(|r| format!("{r}\n")).collect();
    std::fs::write(root.join("replies.jsonl"), text).unwrap();
    let manifest = root.join(format!("{}.toml", job.id));
    std::fs::write(
        &manifest,
        format!(
            "id = {id:?}\nfamily = {family:?}\nprompt = {prompt:?}\nsource = \"source\"\neditable = [\"**\"]\n\
             allow = [\"true\", \"sleep **\"]\nverify = [\"true\"]\n\n[limits]\nattempts = 1\nmax_steps = 6\n\n\
             [acceptance]\ndir = \"acceptance\"\ncommand = [\"sh\", \"check.sh\"]\nresults = \"junit:report.xml\"\n\n\
             [provider]\nkind = \"script\"\nscript = \"replies.jsonl\"\n",
            id = job.id,
            family = job.family,
            prompt = job.prompt,
        ),
    )
    .unwrap();
    manifest
}

/// A finished batch of one job whose model wrote [`HOSTILE`] and a wrong
/// `out.txt`: `tests_failed`, with a patch naming the file.
fn hostile_batch(sb: &Sandbox) -> PathBuf {
    let manifest = write_job(
        sb.path(),
        &ScriptedJob {
            id: "hostile",
            family: "view",
            out: "nearly",
            sleep_s: 0,
            extra_file: Some(HOSTILE),
            prompt: "Fix <b>it</b> & more.",
        },
    );
    let batch = sb.run(&["batch", "DATA", manifest.to_str().unwrap()]);
    assert_eq!(batch.code, 1, "{batch:#?}");
    sb.data()
}

/// Sends `request` as it is and returns the status line.
fn raw(port: u16, request: &str) -> String {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    answer.lines().next().unwrap_or_default().to_string()
}

#[test]
fn view_refuses_foreign_hosts_and_tokenless_requests_and_serves_a_strict_page() {
    let sb = Sandbox::new();
    let data = hostile_batch(&sb);
    let viewer = Viewer::start(&sb, &["DATA"]);
    assert_eq!(viewer.token.len(), 64, "{}", viewer.url);

    // DNS rebinding: the right token, the wrong host.
    for host in ["evil.example", &format!("evil.example:{}", viewer.port)] {
        let got = viewer.get("/", true, Some(host));
        assert_eq!(got.status, 403, "{host}");
        assert!(got.header("set-cookie").is_none());
        assert!(!got.body.contains("hostile"));
    }
    // No Host header at all (HTTP/1.0).
    let line = raw(
        viewer.port,
        &format!("GET /?token={} HTTP/1.0\r\n\r\n", viewer.token),
    );
    assert!(line.contains(" 403 "), "{line}");

    for path in ["/", "/app.js", "/api/jobs", "/api/job?run=0&id=hostile"] {
        let got = viewer.get(path, false, None);
        assert_eq!(got.status, 401, "{path}");
        assert!(!got.body.contains("hostile"), "{path}: {}", got.body);
    }

    let page = viewer.get("/", true, None);
    assert_eq!(page.status, 200);
    let csp = page.header("content-security-policy").unwrap();
    for directive in [
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "connect-src 'self'",
    ] {
        assert!(csp.contains(directive), "{csp}");
    }
    assert!(
        !csp.contains("unsafe-inline") && !csp.contains("unsafe-eval"),
        "{csp}"
    );
    assert_eq!(page.header("x-content-type-options"), Some("nosniff"));
    let cookie = page.header("set-cookie").unwrap();
    assert!(
        cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"),
        "{cookie}"
    );
    assert!(!page.body.contains("<script>\n"), "no inline script");
    assert!(page.body.contains("<script src=\"/app.js\""));
    let localhost = viewer.get("/", true, Some(&format!("localhost:{}", viewer.port)));
    assert_eq!(localhost.status, 200);

    // The cookie alone opens the rest.
    let pair = cookie.split(';').next().unwrap();
    let agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .proxy(None)
        .build()
        .new_agent();
    let js = agent
        .get(&format!("http://127.0.0.1:{}/app.js", viewer.port))
        .header("Cookie", pair)
        .call()
        .unwrap();
    assert_eq!(js.status().as_u16(), 200);

    // The hostile name and output come back as data, never as markup.
    let jobs = viewer.get("/api/jobs", true, None);
    assert!(!jobs.body.contains('<'), "{}", jobs.body);
    let job = viewer.get("/api/job?run=0&id=hostile", true, None);
    assert_eq!(job.status, 200);
    assert!(
        !job.body.contains('<') && !job.body.contains('>'),
        "{}",
        job.body
    );
    assert!(
        job.body.contains("\\u003cscript\\u003ealert(1)"),
        "{}",
        job.body
    );
    let doc = job.json();
    assert_eq!(doc["row"]["state"], "failed");
    assert_eq!(doc["result"]["failure_kind"], "tests_failed");
    let blocks = doc["detail"]["blocks"].as_array().unwrap();
    let prompt = blocks.iter().find(|b| b["pre"]["c"] == "prompt").unwrap();
    assert_eq!(prompt["pre"]["text"], "Fix <b>it</b> & more.");
    let timeline = doc["result"]["timeline"].to_string();
    assert!(
        timeline.contains(&format!("edited {HOSTILE}")),
        "{timeline}"
    );
    assert!(
        doc["result"]["patch"]
            .as_str()
            .unwrap_or_default()
            .contains(HOSTILE),
        "{doc}"
    );
    // The failing test with what its own run said, from the excerpts the
    // attempt kept (`tests/excerpts.json`), which the details link and
    // the page serves from where it lies.
    let failing = blocks
        .iter()
        .filter(|b| b["ul"]["c"] == "excerpts")
        .flat_map(|b| b["ul"]["items"].as_array().unwrap())
        .find(|item| item["line"][0][0] == "failing")
        .unwrap_or_else(|| panic!("no failing test in {doc}"));
    assert!(
        failing["line"][1][0]
            .as_str()
            .unwrap()
            .contains("out_is_done"),
        "{failing}"
    );
    assert_eq!(
        failing["pre"], "assertion failed: left == right (left: 1, right: 5)\nout.txt is wrong",
        "{failing}"
    );
    let links = blocks.iter().find_map(|b| b.get("links")).unwrap();
    let link = |name: &str| {
        let path = links["paths"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|p| p.as_str())
            .find(|p| p.ends_with(name))
            .unwrap_or_else(|| panic!("no {name} in {links}"));
        format!("/{}{path}", links["base"].as_str().unwrap())
    };
    let kept = link("tests/excerpts.json");
    assert!(kept.ends_with("/hostile/1/tests/excerpts.json"), "{kept}");
    let served = viewer.get(&kept, true, None);
    assert_eq!(served.status, 200);
    assert!(served.body.contains("out_is_done"), "{}", served.body);
    let patch = link("patch.diff");
    let served = viewer.get(&patch, true, None);
    assert_eq!(served.status, 200);
    assert_eq!(
        served.header("content-type"),
        Some("text/plain; charset=utf-8")
    );
    assert!(
        served
            .header("content-security-policy")
            .unwrap()
            .contains("sandbox")
    );
    assert!(served.body.contains(HOSTILE));

    // Artifacts only beneath runs/: no `..`, no symlink, no workspace.
    std::os::unix::fs::symlink(data.join("events.log"), data.join("runs/hostile/1/link")).unwrap();
    std::os::unix::fs::symlink(data.join("work"), data.join("runs/hostile/work")).unwrap();
    for path in [
        "/runs/0/hostile/1/link",
        "/runs/0/../events.log",
        "/runs/0/%2e%2e/events.log",
        "/runs/0/hostile/%2e%2e/%2e%2e/events.log",
        "/runs/0/hostile%2f..%2f..%2fevents.log",
        "/runs/0/hostile/work",
    ] {
        let got = viewer.get(path, true, None);
        assert!(
            matches!(got.status, 403 | 404),
            "{path}: {} {}",
            got.status,
            got.body
        );
        assert!(!got.body.contains("\"crc\""), "{path} served the log");
    }
    let raw_dots = raw(
        viewer.port,
        &format!(
            "GET /runs/0/../events.log?token={} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nConnection: close\r\n\r\n",
            viewer.token, viewer.port
        ),
    );
    assert!(raw_dots.contains(" 403 "), "{raw_dots}");
}

/// A bare job enqueued into `data`, by the binary.
fn enqueue(sb: &Sandbox, id: &str) {
    sb.run(&["enqueue", "DATA", id]).ok();
}

#[test]
fn view_follows_a_log_that_grows_and_one_that_appears_later() {
    let sb = Sandbox::new();
    std::fs::create_dir_all(sb.data()).unwrap();
    let viewer = Viewer::start(&sb, &["DATA"]);
    let first = viewer.get("/api/jobs", true, None).json();
    assert!(
        first["runs"][0]["error"]
            .as_str()
            .unwrap()
            .contains("no log at"),
        "{first}"
    );
    enqueue(&sb, "one");
    viewer.wait_for(Duration::from_secs(20), "the first job", |doc| {
        doc["jobs"].as_array().is_some_and(|j| j.len() == 1)
    });
    enqueue(&sb, "two");
    sb.run(&["cancel", "DATA", "one"]).ok();
    viewer.wait_for(
        Duration::from_secs(20),
        "the second job and the cancel",
        |doc| {
            let jobs = doc["jobs"].as_array().unwrap();
            jobs.len() == 2 && jobs[0]["state"] == "cancelled" && jobs[1]["state"] == "queued"
        },
    );
    // Nothing was written by the viewer: the log is the CLI's alone.
    let lines = std::fs::read_to_string(sb.log()).unwrap().lines().count();
    assert_eq!(lines, 3);
    assert!(!Path::new(&sb.data().join("report")).exists());
}

#[test]
fn view_of_a_missing_data_dir_says_so() {
    let sb = Sandbox::new();
    let run = sb.run(&["view", "DATA"]);
    assert_eq!(run.code, 2, "{run:#?}");
    assert!(run.stderr.contains("is not a data directory"), "{run:#?}");
}

/// Given the reports directory by mistake, `view` says whose it is
/// rather than waiting for a log that will never come.
#[test]
fn view_given_a_reports_dir_names_its_data_dir() {
    let sb = Sandbox::new();
    let data = sb.path().join("DATA");
    std::fs::create_dir_all(data.join("report")).unwrap();
    std::fs::write(data.join("events.log"), "").unwrap();
    std::fs::write(data.join("report/results.json"), "{}").unwrap();
    let run = sb.run(&["view", "DATA/report"]).code(2);
    assert!(
        run.stderr.contains("a reports directory, not a data dir")
            && run.stderr.contains("its data dir is"),
        "{run:#?}"
    );
}

/// The job page and `report.html` carry one job's details as the same
/// blocks (one builder, drawn by one renderer); only the links' base
/// differs, each page's own way to the data dir. A link from the page
/// serves the file it names.
#[test]
fn a_job_page_carries_the_details_report_html_has() {
    let sb = Sandbox::new();
    let manifest = write_job(
        sb.path(),
        &ScriptedJob {
            id: "same",
            family: "one",
            out: "nope",
            sleep_s: 0,
            extra_file: None,
            prompt: "Write `done` into out.txt, verify, finish.",
        },
    );
    let text = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(&manifest, format!("trace = \"full\"\n{text}")).unwrap();
    sb.run(&["batch", "DATA", manifest.to_str().unwrap()])
        .code(1);
    let html = std::fs::read_to_string(sb.data().join("report/report.html")).unwrap();
    let start = html.find("id=\"report-data\">").unwrap() + "id=\"report-data\">".len();
    let end = start + html[start..].find("</script>").unwrap();
    let data: serde_json::Value = serde_json::from_str(&html[start..end]).unwrap();
    let mut from_report = match &data["details"][0] {
        serde_json::Value::String(text) => serde_json::from_str(text).unwrap(),
        other => other.clone(),
    };
    let viewer = Viewer::start(&sb, &["DATA"]);
    let page = viewer.get("/api/job?run=0&id=same", true, None).json();
    let mut from_page = page["detail"]["blocks"].clone();
    let base = |blocks: &mut serde_json::Value| {
        let links = blocks
            .as_array_mut()
            .unwrap()
            .iter_mut()
            .find_map(|b| b.get_mut("links"))
            .unwrap();
        let base = links["base"].as_str().unwrap().to_string();
        links["base"] = "BASE".into();
        (base, links["paths"].clone())
    };
    let (report_base, paths) = base(&mut from_report);
    let (page_base, _) = base(&mut from_page);
    assert_eq!(
        (report_base.as_str(), page_base.as_str()),
        ("../", "data/0/")
    );
    assert_eq!(from_page, from_report);
    // The page's texts and fact names are the report's.
    assert_eq!(page["detail"]["fact_names"], data["fact_names"]);
    assert_eq!(page["detail"]["texts"], data["texts"]);
    // The trajectory holds each model call with its reply.
    let steps = from_page
        .as_array()
        .unwrap()
        .iter()
        .find_map(|b| b["steps"].as_array())
        .unwrap();
    let replies = steps
        .iter()
        .filter(|g| {
            g[6]["reply"]
                .as_str()
                .is_some_and(|r| r.contains("\"kind\""))
        })
        .count();
    assert_eq!(replies, 3, "{steps:#?}");
    let log = paths
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p.as_str())
        .find(|p| p.ends_with("acceptance.log"))
        .unwrap()
        .to_string();
    let served = viewer.get(&format!("/{page_base}{log}"), true, None);
    assert_eq!(served.status, 200, "{}", served.body);
}
