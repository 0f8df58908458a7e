//! Synthetic Exercism tracks in the real layout (a track's `config.json`;
//! `exercises/practice/<slug>/` with `.meta/config.json` naming the
//! solution, test and example files, `.docs/`, the stub and the tests as
//! each track lays them out), written by the tests themselves, and what
//! the import tests share: providers, registry probes, log reading.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// A language of the synthetic tracks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    Rust,
    Python,
    JavaScript,
}

impl Lang {
    pub fn slug(self) -> &'static str {
        match self {
            Lang::Rust => "rust",
            Lang::Python => "python",
            Lang::JavaScript => "javascript",
        }
    }

    /// The solution file an exercise's fix is written to.
    pub fn solution(self, slug: &str) -> String {
        match self {
            Lang::Rust => "src/lib.rs".into(),
            Lang::Python => format!("{}.py", slug.replace('-', "_")),
            Lang::JavaScript => format!("{slug}.js"),
        }
    }

    /// A solution adding `k` (`right`) or one that is wrong.
    pub fn code(self, k: u32, right: bool) -> String {
        let add = if right { k } else { k + 1 };
        match self {
            Lang::Rust => format!(
                "/// Adds {k}.\npub fn add(x: u64) -> u64 {{\n    let increment_for_this_exercise: u64 = {add};\n    x + increment_for_this_exercise\n}}\n"
            ),
            Lang::Python => format!(
                "def add(x):\n    increment_for_this_exercise = {add}\n    return x + increment_for_this_exercise\n"
            ),
            Lang::JavaScript => format!(
                "export const add = (x) => {{\n  const incrementForThisExercise = {add};\n  return x + incrementForThisExercise;\n}};\n"
            ),
        }
    }

    /// The stub a student starts from.
    pub fn stub(self) -> &'static str {
        match self {
            Lang::Rust => "pub fn add(x: u64) -> u64 {\n    todo!(\"add to {x}\")\n}\n",
            Lang::Python => "def add(x):\n    pass\n",
            Lang::JavaScript => {
                "export const add = (x) => {\n  throw new Error('Remove this line and implement the function');\n};\n"
            }
        }
    }
}

/// Tests per exercise (the first runs, the rest are skipped or ignored as
/// the track writes them).
pub const TESTS: usize = 3;

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// Writes a track of `count` exercises (`add-1` ... `add-N`) under
/// `root/<lang>`, plus a deprecated one and, with `broken`, one whose
/// `.meta/config.json` names no example; returns the track's path.
pub fn write_track(root: &Path, lang: Lang, count: u32, broken: bool) -> PathBuf {
    let track = root.join(lang.slug());
    let mut practice: Vec<Value> = (1..=count)
        .map(|k| serde_json::json!({"slug": format!("add-{k}"), "name": format!("Add {k}"), "uuid": format!("u{k}"), "difficulty": 1}))
        .collect();
    practice.push(serde_json::json!({"slug": "retired", "status": "deprecated"}));
    let config = serde_json::json!({
        "language": match lang { Lang::Rust => "Rust", Lang::Python => "Python", Lang::JavaScript => "JavaScript" },
        "slug": lang.slug(),
        "active": true,
        "exercises": {"concept": [], "practice": practice},
    });
    write(&track.join("config.json"), &config.to_string());
    for k in 1..=count {
        write_exercise(&track, lang, k);
    }
    write_exercise(&track, lang, 999);
    let retired = track.join("exercises/practice/add-999");
    std::fs::rename(&retired, track.join("exercises/practice/retired")).unwrap();
    if broken {
        write_exercise(&track, lang, 998);
        let dir = track.join("exercises/practice/add-998");
        let meta = r#"{"files": {"solution": ["x"], "test": ["y"], "example": []}}"#;
        write(&dir.join(".meta/config.json"), meta);
    }
    track
}

