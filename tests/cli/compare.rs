//! `report --compare DATA_A,DATA_B`: two finished runs of the same tasks,
//! paired task by task, and where A − B stands.

use std::path::Path;

use crate::harness::Sandbox;

/// The bundled jobs twice each under `provider` into `data`.
fn sweep(sb: &Sandbox, data: &Path, provider: &str) {
    let file = sb.path().join(format!("{provider}.toml"));
    std::fs::write(
        &file,
        format!("name = \"{provider}\"\n\n[provider]\nkind = \"{provider}\"\n"),
    )
    .unwrap();
    let jobs = Path::new(env!("CARGO_MANIFEST_DIR")).join("jobs");
    sb.run(&[
        "batch",
        data.to_str().unwrap(),
        jobs.to_str().unwrap(),
        "--provider",
        file.to_str().unwrap(),
        "--repeat",
        "2",
        "--attempts",
        "1",
        "-j",
        "2",
    ]);
}

/// Every file beneath `dir` with its length and modification time.
fn tree(dir: &Path) -> Vec<(std::path::PathBuf, u64, std::time::SystemTime)> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(at) = stack.pop() {
        for entry in std::fs::read_dir(&at).unwrap() {
            let entry = entry.unwrap();
            let meta = entry.metadata().unwrap();
            if meta.is_dir() {
                stack.push(entry.path());
            } else {
                files.push((entry.path(), meta.len(), meta.modified().unwrap()));
            }
        }
    }
    files.sort();
    files
}

#[test]
fn report_compare_pairs_two_runs_and_says_where_the_difference_stands() {
    let sb = Sandbox::new();
    let (a, b) = (sb.path().join("a"), sb.path().join("b"));
    sweep(&sb, &a, "oracle");
    sweep(&sb, &b, "noop");
    let (a_before, b_before) = (tree(&a), tree(&b));
    let pair = format!("{},{}", a.display(), b.display());
    let run = sb.run(&["report", "--compare", &pair]).ok();
    // The oracle solves every task and noop none: 18 pairs of +1.
    assert!(
        run.stdout.contains(
            "A − B = +1.00 [+0.37, +1.00] at 95%, over 18 paired tasks: A is better (decided after 10)"
        ),
        "{}",
        run.stdout
    );
    // The other way round, B is better; a run against itself, undecided,
    // unless a margin lets it say there is no difference past it.
    let reversed = format!("{},{}", b.display(), a.display());
    sb.run(&["report", "--compare", &reversed])
        .ok()
        .stdout_has("B is better");
    let same = format!("{},{}", a.display(), a.display());
    sb.run(&["report", "--compare", &same])
        .ok()
        .stdout_has("A − B = +0.00 [")
        .stdout_has(": undecided");
    sb.run(&["report", "--compare", &same, "--margin", "0.5"])
        .ok()
        .stdout_has("no difference larger than 0.50");
    // Comparing writes nothing: both data dirs are as the batches left them.
    assert_eq!(tree(&a), a_before);
    assert_eq!(tree(&b), b_before);
    // Both runs in one report: the noise of each arm (none: the oracle
    // and noop end the same every time), the comparison's floor (0) and
    // its difference outside the noise.
    let out = sb.path().join("merged");
    sb.run(&[
        "report",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ])
    .ok();
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    let tables = crate::harness::md_tables(&md);
    assert!(md.contains("## Noise"), "{md}");
    assert!(tables.contains("| noop | 9 | 0 | 0.000 | - |"), "{tables}");
    // `noop` sorts first, so it is `a`: the oracle is better.
    assert!(tables.contains("| 0.000 | - | oracle better |"), "{tables}");
    let results: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    assert_eq!(results["comparisons"][0]["mde"], 0.0);
    assert_eq!(results["comparisons"][0]["within_noise"], false);
    assert_eq!(results["noise"][1]["provider"], "oracle");
    // Bad input: one dir, a level out of range.
    sb.run(&["report", "--compare", a.to_str().unwrap()])
        .code(2)
        .stderr_has("two data dirs");
    sb.run(&["report", "--compare", &pair, "--level", "1.5"])
        .code(2)
        .stderr_has("not a level between 0 and 1");
}
