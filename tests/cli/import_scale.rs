//! At the scale of the public sets: 385 exercises in the real layouts
//! (105 Rust, 140 Python, 140 JavaScript, as the polyglot tracks have
//! them), imported, then run with their oracles as scripted providers
//! (`check`) with `-j 2`, killed with SIGKILL part way and resumed: every
//! one ends valid. It takes many minutes on two cores, so it is ignored by
//! default: `cargo test --test cli -- --ignored import_scale` runs it
//! (`AGENT_RUNTIME_SCALE=N` runs N exercises per 385, spread the same way).

use std::os::unix::process::CommandExt;
use std::time::{Duration, Instant};

use crate::harness::Sandbox;
use crate::tracks::{Lang, records, registry_unreachable, write_track};

#[test]
#[ignore = "minutes of work: run with --ignored"]
fn three_hundred_eighty_five_exercises_finish_with_j2_and_resume_after_kill_9() {
    let scale: u32 = std::env::var("AGENT_RUNTIME_SCALE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(385);
    let sb = Sandbox::new();
    let mut counts = vec![(Lang::Rust, scale * 105 / 385)];
    for lang in [Lang::Python, Lang::JavaScript] {
        match registry_unreachable(lang) {
            None => counts.push((lang, scale * 140 / 385)),
            Some(why) => agent_runtime_test_support::skip(
                agent_runtime_test_support::Need::Tool,
                &format!(
                    "three_hundred_eighty_five_exercises_finish_with_j2_and_resume_after_kill_9 ({} track)",
                    lang.slug()
                ),
                &why,
            ),
        }
    }
    let out = sb.path().join("jobs");
    let started = Instant::now();
    let mut total = 0;
    for (lang, count) in &counts {
        let track = write_track(&sb.path().join("tracks"), *lang, *count, false);
        let run = sb.run(&[
            "import",
            "exercism",
            track.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ]);
        assert_eq!(run.code, 0, "{run:#?}");
        total += count;
    }
    eprintln!("imported {total} exercises in {:?}", started.elapsed());
    let data = sb.path().join("check-data");
    let args: [String; 8] = [
        "check".into(),
        out.join("*/job.toml").to_str().unwrap().to_string(),
        "--runs".into(),
        "1".into(),
        "-j".into(),
        "2".into(),
        "--data".into(),
        data.to_str().unwrap().to_string(),
    ];
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    // Killed with SIGKILL (its whole process group) once a tenth is done.
    let mut child = sb.command(&args).process_group(0).spawn().unwrap();
    let first = Instant::now();
    let wanted = (total / 10).max(1) as usize;
    loop {
        let done = records(&data)
            .iter()
            .filter(|r| r["type"] == "attempt_finished")
            .count();
        if done >= wanted || first.elapsed() > Duration::from_secs(1800) {
            break;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    nix::sys::signal::killpg(pid, nix::sys::signal::Signal::SIGKILL).unwrap();
    let _ = child.wait();
    let resumed = Instant::now();
    let run = sb.run(&args);
    eprintln!(
        "killed after {:?}; the rerun took {:?}",
        resumed.duration_since(first),
        resumed.elapsed()
    );
    assert_eq!(
        run.code,
        0,
        "{}\n{}",
        run.stdout,
        &run.stderr[run.stderr.len().saturating_sub(4000)..]
    );
    assert!(
        run.stdout.contains(&format!("{total}/{total} jobs valid")),
        "{}",
        run.stdout
    );
    assert!(
        run.stderr.contains("resuming:"),
        "the rerun says it resumes"
    );
}
