//! The seed form of `run DATA ID WORKSPACE`: a bare lifecycle task driven
//! by environment variables (`AGENT_TASK`, `AGENT_ALLOWED`, `AGENT_VERIFY`,
//! `AGENT_MAX_STEPS`, `AGENT_TIMEOUT_SECS`, `AGY_BIN`), turned into an
//! ordinary manifest so it runs, is recorded and resumes like any job.

use std::path::Path;

use crate::manifest::{Manifest, ManifestError, check_commands, parse_manifest};

/// The seed variables, read once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SeedEnv {
    pub task: String,
    pub allowed: Vec<String>,
    pub verify: Vec<String>,
    pub max_steps: Option<u32>,
    pub timeout_secs: Option<u64>,
    pub agy_bin: String,
}

/// What is wrong with the seed variables.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SeedError {
    #[error("{0} is not set; the seed form `run DATA ID WORKSPACE` needs it")]
    Missing(&'static str),
    #[error("{name}={value:?} is not a {what}")]
    Bad {
        name: &'static str,
        value: String,
        what: &'static str,
    },
    #[error("{0}")]
    Manifest(#[from] ManifestError),
    #[error("AGY_BIN={value:?} {why}; the seed form runs it as the model")]
    Agy { value: String, why: String },
}

impl SeedEnv {
    /// Reads the variables through `get` (the process environment in the CLI).
    pub(crate) fn read(get: impl Fn(&str) -> Option<String>) -> Result<SeedEnv, SeedError> {
        let required = |name: &'static str| {
            get(name)
                .filter(|v| !v.trim().is_empty())
                .ok_or(SeedError::Missing(name))
        };
        let number = |name: &'static str| -> Result<Option<u64>, SeedError> {
            match get(name).filter(|v| !v.trim().is_empty()) {
                None => Ok(None),
                Some(v) => v.trim().parse().map(Some).map_err(|_| SeedError::Bad {
                    name,
                    value: v,
                    what: "whole number",
                }),
            }
        };
        let verify: Vec<String> = required("AGENT_VERIFY")?
            .split(';')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect();
        if verify.is_empty() {
            return Err(SeedError::Missing("AGENT_VERIFY"));
        }
        let max_steps = number("AGENT_MAX_STEPS")?
            .map(|n| {
                u32::try_from(n).map_err(|_| SeedError::Bad {
                    name: "AGENT_MAX_STEPS",
                    value: n.to_string(),
                    what: "step count",
                })
            })
            .transpose()?;
        Ok(SeedEnv {
            task: required("AGENT_TASK")?,
            allowed: get("AGENT_ALLOWED")
                .unwrap_or_default()
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect(),
            verify,
            max_steps,
            timeout_secs: number("AGENT_TIMEOUT_SECS")?,
            agy_bin: get("AGY_BIN")
                .filter(|v| !v.trim().is_empty())
                .unwrap_or_else(|| "agy".to_string()),
        })
    }

    /// Checks that `AGY_BIN` names a program that can start: a path to an
    /// executable file, or a name on the fixed search path.
    pub(crate) fn check_agy(&self) -> Result<(), SeedError> {
        let bad = |why: String| SeedError::Agy {
            value: self.agy_bin.clone(),
            why,
        };
        if !self.agy_bin.contains('/') {
            return crate::exec::SearchPath::fixed()
                .resolve(&self.agy_bin)
                .map(|_| ())
                .map_err(|e| bad(format!("cannot be started: {e}")));
        }
        let meta =
            std::fs::metadata(&self.agy_bin).map_err(|e| bad(format!("cannot be started: {e}")))?;
        use std::os::unix::fs::PermissionsExt as _;
        if !meta.is_file() {
            return Err(bad("is not a file".into()));
        }
        if meta.permissions().mode() & 0o111 == 0 {
            return Err(bad("is not executable (no x permission)".into()));
        }
        Ok(())
    }

    /// The manifest of job `id` working on a copy of `workspace`: every
    /// file editable, each allowed program with any arguments, the verify
    /// command itself allowed, the AGY command provider.
    pub(crate) fn manifest(
        &self,
        id: &str,
        workspace: &Path,
        attempts: u32,
    ) -> Result<Manifest, SeedError> {
        let mut doc = toml::Table::new();
        let s = |v: &str| toml::Value::String(v.to_string());
        let list = |v: &[String]| toml::Value::Array(v.iter().map(|x| s(x)).collect());
        doc.insert("id".into(), s(id));
        doc.insert("prompt".into(), s(&self.task));
        doc.insert("source".into(), s(&workspace.display().to_string()));
        doc.insert("editable".into(), list(&["**".to_string()]));
        let mut allow: Vec<String> = self.allowed.iter().map(|p| format!("{p} **")).collect();
        allow.push(
            self.verify
                .iter()
                .map(|a| {
                    if a.contains(char::is_whitespace) {
                        "*".to_string()
                    } else {
                        a.clone()
                    }
                })
                .collect::<Vec<_>>()
                .join(" "),
        );
        doc.insert("allow".into(), list(&allow));
        doc.insert("verify".into(), list(&self.verify));
        let mut limits = toml::Table::new();
        limits.insert("attempts".into(), toml::Value::Integer(i64::from(attempts)));
        if let Some(steps) = self.max_steps {
            limits.insert("max_steps".into(), toml::Value::Integer(i64::from(steps)));
        }
        if let Some(secs) = self.timeout_secs {
            limits.insert("wall_time".into(), s(&format!("{secs}s")));
        }
        doc.insert("limits".into(), toml::Value::Table(limits));
        let mut provider = toml::Table::new();
        provider.insert("kind".into(), s("command"));
        provider.insert("preset".into(), s("agy"));
        provider.insert("program".into(), s(&self.agy_bin));
        doc.insert("provider".into(), toml::Value::Table(provider));
        let text = toml::to_string(&doc).map_err(|e| SeedError::Bad {
            name: "AGENT_TASK",
            value: e.to_string(),
            what: "manifest",
        })?;
        let origin = workspace.join(format!("{id}.seed.toml"));
        let manifest = parse_manifest(&origin, &text)?;
        check_commands(&manifest)?;
        Ok(manifest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| map.get(k).cloned()
    }

    #[test]
    fn reads_the_seed_variables() {
        let seed = SeedEnv::read(env(&[
            ("AGENT_TASK", "fix it"),
            ("AGENT_ALLOWED", "cargo, ls"),
            ("AGENT_VERIFY", "cargo;test;--quiet"),
            ("AGENT_MAX_STEPS", "7"),
            ("AGENT_TIMEOUT_SECS", "60"),
            ("AGY_BIN", "/opt/agy"),
        ]))
        .unwrap();
        assert_eq!(seed.allowed, ["cargo", "ls"]);
        assert_eq!(seed.verify, ["cargo", "test", "--quiet"]);
        assert_eq!(seed.max_steps, Some(7));
        assert_eq!(seed.agy_bin, "/opt/agy");
        let dir = tempfile::tempdir().unwrap();
        let m = seed.manifest("t1", dir.path(), 2).unwrap();
        assert_eq!(m.verify, ["cargo", "test", "--quiet"]);
        assert_eq!(m.limits.max_steps, 7);
        assert_eq!(m.limits.wall_time, std::time::Duration::from_secs(60));
        assert!(m.allow.contains(&"ls **".to_string()));
    }

    #[test]
    fn agy_bin_must_name_a_program_that_can_start() {
        let dir = tempfile::tempdir().unwrap();
        let seed = |agy: &str| {
            SeedEnv::read(env(&[
                ("AGENT_TASK", "x"),
                ("AGENT_VERIFY", "true"),
                ("AGY_BIN", agy),
            ]))
            .unwrap()
        };
        let missing = dir.path().join("agy");
        let e = seed(missing.to_str().unwrap()).check_agy().unwrap_err();
        assert!(e.to_string().contains("cannot be started"), "{e}");
        std::fs::write(&missing, "#!/bin/sh\n").unwrap();
        let e = seed(missing.to_str().unwrap()).check_agy().unwrap_err();
        assert!(e.to_string().contains("not executable"), "{e}");
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&missing, std::fs::Permissions::from_mode(0o755)).unwrap();
        seed(missing.to_str().unwrap()).check_agy().unwrap();
        seed("sh").check_agy().unwrap();
        assert!(seed("no-such-agy-here").check_agy().is_err());
        assert!(seed(dir.path().to_str().unwrap()).check_agy().is_err());
    }

    #[test]
    fn missing_and_bad_variables_are_named() {
        let e = SeedEnv::read(env(&[("AGENT_VERIFY", "true")])).unwrap_err();
        assert_eq!(
            e.to_string(),
            "AGENT_TASK is not set; the seed form `run DATA ID WORKSPACE` needs it"
        );
        let e = SeedEnv::read(env(&[
            ("AGENT_TASK", "x"),
            ("AGENT_VERIFY", "true"),
            ("AGENT_MAX_STEPS", "many"),
        ]))
        .unwrap_err();
        assert!(e.to_string().contains("AGENT_MAX_STEPS=\"many\""));
        assert!(SeedEnv::read(env(&[("AGENT_TASK", "x")])).is_err());
    }
}
