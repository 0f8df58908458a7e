//! Integrity: what the runner finds out about an attempt that a fix has no
//! business doing, as tamper signals with their evidence
//! ([`crate::protocol::Signal`]), and what its canaries show.
//!
//! Owns: the workspace guard (`guard.rs`: non-editable files commands
//! changed, created or deleted, checked before each verify and at the end
//! of the agent phase; a verify-only job's workspace restored to the
//! pristine source before each verify), the patch's signals and which of
//! its files acceptance keeps out (`patch_scan.rs`: test infrastructure,
//! harness internals), and judging the canaries of a run (`canary.rs`)
//! and its twins (`twins.rs`: copies of the hidden tests that must fail
//! with a token; the baseline's calibration, forged and mismatched twins).
//! What counts as a harness file, a test file, a build dir or a harness
//! internal is the language table's ([`crate::lang`]).
//!
//! Never does: decide an attempt's verdict (the runner does, from the
//! record), follow a symlink in a workspace (everything goes through
//! [`crate::beneath`]), or read the hidden tests for anything but their
//! names.

mod canary;
mod guard;
mod patch_scan;
mod twins;

pub(crate) use canary::{CanaryResult, acceptance_canaries, baseline_canaries};
pub(crate) use guard::WorkspaceGuard;
pub(crate) use patch_scan::{PatchFile, kept_out, named_exactly, patch_signals};
pub(crate) use twins::{TwinCase, TwinResult, acceptance_twins, baseline_twins, rerun_candidates};
