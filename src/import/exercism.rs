//! Exercism tracks (and Aider's polyglot set, which is Exercism exercises)
//! as jobs. A track checkout's `config.json` names the language and lists
//! the practice exercises (deprecated ones are left out); each exercise
//! folder has `.meta/config.json` naming its `files.solution` (the stub:
//! editable), `files.test` (the hidden tests) and `files.example` (the
//! reference solution: the oracle), and `.docs/` (the prompt).

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::job_dir::{
    AcceptanceDraft, JobFiles, ManifestDraft, OracleDraft, SetupDraft, copy_filtered, exact_rule,
    oracle_script,
};
use super::{ImportError, ImportReport, Taken, input};
use crate::lang::{Exercise, Tooling};

/// What `import exercism` was asked for.
#[derive(Debug, Clone, Default)]
pub(crate) struct ExercismOptions {
    /// Track checkouts, their `exercises/practice`, or single exercises.
    pub paths: Vec<PathBuf>,
    pub out: PathBuf,
    /// Also copy the tests into the source, as Aider's benchmark does.
    pub visible_tests: bool,
}

/// A track's `config.json`, the parts read.
#[derive(Debug, Default, Deserialize)]
struct TrackConfig {
    #[serde(default)]
    language: String,
    #[serde(default)]
    slug: String,
    #[serde(default)]
    exercises: TrackExercises,
}

#[derive(Debug, Default, Deserialize)]
struct TrackExercises {
    #[serde(default)]
    practice: Vec<TrackExercise>,
}

#[derive(Debug, Default, Deserialize)]
struct TrackExercise {
    slug: String,
    #[serde(default)]
    status: Option<String>,
}

/// An exercise's `.meta/config.json`, the parts read.
#[derive(Debug, Default, Deserialize)]
struct ExerciseConfig {
    #[serde(default)]
    files: ExerciseFiles,
}

#[derive(Debug, Default, Deserialize)]
struct ExerciseFiles {
    #[serde(default)]
    solution: Vec<String>,
    #[serde(default)]
    test: Vec<String>,
    #[serde(default)]
    example: Vec<String>,
}

/// The exercises one PATH names, and its track.
struct Found {
    track: String,
    exercises: Vec<PathBuf>,
    /// Exercises the track's config left out, with why.
    skipped: Vec<(String, String)>,
}

/// Imports every practice exercise `options.paths` name into
/// `options.out`, one job folder each; names what it left out and why.
pub(crate) fn import_exercism(options: &ExercismOptions) -> Result<ImportReport, ImportError> {
    let mut report = ImportReport::default();
    fs::create_dir_all(&options.out).map_err(super::write_err(&options.out))?;
    for path in &options.paths {
        let found = find(path)?;
        for (slug, why) in found.skipped {
            report
                .skipped
                .push((format!("{}-{slug}", found.track), why));
        }
        let tooling = crate::lang::tooling(&found.track);
        for dir in &found.exercises {
            let slug = dir
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or_default()
                .to_string();
            let id = format!("{}-{slug}", found.track);
            let Some(tooling) = tooling else {
                report
                    .skipped
                    .push((id, missing_language(&found.track).to_string()));
                continue;
            };
            match import_one(dir, &found.track, &slug, tooling, options)? {
                Taken::Imported(manifest) => report.written.push((id, manifest)),
                Taken::Left(why) => report.skipped.push((id, why)),
            }
        }
    }
    Ok(report)
}

/// Why a track's language cannot be imported on this machine.
fn missing_language(track: &str) -> &'static str {
    match track {
        "go" => "go: the Go toolchain is not installed on this machine",
        "cpp" => "cpp: the track builds with CMake, which is not installed on this machine",
        "java" => {
            "java: the track builds with Gradle, whose JUnit and AssertJ come from Maven Central, which this machine cannot reach"
        }
        _ => "the language table has no importer layout for this track's language",
    }
}

