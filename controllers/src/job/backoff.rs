//! The delay before a failed pod is replaced: 10 s after the first failure in a row, doubling with
//! each further one, capped at 10 minutes; a success resets the count.
//!
//! Upstream: `pkg/controller/job/backoff_utils.go` (`backoffRecord`, `backoffStore`,
//! `newBackoffRecord`, `getFinishedTime`, `getRemainingTime`, `getRemainingTimePerIndex`) and the
//! constants `DefaultJobPodFailureBackOff`, `MaxJobPodFailureBackOff` of `job_controller.go`.
//!
//! ```text
//! failures in a row (n)   1     2     3     4      5      6      7       8+
//! delay                   10 s  20 s  40 s  80 s   160 s  320 s  600 s   600 s
//! ```
//!
//! The delay runs from the finish time of the last failed pod ([`finished_time`]), so a replacement
//! is created at `last failure + delay` whatever the time the controller noticed the failure. With
//! `backoffLimitPerIndex` each index has its own count, kept in the pods' failure-count annotations
//! ([`remaining_time_per_index`]).
//!
//! Everything but [`BackoffStore`] is pure: `now` is a parameter.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::Pod;

use super::indexed::index_absolute_failure_count;

/// First delay after a failure (upstream `DefaultJobPodFailureBackOff`).
pub const DEFAULT_JOB_POD_FAILURE_BACKOFF: Duration = Duration::from_secs(10);
/// Longest delay (upstream `MaxJobPodFailureBackOff`).
pub const MAX_JOB_POD_FAILURE_BACKOFF: Duration = Duration::from_secs(10 * 60);

/// A Job's failures since its last success (upstream `backoffRecord`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BackoffRecord {
    /// Failed pods that finished after the last succeeded one.
    pub failures_after_last_success: i32,
    /// When the last of them finished; `None` when there is none.
    pub last_failure_time: Option<Timestamp>,
}

impl BackoffRecord {
    /// Upstream `getRemainingTime`: how long pod creation must still wait at `now`.
    pub fn remaining_time(&self, now: Timestamp, default: Duration, max: Duration) -> Duration {
        remaining_time_for_failures_count(
            now,
            default,
            max,
            self.failures_after_last_success,
            self.last_failure_time,
        )
    }
}

/// Upstream `newBackoffRecord`: the record after `previous`, given the finish times of the pods that
/// succeeded and failed since the last sync.
///
/// Only failures strictly after the latest new success count (a failure at the same instant as a
/// success does not); without a new success they add to the previous count.
pub fn new_backoff_record(
    previous: Option<BackoffRecord>,
    mut succeeded: Vec<Timestamp>,
    mut failed: Vec<Timestamp>,
) -> BackoffRecord {
    let mut record = previous.unwrap_or_default();
    succeeded.sort();
    failed.sort();
    let Some(&last_success) = succeeded.last() else {
        if let Some(&last_failure) = failed.last() {
            record.failures_after_last_success = record
                .failures_after_last_success
                .saturating_add(i32::try_from(failed.len()).unwrap_or(i32::MAX));
            record.last_failure_time = Some(last_failure);
        }
        return record;
    };
    record.failures_after_last_success = 0;
    record.last_failure_time = None;
    for &failure in failed.iter().rev() {
        if failure <= last_success {
            break;
        }
        if record.last_failure_time.is_none() {
            record.last_failure_time = Some(failure);
        }
        record.failures_after_last_success += 1;
    }
    record
}

/// Upstream `getFinishedTime`: when a pod finished. The latest `finishedAt` of its containers if all
/// of them terminated with a time; else the transition of Ready to False; else its deletion time less
/// the grace period; else its creation time.
pub fn finished_time(pod: &Pod) -> Timestamp {
    finish_time_from_containers(pod)
        .or_else(|| finish_time_from_ready_false(pod))
        .or_else(|| finish_time_from_deletion(pod))
        .or_else(|| pod.metadata.creation_timestamp.as_ref().map(|t| t.0))
        .unwrap_or(Timestamp::UNIX_EPOCH)
}

