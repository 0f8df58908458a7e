//! Caches no job refers to: `gc` removes them. A cache being filled (its
//! lock held by a runner) is left alone.

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

/// What `remove_unused` removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Removed {
    pub caches: usize,
    pub bytes: u64,
}

/// Removes every cache under `cache_dir` (`DATA/cache`) whose key is not
/// in `used`, with its lock file, unless a runner holds its lock.
pub(crate) fn remove_unused(cache_dir: &Path, used: &BTreeSet<String>) -> std::io::Result<Removed> {
    let mut removed = Removed::default();
    let entries = match fs::read_dir(cache_dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(removed),
        Err(e) => return Err(e),
    };
    for entry in entries.flatten() {
        let Some(name) = entry.file_name().to_str().map(String::from) else {
            continue;
        };
        let is_key = name.len() == 32 && name.bytes().all(|b| b.is_ascii_hexdigit());
        if !is_key || used.contains(&name) || !entry.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let lock_path = cache_dir.join(format!("{name}.lock"));
        let lock = fs::File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)?;
        if lock.try_lock().is_err() {
            continue;
        }
        let path = entry.path();
        let bytes = size_of(&path);
        fs::remove_dir_all(&path)?;
        let _ = fs::remove_file(&lock_path);
        removed.caches += 1;
        removed.bytes += bytes;
    }
    Ok(removed)
}

/// Bytes of the files under `path`, symlinks not followed.
fn size_of(path: &Path) -> u64 {
    let mut total = 0;
    let mut stack = vec![path.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            match entry.file_type() {
                Ok(t) if t.is_dir() => stack.push(entry.path()),
                Ok(t) if t.is_file() => total += entry.metadata().map_or(0, |m| m.len()),
                _ => {}
            }
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_caches_no_job_names_go() {
        let dir = tempfile::tempdir().unwrap();
        let (used, unused) = ("a".repeat(32), "b".repeat(32));
        for key in [&used, &unused] {
            fs::create_dir_all(dir.path().join(key).join("setup")).unwrap();
            fs::write(dir.path().join(key).join("setup/x"), "12345").unwrap();
        }
        fs::create_dir_all(dir.path().join("not-a-key")).unwrap();
        let keep: BTreeSet<String> = [used.clone()].into();
        let removed = remove_unused(dir.path(), &keep).unwrap();
        assert_eq!(
            removed,
            Removed {
                caches: 1,
                bytes: 5
            }
        );
        assert!(dir.path().join(&used).is_dir());
        assert!(!dir.path().join(&unused).exists());
        assert!(dir.path().join("not-a-key").is_dir());
    }
}
