//! The environment a command sees: cleared, then a small allowlisted set.
//! Nothing from the runner's environment is passed through except the
//! toolchain locations, so secrets such as API keys never reach a command.

use std::collections::BTreeMap;
use std::path::Path;

use super::error::ExecError;
use super::search_path::SearchPath;
use super::toolchain::Toolchain;

/// Keys a job's extra variables may not override: the executor owns them.
const RESERVED: [&str; 3] = ["PATH", "HOME", "TMPDIR"];

/// Builds the full environment of a command.
pub fn command_env(
    search_path: &SearchPath,
    toolchain: &Toolchain,
    home: &Path,
    tmp: &Path,
    extra: &BTreeMap<String, String>,
) -> Result<BTreeMap<String, String>, ExecError> {
    let mut env = BTreeMap::new();
    env.insert("PATH".to_string(), search_path.to_env());
    env.insert("HOME".to_string(), home.display().to_string());
    env.insert("TMPDIR".to_string(), tmp.display().to_string());
    env.insert("LANG".to_string(), "C.UTF-8".to_string());
    env.insert("TERM".to_string(), "dumb".to_string());
    if let Some(rustup) = &toolchain.rustup_home {
        env.insert("RUSTUP_HOME".to_string(), rustup.display().to_string());
    }
    if let Some(cargo) = &toolchain.cargo_home {
        env.insert("CARGO_HOME".to_string(), cargo.display().to_string());
    }
    for (key, value) in extra {
        check_key(key)?;
        if value.contains('\0') {
            return Err(ExecError::BadEnv {
                key: key.clone(),
                reason: "the value contains a NUL byte",
            });
        }
        env.insert(key.clone(), value.clone());
    }
    Ok(env)
}

fn check_key(key: &str) -> Result<(), ExecError> {
    let bad = |reason| {
        Err(ExecError::BadEnv {
            key: key.to_string(),
            reason,
        })
    };
    if RESERVED.contains(&key) {
        return bad("it is set by the executor");
    }
    let mut chars = key.chars();
    let first_ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    if !first_ok || !chars.all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return bad("names are letters, digits and '_', not starting with a digit");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn build(extra: &[(&str, &str)]) -> Result<BTreeMap<String, String>, ExecError> {
        let extra = extra
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let toolchain = Toolchain {
            rustup_home: Some(PathBuf::from("/opt/rustup")),
            cargo_home: None,
        };
        command_env(
            &SearchPath::new(vec![PathBuf::from("/usr/bin")]),
            &toolchain,
            Path::new("/w/home"),
            Path::new("/w/tmp"),
            &extra,
        )
    }

    #[test]
    fn only_allowlisted_keys_and_extras() {
        let env = build(&[("RUST_BACKTRACE", "0")]).unwrap();
        let keys: Vec<&str> = env.keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "HOME",
                "LANG",
                "PATH",
                "RUSTUP_HOME",
                "RUST_BACKTRACE",
                "TERM",
                "TMPDIR"
            ]
        );
        assert_eq!(env["PATH"], "/usr/bin");
        assert_eq!(env["HOME"], "/w/home");
    }

    #[test]
    fn reserved_and_malformed_keys_are_rejected() {
        assert!(build(&[("PATH", "/tmp")]).is_err());
        assert!(build(&[("1X", "a")]).is_err());
        assert!(build(&[("A=B", "a")]).is_err());
        assert!(build(&[("A", "a\0b")]).is_err());
    }
}
