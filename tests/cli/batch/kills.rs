//! Crash recovery under SIGKILL: a batch killed five times at random
//! moments ends like an uninterrupted one, a crash after the agent phase
//! resumes at acceptance, and a killed batch leaves no process running
//! (checked from `/proc`).

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::Child;
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

use super::{
    JobSpec, count, jobs_by_instance, read_json, run_in, spawn_batch, states, wait_until,
    write_jobs,
};
use crate::harness::{Sandbox, log_lines, runs_below};

fn read_log(data: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(data.join("events.log"))
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

// ---------------------------------------------------------------------------
// Processes, from /proc.

/// `(state, ppid, starttime)` of a live process, or `None`.
fn proc_stat(pid: u32) -> Option<(char, u32, u64)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &text[text.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    Some((
        fields.first()?.chars().next()?,
        fields.get(1)?.parse().ok()?,
        fields.get(19)?.parse().ok()?,
    ))
}

fn all_pids() -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect()
}

/// Every descendant of `root` now, as `(pid, starttime)`.
fn descendants(root: u32) -> Vec<(u32, u64)> {
    let table: Vec<(u32, u32, u64)> = all_pids()
        .into_iter()
        .filter_map(|pid| proc_stat(pid).map(|(_, ppid, start)| (pid, ppid, start)))
        .collect();
    let mut found = Vec::new();
    let mut frontier = vec![root];
    while let Some(parent) = frontier.pop() {
        for &(pid, ppid, start) in &table {
            if ppid == parent && !found.iter().any(|&(p, _)| p == pid) {
                found.push((pid, start));
                frontier.push(pid);
            }
        }
    }
    found
}

/// Whether the process `(pid, starttime)` still runs (zombies are dead: a
/// container's init may never reap what it inherits).
fn still_running(pid: u32, start: u64) -> bool {
    proc_stat(pid).is_some_and(|(state, _, s)| s == start && !matches!(state, 'Z' | 'X'))
}

/// Processes (not zombies) whose working directory is inside `dir`.
fn running_inside(dir: &Path) -> Vec<(u32, PathBuf)> {
    let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    all_pids()
        .into_iter()
        .filter_map(|pid| {
            let cwd = std::fs::read_link(format!("/proc/{pid}/cwd")).ok()?;
            let (state, _, _) = proc_stat(pid)?;
            (cwd.starts_with(&dir) && !matches!(state, 'Z' | 'X')).then_some((pid, cwd))
        })
        .collect()
}

/// SIGKILLs `child`, reaps it, and asserts that none of `tree` (its
/// descendants just before the kill) and nothing working inside `data`
/// is left running after a grace.
fn kill_and_check_no_leftovers(child: &mut Child, tree: &[(u32, u64)], data: &Path) {
    kill(Pid::from_raw(child.id() as i32), Signal::SIGKILL).unwrap();
    child.wait().unwrap();
    // The zygote rests as SCHED_IDLE: on a machine busy with other work
    // its own exit may wait seconds for a CPU. Gone is what counts.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let left: Vec<_> = tree
            .iter()
            .filter(|&&(pid, start)| still_running(pid, start))
            .collect();
        let inside = running_inside(data);
        if left.is_empty() && inside.is_empty() {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "processes of the killed batch are still running: {left:?} {inside:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

// ---------------------------------------------------------------------------
// Reports.

/// The part of a job's `results.json` row that a crash must not change:
/// everything except times, counters summed over attempts (interrupted
/// attempts count, so attempts, steps, tokens and calls may grow) and the
/// timeline of earlier attempts. The final attempt's decisions and agent
/// verdict are kept.
fn comparable_job(job: &serde_json::Value) -> serde_json::Value {
    let timeline = job["timeline"].as_array().unwrap();
    let last = timeline
        .iter()
        .filter_map(|e| e["attempt"].as_u64())
        .max()
        .unwrap_or(0);
    let of_last: Vec<&serde_json::Value> = timeline
        .iter()
        .filter(|e| e["attempt"].as_u64() == Some(last))
        .collect();
    // The commands of a phase the attempt was interrupted in: the resumed
    // attempt runs that phase again (a kill between an acceptance
    // command's event and the phase's own).
    let unfinished = |at: usize| {
        of_last[at]["kind"] == "command"
            && of_last[at + 1..]
                .iter()
                .find(|e| e["kind"] != "command")
                .is_some_and(|e| e["kind"] == "interrupted")
    };
    let final_attempt: Vec<serde_json::Value> = of_last
        .iter()
        .enumerate()
        .filter(|(at, _)| !unfinished(*at))
        .map(|(_, e)| *e)
        .filter(|e| {
            !matches!(
                e["kind"].as_str(),
                Some("attempt" | "interrupted" | "baseline")
            )
        })
        .filter(|e| {
            e["kind"] != "command" || !e["detail"].as_str().unwrap().starts_with("baseline")
        })
        .map(|e| {
            // Details of decisions and commands carry latencies; keep them
            // only for the agent verdict and the phases.
            let detail = match e["kind"].as_str() {
                Some("agent" | "patch" | "acceptance" | "edit") => e["detail"].clone(),
                _ => serde_json::Value::Null,
            };
            serde_json::json!({
                "step": e["step"], "kind": e["kind"], "ok": e["ok"], "detail": detail,
            })
        })
        .collect();
    // The agent verdict's step is the number of provider calls it made.
    let steps = final_attempt
        .iter()
        .find(|e| e["kind"] == "agent")
        .map(|e| e["step"].clone());
    serde_json::json!({
        "instance": job["instance"],
        "job": job["job"],
        "family": job["family"],
        "provider": job["provider"],
        "repeat": job["repeat"],
        "outcome": job["outcome"],
        "failure_kind": job["failure_kind"],
        "max_attempts": job["max_attempts"],
        "patch_bytes": job["patch_bytes"],
        "patch_files": job["patch_files"],
        "patch": job["patch"],
        "acceptance": job["acceptance"],
        "baseline": job["baseline"],
        "final_attempt_steps": steps,
        "final_attempt": final_attempt,
    })
}

/// Outcome counts of a tally (`totals` or a family's), without sums that include interrupted attempts.
fn outcome_totals(t: &serde_json::Value) -> serde_json::Value {
    serde_json::json!([
        t["jobs"],
        t["succeeded"],
        t["failed"],
        t["cancelled"],
        t["pending"],
        t["pass_rate"]
    ])
}

// ---------------------------------------------------------------------------
// Crash test.

/// A tiny deterministic PRNG (xorshift64*), so kill moments are random but
/// the same on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn between(&mut self, low: u64, high: u64) -> u64 {
        low + self.next() % (high - low)
    }
}

