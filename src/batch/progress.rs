//! The one reporter that owns the terminal during a batch. It follows the
//! event log (workers only append events) and shows either live bars (a
//! terminal, `CI` unset) or one plain line per event. It keeps no wording
//! of its own: each line is the state's [`describe`] of the event, as
//! `status`, `watch` and the reports word it.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;
use std::thread::JoinHandle;
use std::time::Duration;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::cancel::CancelToken;
use crate::log::Follower;
use crate::protocol::Record;
use crate::state::{State, describe};

/// How progress is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ProgressMode {
    /// indicatif bars; `color` unless `NO_COLOR` is set.
    Bars { color: bool },
    /// One plain line per event.
    Lines,
    /// Nothing.
    Quiet,
}

impl ProgressMode {
    /// Bars on a terminal outside CI, plain lines otherwise.
    pub(crate) fn detect() -> ProgressMode {
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
pub(crate) struct Progress {
    stop: CancelToken,
    handle: Option<JoinHandle<()>>,
    /// Lines about the batch as a whole, for the reporter to write.
    notes: Option<std::sync::mpsc::Sender<String>>,
}

impl Progress {
    /// Follows `log` from `offset` (whose last record had `last_seq`),
    /// starting from `state`, reporting on the `planned` jobs.
    pub(crate) fn start(
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
        let (sender, notes) = std::sync::mpsc::channel();
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
                        reporter.follow(follower, &notes, &stop)
                    })
                    .ok()
            }
        };
        Progress {
            stop,
            notes: handle.is_some().then_some(sender),
            handle,
        }
    }

    /// Says `line` about the batch as a whole, as the reporter writes
    /// lines (nothing in quiet mode).
    pub(crate) fn note(&self, line: String) {
        if let Some(notes) = &self.notes {
            let _ = notes.send(line);
        }
    }

    /// Shows the last events and stops.
    pub(crate) fn finish(mut self) {
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
    /// Planned jobs done, kept as each record applies (never a scan of
    /// every job per record: a sweep's lines cost the same at any size).
    done: usize,
    /// Planned jobs some provider wait holds, by job.
    waiting: HashMap<String, (String, String)>,
    mode: ProgressMode,
    multi: Option<MultiProgress>,
    overall: Option<ProgressBar>,
    running: HashMap<String, ProgressBar>,
    /// Plain lines not yet written: each poll's lines go to stderr in one
    /// write (stderr is unbuffered, and a line formatted straight onto it
    /// is a write per piece: a few hundred system calls per step of a
    /// busy job, on the core its commands need).
    pending: String,
}

impl Reporter {
    fn new(state: State, planned: Vec<String>, mode: ProgressMode) -> Reporter {
        let total = planned.len();
        let planned: HashSet<String> = planned.into_iter().collect();
        let done = state
            .jobs()
            .iter()
            .filter(|j| planned.contains(&j.id) && is_done(j))
            .count();
        let mut reporter = Reporter {
            state,
            planned,
            total,
            done,
            waiting: HashMap::new(),
            mode,
            multi: None,
            overall: None,
            running: HashMap::new(),
            pending: String::new(),
        };
        if let ProgressMode::Bars { color } = mode {
            let multi = MultiProgress::with_draw_target(ProgressDrawTarget::stderr_with_hz(10));
            let template = if color {
                "{spinner:.green} [{elapsed_precise}] [{wide_bar:.cyan/blue}] {pos}/{len} jobs done {msg}"
            } else {
                "{spinner} [{elapsed_precise}] [{wide_bar}] {pos}/{len} jobs done {msg}"
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
                let _ = std::io::stderr()
                    .lock()
                    .write_all(format!("{line}\n").as_bytes());
            }
        }
    }

    fn done(&self) -> usize {
        self.done
    }

