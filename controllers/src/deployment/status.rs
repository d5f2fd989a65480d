//! Deployment status: counters, the `Available` condition, and the `Progressing` condition that
//! implements `progressDeadlineSeconds`.
//!
//! Upstream: `pkg/controller/deployment/sync.go` (`calculateStatus`, `syncDeploymentStatus`,
//! `checkPausedConditions`) and `pkg/controller/deployment/progress.go` (`syncRolloutStatus`,
//! `getReplicaFailures`, `requeueStuckDeployment`).
//!
//! Simplified / different from upstream:
//! * Functions return the new status (and a requeue delay) instead of writing it. Whether to write is
//!   decided by the caller against the status stored *before* the sync ([`status_changed`]), because
//!   intermediate status writes upstream makes during a sync are folded into one write here.
//! * Counter fields that are 0 are left `None` (Go's `omitempty` drops them on the wire), so a stored
//!   status read back from the API compares equal to a freshly computed one.
//! * `terminatingReplicas` is not filled in (upstream only does so behind the alpha
//!   `DeploymentReplicaSetTerminatingReplicas` gate in 1.33).
//! * When less than a second of the progress deadline remains, upstream re-enqueues rate-limited; this
//!   asks for a requeue after one second instead.

use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::apps::v1::{Deployment, DeploymentCondition, DeploymentStatus, ReplicaSet};

use super::util::{
    DEPLOYMENT_AVAILABLE, DEPLOYMENT_PROGRESSING, DEPLOYMENT_REPLICA_FAILURE, MINIMUM_REPLICAS_AVAILABLE,
    MINIMUM_REPLICAS_UNAVAILABLE, NEW_RS_AVAILABLE_REASON, PAUSED_DEPLOY_REASON, REPLICA_SET_UPDATED_REASON,
    RESUMED_DEPLOY_REASON, TIMED_OUT_REASON, deployment_complete, deployment_progressing, deployment_status,
    deployment_timed_out, get_actual_replica_count_for_replica_sets,
    get_available_replica_count_for_replica_sets, get_deployment_condition,
    get_ready_replica_count_for_replica_sets, get_replica_count_for_replica_sets, has_progress_deadline,
    max_unavailable, new_deployment_condition, progress_deadline_seconds, remove_deployment_condition,
    replica_set_to_deployment_condition, set_deployment_condition, spec_replicas,
};
use crate::runtime::name_of;

fn non_zero(v: i32) -> Option<i32> {
    (v != 0).then_some(v)
}

/// Upstream `calculateStatus`: counters summed over `all_rss` (which includes `new_rs`), the stored
/// conditions carried over, and the `Available` condition refreshed.
pub fn calculate_status(
    all_rss: &[&ReplicaSet],
    new_rs: Option<&ReplicaSet>,
    d: &Deployment,
    now: Timestamp,
) -> DeploymentStatus {
    let current = deployment_status(d);
    let all = || all_rss.iter().copied();
    let available = get_available_replica_count_for_replica_sets(all());
    let unavailable = (get_replica_count_for_replica_sets(all()) - available).max(0);
    let mut status = DeploymentStatus {
        observed_generation: d.metadata.generation.filter(|g| *g != 0),
        replicas: non_zero(get_actual_replica_count_for_replica_sets(all())),
        updated_replicas: non_zero(get_actual_replica_count_for_replica_sets(new_rs)),
        ready_replicas: non_zero(get_ready_replica_count_for_replica_sets(all())),
        available_replicas: non_zero(available),
        unavailable_replicas: non_zero(unavailable),
        collision_count: current.collision_count,
        conditions: current.conditions.clone(),
        terminating_replicas: None,
    };
    set_deployment_condition(&mut status, availability_condition(d, available, now));
    status
}

fn availability_condition(d: &Deployment, available: i32, now: Timestamp) -> DeploymentCondition {
    if available >= spec_replicas(d) - max_unavailable(d) {
        let msg = "Deployment has minimum availability.".to_string();
        new_deployment_condition(DEPLOYMENT_AVAILABLE, "True", MINIMUM_REPLICAS_AVAILABLE, msg, now)
    } else {
        let msg = "Deployment does not have minimum availability.".to_string();
        new_deployment_condition(
            DEPLOYMENT_AVAILABLE,
            "False",
            MINIMUM_REPLICAS_UNAVAILABLE,
            msg,
            now,
        )
    }
}

