//! Which jobs a batch runs: a provider sweep with repeats (and its
//! pass@k), `--family`, and `--shard I/N`, whose shards cover every job
//! once and merge into one report.

use std::collections::{BTreeMap, BTreeSet};

use super::{JobSpec, fixture, jobs_by_instance, read_json, run_in, states, write_jobs};
use crate::harness::Sandbox;

#[test]
fn a_provider_sweep_with_repeats_reports_pass_at_k() {
    let sb = Sandbox::new();
    let jobs = write_jobs(
        &sb.path().join("jobs"),
        &[
            JobSpec::new("one", "write_verify_finish.jsonl"),
            JobSpec::new("two", "write_verify_finish.jsonl").family("other"),
        ],
    );
    let providers = sb.path().join("providers");
    std::fs::create_dir_all(&providers).unwrap();
    for (name, script) in [
        ("alpha", "write_verify_finish.jsonl"),
        ("beta", "no_edit.jsonl"),
    ] {
        std::fs::write(
            providers.join(format!("{name}.toml")),
            format!(
                "name = {name:?}\n\n[provider]\nkind = \"script\"\nscript = {:?}\n",
                fixture(script)
            ),
        )
        .unwrap();
    }
    let alpha = providers.join("alpha.toml");
    let beta = providers.join("beta.toml");
    let report = sb.path().join("sweep-report");
    sb.run(&[
        "batch",
        "DATA",
        jobs.to_str().unwrap(),
        "--provider",
        alpha.to_str().unwrap(),
        "--provider",
        beta.to_str().unwrap(),
        "--repeat",
        "3",
        "--attempts",
        "1",
        "-j",
        "4",
        "--report",
        report.to_str().unwrap(),
    ])
    .code(1);
    let got = states(sb.path(), &sb.data());
    let mut expected = BTreeMap::new();
    for job in ["one", "two"] {
        for k in 1..=3 {
            expected.insert(format!("{job}@alpha#{k}"), "succeeded".to_string());
            expected.insert(format!("{job}@beta#{k}"), "failed".to_string());
        }
    }
    assert_eq!(got, expected);

    let results = read_json(&report.join("results.json"));
    let providers: BTreeMap<String, serde_json::Value> = results["providers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["provider"].as_str().unwrap_or("").to_string(), p.clone()))
        .collect();
    assert_eq!(
        providers.keys().collect::<Vec<_>>(),
        ["alpha", "beta"],
        "{results:#}"
    );
    let pass = &results["pass_at_k"];
    assert_eq!(pass["k"], 3, "{pass:#}");
    let by_provider: BTreeMap<String, (f64, f64)> = pass["providers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["provider"].as_str().unwrap().to_string(),
                (
                    p["pass_at_1"].as_f64().unwrap(),
                    p["pass_at_k"].as_f64().unwrap(),
                ),
            )
        })
        .collect();
    assert_eq!(by_provider["alpha"], (1.0, 1.0));
    assert_eq!(by_provider["beta"], (0.0, 0.0));
    assert_eq!(pass["groups"].as_array().map(Vec::len), Some(4));
    let markdown = std::fs::read_to_string(report.join("report.md")).unwrap();
    assert!(markdown.contains("pass@"), "{markdown}");
}

/// Ids in two families, chosen so both halves of `--shard I/2` hold jobs.
fn family_jobs() -> Vec<JobSpec> {
    (0..8)
        .map(|i| {
            JobSpec::new(format!("fam{i}"), "write_verify_finish.jsonl").family(if i % 2 == 0 {
                "even"
            } else {
                "odd"
            })
        })
        .collect()
}

#[test]
fn family_runs_only_that_family() {
    let sb = Sandbox::new();
    let jobs = write_jobs(&sb.path().join("jobs"), &family_jobs());
    sb.run(&["batch", "DATA", jobs.to_str().unwrap(), "--family", "odd"])
        .ok();
    let got: Vec<String> = states(sb.path(), &sb.data()).into_keys().collect();
    assert_eq!(got, ["fam1", "fam3", "fam5", "fam7"]);
}

#[test]
fn two_shards_cover_every_job_once_and_merge_into_one_report() {
    let sb = Sandbox::new();
    let jobs = write_jobs(&sb.path().join("jobs"), &family_jobs());
    let (one, two) = (sb.path().join("shard1"), sb.path().join("shard2"));
    for (data, shard) in [(&one, "1/2"), (&two, "2/2")] {
        run_in(
            sb.path(),
            &[
                "batch",
                data.to_str().unwrap(),
                jobs.to_str().unwrap(),
                "--shard",
                shard,
            ],
            &[],
        )
        .ok();
    }
    let (a, b) = (states(sb.path(), &one), states(sb.path(), &two));
    assert!(!a.is_empty() && !b.is_empty(), "{a:?} {b:?}");
    let a_ids: BTreeSet<&String> = a.keys().collect();
    let b_ids: BTreeSet<&String> = b.keys().collect();
    assert!(a_ids.is_disjoint(&b_ids), "{a_ids:?} {b_ids:?}");
    let all: BTreeSet<String> = a_ids.union(&b_ids).map(|s| (*s).clone()).collect();
    let expected: BTreeSet<String> = (0..8).map(|i| format!("fam{i}")).collect();
    assert_eq!(all, expected);

    let merged = sb.path().join("merged");
    run_in(
        sb.path(),
        &[
            "report",
            one.to_str().unwrap(),
            two.to_str().unwrap(),
            "--out",
            merged.to_str().unwrap(),
        ],
        &[],
    )
    .ok()
    .stdout_has("8/8 jobs succeeded");
    let results = read_json(&merged.join("results.json"));
    let ids: BTreeSet<String> = jobs_by_instance(&results).into_keys().collect();
    assert_eq!(ids, expected);
    assert_eq!(results["sources"].as_array().map(Vec::len), Some(2));
    assert_eq!(results["totals"]["succeeded"], 8);
}
