//! The event stream of each bundled job, as the kinds of its events in
//! order: what the runtime records of a run, pinned. Since format 3 a
//! model call is a `model_call` event of its own, and each `decision`
//! follows the call that brought it (the stream of format 2 is this one
//! with every `model_call` left out).

use std::collections::BTreeMap;

use crate::harness::{Sandbox, log_lines};

#[test]
fn every_bundled_job_records_the_same_kinds_of_events_in_the_same_order() {
    let sb = Sandbox::new();
    let jobs = format!("{}/jobs", env!("CARGO_MANIFEST_DIR"));
    let run = sb.run(&["batch", "DATA", &jobs, "-j", "2"]);
    assert_eq!(run.code, 0, "{run:#?}");
    let mut kinds: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut last_call: BTreeMap<String, u64> = BTreeMap::new();
    for line in log_lines(&sb) {
        let (Some(job), Some(kind)) = (line["job"].as_str(), line["type"].as_str()) else {
            continue;
        };
        match kind {
            "model_call" => {
                last_call.insert(job.to_string(), line["step"].as_u64().unwrap());
            }
            "decision" => {
                // Each decision follows the call of its step.
                assert_eq!(last_call.get(job), line["step"].as_u64().as_ref(), "{line}");
            }
            _ => {}
        }
        kinds
            .entry(job.to_string())
            .or_default()
            .push(kind.to_string());
    }
    let text: String = kinds
        .iter()
        .map(|(job, kinds)| format!("{job}: {}\n", kinds.join(" ")))
        .collect();
    insta::assert_snapshot!(text);
}
