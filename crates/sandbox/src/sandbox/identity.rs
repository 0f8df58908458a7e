//! What granted paths name now (device and inode), looked up once per set
//! of paths and kept while nothing that could change it has happened.
//!
//! A ruleset and a built root hold the files they were built from: a path
//! removed and made again, or renamed over, is another file, and what was
//! built for the old one must not be reused. Looking every granted path
//! up again for each command (some thirty `statx` calls) was the largest
//! part of a command's cost before its spawn. So the lookups are kept,
//! and an inotify descriptor watches, for each path, the directory
//! entries that lead to it: in every directory on its way, the entry of
//! the next step, the links on the way followed (and their targets'
//! entries watched likewise). An entry of one of those created, removed
//! or renamed, a watched directory gone, the kernel's event queue
//! overflowing, or a change to this process's mount table (which
//! `/proc/self/mountinfo` reports to `poll`) drops every kept lookup.
//! Each later lookup is one read of the (non-blocking) inotify descriptor
//! and one `poll`. Where inotify is not available, or a watch cannot be
//! added, the paths are looked up every time.

use std::collections::HashSet;
use std::ffi::OsString;
use std::fs::File;
use std::os::fd::AsFd;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::inotify::{AddWatchFlags, InitFlags, Inotify, WatchDescriptor};

/// A file's device and inode, or zeros when it cannot be read.
pub(crate) type Identity = (u64, u64);

/// How many sets of paths are kept (a runner's attempts share a few).
const KEPT: usize = 16;
/// How many directories one watcher watches before it starts over (a
/// sweep's workspaces each add theirs): bounded, whatever the sweep.
const MAX_WATCHED: usize = 512;

/// What `paths` name now, each looked up afresh.
pub(crate) fn identities<P: AsRef<Path>>(paths: impl Iterator<Item = P>) -> Vec<Identity> {
    paths.map(|path| identity(path.as_ref())).collect()
}

/// What `paths` name now: kept from an earlier lookup of the same paths
/// while nothing that could change it has happened (see the module doc).
pub(crate) fn kept_identities(paths: &[&Path]) -> Vec<Identity> {
    static WATCHER: Mutex<Option<Watcher>> = Mutex::new(None);
    let Ok(mut watcher) = WATCHER.lock() else {
        return identities(paths.iter());
    };
    // Anything that could change a kept lookup starts over: a new
    // descriptor, no watch, nothing kept; so does a watcher grown large.
    if watcher
        .as_mut()
        .is_none_or(|w| w.changed() || w.dirs.len() > MAX_WATCHED)
    {
        *watcher = Watcher::new();
    }
    match watcher.as_mut() {
        Some(watcher) => watcher.lookup(paths),
        None => identities(paths.iter()),
    }
}

fn identity(path: &Path) -> Identity {
    std::fs::metadata(path).map_or((0, 0), |meta| (meta.dev(), meta.ino()))
}

struct Watcher {
    inotify: Inotify,
    /// `/proc/self/mountinfo`, whose `poll` reports a change to the mount
    /// table.
    mounts: File,
    /// The directories watched, by watch, each with the names of its
    /// entries whose change drops the kept lookups.
    dirs: Vec<(WatchDescriptor, PathBuf, HashSet<OsString>)>,
    /// The kept lookups, oldest first.
    kept: Vec<(Vec<PathBuf>, Vec<Identity>)>,
    /// Something changed: nothing kept may be trusted again (a watch may
    /// be gone with its directory), so the watcher starts over.
    stale: bool,
}

impl Watcher {
    fn new() -> Option<Watcher> {
        let inotify = Inotify::init(InitFlags::IN_NONBLOCK | InitFlags::IN_CLOEXEC).ok()?;
        let mounts = File::open("/proc/self/mountinfo").ok()?;
        // Only a change after the open is reported.
        Some(Watcher {
            inotify,
            mounts,
            dirs: Vec::new(),
            kept: Vec::new(),
            stale: false,
        })
    }

