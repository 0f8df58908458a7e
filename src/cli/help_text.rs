//! What every command's `--help` ends with: examples (the README's
//! commands where it has them) and every exit code the command can give.
//! The codes are those of `exit.rs`.

pub(super) const DEMO: &str = "Examples:
  agent-runtime demo                                       the bundled jobs, offline, nothing left behind
  agent-runtime demo --keep                                keep the data dir and report.html; prints where
  agent-runtime demo -j 2 --jobs my-jobs/                  your own manifests with their scripted providers

Exit codes:
  0    every job ended as the demo expects (the one that fails on purpose failed)
  1    a job did not end as expected
  2    usage error, or a manifest of --jobs is invalid (nothing is run)
  130  interrupted by Ctrl-C";

pub(super) const BATCH: &str = "Examples:
  agent-runtime batch ./runtime-data jobs/ -j 4            reports in ./runtime-data/report/
  agent-runtime batch ./runtime-data jobs/ -j 4            again: finished jobs are skipped
  agent-runtime batch ./runtime-data jobs/ --replace       after editing a manifest: its jobs run again
  agent-runtime batch ./runtime-data jobs/ --rerun failed  failed jobs start over with fresh attempts
  agent-runtime batch ./data jobs/ --family off_by_one
  agent-runtime batch ./sweep jobs/ --provider local.toml --provider claude.toml --repeat 5
  agent-runtime batch ./shard-1 jobs/ --shard 1/2          one entry of a CI matrix
  agent-runtime batch ./data jobs/ --provider claude.toml --max-cost 5

Exit codes:
  0    every job succeeded
  1    some job failed, was cancelled or is still pending
  2    usage, manifest or provider error (a job without a provider, two manifests with one id,
       a manifest changed without --replace: nothing is written), or a log that cannot be read
  130  interrupted by Ctrl-C (state is saved; run the same command again to finish)";

pub(super) const CHECK: &str = "Examples:
  agent-runtime check jobs/ --runs 3                       9/9 jobs valid, exit 0
  agent-runtime check jobs/off_by_one.toml --runs 10       look for flaky tests
  agent-runtime check jobs/ --json > check.json

Exit codes:
  0    every job is valid
  1    some job is not valid (its verdict and why are printed)
  2    usage or manifest error (nothing is run), or a log that cannot be read
  130  interrupted by Ctrl-C (state is saved; run the same command again to finish)";

pub(super) const RUN: &str = "Examples:
  agent-runtime enqueue ./one --job jobs/off_by_one.toml
  agent-runtime run ./one off_by_one                       outcome=succeeded, exit 0
  agent-runtime run ./one off_by_one --provider local.toml
  AGENT_TASK='Fix the tests' AGENT_ALLOWED=cargo AGENT_VERIFY='cargo;test' agent-runtime run ./tasks demo-task ./my-crate

Exit codes:
  0    the attempt succeeded
  1    the attempt failed (its failure kind and cause are printed)
  2    usage error, no such job, a job with no attempt to run, or a provider that cannot work
       (nothing is written)
  130  interrupted by Ctrl-C (the next run recovers the attempt)";

pub(super) const ENQUEUE: &str = "Examples:
  agent-runtime enqueue ./tasks demo-task                  enqueued=true
  agent-runtime enqueue ./one --job jobs/off_by_one.toml   enqueued=true id=off_by_one
  agent-runtime enqueue ./one --job jobs/ --replace        after editing a manifest

Exit codes:
  0    enqueued, or already there with the same manifest (enqueued=false)
  2    usage error, an invalid id or manifest, or a changed manifest without --replace
       (nothing is written)";

pub(super) const STATUS: &str = "Examples:
  agent-runtime status ./runtime-data                      one row per job, from the log
  agent-runtime status ./runtime-data --json | jq '.jobs[] | select(.state == \"failed\")'
  COLUMNS=60 agent-runtime status ./runtime-data           a table 60 columns wide

