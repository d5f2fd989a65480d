//! The Recreate strategy's decisions: kill every old pod first, then bring up the new ReplicaSet.
//!
//! Upstream: `pkg/controller/deployment/recreate.go` (`rolloutRecreate`, `scaleDownOldReplicaSetsForRecreate`,
//! `oldPodsRunning`, `scaleUpNewReplicaSetForRecreate`).
//!
//! Simplified / different from upstream: pure functions over working copies, returning [`ScaleChange`]s
//! (see [`super::rolling`]). Upstream's `podMap` (pods grouped by owning ReplicaSet UID) is replaced by the
//! plain list of the Deployment's pods; a pod belongs to the ReplicaSet named by its controller owner
//! reference. The in-place variants (`recreate_inplace.go`) are not modelled.

use std::sync::Arc;

use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
use k8s_openapi::api::core::v1::Pod;

use super::rolling::{ScaleChange, resize};
use super::util::{get_actual_replica_count_for_replica_sets, is_active, spec_replicas};
use crate::controller_utils::pods::{is_terminal_phase, pod_phase};
use crate::runtime::controller_uid;

/// Upstream `scaleDownOldReplicaSetsForRecreate`: every active old ReplicaSet goes to 0.
pub fn scale_down_old_replica_sets_for_recreate(old_rss: &mut [ReplicaSet]) -> Vec<ScaleChange> {
    old_rss
        .iter_mut()
        .filter(|rs| is_active(rs))
        .filter_map(|rs| resize(rs, 0))
        .collect()
}

/// Upstream `oldPodsRunning`: some old ReplicaSet still reports pods, or some pod not owned by the new
/// ReplicaSet is not yet `Succeeded`/`Failed` (an `Unknown` or missing phase counts as running).
pub fn old_pods_running(new_rs: Option<&ReplicaSet>, old_rss: &[ReplicaSet], pods: &[Arc<Pod>]) -> bool {
    if get_actual_replica_count_for_replica_sets(old_rss) > 0 {
        return true;
    }
    let new_uid = new_rs.and_then(|rs| rs.metadata.uid.as_deref());
    pods.iter()
        .filter(|pod| new_uid.is_none() || controller_uid(&pod.metadata) != new_uid)
        .any(|pod| !is_terminal_phase(pod_phase(pod)))
}

/// How many old pods [`old_pods_running`] waits for: the larger of what the old ReplicaSets report
/// and the pods outside the new ReplicaSet that have not finished (for the journal's sentence).
pub fn old_pods_count(new_rs: Option<&ReplicaSet>, old_rss: &[ReplicaSet], pods: &[Arc<Pod>]) -> usize {
    let reported = usize::try_from(get_actual_replica_count_for_replica_sets(old_rss)).unwrap_or(0);
    let new_uid = new_rs.and_then(|rs| rs.metadata.uid.as_deref());
    let unfinished = pods
        .iter()
        .filter(|pod| new_uid.is_none() || controller_uid(&pod.metadata) != new_uid)
        .filter(|pod| !is_terminal_phase(pod_phase(pod)))
        .count();
    reported.max(unfinished)
}

/// Upstream `scaleUpNewReplicaSetForRecreate`: the new ReplicaSet goes to `spec.replicas`.
pub fn scale_up_new_replica_set_for_recreate(d: &Deployment, new_rs: &mut ReplicaSet) -> Option<ScaleChange> {
    resize(new_rs, spec_replicas(d))
}