    /// `paths` looked up, or kept from the last lookup of the same paths;
    /// the caller has just checked nothing [`changed`](Self::changed).
    fn lookup(&mut self, paths: &[&Path]) -> Vec<Identity> {
        if let Some((_, ids)) = self
            .kept
            .iter()
            .find(|(kept, _)| kept.iter().map(PathBuf::as_path).eq(paths.iter().copied()))
        {
            return ids.clone();
        }
        // Watched before they are looked up: a change in between drops
        // what is about to be kept.
        let watched = paths.iter().all(|path| self.watch(path));
        let ids = identities(paths.iter());
        // Kept only if nothing changed since the watches were added (a
        // change noticed here starts over at the next lookup).
        if watched && !self.changed() {
            if self.kept.len() >= KEPT {
                self.kept.remove(0);
            }
            self.kept
                .push((paths.iter().map(|p| p.to_path_buf()).collect(), ids.clone()));
        }
        ids
    }

    /// Whether anything that could change a kept lookup happened since
    /// this watcher was made: an entry watched made, removed or renamed,
    /// a watched directory gone or moved (its watch no longer where it was
    /// added), the queue overflowing, or the mount table changing. Once
    /// true, always true.
    fn changed(&mut self) -> bool {
        if !self.stale {
            self.stale = self.mounts_changed() || self.entries_changed();
        }
        self.stale
    }

    /// Reads every queued event: whether one says a watched entry or
    /// directory changed (or the queue cannot be trusted).
    fn entries_changed(&self) -> bool {
        let gone = AddWatchFlags::IN_Q_OVERFLOW
            | AddWatchFlags::IN_IGNORED
            | AddWatchFlags::IN_DELETE_SELF
            | AddWatchFlags::IN_MOVE_SELF;
        let mut changed = false;
        loop {
            let events = match self.inotify.read_events() {
                Ok(events) if !events.is_empty() => events,
                Ok(_) | Err(nix::errno::Errno::EAGAIN) => return changed,
                // With an error the queue cannot be trusted.
                Err(_) => return true,
            };
            changed |= events.iter().any(|event| {
                event.mask.intersects(gone)
                    || self.dirs.iter().any(|(wd, _, names)| {
                        *wd == event.wd && event.name.as_ref().is_some_and(|n| names.contains(n))
                    })
            });
        }
    }

    /// Whether the mount table changed since the descriptor was opened
    /// (the kernel says so to `poll` until it is asked).
    fn mounts_changed(&self) -> bool {
        let mut fds = [PollFd::new(self.mounts.as_fd(), PollFlags::POLLPRI)];
        match poll(&mut fds, PollTimeout::ZERO) {
            Ok(0) => false,
            Ok(_) => fds[0]
                .revents()
                .is_none_or(|r| r.intersects(PollFlags::POLLPRI | PollFlags::POLLERR)),
            Err(_) => true,
        }
    }

    /// Watches every directory entry `path`'s resolution goes through;
    /// false where that cannot be done (then nothing may be kept).
    fn watch(&mut self, path: &Path) -> bool {
        let Some(steps) = resolution(path) else {
            return false;
        };
        for (dir, name) in steps {
            if let Some((_, _, names)) = self.dirs.iter_mut().find(|(_, d, _)| *d == dir) {
                names.insert(name);
                continue;
            }
            let flags = AddWatchFlags::IN_CREATE
                | AddWatchFlags::IN_DELETE
                | AddWatchFlags::IN_MOVED_FROM
                | AddWatchFlags::IN_MOVED_TO
                | AddWatchFlags::IN_DELETE_SELF
                | AddWatchFlags::IN_MOVE_SELF
                | AddWatchFlags::IN_ONLYDIR;
            match self.inotify.add_watch(&dir, flags) {
                Ok(wd) => self.dirs.push((wd, dir, HashSet::from([name]))),
                Err(_) => return false,
            }
        }
        true
    }
}

