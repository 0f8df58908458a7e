//! The lifecycle operations a runner or a user performs on a data directory,
//! each one transaction on the log. Every transaction first records attempts
//! whose runner is gone (a running attempt without a live lease) as
//! interrupted, so the next writer always notices a crash.

use std::path::PathBuf;

use super::data_dir::DataDir;
use super::lease::{Lease, LeaseError, stale_attempts};
use crate::log::{AppendError, Follower, LogError, LogWriter};
use crate::protocol::{
    AttemptFinishedRecord, AttemptInterruptedRecord, AttemptStartedRecord, EnqueuedRecord,
    ReplacedRecord,
};
use crate::protocol::{Event, FailureKind, Outcome, Record};
use crate::protocol::{IdError, ManifestSnapshot, validate_id, validate_instance_id};
use crate::state::{Illegal, State};

/// Failures of lifecycle operations.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error(transparent)]
    Log(#[from] LogError),
    /// The reducer refused the event: nothing was written.
    #[error(transparent)]
    Illegal(#[from] Illegal),
    #[error(transparent)]
    Id(#[from] IdError),
    #[error(transparent)]
    Lease(#[from] LeaseError),
    #[error(
        "job {id:?} is already enqueued with a different manifest; pass --replace to run it under the new one (its earlier attempts stay in the log)"
    )]
    ManifestChanged { id: String },
    #[error("failed to create data directory {}: {source}", .path.display())]
    DataDir {
        path: PathBuf,
        source: std::io::Error,
    },
}

impl From<AppendError<Illegal>> for StoreError {
    fn from(e: AppendError<Illegal>) -> Self {
        match e {
            AppendError::Refused(e) => StoreError::Illegal(e),
            AppendError::Log(e) => StoreError::Log(e),
        }
    }
}

/// A transaction on the data dir's log, checked by the reducer.
pub(super) type Tx<'a> = crate::log::Tx<'a, State>;

/// A manifest job (or one instance of it in a sweep) to enqueue.
#[derive(Debug, Clone)]
pub struct NewJob {
    pub id: String,
    pub family: String,
    pub max_attempts: u32,
    pub snapshot: ManifestSnapshot,
    pub hash: String,
    pub base_job: Option<String>,
    pub provider: Option<String>,
    pub repeat: Option<u32>,
}

/// What `enqueue_manifest` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EnqueueResult {
    Created,
    Unchanged,
    Replaced,
}

/// A writer's handle on a data directory.
#[derive(Debug)]
pub struct Store {
    dir: DataDir,
    writer: LogWriter<State>,
}

/// A claimed attempt. The lease is held until the claim is finished or dropped.
#[derive(Debug)]
pub struct Claim {
    pub job: String,
    pub attempt: u32,
    lease: Lease,
    /// Log offset and `seq` just after the claim, where a follower starts.
    follow_from: (u64, u64),
}

impl Claim {
    pub fn lease(&self) -> &Lease {
        &self.lease
    }
}

impl Store {
    /// Opens the data directory (creating it and its log if needed).
    pub fn open(dir: DataDir) -> Result<Store, StoreError> {
        std::fs::create_dir_all(dir.root()).map_err(|source| StoreError::DataDir {
            path: dir.root().to_path_buf(),
            source,
        })?;
        let mut writer = LogWriter::open(&dir.log())?;
        let leases = dir.clone();
        writer.transact(|tx| reap_interrupted(tx, &leases))?;
        Ok(Store { dir, writer })
    }

    /// Another handle on the same data dir, from this one's state (see
    /// [`LogWriter::fork`]): what a batch gives each of its workers.
    pub fn fork(&self) -> Result<Store, StoreError> {
        Ok(Store {
            dir: self.dir.clone(),
            writer: self.writer.fork()?,
        })
    }

    pub fn dir(&self) -> &DataDir {
        &self.dir
    }

    /// The state as of the last transaction.
    pub fn state(&self) -> &State {
        self.writer.state()
    }

