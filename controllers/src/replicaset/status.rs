//! The status a ReplicaSet sync reports.
//!
//! Ported from upstream `pkg/controller/replicaset/replica_set_utils.go` (`calculateStatus`, the condition
//! helpers) and the write/requeue decisions of `replica_set.go` (`updateReplicaSetStatus`,
//! `syncReplicaSet`).
//!
//! Simplifications against upstream:
//! * `observedGeneration` is filled in by [`calculate_status`] rather than at write time; use
//!   [`status_needs_update`] to decide whether to write at all.
//! * `terminatingReplicas` stays unset: upstream only reports it behind the alpha
//!   `DeploymentReplicaSetTerminatingReplicas` gate, which is off in v1.33.
//! * Zero counters are written as absent, matching upstream's `omitempty` JSON.

use std::borrow::Borrow;
use std::collections::BTreeMap;

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::{ReplicaSet, ReplicaSetCondition, ReplicaSetStatus};
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::plan::desired_replicas;
use crate::controller_utils::pods::{is_pod_available, is_pod_ready};

/// Condition type set while creating or deleting pods fails.
pub const REPLICA_FAILURE: &str = "ReplicaFailure";
/// `ReplicaFailure` reason when the ReplicaSet had too few pods.
pub const FAILED_CREATE: &str = "FailedCreate";
/// `ReplicaFailure` reason when the ReplicaSet had too many pods.
pub const FAILED_DELETE: &str = "FailedDelete";

/// Pod counters of a ReplicaSet, as upstream's loop in `calculateStatus` computes them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PodCounts {
    /// Active owned pods.
    pub replicas: i32,
    /// Of those, pods whose labels include every template label.
    pub fully_labeled: i32,
    /// Of those, Ready pods.
    pub ready: i32,
    /// Of the ready pods, those ready for at least `minReadySeconds`.
    pub available: i32,
}

/// Counts `filtered_active_pods` (the active pods the ReplicaSet owns) at `now`.
pub fn count_pods<P: Borrow<Pod>>(rs: &ReplicaSet, filtered_active_pods: &[P], now: Timestamp) -> PodCounts {
    let spec = rs.spec.as_ref();
    let min_ready_seconds = spec.and_then(|s| s.min_ready_seconds).unwrap_or(0);
    let template_labels = spec
        .and_then(|s| s.template.as_ref())
        .and_then(|t| t.metadata.as_ref());
    let template_labels = template_labels.and_then(|m| m.labels.as_ref());
    let mut counts = PodCounts::default();
    for pod in filtered_active_pods.iter().map(Borrow::borrow) {
        counts.replicas += 1;
        counts.fully_labeled += i32::from(has_all_labels(pod, template_labels));
        if is_pod_ready(pod) {
            counts.ready += 1;
            counts.available += i32::from(is_pod_available(pod, min_ready_seconds, now));
        }
    }
    counts
}

fn has_all_labels(pod: &Pod, wanted: Option<&BTreeMap<String, String>>) -> bool {
    let have = pod.metadata.labels.as_ref();
    wanted
        .into_iter()
        .flatten()
        .all(|(k, v)| have.and_then(|h| h.get(k)) == Some(v))
}

/// Upstream `calculateStatus`: the new status after a sync.
///
/// `manage_replicas_error` is the error message of this sync's create/delete step, if it failed. A failure
/// adds a `ReplicaFailure` condition (reason [`FAILED_CREATE`] when pods were missing, [`FAILED_DELETE`]
/// when there were too many) unless one is already present; a successful step removes it.
pub fn calculate_status<P: Borrow<Pod>>(
    rs: &ReplicaSet,
    filtered_active_pods: &[P],
    manage_replicas_error: Option<&str>,
    now: Timestamp,
) -> ReplicaSetStatus {
    let mut status = rs.status.clone().unwrap_or_default();
    let has_failure = get_condition(&status, REPLICA_FAILURE).is_some();
    match manage_replicas_error {
        Some(message) if !has_failure => {
            let reason = failure_reason(filtered_active_pods.len(), desired_replicas(rs));
            set_condition(
                &mut status,
                new_condition(REPLICA_FAILURE, "True", reason, message, now),
            );
        }
        None if has_failure => remove_condition(&mut status, REPLICA_FAILURE),
        _ => {}
    }
    let counts = count_pods(rs, filtered_active_pods, now);
    status.replicas = counts.replicas;
    status.fully_labeled_replicas = non_zero(counts.fully_labeled);
    status.ready_replicas = non_zero(counts.ready);
    status.available_replicas = non_zero(counts.available);
    status.observed_generation = rs.metadata.generation.filter(|g| *g != 0);
    status.terminating_replicas = None;
    status
}