/// The (directory, entry name) pairs that `path` resolves through, as the
/// kernel walks it (see `path_walk.rs`). `None` for a relative path or
/// too many links.
fn resolution(path: &Path) -> Option<Vec<(PathBuf, OsString)>> {
    if !path.is_absolute() {
        return None;
    }
    let walk = super::path_walk::walk(path);
    (!walk.too_many_links).then(|| walk.steps.into_iter().map(|s| (s.dir, s.name)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_resolution_names_each_entry_and_follows_links() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("real/sub")).unwrap();
        std::os::unix::fs::symlink("real", root.join("link")).unwrap();
        let steps = resolution(&root.join("link/sub")).unwrap();
        let names: Vec<(PathBuf, String)> = steps
            .into_iter()
            .filter(|(d, _)| d.starts_with(&root))
            .map(|(d, n)| (d, n.to_string_lossy().into_owned()))
            .collect();
        assert_eq!(
            names,
            vec![
                (root.clone(), "link".to_string()),
                (root.clone(), "real".to_string()),
                (root.join("real"), "sub".to_string()),
            ]
        );
        assert!(resolution(Path::new("relative")).is_none());
    }

    #[test]
    fn kept_lookups_follow_a_path_made_again_renamed_over_or_relinked() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let (ws, file, link) = (root.join("ws"), root.join("file"), root.join("link"));
        std::fs::create_dir(&ws).unwrap();
        std::fs::write(&file, "a").unwrap();
        std::fs::create_dir(root.join("other")).unwrap();
        std::os::unix::fs::symlink("ws", &link).unwrap();
        let mut watcher = Watcher::new();
        let paths = [ws.as_path(), file.as_path(), link.as_path()];
        let fresh = |paths: &[&Path]| identities(paths.iter());
        // As `kept_identities`, on a watcher of this test's own.
        let mut lookup = |paths: &[&Path]| {
            if watcher.as_mut().is_none_or(Watcher::changed) {
                watcher = Watcher::new();
            }
            let watcher = watcher.as_mut().unwrap();
            (watcher.lookup(paths), watcher.kept.len())
        };
        let (first, _) = lookup(&paths);
        assert_eq!(first, fresh(&paths));
        // Kept while nothing changes, and while unrelated entries do.
        std::fs::write(root.join("noise"), "x").unwrap();
        std::fs::write(ws.join("inside"), "x").unwrap();
        assert_eq!(lookup(&paths), (first.clone(), 1));
        // The workspace made again at its path (made before the old one
        // goes, so it cannot get its inode).
        std::fs::create_dir(root.join("ws-new")).unwrap();
        std::fs::remove_dir_all(&ws).unwrap();
        std::fs::rename(root.join("ws-new"), &ws).unwrap();
        let (second, _) = lookup(&paths);
        assert_ne!(second[0], first[0]);
        assert_eq!(second, fresh(&paths));
        // A file renamed over.
        std::fs::write(root.join("file-new"), "b").unwrap();
        std::fs::rename(root.join("file-new"), &file).unwrap();
        let (third, _) = lookup(&paths);
        assert_ne!(third[1], second[1]);
        assert_eq!(third, fresh(&paths));
        // The link pointed elsewhere.
        std::fs::remove_file(&link).unwrap();
        std::os::unix::fs::symlink("other", &link).unwrap();
        let (fourth, _) = lookup(&paths);
        assert_ne!(fourth[2], third[2]);
        assert_eq!(fourth, fresh(&paths));
    }

    #[test]
    fn a_change_seen_once_stays_seen_so_a_gone_watch_is_never_trusted() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let ws = root.join("d/ws");
        std::fs::create_dir_all(&ws).unwrap();
        let mut watcher = Watcher::new().unwrap();
        watcher.lookup(&[ws.as_path()]);
        assert!(!watcher.changed());
        // The watched directory goes (its watch with it) and comes back.
        std::fs::remove_dir_all(root.join("d")).unwrap();
        std::fs::create_dir_all(&ws).unwrap();
        // A lookup of other paths reads the events; the change stays seen.
        let other = root.join("other");
        std::fs::create_dir(&other).unwrap();
        watcher.lookup(&[other.as_path()]);
        assert!(watcher.changed());
        assert!(watcher.changed(), "seen once, a change stays seen");
        assert_eq!(kept_identities(&[ws.as_path()]), identities([&ws].iter()));
    }
}