fn finish_time_from_containers(pod: &Pod) -> Option<Timestamp> {
    let statuses = pod.status.as_ref()?.container_statuses.as_ref()?;
    let mut latest: Option<Timestamp> = None;
    for status in statuses {
        let terminated = status.state.as_ref()?.terminated.as_ref()?;
        let finished = terminated.finished_at.as_ref()?.0;
        if finished == Timestamp::UNIX_EPOCH {
            return None;
        }
        latest = Some(latest.map_or(finished, |l| l.max(finished)));
    }
    latest
}

fn finish_time_from_ready_false(pod: &Pod) -> Option<Timestamp> {
    let conditions = pod.status.as_ref()?.conditions.as_ref()?;
    let ready = conditions.iter().find(|c| c.type_ == "Ready")?;
    if ready.status != "False" {
        return None;
    }
    ready.last_transition_time.as_ref().map(|t| t.0)
}

fn finish_time_from_deletion(pod: &Pod) -> Option<Timestamp> {
    let deleted = pod.metadata.deletion_timestamp.as_ref()?.0;
    let grace = pod.metadata.deletion_grace_period_seconds.unwrap_or(0);
    deleted.checked_sub(jiff::SignedDuration::from_secs(grace)).ok()
}

/// Upstream `getRemainingTimePerIndex`: the wait before replacing `last_failed` (the index's latest
/// failed pod), from the failure count in its annotations plus this failure.
pub fn remaining_time_per_index(
    now: Timestamp,
    default: Duration,
    max: Duration,
    last_failed: Option<&Pod>,
) -> Duration {
    let Some(pod) = last_failed else {
        return Duration::ZERO;
    };
    let failures = index_absolute_failure_count(pod).saturating_add(1);
    remaining_time_for_failures_count(now, default, max, failures, Some(finished_time(pod)))
}

/// Upstream `getRemainingTimeForFailuresCount`: `min(default · 2^(n−1), max)` less the time since
/// the last failure, never negative.
pub fn remaining_time_for_failures_count(
    now: Timestamp,
    default: Duration,
    max: Duration,
    failures: i32,
    last_failure: Option<Timestamp>,
) -> Duration {
    if failures <= 0 {
        return Duration::ZERO;
    }
    let mut delay = default;
    for _ in 1..failures {
        delay = delay.saturating_mul(2);
        if delay >= max {
            delay = max;
            break;
        }
    }
    let Some(last) = last_failure else {
        return delay;
    };
    let elapsed = now.duration_since(last);
    match Duration::try_from(elapsed) {
        Ok(elapsed) => delay.saturating_sub(elapsed),
        // The failure lies in the future (clock skew): the whole delay is left, and a bit more.
        Err(_) => delay.saturating_add(elapsed.unsigned_abs()),
    }
}

/// The backoff records of every Job, by key (upstream `backoffStore`). Cheap to clone: the sync and
/// its tests share one.
#[derive(Clone, Default)]
pub struct BackoffStore {
    /// Records by Job key. A std mutex: held for one map operation, never across an `.await`.
    records: Arc<Mutex<HashMap<String, BackoffRecord>>>,
}

impl BackoffStore {
    fn lock(&self) -> MutexGuard<'_, HashMap<String, BackoffRecord>> {
        // Every operation leaves the map consistent, so a poisoned lock is usable.
        self.records.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The record of `key`, if any.
    pub fn get(&self, key: &str) -> Option<BackoffRecord> {
        self.lock().get(key).copied()
    }

    /// Upstream `updateBackoffRecord`.
    pub fn update(&self, key: &str, record: BackoffRecord) {
        self.lock().insert(key.to_string(), record);
    }

    /// Upstream `removeBackoffRecord`: the Job finished or is gone.
    pub fn remove(&self, key: &str) {
        self.lock().remove(key);
    }
}