/// Upstream `checkPausedConditions`: with a progress deadline (and not already timed out), mark a
/// paused Deployment `Progressing=Unknown/DeploymentPaused` and a resumed one
/// `Progressing=Unknown/DeploymentResumed`, which restarts the deadline clock. Mutates `status` (the
/// working copy of the Deployment's status); true if it changed.
pub fn check_paused_conditions(d: &Deployment, status: &mut DeploymentStatus, now: Timestamp) -> bool {
    if !has_progress_deadline(d) {
        return false;
    }
    let reason = get_deployment_condition(status, DEPLOYMENT_PROGRESSING).and_then(|c| c.reason.clone());
    if reason.as_deref() == Some(TIMED_OUT_REASON) {
        return false;
    }
    let paused_cond_exists = reason.as_deref() == Some(PAUSED_DEPLOY_REASON);
    let paused = d.spec.as_ref().and_then(|s| s.paused).unwrap_or(false);
    let (reason, msg) = match (paused, paused_cond_exists) {
        (true, false) => (PAUSED_DEPLOY_REASON, "Deployment is paused"),
        (false, true) => (RESUMED_DEPLOY_REASON, "Deployment is resumed"),
        _ => return false,
    };
    let cond = new_deployment_condition(DEPLOYMENT_PROGRESSING, "Unknown", reason, msg.to_string(), now);
    set_deployment_condition(status, cond);
    true
}

/// Upstream `syncDeploymentStatus` (scaling events, paused and deleted Deployments): just
/// [`calculate_status`]; no progress estimation.
pub fn sync_deployment_status(
    all_rss: &[&ReplicaSet],
    new_rs: Option<&ReplicaSet>,
    d: &Deployment,
    now: Timestamp,
) -> DeploymentStatus {
    calculate_status(all_rss, new_rs, d, now)
}

/// Result of [`sync_rollout_status`].
#[derive(Debug, Clone, PartialEq)]
pub struct RolloutStatus {
    /// The status to store.
    pub status: DeploymentStatus,
    /// When the status is unchanged but the rollout may still time out: check again after this long.
    pub requeue_after: Option<Duration>,
}

/// Upstream `syncRolloutStatus`: [`calculate_status`] plus the `Progressing` condition (complete →
/// `NewReplicaSetAvailable`; progress → `ReplicaSetUpdated` with a fresh `lastUpdateTime`; deadline
/// passed → `ProgressDeadlineExceeded`) and the `ReplicaFailure` condition. `d` carries the working
/// status (stored status plus what this sync already changed). When the result equals `d`'s status a
/// requeue for the next deadline check may be returned.
pub fn sync_rollout_status(
    all_rss: &[&ReplicaSet],
    new_rs: Option<&ReplicaSet>,
    d: &Deployment,
    now: Timestamp,
) -> RolloutStatus {
    let mut status = calculate_status(all_rss, new_rs, d, now);
    if !has_progress_deadline(d) {
        remove_deployment_condition(&mut status, DEPLOYMENT_PROGRESSING);
    }
    let current = deployment_status(d);
    let current_cond = get_deployment_condition(&current, DEPLOYMENT_PROGRESSING);
    let is_complete = status.replicas == status.updated_replicas
        && current_cond.is_some_and(|c| c.reason.as_deref() == Some(NEW_RS_AVAILABLE_REASON));
    if has_progress_deadline(d) && !is_complete {
        update_progressing(d, new_rs, current_cond, &mut status, now);
    }
    match get_replica_failures(all_rss, new_rs) {
        Some(cond) => set_deployment_condition(&mut status, cond),
        None => remove_deployment_condition(&mut status, DEPLOYMENT_REPLICA_FAILURE),
    }
    let requeue_after = if status_changed(&current, &status) {
        None
    } else {
        requeue_stuck_deployment(d, &status, now)
    };
    RolloutStatus {
        status,
        requeue_after,
    }
}

fn subject(d: &Deployment, new_rs: Option<&ReplicaSet>) -> String {
    match new_rs {
        Some(rs) => format!("ReplicaSet {:?}", name_of(&rs.metadata)),
        None => format!("Deployment {:?}", name_of(&d.metadata)),
    }
}

