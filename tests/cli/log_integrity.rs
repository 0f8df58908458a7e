//! The log under damage and contention.

use std::io::Write;

use crate::harness::{Sandbox, log_lines};

fn three_jobs() -> Sandbox {
    let sb = Sandbox::new();
    for id in ["a", "b", "c"] {
        sb.run(&["enqueue", "DATA", id]).ok();
    }
    sb
}

#[test]
fn a_torn_tail_is_tolerated_by_readers_and_repaired_by_the_next_writer() {
    let sb = three_jobs();
    let bytes = sb.log_bytes();
    let last_start = bytes[..bytes.len() - 1]
        .iter()
        .rposition(|&b| b == b'\n')
        .unwrap()
        + 1;
    let cut = last_start + (bytes.len() - last_start) / 2;
    std::fs::write(sb.log(), &bytes[..cut]).unwrap();

    let status = sb
        .run(&["status", "DATA"])
        .ok()
        .stderr_has("line 3")
        .stderr_has("torn");
    assert!(status.stdout.contains("2 jobs"), "{status:#?}");
    assert!(
        !status.stdout.contains("\nc "),
        "the torn record must not replay"
    );
    assert_eq!(sb.log_bytes(), &bytes[..cut], "a reader wrote");
    let json = sb.run(&["status", "DATA", "--json"]).ok();
    let doc: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(doc["torn_tail"]["line"], 3);

    sb.run(&["enqueue", "DATA", "d"])
        .ok()
        .stdout_has("enqueued=true");
    sb.run(&["enqueue", "DATA", "c"])
        .ok()
        .stdout_has("enqueued=true");
    let lines = log_lines(&sb);
    let types: Vec<&str> = lines.iter().map(|l| l["type"].as_str().unwrap()).collect();
    assert_eq!(
        types,
        [
            "enqueued",
            "enqueued",
            "log_repaired",
            "enqueued",
            "enqueued"
        ]
    );
    assert_eq!(lines[2]["line"], 3);
    assert_eq!(lines[2]["dropped_bytes"], (cut - last_start) as u64);
    let seqs: Vec<u64> = lines.iter().map(|l| l["seq"].as_u64().unwrap()).collect();
    assert_eq!(seqs, [1, 2, 3, 4, 5]);
    let status = sb
        .run(&["status", "DATA"])
        .ok()
        .stderr_has("repaired a torn tail at line 3");
    assert!(status.stdout.contains("4 jobs: 4 queued"), "{status:#?}");
}

#[test]
fn a_flipped_byte_in_the_middle_is_named_by_line_and_blocks_writers() {
    let sb = three_jobs();
    let mut bytes = sb.log_bytes();
    let second = bytes.iter().position(|&b| b == b'\n').unwrap() + 1;
    let target = second + 40;
    bytes[target] ^= 0x04;
    std::fs::write(sb.log(), &bytes).unwrap();

    sb.run(&["status", "DATA"])
        .code(2)
        .one_line_error()
        .stderr_has("line 2")
        .stderr_has("checksum mismatch")
        .stderr_has("not whole");
    sb.run(&["status", "DATA", "--json"])
        .code(2)
        .stderr_has("line 2");
    sb.run(&["enqueue", "DATA", "d"])
        .code(2)
        .stderr_has("line 2");
    sb.run(&["cancel", "DATA", "a"])
        .code(2)
        .stderr_has("line 2");
    assert_eq!(sb.log_bytes(), bytes, "a writer appended after corruption");
}

#[test]
fn a_record_deleted_from_the_middle_is_corruption_named_by_line() {
    let sb = three_jobs();
    // Cancel `a`, then delete that record: without the gap check the job
    // would silently be queued again.
    sb.run(&["cancel", "DATA", "a"]).ok();
    sb.run(&["enqueue", "DATA", "d"]).ok();
    let bytes = sb.log_bytes();
    let text = String::from_utf8(bytes.clone()).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 5);
    assert!(lines[3].contains("\"cancelled\""), "{}", lines[3]);
    let kept: String = lines
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != 3)
        .map(|(_, l)| format!("{l}\n"))
        .collect();
    std::fs::write(sb.log(), &kept).unwrap();

    sb.run(&["status", "DATA"])
        .code(2)
        .one_line_error()
        .stderr_has("line 4")
        .stderr_has("1 record is missing");
    sb.run(&["enqueue", "DATA", "e"])
        .code(2)
        .stderr_has("line 4");
    assert_eq!(
        sb.log_bytes(),
        kept.as_bytes(),
        "a writer appended after the gap"
    );
}

#[test]
fn non_utf8_bytes_are_corruption_with_a_line_number() {
    let sb = three_jobs();
    let mut bytes = sb.log_bytes();
    let second = bytes.iter().position(|&b| b == b'\n').unwrap() + 1;
    bytes[second + 30] = 0xff;
    std::fs::write(sb.log(), &bytes).unwrap();
    sb.run(&["status", "DATA"])
        .code(2)
        .one_line_error()
        .stderr_has("line 2: not valid UTF-8");
    assert_eq!(sb.log_bytes(), bytes);
}

#[test]
fn garbage_appended_as_whole_lines_is_not_skipped() {
    let sb = three_jobs();
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(sb.log())
        .unwrap();
    f.write_all(b"{\"hello\":1}\n").unwrap();
    sb.run(&["status", "DATA"])
        .code(2)
        .stderr_has("line 4")
        .stderr_has("not a record frame");
}

#[test]
fn four_processes_with_250_operations_each_lose_nothing() {
    let sb = Sandbox::new();
    const PROCS: usize = 4;
    const OPS: usize = 250;
    std::thread::scope(|s| {
        for p in 0..PROCS {
            let sb = &sb;
            s.spawn(move || {
                for k in 0..OPS / 2 {
                    let id = format!("p{p}-{k}");
                    sb.run(&["enqueue", "DATA", &id])
                        .ok()
                        .stdout_has("enqueued=true");
                    sb.run(&["cancel", "DATA", &id]).ok();
                }
            });
        }
    });
    let lines = log_lines(&sb);
    assert_eq!(lines.len(), PROCS * OPS);
    for (i, line) in lines.iter().enumerate() {
        assert_eq!(
            line["seq"],
            i as u64 + 1,
            "seq gap or reorder at line {}",
            i + 1
        );
    }
    for p in 0..PROCS {
        for k in 0..OPS / 2 {
            let id = format!("p{p}-{k}");
            let types: Vec<&str> = lines
                .iter()
                .filter(|l| l["job"] == id.as_str())
                .map(|l| l["type"].as_str().unwrap())
                .collect();
            assert_eq!(types, ["enqueued", "cancelled"], "{id}");
        }
    }
    // Every record's checksum verifies.
    let status = sb.run(&["status", "DATA"]).ok();
    assert!(
        status.stdout.contains("500 jobs: 500 cancelled"),
        "{}",
        status.stdout.lines().last().unwrap()
    );
}
