//! A cancel signal shared between threads: set once, observed by polling or
//! by waiting with a timeout (so nothing has to sleep to notice it).

use std::sync::{Arc, Condvar, Mutex, Weak};
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
    /// Tokens cancelled together with this one.
    children: Mutex<Vec<Weak<Inner>>>,
}

impl CancelToken {
    pub fn new() -> CancelToken {
        CancelToken::default()
    }

    /// Sets the flag, wakes every waiter and cancels every child. Idempotent.
    pub fn cancel(&self) {
        let children = {
            let mut flag = self
                .inner
                .cancelled
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            *flag = true;
            self.inner.changed.notify_all();
            std::mem::take(
                &mut *self
                    .inner
                    .children
                    .lock()
                    .unwrap_or_else(|p| p.into_inner()),
            )
        };
        for child in children.iter().filter_map(Weak::upgrade) {
            CancelToken { inner: child }.cancel();
        }
    }

    /// A new token that is cancelled when this one is (at once if it
    /// already is), and can also be cancelled on its own.
    pub fn child(&self) -> CancelToken {
        let child = CancelToken::new();
        // Holding the flag's lock while registering means a concurrent
        // cancel either sees the child or happened before and is seen here.
        let flag = self
            .inner
            .cancelled
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if *flag {
            child.cancel();
        } else {
            let mut children = self
                .inner
                .children
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            children.retain(|c| c.strong_count() > 0);
            children.push(Arc::downgrade(&child.inner));
        }
        drop(flag);
        child
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
    fn children_follow_their_parent_but_not_the_other_way() {
        let parent = CancelToken::new();
        let child = parent.child();
        let grandchild = child.child();
        let sibling = parent.child();
        sibling.cancel();
        assert!(!parent.is_cancelled() && !child.is_cancelled());
        parent.cancel();
        assert!(child.is_cancelled() && grandchild.is_cancelled());
        assert!(
            parent.child().is_cancelled(),
            "a child of a cancelled token starts cancelled"
        );
    }

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
