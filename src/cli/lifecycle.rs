//! `enqueue`, `cancel`, `retry`: one transaction each.

use std::path::Path;

use super::exit::Completion;
use crate::lifecycle::{DataDir, Store};

pub fn enqueue(data: &Path, id: &str, attempts: u32) -> anyhow::Result<Completion> {
    crate::protocol::validate_id(id)?;
    let mut store = Store::open(DataDir::new(data))?;
    let created = store.enqueue(id, attempts)?;
    outln!("enqueued={created}");
    Ok(Completion::Success)
}

pub fn cancel(data: &Path, id: &str) -> anyhow::Result<Completion> {
    crate::protocol::validate_instance_id(id)?;
    let mut store = open_existing(data)?;
    store.cancel(id)?;
    outln!("cancelled=true");
    Ok(Completion::Success)
}

pub fn retry(data: &Path, id: &str) -> anyhow::Result<Completion> {
    crate::protocol::validate_instance_id(id)?;
    let mut store = open_existing(data)?;
    let attempt = store.retry(id)?;
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
