//! SWE-bench's predictions format, so results can be cross-checked with
//! the official harness: one JSON line per imported SWE-bench instance
//! (a job whose `[metadata]` has `instance_id`), `instance_id`,
//! `model_name_or_path` and `model_patch` (the patch of the instance's
//! first attempt, empty when it recorded none). One file per model and
//! repeat: `<model>.jsonl` for repeat 1, `<model>#<k>.jsonl` for repeat
//! `k`. Pure.

use std::collections::BTreeMap;

use serde_json::json;

/// One instance's prediction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Prediction {
    pub instance_id: String,
    pub model: String,
    pub repeat: u32,
    pub patch: String,
}

/// The files' names (without a directory) and their lines, in name order;
/// instances in each file in the order given.
pub(crate) fn prediction_files(predictions: &[Prediction]) -> Vec<(String, String)> {
    let mut files: BTreeMap<String, String> = BTreeMap::new();
    for p in predictions {
        let name = match p.repeat {
            0 | 1 => format!("{}.jsonl", super::file_name(&p.model)),
            k => format!("{}#{k}.jsonl", super::file_name(&p.model)),
        };
        let line = json!({
            "instance_id": p.instance_id,
            "model_name_or_path": p.model,
            "model_patch": p.patch,
        });
        let text = files.entry(name).or_default();
        text.push_str(&line.to_string());
        text.push('\n');
    }
    files.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_file_per_model_and_repeat() {
        let p = |id: &str, repeat| Prediction {
            instance_id: id.into(),
            model: "gpt/x".into(),
            repeat,
            patch: "diff --git a/x b/x\n".into(),
        };
        let files = prediction_files(&[p("a__b-1", 1), p("a__b-2", 1), p("a__b-1", 2)]);
        let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["gpt_x#2.jsonl", "gpt_x.jsonl"]);
        let lines: Vec<serde_json::Value> = files[1]
            .1
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0]["instance_id"], "a__b-1");
        assert_eq!(lines[0]["model_name_or_path"], "gpt/x");
        assert_eq!(lines[0]["model_patch"], "diff --git a/x b/x\n");
    }
}
