//! The backoff between deletions of failed daemon pods on one node.
//!
//! Upstream: `k8s.io/client-go/util/flowcontrol/backoff.go` (`Backoff`: `Next`,
//! `IsInBackOffSinceUpdate`, `Get`, `GC`), as kube-controller-manager builds it for the DaemonSet
//! controller (`flowcontrol.NewBackOff(1*time.Second, 15*time.Minute)`), keyed by
//! `failedPodsBackoffKey` (`<ds uid>/<observedGeneration>/<node>`).
//!
//! A kubelet that keeps rejecting a daemon pod would otherwise make the controller delete and
//! recreate it in a hot loop. Each deletion of a failed pod on a node doubles the wait before the
//! next one (1 s, 2 s, 4 s, ... up to 15 min); an entry untouched for twice the maximum starts over.
//!
//! Pure: every call takes `now`. Simplified: no jitter (upstream's controller uses none either).

use std::collections::HashMap;
use std::time::Duration;

use jiff::Timestamp;

/// The first delay (kube-controller-manager: 1 s).
pub const INITIAL_BACKOFF: Duration = Duration::from_secs(1);
/// The longest delay (kube-controller-manager: 15 min).
pub const MAX_BACKOFF: Duration = Duration::from_secs(15 * 60);

#[derive(Clone, Copy, Debug)]
struct Entry {
    backoff: Duration,
    last_update: Timestamp,
}

/// Per-key exponential backoff (upstream `flowcontrol.Backoff`).
#[derive(Clone, Debug)]
pub struct Backoff {
    initial: Duration,
    max: Duration,
    entries: HashMap<String, Entry>,
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff::new(INITIAL_BACKOFF, MAX_BACKOFF)
    }
}

impl Backoff {
    /// A backoff starting at `initial` and doubling up to `max`.
    pub fn new(initial: Duration, max: Duration) -> Self {
        Backoff {
            initial,
            max,
            entries: HashMap::new(),
        }
    }

    fn elapsed(now: Timestamp, since: Timestamp) -> Duration {
        Duration::try_from(now.duration_since(since)).unwrap_or(Duration::ZERO)
    }

    fn has_expired(&self, now: Timestamp, last_update: Timestamp) -> bool {
        Self::elapsed(now, last_update) > self.max * 2
    }

    /// Upstream `Next`: records an event for `key` at `now`, doubling its delay (or starting over).
    pub fn next(&mut self, key: &str, now: Timestamp) {
        let backoff = match self.entries.get(key) {
            Some(e) if !self.has_expired(now, e.last_update) => (e.backoff * 2).min(self.max),
            _ => self.initial,
        };
        self.entries.insert(
            key.to_owned(),
            Entry {
                backoff,
                last_update: now,
            },
        );
    }

    /// Upstream `IsInBackOffSinceUpdate`: less than the current delay has passed since the last event.
    pub fn is_in_back_off_since_update(&self, key: &str, now: Timestamp) -> bool {
        match self.entries.get(key) {
            None => false,
            Some(e) if self.has_expired(now, e.last_update) => false,
            Some(e) => Self::elapsed(now, e.last_update) < e.backoff,
        }
    }

    /// Upstream `Get`: the current delay of `key` (zero if none).
    pub fn get(&self, key: &str) -> Duration {
        self.entries.get(key).map_or(Duration::ZERO, |e| e.backoff)
    }

    /// Upstream `GC`: forgets the entries that have expired.
    pub fn gc(&mut self, now: Timestamp) {
        let max = self.max;
        self.entries
            .retain(|_, e| Self::elapsed(now, e.last_update) <= max * 2);
    }
}
