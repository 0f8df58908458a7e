//! The one I/O edge of the exports: read each log and the attempts'
//! artifacts, render, and put every file in place atomically (a reader
//! never sees half a file; the trajectories are not synced one by one). Files of an
//! earlier export that this one did not write again (a job no longer in
//! the report) are removed from the three folders, so they always match
//! the report beside them.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};

use super::error::ExportError;
use super::predictions::{Prediction, prediction_files};
use super::trace::{job_trace, log_label};
use super::{atif, file_name, inspect};
use crate::lifecycle::DataDir;
use crate::report::{
    FoldedLog, JobResult, Report, ReportError, write_atomic, write_atomic_with, write_replacing,
};
use crate::state::{Details, Job};

/// What an export wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Exported {
    /// The Inspect logs, one per family and model.
    pub inspect: Vec<PathBuf>,
    /// The ATIF trajectories written (one per attempt).
    pub atif: usize,
    /// The folder holding them.
    pub atif_dir: PathBuf,
    /// The SWE-bench predictions files (none without imported instances).
    pub predictions: Vec<PathBuf>,
}

/// Exports the jobs of `report` (derived from `logs`)
/// into `out/inspect/`, `out/atif/` and `out/predictions/`.
pub(crate) fn write_exports(
    logs: &[FoldedLog],
    report: &Report,
    out: &Path,
) -> Result<Exported, ExportError> {
    let folds: Vec<(DataDir, &Details)> = logs
        .iter()
        .map(|log| (DataDir::new(&log.data), &log.details))
        .collect();
    // First only where each row's job is, grouped by the log it goes in:
    // a trace (with its transcripts) is built when its turn comes and
    // dropped once its sample and trajectories are written, so a sweep of
    // thousands never holds them together.
    type Found<'a> = (&'a JobResult, &'a DataDir, &'a Details, &'a Job);
    let mut groups: BTreeMap<(&str, String), Vec<Found<'_>>> = BTreeMap::new();
    for row in &report.jobs {
        // As the report takes it: the last log that holds the instance.
        let Some((dir, details, job)) = folds
            .iter()
            .rev()
            .find_map(|(dir, d)| d.state.job(&row.instance).map(|job| (dir, *d, job)))
        else {
            continue;
        };
        let key = (row.family.as_str(), log_label(job));
        groups
            .entry(key)
            .or_default()
            .push((row, dir, details, job));
    }

    // Each file is put in place as soon as it is rendered.
    let mut written: BTreeSet<PathBuf> = BTreeSet::new();
    let atif_dir = out.join("atif");
    let mut put = |path: &Path, bytes: &[u8]| -> Result<(), ExportError> {
        let dir = path.parent().unwrap_or(out);
        std::fs::create_dir_all(dir).map_err(io("create", dir))?;
        // The logs and predictions synced as the reports are; a trajectory
        // per attempt is derived again by the next `report` if a crash
        // loses it.
        if path.starts_with(&atif_dir) {
            write_replacing(path, dir, bytes)?;
        } else {
            write_atomic(path, dir, bytes)?;
        }
        written.insert(path.to_path_buf());
        Ok(())
    };
    let inspect_dir = out.join("inspect");
    let mut inspect_files = Vec::new();
    let mut predictions: Vec<Prediction> = Vec::new();
    let mut atif_count = 0;
    // One job: its sample into the log, its trajectories, its prediction.
    // Its trace (with the transcripts) is dropped when it returns.
    let mut export_job = |(row, dir, details, job): Found<'_>,
                          model: &str,
                          log: &mut inspect::EvalLog,
                          add: &mut inspect::Put<'_, ExportError>|
     -> Result<(), ExportError> {
        let read = |n: u32, file: &str| std::fs::read_to_string(dir.runs(&job.id, n).join(file));
        let transcript = |n: u32| {
            read(n, "transcript.jsonl")
                .ok()
                .map(|t| crate::protocol::TranscriptLine::read_all(&t))
        };
        let trace = job_trace(row, job, details.timeline(&job.id), &transcript);
        log.add(&trace, add)?;
        for attempt in &trace.attempts {
            let path = atif_dir
                .join(file_name(&row.instance))
                .join(format!("{}.json", attempt.attempt));
            let text =
                serde_json::to_vec_pretty(&atif::trajectory(&trace, attempt)).unwrap_or_default();
            put(&path, &text)?;
            atif_count += 1;
        }
        if let Some(instance_id) = row.metadata.get("instance_id") {
            let patch = job
                .attempts
                .first()
                .filter(|a| a.patch.is_some())
                .and_then(|a| read(a.number, "patch.diff").ok())
                .unwrap_or_default();
            predictions.push(Prediction {
                instance_id: instance_id.clone(),
                model: model.to_string(),
                repeat: row.repeat.unwrap_or(1),
                patch,
            });
        }
        Ok(())
    };
    if !groups.is_empty() {
        std::fs::create_dir_all(&inspect_dir).map_err(io("create", &inspect_dir))?;
    }
    for ((family, model), jobs) in &groups {
        let path = inspect_dir.join(format!("{}@{}.eval", file_name(family), file_name(model)));
        // The zip goes to its file as it is made: one sample in memory at a
        // time, never the whole log.
        write_atomic_with(&path, &inspect_dir, |file| {
            zip_into(file, &path, |add| {
                let mut log = inspect::EvalLog::new();
                for &found in jobs {
                    export_job(found, model, &mut log, add)?;
                }
                log.finish(family, model, report.generated_at_ms, add)
            })
        })?;
        inspect_files.push(path);
    }
    let predictions_dir = out.join("predictions");
    let mut prediction_paths = Vec::new();
    for (name, text) in prediction_files(&predictions) {
        let path = predictions_dir.join(name);
        put(&path, text.as_bytes())?;
        prediction_paths.push(path);
    }

    written.extend(inspect_files.iter().cloned());
    prune(&inspect_dir, "eval", &written)?;
    prune(&predictions_dir, "jsonl", &written)?;
    if let Ok(entries) = std::fs::read_dir(&atif_dir) {
        for entry in entries.flatten() {
            let dir = entry.path();
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                prune(&dir, "json", &written)?;
                // Only an emptied folder goes; anything else in it stays.
                let _ = std::fs::remove_dir(&dir);
            }
        }
    }
    Ok(Exported {
        inspect: inspect_files,
        atif: atif_count,
        atif_dir,
        predictions: prediction_paths,
    })
}

