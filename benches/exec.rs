//! Executor timings: how fast a timed-out group returns, how fast a cancel
//! kills a group that ignores SIGTERM, and the runtime's peak RSS while a
//! child prints 1 GiB. Prints one summary line.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use agent_runtime::cancel::CancelToken;
use agent_runtime::exec::{AllowList, ExecRequest, run};
use agent_runtime::sandbox::SandboxMode;
use agent_runtime::zygote::Zygote;

/// Spawns per figure of the spawn-cost line.
const SPAWNS: usize = 201;

fn request(dir: &std::path::Path, argv: &[&str], timeout: Duration) -> ExecRequest {
    let argv: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
    let allow = AllowList::program_any_args(&argv[0]).unwrap();
    let mut req = ExecRequest::new(argv, allow, dir.to_path_buf());
    req.timeout = timeout;
    req
}

/// Median microseconds of each of `runs`, run in turn `SPAWNS` times
/// (interleaved, so a machine that slows down mid-run slows the figures
/// alike and their ratios hold).
fn medians_us<const N: usize>(runs: &mut [&mut dyn FnMut(); N]) -> [u128; N] {
    let mut times: Vec<Vec<u128>> = vec![Vec::with_capacity(SPAWNS); N];
    for _ in 0..SPAWNS {
        for (run, times) in runs.iter_mut().zip(&mut times) {
            let start = Instant::now();
            run();
            times.push(start.elapsed().as_micros());
        }
    }
    times
        .iter_mut()
        .map(|times| {
            times.sort_unstable();
            times[times.len() / 2]
        })
        .collect::<Vec<_>>()
        .try_into()
        .unwrap()
}

/// The spawn costs of `/bin/true`, in microseconds.
struct SpawnCosts {
    bare: u128,
    /// Through the executor, no sandbox.
    executor: u128,
    /// Every layer `auto` finds, started from a zygote (as attempts do).
    sandboxed: u128,
    /// The same, forked by this process itself.
    direct: u128,
}

/// `/bin/true` spawned bare, through the executor without a sandbox, and
/// through the executor with every layer `auto` finds, from a zygote and
/// directly.
fn spawn_costs(dir: &std::path::Path) -> SpawnCosts {
    let cancel = CancelToken::new();
    let mut off = request(dir, &["true"], Duration::from_secs(10));
    off.sandbox.mode = SandboxMode::Off;
    let mut direct = request(dir, &["true"], Duration::from_secs(10));
    direct.sandbox.mode = SandboxMode::Auto;
    let mut zygote = direct.clone();
    zygote.zygote = Some(Arc::new(Zygote::start().unwrap()));
    let [bare, executor] = medians_us(&mut [
        &mut || assert!(Command::new("/bin/true").status().unwrap().success()),
        &mut || assert!(run(&off, &cancel).unwrap().success()),
    ]);
    // Each sandboxed figure apart: a command's namespaces are torn down
    // after it is reaped, work that would slow the figures beside it
    // (and, for a fork of a large runner, its copy's teardown).
    let [sandboxed] = medians_us(&mut [&mut || {
        let outcome = run(&zygote, &cancel).unwrap();
        assert!(outcome.success());
        assert!(outcome.sandbox_layers.iter().any(|l| l == "zygote"));
    }]);
    let [direct] = medians_us(&mut [&mut || assert!(run(&direct, &cancel).unwrap().success())]);
    SpawnCosts {
        bare,
        executor,
        sandboxed,
        direct,
    }
}

/// The kernel's own price of `/bin/true` in namespaces of its own, run
/// by `floor` from this process while it is small: in PID, mount and IPC
/// namespaces (`sandbox::run_in_fresh_namespaces`), or in a copy of the
/// mount namespace and an IPC namespace with `/proc` and a scratch tmpfs
/// mounted (`sandbox::run_in_fresh_mount_namespace`, what a command in the
/// attempt's PID namespace gets of its own): no such sandboxed spawn costs
/// less. Median microseconds, or `None` where the namespaces cannot be
/// made.
fn floor_us(floor: fn(&std::ffi::CStr) -> std::io::Result<bool>) -> Option<u128> {
    floor(c"/bin/true").ok()?;
    let [us] = medians_us(&mut [&mut || assert!(floor(c"/bin/true").unwrap())]);
    Some(us)
}

/// Heap a sweep's runner holds at 4,000 jobs, touched so it is mapped.
const BALLAST_MB: usize = 150;

fn main() {
    // The zygote is this binary again.
    if let Some(code) = agent_runtime::zygote::serve_if_asked() {
        std::process::exit(if code == std::process::ExitCode::SUCCESS {
            0
        } else {
            1
        });
    }
    let dir = tempfile::tempdir().unwrap();
    let small = spawn_costs(dir.path());
    let floor = floor_us(agent_runtime::sandbox::run_in_fresh_namespaces);
    let mount_floor = floor_us(agent_runtime::sandbox::run_in_fresh_mount_namespace);
    let ballast: Vec<u8> = vec![1; BALLAST_MB << 20];
    let big = spawn_costs(dir.path());
    drop(std::hint::black_box(ballast));

    let req = request(
        dir.path(),
        &["sh", "-c", "sleep 100 & sleep 100"],
        Duration::from_secs(1),
    );
    let start = Instant::now();
    let outcome = run(&req, &CancelToken::new()).unwrap();
    let timeout_return = start.elapsed();
    assert!(outcome.timed_out);

    let req = request(
        dir.path(),
        &["sh", "-c", "trap '' TERM; sleep 100 & sleep 100"],
        Duration::from_secs(60),
    );
    let cancel = CancelToken::new();
    let trigger = cancel.clone();
    let canceller = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        trigger.cancel();
        Instant::now()
    });
    let outcome = run(&req, &cancel).unwrap();
    let cancel_latency = Instant::now() - canceller.join().unwrap();
    assert!(outcome.cancelled);

    let out = Command::new(env!("CARGO_BIN_EXE_agent-runtime"))
        .args(["exec", "--output-cap", "64KiB", "--workspace"])
        .arg(dir.path())
        .args([
            "--",
            "dd",
            "if=/dev/zero",
            "bs=1M",
            "count=1024",
            "status=none",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let field = |key: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(key))
            .unwrap_or("?")
            .to_string()
    };
    println!(
        "BENCH exec timeout_return_ms={} cancel_kill_ms={} peak_rss_kib_1gib={} output_1gib_ms={}",
        timeout_return.as_millis(),
        cancel_latency.as_millis(),
        field("peak_rss_kib="),
        field("duration_ms="),
    );
    println!(
        "BENCH exec bare_us={} executor_us={} sandboxed_us={} sandboxed_direct_us={} \
         namespace_floor_us={} mount_floor_us={} ballast_mb={BALLAST_MB} bare_us_ballast={} executor_us_ballast={} \
         sandboxed_us_ballast={} sandboxed_direct_us_ballast={}",
        small.bare,
        small.executor,
        small.sandboxed,
        small.direct,
        floor.map_or_else(|| "NA".to_string(), |us| us.to_string()),
        mount_floor.map_or_else(|| "NA".to_string(), |us| us.to_string()),
        big.bare,
        big.executor,
        big.sandboxed,
        big.direct,
    );
}