/// `FailedCreate` below the desired count, `FailedDelete` above it, and no reason when equal.
fn failure_reason(have: usize, want: usize) -> &'static str {
    match have.cmp(&want) {
        std::cmp::Ordering::Less => FAILED_CREATE,
        std::cmp::Ordering::Greater => FAILED_DELETE,
        std::cmp::Ordering::Equal => "",
    }
}

fn non_zero(n: i32) -> Option<i32> {
    (n != 0).then_some(n)
}

/// Upstream `updateReplicaSetStatus`'s steady-state check: write only if a counter or the conditions
/// changed, or the spec generation has not been observed yet.
pub fn status_needs_update(rs: &ReplicaSet, new_status: &ReplicaSetStatus) -> bool {
    let old = rs.status.clone().unwrap_or_default();
    let n = |v: Option<i32>| v.unwrap_or(0);
    old.replicas != new_status.replicas
        || n(old.fully_labeled_replicas) != n(new_status.fully_labeled_replicas)
        || n(old.ready_replicas) != n(new_status.ready_replicas)
        || n(old.available_replicas) != n(new_status.available_replicas)
        || rs.metadata.generation.unwrap_or(0) != old.observed_generation.unwrap_or(0)
        || conditions(&old) != conditions(new_status)
}

fn conditions(status: &ReplicaSetStatus) -> &[ReplicaSetCondition] {
    status.conditions.as_deref().unwrap_or(&[])
}

/// `syncReplicaSet`'s last step: when every pod is ready but not all are available yet, look again after
/// `minReadySeconds`. Only after a successful create/delete step.
pub fn availability_requeue_after(
    rs: &ReplicaSet,
    written: &ReplicaSetStatus,
    manage_ok: bool,
) -> Option<std::time::Duration> {
    let min_ready_seconds = rs.spec.as_ref().and_then(|s| s.min_ready_seconds).unwrap_or(0);
    let want = rs.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1);
    let ready = written.ready_replicas.unwrap_or(0);
    let available = written.available_replicas.unwrap_or(0);
    let waiting = manage_ok && min_ready_seconds > 0 && ready == want && available != want;
    waiting.then(|| std::time::Duration::from_secs(u64::from(min_ready_seconds.unsigned_abs())))
}

/// Upstream `NewReplicaSetCondition`: a condition that transitions at `now`. Empty reason/message are unset.
pub fn new_condition(
    type_: &str,
    status: &str,
    reason: &str,
    message: &str,
    now: Timestamp,
) -> ReplicaSetCondition {
    let text = |s: &str| (!s.is_empty()).then(|| s.to_owned());
    ReplicaSetCondition {
        type_: type_.to_owned(),
        status: status.to_owned(),
        reason: text(reason),
        message: text(message),
        last_transition_time: Some(Time(now)),
    }
}

/// Upstream `GetCondition`.
pub fn get_condition<'a>(status: &'a ReplicaSetStatus, type_: &str) -> Option<&'a ReplicaSetCondition> {
    conditions(status).iter().find(|c| c.type_ == type_)
}

/// Upstream `SetCondition`: replaces the condition of the same type, unless status and reason are
/// unchanged (then the old one, with its transition time, is kept).
pub fn set_condition(status: &mut ReplicaSetStatus, condition: ReplicaSetCondition) {
    if let Some(current) = get_condition(status, &condition.type_)
        && current.status == condition.status
        && current.reason == condition.reason
    {
        return;
    }
    remove_condition(status, &condition.type_);
    status.conditions.get_or_insert_with(Vec::new).push(condition);
}

/// Upstream `RemoveCondition`; an emptied list becomes absent.
pub fn remove_condition(status: &mut ReplicaSetStatus, type_: &str) {
    let kept: Vec<ReplicaSetCondition> = conditions(status)
        .iter()
        .filter(|c| c.type_ != type_)
        .cloned()
        .collect();
    status.conditions = (!kept.is_empty()).then_some(kept);
}
