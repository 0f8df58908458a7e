//! `[sandbox] toolchains`: where a toolchain directory may be, how it is
//! stored, and that manifests without the key keep their hash.

use super::load_tests::{Fixture, MINIMAL, with};

fn toolchains(list: &str) -> String {
    with(&format!("[sandbox]\ntoolchains = {list}\n"))
}

const SETUP: &str = "[setup]\ncommands = [[\"true\"]]\n";

#[test]
fn a_directory_beside_the_job_is_stored_absolute_and_canonical() {
    let fx = Fixture::new();
    std::fs::create_dir_all(fx.root().join("tools/venv/bin")).unwrap();
    let m = fx.load(&toolchains("[\"../tools/venv/bin\"]")).unwrap();
    let real = fx.root().join("tools/venv/bin").canonicalize().unwrap();
    assert_eq!(m.sandbox.toolchains, [real.display().to_string()]);
    let stored = serde_json::to_string(&m.sandbox).unwrap();
    assert!(stored.contains("toolchains"), "{stored}");
}

#[test]
fn a_manifest_without_toolchains_keeps_its_stored_form_and_hash() {
    let fx = Fixture::new();
    let plain = fx.load(MINIMAL).unwrap();
    let stored = serde_json::to_string(&plain.sandbox).unwrap();
    assert_eq!(stored, r#"{"mode":"auto","network":false}"#);
    let empty = fx.load(&toolchains("[]")).unwrap();
    assert_eq!(empty.hash(), plain.hash());
}

#[test]
fn directories_inside_the_source_or_whose_prefix_holds_it_are_refused() {
    let fx = Fixture::new();
    std::fs::create_dir_all(fx.root().join("bin")).unwrap();
    let inside = fx.error(&toolchains("[\"../src/inner\"]"));
    assert!(
        inside.starts_with("jobs/job.toml:7:15: sandbox.toolchains[0]: ")
            && inside.contains("src/inner is inside source"),
        "{inside}"
    );
    // `bin`'s prefix is the folder holding the source and the job.
    let prefix = fx.error(&toolchains("[\"../bin\"]"));
    assert!(
        prefix.contains("(granted with it) holds source"),
        "{prefix}"
    );
    let missing = fx.error(&toolchains("[\"../nowhere\"]"));
    assert!(missing.contains("does not exist"), "{missing}");
}

#[test]
fn a_prefix_holding_the_hidden_tests_is_refused() {
    let fx = Fixture::new();
    std::fs::create_dir_all(fx.root().join("hidden/tools/bin")).unwrap();
    let text = with(
        "[acceptance]\ndir = \"../hidden\"\ncommand = [\"cargo\", \"test\"]\n\
         [sandbox]\ntoolchains = [\"../hidden/tools/bin\"]\n",
    );
    let err = fx.error(&text);
    assert!(err.contains("is inside acceptance.dir"), "{err}");
}

#[test]
fn cache_directories_need_setup_and_stay_inside_the_cache() {
    let fx = Fixture::new();
    let err = fx.error(&toolchains("[\"{cache}/venv/bin\"]"));
    assert!(err.contains("only a job with [setup] has"), "{err}");
    let m = fx
        .load(&format!(
            "{}{SETUP}",
            toolchains("[\"{cache}/venv/bin\", \"{cache}/bin/\"]")
        ))
        .unwrap();
    assert_eq!(m.sandbox.toolchains, ["{cache}/venv/bin", "{cache}/bin"]);
    for bad in ["{cache}/../x", "{cache}", "{cache}bin", "/opt/{cache}/bin"] {
        let err = fx.error(&format!("{}{SETUP}", toolchains(&format!("[\"{bad}\"]"))));
        assert!(err.contains("sandbox.toolchains[0]"), "{bad}: {err}");
    }
}