/// The track and exercises of PATH: a track checkout, its practice dir,
/// or one exercise.
fn find(path: &Path) -> Result<Found, ImportError> {
    let config = path.join("config.json");
    if config.is_file() && path.join("exercises").is_dir() {
        let track = read_track(&config)?;
        let practice = path.join("exercises/practice");
        let deprecated: BTreeMap<&str, &str> = track
            .exercises
            .practice
            .iter()
            .filter_map(|e| {
                e.status
                    .as_deref()
                    .filter(|s| *s == "deprecated")
                    .map(|s| (e.slug.as_str(), s))
            })
            .collect();
        let mut found = Found {
            track: track_name(&track),
            exercises: Vec::new(),
            skipped: Vec::new(),
        };
        for dir in exercise_dirs(&practice)? {
            let slug = dir.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            if deprecated.contains_key(slug) {
                found.skipped.push((
                    slug.to_string(),
                    "deprecated in the track's config.json".into(),
                ));
            } else {
                found.exercises.push(dir);
            }
        }
        return Ok(found);
    }
    if path.join(".meta/config.json").is_file() {
        let track = ancestor_track(path, 3)?;
        return Ok(Found {
            track,
            exercises: vec![path.to_path_buf()],
            skipped: Vec::new(),
        });
    }
    let exercises = exercise_dirs(path)?;
    if exercises.is_empty() {
        return Err(input(
            path,
            "not an Exercism track (config.json and exercises/), practice folder or exercise (.meta/config.json)",
        ));
    }
    Ok(Found {
        track: ancestor_track(path, 2)?,
        exercises,
        skipped: Vec::new(),
    })
}

fn read_track(config: &Path) -> Result<TrackConfig, ImportError> {
    let text =
        fs::read_to_string(config).map_err(|e| input(config, format!("cannot read: {e}")))?;
    serde_json::from_str(&text).map_err(|e| input(config, format!("not a track config: {e}")))
}

/// The track's name: its `slug` (`rust`), else its language lowercased.
fn track_name(track: &TrackConfig) -> String {
    let name = if track.slug.is_empty() {
        track.language.to_lowercase()
    } else {
        track.slug.to_lowercase()
    };
    match name.as_str() {
        "c++" => "cpp".into(),
        _ => name,
    }
}

/// The track of an exercise or practice dir: the `config.json` `up`
/// levels above it.
fn ancestor_track(path: &Path, up: usize) -> Result<String, ImportError> {
    let mut root = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    for _ in 0..up {
        root.pop();
    }
    let config = root.join("config.json");
    if !config.is_file() {
        return Err(input(
            path,
            format!(
                "its track's config.json (which names the language) is not at {}",
                config.display()
            ),
        ));
    }
    Ok(track_name(&read_track(&config)?))
}

/// The folders under `dir` that hold `.meta/config.json`, sorted.
fn exercise_dirs(dir: &Path) -> Result<Vec<PathBuf>, ImportError> {
    let entries = fs::read_dir(dir).map_err(|e| input(dir, format!("cannot read: {e}")))?;
    let mut dirs: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join(".meta/config.json").is_file())
        .collect();
    dirs.sort();
    Ok(dirs)
}

