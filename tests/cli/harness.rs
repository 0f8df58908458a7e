//! A small fluent harness around the real `agent-runtime` binary.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

pub const BIN: &str = env!("CARGO_BIN_EXE_agent-runtime");

/// A temporary working directory with a data dir inside it.
pub struct Sandbox {
    pub tmp: tempfile::TempDir,
}

impl Sandbox {
    pub fn new() -> Sandbox {
        Sandbox {
            tmp: tempfile::tempdir().unwrap(),
        }
    }

    pub fn path(&self) -> &Path {
        self.tmp.path()
    }

    /// `DATA` as used on the command line.
    pub fn data(&self) -> PathBuf {
        self.tmp.path().join("data")
    }

    pub fn log(&self) -> PathBuf {
        self.data().join("events.log")
    }

    pub fn log_bytes(&self) -> Vec<u8> {
        std::fs::read(self.log()).unwrap_or_default()
    }

    /// `agent-runtime ARGS...` in the temp dir, with `DATA` substituted for
    /// the data dir, not started yet.
    pub fn command(&self, args: &[&str]) -> Command {
        let data = self.data();
        let mut command = Command::new(BIN);
        for arg in args {
            if *arg == "DATA" {
                command.arg(&data);
            } else {
                command.arg(arg);
            }
        }
        command.current_dir(self.path());
        // Tables are cut to COLUMNS (and watch's frame to LINES) when it is
        // set; tests read them whole.
        command.env_remove("COLUMNS");
        command.env_remove("LINES");
        command
    }

    /// Runs `agent-runtime ARGS...` with `DATA` substituted for the data dir.
    pub fn run(&self, args: &[&str]) -> Run {
        Run::from(self.command(args).output().unwrap())
    }
}

/// What one invocation did.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl From<Output> for Run {
    fn from(o: Output) -> Run {
        Run {
            code: o.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }
}

impl Run {
    #[track_caller]
    pub fn ok(self) -> Run {
        assert_eq!(self.code, 0, "expected success: {self:#?}");
        self
    }

    #[track_caller]
    pub fn code(self, code: i32) -> Run {
        assert_eq!(self.code, code, "unexpected exit code: {self:#?}");
        self
    }

    #[track_caller]
    pub fn stdout_has(self, needle: &str) -> Run {
        assert!(
            self.stdout.contains(needle),
            "stdout lacks {needle:?}: {self:#?}"
        );
        self
    }

    #[track_caller]
    pub fn stderr_has(self, needle: &str) -> Run {
        assert!(
            self.stderr.contains(needle),
            "stderr lacks {needle:?}: {self:#?}"
        );
        self
    }

    /// Exactly one line on stderr.
    #[track_caller]
    pub fn one_line_error(self) -> Run {
        assert_eq!(
            self.stderr.trim_end().lines().count(),
            1,
            "not a one-line error: {self:#?}"
        );
        assert!(self.stderr.starts_with("error: "), "{self:#?}");
        self
    }
}

/// The state column of `status --json` for one job.
pub fn job_state(sb: &Sandbox, id: &str) -> String {
    let run = sb.run(&["status", "DATA", "--json"]).ok();
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    doc["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["id"] == id)
        .map(|j| j["state"].as_str().unwrap().to_string())
        .unwrap_or_default()
}

/// Every whole line of the log parsed as JSON (a batch still running may
/// be writing the last one).
pub fn log_lines(sb: &Sandbox) -> Vec<serde_json::Value> {
    let bytes = sb.log_bytes();
    let whole = bytes
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(&[][..], |end| &bytes[..=end]);
    String::from_utf8(whole.to_vec())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Polls `done` every 20 ms until it holds; fails naming `what` once
/// `limit` has passed. For waiting on something another process does (a
/// record in the log, a file, a process), never a fixed sleep.
#[track_caller]
pub fn wait_until(limit: Duration, what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Whether `program` (its file name) runs among the descendants of the
/// process `root`: the command a runner is in the middle of, inside its
/// sandbox's PID namespace or not.
pub fn runs_below(root: u32, program: &str) -> bool {
    let parents: Vec<(u32, u32)> = std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            let rest = &stat[stat.rfind(')')? + 2..];
            let ppid = rest.split_whitespace().nth(1)?.parse().ok()?;
            Some((pid, ppid))
        })
        .collect();
    let mut below = vec![root];
    let mut i = 0;
    while i < below.len() {
        let parent = below[i];
        below.extend(
            parents
                .iter()
                .filter(|(_, p)| *p == parent)
                .map(|(pid, _)| *pid),
        );
        i += 1;
    }
    below[1..].iter().any(|pid| {
        std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|cmdline| {
            let argv0 = cmdline.split(|b| *b == 0).next().unwrap_or_default();
            argv0.rsplit(|b| *b == b'/').next() == Some(program.as_bytes())
        })
    })
}

