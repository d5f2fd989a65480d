//! Counting finished pods exactly once, with the `batch.kubernetes.io/job-tracking` finalizer.
//!
//! Upstream: `pkg/controller/job/tracking_utils.go` (`uidTrackingExpectations`,
//! `hasJobTrackingFinalizer`) and the pure half of `trackJobStatusAndRemoveFinalizers`,
//! `cleanUncountedPodsWithoutFinalizers`, `canRemoveFinalizer`, `enactJobFinished` of
//! `job_controller.go`.
//!
//! Every pod of a Job is created with the finalizer, so it cannot vanish before it is counted. A
//! finished pod moves through three states, each written before the next begins:
//!
//! ```text
//! 1. finished, finalizer on, uid not in status   → its uid is written to status.uncountedTerminatedPods
//! 2. uid in uncountedTerminatedPods               → the finalizer is removed from the pod
//! 3. finalizer gone, uid still uncounted          → the uid leaves the list, succeeded/failed += 1
//! ```
//!
//! A crash between any two steps repeats at most the step it interrupted: a pod already listed is
//! not listed again, a pod without the finalizer is never counted again, and the counters only move
//! together with the removal of the uid from the list. Indexed Jobs count succeeded pods by index
//! (`completedIndexes`) instead of by uid. Finalizer removals the controller issued but its cache
//! has not shown yet are the [`FinalizerExpectations`]: such pods are skipped, not counted again.
//!
//! Everything but [`FinalizerExpectations`] is pure.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard};

use jiff::Timestamp;
use k8s_openapi::api::batch::v1::{JobStatus, UncountedTerminatedPods};
use k8s_openapi::api::core::v1::Pod;
use serde_json::json;

use super::indexed::{completion_index, index_bound};
use super::plan::{SyncJobCtx, failed_condition_for_failure_target, status_mut};
use super::pod_failure_policy::match_pod_failure_policy;
use super::success_policy::{is_success_criteria_met, success_criteria_met_condition};
use super::util::{
    COMPLETE, FAILURE_TARGET, completions, ensure_job_condition_status, has_backoff_limit_per_index,
    is_indexed_job, is_pod_failed, new_condition, spec,
};
use crate::controller_utils::pods::pod_phase;

/// The finalizer that keeps a Job's pod until it is counted (`JobTrackingFinalizer`).
pub const JOB_TRACKING_FINALIZER: &str = "batch.kubernetes.io/job-tracking";
/// At most this many uids in `uncountedTerminatedPods` (upstream `MaxUncountedPods`).
pub const MAX_UNCOUNTED_PODS: usize = 500;

/// Upstream `hasJobTrackingFinalizer`.
pub fn has_job_tracking_finalizer(pod: &Pod) -> bool {
    pod.metadata
        .finalizers
        .iter()
        .flatten()
        .any(|f| f == JOB_TRACKING_FINALIZER)
}

/// Upstream `removeTrackingFinalizerPatch`: a strategic-merge patch that takes the finalizer out;
/// `None` if the pod does not have it.
pub fn remove_tracking_finalizer_patch(pod: &Pod) -> Option<serde_json::Value> {
    has_job_tracking_finalizer(pod)
        .then(|| json!({"metadata": {"$deleteFromPrimitiveList/finalizers": [JOB_TRACKING_FINALIZER]}}))
}

fn uid(pod: &Pod) -> &str {
    pod.metadata.uid.as_deref().unwrap_or("")
}

/// `status.uncountedTerminatedPods` as sets (upstream `uncountedTerminatedPods`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UncountedSets {
    /// Uids of succeeded pods not yet in `status.succeeded`.
    pub succeeded: HashSet<String>,
    /// Uids of failed pods not yet in `status.failed`.
    pub failed: HashSet<String>,
}

impl UncountedSets {
    /// The sets of `uncounted`.
    pub fn of(uncounted: &UncountedTerminatedPods) -> Self {
        UncountedSets {
            succeeded: uncounted.succeeded.iter().flatten().cloned().collect(),
            failed: uncounted.failed.iter().flatten().cloned().collect(),
        }
    }
}

