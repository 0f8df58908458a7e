//! A workspace changing under the runner: while a scripted model issues
//! 1,000 `write_file`, 1,000 `read_file` and 200 `list_files` decisions under
//! `src/sub/`, a thread of this test swaps `src/sub` between the real
//! directory and a symlink to (a) a directory outside the workspace holding
//! a secret and (b) the job's acceptance dir, as fast as it can
//! (`renameat2(RENAME_EXCHANGE)`, so the name always exists). The runner
//! must never write outside the workspace nor show the model anything from
//! outside; the transcript (`trace = "full"`) holds every observation.

use std::collections::BTreeMap;
use std::fs;
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rustix::fs::{CWD, RenameFlags, renameat_with};

use crate::harness::{Sandbox, log_lines};

const JOB: &str = "race";
const WRITES: usize = 1000;
const READS: usize = 1000;
const LISTS: usize = 200;
const OUTSIDE_SECRET: &str = "OUTSIDE-SECRET-7c1e";
const ACCEPTANCE_SECRET: &str = "ACCEPTANCE-HIDDEN-93fd";
const OUTSIDE_MARKER: &str = "outside-only-marker.txt";
const ACCEPTANCE_MARKER: &str = "acceptance-only-marker.txt";
/// Created in the workspace once the swapping stopped; verify waits for it.
const STOPPED: &str = "swap-stopped";

/// Every entry under `dir` (symlinks not followed) with what it holds: a
/// file's content or a symlink's target. Names and bytes are compared
/// exactly, shown escaped (`escape_ascii`) so a failure reads.
fn tree(dir: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in fs::read_dir(&d).unwrap() {
            let entry = entry.unwrap();
            let path = entry.path();
            let rel = path.strip_prefix(dir).unwrap().as_os_str().as_bytes();
            let kind = entry.file_type().unwrap();
            let value = if kind.is_dir() {
                stack.push(path.clone());
                "dir".to_string()
            } else if kind.is_symlink() {
                let target = fs::read_link(&path).unwrap();
                format!(
                    "symlink -> {}",
                    target.as_os_str().as_bytes().escape_ascii()
                )
            } else {
                format!("file: {}", fs::read(&path).unwrap().escape_ascii())
            };
            out.insert(rel.escape_ascii().to_string(), value);
        }
    }
    out
}

/// The scripted decisions: writes, reads and listings interleaved, then
/// `finish` (whose verify waits for the swapping to stop).
fn script() -> (String, usize) {
    let mut lines = Vec::new();
    let (mut w, mut r, mut l) = (0, 0, 0);
    while w < WRITES || r < READS || l < LISTS {
        if w < WRITES {
            lines.push(serde_json::json!({
                "kind": "write_file",
                "path": format!("src/sub/w{w}.txt"),
                "content": format!("written {w}\n"),
            }));
            w += 1;
        }
        if r < READS {
            let path = if r % 2 == 0 {
                "src/sub/a.txt".to_string()
            } else {
                format!("src/sub/w{}.txt", r / 2)
            };
            lines.push(serde_json::json!({"kind": "read_file", "path": path}));
            r += 1;
        }
        if l < LISTS && (w % 5 == 0) {
            lines.push(serde_json::json!({"kind": "list_files", "path": "src/sub"}));
            l += 1;
        }
    }
    while l < LISTS {
        lines.push(serde_json::json!({"kind": "list_files", "path": "src/sub"}));
        l += 1;
    }
    let actions = lines.len();
    lines.push(serde_json::json!({"kind": "finish", "summary": "raced"}));
    let text = lines
        .iter()
        .map(|v| v.to_string() + "\n")
        .collect::<String>();
    (text, actions)
}

/// Counts `decision` events appended to the log since the last call.
struct LogTail {
    path: PathBuf,
    offset: u64,
    decisions: usize,
    partial: Vec<u8>,
}

impl LogTail {
    fn poll(&mut self) -> usize {
        if let Ok(mut file) = fs::File::open(&self.path) {
            let mut bytes = Vec::new();
            if file.seek(SeekFrom::Start(self.offset)).is_ok()
                && file.read_to_end(&mut bytes).is_ok()
            {
                self.offset += bytes.len() as u64;
                self.partial.extend_from_slice(&bytes);
                while let Some(end) = self.partial.iter().position(|b| *b == b'\n') {
                    let line: Vec<u8> = self.partial.drain(..=end).collect();
                    let needle = br#""type":"decision","#;
                    if line.windows(needle.len()).any(|w| w == needle) {
                        self.decisions += 1;
                    }
                }
            }
        }
        self.decisions
    }
}

