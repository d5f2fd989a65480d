//! The sentences a Deployment sync records in the causal journal: each decision of its plan, with
//! the numbers it was made from and the upstream function it mirrors.
//!
//! Upstream has no counterpart: the nearest are the `-v=4` logs of `rolling.go` ("New replica set
//! ... is at ... replicas, scaling up ...") and the `ScalingReplicaSet` events, which give the
//! outcome but not the arithmetic. [`super::plan`] calls these pure functions with what it saw
//! and what it decided, and returns the [`Decision`]s next to its steps; `sync.rs` records them
//! with `Clock::decide` while the sync runs, so each is caused by that sync.
//!
//! Every message is a plain sentence with upstream's names for the numbers (`maxTotalPods`,
//! `currentPodCount`, `maxScaledDown`, `minAvailable`, `newRSUnavailable`), so the output of
//! `miniplane explain` can be checked against `rolling.go` by hand.

use k8s_openapi::api::apps::v1::{Deployment, DeploymentStatus, ReplicaSet};

use super::rolling::{OldScaleDown, ScaleChange};
use super::util::{
    DEPLOYMENT_PROGRESSING, get_deployment_condition, get_replica_count_for_replica_sets, is_active,
    is_rolling_update, max_surge, max_unavailable, rs_available, rs_replicas, spec_replicas,
};
use crate::runtime::name_of;

pub use crate::runtime::Decision;
use crate::runtime::decision;

/// `web-6d4f 3→2, web-7c9b 0→1`.
pub fn changes_text(changes: &[ScaleChange]) -> String {
    let parts: Vec<String> = changes
        .iter()
        .map(|c| format!("{} {}→{}", c.name, c.from, c.to))
        .collect();
    parts.join(", ")
}

/// Upstream `NewRSNewReplicas`'s arithmetic: the size the new ReplicaSet may grow to, and why.
/// `all_rss` includes the new ReplicaSet, as for `new_rs_new_replicas`.
pub fn new_rs_new_replicas_arithmetic<'a>(
    d: &Deployment,
    all_rss: impl IntoIterator<Item = &'a ReplicaSet>,
    new_rs: &ReplicaSet,
) -> String {
    let replicas = spec_replicas(d);
    if !is_rolling_update(d) {
        return format!("Recreate has no surge: the new replica set gets replicas {replicas}");
    }
    let surge = max_surge(d);
    let current = get_replica_count_for_replica_sets(all_rss);
    let max_total = replicas + surge;
    let new = rs_replicas(new_rs);
    if current >= max_total {
        return format!(
            "currentPodCount {current} ≥ maxTotalPods {max_total} (replicas {replicas} + maxSurge {surge}): \
             no room to surge, the new replica set stays at {new}"
        );
    }
    let room = max_total - current;
    let missing = replicas - new;
    format!(
        "newReplicasCount = {new} + min(maxTotalPods {max_total} − currentPodCount {current}, replicas {replicas} − new {new}) \
         = {new} + min({room}, {missing}) = {}",
        new + room.min(missing)
    )
}

/// Upstream `getNewReplicaSet` creating the new ReplicaSet of `d` with `replicas`.
pub fn new_replica_set_created(d: &Deployment, old_rss: &[ReplicaSet], new_rs: &ReplicaSet) -> Decision {
    let name = name_of(&new_rs.metadata);
    let mut empty = new_rs.clone();
    super::util::set_rs_replicas(&mut empty, 0);
    let arithmetic = new_rs_new_replicas_arithmetic(d, old_rss.iter().chain(std::iter::once(&empty)), &empty);
    decision(
        "getNewReplicaSet",
        format!(
            "the pod template has no replica set yet: creating {name} with replicas {} ({arithmetic})",
            rs_replicas(new_rs)
        ),
    )
}

/// Upstream `reconcileNewReplicaSet`: `before` is the new ReplicaSet as the step found it.
pub fn reconcile_new_replica_set(
    d: &Deployment,
    old_rss: &[ReplicaSet],
    before: &ReplicaSet,
    change: Option<&ScaleChange>,
) -> Decision {
    let replicas = spec_replicas(d);
    let name = name_of(&before.metadata);
    let current = rs_replicas(before);
    let message = if current == replicas {
        format!("new replica set {name} already has replicas {current} = spec.replicas {replicas}")
    } else if current > replicas {
        format!(
            "new replica set {name} has {current} > spec.replicas {replicas}: scaling it down to {replicas}"
        )
    } else {
        let arithmetic =
            new_rs_new_replicas_arithmetic(d, old_rss.iter().chain(std::iter::once(before)), before);
        match change {
            Some(c) => format!("{arithmetic}: scaling {name} up from {} to {}", c.from, c.to),
            None => arithmetic,
        }
    };
    decision("reconcileNewReplicaSet", message)
}

