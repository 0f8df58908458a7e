//! Headless Chromium for tests that need a real browser, driven over the
//! DevTools protocol through `--remote-debugging-pipe` (JSON messages,
//! each ended by a NUL byte, on the browser's file descriptors 3 and 4, set
//! up by `sh` so no code of ours runs between fork and exec). Debian's
//! `/usr/bin/chromium` (or `$CHROMIUM`); a test without one skips, saying
//! why. Nothing is downloaded.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// How long one protocol call or awaited event may take.
const CALL_TIMEOUT: Duration = Duration::from_secs(120);

/// The browser to run, or why there is none.
pub fn chromium() -> Result<PathBuf, String> {
    let path = std::env::var_os("CHROMIUM")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/chromium"));
    if path.is_file() {
        Ok(path)
    } else {
        Err(format!(
            "no Chromium at {} (install Debian's chromium, or set CHROMIUM)",
            path.display()
        ))
    }
}

/// A running headless browser with its own throwaway profile.
pub struct Browser {
    child: Child,
    input: ChildStdin,
    messages: Receiver<Value>,
    /// Events received while waiting for something else.
    events: Vec<Value>,
    next: u64,
    _profile: tempfile::TempDir,
}

impl Browser {
    pub fn launch() -> Result<Browser, String> {
        let chromium = chromium()?;
        let profile = tempfile::tempdir().map_err(|e| e.to_string())?;
        // fd 3 reads what we write on its stdin, fd 4 writes to its stdout.
        let script = format!(
            "exec '{}' --headless --no-sandbox --disable-gpu --no-first-run \
             --no-default-browser-check --disable-extensions --remote-debugging-pipe \
             --user-data-dir='{}' about:blank 3<&0 4>&1 0</dev/null 1>/dev/null",
            chromium.display(),
            profile.path().display()
        );
        let mut child = Command::new("sh")
            .args(["-c", &script])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", chromium.display()))?;
        let input = child.stdin.take().ok_or("no stdin")?;
        let mut output = child.stdout.take().ok_or("no stdout")?;
        let (send, messages) = channel();
        std::thread::spawn(move || {
            let mut pending = Vec::new();
            let mut chunk = [0u8; 1 << 16];
            loop {
                let n = match output.read(&mut chunk) {
                    Ok(0) | Err(_) => return,
                    Ok(n) => n,
                };
                pending.extend_from_slice(&chunk[..n]);
                while let Some(end) = pending.iter().position(|b| *b == 0) {
                    let message: Vec<u8> = pending.drain(..=end).collect();
                    if let Ok(value) = serde_json::from_slice(&message[..end])
                        && send.send(value).is_err()
                    {
                        return;
                    }
                }
            }
        });
        Ok(Browser {
            child,
            input,
            messages,
            events: Vec::new(),
            next: 0,
            _profile: profile,
        })
    }

    fn receive(&mut self, deadline: Instant) -> Result<Value, String> {
        let left = deadline.saturating_duration_since(Instant::now());
        match self.messages.recv_timeout(left) {
            Ok(message) => Ok(message),
            Err(RecvTimeoutError::Timeout) => Err("the browser did not answer in time".into()),
            Err(RecvTimeoutError::Disconnected) => Err("the browser went away".into()),
        }
    }

    /// Calls `method` (in the page `session`, when given) and returns its result.
    pub fn call(
        &mut self,
        session: Option<&str>,
        method: &str,
        params: Value,
    ) -> Result<Value, String> {
        self.next += 1;
        let id = self.next;
        let mut message = json!({"id": id, "method": method, "params": params});
        if let Some(session) = session {
            message["sessionId"] = json!(session);
        }
        let mut bytes = serde_json::to_vec(&message).map_err(|e| e.to_string())?;
        bytes.push(0);
        self.input
            .write_all(&bytes)
            .map_err(|e| format!("cannot write to the browser: {e}"))?;
        let deadline = Instant::now() + CALL_TIMEOUT;
        loop {
            let message = self.receive(deadline)?;
            if message["id"] == id {
                if let Some(error) = message.get("error") {
                    return Err(format!("{method}: {error}"));
                }
                return Ok(message["result"].clone());
            }
            if message.get("method").is_some() {
                self.events.push(message);
            }
        }
    }

    /// Waits for the event `method` of `session` (one already received too).
    pub fn wait_event(&mut self, session: &str, method: &str) -> Result<Value, String> {
        let matches = |m: &Value| m["method"] == method && m["sessionId"] == session;
        if let Some(at) = self.events.iter().position(matches) {
            return Ok(self.events.remove(at));
        }
        let deadline = Instant::now() + CALL_TIMEOUT;
        loop {
            let message = self.receive(deadline)?;
            if matches(&message) {
                return Ok(message);
            }
            if message.get("method").is_some() {
                self.events.push(message);
            }
        }
    }

    /// A new page `width` px wide, as its session id.
    pub fn page(&mut self, width: u32, height: u32) -> Result<String, String> {
        let target = self.call(None, "Target.createTarget", json!({"url": "about:blank"}))?;
        let attached = self.call(
            None,
            "Target.attachToTarget",
            json!({"targetId": target["targetId"], "flatten": true}),
        )?;
        let session = attached["sessionId"]
            .as_str()
            .ok_or("no session")?
            .to_string();
        self.call(Some(&session), "Page.enable", json!({}))?;
        self.call(Some(&session), "Runtime.enable", json!({}))?;
        self.call(
            Some(&session),
            "Emulation.setDeviceMetricsOverride",
            json!({"width": width, "height": height, "deviceScaleFactor": 1, "mobile": false}),
        )?;
        Ok(session)
    }

    /// Opens `file` in the page and waits for its load event; the wall
    /// time that took.
    pub fn open(&mut self, session: &str, file: &Path) -> Result<Duration, String> {
        self.events.retain(|m| m["sessionId"] != session);
        let started = Instant::now();
        let url = format!("file://{}", file.display());
        let navigated = self.call(Some(session), "Page.navigate", json!({"url": url}))?;
        if let Some(error) = navigated.get("errorText") {
            return Err(format!("cannot open {url}: {error}"));
        }
        self.wait_event(session, "Page.loadEventFired")?;
        Ok(started.elapsed())
    }

    /// The value of a JavaScript expression in the page (promises awaited).
    pub fn eval(&mut self, session: &str, expression: &str) -> Result<Value, String> {
        let result = self.call(
            Some(session),
            "Runtime.evaluate",
            json!({"expression": expression, "returnByValue": true, "awaitPromise": true}),
        )?;
        if let Some(exception) = result.get("exceptionDetails") {
            return Err(format!("{expression}: {exception}"));
        }
        Ok(result["result"]["value"].clone())
    }

    /// A PNG of the page's viewport, written to `path`.
    pub fn screenshot(&mut self, session: &str, path: &Path) -> Result<(), String> {
        use base64::Engine;
        let shot = self.call(
            Some(session),
            "Page.captureScreenshot",
            json!({"format": "png"}),
        )?;
        let data = shot["data"].as_str().ok_or("no screenshot data")?;
        let png = base64::engine::general_purpose::STANDARD
            .decode(data)
            .map_err(|e| e.to_string())?;
        std::fs::write(path, png).map_err(|e| format!("cannot write {}: {e}", path.display()))
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.call(None, "Browser.close", json!({}));
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