/// Swaps `src/sub` of the workspace with symlinks to `targets` until the
/// model's file actions are all logged, then puts the real directory back
/// and tells verify to go on. Returns how many exchanges it made.
fn start_swapper(
    workspace: PathBuf,
    log: PathBuf,
    targets: Vec<PathBuf>,
    actions: usize,
    give_up: Arc<AtomicBool>,
) -> JoinHandle<u64> {
    std::thread::spawn(move || {
        let src = workspace.join("src");
        // The copy of the source is done once its last entry is there.
        let started = Instant::now();
        while !src.join("zz-last.txt").exists() {
            assert!(
                started.elapsed() < Duration::from_secs(60) && !give_up.load(Ordering::Relaxed),
                "the workspace never appeared"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
        let staged: Vec<PathBuf> = targets
            .iter()
            .enumerate()
            .map(|(i, target)| {
                let link = src.join(format!(".swap-{i}"));
                symlink(target, &link).unwrap();
                link
            })
            .collect();
        let sub = src.join("sub");
        let exchange = |a: &Path, b: &Path| {
            renameat_with(CWD, a, CWD, b, RenameFlags::EXCHANGE).unwrap();
        };
        let mut tail = LogTail {
            path: log,
            offset: 0,
            decisions: 0,
            partial: Vec::new(),
        };
        let mut swaps = 0u64;
        loop {
            for link in &staged {
                for _ in 0..64 {
                    // `sub` becomes the symlink, then the directory again.
                    exchange(&sub, link);
                    exchange(&sub, link);
                    swaps += 2;
                }
            }
            // The finish decision is logged before its verify runs.
            if tail.poll() > actions || give_up.load(Ordering::Relaxed) {
                break;
            }
        }
        assert!(fs::symlink_metadata(&sub).unwrap().is_dir());
        for link in &staged {
            fs::remove_file(link).unwrap();
        }
        fs::write(workspace.join(STOPPED), "").unwrap();
        swaps
    })
}

/// How a file action ended, from its observation.
#[derive(Debug, Clone, Copy, Default)]
struct Tally {
    done: usize,
    /// Refused: the path was (or passed through) a symlink, or changed while
    /// it was opened.
    refused: usize,
    /// Failed otherwise (a read of a file whose write was refused).
    failed: usize,
}

impl Tally {
    fn add(&mut self, observation: &str) {
        if observation.contains("symlink") || observation.contains("changed while") {
            self.refused += 1;
        } else if observation.contains(" failed: ") {
            self.failed += 1;
        } else {
            self.done += 1;
        }
    }

    fn total(self) -> usize {
        self.done + self.refused + self.failed
    }
}

#[test]
fn a_directory_swapped_for_a_symlink_never_redirects_a_file_action() {
    let sb = Sandbox::new();
    let root = sb.path();
    let source = root.join("source");
    fs::create_dir_all(source.join("src/sub")).unwrap();
    fs::write(source.join("src/sub/a.txt"), "inside a\n").unwrap();
    fs::write(source.join("src/lib.rs"), "pub fn f() {}\n").unwrap();
    fs::write(source.join("src/zz-last.txt"), "copied last\n").unwrap();
    let outside = root.join("outside");
    fs::create_dir_all(&outside).unwrap();
    fs::write(outside.join("a.txt"), format!("{OUTSIDE_SECRET}\n")).unwrap();
    fs::write(outside.join(OUTSIDE_MARKER), OUTSIDE_SECRET).unwrap();
    let acceptance = root.join("acceptance");
    fs::create_dir_all(&acceptance).unwrap();
    fs::write(acceptance.join("a.txt"), format!("{ACCEPTANCE_SECRET}\n")).unwrap();
    fs::write(acceptance.join(ACCEPTANCE_MARKER), ACCEPTANCE_SECRET).unwrap();
    let (outside_before, acceptance_before) = (tree(&outside), tree(&acceptance));

    let (script_text, actions) = script();
    let script = root.join("race.jsonl");
    fs::write(&script, script_text).unwrap();
    let wait = format!(
        "i=0; while [ ! -e {STOPPED} ]; do i=$((i+1)); [ $i -gt 6000 ] && exit 1; sleep 0.01; done"
    );
    let manifest = root.join(format!("{JOB}.toml"));
    fs::write(
        &manifest,
        format!(
            "prompt = \"Race the runner.\"\nsource = {source:?}\neditable = [\"src/**\"]\n\
             allow = [\"sh **\"]\nverify = [\"sh\", \"-c\", {wait:?}]\ntrace = \"full\"\n\n\
             [acceptance]\ndir = {acceptance:?}\ncommand = [\"true\"]\nbaseline = \"skip\"\n\n\
             [limits]\nattempts = 1\nmax_steps = {steps}\nmax_invalid = {steps}\n\
             wall_time = \"5m\"\ncommand_timeout = \"90s\"\ntoken_budget = 1000000000000\n\n\
             [sandbox]\nmode = \"off\"\n\n\
             [provider]\nkind = \"script\"\nscript = {script:?}\n",
            source = source.to_str().unwrap(),
            acceptance = acceptance.to_str().unwrap(),
            script = script.to_str().unwrap(),
            steps = actions + 10,
        ),
    )
    .unwrap();
    sb.run(&["enqueue", "DATA", "--job", manifest.to_str().unwrap()])
        .ok();

    let give_up = Arc::new(AtomicBool::new(false));
    let swapper = start_swapper(
        sb.data().join("work").join(JOB).join("1"),
        sb.log(),
        vec![outside.clone(), acceptance.clone()],
        actions,
        give_up.clone(),
    );
    let started = Instant::now();
    // Keep the workspace: what was written is checked there afterwards.
    let run = sb.run(&["run", "DATA", JOB, "--keep", "all"]);
    give_up.store(true, Ordering::Relaxed);
    let swaps = swapper.join().unwrap();
    let elapsed = started.elapsed();

    // Nothing outside the workspace changed, byte for byte.
    assert_eq!(tree(&outside), outside_before, "the outside dir changed");
    assert_eq!(
        tree(&acceptance),
        acceptance_before,
        "the acceptance dir changed"
    );
    if run.code != 0 {
        for line in log_lines(&sb) {
            if ["provider_failed", "agent_finished", "patch_rejected"]
                .contains(&line["type"].as_str().unwrap_or(""))
            {
                eprintln!("{line}");
            }
        }
    }
    run.ok().stdout_has("outcome=succeeded");

    // No observation shows anything from outside.
    let transcript = sb.data().join("runs").join(JOB).join("1/transcript.jsonl");
    let transcript = fs::read_to_string(transcript).unwrap();
    let mut counts: BTreeMap<String, Tally> = BTreeMap::new();
    for line in transcript.lines() {
        let entry: serde_json::Value = serde_json::from_str(line).unwrap();
        let Some(observation) = entry["observation"].as_str() else {
            continue;
        };
        for leak in [
            OUTSIDE_SECRET,
            ACCEPTANCE_SECRET,
            OUTSIDE_MARKER,
            ACCEPTANCE_MARKER,
        ] {
            assert!(
                !observation.contains(leak),
                "step {}: the model saw {leak}: {observation}",
                entry["step"]
            );
        }
        let reply: serde_json::Value =
            serde_json::from_str(entry["reply"].as_str().unwrap()).unwrap();
        let kind = reply["kind"].as_str().unwrap().to_string();
        counts.entry(kind).or_default().add(observation);
    }
    let (writes, reads, lists) = (
        counts["write_file"],
        counts["read_file"],
        counts["list_files"],
    );
    assert_eq!(
        (writes.total(), reads.total(), lists.total()),
        (WRITES, READS, LISTS)
    );
    eprintln!(
        "race: {swaps} exchanges in {elapsed:?}; done/refused/failed: write_file {}/{}/{}, \
         read_file {}/{}/{}, list_files {}/{}/{}",
        writes.done,
        writes.refused,
        writes.failed,
        reads.done,
        reads.refused,
        reads.failed,
        lists.done,
        lists.refused,
        lists.failed
    );
    assert_eq!(writes.failed, 0, "{writes:?}");
    // The race was really run: both outcomes happened for writes and reads.
    for (what, t) in [("write_file", writes), ("read_file", reads)] {
        assert!(
            t.done >= 20 && t.refused >= 20,
            "{what}: {t:?}; the swapper did not race the runner"
        );
    }

    // Every write that was done landed in the workspace and is in the log
    // as an edit; the patch carries exactly those files.
    let edits = log_lines(&sb)
        .iter()
        .filter(|l| l["type"] == "edit")
        .count();
    assert_eq!(edits, writes.done);
    let sub = sb.data().join("work").join(JOB).join("1/src/sub");
    let written = fs::read_dir(&sub)
        .unwrap()
        .filter(|e| e.as_ref().unwrap().file_name().as_bytes().starts_with(b"w"))
        .count();
    assert_eq!(written, writes.done);
    let patch = fs::read_to_string(sb.data().join("runs").join(JOB).join("1/patch.diff")).unwrap();
    assert_eq!(patch.matches("+++ b/src/sub/w").count(), written);
}
