//! What is built once and reused while the same grants come back naming
//! the same files: Landlock rulesets, mount plans and their roots, and
//! the canonical grant lists.

use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use super::error::SandboxError;
use super::grants::{Grants, grant_lists};
use super::identity::Identity;
use super::landlock;
use super::mounts::{MountGrant, MountPlan};
use super::policy::SandboxPolicy;

/// How many built rulesets and mount plans are kept for reuse: commands of
/// one attempt share their grants, and a batch runs a few attempts at once.
const CACHED: usize = 16;

/// A few recently built values, reused while the same key comes back.
struct Recent<K, V> {
    entries: Mutex<Vec<(K, V)>>,
}

impl<K: PartialEq, V: Clone> Recent<K, V> {
    const fn new() -> Self {
        Recent {
            entries: Mutex::new(Vec::new()),
        }
    }

    fn get_or_build<E>(&self, key: K, build: impl FnOnce(&K) -> Result<V, E>) -> Result<V, E> {
        if let Ok(entries) = self.entries.lock()
            && let Some((_, value)) = entries.iter().find(|(k, _)| *k == key)
        {
            return Ok(value.clone());
        }
        let value = build(&key)?;
        if let Ok(mut entries) = self.entries.lock() {
            if entries.len() >= CACHED {
                entries.remove(0);
            }
            entries.push((key, value.clone()));
        }
        Ok(value)
    }
}

/// A Landlock ruleset for these grants (read, write, block TCP, hard),
/// reused while the same grants come back naming the same files (`ids`,
/// what the grants as given and the skeleton's directories name now):
/// building one opens every path.
pub(super) fn cached_ruleset(
    read: Vec<PathBuf>,
    write: Vec<PathBuf>,
    block_tcp: bool,
    hard: bool,
    ids: Vec<Identity>,
) -> Result<Option<Arc<OwnedFd>>, SandboxError> {
    type Key = (Vec<PathBuf>, Vec<PathBuf>, bool, bool, Vec<Identity>);
    static CACHE: Recent<Key, Option<Arc<OwnedFd>>> = Recent::new();
    CACHE.get_or_build(
        (read, write, block_tcp, hard, ids),
        |(read, write, tcp, hard, _)| Ok(landlock::build(read, write, *tcp, *hard)?.map(Arc::new)),
    )
}

/// A mount plan for these grants (and a private scratch or not), and with
/// `prepare_root` the namespace holding its root, reused like rulesets
/// while the grants name the same files (`ids`, in the grants' order).
pub(super) fn cached_plan(
    grants: Vec<MountGrant>,
    scratch: bool,
    prepare_root: bool,
    ids: Vec<Identity>,
) -> Result<(Arc<MountPlan>, Option<Arc<OwnedFd>>), SandboxError> {
    type Plan = (Arc<MountPlan>, Option<Arc<OwnedFd>>);
    type Key = (Vec<MountGrant>, bool, bool, Vec<Identity>);
    static CACHE: Recent<Key, Plan> = Recent::new();
    CACHE.get_or_build(
        (grants, scratch, prepare_root, ids),
        |(grants, scratch, prepare, _)| {
            let plan = MountPlan::new(grants, *scratch)?;
            let root = prepare.then(|| plan.prepared_root()).flatten();
            Ok((Arc::new(plan), root.map(Arc::new)))
        },
    )
}

/// [`grant_lists`], reused while the same grants come back naming the
/// same files (`ids`; resolving them walks every path, link by link). Grants are the runner's choice
/// (system, toolchain, workspace), never a command's.
pub(super) fn cached_grant_lists(
    policy: &SandboxPolicy,
    grants: &Grants,
    ids: &[Identity],
) -> (Vec<PathBuf>, Vec<PathBuf>) {
    type Key = ([Vec<PathBuf>; 4], Vec<Identity>);
    static CACHE: Recent<Key, (Vec<PathBuf>, Vec<PathBuf>)> = Recent::new();
    let key = [
        grants.read.clone(),
        grants.write.clone(),
        policy.readable.clone(),
        policy.writable.clone(),
    ];
    CACHE
        .get_or_build((key, ids.to_vec()), |_| {
            Ok::<_, std::convert::Infallible>(grant_lists(policy, grants))
        })
        .unwrap_or_else(|never| match never {})
}
