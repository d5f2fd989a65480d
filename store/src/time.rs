//! The time machine: pause, resume, rescale and single-step the simulated
//! clock, and hold a controller's sync at a breakpoint.
//!
//! (being written)

use std::sync::{Arc, Mutex};

/// Reports how many keys a work queue holds (queued or processing);
/// `None` once the queue is gone.
pub type BusyProbe = Box<dyn Fn() -> Option<usize> + Send + Sync>;

/// The clock's controls, shared by every clone of one [`crate::Clock`].
#[derive(Default)]
pub struct TimeMachine {
    queues: Mutex<Vec<BusyProbe>>,
}

impl std::fmt::Debug for TimeMachine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TimeMachine").finish_non_exhaustive()
    }
}

impl TimeMachine {
    /// A machine with no queues and no breakpoints.
    pub fn new() -> Arc<Self> {
        Arc::new(TimeMachine::default())
    }

    /// Counts a controller's work queue in "every queue is empty" (`step`).
    pub fn register_queue(&self, probe: BusyProbe) {
        self.queues.lock().unwrap_or_else(|p| p.into_inner()).push(probe);
    }

    /// Waits while a breakpoint holds `controller`'s next sync of `key`
    /// (`namespace/name` or `name`).
    pub async fn hold_at_breakpoint(&self, _controller: &str, _key: &str) {}
}