/// Upstream `cleanUncountedPodsWithoutFinalizers`: uids whose pod no longer has the finalizer leave
/// the uncounted lists and are added to the counters. Returns whether anything changed.
pub fn clean_uncounted_pods_without_finalizers(
    status: &mut JobStatus,
    with_finalizer: &HashSet<String>,
) -> bool {
    let uncounted = status
        .uncounted_terminated_pods
        .get_or_insert_with(Default::default);
    let mut moved_succeeded = 0;
    let mut moved_failed = 0;
    for (list, moved) in [
        (&mut uncounted.succeeded, &mut moved_succeeded),
        (&mut uncounted.failed, &mut moved_failed),
    ] {
        let Some(uids) = list.as_mut() else { continue };
        let before = uids.len();
        uids.retain(|u| with_finalizer.contains(u));
        *moved = before - uids.len();
        if uids.is_empty() {
            *list = None;
        }
    }
    if moved_succeeded > 0 {
        let n = i32::try_from(moved_succeeded).unwrap_or(i32::MAX);
        status.succeeded = Some(status.succeeded.unwrap_or(0).saturating_add(n));
    }
    if moved_failed > 0 {
        let n = i32::try_from(moved_failed).unwrap_or(i32::MAX);
        status.failed = Some(status.failed.unwrap_or(0).saturating_add(n));
    }
    moved_succeeded + moved_failed > 0
}

/// Upstream `canRemoveFinalizer`: the Job is being deleted or finishing, the pod succeeded, or it
/// failed and is not the failed pod an index keeps until its replacement exists.
pub fn can_remove_finalizer(ctx: &SyncJobCtx, pod: &Pod, considered_failed: bool) -> bool {
    if ctx.job.metadata.deletion_timestamp.is_some()
        || ctx.finished_condition.is_some()
        || pod_phase(pod) == "Succeeded"
    {
        return true;
    }
    if !considered_failed {
        return false;
    }
    if has_backoff_limit_per_index(&ctx.job)
        && let Some(ix) = completion_index(pod)
        && ctx
            .pods_with_delayed_deletion_per_index
            .get(&ix)
            .is_some_and(|p| uid(p) == uid(pod))
    {
        return false;
    }
    true
}

/// What the tracking step must write, after [`plan_tracking`] updated the status in `ctx.job`.
#[derive(Clone, Debug, Default)]
pub struct TrackingPlan {
    /// Pods whose finalizer comes off once the status is written.
    pub pods_to_remove_finalizer: Vec<Arc<Pod>>,
    /// Uids of pods that still have the finalizer (removals under way excepted).
    pub uids_with_finalizer: HashSet<String>,
    /// The uncounted lists are full: counting continues next sync, the Job does not finish now.
    pub reached_max_uncounted_pods: bool,
    /// The status changed and must be written before the finalizers come off.
    pub needs_flush: bool,
}

