//! `view` in a real browser: Debian's headless Chromium, driven over the
//! DevTools protocol, opens the printed URL while a batch of 9 scripted
//! jobs runs in another process; the page lists the jobs mid-run, shows
//! them finished without a reload, and a failed job's page shows its
//! cause and its failing test's assertion message. Screenshots go to the
//! test's temp dir (and to `$AGENT_RUNTIME_VIEW_SHOTS/` when set). Skips,
//! saying why, where Chromium is missing.
//!
//! `measure_the_page_at_1000_jobs` (ignored: it prints figures, it asserts
//! none) gives the page weight and the time to first paint at 1,000 jobs.

use std::io::Read as _;
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::{Value, json};
use tungstenite::stream::MaybeTlsStream;
use tungstenite::{Message, WebSocket};

use crate::harness::{BIN, Sandbox};
use crate::view::{ScriptedJob, Viewer, write_job};

const CHROMIUM: &str = "/usr/bin/chromium";

/// A headless Chromium and one page of it, over the DevTools protocol;
/// killed when dropped.
struct Browser {
    child: Child,
    ws: WebSocket<MaybeTlsStream<TcpStream>>,
    next: u64,
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.ws.close(None);
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Browser {
    /// Starts Chromium with a profile in `dir`, or says why it cannot.
    fn start(dir: &Path) -> Result<Browser, String> {
        if !Path::new(CHROMIUM).exists() {
            return Err(format!("{CHROMIUM} is missing (Debian's chromium package)"));
        }
        let profile = dir.join("chromium-profile");
        std::fs::create_dir_all(&profile).unwrap();
        let child = Command::new(CHROMIUM)
            .args([
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-extensions",
                "--disable-background-networking",
                "--disable-sync",
                "--metrics-recording-only",
                "--remote-debugging-port=0",
                "--window-size=1280,1000",
            ])
            .arg(format!("--user-data-dir={}", profile.display()))
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start {CHROMIUM}: {e}"))?;
        let mut browser_child = Some(child);
        // Chromium writes the port it chose into the profile.
        let port_file = profile.join("DevToolsActivePort");
        let deadline = Instant::now() + Duration::from_secs(60);
        let port: u16 = loop {
            if let Some(port) = std::fs::read_to_string(&port_file)
                .ok()
                .and_then(|t| t.lines().next()?.trim().parse().ok())
            {
                break port;
            }
            if Instant::now() > deadline {
                let mut child = browser_child.take().unwrap();
                let _ = child.kill();
                let _ = child.wait();
                return Err("chromium did not open its DevTools port within 60 s".into());
            }
            std::thread::sleep(Duration::from_millis(100));
        };
        let agent = ureq::Agent::config_builder()
            .proxy(None)
            .build()
            .new_agent();
        let ws_url = loop {
            let targets: Value = agent
                .get(&format!("http://127.0.0.1:{port}/json/list"))
                .call()
                .ok()
                .and_then(|mut r| r.body_mut().read_to_string().ok())
                .and_then(|t| serde_json::from_str(&t).ok())
                .unwrap_or(Value::Null);
            let page = targets.as_array().and_then(|t| {
                t.iter()
                    .find(|t| t["type"] == "page")
                    .and_then(|t| t["webSocketDebuggerUrl"].as_str().map(str::to_string))
            });
            if let Some(url) = page {
                break url;
            }
            assert!(Instant::now() < deadline, "no page target: {targets}");
            std::thread::sleep(Duration::from_millis(100));
        };
        let (ws, _) = tungstenite::connect(ws_url.as_str()).map_err(|e| e.to_string())?;
        Ok(Browser {
            child: browser_child.take().unwrap(),
            ws,
            next: 0,
        })
    }

    /// One DevTools command and its result (events in between are dropped).
    fn call(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let id = self.next;
        let message = json!({"id": id, "method": method, "params": params});
        self.ws.send(Message::text(message.to_string())).unwrap();
        loop {
            if let Message::Text(text) = self.ws.read().unwrap() {
                let reply: Value = serde_json::from_str(text.as_str()).unwrap();
                if reply["id"] == id {
                    assert!(reply.get("error").is_none(), "{method}: {reply}");
                    return reply["result"].clone();
                }
            }
        }
    }

    /// The value of a script expression in the page.
    fn eval(&mut self, expression: &str) -> Value {
        let result = self.call(
            "Runtime.evaluate",
            json!({"expression": expression, "returnByValue": true, "awaitPromise": true}),
        );
        assert!(
            result.get("exceptionDetails").is_none(),
            "{expression}: {result}"
        );
        result["result"]["value"].clone()
    }

    /// Polls `expression` until it is `true` or `limit` passes.
    fn wait_for(&mut self, limit: Duration, what: &str, expression: &str) {
        let deadline = Instant::now() + limit;
        while self.eval(expression) != Value::Bool(true) {
            let text = self.eval("document.body ? document.body.innerText.slice(0, 2000) : ''");
            assert!(
                Instant::now() < deadline,
                "timed out waiting for {what}: {text}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn navigate(&mut self, url: &str) {
        self.call("Page.enable", json!({}));
        self.call("Page.navigate", json!({"url": url}));
    }

    /// A PNG of the page as it is, saved as `path` (and in
    /// `$AGENT_RUNTIME_VIEW_SHOTS/` when set).
    fn screenshot(&mut self, path: &Path) {
        let shot = self.call("Page.captureScreenshot", json!({"format": "png"}));
        let png = base64::engine::general_purpose::STANDARD
            .decode(shot["data"].as_str().unwrap())
            .unwrap();
        assert!(png.starts_with(b"\x89PNG"), "not a PNG");
        std::fs::write(path, &png).unwrap();
        if let Some(dir) = std::env::var_os("AGENT_RUNTIME_VIEW_SHOTS") {
            let copy = PathBuf::from(dir).join(path.file_name().unwrap());
            std::fs::write(&copy, &png).unwrap();
            eprintln!("screenshot: {}", copy.display());
        }
    }
}

/// The text of a job's cause, as its details show it.
const CAUSE: &str = "[...document.querySelectorAll('#detail p.note')]\
    .map(p => p.textContent).find(t => t.startsWith('cause:'))";

/// Opens every step of a job's details, then every model call in them
/// (each is built when first opened); how many calls there are.
const OPEN_ALL: &str = "(async () => {\
    document.querySelectorAll('section.job details.step').forEach(d => { d.open = true; });\
    await new Promise(r => setTimeout(r, 50));\
    document.querySelectorAll('section.job details.call').forEach(d => { d.open = true; });\
    await new Promise(r => setTimeout(r, 50));\
    return document.querySelectorAll('section.job details.call').length; })()";

/// `[instance, state]` of every row of the jobs table.
const ROWS: &str = "JSON.stringify([...document.querySelectorAll('#jobs tbody tr')]\
    .map(r => [r.dataset.instance, r.dataset.state]))";

fn rows(browser: &mut Browser) -> Vec<(String, String)> {
    let text = browser.eval(ROWS);
    serde_json::from_str(text.as_str().unwrap_or("[]")).unwrap()
}

/// The nine jobs: seven that pass, two that fail their hidden test, each
/// with a tool command of 1-3 s, in two families.
fn nine_jobs(dir: &Path) -> Vec<PathBuf> {
    (1..=9)
        .map(|n| {
            let id = format!("job-{n}");
            let fails = n == 4 || n == 8;
            write_job(
                dir,
                &ScriptedJob {
                    id: &id,
                    family: if n % 2 == 0 { "even" } else { "odd" },
                    out: if fails { "nearly" } else { "done" },
                    sleep_s: 1 + n % 3,
                    extra_file: None,
                    prompt: "Write `done` into out.txt, verify, finish.",
                },
            )
        })
        .collect()
}

/// Chromium, or a printed reason to skip.
fn browser_or_skip(test: &str, dir: &Path) -> Option<Browser> {
    agent_runtime_test_support::require_tool(test, Browser::start(dir))
}

#[test]
fn the_open_page_follows_a_running_batch_and_explains_a_failure() {
    let sb = Sandbox::new();
    let Some(mut browser) = browser_or_skip("the_open_page_follows_a_running_batch", sb.path())
    else {
        return;
    };
    let manifests = nine_jobs(&sb.path().join("jobs"));
    std::fs::create_dir_all(sb.data()).unwrap();
    let viewer = Viewer::start(&sb, &["DATA"]);
    browser.navigate(&viewer.url);
    browser.wait_for(
        Duration::from_secs(30),
        "the page",
        "document.querySelector('#jobs') !== null",
    );
    // Anything set now is lost if the page reloads.
    browser.eval("window.__loadedOnce = true; true");

    let mut args = vec![
        "batch".to_string(),
        sb.data().display().to_string(),
        "-j".into(),
        "2".into(),
    ];
    args.extend(manifests.iter().map(|m| m.display().to_string()));
    let mut batch = Command::new(BIN)
        .args(&args)
        .current_dir(sb.path())
        .env("CI", "true")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();

    // Mid-run: all nine listed, some not finished, the batch still running.
    let deadline = Instant::now() + Duration::from_secs(120);
    let mid = loop {
        let rows = rows(&mut browser);
        let unfinished = rows
            .iter()
            .filter(|(_, s)| s == "queued" || s == "running")
            .count();
        if rows.len() == 9 && unfinished > 0 && rows.iter().any(|(_, s)| s == "running") {
            break rows;
        }
        assert!(
            batch.try_wait().unwrap().is_none(),
            "the batch ended before the page showed it running: {rows:?}"
        );
        assert!(Instant::now() < deadline, "never mid-run: {rows:?}");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(batch.try_wait().unwrap().is_none(), "mid-run: {mid:?}");
    browser.screenshot(&sb.path().join("view-mid-run.png"));

    // Finished, with no reload.
    let status = batch.wait().unwrap();
    assert_eq!(status.code(), Some(1), "two jobs fail");
    browser.wait_for(
        Duration::from_secs(30),
        "every job finished on the open page",
        "[...document.querySelectorAll('#jobs tbody tr')].length === 9 && \
         [...document.querySelectorAll('#jobs tbody tr')].every(r => \
           r.dataset.state === 'succeeded' || r.dataset.state === 'failed')",
    );
    let done = rows(&mut browser);
    let failed: Vec<&str> = done
        .iter()
        .filter(|(_, s)| s == "failed")
        .map(|(i, _)| i.as_str())
        .collect();
    assert_eq!(failed, ["job-4", "job-8"], "{done:?}");
    assert_eq!(
        browser.eval("window.__loadedOnce === true"),
        Value::Bool(true)
    );
    assert_eq!(
        browser.eval("performance.getEntriesByType('navigation').length"),
        json!(1)
    );
    browser.screenshot(&sb.path().join("view-finished.png"));
    // Per family, as the report has it: pass rate with its interval.
    assert_eq!(
        browser.eval(
            "[...document.querySelectorAll('table.groups[data-by=family] tbody tr')]\
             .map(r => r.dataset.group + ' ' + r.children[4].textContent).join(', ')"
        ),
        json!("even 50.0%, odd 100.0%")
    );
    assert_eq!(
        browser.eval("document.querySelectorAll('table.groups .rate-bar .ci').length"),
        json!(2)
    );

    // The filters work on the live rows.
    browser.eval(
        "(() => { const s = document.querySelector('select[name=state]'); \
         s.value = 'failed'; s.dispatchEvent(new Event('change')); return true; })()",
    );
    assert_eq!(rows(&mut browser).len(), 2);
    // The filter lives in the address: a reload keeps it.
    let hash = browser.eval("location.hash");
    assert!(
        hash.as_str().unwrap_or_default().contains("state=failed"),
        "{hash}"
    );
    browser.eval("window.__beforeReload = true; location.reload(); true");
    browser.wait_for(
        Duration::from_secs(30),
        "the filtered list after a reload",
        "window.__beforeReload === undefined && document.readyState === 'complete' && \
         document.querySelectorAll('#jobs tbody tr').length === 2 && \
         document.querySelector('select[name=state]').value === 'failed'",
    );
    // At 1,400 px the jobs table needs no horizontal scroll.
    browser.call(
        "Emulation.setDeviceMetricsOverride",
        json!({"width": 1400, "height": 1000, "deviceScaleFactor": 1, "mobile": false}),
    );
    browser.eval(
        "document.querySelector('select[name=state]').value = ''; \
        document.querySelector('select[name=state]').dispatchEvent(new Event('change')); true",
    );
    assert_eq!(rows(&mut browser).len(), 9);
    assert_eq!(
        browser
            .eval("document.documentElement.scrollWidth <= document.documentElement.clientWidth"),
        Value::Bool(true)
    );
    browser.screenshot(&sb.path().join("view-1400.png"));
    browser.eval(
        "(() => { const s = document.querySelector('select[name=state]'); \
         s.value = 'failed'; s.dispatchEvent(new Event('change')); return true; })()",
    );

    // A failed job's page, reached from the filtered list: its cause and
    // its failing test's assertion, and next/previous in the list's order.
    browser.eval("document.querySelector('#jobs a[href*=\"job-4\"]').click(); true");
    browser.wait_for(
        Duration::from_secs(30),
        "the job page",
        &format!("{CAUSE} !== undefined && document.querySelector('#detail ul.excerpts') !== null"),
    );
    browser.wait_for(
        Duration::from_secs(30),
        "next, in the filtered order",
        "document.querySelector('#next') !== null && document.querySelector('#prev') === null \
         && document.querySelector('#next').getAttribute('href').includes('job-8')",
    );
    let cause = browser.eval(CAUSE);
    assert!(cause.as_str().unwrap().contains("out_is_done"), "{cause}");
    let failing = browser.eval("document.querySelector('#detail ul.excerpts').textContent");
    let failing = failing.as_str().unwrap();
    assert!(failing.contains("out_is_done"), "{failing}");
    // What the test's own run said, as the attempt kept it.
    assert!(
        failing.contains("left: 1, right: 5") && failing.contains("out.txt is wrong"),
        "{failing}"
    );
    let prompt = browser.eval("document.querySelector('#detail pre.prompt').textContent");
    assert_eq!(prompt, "Write `done` into out.txt, verify, finish.");
    assert_eq!(
        browser.eval("document.querySelectorAll('#detail ol.trajectory > li').length > 3"),
        Value::Bool(true)
    );
    // Headlines name what each step acts on, and its result.
    let timeline = browser.eval("document.querySelector('#detail ol.trajectory').textContent");
    assert!(
        timeline
            .as_str()
            .unwrap_or_default()
            .contains("write_file out.txt ✓"),
        "{timeline}"
    );
    // Where the time went; a metadata trace says what it kept.
    assert_eq!(
        browser.eval("document.querySelectorAll('#detail .timebar .seg').length > 0"),
        Value::Bool(true)
    );
    assert_eq!(
        browser.eval(
            "document.querySelector('#detail [data-say=trace]').textContent\
             .startsWith('trace = metadata: decisions kept, model text not')"
        ),
        Value::Bool(true)
    );
    browser.screenshot(&sb.path().join("view-failed-job.png"));
    browser.eval("document.querySelector('#next').click(); true");
    browser.wait_for(
        Duration::from_secs(30),
        "the next job's page",
        "document.querySelector('#job-title') !== null \
         && document.querySelector('#job-title').textContent.startsWith('job-8') \
         && document.querySelector('#prev') !== null",
    );
    browser.eval("history.back(); true");
    browser.wait_for(
        Duration::from_secs(30),
        "back on job-4",
        "document.querySelector('#job-title') !== null \
         && document.querySelector('#job-title').textContent.startsWith('job-4') \
         && document.querySelector('#detail') !== null",
    );
    // Its patch, served as text (the cookie carries the token).
    browser.eval("document.querySelector('a.artifact[href$=\"patch.diff\"]').click(); true");
    browser.wait_for(
        Duration::from_secs(30),
        "patch.diff",
        "document.contentType === 'text/plain' && document.body.innerText.includes('out.txt')",
    );
    drop(viewer);

    // Two data dirs side by side (here the same one twice): a matrix of
    // the nine jobs, every one a tie.
    let two = Viewer::start(&sb, &["DATA", "DATA"]);
    browser.navigate(&format!("{}#/compare?kind=run&a=0&b=1", two.url));
    browser.wait_for(
        Duration::from_secs(30),
        "the comparison",
        "document.querySelectorAll('#matrix tbody tr').length === 9",
    );
    let verdict = browser.eval("document.querySelector('#verdict').textContent");
    assert_eq!(verdict, "no significant difference");
    let winners = browser.eval(
        "[...document.querySelectorAll('#matrix tbody tr')].every(r => r.dataset.winner === 'tie')",
    );
    assert_eq!(winners, Value::Bool(true));
    browser.screenshot(&sb.path().join("view-compare.png"));
    // Only where they differ: none, here; the choice is in the address.
    browser.eval(
        "(() => { const s = document.querySelector('select[name=rows]'); \
         s.value = 'differ'; s.dispatchEvent(new Event('change')); return true; })()",
    );
    browser.wait_for(
        Duration::from_secs(30),
        "the rows that differ",
        "location.hash.includes('rows=differ') && document.querySelector('#matrix-shown') !== null \
         && document.querySelector('#matrix-shown').textContent === '0 of 9 jobs shown'",
    );
}

/// A data dir of `n` jobs: the records of `template`'s log repeated under
/// new job ids (and sequence numbers), so each job has a whole history.
fn synthetic_data_dir(template: &Path, out: &Path, n: usize) {
    use agent_runtime::log::read_records;
    let (records, _) = read_records(&template.join("events.log")).unwrap();
    let ids: Vec<String> = {
        let mut ids: Vec<String> = records.iter().filter_map(|r| r.job.clone()).collect();
        ids.dedup();
        ids.sort();
        ids.dedup();
        ids
    };
    let mut bytes = Vec::new();
    let mut seq = 0;
    'copies: for copy in 0.. {
        for record in &records {
            let Some(job) = &record.job else { continue };
            let index = ids.iter().position(|i| i == job).unwrap();
            if copy * ids.len() + index >= n {
                if index == 0 {
                    break 'copies;
                }
                continue;
            }
            seq += 1;
            let mut r = record.clone();
            r.seq = seq;
            r.job = Some(format!("{job}-{copy:03}"));
            bytes.extend(r.encode());
        }
    }
    std::fs::create_dir_all(out).unwrap();
    std::fs::write(out.join("events.log"), bytes).unwrap();
}

#[test]
#[ignore = "a measurement: prints the page weight and the time to first paint at 1,000 jobs"]
fn measure_the_page_at_1000_jobs() {
    let sb = Sandbox::new();
    let Some(mut browser) = browser_or_skip("measure_the_page_at_1000_jobs", sb.path()) else {
        return;
    };
    let manifests = nine_jobs(&sb.path().join("jobs"));
    let template = sb.path().join("template");
    let mut args = vec!["batch".to_string(), template.display().to_string()];
    args.extend(manifests.iter().map(|m| m.display().to_string()));
    let out = Command::new(BIN)
        .args(&args)
        .current_dir(sb.path())
        .env("CI", "true")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    synthetic_data_dir(&template, &sb.data(), 1000);
    let viewer = Viewer::start(&sb, &["DATA"]);
    let jobs = viewer.get("/api/jobs", true, None);
    assert_eq!(jobs.json()["jobs"].as_array().unwrap().len(), 1000);
    browser.navigate(&viewer.url);
    let shown = "document.querySelectorAll('#jobs tbody tr').length === 300 && \
                 performance.getEntriesByName('jobs-painted').length > 0";
    browser.wait_for(Duration::from_secs(60), "the first 300 rows", shown);
    let figures = browser.eval(
        "(() => { \
           const nav = performance.getEntriesByType('navigation')[0]; \
           const res = performance.getEntriesByType('resource'); \
           const paint = Object.fromEntries(performance.getEntriesByType('paint').map(p => [p.name, p.startTime])); \
           const all = [nav, ...res]; \
           return { \
             transfer: all.reduce((s, e) => s + (e.transferSize || 0), 0), \
             decoded: all.reduce((s, e) => s + (e.decodedBodySize || 0), 0), \
             resources: all.map(e => [e.name.replace(/token=[0-9a-f]+/, 'token=…'), e.transferSize, e.decodedBodySize, Math.round(e.responseEnd)]), \
             first_paint: paint['first-paint'], \
             first_contentful_paint: paint['first-contentful-paint'], \
             marks: Object.fromEntries(performance.getEntriesByType('mark').map(m => [m.name, Math.round(m.startTime)])), \
           }; })()",
    );
    // The time until the rows are on screen, measured by a fresh load.
    let started = Instant::now();
    browser.call("Page.reload", json!({"ignoreCache": true}));
    browser.wait_for(Duration::from_secs(60), "the rows again", shown);
    let reload_ms = started.elapsed().as_millis();
    // All of them, on request.
    let started = Instant::now();
    browser.eval("document.getElementById('more').click(); true");
    browser.wait_for(
        Duration::from_secs(60),
        "all 1,000 rows",
        "document.querySelectorAll('#jobs tbody tr').length === 1000",
    );
    let all_ms = started.elapsed().as_millis();
    browser.screenshot(&sb.path().join("view-1000-jobs.png"));
    let started = Instant::now();
    let page = viewer.get("/api/job?run=0&id=job-4-000", true, None);
    assert_eq!(page.status, 200);
    let job_page_ms = started.elapsed().as_millis();
    let mut body = String::new();
    let _ = std::fs::File::open(sb.log())
        .unwrap()
        .read_to_string(&mut body);
    eprintln!(
        "view at 1000 jobs ({} log bytes): {figures}; rows on screen after a reload in {reload_ms} ms, all 1,000 in {all_ms} ms more; \
         one job's page ({} bytes) in {job_page_ms} ms",
        body.len(),
        page.body.len()
    );
}

/// With a full trace, a step's model call opens to what the model had
/// been sent in its attempt and its whole reply; `report.html` draws the
/// same job, by the same renderer, to the same text.
#[test]
fn a_model_call_opens_to_its_input_and_output() {
    let sb = Sandbox::new();
    let Some(mut browser) =
        browser_or_skip("a_model_call_opens_to_its_input_and_output", sb.path())
    else {
        return;
    };
    let manifest = write_job(
        sb.path(),
        &ScriptedJob {
            id: "traced",
            family: "one",
            out: "done",
            sleep_s: 0,
            extra_file: None,
            prompt: "Write `done` into out.txt, verify, finish.",
        },
    );
    let text = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(&manifest, format!("trace = \"full\"\n{text}")).unwrap();
    sb.run(&["batch", "DATA", manifest.to_str().unwrap()]).ok();
    let viewer = Viewer::start(&sb, &["DATA"]);
    browser.navigate(&format!("{}#/job/0/traced", viewer.url));
    browser.wait_for(
        Duration::from_secs(30),
        "the job page",
        "document.querySelectorAll('#detail details.step').length === 3",
    );
    assert_eq!(
        browser.eval("document.querySelector('#detail [data-say=trace]') === null"),
        Value::Bool(true)
    );
    // Every step opens to its model call; the second call holds the
    // prompt, the first reply and what came back, and its own reply.
    assert_eq!(browser.eval(OPEN_ALL), json!(3));
    let call = browser.eval("document.querySelectorAll('#detail details.call')[1].textContent");
    let call = call.as_str().unwrap_or_default();
    assert!(call.contains("input: 3 messages"), "{call}");
    assert!(call.contains("Write `done` into out.txt"), "{call}");
    assert!(call.contains("\"kind\":\"write_file\""), "{call}");
    assert!(call.contains("\"kind\":\"verify\""), "{call}");
    let viewer_text = browser.eval("document.querySelector('section.job').innerText");
    browser.screenshot(&sb.path().join("view-model-call.png"));

    // report.html draws the same job with the same renderer from the same
    // blocks: opened the same way, the same text.
    let report = sb.data().join("report/report.html");
    browser.navigate(&format!("file://{}#job-0", report.display()));
    browser.wait_for(
        Duration::from_secs(30),
        "report.html's job detail",
        "document.querySelectorAll('section.job details.step').length === 3",
    );
    assert_eq!(browser.eval(OPEN_ALL), json!(3));
    let report_text = browser.eval("document.querySelector('section.job').innerText");
    assert_eq!(
        report_text, viewer_text,
        "report.html and the viewer draw one job differently"
    );
    browser.screenshot(&sb.path().join("report-model-call.png"));
}

/// The Inspect export as `inspect view` shows it: a sample's Transcript
/// tab lists its model calls and the tool calls they made.
#[test]
fn inspect_view_shows_each_model_call_and_tool_call_in_the_transcript() {
    let test = "inspect_view_shows_each_model_call_and_tool_call_in_the_transcript";
    let sb = Sandbox::new();
    let Some(python) = agent_runtime_test_support::require_tool(
        &format!("{test} (inspect-ai)"),
        crate::exports::python_with("AGENT_RUNTIME_INSPECT_PYTHON", "inspect-venv", "inspect_ai"),
    ) else {
        return;
    };
    let Some(mut browser) = browser_or_skip(test, sb.path()) else {
        return;
    };
    let manifest = write_job(
        sb.path(),
        &ScriptedJob {
            id: "shown",
            family: "one",
            out: "done",
            sleep_s: 1,
            extra_file: None,
            prompt: "Write `done` into out.txt, verify, finish.",
        },
    );
    sb.run(&["batch", "DATA", manifest.to_str().unwrap()]).ok();
    let logs = sb.data().join("report/inspect");
    assert!(logs.join("one@script.eval").exists());
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap();
    let inspect = python.with_file_name("inspect");
    let mut server = Command::new(&inspect)
        .args([
            "view",
            "start",
            "--host",
            "127.0.0.1",
            "--port",
            &port.to_string(),
        ])
        .arg("--log-dir")
        .arg(&logs)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "inspect view never listened");
        std::thread::sleep(Duration::from_millis(200));
    }
    browser.navigate(&format!(
        "http://127.0.0.1:{port}/#/logs/one@script.eval/samples/sample/shown/1/transcript"
    ));
    browser.wait_for(
        Duration::from_secs(60),
        "the transcript's model and tool calls",
        "document.body !== null && document.body.innerText.includes('MODEL CALL') \
         && document.body.innerText.includes('TOOL: RUN_TOOL')",
    );
    let text = browser.eval("document.body.innerText");
    let text = text.as_str().unwrap_or_default();
    // Four model calls (write, run, verify, finish), three tools run.
    assert!(text.contains("4 turns"), "{text}");
    browser.screenshot(&sb.path().join("inspect-transcript.png"));
    let _ = server.kill();
    let _ = server.wait();
}
