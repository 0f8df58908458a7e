//! A test binary's runs, one process per test, summed up into the one
//! `command` event the log keeps for the binary: counts, the slowest test,
//! bytes and flags combined, CPU time summed and the highest single run's
//! peaks, the first failing run's exit.

use std::path::Path;
use std::time::{Duration, Instant};

use super::checks::CheckCommand;
use crate::exec::{Captured, ExecOutcome, Resources};
use crate::protocol::TestRuns;

/// A binary's runs summed up into one command.
pub(super) struct Summary {
    outcome: ExecOutcome,
    listed: bool,
    tests: TestRuns,
    first_failure: Option<(Option<i32>, Option<i32>)>,
}

impl Summary {
    /// The sum of the runs of `program` (run from `resolved` with `argc`
    /// arguments), starting from its listing's outcome when it listed.
    pub(super) fn new(
        program: &str,
        resolved: &Path,
        argc: usize,
        listing: Option<ExecOutcome>,
    ) -> Summary {
        let listed = listing.is_some();
        let outcome = listing.unwrap_or_else(|| ExecOutcome {
            program: program.to_string(),
            resolved: resolved.to_path_buf(),
            argc,
            exit_code: Some(0),
            signal: None,
            duration: Duration::ZERO,
            stdout: Captured::default(),
            stderr: Captured::default(),
            timed_out: false,
            cancelled: false,
            leaked: false,
            drain_timed_out: false,
            oom: false,
            sandbox_layers: Vec::new(),
            resources: Resources::default(),
        });
        Summary {
            outcome,
            listed,
            tests: TestRuns {
                runs: 0,
                failed: 0,
                timed_out: 0,
                slowest: None,
                slowest_ms: 0,
            },
            first_failure: None,
        }
    }

    /// One test's run: whether it passed, timed out, and its outcome
    /// (none when it did not run).
    pub(super) fn add(
        &mut self,
        name: &str,
        passed: bool,
        timed_out: bool,
        outcome: Option<&ExecOutcome>,
    ) {
        if !passed {
            self.tests.failed += 1;
        }
        if timed_out {
            self.tests.timed_out += 1;
        }
        let Some(one) = outcome else {
            return;
        };
        self.tests.runs += 1;
        let ms = u64::try_from(one.duration.as_millis()).unwrap_or(u64::MAX);
        if self.tests.slowest.is_none() || ms > self.tests.slowest_ms {
            self.tests.slowest = Some(name.to_string());
            self.tests.slowest_ms = ms;
        }
        let o = &mut self.outcome;
        if !self.listed && self.tests.runs == 1 {
            o.resolved.clone_from(&one.resolved);
            o.argc = one.argc;
            o.sandbox_layers.clone_from(&one.sandbox_layers);
        }
        if !one.success() && self.first_failure.is_none() {
            self.first_failure = Some((one.exit_code, one.signal));
        }
        for (sum, part) in [(&mut o.stdout, &one.stdout), (&mut o.stderr, &one.stderr)] {
            sum.total_bytes = sum.total_bytes.saturating_add(part.total_bytes);
            sum.truncated |= part.truncated;
        }
        o.timed_out |= one.timed_out;
        o.cancelled |= one.cancelled;
        o.leaked |= one.leaked;
        o.drain_timed_out |= one.drain_timed_out;
        o.oom |= one.oom;
        o.resources.add(&one.resources);
    }

    /// The one command: the listing's exit when there are no runs, else
    /// the first failing run's; the time from the listing to the last run.
    pub(super) fn finish(mut self, started: Instant) -> CheckCommand {
        if let Some((exit_code, signal)) = self.first_failure {
            self.outcome.exit_code = exit_code;
            self.outcome.signal = signal;
        }
        self.outcome.duration += started.elapsed();
        self.outcome.stdout.head.clear();
        self.outcome.stdout.tail.clear();
        self.outcome.stderr.head.clear();
        self.outcome.stderr.tail.clear();
        CheckCommand {
            outcome: self.outcome,
            tests: Some(self.tests),
        }
    }
}
