//! How [`State`] lays itself out in the writers' checkpoint
//! (`log/checkpoint.rs` owns the file): section 0 says what the log says
//! of itself and how many jobs there are; the next sections hold every
//! job's [`Summary`], [`ROWS_PER_SECTION`] a section (read one after another, each straight into place),
//! which is all `status` reads; then the rest of the state (the reusable
//! baselines); then one section per job, in the order they were enqueued,
//! so a reader decodes only the jobs it needs.
//!
//! Sections are MessagePack. Jobs and the rest carry their fields by name:
//! being self-describing, the encoding keeps the events' tagged enums and
//! the fields they leave out as the log's JSON does. The summaries, a
//! fixed shape of our own with no field ever left out, are arrays: a
//! fraction of the bytes, read back several times faster.

use std::collections::HashMap;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::job::{Baseline, Job};
use super::reducer::State;
use super::summary::{Head, Summary};
use crate::log::{CheckpointBody, CheckpointWriter};

/// Summaries in one section.
const ROWS_PER_SECTION: usize = 4096;

/// What section 0 holds.
#[derive(Serialize, Deserialize)]
struct Meta {
    jobs: usize,
    repairs: Vec<(u64, u64)>,
    last_seq: u64,
}

impl Meta {
    fn row_sections(&self) -> usize {
        self.jobs.div_ceil(ROWS_PER_SECTION)
    }

    fn rest(&self) -> usize {
        1 + self.row_sections()
    }

    fn job(&self, i: usize) -> usize {
        self.rest() + 1 + i
    }
}

#[derive(Serialize, Deserialize)]
struct Rest {
    baselines: HashMap<String, Baseline>,
}

/// The sections of the state's checkpoint.
pub(super) struct Sections;

impl Sections {
    pub(super) fn save(state: &State, out: &mut CheckpointWriter) -> bool {
        let jobs = state.jobs();
        let meta = Meta {
            jobs: jobs.len(),
            repairs: state.repairs.clone(),
            last_seq: state.last_seq,
        };
        let rows = jobs
            .par_chunks(ROWS_PER_SECTION)
            .map(|chunk| chunk.iter().map(Summary::of).collect::<Vec<_>>())
            .collect::<Vec<_>>();
        let rest = Rest {
            baselines: state.baselines().clone(),
        };
        let written = out
            .section(|b| rmp_serde::encode::write_named(b, &meta))
            .is_ok()
            && (rows.iter())
                .all(|chunk| out.section(|b| rmp_serde::encode::write(b, chunk)).is_ok())
            && out
                .section(|b| rmp_serde::encode::write_named(b, &rest))
                .is_ok();
        if !written {
            return false;
        }
        // Jobs are encoded in parallel, a chunk at a time, then put in order.
        let chunks = jobs
            .par_chunks(ROWS_PER_SECTION)
            .map(|chunk| {
                let mut part = CheckpointWriter::default();
                let whole = (chunk.iter()).all(|job| {
                    part.section(|b| rmp_serde::encode::write_named(b, job))
                        .is_ok()
                });
                whole.then_some(part)
            })
            .collect::<Option<Vec<_>>>();
        let Some(chunks) = chunks else {
            return false;
        };
        for part in chunks {
            out.append(part);
        }
        true
    }

    pub(super) fn restore(body: &CheckpointBody) -> Option<State> {
        let all = body.all()?;
        let meta: Meta = rmp_serde::from_slice(all.get(0)?).ok()?;
        if meta.job(meta.jobs) != all.len() {
            return None;
        }
        let rest: Rest = rmp_serde::from_slice(all.get(meta.rest())?).ok()?;
        let jobs = (0..meta.jobs)
            .into_par_iter()
            .map(|i| rmp_serde::from_slice::<Job>(all.get(meta.job(i))?).ok())
            .collect::<Option<Vec<Job>>>()?;
        State::restored(jobs, rest.baselines, meta.repairs, meta.last_seq)
    }

    /// Every job's summary and what the log says of itself; the jobs are
    /// not read.
    pub(super) fn head(body: &CheckpointBody) -> Option<(Head, Located)> {
        let meta: Meta = rmp_serde::from_slice(&body.section(0)?).ok()?;
        if meta.job(meta.jobs) != body.sections() {
            return None;
        }
        // Decoded one section after another, each straight into its place:
        // rows are many and small, and copying them is most of their cost.
        let mut rows = Vec::with_capacity(meta.jobs);
        for i in 1..=meta.row_sections() {
            let bytes = body.section(i)?;
            let mut decoder = rmp_serde::Deserializer::from_read_ref(&bytes);
            serde::de::DeserializeSeed::deserialize(Extend(&mut rows), &mut decoder).ok()?;
        }
        if rows.len() != meta.jobs {
            return None;
        }
        let located = Located {
            first_job: meta.job(0),
        };
        let head = Head {
            rows,
            repairs: meta.repairs,
            last_seq: meta.last_seq,
        };
        Some((head, located))
    }

    /// The `i`th job (by the order they were enqueued).
    pub(super) fn job(body: &CheckpointBody, located: Located, i: usize) -> Option<Job> {
        rmp_serde::from_slice(&body.section(located.first_job + i)?).ok()
    }
}

/// A sequence of summaries read onto the end of a vector.
struct Extend<'a>(&'a mut Vec<Summary>);

impl<'de> serde::de::DeserializeSeed<'de> for Extend<'_> {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Extend<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("job summaries")
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(row) = seq.next_element()? {
            self.0.push(row);
        }
        Ok(())
    }
}

/// Where the jobs' sections start.
#[derive(Debug, Clone, Copy)]
pub(super) struct Located {
    first_job: usize,
}
