//! A cancel signal shared between threads: set once, observed by polling or
//! by waiting with a timeout (so nothing has to sleep to notice it).

use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// Cloneable; all clones share one flag.
#[derive(Debug, Clone, Default)]
pub struct CancelToken {
    inner: Arc<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    cancelled: Mutex<bool>,
    changed: Condvar,
}

impl CancelToken {
    pub fn new() -> CancelToken {
        CancelToken::default()
    }

    /// Sets the flag and wakes every waiter. Idempotent.
    pub fn cancel(&self) {
        let mut flag = self
            .inner
            .cancelled
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        *flag = true;
        self.inner.changed.notify_all();
    }

    pub fn is_cancelled(&self) -> bool {
        *self
            .inner
            .cancelled
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }

    /// Waits until cancelled or `timeout` passes; returns whether cancelled.
    pub fn wait_timeout(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let mut flag = self
            .inner
            .cancelled
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        while !*flag {
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            flag = match self.inner.changed.wait_timeout(flag, deadline - now) {
                Ok((guard, _)) => guard,
                Err(p) => p.into_inner().0,
            };
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waiters_wake_on_cancel() {
        let token = CancelToken::new();
        assert!(!token.wait_timeout(Duration::from_millis(1)));
        let clone = token.clone();
        let waiter = std::thread::spawn(move || clone.wait_timeout(Duration::from_secs(30)));
        token.cancel();
        assert!(waiter.join().unwrap());
        assert!(token.is_cancelled());
    }
}
