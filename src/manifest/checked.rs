//! Loading a manifest together with the checks that need the executor's
//! allow-rule matcher.

use std::path::Path;

use super::error::ManifestError;
use super::load::load_manifest;
use crate::exec::AllowList;
use crate::protocol::Manifest;

/// Loads a manifest and checks that its allow rules parse and that `verify`
/// matches one of them.
pub fn load_checked(path: &Path) -> Result<Manifest, ManifestError> {
    let manifest = load_manifest(path)?;
    check_commands(&manifest)?;
    Ok(manifest)
}

/// The allow-rule checks of a loaded manifest (or a snapshot).
pub fn check_commands(manifest: &Manifest) -> Result<(), ManifestError> {
    manifest.check_verify_allowed(|allow, verify| {
        let list = AllowList::parse(allow).map_err(|e| e.to_string())?;
        list.check(verify).map_err(|e| e.to_string())
    })
}
