//! `enqueue`, `cancel`, `retry`: one transaction each.

use std::path::Path;

use super::exit::Completion;
use crate::lifecycle::{DataDir, Store, StoreError};
use crate::state::Illegal;

pub(super) fn enqueue(data: &Path, id: &str, attempts: u32) -> anyhow::Result<Completion> {
    crate::protocol::validate_id(id)?;
    let mut store = Store::open(DataDir::new(data))?;
    let created = store.enqueue(id, attempts)?;
    outln!("enqueued={created}");
    Ok(Completion::Success)
}

pub(super) fn cancel(data: &Path, id: &str) -> anyhow::Result<Completion> {
    crate::protocol::validate_instance_id(id)?;
    let mut store = open_existing(data)?;
    store.cancel(id)?;
    outln!("cancelled=true");
    Ok(Completion::Success)
}

pub(super) fn retry(data: &Path, id: &str) -> anyhow::Result<Completion> {
    crate::protocol::validate_instance_id(id)?;
    let mut store = open_existing(data)?;
    let attempt = match store.retry(id) {
        Ok(attempt) => attempt,
        Err(StoreError::Illegal(Illegal::NoAttemptsLeft { job, max })) => {
            // `retry` only spends attempts that are left; starting over is
            // the batch's `--rerun failed`.
            let used = match max {
                1 => "its 1 attempt is used".to_string(),
                n => format!("all {n} attempts are used"),
            };
            let manifest_job = store.state().job(id).is_some_and(|j| j.manifest.is_some());
            if manifest_job {
                anyhow::bail!(
                    "cannot retry job {job:?}: {used}; to run it again from scratch with fresh attempts, rerun its batch: agent-runtime batch {} JOBS... --rerun failed (the earlier attempts stay in the log)",
                    data.display()
                );
            }
            anyhow::bail!(
                "cannot retry job {job:?}: {used}; a bare task cannot start over: enqueue it again under a new id"
            );
        }
        Err(e) => return Err(e.into()),
    };
    outln!("requeued=true next_attempt={attempt}");
    Ok(Completion::Success)
}

/// Commands that act on existing jobs never create a data directory.
fn open_existing(data: &Path) -> anyhow::Result<Store> {
    let dir = DataDir::new(data);
    if !dir.log().is_file() {
        anyhow::bail!("no log at {}", dir.log().display());
    }
    Ok(Store::open(dir)?)
}
