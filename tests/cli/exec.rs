//! The executor through `agent-runtime exec` (and, where a test needs a
//! second thread, through the library).

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use agent_runtime::cancel::CancelToken;
use agent_runtime::exec::{AllowList, ExecError, ExecRequest, Refusal, run};

fn exec(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_agent-runtime"))
        .arg("exec")
        .arg("--workspace")
        .arg(dir)
        .args(args)
        .output()
        .unwrap()
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The value of a `key=value` line of `exec`'s report.
fn field(out: &Output, key: &str) -> String {
    let prefix = format!("{key}=");
    stdout(out)
        .lines()
        .find_map(|line| line.strip_prefix(&prefix).map(str::to_string))
        .unwrap_or_else(|| panic!("no {key}= in:\n{}", stdout(out)))
}

/// Pids of live (not zombie) processes whose process group is `pgid`.
fn group_alive(pgid: i32) -> Vec<i32> {
    let mut alive = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<i32>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let Some(close) = stat.rfind(')') else {
            continue;
        };
        let fields: Vec<&str> = stat[close + 1..].split_whitespace().collect();
        if fields.get(2).and_then(|g| g.parse::<i32>().ok()) == Some(pgid) && fields[0] != "Z" {
            alive.push(pid);
        }
    }
    alive
}