Exit codes:
  0    the log was read (whatever the jobs' states)
  2    no log, or a log that cannot be read (corrupt, or from a newer version)";

pub(super) const WATCH: &str = "Examples:
  agent-runtime watch ./one                                live view from another terminal
  agent-runtime watch ./runtime-data --interval-ms 1000
  LINES=20 agent-runtime watch ./runtime-data              at most 19 lines a frame, header kept

Exit codes:
  0    every job reached a final state
  2    no log, or a log that cannot be read
  130  stopped with Ctrl-C (nothing is written either way)";

pub(super) const REPORT: &str = "Examples:
  agent-runtime report ./runtime-data                      reports in ./runtime-data/report/
  agent-runtime report ./shard-1 ./shard-2 --out merged-report
  agent-runtime report ./runtime-data --out /tmp/report
  agent-runtime report --compare ./sweep-a,./sweep-b        A − B = +0.12 [+0.04, +0.20] at 95%, ...

Exit codes:
  0    the reports were written (whatever the jobs' outcomes: gate on results.json or junit.xml)
  2    usage error (several DATA dirs need --out), a log that cannot be read, or a report that
       cannot be written";

pub(super) const CANCEL: &str = "Examples:
  agent-runtime cancel ./tasks demo-task                   cancelled=true
  agent-runtime cancel ./sweep off_by_one@local#2

Exit codes:
  0    cancelled
  2    no log, no such job, or a job that already finished";

pub(super) const RETRY: &str = "Examples:
  agent-runtime retry ./data off_by_one                    requeued=true next_attempt=2
  agent-runtime batch ./data jobs/ --rerun failed          when its attempts are used up

Exit codes:
  0    requeued
  2    no log, no such job, a job that has not failed, or one with no attempts left";

pub(super) const REPLAY: &str = "Examples:
  agent-runtime replay ./sweep off_by_one@local#2 --out replay-1
  agent-runtime batch ./replayed replay-1/job.toml         the same decisions, no model

Exit codes:
  0    the replay job was written
  2    no such job or attempt, an attempt without a full trace, DIR exists, or a log that cannot
       be read";

pub(super) const GC: &str = "Examples:
  agent-runtime gc ./runtime-data                          workspaces of succeeded attempts go
  agent-runtime gc ./runtime-data --keep none              every workspace and build dir; artifacts stay

Exit codes:
  0    cleaned (it prints what it freed)
  2    no log, a log that cannot be read, or a directory that cannot be removed";

pub(super) const EXEC: &str = "Examples:
  agent-runtime exec --allow 'ls **' -- ls -la
  agent-runtime exec -- cargo test --offline               allowed as `cargo **`
  agent-runtime exec --allow 'cargo test **' --timeout 30s -- cargo test
  agent-runtime exec --allow 'cargo test **' -- cargo install ripgrep   refused, exit 2
  agent-runtime exec --memory 256MiB --sandbox required -- python3 -c 'print(1)'

Exit codes:
  0    the command exited 0
  1    the command ran and failed (exit status, signal, timeout or OOM kill)
  2    the command was refused, could not start, or a required sandbox layer is missing
  130  interrupted by Ctrl-C (the command's processes are killed)";

pub(super) const DOCTOR: &str = "Examples:
  agent-runtime doctor                                     which layers `auto` uses here
  agent-runtime doctor | grep unavailable
  agent-runtime doctor ./runtime-data                      also check every record of its log

Exit codes:
  0    the report was printed (a missing layer is reported, not an error)
  2    usage error, or the data dir's log is missing or corrupt (the line is named)";

pub(super) const VALIDATE: &str = "Examples:
  agent-runtime validate jobs/
  agent-runtime validate -v jobs/off_by_one.toml           with its search path and programs
  agent-runtime validate local.toml                        a provider file is checked too

Exit codes:
  0    every file is valid (warnings do not count)
  2    some file is invalid (every error is printed, one per line), or an argument names no file";

pub(super) const SCHEMA: &str = "Examples:
  agent-runtime schema decision > decision.schema.json

Exit codes:
  0    the schema was printed
  2    usage error";

pub(super) const VIEW: &str = "Examples:
  agent-runtime view ./data                                open the printed URL in a browser
  agent-runtime view ./sweep --port 8080                   while `batch ./sweep ...` runs
  agent-runtime view ./run-1 ./run-2                       compare two runs of the same jobs

Exit codes:
  0    stopped by Ctrl-C after serving
  2    usage error, a DATA that is not a directory, or a port that cannot be bound";

pub(super) const AGENTS: &str = "Examples:
  agent-runtime agents                                     the table: package, pinned version, API, modes
  agent-runtime agents ./run                               and what ./run has installed
  agent-runtime agents install ./run claude-code codex@0.171.0

Agents are installed into DATA/cache/agents/<name>@<version>/ with npm or pip
(registry access needed), once per data dir; see docs/agents.md.

Exit codes:
  0    listed, or every agent installed (or already there)
  2    usage error, an unknown agent or version, or an install that failed (its output shown)";

pub(super) const IMPORT: &str = "Examples:
  agent-runtime import exercism ../polyglot-benchmark/rust --out jobs-rust
  agent-runtime check jobs-rust/ --runs 1                  every imported task valid?
  agent-runtime import swebench instances.jsonl --repo repos --out jobs-swe
  agent-runtime batch ./swe jobs-swe/ --provider local.toml

Exit codes:
  0    at least one job folder was written (each exercise or instance left out is named with why)
  1    none could be imported (each is named with why)
  2    usage error, or a path or instances file that cannot be read";
