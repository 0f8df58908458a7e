//! One zygote per attempt: every command of the attempt (setup, baseline,
//! agent, verify, acceptance) starts from the same one, and it ends with
//! the attempt.
//!
//! The attempt enters a scope on its thread ([`AttemptZygote::enter`]);
//! the first command started in it starts the zygote, and the
//! commands of the attempt share it. Commands outside an attempt (or on
//! another thread) get a zygote of their own. If the zygote cannot be
//! started, commands are forked directly, as without one.

use std::cell::RefCell;
use std::marker::PhantomData;
use std::sync::Arc;

use crate::zygote::Zygote;

/// The attempt's zygote on this thread: `None` outside an attempt;
/// inside, not started yet, started, or not startable.
enum Slot {
    Unstarted,
    Started(Option<Arc<Zygote>>),
}

thread_local! {
    static SCOPE: RefCell<Option<Slot>> = const { RefCell::new(None) };
}

/// While it lives, this thread's commands share one zygote; dropping it
/// ends the zygote once no command holds it.
pub(crate) struct AttemptZygote {
    /// Bound to the thread that entered it.
    _thread: PhantomData<*const ()>,
}

impl AttemptZygote {
    pub(crate) fn enter() -> AttemptZygote {
        SCOPE.with(|scope| *scope.borrow_mut() = Some(Slot::Unstarted));
        AttemptZygote {
            _thread: PhantomData,
        }
    }
}

impl Drop for AttemptZygote {
    fn drop(&mut self) {
        let slot = SCOPE.with(|scope| scope.borrow_mut().take());
        drop(slot);
    }
}

/// The zygote for a command started on this thread: the attempt's (started
/// now if it is the first), or a new one outside an attempt.
pub(crate) fn zygote() -> Option<Arc<Zygote>> {
    let start = || Zygote::start().ok().map(Arc::new);
    SCOPE.with(|scope| {
        let mut scope = scope.borrow_mut();
        match &mut *scope {
            None => start(),
            Some(Slot::Started(zygote)) => zygote.clone(),
            Some(slot @ Slot::Unstarted) => {
                let zygote = start();
                *slot = Slot::Started(zygote.clone());
                zygote
            }
        }
    })
}
