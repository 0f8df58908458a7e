//! What a command cost the machine, as its `command` event records it:
//! the executor's own figures ([`agent_runtime_sandbox::exec::Resources`],
//! one type from the reaped process to the log and the reports).

pub use agent_runtime_sandbox::exec::Resources;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absent_figures_are_left_out_and_read_back() {
        let some = Resources {
            cpu_ms: Some(1012),
            peak_memory_bytes: None,
            pids_peak: Some(3),
        };
        let text = serde_json::to_string(&some).unwrap();
        assert_eq!(text, r#"{"cpu_ms":1012,"pids_peak":3}"#);
        assert_eq!(serde_json::from_str::<Resources>(&text).unwrap(), some);
        assert_eq!(
            serde_json::from_str::<Resources>("{}").unwrap(),
            Resources::default()
        );
    }

    #[test]
    fn command_events_carry_it_when_known_and_older_ones_still_read() {
        let old = r#"{"type":"command","step":1,"role":"tool","program":"sh","resolved":"/bin/sh","argc":2,"exit_code":0,"duration_ms":5,"stdout_bytes":0,"stderr_bytes":0,"truncated":false,"timed_out":false,"cancelled":false,"sandbox":[]}"#;
        let event: super::super::Event = serde_json::from_str(old).unwrap();
        let super::super::Event::Command(super::super::CommandRecord { resources, .. }) = &event
        else {
            panic!("not a command: {event:?}");
        };
        assert_eq!(*resources, None);
        // Absent stays absent on the way out.
        assert!(!serde_json::to_string(&event).unwrap().contains("resources"));
        let new = old.replace(
            r#""sandbox":[]"#,
            r#""sandbox":[],"resources":{"cpu_ms":1012,"peak_memory_bytes":213606400,"pids_peak":3}"#,
        );
        let event: super::super::Event = serde_json::from_str(&new).unwrap();
        let super::super::Event::Command(super::super::CommandRecord { resources, .. }) = &event
        else {
            panic!("not a command: {event:?}");
        };
        assert_eq!(
            *resources,
            Some(Resources {
                cpu_ms: Some(1012),
                peak_memory_bytes: Some(213_606_400),
                pids_peak: Some(3),
            })
        );
        assert!(
            serde_json::to_string(&event)
                .unwrap()
                .contains(r#""resources":{"cpu_ms":1012"#)
        );
    }

    #[test]
    fn a_sum_adds_time_and_keeps_the_higher_peaks() {
        let mut sum = Resources::default();
        sum.add(&Resources {
            cpu_ms: Some(10),
            peak_memory_bytes: Some(100),
            pids_peak: Some(3),
        });
        sum.add(&Resources {
            cpu_ms: None,
            peak_memory_bytes: Some(300),
            pids_peak: Some(2),
        });
        assert_eq!(
            sum,
            Resources {
                cpu_ms: Some(10),
                peak_memory_bytes: Some(300),
                pids_peak: Some(3),
            }
        );
        assert!(!sum.is_empty());
        assert!(Resources::default().is_empty());
    }
}
