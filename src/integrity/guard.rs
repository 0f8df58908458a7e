//! The workspace guard: which non-editable files of the workspace commands
//! changed, created or deleted, compared with the pristine source before
//! each verify and at the end of the agent phase. Each change is a signal,
//! attributed to the steps since the check before. In a verify-only job
//! (no `[acceptance]`, so verify is the only judge) the guard also puts
//! the pristine file back, or removes the new one, before the verify runs
//! (the workspace is quiescent then: no command is running).
//!
//! Build dirs (the language table's: `target/`, `__pycache__/`, ...) and
//! `.git` are never looked into; a build output the source lacks
//! (`Cargo.lock`) is not a creation. Everything goes through directory
//! descriptors ([`crate::beneath`]): no symlink is followed in the
//! workspace, and a path is resolved once per operation.

use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use globset::GlobSet;

use crate::beneath::{self, AtPath, Dir, Error as Beneath, Found, Kind, Step, Visitor};
use crate::protocol::{Signal, SignalKind};

/// Largest source file put back (source files are the job author's).
const RESTORE_CAP: u64 = 256 << 20;

/// What a check found at a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Change {
    Changed,
    Created,
    Deleted,
    /// The workspace has something else than the source's file there.
    Became(KindName),
}

/// [`Kind`] with an order, for sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum KindName {
    Dir,
    Symlink,
    Other,
}

impl Change {
    fn describe(self) -> &'static str {
        match self {
            Change::Changed => "changed by a command",
            Change::Created => "created by a command",
            Change::Deleted => "deleted by a command",
            Change::Became(KindName::Dir) => "turned into a directory by a command",
            Change::Became(KindName::Symlink) => "turned into a symlink by a command",
            Change::Became(KindName::Other) => "turned into a special file by a command",
        }
    }
}