fn update_progressing(
    d: &Deployment,
    new_rs: Option<&ReplicaSet>,
    current_cond: Option<&DeploymentCondition>,
    status: &mut DeploymentStatus,
    now: Timestamp,
) {
    let who = subject(d, new_rs);
    if deployment_complete(d, status) {
        let msg = format!("{who} has successfully progressed.");
        let cond =
            new_deployment_condition(DEPLOYMENT_PROGRESSING, "True", NEW_RS_AVAILABLE_REASON, msg, now);
        set_deployment_condition(status, cond);
    } else if deployment_progressing(d, status) {
        let msg = format!("{who} is progressing.");
        let mut cond = new_deployment_condition(
            DEPLOYMENT_PROGRESSING,
            "True",
            REPLICA_SET_UPDATED_REASON,
            msg,
            now,
        );
        // Replaced unconditionally so lastUpdateTime moves even when the reason stays the same.
        if let Some(current) = current_cond {
            if current.status == "True" {
                cond.last_transition_time = current.last_transition_time.clone();
            }
            remove_deployment_condition(status, DEPLOYMENT_PROGRESSING);
        }
        set_deployment_condition(status, cond);
    } else if deployment_timed_out(d, status, now) {
        let msg = format!("{who} has timed out progressing.");
        let cond = new_deployment_condition(DEPLOYMENT_PROGRESSING, "False", TIMED_OUT_REASON, msg, now);
        set_deployment_condition(status, cond);
    }
}

/// Upstream `getReplicaFailures`: the new ReplicaSet's `ReplicaFailure` condition, else the first one
/// found on any ReplicaSet.
pub fn get_replica_failures(
    all_rss: &[&ReplicaSet],
    new_rs: Option<&ReplicaSet>,
) -> Option<DeploymentCondition> {
    new_rs
        .into_iter()
        .chain(all_rss.iter().copied())
        .find_map(replica_failure)
}

fn replica_failure(rs: &ReplicaSet) -> Option<DeploymentCondition> {
    let conds = rs.status.as_ref()?.conditions.as_ref()?;
    conds
        .iter()
        .find(|c| c.type_ == DEPLOYMENT_REPLICA_FAILURE)
        .map(replica_set_to_deployment_condition)
}

/// Upstream `requeueStuckDeployment`: for an incomplete, not yet timed-out rollout with a deadline, the
/// time until `lastUpdateTime + progressDeadlineSeconds` (+1 s against clock skew); 1 s when less than a
/// second remains. `None` when no check is needed.
pub fn requeue_stuck_deployment(
    d: &Deployment,
    new_status: &DeploymentStatus,
    now: Timestamp,
) -> Option<Duration> {
    let deadline = progress_deadline_seconds(d)?;
    let stored = deployment_status(d);
    let cond = get_deployment_condition(&stored, DEPLOYMENT_PROGRESSING)?;
    if deployment_complete(d, new_status) || cond.reason.as_deref() == Some(TIMED_OUT_REASON) {
        return None;
    }
    let from = cond
        .last_update_time
        .as_ref()
        .map_or(Timestamp::UNIX_EPOCH, |t| t.0);
    let end = from
        .saturating_add(SignedDuration::from_secs(i64::from(deadline)))
        .ok()?;
    let after = end.duration_since(now);
    if after < SignedDuration::from_secs(1) {
        return Some(Duration::from_secs(1));
    }
    Duration::try_from(after + SignedDuration::from_secs(1)).ok()
}

/// Whether `new` differs from `stored` once both are normalised (zero counters = absent, empty
/// condition list = absent).
pub fn status_changed(stored: &DeploymentStatus, new: &DeploymentStatus) -> bool {
    normalize_status(stored) != normalize_status(new)
}

/// Zero counters and an empty condition list become `None`, mirroring Go's `omitempty`.
pub fn normalize_status(s: &DeploymentStatus) -> DeploymentStatus {
    let nz = |v: Option<i32>| v.filter(|v| *v != 0);
    DeploymentStatus {
        observed_generation: s.observed_generation.filter(|g| *g != 0),
        replicas: nz(s.replicas),
        updated_replicas: nz(s.updated_replicas),
        ready_replicas: nz(s.ready_replicas),
        available_replicas: nz(s.available_replicas),
        unavailable_replicas: nz(s.unavailable_replicas),
        collision_count: s.collision_count,
        conditions: s.conditions.clone().filter(|c| !c.is_empty()),
        terminating_replicas: s.terminating_replicas,
    }
}