/// The pure first half of upstream `trackJobStatusAndRemoveFinalizers`: lists the newly finished
/// pods in `uncountedTerminatedPods` (Indexed: in `completedIndexes`), picks the pods whose
/// finalizer can go, and adds the interim `FailureTarget` / `SuccessCriteriaMet` condition (turning
/// `ctx.finished_condition` into the final `Failed` / `Complete`).
pub fn plan_tracking(ctx: &mut SyncJobCtx, needs_flush: bool, now: Timestamp) -> TrackingPlan {
    let mut plan = TrackingPlan {
        needs_flush,
        ..TrackingPlan::default()
    };
    let indexed = is_indexed_job(&ctx.job);
    let bound = index_bound(&ctx.job);
    if indexed {
        ctx.pods.sort_by_key(|p| completion_index(p).unwrap_or(-1));
    }
    plan.uids_with_finalizer = ctx
        .pods
        .iter()
        .filter(|p| has_job_tracking_finalizer(p) && !ctx.expected_rm_finalizers.contains(uid(p)))
        .map(|p| uid(p).to_string())
        .collect();
    if clean_uncounted_pods_without_finalizers(status_mut(&mut ctx.job), &plan.uids_with_finalizer) {
        plan.needs_flush = true;
    }
    let finishing_as_failure =
        ctx.finished_condition.is_some() && !is_success_criteria_met(ctx.finished_condition.as_ref());
    let mut new_succeeded_indexes: Vec<i64> = Vec::new();
    let mut new_succeeded: Vec<String> = Vec::new();
    let mut new_failed: Vec<String> = Vec::new();
    let (mut listed_succeeded, mut listed_failed) = {
        let uncounted = status_mut(&mut ctx.job)
            .uncounted_terminated_pods
            .clone()
            .unwrap_or_default();
        (
            uncounted.succeeded.unwrap_or_default(),
            uncounted.failed.unwrap_or_default(),
        )
    };
    for pod in ctx.pods.clone() {
        let pod_uid = uid(&pod).to_string();
        if !has_job_tracking_finalizer(&pod) || ctx.expected_rm_finalizers.contains(&pod_uid) {
            continue;
        }
        let considered_failed = is_pod_failed(&pod, &ctx.job);
        if !can_remove_finalizer(ctx, &pod, considered_failed) {
            continue;
        }
        plan.pods_to_remove_finalizer.push(pod.clone());
        if pod_phase(&pod) == "Succeeded" && !ctx.uncounted.failed.contains(&pod_uid) {
            if indexed {
                if let Some(ix) = completion_index(&pod).filter(|ix| *ix < bound)
                    && !ctx.prev_succeeded_indexes.has(ix)
                {
                    new_succeeded_indexes.push(ix);
                    plan.needs_flush = true;
                }
            } else if !ctx.uncounted.succeeded.contains(&pod_uid) {
                plan.needs_flush = true;
                new_succeeded.push(pod_uid.clone());
            }
        } else if considered_failed || finishing_as_failure {
            let ix = completion_index(&pod);
            let in_range = !indexed || ix.is_some_and(|ix| ix < bound);
            if !ctx.uncounted.failed.contains(&pod_uid) && in_range {
                let counted = spec(&ctx.job)
                    .pod_failure_policy
                    .as_ref()
                    .is_none_or(|policy| match_pod_failure_policy(policy, &pod).count_failed);
                if counted {
                    plan.needs_flush = true;
                    new_failed.push(pod_uid.clone());
                }
            }
        }
        let in_flight = new_succeeded_indexes.len()
            + listed_succeeded.len()
            + new_succeeded.len()
            + listed_failed.len()
            + new_failed.len();
        if in_flight >= MAX_UNCOUNTED_PODS {
            plan.reached_max_uncounted_pods = true;
            break;
        }
    }
    listed_succeeded.extend(new_succeeded);
    listed_failed.extend(new_failed);
    let status = status_mut(&mut ctx.job);
    status.uncounted_terminated_pods = Some(UncountedTerminatedPods {
        succeeded: (!listed_succeeded.is_empty()).then_some(listed_succeeded),
        failed: (!listed_failed.is_empty()).then_some(listed_failed),
    });
    if indexed {
        ctx.succeeded_indexes = ctx.succeeded_indexes.with_ordered_indexes(&new_succeeded_indexes);
        let completed = ctx.succeeded_indexes.to_string();
        if status.completed_indexes.as_deref().unwrap_or("") != completed {
            plan.needs_flush = true;
        }
        status.succeeded = Some(i32::try_from(ctx.succeeded_indexes.total()).unwrap_or(i32::MAX));
        status.completed_indexes = (!completed.is_empty()).then_some(completed);
        let failed = ctx.failed_indexes.as_ref().map(ToString::to_string);
        if status.failed_indexes != failed {
            status.failed_indexes = failed;
            plan.needs_flush = true;
        }
    }
    add_interim_condition(ctx, &mut plan, now);
    plan
}

