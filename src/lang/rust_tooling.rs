//! Rust's tooling: Cargo's manifests and lock file are a setup's inputs,
//! their dependency tables its cache key; `cargo build --offline` is the
//! build check; an Exercism exercise runs `cargo test --offline` (every
//! test, ignored ones included) and fetches its crates in a setup when its
//! `Cargo.toml` has dependencies.

use super::Rust;
use super::tooling::{Exercise, Tooling, TrackJob};

/// Tables of a `Cargo.toml` that do not change what is fetched or how the
/// dependencies build.
const LOCAL_TABLES: &[&str] = &[
    "package", "lib", "bin", "test", "bench", "example", "badges",
];

impl Tooling for Rust {
    fn tooling_name(&self) -> &'static str {
        "rust"
    }

    fn setup_inputs(&self) -> &'static [&'static str] {
        &[
            "**/Cargo.toml",
            "**/Cargo.lock",
            ".cargo/config.toml",
            ".cargo/config",
        ]
    }

    /// A `Cargo.toml` without its package and target tables; a
    /// `Cargo.lock` with only its registry and git packages.
    fn setup_key_text(&self, rel: &str, text: &str) -> String {
        let file = rel.rsplit('/').next().unwrap_or(rel);
        let Ok(mut doc) = text.parse::<toml::Table>() else {
            return text.to_string();
        };
        match file {
            "Cargo.toml" => {
                for table in LOCAL_TABLES {
                    doc.remove(*table);
                }
            }
            "Cargo.lock" => {
                let packages: Vec<toml::Value> = doc
                    .get("package")
                    .and_then(toml::Value::as_array)
                    .map(|list| {
                        list.iter()
                            .filter(|p| p.get("source").is_some())
                            .cloned()
                            .collect()
                    })
                    .unwrap_or_default();
                doc = toml::Table::new();
                doc.insert("package".into(), toml::Value::Array(packages));
            }
            _ => return text.to_string(),
        }
        serde_json::to_string(&doc).unwrap_or_default()
    }

    /// An empty `src/lib.rs` beside each `Cargo.toml`, so Cargo finds a
    /// target to fetch for.
    fn setup_scaffold(&self, inputs: &[String]) -> Vec<String> {
        inputs
            .iter()
            .filter_map(|rel| {
                let dir = rel.strip_suffix("Cargo.toml")?;
                (dir.is_empty() || dir.ends_with('/')).then(|| format!("{dir}src/lib.rs"))
            })
            .collect()
    }

    fn builds(&self, argv: &[String]) -> bool {
        argv.first().is_some_and(|p| p == "cargo")
            && argv.get(1).is_some_and(|sub| {
                matches!(
                    sub.as_str(),
                    "build" | "b" | "test" | "t" | "check" | "c" | "run" | "r" | "clippy" | "bench"
                )
            })
    }

    fn build_check(&self, _files: &[String]) -> Vec<String> {
        ["cargo", "build", "--offline", "--quiet"]
            .map(String::from)
            .to_vec()
    }

    fn track_job(&self, exercise: &Exercise) -> Option<TrackJob> {
        let setup = if exercise.has_dependencies {
            vec![vec!["cargo".to_string(), "fetch".to_string()]]
        } else {
            Vec::new()
        };
        Some(TrackJob {
            command: ["cargo", "test", "--offline"].map(String::from).to_vec(),
            results: None,
            env: Vec::new(),
            setup,
            verify: self.build_check(&exercise.solution),
            allow: vec!["cargo test --offline **".into()],
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crates_with_the_same_dependencies_have_the_same_key_text() {
        let a = "[package]\nname = \"two-fer\"\nversion = \"1.0.0\"\n\n[dependencies]\nrand = \"0.8\"\n";
        let b = "[package]\nname = \"dice\"\nedition = \"2021\"\n[dependencies]\nrand = \"0.8\"\n";
        let c = "[package]\nname = \"dice\"\n[dependencies]\nrand = \"0.7\"\n";
        let key = |t| Rust.setup_key_text("Cargo.toml", t);
        assert_eq!(key(a), key(b));
        assert_ne!(key(a), key(c));
        let lock = "version = 3\n[[package]]\nname = \"two-fer\"\nversion = \"1.0.0\"\n\n[[package]]\nname = \"rand\"\nversion = \"0.8.5\"\nsource = \"registry+x\"\n";
        let text = Rust.setup_key_text("Cargo.lock", lock);
        assert!(text.contains("rand") && !text.contains("two-fer"), "{text}");
        assert_eq!(
            Rust.setup_scaffold(&[
                "Cargo.toml".into(),
                "m/Cargo.toml".into(),
                "Cargo.lock".into()
            ]),
            ["src/lib.rs", "m/src/lib.rs"]
        );
        assert!(Rust.builds(&["cargo".into(), "test".into()]));
        assert!(!Rust.builds(&["cargo".into(), "fetch".into()]));
    }
}
