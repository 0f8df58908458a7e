//! Noticing a cancel written by another process while an attempt runs.

use std::thread::JoinHandle;
use std::time::Duration;

use crate::cancel::CancelToken;
use crate::log::Follower;
use crate::protocol::Event;

/// How often the log is polled for a cancel; well inside the 1 s promise.
pub const CANCEL_POLL_INTERVAL: Duration = Duration::from_millis(100);

/// Spawns a thread that cancels `token` when a `cancelled` event for `job`
/// appears in the log. It exits on that, or when `stop` is cancelled.
pub fn watch_for_cancel(
    mut follower: Follower,
    job: String,
    token: CancelToken,
    stop: CancelToken,
) -> std::io::Result<JoinHandle<()>> {
    std::thread::Builder::new()
        .name(format!("cancel-watch-{job}"))
        .spawn(move || {
            loop {
                // A log we cannot read right now (or one corrupted under us) is
                // retried; the runner's own writes will report the real error.
                // The one place outside the state that looks at an event
                // itself: the one event a runner must react to from another
                // process, seen as the follower reads it. Folding every
                // record through a reducer here would only find the same.
                if let Ok(records) = follower.poll()
                    && records.iter().any(|r| {
                        r.job.as_deref() == Some(job.as_str()) && r.event == Event::Cancelled {}
                    })
                {
                    token.cancel();
                    return;
                }
                if stop.wait_timeout(CANCEL_POLL_INTERVAL) {
                    return;
                }
            }
        })
}
