//! The next command's process, made ahead while a command runs in the
//! attempt's PID namespace, shows that command nothing from its first
//! instant: it is not in the command's `/proc` at all (`hidepid`), and
//! were it, it would show no argument of the zygote it was cloned from
//! (which names the runner's pid), not the zygote's name, and no list of
//! its descriptors (it is born blank, see the zygote's veil).
//!
//! The attacker knows how the namespace hands out pids: whatever is made
//! after it starts gets one of the next few. It spins on those pids'
//! `/proc` files from its first instruction to its last, so it would read
//! a process made while it runs within microseconds of its clone, and it
//! does so in several commands in a row (a process made ahead during
//! each: the next command runs in it, under its pid).

use super::{ZYGOTE_ARG, attempt_namespace_here, finish_steps, job, run_tool};
use crate::harness::{Sandbox, observations};

/// Spins for `argv[1]` seconds on the next pids; prints its own pid, and
/// what it first and last read of each process that is not its own.
const WATCH: &str = r#"
import os, sys, time
me = os.getpid()
print("ME", me, flush=True)
end = time.monotonic() + float(sys.argv[1])
first, last = {}, {}

def read(path, binary=False):
    try:
        with open(path, "rb" if binary else "r") as f:
            return f.read()
    except OSError:
        return None

def look(pid):
    base = "/proc/%d/" % pid
    cmdline = read(base + "cmdline", True)
    if cmdline is None:
        return None
    comm = (read(base + "comm") or "").strip()
    try:
        fds = sorted(os.listdir(base + "fd"))
    except OSError:
        fds = None
    stat = read(base + "stat") or ""
    try:
        ppid = int(stat[stat.rfind(")") + 2:].split()[1])
    except (ValueError, IndexError):
        ppid = -1
    return (cmdline, comm, fds, ppid)

while time.monotonic() < end:
    for pid in range(me + 1, me + 48):
        seen = look(pid)
        if seen is None or seen[3] == me:
            continue
        first.setdefault(pid, seen)
        last[pid] = seen
for pid in sorted(first):
    for when, (cmdline, comm, fds, _) in (("first", first[pid]), ("last", last[pid])):
        args = cmdline.replace(b"\0", b" ").decode(errors="replace").strip()
        print("SEEN %s pid=%d comm=%s args=[%s] fds=%s" % (when, pid, comm, args, fds), flush=True)
print("WATCHED", len(first), flush=True)
"#;

/// Five commands in a row, each watching for the process made ahead for
/// the one after it; none saw anything of it.
#[test]
fn the_next_commands_process_shows_nothing_from_its_first_instant() {
    let test = "the_next_commands_process_shows_nothing_from_its_first_instant";
    if !attempt_namespace_here(test) {
        return;
    }
    let sb = Sandbox::new();
    let mut steps: Vec<serde_json::Value> = (0..5)
        .map(|_| run_tool("python3", &["watch.py", "1.5"]))
        .collect();
    steps.extend(finish_steps());
    let manifest = job(&sb, &steps);
    std::fs::write(sb.path().join("src-tree/watch.py"), WATCH).unwrap();
    let run = sb.run(&["batch", "DATA", manifest.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{run:#?}");
    let seen = observations(&sb, "zygote", 1);
    let numbers = |prefix: &str| -> Vec<u32> {
        seen.lines()
            .filter_map(|l| l.strip_prefix(prefix)?.trim().parse().ok())
            .collect()
    };
    let (pids, watched) = (numbers("ME "), numbers("WATCHED "));
    assert_eq!((pids.len(), watched.len()), (5, 5), "{seen}");
    // Each command but the first ran in the process made ahead while the
    // one before it watched: its pid is one that one watched.
    for pair in pids.windows(2) {
        assert!(
            pair[1] > pair[0] && pair[1] < pair[0] + 48,
            "not made while watched: {pids:?}\n{seen}"
        );
    }
    let shown: Vec<&str> = seen.lines().filter(|l| l.starts_with("SEEN ")).collect();
    for line in &shown {
        assert!(!line.contains(ZYGOTE_ARG), "the zygote's arguments: {line}");
        assert!(!line.contains("comm=exe "), "the zygote's name: {line}");
    }
    assert!(shown.is_empty(), "in sight of the command: {shown:#?}");
}
