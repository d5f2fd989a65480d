//! Expectations: what a controller is waiting to see in its cache.
//!
//! Upstream: `pkg/controller/controller_utils.go` (`ControllerExpectations`,
//! `UIDTrackingControllerExpectations`).
//!
//! Why: a ReplicaSet sync that creates 3 pods must not run again (and create
//! 3 more) before the informer has delivered those pods. So the sync records
//! "expect 3 creations" before it writes; the pod event handler lowers the
//! count as each pod arrives; and the next sync acts only once the
//! expectations are *satisfied*:
//!
//! - there is no record for the controller (first sync, or after a delete), or
//! - both counts are at or below zero, or
//! - the record is older than [`EXPECTATIONS_TIMEOUT`] (5 minutes of real
//!   time, however fast the clock runs), in case an event was missed.
//!
//! A failed create or delete must lower the expectation itself
//! ([`ControllerExpectations::creation_observed`]), since no event will come.
//!
//! Switched off (`miniplane up --disable expectations`, a lesson: see
//! [`super::lessons`]), [`ControllerExpectations::satisfied`] always answers
//! yes: the records are still kept, but no sync waits for them. With a
//! lagging cache (`--informer-lag`) a ReplicaSet then creates pods again
//! for creations its cache has not shown yet.
//!
//! Simplified: counts are guarded by one mutex rather than atomics per
//! record; keys are `String`s (`namespace/name`).

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime};

use store::Clock;

/// After this long, unmet expectations count as satisfied
/// (upstream `ExpectationsTimeout`).
pub const EXPECTATIONS_TIMEOUT: Duration = Duration::from_secs(5 * 60);

/// The timeout in simulated time: [`EXPECTATIONS_TIMEOUT`] of *real* time.
/// Expectations wait for the informer to catch up, which takes real time;
/// at `--time-scale 1000` five simulated minutes would pass in 0.3 s, and a
/// controller would create pods again before it had seen the last ones.
fn timeout(clock: &Clock) -> Duration {
    EXPECTATIONS_TIMEOUT.mul_f64(clock.scale().max(1.0))
}

/// The pending creations and deletions of one controller (upstream
/// `ControlleeExpectations`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Expectations {
    /// Creations still to be observed.
    pub add: i64,
    /// Deletions still to be observed.
    pub del: i64,
    /// When the record was set.
    pub timestamp: SystemTime,
}

impl Expectations {
    /// Both counts are at or below zero (upstream `Fulfilled`).
    pub fn fulfilled(&self) -> bool {
        self.add <= 0 && self.del <= 0
    }
}

/// Expected creations and deletions per controller key. Cheap to clone: the
/// sync and the event handlers share one.
#[derive(Clone)]
pub struct ControllerExpectations {
    /// Records per controller key. A std mutex: held for one map operation,
    /// never across an `.await`.
    records: Arc<Mutex<HashMap<String, Expectations>>>,
    clock: Clock,
    /// `--disable expectations`: [`ControllerExpectations::satisfied`] is
    /// always true. Fixed at construction, shared by every clone.
    disabled: bool,
}

impl ControllerExpectations {
    /// No expectations; timestamps and the timeout follow `clock`.
    pub fn new(clock: Clock) -> Self {
        ControllerExpectations {
            records: Arc::new(Mutex::new(HashMap::new())),
            clock,
            disabled: false,
        }
    }

    /// The same expectations, switched off when `disabled` (a lesson,
    /// `--disable expectations`): every key is always satisfied. Call it
    /// before handing out clones.
    pub fn disabled(mut self, disabled: bool) -> Self {
        self.disabled = disabled;
        self
    }