/// 30 cheap jobs: most edit, verify (`sleep 0.2`, so kills land mid-run)
/// and finish; some add an acceptance phase that passes, fails, or takes a
/// while; a few fail on purpose with `no_edit`.
///
/// Jobs that should succeed get 8 attempts: 5 kills can interrupt at most 5
/// of them, so they always end with a real verdict. Jobs that fail on
/// purpose use all their attempts in any run, so a kill that lands in their
/// last attempt legitimately ends them `interrupted` (an interrupted attempt
/// counts); `crash_test` allows exactly that difference.
fn crash_jobs() -> Vec<JobSpec> {
    const VERIFY: &[&str] = &["sleep", "0.2"];
    let mut jobs = Vec::new();
    for i in 0..30 {
        let id = format!("job{i:02}");
        let job = match i % 10 {
            3 => JobSpec::new(id, "write_verify_finish.jsonl")
                .family("accepted")
                .acceptance(&["test", "-f", "out.txt"], "must_fail"),
            6 => JobSpec::new(id, "write_verify_finish.jsonl")
                .family("slow_acceptance")
                .acceptance(&["sleep", "0.3"], "skip"),
            9 if i == 9 => JobSpec::new(id, "write_verify_finish.jsonl")
                .family("rejected")
                .verify(&["true"])
                .acceptance(&["false"], "skip")
                .attempts(1),
            9 => JobSpec::new(id, "no_edit.jsonl")
                .family("no_edit")
                .verify(&["true"])
                .attempts(1),
            _ => JobSpec::new(id, "write_verify_finish.jsonl").family("plain"),
        };
        jobs.push(if job.family == "rejected" || job.family == "no_edit" {
            job
        } else {
            job.verify(VERIFY).attempts(8)
        });
    }
    jobs
}