/// Why a check or a restore could not be made.
#[derive(Debug, thiserror::Error)]
enum GuardError {
    #[error("{}: {source}", .path.display())]
    Open {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Walk(#[from] AtPath),
    #[error(transparent)]
    Beneath(Beneath),
    #[error("a directory is in the way")]
    InTheWay,
    #[error("the source has {0} there")]
    Special(&'static str),
}

/// Watches one workspace for changes to its non-editable files.
#[derive(Debug)]
pub(crate) struct WorkspaceGuard {
    source: PathBuf,
    workspace: PathBuf,
    editable: GlobSet,
    skipped: Vec<&'static str>,
    outputs: Vec<&'static str>,
    restore: bool,
    /// The step of the last check (0: none yet).
    checked_at: u32,
    /// Changes already reported and left in place (not restored).
    reported: BTreeSet<(PathBuf, Change)>,
    signals: Vec<Signal>,
    /// Contained: the files created outside `editable` that are no
    /// harness or startup file, a note rather than a signal (an agent
    /// with its own tools writes scratch files); `None`: every creation is
    /// a signal.
    strays: Option<BTreeSet<String>>,
}

/// What a guard found by the end of the agent phase.
#[derive(Debug, Default)]
pub(crate) struct GuardEnd {
    /// Every signal, in order.
    pub(crate) signals: Vec<Signal>,
    /// New files outside `editable` noted, not signalled (contained runs).
    pub(crate) stray_files: Vec<String>,
}

impl WorkspaceGuard {
    /// A guard of `workspace` against `source`; `restore` puts the
    /// pristine files back before each verify (verify-only jobs).
    pub(crate) fn new(source: &Path, workspace: &Path, editable: GlobSet, restore: bool) -> Self {
        let mut skipped = crate::lang::build_dirs();
        skipped.push(".git");
        WorkspaceGuard {
            source: source.to_path_buf(),
            workspace: workspace.to_path_buf(),
            editable,
            skipped,
            outputs: crate::lang::build_outputs(),
            restore,
            checked_at: 0,
            reported: BTreeSet::new(),
            signals: Vec::new(),
            strays: None,
        }
    }

    /// Notes rather than signals the new files outside `editable` that
    /// are no harness or startup file: a contained agent's own tools
    /// write scratch files (a reproduction script) the patch never
    /// carries.
    pub(crate) fn noting_strays(mut self) -> Self {
        self.strays = Some(BTreeSet::new());
        self
    }

    /// The check before the verify of `step` (restoring, when asked).
    pub(crate) fn before_verify(&mut self, step: u32) {
        self.check(step, self.restore);
    }

    /// The check at the end of the agent phase (`steps` taken); every
    /// signal found, in order, and the stray files noted.
    pub(crate) fn finish(mut self, steps: u32) -> GuardEnd {
        self.check(steps, false);
        GuardEnd {
            signals: self.signals,
            stray_files: self.strays.unwrap_or_default().into_iter().collect(),
        }
    }

    fn check(&mut self, step: u32, restore: bool) {
        let steps = [self.checked_at.max(1), step.max(1)];
        self.checked_at = step;
        let found = match self.scan() {
            Ok(found) => found,
            Err(why) => {
                self.signals.push(Signal {
                    steps: Some(steps),
                    ..Signal::new(
                        SignalKind::WorkspaceChanged,
                        ".",
                        format!("the workspace could not be checked: {why}"),
                    )
                });
                Vec::new()
            }
        };
        for (rel, change) in found {
            if !restore
                && change == Change::Created
                && let Some(strays) = &mut self.strays
            {
                let name = beneath::escape_name(rel.as_os_str());
                if !crate::lang::is_harness_file(&name) && !crate::lang::is_startup_file(&name) {
                    strays.insert(name);
                    continue;
                }
            }
            let mut evidence = change.describe().to_string();
            if restore {
                match self.restore(&rel, change) {
                    Ok(()) => evidence.push_str("; restored to the pristine source before verify"),
                    Err(why) => evidence.push_str(&format!("; could not be restored: {why}")),
                }
            } else if !self.reported.insert((rel.clone(), change)) {
                continue;
            }
            self.signals.push(Signal {
                steps: Some(steps),
                ..Signal::new(
                    SignalKind::WorkspaceChanged,
                    beneath::escape_name(rel.as_os_str()),
                    evidence,
                )
            });
        }
    }

    /// The changes, in path order.
    fn scan(&self) -> Result<Vec<(PathBuf, Change)>, GuardError> {
        let open = |path: &Path| {
            Dir::open(path).map_err(|source| GuardError::Open {
                path: path.to_path_buf(),
                source,
            })
        };
        let (source, workspace) = (open(&self.source)?, open(&self.workspace)?);
        let mut finder = Finder {
            guard: self,
            other: &source,
            in_source: false,
            found: Vec::new(),
        };
        beneath::walk(&workspace, &mut finder)?;
        finder.other = &workspace;
        finder.in_source = true;
        beneath::walk(&source, &mut finder)?;
        let mut found = finder.found;
        found.sort();
        found.dedup();
        Ok(found)
    }

    /// Puts the source's entry at `rel` back in the workspace, or removes
    /// what the source does not have.
    fn restore(&self, rel: &Path, change: Change) -> Result<(), GuardError> {
        let text = GuardError::Beneath;
        let open = |path: &Path| {
            Dir::open(path).map_err(|source| GuardError::Open {
                path: path.to_path_buf(),
                source,
            })
        };
        let (source, workspace) = (open(&self.source)?, open(&self.workspace)?);
        let (parent, leaf) = parent_restoring(&workspace, rel).map_err(text)?;
        if change == Change::Created {
            return parent.remove_tree(leaf).map_err(text);
        }
        match source.kind(rel).map_err(text)? {
            Kind::File => {
                let (bytes, meta) = source.read_capped(rel, RESTORE_CAP).map_err(text)?;
                match parent.replace_file(leaf, &bytes, meta.mode) {
                    Err(Beneath::IsDirectory) => {
                        parent.remove_tree(leaf).map_err(text)?;
                        parent.replace_file(leaf, &bytes, meta.mode).map_err(text)
                    }
                    other => other.map_err(text),
                }
            }
            Kind::Symlink => {
                let (from, name) = source.open_parent(rel).map_err(text)?;
                let target = from.read_link(name).map_err(text)?;
                if let Err(Beneath::IsDirectory) = parent.remove_tree(leaf) {
                    return Err(GuardError::InTheWay);
                }
                parent.replace_symlink(leaf, &target).map_err(text)
            }
            Kind::Dir => match parent.open_subdir(leaf) {
                Ok(_) => Ok(()),
                Err(_) => {
                    parent.remove_tree(leaf).map_err(text)?;
                    parent.subdir_creating(leaf).map(drop).map_err(text)
                }
            },
            other => Err(GuardError::Special(other.describe())),
        }
    }
}

impl crate::agent::VerifyGuard for WorkspaceGuard {
    fn before_verify(&mut self, step: u32) {
        WorkspaceGuard::before_verify(self, step);
    }
}

/// The workspace directory holding `rel`, made a real directory on the
/// way where a command replaced one with a file or a symlink.
fn parent_restoring<'p>(root: &Dir, rel: &'p Path) -> Result<(Dir, &'p OsStr), Beneath> {
    let names: Vec<&OsStr> = rel.iter().collect();
    let (leaf, parents) = names.split_last().ok_or(Beneath::BadPath)?;
    let mut current = root.open_dir(Path::new(""))?;
    for name in parents {
        current = match current.open_subdir(name) {
            Ok(dir) => dir,
            Err(Beneath::Symlink | Beneath::NotDirectory) => {
                current.remove_entry(name)?;
                current.subdir_creating(name)?
            }
            Err(Beneath::NotFound) => current.subdir_creating(name)?,
            Err(e) => return Err(e),
        };
    }
    Ok((current, leaf))
}

/// The walks of a scan: the workspace's entries against the source, then
/// the source's against the workspace (deletions).
struct Finder<'a> {
    guard: &'a WorkspaceGuard,
    /// The tree the walked one is compared with.
    other: &'a Dir,
    in_source: bool,
    found: Vec<(PathBuf, Change)>,
}

impl Visitor for Finder<'_> {
    type Error = AtPath;