/// Imports one exercise; `Ok(Taken::Left(why))` when it is left out.
fn import_one(
    dir: &Path,
    track: &str,
    slug: &str,
    tooling: &dyn Tooling,
    options: &ExercismOptions,
) -> Result<Taken<PathBuf>, ImportError> {
    let meta = dir.join(".meta/config.json");
    let text = fs::read_to_string(&meta).map_err(|e| input(&meta, format!("cannot read: {e}")))?;
    let config: ExerciseConfig = match serde_json::from_str(&text) {
        Ok(config) => config,
        Err(e) => {
            return Ok(Taken::Left(format!(
                ".meta/config.json does not parse: {e}"
            )));
        }
    };
    // Every path as the file system reads it (`tests//x`, `./x`, `x/`
    // name `tests/x` and `x`), so the filters below see what is copied.
    let mut files = config.files;
    for (what, list) in [
        ("files.solution", &mut files.solution),
        ("files.test", &mut files.test),
        ("files.example", &mut files.example),
    ] {
        if list.is_empty() {
            return Ok(Taken::Left(format!(".meta/config.json names no {what}")));
        }
        for file in list.iter_mut() {
            let Some(clean) = normalize(file) else {
                return Ok(Taken::Left(format!(
                    "{what} names {file}, which leaves the exercise"
                )));
            };
            if !dir.join(&clean).is_file() {
                return Ok(Taken::Left(format!(
                    "{what} names {file}, which is not a file here"
                )));
            }
            *file = clean;
        }
    }
    // A test file the language's runner does not judge (Rust's
    // `src/compile_fail_tests.rs`, whose tests are compile-fail doctests)
    // would make a task no fix can pass: left out, named.
    if let Some(lang) = crate::lang::language(tooling.tooling_name())
        && let Some(odd) = files.test.iter().find(|t| !lang.is_test_file(t))
    {
        return Ok(Taken::Left(format!(
            "files.test names {odd}, which the {} runner does not judge as a test file (compile-fail doctests, say)",
            lang.name()
        )));
    }
    // The reference solution: each example file takes the place of the
    // solution file with its extension.
    let mut oracle_files = Vec::new();
    for example in &files.example {
        let ext = Path::new(example).extension();
        let Some(target) = files
            .solution
            .iter()
            .find(|s| Path::new(s).extension() == ext)
        else {
            return Ok(Taken::Left(format!(
                "no solution file matches the example {example}"
            )));
        };
        let Ok(content) = fs::read_to_string(dir.join(example)) else {
            return Ok(Taken::Left(format!("{example} is not UTF-8 text")));
        };
        oracle_files.push((target.clone(), content));
    }
    let cargo_example = dir.join(".meta/Cargo-example.toml");
    let manifest_toml = if cargo_example.is_file() {
        Some(cargo_example.clone())
    } else {
        Some(dir.join("Cargo.toml")).filter(|p| p.is_file())
    };
    let exercise = Exercise {
        slug: slug.to_string(),
        solution: files.solution.clone(),
        test: files.test.clone(),
        has_dependencies: manifest_toml.as_deref().is_some_and(has_dependencies),
    };
    let Some(layout) = tooling.track_job(&exercise) else {
        return Ok(Taken::Left(missing_language(track).to_string()));
    };
    let id = format!("{track}-{slug}");
    let job = JobFiles::create(&options.out, &id)?;

    // Source: the exercise as a student gets it: its solution and support
    // files, never a hidden directory (`.meta/`, `.docs/`, `.approaches/`
    // and `.articles/`, which hold reference solutions), the example, or
    // (unless asked) the tests.
    let (tests, examples) = (files.test.clone(), files.example.clone());
    let visible = options.visible_tests;
    copy_filtered(dir, &job.source(), &|rel, is_dir| {
        left_out(rel, is_dir, &tests, &examples, visible)
    })?;
    if cargo_example.is_file() {
        fs::copy(&cargo_example, job.source().join("Cargo.toml"))
            .map_err(super::write_err(&job.source()))?;
    }
    // Hidden tests: every test enabled, so every test counts.
    for test in &files.test {
        let text = fs::read_to_string(dir.join(test))
            .map_err(|e| input(dir.join(test), format!("cannot read: {e}")))?;
        let text = tooling.enable_skipped(test, &text).unwrap_or(text);
        job.write(&format!("tests/{test}"), text.as_bytes())?;
        if visible {
            job.write(&format!("source/{test}"), text.as_bytes())?;
        }
    }
    job.write("oracle.jsonl", oracle_script(&oracle_files).as_bytes())?;
    job.write("prompt.md", prompt(dir, slug).as_bytes())?;

    let mut allow = vec![exact_rule(&layout.verify)];
    if visible {
        allow.extend(layout.allow.iter().cloned());
    }
    let draft = ManifestDraft {
        id: id.clone(),
        family: track.to_string(),
        prompt_file: "prompt.md".into(),
        source: "source".into(),
        trace: crate::manifest::Trace::Full,
        editable: files.solution.clone(),
        allow,
        verify: layout.verify.clone(),
        env: layout.env.iter().cloned().collect(),
        metadata: BTreeMap::from([
            ("exercise".to_string(), slug.to_string()),
            ("track".to_string(), track.to_string()),
        ]),
        acceptance: AcceptanceDraft {
            dir: "tests".into(),
            command: layout.command.clone(),
            results: layout.results.clone(),
            ..AcceptanceDraft::default()
        },
        setup: (!layout.setup.is_empty()).then(|| SetupDraft {
            commands: layout.setup.clone(),
        }),
        sandbox: None,
        oracle: OracleDraft {
            script: Some("oracle.jsonl".into()),
            patch: None,
        },
    };
    let header = format!(
        "Imported from the Exercism exercise {} by `agent-runtime import exercism`.\nNo provider: run it with `agent-runtime batch DATA DIR --provider FILE`.",
        dir.display()
    );
    job.manifest(&header, &draft).map(Taken::Imported)
}