    fn follow(
        mut self,
        mut follower: Follower,
        notes: &std::sync::mpsc::Receiver<String>,
        stop: &CancelToken,
    ) {
        loop {
            let stopping = stop.wait_timeout(Duration::from_millis(100));
            for line in notes.try_iter() {
                self.note(&line);
            }
            if let Ok(records) = follower.poll() {
                for record in records {
                    self.on_record(&record);
                }
            }
            self.flush_lines();
            if stopping {
                break;
            }
        }
        for (_, bar) in self.running.drain() {
            bar.finish_and_clear();
        }
        if let Some(bar) = &self.overall {
            bar.set_position(self.done() as u64);
            if self.done() < self.total {
                // Stopped early (Ctrl-C, a log that cannot be written):
                // the bar stays where the batch stopped (`finish` would
                // fill it).
                bar.abandon_with_message("(stopped here)");
            } else {
                bar.finish();
            }
        }
    }

    fn on_record(&mut self, record: &Record) {
        let open_attempt = |state: &State| {
            record
                .job
                .as_deref()
                .and_then(|id| state.job(id))
                .and_then(|j| j.lifecycle.open)
                .map(|open| open.attempt)
        };
        let was_open = open_attempt(&self.state);
        let planned = record
            .job
            .as_deref()
            .filter(|id| self.planned.contains(*id));
        let was_done = planned
            .and_then(|id| self.state.job(id))
            .is_some_and(is_done);
        let _ = self.state.apply(record);
        let Some(job) = planned else {
            return;
        };
        if let Some(j) = self.state.job(job) {
            match (was_done, is_done(j)) {
                (false, true) => self.done += 1,
                (true, false) => self.done = self.done.saturating_sub(1),
                _ => {}
            }
            match &j.waiting {
                Some(w) => {
                    let provider = j.provider.clone().unwrap_or_else(|| "the provider".into());
                    self.waiting
                        .insert(job.to_string(), (provider, w.reason.clone()));
                }
                None => {
                    self.waiting.remove(job);
                }
            }
        }
        let open = open_attempt(&self.state);
        // What the line quotes (paths, causes, provider messages) came from
        // a model, a workspace or a command: shown escaped, never raw.
        let line = self
            .state
            .job(job)
            .and_then(|j| describe(record, j))
            .map(|said| crate::escape::line(&said.text).into_owned());
        match self.mode {
            ProgressMode::Quiet => {}
            ProgressMode::Lines => {
                if let Some(line) = line {
                    let _ = writeln!(
                        self.pending,
                        "[{:>width$}/{}] {job}: {line}",
                        self.done(),
                        self.total,
                        width = digits(self.total)
                    );
                }
            }
            ProgressMode::Bars { color } => self.update_bars(job, (was_open, open), line, color),
        }
    }

    /// Writes the plain lines gathered so far, in one write.
    fn flush_lines(&mut self) {
        if !self.pending.is_empty() {
            let _ = std::io::stderr().lock().write_all(self.pending.as_bytes());
            self.pending.clear();
        }
    }

    /// A bar per open attempt: made when an attempt opens, gone (its last
    /// line printed above the bars) when it closes.
    fn update_bars(
        &mut self,
        job: &str,
        (was_open, open): (Option<u32>, Option<u32>),
        line: Option<String>,
        color: bool,
    ) {
        let Some(multi) = &self.multi else { return };
        match (was_open, open) {
            (_, Some(n)) if was_open != Some(n) => {
                let bar = multi.add(ProgressBar::new_spinner());
                let template = if color {
                    "  {spinner:.blue} {prefix:.bold} [{elapsed}] {wide_msg}"
                } else {
                    "  {spinner} {prefix} [{elapsed}] {wide_msg}"
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
            (Some(_), None) => {
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
        let mut waiting: Vec<_> = self.waiting.iter().collect();
        waiting.sort();
        for (_, (provider, reason)) in waiting {
            match waits.iter_mut().find(|(p, _, _)| *p == provider) {
                Some((_, _, n)) => *n += 1,
                None => waits.push((provider, reason, 1)),
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

/// Whether a job counts as done: a failed job the batch will try again is
/// not done yet, so the count never goes back on a retry.
fn is_done(job: &crate::state::Job) -> bool {
    job.lifecycle.state.is_terminal() && !super::run::retryable(job)
}

fn digits(n: usize) -> usize {
    n.to_string().len()
}