#[test]
fn a_batch_killed_five_times_ends_like_an_uninterrupted_one() {
    let sb = Sandbox::new();
    let jobs_dir = write_jobs(&sb.path().join("jobs"), &crash_jobs());
    let (crashed, reference) = (sb.path().join("crashed"), sb.path().join("reference"));
    let args = |data: &Path, report: &str| -> Vec<String> {
        vec![
            "batch".into(),
            data.to_str().unwrap().into(),
            jobs_dir.to_str().unwrap().into(),
            "-j".into(),
            "4".into(),
            "--report".into(),
            sb.path().join(report).to_str().unwrap().into(),
        ]
    };
    let crashed_args = args(&crashed, "crashed-report");
    let crashed_args: Vec<&str> = crashed_args.iter().map(String::as_str).collect();

    let mut rng = Rng(0x5EED_BA7C_0FFE_E123);
    let mut kills_landed = 0;
    for round in 0..5 {
        let delay = Duration::from_millis(rng.between(150, 900));
        let mut child = spawn_batch(sb.path(), &crashed_args, &format!("kill{round}"));
        let started = Instant::now();
        // Sample the process tree while waiting, so the last sample is
        // taken just before the kill.
        let mut tree = Vec::new();
        let mut exited = false;
        while started.elapsed() < delay {
            if child.try_wait().unwrap().is_some() {
                exited = true;
                break;
            }
            tree = descendants(child.id());
            std::thread::sleep(Duration::from_millis(10));
        }
        if exited {
            // The machine was fast enough to finish first; later rounds
            // and the log assertions still show whether kills landed.
            continue;
        }
        kill_and_check_no_leftovers(&mut child, &tree, &crashed);
        kills_landed += 1;
    }
    assert!(
        kills_landed >= 1,
        "no kill landed before the batch finished"
    );

    let last = run_in(sb.path(), &crashed_args, &[]);
    assert!(
        last.code == 0 || last.code == 1,
        "the final run must finish: {last:#?}"
    );
    let reference_args = args(&reference, "reference-report");
    let reference_args: Vec<&str> = reference_args.iter().map(String::as_str).collect();
    let uninterrupted = run_in(sb.path(), &reference_args, &[]);
    assert_eq!(
        last.code, uninterrupted.code,
        "final run and uninterrupted run disagree:\n{last:#?}\n{uninterrupted:#?}"
    );

    // Every job terminal exactly once in the final replay.
    let final_states = states(sb.path(), &crashed);
    assert_eq!(final_states.len(), 30, "{final_states:?}");
    for (id, state) in &final_states {
        assert!(
            matches!(state.as_str(), "succeeded" | "failed"),
            "{id} is {state} after the final run"
        );
    }
    let lines = read_log(&crashed);
    for id in final_states.keys() {
        let finished = lines
            .iter()
            .filter(|l| l["job"] == id.as_str() && l["type"] == "attempt_finished")
            .count();
        let failed_by_interrupt = lines.iter().any(|l| {
            l["job"] == id.as_str()
                && l["type"] == "attempt_interrupted"
                && final_states[id] == "failed"
        });
        assert!(
            finished >= 1 || failed_by_interrupt,
            "{id} never finished an attempt"
        );
        let succeeded = lines
            .iter()
            .filter(|l| {
                l["job"] == id.as_str()
                    && l["type"] == "attempt_finished"
                    && l["outcome"] == "succeeded"
            })
            .count();
        assert_eq!(
            succeeded,
            usize::from(final_states[id] == "succeeded"),
            "{id} succeeded {succeeded} times"
        );
    }

    // No finished agent phase ran twice: at most one agent_finished per
    // attempt, and no decision of that attempt after it.
    let mut agent_done: HashMap<(String, u64), u64> = HashMap::new();
    for line in &lines {
        let (Some(job), Some(attempt)) = (line["job"].as_str(), line["attempt"].as_u64()) else {
            continue;
        };
        let key = (job.to_string(), attempt);
        match line["type"].as_str() {
            Some("agent_finished") => {
                let seq = line["seq"].as_u64().unwrap();
                assert!(
                    agent_done.insert(key.clone(), seq).is_none(),
                    "agent phase of {key:?} finished twice"
                );
            }
            Some("decision") => assert!(
                !agent_done.contains_key(&key),
                "decision of {key:?} after its agent phase finished: {line}"
            ),
            _ => {}
        }
    }
    let interrupted: Vec<&serde_json::Value> = lines
        .iter()
        .filter(|l| l["type"] == "attempt_interrupted")
        .collect();
    assert!(
        !interrupted.is_empty(),
        "no kill landed mid-attempt ({kills_landed} kills)"
    );

    // The final report equals the uninterrupted one apart from times and
    // what interrupted attempts add.
    let crashed_results = read_json(&sb.path().join("crashed-report/results.json"));
    let reference_results = read_json(&sb.path().join("reference-report/results.json"));
    let (crashed_jobs, reference_jobs) = (
        jobs_by_instance(&crashed_results),
        jobs_by_instance(&reference_results),
    );
    assert_eq!(
        crashed_jobs.keys().collect::<Vec<_>>(),
        reference_jobs.keys().collect::<Vec<_>>()
    );
    let mut exhausted_by_kills = BTreeSet::new();
    for (id, job) in &crashed_jobs {
        let expected = comparable_job(&reference_jobs[id]);
        let got = comparable_job(job);
        if got == expected {
            continue;
        }
        // Allowed: a job meant to fail whose last allowed attempt was killed
        // ends `interrupted`, because an interrupted attempt counts.
        let last_killed = interrupted.iter().any(|l| {
            l["job"] == id.as_str() && l["attempt"] == job["max_attempts"] && l["by_runner"] != true
        });
        if expected["outcome"] == "failed"
            && got["outcome"] == "failed"
            && got["failure_kind"] == "interrupted"
            && last_killed
        {
            exhausted_by_kills.insert(id.clone());
            continue;
        }
        let events: Vec<&serde_json::Value> =
            lines.iter().filter(|l| l["job"] == id.as_str()).collect();
        panic!(
            "{id} differs after the crashes:\n crashed:   {got:#}\n reference: {expected:#}\n events: {events:#?}"
        );
    }
    // Jobs exhausted by kills failed in both runs, so the outcome counts
    // agree whatever the kills hit.
    assert_eq!(
        outcome_totals(&crashed_results["totals"]),
        outcome_totals(&reference_results["totals"])
    );
    let family_rates = |results: &serde_json::Value| -> Vec<serde_json::Value> {
        results["families"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| serde_json::json!([f["family"], outcome_totals(f)]))
            .collect()
    };
    assert_eq!(
        family_rates(&crashed_results),
        family_rates(&reference_results)
    );
    let mut started = BTreeSet::new();
    let resumed = lines
        .iter()
        .filter(|l| l["type"] == "attempt_started")
        .filter(|l| !started.insert((l["job"].to_string(), l["attempt"].to_string())))
        .count();
    eprintln!(
        "crash test: {kills_landed} kills landed, {} attempts interrupted, {resumed} resumed after their agent phase, exhausted by kills: {exhausted_by_kills:?}",
        interrupted.len()
    );
}