/// The interim conditions, written with the counted pods and before the finalizers come off.
fn add_interim_condition(ctx: &mut SyncJobCtx, plan: &mut TrackingPlan, now: Timestamp) {
    let Some(finished) = ctx.finished_condition.clone() else {
        return;
    };
    if finished.type_ == FAILURE_TARGET {
        status_mut(&mut ctx.job)
            .conditions
            .get_or_insert_with(Vec::new)
            .push(finished.clone());
        plan.needs_flush = true;
        ctx.finished_condition = Some(failed_condition_for_failure_target(&finished, now));
    }
    if is_success_criteria_met(Some(&finished)) {
        if success_criteria_met_condition(&ctx.job).is_none() {
            status_mut(&mut ctx.job)
                .conditions
                .get_or_insert_with(Vec::new)
                .push(finished.clone());
            plan.needs_flush = true;
        }
        ctx.finished_condition = Some(new_condition(
            COMPLETE,
            "True",
            finished.reason.as_deref().unwrap_or(""),
            finished.message.as_deref().unwrap_or(""),
            now,
        ));
    }
}

/// Upstream `enactJobFinished`: writes the final `Complete` / `Failed` condition (and
/// `completionTime`) once every finished pod is counted and no pod is terminating. Returns whether
/// the Job finished in this sync.
pub fn enact_job_finished(ctx: &mut SyncJobCtx, now: Timestamp) -> bool {
    let Some(finished) = ctx.finished_condition.clone() else {
        return false;
    };
    let status = status_mut(&mut ctx.job);
    if let Some(uncounted) = &status.uncounted_terminated_pods {
        let n =
            uncounted.succeeded.as_ref().map_or(0, Vec::len) + uncounted.failed.as_ref().map_or(0, Vec::len);
        if n > 0 {
            return false;
        }
    }
    if ctx.terminating > 0 {
        return false;
    }
    let conditions = status.conditions.get_or_insert_with(Vec::new);
    ensure_job_condition_status(
        conditions,
        &finished.type_,
        &finished.status,
        finished.reason.as_deref().unwrap_or(""),
        finished.message.as_deref().unwrap_or(""),
        now,
    );
    if finished.type_ == COMPLETE {
        status.completion_time = finished.last_transition_time.clone();
    }
    true
}

/// Whether a finished Job has more succeeded pods than `completions` (upstream's
/// `TooManySucceededPods` warning).
pub fn too_many_succeeded(ctx: &SyncJobCtx) -> bool {
    let succeeded = ctx.job.status.as_ref().and_then(|s| s.succeeded).unwrap_or(0);
    completions(&ctx.job).is_some_and(|c| succeeded > c)
}

/// Finalizer removals issued but not yet seen in the pod cache, per Job key (upstream
/// `uidTrackingExpectations`). Cheap to clone: the sync adds, the pod event handlers remove.
#[derive(Clone, Default)]
pub struct FinalizerExpectations {
    /// Pod uids per Job key. A std mutex: held for one map operation, never across an `.await`.
    uids: Arc<Mutex<HashMap<String, HashSet<String>>>>,
}

impl FinalizerExpectations {
    fn lock(&self) -> MutexGuard<'_, HashMap<String, HashSet<String>>> {
        // Every operation leaves the map consistent, so a poisoned lock is usable.
        self.uids.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Upstream `getExpectedUIDs`: the uids whose finalizer removal is not yet observed.
    pub fn expected_uids(&self, key: &str) -> HashSet<String> {
        self.lock().get(key).cloned().unwrap_or_default()
    }

    /// Upstream `expectFinalizersRemoved`: adds `uids` to the expected removals of `key`.
    pub fn expect_finalizers_removed(&self, key: &str, uids: impl IntoIterator<Item = String>) {
        self.lock().entry(key.to_string()).or_default().extend(uids);
    }

    /// Upstream `finalizerRemovalObserved`: the cache shows the pod without the finalizer (or gone),
    /// or the removal failed.
    pub fn finalizer_removal_observed(&self, key: &str, uid: &str) {
        if let Some(set) = self.lock().get_mut(key) {
            set.remove(uid);
        }
    }

    /// Upstream `deleteExpectations`: the Job is gone.
    pub fn delete_expectations(&self, key: &str) {
        self.lock().remove(key);
    }
}
