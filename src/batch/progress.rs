//! The one reporter that owns the terminal during a batch. It follows the
//! event log (workers only append events) and shows either live bars (a
//! terminal, `CI` unset) or one plain line per event.

use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::path::Path;
use std::thread::JoinHandle;
use std::time::Duration;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::cancel::CancelToken;
use crate::log::{DecisionKind, Event, Follower, Record};
use crate::state::{Job, State};

/// How progress is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProgressMode {
    /// indicatif bars; `color` unless `NO_COLOR` is set.
    Bars { color: bool },
    /// One plain line per event.
    Lines,
    /// Nothing.
    Quiet,
}

impl ProgressMode {
    /// Bars on a terminal outside CI, plain lines otherwise.
    pub fn detect() -> ProgressMode {
        use std::io::IsTerminal;
        let ci = std::env::var_os("CI").is_some_and(|v| !v.is_empty() && v != "false" && v != "0");
        if std::io::stderr().is_terminal() && !ci {
            ProgressMode::Bars {
                color: std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
            }
        } else {
            ProgressMode::Lines
        }
    }
}

/// A running reporter.
#[derive(Debug)]
pub struct Progress {
    stop: CancelToken,
    handle: Option<JoinHandle<()>>,
}

impl Progress {
    /// Follows `log` from `offset` (whose last record had `last_seq`),
    /// starting from `state`, reporting on the `planned` jobs.
    pub fn start(
        log: &Path,
        offset: u64,
        last_seq: u64,
        state: State,
        planned: Vec<String>,
        mode: ProgressMode,
        notice: Option<String>,
    ) -> Progress {
        let stop = CancelToken::new();
        let follower = Follower::new(log, offset, last_seq + 1, last_seq);
        let handle = match (mode, follower) {
            (ProgressMode::Quiet, _) | (_, Err(_)) => None,
            (mode, Ok(follower)) => {
                let stop = stop.clone();
                std::thread::Builder::new()
                    .name("progress".into())
                    .spawn(move || {
                        let reporter = Reporter::new(state, planned, mode);
                        if let Some(notice) = notice {
                            reporter.note(&notice);
                        }
                        reporter.follow(follower, &stop)
                    })
                    .ok()
            }
        };
        Progress { stop, handle }
    }