/// One exercise `add-k` in `lang`'s layout.
pub fn write_exercise(track: &Path, lang: Lang, k: u32) {
    let slug = format!("add-{k}");
    let dir = track.join("exercises/practice").join(&slug);
    write(
        &dir.join(".docs/introduction.md"),
        &format!("# Introduction\n\nNumbers grow by {k}.\n"),
    );
    write(
        &dir.join(".docs/instructions.md"),
        &format!("# Instructions\n\nWrite `add`, which adds {k} to its argument.\n"),
    );
    let cases: Vec<(u64, u64)> = (0..TESTS as u64)
        .map(|i| (i * 10, i * 10 + u64::from(k)))
        .collect();
    let (solution, test, example) = match lang {
        Lang::Rust => {
            let crate_name = slug.replace('-', "_");
            write(
                &dir.join("Cargo.toml"),
                &format!(
                    "[package]\nedition = \"2021\"\nname = \"{crate_name}\"\nversion = \"1.0.0\"\n\n[dependencies]\n"
                ),
            );
            write(&dir.join(".gitignore"), "/target\nCargo.lock\n");
            let mut tests = format!("use {crate_name}::add;\n");
            for (i, (x, want)) in cases.iter().enumerate() {
                let ignore = if i == 0 { "" } else { "#[ignore]\n" };
                tests.push_str(&format!(
                    "\n#[test]\n{ignore}fn case_{i}() {{\n    assert_eq!(add({x}), {want});\n}}\n"
                ));
            }
            write(&dir.join(format!("tests/{slug}.rs")), &tests);
            write(&dir.join("src/lib.rs"), lang.stub());
            write(&dir.join(".meta/example.rs"), &lang.code(k, true));
            (
                vec!["src/lib.rs".to_string(), "Cargo.toml".to_string()],
                vec![format!("tests/{slug}.rs")],
                vec![".meta/example.rs".to_string()],
            )
        }
        Lang::Python => {
            let module = slug.replace('-', "_");
            let class: String = slug
                .split('-')
                .map(|p| {
                    let mut c = p.chars();
                    c.next()
                        .map(|f| f.to_uppercase().chain(c).collect::<String>())
                        .unwrap_or_default()
                })
                .collect();
            let mut tests = format!(
                "# These tests are auto-generated with test data from the problem specifications.\nimport unittest\n\nfrom {module} import (\n    add,\n)\n\n\nclass {class}Test(unittest.TestCase):\n"
            );
            for (i, (x, want)) in cases.iter().enumerate() {
                tests.push_str(&format!(
                    "    def test_case_{i}(self):\n        self.assertEqual(add({x}), {want})\n\n"
                ));
            }
            write(&dir.join(format!("{module}_test.py")), &tests);
            write(&dir.join(format!("{module}.py")), lang.stub());
            write(&dir.join(".meta/example.py"), &lang.code(k, true));
            write(
                &dir.join(".docs/instructions.append.md"),
                "# Instructions append\n\nRaise nothing.\n",
            );
            (
                vec![format!("{module}.py")],
                vec![format!("{module}_test.py")],
                vec![".meta/example.py".to_string()],
            )
        }
        Lang::JavaScript => {
            let mut tests =
                format!("import {{ add }} from './{slug}';\n\ndescribe('add {k}', () => {{\n");
            for (i, (x, want)) in cases.iter().enumerate() {
                let call = if i == 0 { "test" } else { "xtest" };
                tests.push_str(&format!(
                    "  {call}('case {i}', () => {{\n    expect(add({x})).toEqual({want});\n  }});\n\n"
                ));
            }
            tests.push_str("});\n");
            write(&dir.join(format!("{slug}.spec.js")), &tests);
            write(&dir.join(format!("{slug}.js")), lang.stub());
            write(&dir.join(".meta/proof.ci.js"), &lang.code(k, true));
            write(
                &dir.join("package.json"),
                &serde_json::json!({
                    "name": format!("@exercism/javascript-{slug}"),
                    "description": "Exercism exercises in Javascript.",
                    "private": true,
                    "license": "MIT",
                    "devDependencies": {
                        "@babel/core": "7.26.0",
                        "@babel/preset-env": "7.26.0",
                        "babel-jest": "29.7.0"
                    },
                    "scripts": {"test": "jest ./*"}
                })
                .to_string(),
            );
            write(
                &dir.join("babel.config.js"),
                "module.exports = {\n  presets: [['@babel/preset-env', { targets: { node: 'current' } }]],\n};\n",
            );
            write(&dir.join(".npmrc"), "audit=false\n");
            (
                vec![format!("{slug}.js")],
                vec![format!("{slug}.spec.js")],
                vec![".meta/proof.ci.js".to_string()],
            )
        }
    };
    let meta = serde_json::json!({
        "authors": ["someone"],
        "files": {"solution": solution, "test": test, "example": example},
        "blurb": format!("Add {k}."),
    });
    write(&dir.join(".meta/config.json"), &meta.to_string());
}

