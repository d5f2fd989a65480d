//! The nodes a pod is bound to but the node cache does not know, waiting out their quarantine.
//!
//! Upstream: the `nodeQueue` of `pkg/controller/podgc/gc_controller.go` — a delaying work queue
//! (`AddAfter(nodeName, quarantineTime)`, drained by `discoverDeletedNodes` while `Len() > 0`).
//! A node missing from the informer may only be late (just registered, the watch behind), so
//! the pass waits [`QUARANTINE_TIME`] before it asks the API server itself.
//!
//! ```text
//! add_after(name, ready_at)   first time wins: adding again does not postpone the check
//! take_ready(now)             every name whose ready_at <= now, removed (each checked once;
//!                             a node still missing is added again by the next pass)
//! ```
//!
//! Pure: the caller passes the times, read from the injected clock once per pass.

use std::collections::BTreeMap;
use std::time::Duration;

use jiff::Timestamp;

/// How long a node missing from the cache waits before a live GET (upstream `quarantineTime`).
pub const QUARANTINE_TIME: Duration = Duration::from_secs(40);

/// Node names with the time their quarantine ends.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Quarantine {
    ready_at: BTreeMap<String, Timestamp>,
}

impl Quarantine {
    /// An empty quarantine.
    pub fn new() -> Self {
        Quarantine::default()
    }

    /// Puts `name` into quarantine until `ready_at`, unless it is there already (a delaying
    /// queue keeps the earliest time of a key added twice).
    pub fn add_after(&mut self, name: &str, ready_at: Timestamp) {
        let entry = self.ready_at.entry(name.to_string()).or_insert(ready_at);
        *entry = (*entry).min(ready_at);
    }

    /// Removes and returns, in name order, every node whose quarantine is over at `now`.
    pub fn take_ready(&mut self, now: Timestamp) -> Vec<String> {
        let ready: Vec<String> = self
            .ready_at
            .iter()
            .filter(|(_, at)| **at <= now)
            .map(|(name, _)| name.clone())
            .collect();
        for name in &ready {
            self.ready_at.remove(name);
        }
        ready
    }

    /// How many nodes wait.
    pub fn len(&self) -> usize {
        self.ready_at.len()
    }

    /// Whether no node waits.
    pub fn is_empty(&self) -> bool {
        self.ready_at.is_empty()
    }
}

/// `now + QUARANTINE_TIME`, saturating at the largest timestamp.
pub fn quarantine_end(now: Timestamp) -> Timestamp {
    let span = jiff::SignedDuration::try_from(QUARANTINE_TIME).unwrap_or(jiff::SignedDuration::MAX);
    now.checked_add(span).unwrap_or(Timestamp::MAX)
}
