//! Reading `results.json` the way a script would.

use serde_json::Value;

/// Every action of a job's `timeline` (one object per attempt, its
/// moments a phase or a step holding its actions), in order, each with
/// its `attempt` and `step` (0 for a phase) added.
pub fn timeline_actions(job: &Value) -> Vec<Value> {
    let mut out = Vec::new();
    for attempt in job["timeline"].as_array().into_iter().flatten() {
        for moment in attempt["moments"].as_array().into_iter().flatten() {
            let (step, actions) = match moment["type"].as_str() {
                Some("step") => (moment["step"].clone(), moment["actions"].clone()),
                _ => (0.into(), Value::Array(vec![moment.clone()])),
            };
            for mut action in actions.as_array().cloned().unwrap_or_default() {
                action["attempt"] = attempt["attempt"].clone();
                action["step"] = step.clone();
                out.push(action);
            }
        }
    }
    out
}