/// Why the registry `lang`'s setup needs cannot be used here, if so (the
/// client is asked for one package; a failure or a timeout is a skip).
pub fn registry_unreachable(lang: Lang) -> Option<String> {
    let probe = tempfile::tempdir().unwrap();
    let mut command = match lang {
        Lang::Rust => return None,
        Lang::Python => {
            let mut c = Command::new("timeout");
            c.args([
                "60",
                "python3",
                "-m",
                "pip",
                "download",
                "--quiet",
                "--no-deps",
            ])
            .arg("--dest")
            .arg(probe.path())
            .arg("iniconfig==2.0.0");
            c
        }
        Lang::JavaScript => {
            let mut c = Command::new("timeout");
            c.args(["60", "npm", "view", "jest-junit@16.0.0", "version"]);
            c
        }
    };
    match command.output() {
        Ok(out) if out.status.success() => None,
        Ok(out) => Some(format!(
            "the {} registry did not answer its client ({})",
            lang.slug(),
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .last()
                .unwrap_or("no output")
        )),
        Err(e) => Some(format!(
            "the {} registry's client cannot run: {e}",
            lang.slug()
        )),
    }
}

/// A provider file named `name` whose script writes `content` to `path`
/// and finishes.
pub fn provider(dir: &Path, name: &str, path: &str, content: &str) -> PathBuf {
    let script = dir.join(format!("{name}.jsonl"));
    let lines = [
        serde_json::json!({"kind": "write_file", "path": path, "content": content}),
        serde_json::json!({"kind": "finish", "summary": name}),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&script, text).unwrap();
    let file = dir.join(format!("{name}.toml"));
    std::fs::write(
        &file,
        format!(
            "name = \"{name}\"\n[provider]\nkind = \"script\"\nscript = \"{}\"\n",
            script.display()
        ),
    )
    .unwrap();
    file
}

/// The log's records.
pub fn records(data: &Path) -> Vec<Value> {
    std::fs::read_to_string(data.join("events.log"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// The last `attempt_finished` of instance `job`.
pub fn final_kind(data: &Path, job: &str) -> (String, Option<String>) {
    let finished = records(data)
        .into_iter()
        .rev()
        .find(|r| r["job"] == job && r["type"] == "attempt_finished")
        .unwrap_or_else(|| panic!("{job} never finished"));
    (
        finished["outcome"].as_str().unwrap_or_default().to_string(),
        finished["failure_kind"].as_str().map(String::from),
    )
}

/// Bytes of the files under `path`.
pub fn disk_usage(path: &Path) -> u64 {
    let mut total = 0;
    let mut stack = vec![path.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let kind = entry.file_type().unwrap();
            if kind.is_dir() {
                stack.push(entry.path());
            } else if kind.is_file() {
                total += entry.metadata().unwrap().len();
            }
        }
    }
    total
}
