//! The data dirs a viewer shows, followed as their logs grow: each log is
//! read read-only from where it was last read (a batch in another process
//! may be appending), its new records folded into the state module's
//! summary and detail folds, and the report model rebuilt from those by
//! the report module. Nothing here interprets an event itself, and no
//! record is kept once folded.

use std::path::Path;

use crate::lifecycle::DataDir;
use crate::log::Follower;
use crate::report::{JobResult, LogSource, NoArtifacts, Report, report_from_logs};
use crate::state::Details;

use super::artifacts::{Artifacts, PATCH_CAP};

/// Bytes of a `transcript.jsonl` the job page reads at most.
const TRANSCRIPT_CAP: u64 = 64 << 20;
/// The line after the part of a patch shown.
const PATCH_CUT: &str = "\n… (the rest is in patch.diff)\n";

/// One data dir and what its log said so far.
#[derive(Debug)]
pub(super) struct Run {
    /// The data dir as given on the command line.
    pub label: String,
    dir: DataDir,
    pub artifacts: Artifacts,
    follower: Option<Follower>,
    /// Records read so far.
    events: usize,
    /// The summary and detail folds of the records so far.
    pub details: Details,
    /// The report model of the records so far (without artifacts).
    pub report: Report,
    /// Why the log cannot be read (yet): missing, corrupt.
    pub error: Option<String>,
}

impl Run {
    pub(super) fn new(path: &Path) -> Run {
        let dir = DataDir::new(path);
        Run {
            label: path.display().to_string(),
            artifacts: Artifacts::new(&dir),
            dir,
            follower: None,
            events: 0,
            details: Details::default(),
            report: Report::new(0, Vec::new()),
            error: None,
        }
    }

    /// Records read so far.
    pub(super) fn events(&self) -> usize {
        self.events
    }

    /// Reads what was appended since the last call and folds it; whether
    /// there was anything. A line still being written waits for the next
    /// call.
    pub(super) fn poll(&mut self) -> bool {
        let log = self.dir.log();
        if self.follower.is_none() {
            if !log.exists() {
                self.error = Some(format!("no log at {} yet", log.display()));
                return false;
            }
            match Follower::new(&log, 0, 1, 0) {
                Ok(follower) => self.follower = Some(follower),
                Err(e) => {
                    self.error = Some(e.to_string());
                    return false;
                }
            }
        }
        let Some(follower) = self.follower.as_mut() else {
            return false;
        };
        match follower.poll() {
            Ok(records) if records.is_empty() => {
                self.error = None;
                false
            }
            Ok(records) => {
                for record in &records {
                    self.details.apply(record);
                }
                self.events += records.len();
                self.error = None;
                true
            }
            Err(e) => {
                self.error = Some(e.to_string());
                false
            }
        }
    }

    /// Rebuilds the report model from the records (no artifacts: the list
    /// needs none).
    pub(super) fn rebuild(&mut self, now_ms: u64) {
        self.report = report_from_logs(&[self.source()], now_ms, &NoArtifacts);
    }

    /// The report row of `instance` with its artifacts (`patch.diff`, a
    /// full trace's `transcript.jsonl`), read beneath `runs/`.
    pub(super) fn job_with_artifacts(&self, instance: &str, now_ms: u64) -> Option<JobResult> {
        self.details.state.job(instance)?;
        let artifact = JobFiles {
            artifacts: &self.artifacts,
            instance,
        };
        report_from_logs(&[self.source()], now_ms, &artifact)
            .jobs
            .into_iter()
            .find(|j| j.instance == instance)
    }

    fn source(&self) -> LogSource<'_> {
        LogSource {
            path: self.label.clone(),
            details: &self.details,
        }
    }
}

/// Every data dir of a viewer, and a version that changes whenever any of
/// their logs did.
#[derive(Debug)]
pub(super) struct Model {
    pub runs: Vec<Run>,
    pub version: u64,
}

impl Model {
    pub(super) fn new(data_dirs: &[std::path::PathBuf]) -> Model {
        Model {
            runs: data_dirs.iter().map(|d| Run::new(d)).collect(),
            version: 0,
        }
    }

    /// Polls every log and rebuilds the runs that changed; whether any did.
    /// The first call always counts as a change.
    pub(super) fn refresh(&mut self, now_ms: u64) -> bool {
        let mut changed = self.version == 0;
        for run in &mut self.runs {
            let errored = run.error.clone();
            if run.poll() {
                run.rebuild(now_ms);
                changed = true;
            } else if run.error != errored {
                changed = true;
            }
        }
        if changed {
            self.version += 1;
        }
        changed
    }
}

/// One job's files beneath `runs/`, as the report reads them: a huge patch
/// in part (its link serves it whole), a transcript cut mid-line losing
/// that line only.
struct JobFiles<'a> {
    artifacts: &'a Artifacts,
    instance: &'a str,
}

impl crate::report::Artifacts for JobFiles<'_> {
    fn read(&self, _: &str, job: &str, attempt: u32, file: &str) -> Option<String> {
        if job != self.instance {
            return None;
        }
        if file == "patch.diff" {
            let (mut text, cut) = self.artifacts.head(job, attempt, file, PATCH_CAP)?;
            if cut {
                text.push_str(PATCH_CUT);
            }
            return Some(text);
        }
        self.artifacts
            .head(job, attempt, file, TRANSCRIPT_CAP)
            .map(|(text, _)| text)
    }

    fn exists(&self, _: &str, job: &str, attempt: u32, file: &str) -> bool {
        job == self.instance && self.artifacts.head(job, attempt, file, 1).is_some()
    }

    /// One job's page shows the model's text whole.
    fn texts(&self) -> crate::report::Texts {
        crate::report::Texts::Whole
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{Event, Record};

    fn append(path: &Path, records: &[Record]) {
        use std::io::Write as _;
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .unwrap();
        for r in records {
            file.write_all(&r.encode()).unwrap();
        }
    }

    fn enqueued(seq: u64, id: &str) -> Record {
        Record {
            seq,
            ts_ms: seq,
            job: Some(id.to_string()),
            attempt: None,
            event: Event::bare_enqueued(2),
        }
    }

    #[test]
    fn a_growing_log_is_followed_and_a_missing_one_waited_for() {
        let tmp = tempfile::tempdir().unwrap();
        let mut model = Model::new(&[tmp.path().to_path_buf()]);
        assert!(model.refresh(0), "the first refresh is a change");
        assert!(
            model.runs[0]
                .error
                .as_deref()
                .unwrap()
                .contains("no log at")
        );
        assert!(!model.refresh(0));
        let log = tmp.path().join("events.log");
        append(&log, &[enqueued(1, "a")]);
        assert!(model.refresh(0));
        assert_eq!(model.runs[0].error, None);
        assert_eq!(model.runs[0].report.jobs.len(), 1);
        assert!(!model.refresh(0), "nothing new");
        let version = model.version;
        append(&log, &[enqueued(2, "b")]);
        // A line still being written is left for later.
        std::fs::OpenOptions::new()
            .append(true)
            .open(&log)
            .and_then(|mut f| std::io::Write::write_all(&mut f, b"{\"crc\":\"0"))
            .unwrap();
        assert!(model.refresh(0));
        assert_eq!(model.version, version + 1);
        let ids: Vec<&str> = model.runs[0]
            .report
            .jobs
            .iter()
            .map(|j| j.instance.as_str())
            .collect();
        assert_eq!(ids, ["a", "b"]);
        assert_eq!(model.runs[0].events(), 2);
        assert!(model.runs[0].details.state.job("b").is_some());
    }
}
