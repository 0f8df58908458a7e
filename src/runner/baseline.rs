//! The baseline phase: the pristine source judged once per task in a data
//! dir. The verdict is keyed by everything that determines it
//! (`baseline_key.rs`); an instance whose key has a reusable baseline in
//! the log records that one again with `reused_from` and runs nothing.
//! Instances of one key take turns on a lock, so concurrent repeats and
//! providers run the commands once; `check` runs every baseline afresh
//! (`RunOptions::fresh_baseline`).

use std::fs::{File, TryLockError};
use std::path::Path;
use std::time::Duration;

use super::attempt::{Phases, Step, fail};
use super::baseline_key::baseline_key;
use super::cache_use::CacheUse;
use super::check_verdict::{BaselineFacts, baseline_declared, baseline_of};
use super::error::RunError;
use crate::cache::JobCache;
use crate::manifest::{Acceptance, Baseline};
use crate::protocol::{CommandFor, FailureKind};

/// How often a runner waiting for another's baseline of the same key looks
/// again (and at its cancel token).
const LOCK_POLL: Duration = Duration::from_millis(50);

/// A held baseline lock; dropping it (or the process dying) releases it.
struct BaselineLock {
    _file: File,
}

impl Phases<'_> {
    /// Records the attempt's `baseline` (skipped, reused, or run here), or
    /// returns the attempt's verdict when it cannot (cancelled, no
    /// sandbox, a patch that cannot be laid: see `check`).
    pub(super) fn baseline_phase(
        &mut self,
        acceptance: &Acceptance,
        runs: &Path,
        cache: &JobCache,
        cache_key: &str,
    ) -> Result<Step, RunError> {
        if acceptance.baseline == Baseline::Skip {
            self.record(BaselineFacts::skipped().into_event(None, None))?;
            return Ok(Step::Next(()));
        }
        let data_root = self.store.dir().canonical_root();
        let key = baseline_key(
            self.manifest,
            acceptance,
            cache_key,
            &CacheUse::of(self.manifest, cache),
            &data_root,
            self.cancel,
        );
        let mut _lock = None;
        if !self.options.fresh_baseline {
            if self.reuse(&key)? {
                return Ok(Step::Next(()));
            }
            // Another instance of the key may be running it: wait for it,
            // then take its verdict (or run it, if it recorded none).
            let path = self
                .store
                .dir()
                .cache()
                .join(format!("baseline-{key}.lock"));
            match self.wait_for_lock(&path)? {
                Some(lock) => _lock = Some(lock),
                None => return Ok(Step::End(fail(FailureKind::Cancelled))),
            }
            if self.reuse(&key)? {
                return Ok(Step::Next(()));
            }
        }
        let run = match self.check(acceptance, None, runs, CommandFor::Baseline, cache)? {
            Step::Next(run) => run,
            Step::End(ending) => return Ok(Step::End(ending)),
        };
        let facts = if acceptance.has_explicit_inventory() {
            baseline_declared(&run, acceptance, crate::lang::tooling_for(acceptance))
        } else {
            baseline_of(&run)
        }
        .leaving_out(&acceptance.flaky);
        self.record(facts.into_event(Some(key), None))?;
        Ok(Step::Next(()))
    }

    /// Records the reusable baseline of `key`, if the log holds one, as this
    /// attempt's, in one transaction with the lookup. Whether it did.
    fn reuse(&mut self, key: &str) -> Result<bool, RunError> {
        let (job, attempt) = (self.claim.job.clone(), self.claim.attempt);
        Ok(self.store.transact(|tx| {
            let Some(found) = tx.state().baseline_for(key) else {
                return Ok(false);
            };
            let origin = found.origin.clone();
            let event =
                BaselineFacts::recorded(found).into_event(Some(key.to_string()), Some(origin));
            tx.append(Some(&job), Some(attempt), event)?;
            Ok(true)
        })?)
    }

    /// Takes the lock at `path`, looking again every [`LOCK_POLL`] while
    /// another runner holds it; `None` when the attempt is cancelled first.
    fn wait_for_lock(&self, path: &Path) -> Result<Option<BaselineLock>, RunError> {
        let io = |e: std::io::Error| {
            self.setup_error(format!(
                "failed to take the baseline lock {}: {e}",
                path.display()
            ))
        };
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(io)?;
        }
        let file = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)
            .map_err(io)?;
        loop {
            match file.try_lock() {
                Ok(()) => return Ok(Some(BaselineLock { _file: file })),
                Err(TryLockError::WouldBlock) => {
                    if self.cancel.wait_timeout(LOCK_POLL) {
                        return Ok(None);
                    }
                }
                Err(TryLockError::Error(e)) => return Err(io(e)),
            }
        }
    }
}
