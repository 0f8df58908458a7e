//! What a loaded manifest knows about its file: where each field was
//! written (for errors found after loading), the file itself, and the
//! settings that have no effect.

use super::error::{Location, ManifestError};
use crate::protocol::{Manifest, ResultsFormat};

impl Manifest {
    /// Where `field` (dotted, e.g. `verify`) was written, or the manifest
    /// as a whole when that is not known (e.g. rebuilt from a snapshot).
    pub fn location_of(&self, field: &str) -> Location {
        match self.origin.fields.get(field) {
            Some(&(line, column)) => Location {
                file: self.origin.file.clone(),
                line,
                column,
            },
            None if self.origin.file.as_os_str().is_empty() => {
                Location::whole(format!("manifest snapshot of job {}", self.id))
            }
            None => Location::whole(&self.origin.file),
        }
    }

    /// What is set but has no effect, one line each (`validate` shows
    /// them): `test_timeout` for a runner that is not libtest.
    pub fn warnings(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(acceptance) = &self.acceptance
            && acceptance.test_timeout.is_some()
            && acceptance.results_format() != ResultsFormat::Libtest
        {
            out.push(format!(
                "{}: acceptance.test_timeout has no effect with results = \"{}\" (tests run in one command, under [limits] command_timeout)",
                self.location_of("acceptance.test_timeout"),
                acceptance.results_format()
            ));
        }
        out
    }

    /// The manifest file this was loaded from, if it was loaded from one.
    pub fn file(&self) -> Option<&std::path::Path> {
        let file = self.origin.file.as_path();
        (!file.as_os_str().is_empty()).then_some(file)
    }

    /// Checks that `verify` is allowed by the `allow` rules, using the
    /// matcher the executor owns: `check(allow, verify)` returns why not.
    pub fn check_verify_allowed<F>(&self, check: F) -> Result<(), ManifestError>
    where
        F: Fn(&[String], &[String]) -> Result<(), String>,
    {
        check(&self.allow, &self.verify).map_err(|reason| ManifestError::Field {
            at: self.location_of("verify"),
            field: "verify".to_string(),
            message: format!("not allowed by any allow rule: {reason}"),
        })
    }
}