/// Upstream `reconcileOldReplicaSets`: `old_before` are the old ReplicaSets as the step found
/// them, `result` what it decided.
pub fn reconcile_old_replica_sets(
    d: &Deployment,
    old_before: &[ReplicaSet],
    new_rs: &ReplicaSet,
    result: &OldScaleDown,
) -> Decision {
    let active: Vec<&ReplicaSet> = old_before.iter().filter(|rs| is_active(rs)).collect();
    let old_pods = get_replica_count_for_replica_sets(active.iter().copied());
    if old_pods == 0 {
        return decision(
            "reconcileOldReplicaSets",
            "no old replica set has replicas left: nothing to scale down".to_string(),
        );
    }
    let all_pods = old_pods + rs_replicas(new_rs);
    let min_available = spec_replicas(d) - max_unavailable(d);
    let new_unavailable = rs_replicas(new_rs) - rs_available(new_rs);
    let max_scaled_down = all_pods - min_available - new_unavailable;
    let arithmetic = format!(
        "maxScaledDown = allPods {all_pods} − minAvailable {min_available} − newRSUnavailable {new_unavailable} = {max_scaled_down}"
    );
    let message = if max_scaled_down <= 0 {
        format!("{arithmetic}: no old pod may go until more new pods are available")
    } else if result.changes.is_empty() {
        format!(
            "{arithmetic}, but no old pod is unhealthy and none is available above minAvailable {min_available}"
        )
    } else {
        let unhealthy: i32 = active.iter().map(|rs| rs_replicas(rs) - rs_available(rs)).sum();
        format!(
            "{arithmetic}: {unhealthy} unhealthy old replicas go first (cleanupUnhealthyReplicas), then available ones above minAvailable; scaling down {}",
            changes_text(&result.changes)
        )
    };
    decision("reconcileOldReplicaSets", message)
}

/// Upstream `rolloutRecreate`, first step: every old ReplicaSet to 0.
pub fn recreate_scale_down(changes: &[ScaleChange]) -> Decision {
    decision(
        "rolloutRecreate",
        format!(
            "Recreate: scaling every old replica set to 0 before the new one starts: {}",
            changes_text(changes)
        ),
    )
}

/// Upstream `rolloutRecreate` waiting in `oldPodsRunning`: `old_pods` still exist.
pub fn recreate_waiting(old_pods: usize) -> Decision {
    decision(
        "rolloutRecreate",
        format!(
            "Recreate: waiting for the old pods to go: {old_pods} still running (oldPodsRunning); the new replica set starts only when none is left"
        ),
    )
}

/// Upstream `rolloutRecreate`, last step: the new ReplicaSet gets `spec.replicas`.
pub fn recreate_scale_up(d: &Deployment, new_rs: &ReplicaSet, change: Option<&ScaleChange>) -> Decision {
    let name = name_of(&new_rs.metadata);
    let replicas = spec_replicas(d);
    let message = match change {
        Some(c) => format!(
            "Recreate: no old pod is left: scaling new replica set {name} from {} to {replicas} (scaleUpNewReplicaSetForRecreate)",
            c.from
        ),
        None => {
            format!("Recreate: no old pod is left; new replica set {name} already has replicas {replicas}")
        }
    };
    decision("rolloutRecreate", message)
}

/// Upstream `scale`: `changes` as [`super::scale::scale`] returned them (only those that resize).
pub fn scale(d: &Deployment, changes: &[ScaleChange]) -> Decision {
    let replicas = spec_replicas(d);
    let resized: Vec<ScaleChange> = changes.iter().filter(|c| c.from != c.to).cloned().collect();
    let message = match resized.len() {
        0 => format!("spec.replicas {replicas}: the replica sets keep their sizes (annotations refreshed)"),
        1 => format!(
            "scaling event: spec.replicas is {replicas}; {}",
            changes_text(&resized)
        ),
        _ => format!(
            "scaling event: spec.replicas is {replicas}; spread over the active replica sets in proportion to their sizes, \
             within replicas + maxSurge {} (the largest absorbs the rounding): {}",
            replicas + max_surge(d),
            changes_text(&resized)
        ),
    };
    decision("scale", message)
}

/// Upstream `cleanupDeployment`: the old ReplicaSets deleted beyond `revisionHistoryLimit`.
pub fn cleanup(d: &Deployment, old_count: usize, names: &[String]) -> Decision {
    let limit = super::util::revision_history_limit(d).unwrap_or_default();
    decision(
        "cleanupDeployment",
        format!(
            "{old_count} old replica sets > revisionHistoryLimit {limit}: deleting {}",
            names.join(", ")
        ),
    )
}

/// Upstream `syncRolloutStatus`: the status it writes, in numbers.
pub fn rollout_status(d: &Deployment, status: &DeploymentStatus) -> Decision {
    let replicas = spec_replicas(d);
    let progressing = get_deployment_condition(status, DEPLOYMENT_PROGRESSING)
        .and_then(|c| c.reason.clone())
        .map(|r| format!("; Progressing: {r}"))
        .unwrap_or_default();
    decision(
        "syncRolloutStatus",
        format!(
            "{} of {replicas} updated, {} ready, {} available, {} unavailable{progressing}",
            status.updated_replicas.unwrap_or(0),
            status.ready_replicas.unwrap_or(0),
            status.available_replicas.unwrap_or(0),
            status.unavailable_replicas.unwrap_or(0),
        ),
    )
}