fn read_pid(path: &Path) -> i32 {
    std::fs::read_to_string(path)
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

#[test]
fn disallowed_arguments_are_refused_before_spawning() {
    let dir = tempfile::tempdir().unwrap();
    let out = exec(dir.path(), &["--allow", "touch a", "--", "touch", "b"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("`touch b` does not match any allow rule (touch a)"),
        "{err}"
    );
    assert!(!dir.path().join("b").exists());

    let out = exec(
        dir.path(),
        &["--allow", "cargo test **", "--", "cargo", "install", "x"],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("`cargo install` does not match"));
    assert!(!stdout(&out).contains("program="));
}

#[test]
fn a_program_given_as_a_path_is_refused_before_spawning() {
    let dir = tempfile::tempdir().unwrap();
    for allow in [&["--allow", "*"][..], &[]] {
        let mut args = allow.to_vec();
        args.extend(["--", "/bin/sh", "-c", "touch pwned"]);
        let out = exec(dir.path(), &args);
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("program must be a name, not a path: /bin/sh"),
            "{err}"
        );
        assert!(!dir.path().join("pwned").exists());
    }
}

#[test]
fn exit_codes_follow_the_command() {
    let dir = tempfile::tempdir().unwrap();
    let ok = exec(dir.path(), &["--", "true"]);
    assert_eq!(ok.status.code(), Some(0));
    assert_eq!(field(&ok, "exit"), "0");
    assert_eq!(field(&ok, "resolved"), "/usr/bin/true");
    let failed = exec(dir.path(), &["--", "false"]);
    assert_eq!(failed.status.code(), Some(1));
    assert_eq!(field(&failed, "exit"), "1");
    let missing = exec(dir.path(), &["--", "no-such-program-anywhere"]);
    assert_eq!(missing.status.code(), Some(2));
}

#[test]
fn timeout_kills_the_whole_group_quickly() {
    let dir = tempfile::tempdir().unwrap();
    let start = Instant::now();
    let out = exec(
        dir.path(),
        &[
            "--timeout",
            "1s",
            "--",
            "sh",
            "-c",
            "echo $$ > leader; sleep 100 & sleep 100",
        ],
    );
    let elapsed = start.elapsed();
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert_eq!(field(&out, "timed_out"), "true");
    assert_eq!(field(&out, "signal"), "15");
    assert!(elapsed < Duration::from_secs(2), "took {elapsed:?}");
    let leader = read_pid(&dir.path().join("leader"));
    assert_eq!(group_alive(leader), Vec::<i32>::new());
}

#[test]
fn leftovers_in_the_group_are_killed_after_the_leader_exits() {
    let dir = tempfile::tempdir().unwrap();
    let out = exec(
        dir.path(),
        &[
            "--",
            "sh",
            "-c",
            "echo $$ > leader; sleep 100 & echo started",
        ],
    );
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(field(&out, "leaked"), "true");
    assert!(stdout(&out).contains("started"));
    let leader = read_pid(&dir.path().join("leader"));
    // SIGKILL was sent before the leader was reaped; give the kernel a
    // moment to finish tearing the sleeper down.
    let deadline = Instant::now() + Duration::from_secs(5);
    while !group_alive(leader).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(group_alive(leader), Vec::<i32>::new());
}

/// Without a PID namespace of its own, a command's leftovers are found in
/// its cgroup, before its group is killed: a daemon that left the group
/// (`setsid`) and one that stayed are both reported and both die; a
/// command that leaves nothing is not reported.
#[test]
fn without_a_pid_namespace_the_cgroup_tells_what_outlived_the_command() {
    use agent_runtime::sandbox::{TEST_HOOKS_ENV, cgroup_support, test_hooks};
    use agent_runtime_test_support::{Need, skip};
    let test = "without_a_pid_namespace_the_cgroup_tells_what_outlived_the_command";
    if test_hooks().is_none() {
        skip(
            Need::Layer,
            test,
            "the test hooks are compiled out of this build",
        );
        return;
    }
    if let Err(why) = cgroup_support() {
        skip(Need::Layer, test, &format!("no cgroups: {why}"));
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let run = |line: &str| {
        Command::new(env!("CARGO_BIN_EXE_agent-runtime"))
            .env(TEST_HOOKS_ENV, "namespaces")
            .args(["exec", "--allow", "sh **", "--workspace"])
            .arg(dir.path())
            .args(["--", "sh", "-c", line])
            .output()
            .unwrap()
    };
    let marker = format!("{}", 700_000 + std::process::id() % 90_000);
    let out = run(&format!(
        "setsid sleep {marker}.1 & sleep {marker}.2 & echo started"
    ));
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    let layers = field(&out, "sandbox");
    assert!(layers.contains("cgroup"), "{layers}");
    assert!(!layers.contains("pidns"), "{layers}");
    assert_eq!(field(&out, "leaked"), "true", "{}", stdout(&out));
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let alive = crate::harness::alive_with(&format!("sleep {marker}"));
        if alive.is_empty() {
            break;
        }
        assert!(Instant::now() < deadline, "survived: {alive:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = run("echo clean");
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert_eq!(field(&out, "leaked"), "false", "{}", stdout(&out));
}

#[test]
fn a_gibibyte_of_output_stays_in_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    let out = exec(
        dir.path(),
        &[
            "--output-cap",
            "64KiB",
            "--",
            "dd",
            "if=/dev/zero",
            "bs=1M",
            "count=1024",
            "status=none",
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(field(&out, "stdout_bytes"), "1073741824");
    assert_eq!(field(&out, "truncated"), "true");
    let rss: u64 = field(&out, "peak_rss_kib").parse().unwrap();
    eprintln!("peak RSS of the runtime with 1 GiB of output: {rss} KiB");
    assert!(rss < 50 * 1024, "peak RSS {rss} KiB");
    let marker = format!("[... {} bytes omitted ...]", (1u64 << 30) - 64 * 1024);
    assert!(stdout(&out).contains(&marker));
}

#[test]
fn small_output_is_reported_whole() {
    let dir = tempfile::tempdir().unwrap();
    let out = exec(dir.path(), &["--", "sh", "-c", "echo out; echo err >&2"]);
    assert_eq!(field(&out, "stdout_bytes"), "4");
    assert_eq!(field(&out, "stderr_bytes"), "4");
    assert_eq!(field(&out, "truncated"), "false");
    assert!(stdout(&out).ends_with("--- stdout ---\nout\n--- stderr ---\nerr\n"));
}

#[test]
fn the_environment_is_scrubbed_and_stdin_is_null() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_agent-runtime"))
        .args(["exec", "--env", "JOB_KEY=1", "--workspace"])
        .arg(dir.path())
        .args(["--", "sh", "-c", "env; cat"])
        .env("OPENAI_API_KEY", "sk-secret")
        .env("AWS_SECRET_ACCESS_KEY", "secret")
        .output()
        .unwrap();
    let text = stdout(&out);
    assert!(!text.contains("secret"), "{text}");
    assert!(text.contains("JOB_KEY=1"));
    assert!(text.contains("LANG=C.UTF-8"));
    let home = text.lines().find_map(|l| l.strip_prefix("HOME=")).unwrap();
    // A fresh directory on the host, or a fresh tmpfs inside the
    // command's own root.
    assert!(
        home.ends_with("/home")
            && (home.contains("agent-runtime-exec-") || home == "/tmp/scratch/home"),
        "{home}"
    );
    // `cat` read /dev/null: no input, immediate end of file.
    assert_eq!(out.status.code(), Some(0));
}

fn request(dir: &Path, argv: &[&str]) -> ExecRequest {
    let argv: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
    let allow = AllowList::program_any_args(&argv[0]).unwrap();
    ExecRequest::new(argv, allow, dir.to_path_buf())
}

#[test]
fn cancel_from_another_thread_kills_the_group_promptly() {
    let dir = tempfile::tempdir().unwrap();
    // Both the shell and its sleeper ignore SIGTERM, so only SIGKILL works.
    let req = request(
        dir.path(),
        &[
            "sh",
            "-c",
            "trap '' TERM; echo $$ > leader; sleep 100 & sleep 100",
        ],
    );
    let cancel = CancelToken::new();
    let canceller = {
        let cancel = cancel.clone();
        let leader = dir.path().join("leader");
        std::thread::spawn(move || {
            let deadline = Instant::now() + Duration::from_secs(10);
            while !leader.exists() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(5));
            }
            let at = Instant::now();
            cancel.cancel();
            at
        })
    };
    let outcome = run(&req, &cancel).unwrap();
    let returned = Instant::now();
    let cancelled_at = canceller.join().unwrap();
    let latency = returned - cancelled_at;
    eprintln!("cancel to return: {latency:?}");
    assert!(outcome.cancelled);
    assert_eq!(outcome.signal, Some(9));
    // The bound is 200 ms by design (100 ms grace); leave room for a busy machine.
    assert!(latency < Duration::from_secs(1), "took {latency:?}");
    let leader = read_pid(&dir.path().join("leader"));
    assert_eq!(group_alive(leader), Vec::<i32>::new());
}

#[test]
fn the_working_directory_must_be_inside_the_workspace() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    let mut req = request(&ws, &["true"]);
    req.cwd = ws.join("..");
    let err = run(&req, &CancelToken::new()).unwrap_err();
    assert!(
        matches!(err, ExecError::CwdOutsideWorkspace { .. }),
        "{err}"
    );
}