    /// Runs `f` in a transaction that first reaps interrupted attempts.
    pub fn transact<T>(
        &mut self,
        f: impl FnOnce(&mut Tx<'_>) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let dir = &self.dir;
        self.writer.transact(|tx| {
            reap_interrupted(tx, dir)?;
            f(tx)
        })
    }

    /// Enqueues a bare job. Returns false (and writes nothing) if the id exists.
    pub fn enqueue(&mut self, id: &str, max_attempts: u32) -> Result<bool, StoreError> {
        validate_id(id)?;
        self.transact(|tx| {
            if tx.state().job(id).is_some() {
                return Ok(false);
            }
            tx.append(Some(id), None, Event::bare_enqueued(max_attempts))?;
            Ok(true)
        })
    }

    /// Enqueues a manifest job (its snapshot goes into the log). Idempotent
    /// per id and manifest hash; a different manifest under the same id is
    /// refused unless `replace`, which records `replaced` (the job must not
    /// be running).
    pub fn enqueue_manifest(
        &mut self,
        new: NewJob,
        replace: bool,
    ) -> Result<EnqueueResult, StoreError> {
        validate_instance_id(&new.id)?;
        self.transact(|tx| {
            let existing = tx.state().job(&new.id).map(|j| j.manifest_hash.clone());
            match existing {
                None => {
                    tx.append(
                        Some(&new.id),
                        None,
                        Event::Enqueued(EnqueuedRecord {
                            max_attempts: new.max_attempts,
                            family: Some(new.family.clone()),
                            manifest: Some(Box::new(new.snapshot.clone())),
                            manifest_hash: Some(new.hash.clone()),
                            base_job: new.base_job.clone(),
                            provider: new.provider.clone(),
                            repeat: new.repeat,
                        }),
                    )?;
                    Ok(EnqueueResult::Created)
                }
                Some(Some(old)) if old == new.hash => Ok(EnqueueResult::Unchanged),
                Some(_) if !replace => Err(StoreError::ManifestChanged { id: new.id.clone() }),
                Some(_) => {
                    record_replaced(tx, &new)?;
                    Ok(EnqueueResult::Replaced)
                }
            }
        })
    }

    /// Records the job's manifest again (`replaced`), even if unchanged: the
    /// job starts over with its attempts reset (`batch --rerun`).
    pub fn restart(&mut self, new: NewJob) -> Result<(), StoreError> {
        validate_instance_id(&new.id)?;
        self.transact(|tx| record_replaced(tx, &new))
    }

    /// Durably cancels a queued or running job. The runner owning a running
    /// attempt notices through its [`Follower`] and stops.
    pub fn cancel(&mut self, id: &str) -> Result<(), StoreError> {
        validate_instance_id(id)?;
        self.transact(|tx| {
            tx.append(Some(id), None, Event::Cancelled {})?;
            Ok(())
        })
    }

    /// Requeues a failed job with attempts left; returns the next attempt number.
    pub fn retry(&mut self, id: &str) -> Result<u32, StoreError> {
        validate_instance_id(id)?;
        self.transact(|tx| {
            tx.append(Some(id), None, Event::Retried {})?;
            Ok(tx
                .state()
                .job(id)
                .map_or(1, |j| j.lifecycle.attempts_started + 1))
        })
    }

    /// Starts the next attempt of a queued job (or resumes an interrupted one
    /// whose agent phase finished): takes its lease, then records the start,
    /// both under the log lock.
    pub fn claim(&mut self, id: &str) -> Result<Claim, StoreError> {
        validate_instance_id(id)?;
        let dir = self.dir.clone();
        let (attempt, lease, record) = self.transact(|tx| {
            let job = tx
                .state()
                .job(id)
                .ok_or_else(|| Illegal::UnknownJob(id.to_string()))?;
            // A resumed attempt keeps its number; otherwise the next one.
            let attempt = job
                .lifecycle
                .resume
                .unwrap_or(job.lifecycle.attempts_started + 1);
            // Check before taking a lease so an illegal claim leaves no file.
            let probe = Record {
                seq: tx.next_seq(),
                ts_ms: 0,
                job: Some(id.to_string()),
                attempt: Some(attempt),
                event: Event::AttemptStarted(AttemptStartedRecord {
                    pid: std::process::id(),
                    agent: job
                        .manifest
                        .as_deref()
                        .and_then(|m| m.manifest())
                        .and_then(|m| m.agent.as_ref())
                        .map(|a| format!("{}@{}", a.name, a.version.as_deref().unwrap_or("-"))),
                }),
            };
            tx.state().check(&probe)?;
            let lease = Lease::acquire(&dir.lease(id, attempt))?;
            let record = tx.append(Some(id), Some(attempt), probe.event)?;
            Ok((attempt, lease, record))
        })?;
        Ok(Claim {
            job: id.to_string(),
            attempt,
            lease,
            follow_from: (self.writer.offset(), record.seq),
        })
    }

    /// Records the end of a claimed attempt and releases its lease.
    pub fn finish(
        &mut self,
        claim: Claim,
        outcome: Outcome,
        failure_kind: Option<FailureKind>,
    ) -> Result<(), StoreError> {
        self.finish_with(claim, outcome, failure_kind, None)
    }

    /// [`Store::finish`], with the attempt's integrity record.
    pub fn finish_with(
        &mut self,
        claim: Claim,
        outcome: Outcome,
        failure_kind: Option<FailureKind>,
        integrity: Option<crate::protocol::Integrity>,
    ) -> Result<(), StoreError> {
        self.transact(|tx| {
            tx.append(
                Some(&claim.job),
                Some(claim.attempt),
                Event::AttemptFinished(AttemptFinishedRecord {
                    outcome,
                    failure_kind,
                    integrity,
                }),
            )?;
            Ok(())
        })?;
        drop(claim);
        Ok(())
    }

    /// Records that the runner itself stopped a claimed attempt before its
    /// end (Ctrl-C); the attempt is not counted and the job is queued again.
    pub fn interrupt(&mut self, claim: Claim) -> Result<(), StoreError> {
        self.transact(|tx| {
            tx.append(
                Some(&claim.job),
                Some(claim.attempt),
                Event::AttemptInterrupted(AttemptInterruptedRecord {
                    pid: std::process::id(),
                    by_runner: true,
                    cause: None,
                }),
            )?;
            Ok(())
        })?;
        drop(claim);
        Ok(())
    }

    /// Records that a claimed attempt met a fault of the infrastructure
    /// (`cause`, one line): the attempt is not counted, and the job is
    /// queued again unless its restarts are used up (then `infra_error`).
    pub fn infra_fault(&mut self, claim: Claim, cause: &str) -> Result<(), StoreError> {
        self.transact(|tx| {
            tx.append(
                Some(&claim.job),
                Some(claim.attempt),
                Event::AttemptInterrupted(AttemptInterruptedRecord {
                    pid: std::process::id(),
                    by_runner: false,
                    cause: Some(cause.to_string()),
                }),
            )?;
            Ok(())
        })?;
        drop(claim);
        Ok(())
    }

    /// Appends one event outside the lifecycle helpers.
    pub fn append(
        &mut self,
        job: Option<&str>,
        attempt: Option<u32>,
        event: Event,
    ) -> Result<Record, StoreError> {
        self.transact(|tx| Ok(tx.append(job, attempt, event)?))
    }

    /// A follower positioned just after the claim's start record, to watch for
    /// events other processes append (such as a cancel).
    pub fn follower(&self, claim: &Claim) -> Result<Follower, StoreError> {
        let (offset, seq) = claim.follow_from;
        // Our writer keeps line number == seq, so the next line is seq + 1.
        Ok(Follower::new(&self.dir.log(), offset, seq + 1, seq)?)
    }

    /// Flushes grouped events.
    pub fn sync(&mut self) -> Result<(), StoreError> {
        Ok(self.writer.sync()?)
    }
}

/// Records `new` as the job's manifest from now on; its attempts are
/// numbered after every attempt the log holds, which stay as history.
fn record_replaced(tx: &mut Tx<'_>, new: &NewJob) -> Result<(), StoreError> {
    let attempts_before = tx
        .state()
        .job(&new.id)
        .map_or(0, crate::state::Job::highest_attempt);
    tx.append(
        Some(&new.id),
        None,
        Event::Replaced(ReplacedRecord {
            max_attempts: new.max_attempts,
            family: Some(new.family.clone()),
            manifest: Box::new(new.snapshot.clone()),
            manifest_hash: new.hash.clone(),
            attempts_before,
        }),
    )?;
    Ok(())
}

/// Records every open attempt whose lease nobody holds as interrupted.
fn reap_interrupted(tx: &mut Tx<'_>, dir: &DataDir) -> Result<(), StoreError> {
    for (id, attempt, pid) in stale_attempts(dir, tx.state().open_attempts()) {
        tx.append(
            Some(&id),
            Some(attempt),
            Event::AttemptInterrupted(AttemptInterruptedRecord {
                pid,
                by_runner: false,
                cause: None,
            }),
        )?;
    }
    Ok(())
}