    fn visit(&mut self, found: &Found<'_>) -> Result<Step, AtPath> {
        let skipped = found
            .name
            .to_str()
            .is_some_and(|name| self.guard.skipped.contains(&name));
        // A build dir's name is skipped whatever it is (a setup may link
        // `node_modules` from its cache).
        if skipped && matches!(found.kind, Kind::Dir | Kind::Symlink) {
            return Ok(Step::Next);
        }
        if self.guard.editable.is_match(found.rel) {
            return Ok(if found.kind == Kind::Dir {
                Step::Descend
            } else {
                Step::Next
            });
        }
        let rel = found.rel.to_path_buf();
        if self.in_source {
            if found.kind != Kind::Dir {
                match self.other.kind(found.rel) {
                    Err(Beneath::NotFound | Beneath::Symlink | Beneath::NotDirectory) => {
                        self.found.push((rel, Change::Deleted));
                    }
                    Err(Beneath::Io(e)) => return Err(AtPath::new(found.rel, e)),
                    _ => {}
                }
            }
            return Ok(Step::Descend);
        }
        let change = match found.kind {
            Kind::Dir => match self.other.kind(found.rel) {
                Ok(Kind::Dir) | Err(Beneath::NotFound) => return Ok(Step::Descend),
                _ => Some(Change::Became(KindName::Dir)),
            },
            Kind::File => self.compare_file(found)?,
            Kind::Symlink => self.compare_symlink(found)?,
            _ => Some(match self.other.kind(found.rel) {
                Err(Beneath::NotFound) => Change::Created,
                _ => Change::Became(KindName::Other),
            }),
        };
        let output = found
            .name
            .to_str()
            .is_some_and(|name| self.guard.outputs.contains(&name));
        match change {
            Some(Change::Created) if output && found.kind == Kind::File => {}
            Some(change) => self.found.push((rel, change)),
            None => {}
        }
        Ok(Step::Next)
    }

    /// A directory that cannot be entered (a command's `chmod 000`) hides
    /// what it holds: that is a change too.
    fn descend_failed(&mut self, found: &Found<'_>, error: Beneath) -> Result<(), AtPath> {
        match error {
            Beneath::Io(e) if e.kind() != std::io::ErrorKind::PermissionDenied => {
                Err(AtPath::new(found.rel, e))
            }
            _ => {
                self.found.push((found.rel.to_path_buf(), Change::Changed));
                Ok(())
            }
        }
    }
}