    /// Shows the last events and stops.
    pub fn finish(mut self) {
        self.stop.cancel();
        if let Some(handle) = self.handle.take() {
            let _ = handle.join();
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

struct Reporter {
    state: State,
    planned: HashSet<String>,
    total: usize,
    mode: ProgressMode,
    multi: Option<MultiProgress>,
    overall: Option<ProgressBar>,
    running: HashMap<String, ProgressBar>,
}

impl Reporter {
    fn new(state: State, planned: Vec<String>, mode: ProgressMode) -> Reporter {
        let total = planned.len();
        let planned: HashSet<String> = planned.into_iter().collect();
        let mut reporter = Reporter {
            state,
            planned,
            total,
            mode,
            multi: None,
            overall: None,
            running: HashMap::new(),
        };
        if let ProgressMode::Bars { color } = mode {
            let multi = MultiProgress::with_draw_target(ProgressDrawTarget::stderr_with_hz(10));
            let template = if color {
                "{spinner:.green} [{elapsed_precise}] [{bar:30.cyan/blue}] {pos}/{len} jobs done {msg}"
            } else {
                "{spinner} [{elapsed_precise}] [{bar:30}] {pos}/{len} jobs done {msg}"
            };
            let bar = multi.add(ProgressBar::new(total as u64));
            if let Ok(style) = ProgressStyle::with_template(template) {
                bar.set_style(style.progress_chars("=> "));
            }
            bar.set_position(reporter.done() as u64);
            bar.enable_steady_tick(Duration::from_millis(200));
            reporter.overall = Some(bar);
            reporter.multi = Some(multi);
        }
        reporter
    }

    /// A line about the batch as a whole, before the jobs' own.
    fn note(&self, line: &str) {
        match (&self.multi, self.mode) {
            (_, ProgressMode::Quiet) => {}
            (Some(multi), _) => {
                let _ = multi.println(line);
            }
            (None, _) => {
                let _ = writeln!(std::io::stderr().lock(), "{line}");
            }
        }
    }

    fn done(&self) -> usize {
        self.state
            .jobs()
            .iter()
            // A failed job the batch will try again is not done yet, so the
            // count never goes back on a retry.
            .filter(|j| {
                self.planned.contains(&j.id) && j.state.is_terminal() && !super::run::retryable(j)
            })
            .count()
    }

    fn follow(mut self, mut follower: Follower, stop: &CancelToken) {
        loop {
            let stopping = stop.wait_timeout(Duration::from_millis(100));
            if let Ok(records) = follower.poll() {
                for record in records {
                    self.on_record(&record);
                }
            }
            if stopping {
                break;
            }
        }
        for (_, bar) in self.running.drain() {
            bar.finish_and_clear();
        }
        if let Some(bar) = &self.overall {
            bar.set_position(self.done() as u64);
            bar.finish();
        }
    }

    fn on_record(&mut self, record: &Record) {
        let _ = self.state.apply(record);
        let Some(job) = record.job.as_deref() else {
            return;
        };
        if !self.planned.contains(job) {
            return;
        }
        // What the line quotes (paths, causes, provider messages) came from
        // a model, a workspace or a command: shown escaped, never raw.
        let line = self
            .state
            .job(job)
            .and_then(|j| describe(record, j))
            .map(|line| crate::escape::line(&line).into_owned());
        match self.mode {
            ProgressMode::Quiet => {}
            ProgressMode::Lines => {
                if let Some(line) = line {
                    let mut err = std::io::stderr().lock();
                    let _ = writeln!(
                        err,
                        "[{:>width$}/{}] {job}: {line}",
                        self.done(),
                        self.total,
                        width = digits(self.total)
                    );
                }
            }
            ProgressMode::Bars { color } => self.update_bars(job, record, line, color),
        }
    }

    fn update_bars(&mut self, job: &str, record: &Record, line: Option<String>, color: bool) {
        let Some(multi) = &self.multi else { return };
        match &record.event {
            Event::AttemptStarted { .. } => {
                let bar = multi.add(ProgressBar::new_spinner());
                let template = if color {
                    "  {spinner:.blue} {prefix:.bold} [{elapsed}] {msg}"
                } else {
                    "  {spinner} {prefix} [{elapsed}] {msg}"
                };
                if let Ok(style) = ProgressStyle::with_template(template) {
                    bar.set_style(style);
                }
                bar.set_prefix(job.to_string());
                bar.set_message(line.unwrap_or_default());
                bar.enable_steady_tick(Duration::from_millis(200));
                if let Some(old) = self.running.insert(job.to_string(), bar) {
                    old.finish_and_clear();
                }
            }
            Event::AttemptFinished { .. } | Event::AttemptInterrupted { .. } => {
                if let Some(bar) = self.running.remove(job) {
                    bar.finish_and_clear();
                    multi.remove(&bar);
                }
                if let Some(line) = line {
                    let _ = multi.println(format!("{job}: {line}"));
                }
            }
            _ => {
                if let (Some(bar), Some(line)) = (self.running.get(job), line) {
                    bar.set_message(line);
                }
            }
        }
        if let Some(bar) = &self.overall {
            bar.set_position(self.done() as u64);
            bar.set_message(self.waiting_note());
        }
    }

    /// "waiting for P (n jobs): why" for each provider some running job
    /// waits for, or nothing.
    fn waiting_note(&self) -> String {
        let mut waits: Vec<(&str, &str, usize)> = Vec::new();
        for job in self.state.jobs() {
            let Some(w) = &job.waiting else { continue };
            if !self.planned.contains(&job.id) {
                continue;
            }
            let provider = job.provider.as_deref().unwrap_or("the provider");
            match waits.iter_mut().find(|(p, _, _)| *p == provider) {
                Some((_, _, n)) => *n += 1,
                None => waits.push((provider, &w.reason, 1)),
            }
        }
        let note = waits
            .iter()
            .map(|(provider, why, n)| {
                let jobs = if *n == 1 { "job" } else { "jobs" };
                format!("· waiting for {provider} ({n} {jobs}): {why}")
            })
            .collect::<Vec<_>>()
            .join(" ");
        crate::escape::line(&note).into_owned()
    }
}

/// A reason cut to what one progress line holds.
fn short(reason: &str) -> String {
    const KEPT: usize = 160;
    let line = reason.lines().next().unwrap_or_default();
    let mut kept: String = line.chars().take(KEPT).collect();
    if kept.len() < reason.len() {
        kept.push('…');
    }
    kept
}

fn digits(n: usize) -> usize {
    n.to_string().len()
}

/// One short line per event worth showing; `job` is the reducer's job with
/// the record applied, so counts and wording are those of `status` and the
/// reports.
fn describe(record: &Record, job: &Job) -> Option<String> {
    let attempt = record.attempt.unwrap_or(0);
    let steps = job.total_steps();
    let plural = if steps == 1 { "" } else { "s" };
    Some(match &record.event {
        Event::AttemptStarted { .. } => format!("attempt {attempt} started"),
        Event::AttemptFinished {
            failure_kind: Some(kind),
            ..
        } => match job.failure_cause() {
            Some(cause) => {
                format!("attempt {attempt} failed: {kind} ({steps} step{plural}): {cause}")
            }
            None => format!("attempt {attempt} failed: {kind} ({steps} step{plural})"),
        },
        Event::AttemptFinished { .. } => {
            format!("attempt {attempt} succeeded ({steps} step{plural})")
        }
        Event::AttemptInterrupted { cause, .. } => match cause {
            Some(cause) => format!("attempt {attempt} interrupted: {cause}"),
            None => format!("attempt {attempt} interrupted"),
        },
        Event::Cancelled {} => "cancelled".into(),
        Event::Retried {} => "retrying".into(),
        Event::Baseline { result, .. } => crate::state::baseline_wording(*result).into(),
        Event::Setup { result, reused, .. } => match (result, reused) {
            (_, true) => "setup reused".into(),
            (result, false) => format!("setup {}", result.as_str()),
        },
        // A refusal says why, as the model was told.
        Event::Decision {
            step,
            kind: DecisionKind::Invalid,
            reason: Some(reason),
            ..
        } => format!("step {step}: invalid decision: {}", short(reason)),
        Event::Decision { step, kind, .. } => format!("step {step}: {kind}"),
        Event::ProviderRetry { wait_ms, .. } => {
            let provider = job.provider.as_deref().unwrap_or("the provider");
            match &job.waiting {
                Some(w) => format!(
                    "waiting for {provider}: {} (provider retry {}, waiting {} s so far, next try in {:.1} s)",
                    w.reason,
                    w.retries,
                    record.ts_ms.saturating_sub(w.since_ms) / 1000,
                    *wait_ms as f64 / 1000.0
                ),
                None => return None,
            }
        }
        // The message names the provider already ("openai provider: ...").
        Event::ProviderFailed { message, .. } => message.clone(),
        Event::Command {
            role,
            program,
            exit_code,
            timed_out,
            ..
        } => {
            let status = if *timed_out {
                "timed out".to_string()
            } else {
                exit_code.map_or("killed".into(), |c| format!("exit {c}"))
            };
            format!("{role} `{program}` {status}")
        }
        Event::Edit { path, .. } => format!("edited {path}"),
        Event::Verify { passed, .. } => {
            format!("verify {}", if *passed { "passed" } else { "failed" })
        }
        Event::AgentFinished { .. } => return None,
        Event::Patch { files, bytes, .. } => format!("patch: {files} file(s), {bytes} bytes"),
        Event::PatchRejected { reason } => format!("patch rejected: {reason}"),
        Event::Acceptance { result, .. } => format!("acceptance {}", result.as_str()),
        Event::Enqueued { .. } | Event::Replaced { .. } | Event::LogRepaired { .. } => return None,
    })
}