#[test]
fn the_library_refuses_what_the_rules_do_not_allow() {
    let dir = tempfile::tempdir().unwrap();
    let mut req = request(dir.path(), &["cargo", "install", "x"]);
    req.allow = AllowList::parse(&["cargo test **".to_string()]).unwrap();
    let err = run(&req, &CancelToken::new()).unwrap_err();
    assert!(matches!(err, ExecError::Refused(Refusal::NoMatch { .. })));
    assert_eq!(err.kind(), "refused");
}

#[test]
fn a_pipe_held_by_an_escaped_process_is_drained_for_a_bounded_time() {
    if !Path::new("/usr/bin/setsid").exists() {
        agent_runtime_test_support::skip(
            agent_runtime_test_support::Need::Tool,
            "a_pipe_held_by_an_escaped_process_is_drained_for_a_bounded_time",
            "no setsid",
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // The sleeper leaves the group (new session) but keeps stdout open.
    // Without the sandbox nothing kills it (with it, the PID namespace
    // does: see containment.rs), so the drain must give up by itself.
    let start = Instant::now();
    let out = exec(
        dir.path(),
        // The pause lets the sleeper leave the group before the leader exits.
        &[
            "--sandbox",
            "off",
            "--",
            "sh",
            "-c",
            "setsid sleep 5 & sleep 0.5; echo done",
        ],
    );
    let elapsed = start.elapsed();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(field(&out, "drain_timed_out"), "true");
    assert!(stdout(&out).contains("done"));
    assert!(elapsed < Duration::from_secs(4), "took {elapsed:?}");
}

#[test]
fn memory_and_processes_options_are_checked_and_oom_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let out = exec(
        dir.path(),
        &["--memory", "256MiB", "--processes", "32", "--", "true"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert_eq!(field(&out, "oom"), "false");
    for (args, why) in [
        (["--processes", "0"], "--processes"),
        (["--processes", "4194305"], "--processes"),
        (["--memory", "512KiB"], "must be at least 1MiB"),
        (["--memory", "0"], "must be at least 1MiB"),
        (["--memory", "4GB"], "invalid size"),
    ] {
        let out = exec(dir.path(), &[args[0], args[1], "--", "true"]);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(why), "{args:?}: {err}");
    }
}