#[test]
fn a_crash_after_the_agent_finished_resumes_at_acceptance() {
    let sb = Sandbox::new();
    let jobs = write_jobs(
        &sb.path().join("jobs"),
        &[JobSpec::new("slow_accept", "write_verify_finish.jsonl")
            .acceptance(&["sleep", "3"], "skip")
            .attempts(1)],
    );
    let data = sb.data();
    let args = ["batch", data.to_str().unwrap(), jobs.to_str().unwrap()];
    let mut child = spawn_batch(sb.path(), &args, "first");
    wait_until(Duration::from_secs(60), "the patch event", || {
        log_lines(&sb).iter().any(|l| l["type"] == "patch")
    });
    // The kill lands while acceptance (`sleep 3`) runs.
    wait_until(Duration::from_secs(60), "the acceptance command", || {
        runs_below(child.id(), "sleep")
    });
    let tree = descendants(child.id());
    kill_and_check_no_leftovers(&mut child, &tree, &data);

    let rerun = run_in(sb.path(), &args, &[]);
    rerun.ok();
    let lines = log_lines(&sb);
    assert_eq!(
        count(&lines, "agent_finished"),
        1,
        "the agent phase ran again"
    );
    assert_eq!(count(&lines, "patch"), 1, "the patch was recorded again");
    let starts: Vec<_> = lines
        .iter()
        .filter(|l| l["type"] == "attempt_started")
        .map(|l| l["attempt"].as_u64())
        .collect();
    assert_eq!(starts, vec![Some(1), Some(1)], "the same attempt resumes");
    let decisions_after_agent = lines
        .iter()
        .skip_while(|l| l["type"] != "agent_finished")
        .filter(|l| l["type"] == "decision")
        .count();
    assert_eq!(decisions_after_agent, 0);
    assert_eq!(
        lines
            .iter()
            .filter(|l| l["type"] == "acceptance")
            .map(|l| l["result"].clone())
            .collect::<Vec<_>>(),
        vec![serde_json::json!("passed")]
    );
    assert_eq!(states(sb.path(), &data)["slow_accept"], "succeeded");
}

#[test]
fn a_killed_batch_leaves_no_process_running() {
    let sb = Sandbox::new();
    let jobs = write_jobs(
        &sb.path().join("jobs"),
        &[JobSpec::new("hang", "hang.jsonl")],
    );
    let data = sb.data();
    let args = ["batch", data.to_str().unwrap(), jobs.to_str().unwrap()];
    let mut child = spawn_batch(sb.path(), &args, "hang");
    wait_until(Duration::from_secs(60), "the sleep 30 tool command", || {
        runs_below(child.id(), "sleep")
    });
    let tree = descendants(child.id());
    assert!(
        !running_inside(&data).is_empty(),
        "the tool runs in the workspace"
    );
    kill_and_check_no_leftovers(&mut child, &tree, &data);
}