    /// Whether they are switched off ([`ControllerExpectations::disabled`]).
    pub fn is_disabled(&self) -> bool {
        self.disabled
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, Expectations>> {
        // Every operation leaves the map consistent, so a poisoned lock is usable.
        self.records.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The record of `key`, if any (upstream `GetExpectations`).
    pub fn get(&self, key: &str) -> Option<Expectations> {
        self.lock().get(key).copied()
    }

    /// Whether the controller may act on its cache (upstream
    /// `SatisfiedExpectations`): no record, both counts ≤ 0, or a record
    /// older than 5 minutes. Always, when switched off.
    pub fn satisfied(&self, key: &str) -> bool {
        if self.disabled {
            return true;
        }
        let Some(e) = self.get(key) else {
            return true;
        };
        if e.fulfilled() {
            return true;
        }
        let age = self
            .clock
            .now()
            .duration_since(e.timestamp)
            .unwrap_or(Duration::ZERO);
        if age > timeout(&self.clock) {
            tracing::debug!(key, "expectations expired; syncing anyway");
            return true;
        }
        false
    }

    /// Replaces the record of `key` (upstream `SetExpectations`).
    pub fn set_expectations(&self, key: &str, add: i64, del: i64) {
        let record = Expectations {
            add,
            del,
            timestamp: self.clock.now(),
        };
        self.lock().insert(key.to_string(), record);
    }

    /// Expects `adds` creations, replacing any record (upstream `ExpectCreations`).
    pub fn expect_creations(&self, key: &str, adds: i64) {
        self.set_expectations(key, adds, 0);
    }

    /// Expects `dels` deletions, replacing any record (upstream `ExpectDeletions`).
    pub fn expect_deletions(&self, key: &str, dels: i64) {
        self.set_expectations(key, 0, dels);
    }

    /// Adds to the counts of an existing record (upstream `RaiseExpectations`).
    pub fn raise_expectations(&self, key: &str, add: i64, del: i64) {
        if let Some(e) = self.lock().get_mut(key) {
            e.add += add;
            e.del += del;
        }
    }

    /// Subtracts from the counts of an existing record (upstream `LowerExpectations`).
    pub fn lower_expectations(&self, key: &str, add: i64, del: i64) {
        if let Some(e) = self.lock().get_mut(key) {
            e.add -= add;
            e.del -= del;
        }
    }

    /// One expected creation was seen, or failed (upstream `CreationObserved`).
    pub fn creation_observed(&self, key: &str) {
        self.lower_expectations(key, 1, 0);
    }

    /// One expected deletion was seen, or failed (upstream `DeletionObserved`).
    pub fn deletion_observed(&self, key: &str) {
        self.lower_expectations(key, 0, 1);
    }

    /// Forgets `key`, e.g. when the controller object is deleted
    /// (upstream `DeleteExpectations`).
    pub fn delete_expectations(&self, key: &str) {
        self.lock().remove(key);
    }
}

/// Expectations that also remember *which* objects are expected to
/// disappear (upstream `UIDTrackingControllerExpectations`; despite the name
/// it tracks pod keys, `namespace/name`).
///
/// A pod deleted by the ReplicaSet first gets a `deletionTimestamp` (an
/// update event) and disappears later (a delete event); the delete must be
/// counted once, whichever event the handler sees, so it is counted only for
/// keys in the set.
#[derive(Clone)]
pub struct UidTrackingControllerExpectations {
    expectations: ControllerExpectations,
    /// Per controller key, the keys of the objects expected to be deleted.
    /// A std mutex, never held across an `.await`; taken before the
    /// expectations' own lock, never after it.
    uids: Arc<Mutex<HashMap<String, HashSet<String>>>>,
}

impl UidTrackingControllerExpectations {
    /// No expectations; timestamps and the timeout follow `clock`.
    pub fn new(clock: Clock) -> Self {
        UidTrackingControllerExpectations {
            expectations: ControllerExpectations::new(clock),
            uids: Arc::new(Mutex::new(HashMap::new())),
        }
    }

    /// The same expectations, switched off when `disabled` (see
    /// [`ControllerExpectations::disabled`]). Call it before handing out clones.
    pub fn disabled(mut self, disabled: bool) -> Self {
        self.expectations = self.expectations.disabled(disabled);
        self
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, HashSet<String>>> {
        // Every operation leaves the map consistent, so a poisoned lock is usable.
        self.uids.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The plain counting expectations (creations, `satisfied`, ...).
    pub fn counts(&self) -> &ControllerExpectations {
        &self.expectations
    }

    /// See [`ControllerExpectations::satisfied`].
    pub fn satisfied(&self, key: &str) -> bool {
        self.expectations.satisfied(key)
    }

    /// See [`ControllerExpectations::expect_creations`].
    pub fn expect_creations(&self, key: &str, adds: i64) {
        self.expectations.expect_creations(key, adds);
    }

    /// See [`ControllerExpectations::creation_observed`].
    pub fn creation_observed(&self, key: &str) {
        self.expectations.creation_observed(key);
    }

    /// See [`ControllerExpectations::lower_expectations`].
    pub fn lower_expectations(&self, key: &str, add: i64, del: i64) {
        self.expectations.lower_expectations(key, add, del);
    }

    /// The keys still expected to be deleted for `key` (upstream `GetUIDs`).
    pub fn get_uids(&self, key: &str) -> HashSet<String> {
        self.lock().get(key).cloned().unwrap_or_default()
    }

    /// Expects the objects `deleted_keys` to disappear, replacing any record
    /// (upstream `ExpectDeletions`).
    pub fn expect_deletions(&self, key: &str, deleted_keys: &[String]) {
        let mut uids = self.lock();
        if uids.get(key).is_some_and(|s| !s.is_empty()) {
            // Upstream logs this as an error too: a sync ran before the
            // last one's deletions were all observed.
            tracing::warn!(key, "clobbering existing deletion expectations");
        }
        uids.insert(key.to_string(), deleted_keys.iter().cloned().collect());
        self.expectations.expect_deletions(key, deleted_keys.len() as i64);
    }

    /// The object `deleted_key` is gone (or its delete failed): lowers the
    /// count once, if it was expected (upstream `DeletionObserved`).
    pub fn deletion_observed(&self, key: &str, deleted_key: &str) {
        let mut uids = self.lock();
        let Some(set) = uids.get_mut(key) else { return };
        if set.remove(deleted_key) {
            self.expectations.lower_expectations(key, 0, 1);
        }
    }

    /// Forgets `key` (upstream `DeleteExpectations`).
    pub fn delete_expectations(&self, key: &str) {
        self.lock().remove(key);
        self.expectations.delete_expectations(key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clock() -> Clock {
        Clock::starting_at(SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000), 1.0)
    }

    #[tokio::test(start_paused = true)]
    async fn no_record_is_satisfied() {
        let e = ControllerExpectations::new(clock());
        assert!(e.satisfied("default/web"));
        assert_eq!(e.get("default/web"), None);
    }

    #[tokio::test(start_paused = true)]
    async fn creations_are_satisfied_once_all_are_observed() {
        let e = ControllerExpectations::new(clock());
        e.expect_creations("default/web", 2);
        assert!(!e.satisfied("default/web"));
        e.creation_observed("default/web");
        assert!(!e.satisfied("default/web"));
        e.creation_observed("default/web");
        assert!(e.satisfied("default/web"));
        e.creation_observed("default/web"); // more than expected: still satisfied
        assert!(e.satisfied("default/web"));
        assert_eq!(e.get("default/web").map(|r| r.add), Some(-1));
    }

    #[tokio::test(start_paused = true)]
    async fn expect_replaces_the_record() {
        let e = ControllerExpectations::new(clock());
        e.expect_creations("k", 3);
        e.expect_deletions("k", 1);
        let r = e.get("k").unwrap();
        assert_eq!((r.add, r.del), (0, 1));
        e.deletion_observed("k");
        assert!(e.satisfied("k"));
        e.raise_expectations("k", 1, 0);
        assert!(!e.satisfied("k"));
        e.lower_expectations("k", 1, 0);
        assert!(e.satisfied("k"));
        e.delete_expectations("k");
        assert_eq!(e.get("k"), None);
        e.lower_expectations("k", 1, 1); // no record: nothing happens
        assert_eq!(e.get("k"), None);
    }

    #[tokio::test(start_paused = true)]
    async fn unmet_expectations_expire_after_five_minutes_of_clock_time() {
        let e = ControllerExpectations::new(clock());
        e.expect_creations("k", 1);
        tokio::time::advance(Duration::from_secs(299)).await;
        assert!(!e.satisfied("k"));
        tokio::time::advance(Duration::from_secs(2)).await;
        assert!(e.satisfied("k"));
    }

    // Regression: the timeout was five *simulated* minutes, 0.3 s of real time at --time-scale 1000,
    // so expectations expired while the cache still lagged and syncs created pods again. It is
    // measured in real time now; controllers/tests/regressions.rs checks it through a controller.
    #[tokio::test(start_paused = true)]
    async fn on_a_scaled_clock_the_timeout_is_five_real_minutes() {
        let e = ControllerExpectations::new(Clock::starting_at(SystemTime::UNIX_EPOCH, 10.0));
        e.expect_deletions("k", 1);
        tokio::time::advance(Duration::from_secs(31)).await; // 310 simulated seconds
        assert!(!e.satisfied("k"));
        tokio::time::advance(Duration::from_secs(270)).await; // 5 min 1 s of real time
        assert!(e.satisfied("k"));
    }

    #[tokio::test(start_paused = true)]
    async fn switched_off_they_are_always_satisfied() {
        let e = ControllerExpectations::new(clock()).disabled(true);
        assert!(e.is_disabled());
        e.expect_creations("default/web", 3);
        assert!(e.satisfied("default/web"), "3 creations pending, yet satisfied");
        assert_eq!(e.get("default/web").map(|r| r.add), Some(3), "still recorded");
        let shared = e.clone();
        assert!(shared.satisfied("default/web"), "clones share the switch");

        let tracking = UidTrackingControllerExpectations::new(clock()).disabled(true);
        tracking.expect_deletions("default/web", &["default/p1".to_string()]);
        assert!(tracking.satisfied("default/web"));
        let on = UidTrackingControllerExpectations::new(clock()).disabled(false);
        on.expect_deletions("default/web", &["default/p1".to_string()]);
        assert!(!on.satisfied("default/web"));
    }

    #[tokio::test(start_paused = true)]
    async fn uid_tracking_counts_each_expected_deletion_once() {
        let e = UidTrackingControllerExpectations::new(clock());
        let doomed = vec!["default/p1".to_string(), "default/p2".to_string()];
        e.expect_deletions("default/web", &doomed);
        assert!(!e.satisfied("default/web"));
        e.deletion_observed("default/web", "default/p1");
        e.deletion_observed("default/web", "default/p1"); // again (update, then delete event)
        e.deletion_observed("default/web", "default/other"); // not expected
        assert_eq!(e.counts().get("default/web").map(|r| r.del), Some(1));
        assert!(!e.satisfied("default/web"));
        assert_eq!(e.get_uids("default/web").len(), 1);
        e.deletion_observed("default/web", "default/p2");
        assert!(e.satisfied("default/web"));
        e.delete_expectations("default/web");
        assert!(e.get_uids("default/web").is_empty());
        assert_eq!(e.counts().get("default/web"), None);
    }
}
