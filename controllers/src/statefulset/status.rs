//! The StatefulSet's status: the counters, the end of a rolling update, and whether a write is
//! needed.
//!
//! Upstream: `stateful_set_control.go` (`computeReplicaStatus`, `updateStatus`,
//! `updateStatefulSetStatus`), `stateful_set_utils.go` (`completeRollingUpdate`,
//! `inconsistentStatus`).
//!
//! These fields are what `kubectl rollout status statefulset` reads: it waits while
//! `readyReplicas < spec.replicas` ("Waiting for N pods to be ready..."), then, with a partition,
//! for `updatedReplicas >= replicas - partition` ("partitioned roll out complete: N new pods have
//! been updated..."), else until `currentRevision == updateRevision` ("statefulset rolling update
//! complete N pods at revision X...").

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::{StatefulSet, StatefulSetStatus};
use k8s_openapi::api::core::v1::Pod;

use super::utils::{
    ROLLING_UPDATE, get_pod_revision, is_running_and_available, is_running_and_ready, is_terminating,
    update_strategy_type,
};

/// Upstream `computeReplicaStatus` over existing pods: `replicas` counts every pod, `ready` the
/// running and ready ones, `available` those also available for `minReadySeconds`, `current` /
/// `updated` the non-terminating pods labelled with the current / update revision.
pub fn compute_replica_status<'a>(
    status: &mut StatefulSetStatus,
    pods: impl IntoIterator<Item = &'a Pod>,
    min_ready_seconds: i32,
    current_revision: &str,
    update_revision: &str,
    now: Timestamp,
) {
    let (mut replicas, mut ready, mut available, mut current, mut updated) = (0, 0, 0, 0, 0);
    for pod in pods {
        replicas += 1;
        if is_running_and_ready(pod) {
            ready += 1;
            if is_running_and_available(pod, min_ready_seconds, now) {
                available += 1;
            }
        }
        if !is_terminating(pod) {
            let revision = get_pod_revision(pod);
            if revision == current_revision {
                current += 1;
            }
            if revision == update_revision {
                updated += 1;
            }
        }
    }
    status.replicas = replicas;
    status.ready_replicas = Some(ready);
    status.available_replicas = Some(available);
    status.current_replicas = Some(current);
    status.updated_replicas = Some(updated);
}

/// Upstream `completeRollingUpdate`: with `RollingUpdate`, once every pod is updated and ready,
/// the update revision becomes the current one.
pub fn complete_rolling_update(set: &StatefulSet, status: &mut StatefulSetStatus) {
    let updated = status.updated_replicas.unwrap_or(0);
    if update_strategy_type(set) == ROLLING_UPDATE
        && updated == status.replicas
        && status.ready_replicas.unwrap_or(0) == status.replicas
    {
        status.current_replicas = Some(updated);
        status.current_revision = status.update_revision.clone();
    }
}

/// Upstream `inconsistentStatus`: the status differs from the set's in a field the controller
/// writes.
pub fn inconsistent_status(set: &StatefulSet, status: &StatefulSetStatus) -> bool {
    let Some(old) = set.status.as_ref() else {
        return true;
    };
    let n = |v: Option<i32>| v.unwrap_or(0);
    old.observed_generation != status.observed_generation
        || old.replicas != status.replicas
        || n(old.ready_replicas) != n(status.ready_replicas)
        || n(old.available_replicas) != n(status.available_replicas)
        || n(old.current_replicas) != n(status.current_replicas)
        || n(old.updated_replicas) != n(status.updated_replicas)
        || old.current_revision != status.current_revision
        || old.update_revision != status.update_revision
        || old.collision_count != status.collision_count
}

/// When to look again so that `availableReplicas` catches up with pods that are ready but not yet
/// available (upstream `syncStatefulSet` requeues after `minReadySeconds`).
pub fn availability_requeue_after(
    set: &StatefulSet,
    status: &StatefulSetStatus,
) -> Option<std::time::Duration> {
    let min_ready = super::utils::min_ready_seconds(set);
    (min_ready > 0 && status.available_replicas.unwrap_or(0) != status.ready_replicas.unwrap_or(0))
        .then(|| std::time::Duration::from_secs(u64::from(min_ready.unsigned_abs())))
}