/// Writes into `file` the zip of the members `members` adds, each deflated
/// as it comes (what Inspect's readers and viewer read); `path` names the
/// log in errors.
fn zip_into<W: std::io::Write + std::io::Seek>(
    file: W,
    path: &Path,
    members: impl FnOnce(&mut inspect::Put<'_, ExportError>) -> Result<(), ExportError>,
) -> Result<(), ExportError> {
    let zip_err = |source| ExportError::Zip {
        path: path.to_path_buf(),
        source,
    };
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    let mut zip = zip::ZipWriter::new(file);
    members(&mut |name, bytes| {
        zip.start_file(name, options).map_err(zip_err)?;
        zip.write_all(bytes).map_err(io("write", path))
    })?;
    zip.finish().map_err(zip_err)?;
    Ok(())
}

/// Removes the `.ext` files in `dir` that this export did not write.
fn prune(dir: &Path, ext: &str, written: &BTreeSet<PathBuf>) -> Result<(), ExportError> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(());
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let ours = path.extension().is_some_and(|e| e == ext)
            && entry.file_type().is_ok_and(|t| t.is_file());
        if ours && !written.contains(&path) {
            std::fs::remove_file(&path).map_err(io("remove", &path))?;
        }
    }
    Ok(())
}

fn io(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> ExportError {
    let path = path.to_path_buf();
    move |source| {
        ExportError::Write(ReportError::Io {
            action,
            path,
            source,
        })
    }
}