impl Finder<'_> {
    /// A workspace file against the source's entry at its path.
    fn compare_file(&self, found: &Found<'_>) -> Result<Option<Change>, AtPath> {
        let io = |e: std::io::Error| AtPath::new(found.rel, e);
        let (mut before, before_meta) = match self.other.open_file(found.rel) {
            Ok(opened) => opened,
            Err(Beneath::NotFound) => return Ok(Some(Change::Created)),
            Err(Beneath::Io(e)) => return Err(io(e)),
            Err(_) => return Ok(Some(Change::Changed)),
        };
        let (mut after, after_meta) = match found.dir.open_file(Path::new(found.name)) {
            Ok(opened) => opened,
            Err(Beneath::Io(e)) if e.kind() != std::io::ErrorKind::PermissionDenied => {
                return Err(io(e));
            }
            Err(_) => return Ok(Some(Change::Changed)),
        };
        let executable = |mode: u32| mode & 0o111 != 0;
        let same = before_meta.size == after_meta.size
            && executable(before_meta.mode) == executable(after_meta.mode)
            && beneath::same_content(&mut after, &mut before).map_err(io)?;
        Ok((!same).then_some(Change::Changed))
    }

    /// A workspace symlink: unchanged only where the source has the same.
    fn compare_symlink(&self, found: &Found<'_>) -> Result<Option<Change>, AtPath> {
        let target = match found.dir.read_link(found.name) {
            Ok(target) => target,
            Err(_) => return Ok(Some(Change::Became(KindName::Symlink))),
        };
        let in_source = self
            .other
            .open_parent(found.rel)
            .and_then(|(parent, leaf)| parent.read_link(leaf));
        Ok(match in_source {
            Ok(same) if same == target => None,
            Ok(_) => Some(Change::Changed),
            Err(_) => match self.other.kind(found.rel) {
                Err(Beneath::NotFound) => Some(Change::Created),
                _ => Some(Change::Became(KindName::Symlink)),
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use std::fs;

    use super::*;

    fn editable(globs: &[&str]) -> GlobSet {
        crate::agent::editable_set(&globs.iter().map(|g| g.to_string()).collect::<Vec<_>>())
            .unwrap()
    }

    fn trees() -> (tempfile::TempDir, PathBuf, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let (source, work) = (tmp.path().join("source"), tmp.path().join("work"));
        for root in [&source, &work] {
            fs::create_dir_all(root.join("src")).unwrap();
            fs::create_dir_all(root.join("tests")).unwrap();
            fs::write(root.join("src/lib.rs"), "pub fn f() {}\n").unwrap();
            fs::write(root.join("tests/visible.rs"), "#[test]\nfn t() {}\n").unwrap();
            fs::write(root.join("Cargo.toml"), "[package]\n").unwrap();
        }
        (tmp, source, work)
    }

    #[test]
    fn a_lock_file_cargo_writes_is_build_output_but_changing_a_shipped_one_is_not() {
        let (_tmp, source, work) = trees();
        let mut guard = WorkspaceGuard::new(&source, &work, editable(&["src/**"]), false);
        fs::write(work.join("Cargo.lock"), "version = 4\n").unwrap();
        fs::create_dir_all(work.join("tests/deep")).unwrap();
        fs::create_dir_all(work.join("Cargo.lock.d")).unwrap();
        guard.before_verify(1);
        assert!(guard.signals.is_empty(), "{:?}", guard.signals);
        let (_tmp2, source, work) = trees();
        fs::write(source.join("Cargo.lock"), "version = 3\n").unwrap();
        fs::write(work.join("Cargo.lock"), "version = 4\n").unwrap();
        let lines: Vec<String> = WorkspaceGuard::new(&source, &work, editable(&["src/**"]), false)
            .finish(1)
            .signals
            .iter()
            .map(Signal::line)
            .collect();
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(lines[0].contains("Cargo.lock: changed"), "{lines:?}");
    }

    #[test]
    fn changes_outside_the_editable_files_and_build_dirs_are_signalled_once() {
        let (_tmp, source, work) = trees();
        let mut guard = WorkspaceGuard::new(&source, &work, editable(&["src/**"]), false);
        // The model's own edit and a build's output are no signal.
        fs::write(work.join("src/lib.rs"), "pub fn f() { }\n").unwrap();
        fs::create_dir_all(work.join("target/debug")).unwrap();
        fs::write(work.join("target/debug/x"), "built").unwrap();
        guard.before_verify(2);
        fs::write(work.join("tests/visible.rs"), "#[test]\nfn t() { }\n").unwrap();
        fs::write(work.join("planted.txt"), "x").unwrap();
        fs::remove_file(work.join("Cargo.toml")).unwrap();
        guard.before_verify(5);
        guard.before_verify(6);
        let signals = guard.finish(7).signals;
        let lines: Vec<String> = signals.iter().map(Signal::line).collect();
        assert_eq!(lines.len(), 3, "{lines:#?}");
        assert!(lines[0].starts_with("workspace_changed Cargo.toml: deleted"));
        assert!(lines[1].contains("planted.txt: created"));
        assert!(lines[2].contains("tests/visible.rs: changed"));
        assert!(
            lines.iter().all(|l| l.ends_with("(steps 2-5)")),
            "{lines:#?}"
        );
        // Nothing was put back.
        assert!(work.join("planted.txt").exists());
    }

    #[test]
    fn contained_new_files_are_strays_but_harness_files_and_changes_are_signals() {
        let (_tmp, source, work) = trees();
        let mut guard =
            WorkspaceGuard::new(&source, &work, editable(&["src/**"]), false).noting_strays();
        fs::write(work.join("reproduce.py"), "print(1)\n").unwrap();
        fs::create_dir_all(work.join("notes")).unwrap();
        fs::write(work.join("notes/plan.md"), "x").unwrap();
        fs::write(work.join("conftest.py"), "# forge\n").unwrap();
        fs::write(work.join("sitecustomize.py"), "# forge\n").unwrap();
        fs::write(work.join("tests/visible.rs"), "// rewritten\n").unwrap();
        guard.before_verify(1);
        let end = guard.finish(2);
        let lines: Vec<String> = end.signals.iter().map(Signal::line).collect();
        assert_eq!(lines.len(), 3, "{lines:#?}");
        assert!(lines[0].contains("conftest.py: created"), "{lines:#?}");
        assert!(lines[1].contains("sitecustomize.py: created"), "{lines:#?}");
        assert!(lines[2].contains("tests/visible.rs: changed"), "{lines:#?}");
        assert!(
            end.stray_files.contains(&"reproduce.py".to_string()),
            "{:?}",
            end.stray_files
        );
        assert!(
            end.stray_files.iter().any(|f| f.starts_with("notes")),
            "{:?}",
            end.stray_files
        );
    }

    #[test]
    fn a_verify_only_guard_restores_the_pristine_files_without_following_links() {
        let (tmp, source, work) = trees();
        let outside = tmp.path().join("outside");
        fs::create_dir_all(&outside).unwrap();
        fs::write(outside.join("keep"), "outside").unwrap();
        let mut guard = WorkspaceGuard::new(&source, &work, editable(&["src/**"]), true);
        fs::write(work.join("tests/visible.rs"), "// rewritten\n").unwrap();
        fs::write(work.join("tests/new.rs"), "#[test] fn n() {}\n").unwrap();
        fs::remove_file(work.join("Cargo.toml")).unwrap();
        std::os::unix::fs::symlink(&outside, work.join("Cargo.toml")).unwrap();
        guard.before_verify(3);
        assert_eq!(
            fs::read_to_string(work.join("tests/visible.rs")).unwrap(),
            "#[test]\nfn t() {}\n"
        );
        assert!(!work.join("tests/new.rs").exists());
        assert!(!work.join("Cargo.toml").is_symlink());
        assert_eq!(
            fs::read_to_string(work.join("Cargo.toml")).unwrap(),
            "[package]\n"
        );
        assert_eq!(fs::read_to_string(outside.join("keep")).unwrap(), "outside");
        let signals = guard.finish(4).signals;
        assert_eq!(signals.len(), 3, "{signals:#?}");
        assert!(signals.iter().all(|s| s.evidence.contains("restored")));
        // A directory replaced by a symlink is made a directory again.
        let mut guard = WorkspaceGuard::new(&source, &work, editable(&["src/**"]), true);
        fs::remove_dir_all(work.join("tests")).unwrap();
        std::os::unix::fs::symlink(&outside, work.join("tests")).unwrap();
        guard.before_verify(1);
        assert!(!work.join("tests").is_symlink());
        assert!(work.join("tests/visible.rs").is_file());
        assert!(!outside.join("visible.rs").exists());
    }
}