/// `rel` as the file system reads it, without empty and `.` parts;
/// `None` when it is absolute, empty, or climbs out with `..`.
fn normalize(rel: &str) -> Option<String> {
    if rel.starts_with('/') {
        return None;
    }
    let parts: Vec<&str> = rel
        .split('/')
        .filter(|part| !part.is_empty() && *part != ".")
        .collect();
    if parts.is_empty() || parts.contains(&"..") {
        return None;
    }
    Some(parts.join("/"))
}

/// Whether the exercise's `rel` stays out of the source: a hidden
/// directory (`.meta/`, `.docs/`, `.approaches/` and `.articles/` hold
/// reference solutions; hidden files such as `.npmrc` configure the
/// tools and are kept), an example (the reference solution), a test
/// (unless the tests are visible).
fn left_out(rel: &str, is_dir: bool, tests: &[String], examples: &[String], visible: bool) -> bool {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    (is_dir && name.starts_with('.'))
        || examples.iter().any(|e| e == rel)
        || (!visible && tests.iter().any(|t| t == rel))
}

/// Whether a `Cargo.toml` asks for crates from a registry.
fn has_dependencies(cargo_toml: &Path) -> bool {
    let Ok(text) = fs::read_to_string(cargo_toml) else {
        return false;
    };
    let Ok(doc) = text.parse::<toml::Table>() else {
        return false;
    };
    ["dependencies", "dev-dependencies", "build-dependencies"]
        .iter()
        .any(|table| {
            doc.get(*table)
                .and_then(toml::Value::as_table)
                .is_some_and(|t| !t.is_empty())
        })
}

/// The prompt: `.docs/introduction.md`, `instructions.md` and
/// `instructions.append.md`, those present, in that order.
fn prompt(dir: &Path, slug: &str) -> String {
    let parts: Vec<String> = [
        "introduction.md",
        "instructions.md",
        "instructions.append.md",
    ]
    .iter()
    .filter_map(|name| fs::read_to_string(dir.join(".docs").join(name)).ok())
    .map(|text| text.trim().to_string())
    .filter(|text| !text.is_empty())
    .collect();
    if parts.is_empty() {
        return format!("Solve the exercise {slug}.\n");
    }
    let mut text = parts.join("\n\n");
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_read_as_the_file_system_reads_them_and_none_leaves() {
        assert_eq!(
            normalize("tests//hello.rs").as_deref(),
            Some("tests/hello.rs")
        );
        assert_eq!(normalize("./src/lib.rs").as_deref(), Some("src/lib.rs"));
        assert_eq!(normalize("example.rs/").as_deref(), Some("example.rs"));
        for escaping in ["../x.rs", "tests/../../x", "/etc/passwd", "", "./", "."] {
            assert_eq!(normalize(escaping), None, "{escaping}");
        }
    }

    #[test]
    fn hidden_dirs_examples_and_tests_stay_out_of_the_source() {
        let tests = vec!["tests/hello.rs".to_string()];
        let examples = vec!["example.rs".to_string()];
        let out = |rel: &str, is_dir: bool| left_out(rel, is_dir, &tests, &examples, false);
        for (rel, is_dir) in [
            (".meta", true),
            (".approaches", true),
            (".articles", true),
            ("src/.hidden", true),
            ("example.rs", false),
            ("tests/hello.rs", false),
        ] {
            assert!(out(rel, is_dir), "{rel}");
        }
        for (rel, is_dir) in [
            ("src", true),
            ("src/lib.rs", false),
            (".npmrc", false),
            ("Cargo.toml", false),
            ("tests", true),
        ] {
            assert!(!out(rel, is_dir), "{rel}");
        }
        assert!(!left_out("tests/hello.rs", false, &tests, &examples, true));
    }
}