/// `report.md` with the padding of its table cells taken out: every run of
/// spaces in a table row is one space, so a test names a row as
/// `| a | 1 |` whatever the width of its columns. The delimiter rows stay
/// as they are.
pub fn md_tables(md: &str) -> String {
    md.lines()
        .map(|line| {
            if line.starts_with('|') {
                line.split(' ')
                    .filter(|w| !w.is_empty())
                    .collect::<Vec<_>>()
                    .join(" ")
            } else {
                line.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The data `report.html` embeds (`<script type="application/json"
/// id="report-data">`), as the page's script reads it, with each job's
/// details (a JSON document of their own) parsed too.
pub fn html_data(html: &str) -> serde_json::Value {
    const OPEN: &str = "<script type=\"application/json\" id=\"report-data\">";
    let start = html.find(OPEN).expect("report.html embeds its data") + OPEN.len();
    let end = start + html[start..].find("</script>").unwrap();
    let mut data: serde_json::Value = serde_json::from_str(&html[start..end]).unwrap();
    if let Some(details) = data["details"].as_array_mut() {
        for detail in details {
            *detail = serde_json::from_str(detail.as_str().unwrap()).unwrap();
        }
    }
    data
}

/// Every string of job `instance`'s row in the jobs table and of its
/// details in `report.html`, one per line (a shared paragraph a detail
/// names by key, as its text): what the page shows of it.
pub fn html_job_text(html: &str, instance: &str) -> String {
    fn walk(v: &serde_json::Value, texts: &serde_json::Value, out: &mut String) {
        match v {
            serde_json::Value::String(s) => {
                out.push_str(s);
                out.push('\n');
            }
            serde_json::Value::Array(items) => items.iter().for_each(|v| walk(v, texts, out)),
            serde_json::Value::Object(map) => match map.get("say") {
                Some(say) => walk(&texts[say["key"].as_str().unwrap()], texts, out),
                None => map.values().for_each(|v| walk(v, texts, out)),
            },
            _ => {}
        }
    }
    let data = html_data(html);
    let jobs = data["tables"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == "jobs")
        .expect("a jobs table");
    let row = jobs["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r[1][0] == instance || r[1][0][0] == instance)
        .unwrap_or_else(|| panic!("no row for {instance} in report.html"));
    let mut out = String::new();
    walk(row, &data["texts"], &mut out);
    let index = row[0].as_u64().unwrap() as usize;
    walk(&data["details"][index], &data["texts"], &mut out);
    out
}

/// Pids of live processes (not zombies) whose command line, its arguments
/// joined by spaces, holds `needle`.
pub fn alive_with(needle: &str) -> Vec<i32> {
    let mut pids = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|s| s.parse().ok()) else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
            continue;
        };
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let zombie = stat
            .rfind(')')
            .is_some_and(|i| stat[i + 1..].trim_start().starts_with('Z'));
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if !zombie && cmdline.contains(needle) {
            pids.push(pid);
        }
    }
    pids
}

/// The observations of attempt `attempt` of `job` (its `transcript.jsonl`,
/// written with `trace = "full"`), joined by newlines.
pub fn observations(sb: &Sandbox, job: &str, attempt: u32) -> String {
    let path = sb
        .data()
        .join(format!("runs/{job}/{attempt}/transcript.jsonl"));
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .filter_map(|l| {
            let entry: serde_json::Value = serde_json::from_str(l).ok()?;
            entry["observation"].as_str().map(str::to_string)
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// A tool `dir/tools/bin/mytool` whose interpreter (a copy of `/bin/sh`
/// at `dir/elsewhere/interp`) lives where no grant reaches, so it cannot
/// start inside the sandbox: `(tool, interpreter)`.
pub fn tool_with_a_hidden_interpreter(dir: &Path) -> (PathBuf, PathBuf) {
    let hidden = dir.join("elsewhere");
    std::fs::create_dir_all(&hidden).unwrap();
    let interp = hidden.join("interp");
    std::fs::copy("/bin/sh", &interp).unwrap();
    let bin = dir.join("tools/bin");
    std::fs::create_dir_all(&bin).unwrap();
    let tool = bin.join("mytool");
    std::fs::write(&tool, format!("#!{}\necho hi\n", interp.display())).unwrap();
    let mut perms = std::fs::metadata(&tool).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&tool, perms).unwrap();
    (tool, interp)
}
