//! One Job sync, as pure steps over a [`SyncJobCtx`]: count the pods, decide whether the Job has
//! finished, and what `manageJob` must create or delete.
//!
//! Upstream: `pkg/controller/job/job_controller.go` (`syncJob` up to the writes, `syncJobCtx`,
//! `getNewFinishedPods`, `nonIgnoredFailedPodsCount`, `getFailJobMessage`, `newFailureCondition`,
//! `newSuccessCondition`, `manageJob`, `activePodsForRemoval`, the completion and suspend checks).
//!
//! ```text
//! new_sync_ctx            active / ready / terminating pods; succeeded, failed = status + new + uncounted;
//!                         startTime; the new backoff record
//! evaluate_finish         first match: SuccessCriteriaMet already → Complete next;
//!                         FailureTarget already → Failed next; a FailJob rule → FailureTarget;
//!                         failed > backoffLimit (or OnFailure restarts) → BackoffLimitExceeded;
//!                         deadline passed → DeadlineExceeded (else requeue at the deadline);
//!                         Indexed: failed indexes, success policy
//! finished?  yes → the sync deletes every active pod
//!            no  → manage_job: suspended → delete all; too many → delete; too few → wait for
//!                  the backoff, or create (Indexed: the lowest pending indexes)
//!                  then check_completion: enough succeeded and none active → SuccessCriteriaMet;
//!                  else the Suspended condition follows spec.suspend
//! ```
//!
//! Then [`super::tracking`] counts the finished pods and writes the status. Nothing here performs IO
//! or reads a clock: `now` is a parameter.
//!
//! Kubernetes 1.33 writes the terminal conditions in two steps: an interim `FailureTarget` (or
//! `SuccessCriteriaMet`) first, and `Failed` (or `Complete`) only once no pod is terminating and every
//! finished pod is counted. A successful Job gets reason `CompletionsReached` on both.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::batch::v1::{Job, JobCondition, JobStatus};
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::backoff::{
    BackoffRecord, DEFAULT_JOB_POD_FAILURE_BACKOFF, MAX_JOB_POD_FAILURE_BACKOFF, finished_time,
    new_backoff_record, remaining_time_per_index,
};
use super::indexed::{
    OrderedIntervals, add_completion_index_env_variables, calculate_failed_indexes,
    calculate_succeeded_indexes, duplicated_index_pods_for_removal, first_pending_indexes, index_bound,
    new_index_failure_counts, pod_generate_name_with_index, pods_with_delayed_deletion_per_index,
    set_completion_index, set_index_failure_counts, sort_arc_active_pods, valid_index,
};
use super::pod_failure_policy::match_pod_failure_policy;
use super::success_policy::{match_success_policy, success_criteria_met_condition};
use super::tracking::{JOB_TRACKING_FINALIZER, UncountedSets, has_job_tracking_finalizer};
use super::util::{
    self, FAILED, FAILURE_TARGET, MESSAGE_BACKOFF_LIMIT_EXCEEDED, MESSAGE_COMPLETIONS_REACHED,
    MESSAGE_DEADLINE_EXCEEDED, MESSAGE_FAILED_INDEXES, MESSAGE_MAX_FAILED_INDEXES_EXCEEDED,
    REASON_BACKOFF_LIMIT_EXCEEDED, REASON_COMPLETIONS_REACHED, REASON_DEADLINE_EXCEEDED,
    REASON_FAILED_INDEXES, REASON_MAX_FAILED_INDEXES_EXCEEDED, REASON_POD_FAILURE_POLICY,
    REASON_SUCCESS_POLICY, SUCCESS_CRITERIA_MET, SUSPENDED, completions, find_condition,
    has_backoff_limit_per_index, is_indexed_job, is_pod_failed, job_suspended, only_replace_failed_pods,
    parallelism, spec,
};
use crate::controller_utils::pods::{is_pod_active, is_pod_ready, is_pod_terminating, pod_phase};
use crate::controller_utils::template::{PodTemplateError, pod_from_template};
use crate::runtime::new_controller_ref;

/// At most this many pods are created or deleted in one sync (upstream `MaxPodCreateDeletePerSync`).
pub const MAX_POD_CREATE_DELETE_PER_SYNC: usize = 500;
/// The shortest requeue after a backoff (upstream `syncJobBatchPeriod`, the floor of
/// `enqueueSyncJobWithDelay`).
pub const SYNC_JOB_BATCH_PERIOD: Duration = Duration::from_secs(1);

/// Everything one sync knows about a Job (upstream `syncJobCtx`). `job` is the sync's own copy,
/// whose status the later steps change.
#[derive(Clone, Debug)]
pub struct SyncJobCtx {
    /// The Job, status being rewritten.
    pub job: Job,
    /// Every pod the Job controls (adopted ones with the tracking finalizer, as if already written).
    pub pods: Vec<Arc<Pod>>,
    /// The active pods (not terminal, not being deleted).
    pub active_pods: Vec<Arc<Pod>>,
    /// The condition the Job finishes with, once decided.
    pub finished_condition: Option<JobCondition>,
    /// Succeeded pods: counted, uncounted and new (Indexed: succeeded indexes).
    pub succeeded: i32,
    /// Failed pods that count: counted, uncounted and new.
    pub failed: i32,
    /// Indexed: the indexes in `status.completedIndexes`.
    pub prev_succeeded_indexes: OrderedIntervals,
    /// Indexed: those plus the newly succeeded indexes.
    pub succeeded_indexes: OrderedIntervals,
    /// Indexed with `backoffLimitPerIndex`: the failed indexes.
    pub failed_indexes: Option<OrderedIntervals>,
    /// The backoff record after this sync's newly finished pods.
    pub new_backoff_record: BackoffRecord,
    /// Pods whose finalizer removal is already on its way (finalizer expectations).
    pub expected_rm_finalizers: HashSet<String>,
    /// `status.uncountedTerminatedPods` as the sync found it.
    pub uncounted: UncountedSets,
    /// Indexed with `backoffLimitPerIndex`: per index, the failed pod kept until it is replaced.
    pub pods_with_delayed_deletion_per_index: BTreeMap<i64, Arc<Pod>>,
    /// Pods being deleted and not yet terminal (plus the ones this sync deletes).
    pub terminating: i32,
    /// Ready active pods.
    pub ready: i32,
    /// Active pods, as the status will report them.
    pub active: i32,
}

fn count(n: usize) -> i32 {
    i32::try_from(n).unwrap_or(i32::MAX)
}

/// The status of the sync's copy of the Job (created if missing).
pub fn status_mut(job: &mut Job) -> &mut JobStatus {
    job.status.get_or_insert_with(JobStatus::default)
}

/// Upstream `syncJob` up to the finish checks: counts, `startTime`, the backoff record.
pub fn new_sync_ctx(
    job: &Job,
    pods: Vec<Arc<Pod>>,
    expected_rm_finalizers: HashSet<String>,
    previous_backoff: Option<BackoffRecord>,
    now: Timestamp,
) -> SyncJobCtx {
    let mut job = job.clone();
    let status = status_mut(&mut job);
    let uncounted = UncountedSets::of(
        status
            .uncounted_terminated_pods
            .get_or_insert_with(Default::default),
    );
    let active_pods: Vec<Arc<Pod>> = pods.iter().filter(|p| is_pod_active(p)).cloned().collect();
    let ready = count(active_pods.iter().filter(|p| is_pod_ready(p)).count());
    let terminating = count(pods.iter().filter(|p| is_pod_terminating(p)).count());
    let mut ctx = SyncJobCtx {
        active: count(active_pods.len()),
        job,
        pods,
        active_pods,
        finished_condition: None,
        succeeded: 0,
        failed: 0,
        prev_succeeded_indexes: OrderedIntervals::default(),
        succeeded_indexes: OrderedIntervals::default(),
        failed_indexes: None,
        new_backoff_record: BackoffRecord::default(),
        expected_rm_finalizers,
        uncounted,
        pods_with_delayed_deletion_per_index: BTreeMap::new(),
        terminating,
        ready,
    };
    let (new_succeeded, new_failed) = new_finished_pods(&ctx);
    let non_ignored = count(non_ignored_failed_pods_count(&ctx.job, &new_failed));
    let status = ctx.job.status.clone().unwrap_or_default();
    ctx.succeeded = status
        .succeeded
        .unwrap_or(0)
        .saturating_add(count(new_succeeded.len()))
        .saturating_add(count(ctx.uncounted.succeeded.len()));
    ctx.failed = status
        .failed
        .unwrap_or(0)
        .saturating_add(non_ignored)
        .saturating_add(count(ctx.uncounted.failed.len()));
    if status.start_time.is_none() && !job_suspended(&ctx.job) {
        status_mut(&mut ctx.job).start_time = Some(Time(now));
    }
    let succeeded_times = new_succeeded.iter().map(|p| finished_time(p)).collect();
    let failed_times = new_failed.iter().map(|p| finished_time(p)).collect();
    ctx.new_backoff_record = new_backoff_record(previous_backoff, succeeded_times, failed_times);
    ctx
}

/// Upstream `getNewFinishedPods`: the succeeded and failed pods not yet counted (still carrying the
/// finalizer, not in the uncounted lists, no removal on its way; Indexed: with a valid index).
pub fn new_finished_pods(ctx: &SyncJobCtx) -> (Vec<Arc<Pod>>, Vec<Arc<Pod>>) {
    let succeeded = valid_pods_with_filter(ctx, Some(&ctx.uncounted.succeeded), |p| {
        pod_phase(p) == "Succeeded"
    });
    let failed = valid_pods_with_filter(ctx, Some(&ctx.uncounted.failed), |p| is_pod_failed(p, &ctx.job));
    (succeeded, failed)
}

/// Upstream `getValidPodsWithFilter`.
pub fn valid_pods_with_filter(
    ctx: &SyncJobCtx,
    uncounted: Option<&HashSet<String>>,
    filter: impl Fn(&Pod) -> bool,
) -> Vec<Arc<Pod>> {
    let indexed = is_indexed_job(&ctx.job);
    let bound = index_bound(&ctx.job);
    ctx.pods
        .iter()
        .filter(|p| {
            let uid = p.metadata.uid.as_deref().unwrap_or("");
            has_job_tracking_finalizer(p)
                && !uncounted.is_some_and(|u| u.contains(uid))
                && !ctx.expected_rm_finalizers.contains(uid)
                && (!indexed || valid_index(p, bound).is_some())
                && filter(p)
        })
        .cloned()
        .collect()
}

/// Upstream `nonIgnoredFailedPodsCount`: failures an `Ignore` rule does not take out.
pub fn non_ignored_failed_pods_count(job: &Job, failed: &[Arc<Pod>]) -> usize {
    match &spec(job).pod_failure_policy {
        Some(policy) => failed
            .iter()
            .filter(|p| match_pod_failure_policy(policy, p).count_failed)
            .count(),
        None => failed.len(),
    }
}

/// Upstream `getFailJobMessage`: the message of the first failed pod that matches a `FailJob` rule.
pub fn fail_job_message(job: &Job, pods: &[Arc<Pod>]) -> Option<String> {
    let policy = spec(job).pod_failure_policy.as_ref()?;
    pods.iter()
        .filter(|p| is_pod_failed(p, job))
        .find_map(|p| match_pod_failure_policy(policy, p).fail_job_message)
}

/// Upstream `newFailureCondition` with the 1.33 gates: the interim `FailureTarget`.
pub fn new_failure_condition(reason: &str, message: &str, now: Timestamp) -> JobCondition {
    util::new_condition(FAILURE_TARGET, "True", reason, message, now)
}

/// Upstream `newSuccessCondition` with the 1.33 gates: the interim `SuccessCriteriaMet`, reason
/// `CompletionsReached`.
pub fn new_success_condition(now: Timestamp) -> JobCondition {
    util::new_condition(
        SUCCESS_CRITERIA_MET,
        "True",
        REASON_COMPLETIONS_REACHED,
        MESSAGE_COMPLETIONS_REACHED,
        now,
    )
}

/// Upstream `newFailedConditionForFailureTarget`: `Failed` with the interim condition's reason and message.
pub fn failed_condition_for_failure_target(target: &JobCondition, now: Timestamp) -> JobCondition {
    util::new_condition(
        FAILED,
        "True",
        target.reason.as_deref().unwrap_or(""),
        target.message.as_deref().unwrap_or(""),
        now,
    )
}

/// The finish checks of `syncJob` (first match wins; see the module doc). Sets
/// `ctx.finished_condition`, and for Indexed Jobs the succeeded and failed indexes. Returns how long
/// until `activeDeadlineSeconds` pass, when the Job must be looked at again then.
pub fn evaluate_finish(ctx: &mut SyncJobCtx, now: Timestamp) -> Option<Duration> {
    let job = &ctx.job;
    let mut requeue = None;
    ctx.finished_condition = success_criteria_met_condition(job).cloned();
    if ctx.finished_condition.is_none() {
        let target = find_condition(util::conditions(job), FAILURE_TARGET).filter(|c| c.status == "True");
        if let Some(target) = target {
            ctx.finished_condition = Some(failed_condition_for_failure_target(target, now));
        } else if let Some(message) = fail_job_message(job, &ctx.pods) {
            ctx.finished_condition = Some(new_failure_condition(REASON_POD_FAILURE_POLICY, &message, now));
        }
    }
    if ctx.finished_condition.is_none() {
        let exceeds_backoff_limit = ctx.failed > util::backoff_limit(job);
        if exceeds_backoff_limit
            || util::past_backoff_limit_on_failure(job, ctx.pods.iter().map(AsRef::as_ref))
        {
            ctx.finished_condition = Some(new_failure_condition(
                REASON_BACKOFF_LIMIT_EXCEEDED,
                MESSAGE_BACKOFF_LIMIT_EXCEEDED,
                now,
            ));
        } else if util::past_active_deadline(job, now) {
            ctx.finished_condition = Some(new_failure_condition(
                REASON_DEADLINE_EXCEEDED,
                MESSAGE_DEADLINE_EXCEEDED,
                now,
            ));
        } else if let Some(left) = util::remaining_active_time(job, now) {
            requeue = Some(Duration::try_from(left).unwrap_or(Duration::ZERO));
        }
    }
    if is_indexed_job(&ctx.job) {
        evaluate_indexed_finish(ctx, now);
    }
    requeue
}

/// The Indexed part of the finish checks: succeeded and failed indexes, `maxFailedIndexes`, failed
/// indexes once every index finished, the success policy.
fn evaluate_indexed_finish(ctx: &mut SyncJobCtx, now: Timestamp) {
    let job = &ctx.job;
    let (prev, succeeded) = calculate_succeeded_indexes(job, &ctx.pods);
    ctx.succeeded = i32::try_from(succeeded.total()).unwrap_or(i32::MAX);
    let bound = index_bound(job);
    if has_backoff_limit_per_index(job) {
        let failed = calculate_failed_indexes(job, &ctx.pods);
        if ctx.finished_condition.is_none() {
            let max_failed = spec(job).max_failed_indexes;
            if max_failed.is_some_and(|m| failed.total() > i64::from(m)) {
                ctx.finished_condition = Some(new_failure_condition(
                    REASON_MAX_FAILED_INDEXES_EXCEEDED,
                    MESSAGE_MAX_FAILED_INDEXES_EXCEEDED,
                    now,
                ));
            } else if failed.total() > 0 && failed.total() + succeeded.total() >= bound {
                ctx.finished_condition = Some(new_failure_condition(
                    REASON_FAILED_INDEXES,
                    MESSAGE_FAILED_INDEXES,
                    now,
                ));
            }
        }
        let removal_expected = |p: &Pod| {
            let uid = p.metadata.uid.as_deref().unwrap_or("");
            ctx.expected_rm_finalizers.contains(uid)
        };
        ctx.pods_with_delayed_deletion_per_index = pods_with_delayed_deletion_per_index(
            job,
            &ctx.pods,
            &ctx.active_pods,
            &removal_expected,
            &succeeded,
            &failed,
        );
        ctx.failed_indexes = Some(failed);
    }
    if ctx.finished_condition.is_none()
        && let Some(message) = match_success_policy(spec(&ctx.job).success_policy.as_ref(), bound, &succeeded)
    {
        ctx.finished_condition = Some(util::new_condition(
            SUCCESS_CRITERIA_MET,
            "True",
            REASON_SUCCESS_POLICY,
            &message,
            now,
        ));
    }
    ctx.prev_succeeded_indexes = prev;
    ctx.succeeded_indexes = succeeded;
}

/// What `manageJob` does in one sync.
#[derive(Clone, Debug)]
pub enum ManagePlan {
    /// The right number of pods is active.
    Nothing,
    /// Delete these pods (finalizer first): the Job is suspended, or too many pods are active.
    Delete(Vec<Arc<Pod>>),
    /// Pods are missing but a failure backoff is running: look again after this long (at least
    /// [`SYNC_JOB_BATCH_PERIOD`]). Upstream then reports 0 active pods for this sync.
    Backoff(Duration),
    /// Create these pods (in slow-start batches).
    Create(Vec<Pod>),
}

/// Upstream `manageJob`'s decision: how many pods the Job wants active, and what to create or delete.
pub fn manage_job(ctx: &SyncJobCtx, now: Timestamp) -> Result<ManagePlan, PodTemplateError> {
    let job = &ctx.job;
    let active = ctx.active_pods.len();
    if job_suspended(job) {
        return Ok(ManagePlan::Delete(active_pods_for_removal(
            job,
            &ctx.active_pods,
            active,
        )));
    }
    let want_active = want_active(job, ctx.succeeded, count(active));
    let rm_at_least = usize::try_from(count(active) - want_active).unwrap_or(0);
    let mut to_delete = active_pods_for_removal(job, &ctx.active_pods, rm_at_least);
    to_delete.truncate(MAX_POD_CREATE_DELETE_PER_SYNC);
    if !to_delete.is_empty() {
        return Ok(ManagePlan::Delete(to_delete));
    }
    let terminating = if only_replace_failed_pods(job) {
        ctx.terminating
    } else {
        0
    };
    let diff = want_active - terminating - count(active);
    if diff <= 0 {
        return Ok(ManagePlan::Nothing);
    }
    if !has_backoff_limit_per_index(job) {
        let remaining = ctx.new_backoff_record.remaining_time(
            now,
            DEFAULT_JOB_POD_FAILURE_BACKOFF,
            MAX_JOB_POD_FAILURE_BACKOFF,
        );
        if !remaining.is_zero() {
            return Ok(ManagePlan::Backoff(remaining.max(SYNC_JOB_BATCH_PERIOD)));
        }
    }
    let diff = usize::try_from(diff)
        .unwrap_or(0)
        .min(MAX_POD_CREATE_DELETE_PER_SYNC);
    let indexes: Vec<Option<i64>> = if is_indexed_job(job) {
        let terminating_pods: Vec<Arc<Pod>>;
        let terminating = if only_replace_failed_pods(job) {
            terminating_pods = ctx
                .pods
                .iter()
                .filter(|p| is_pod_terminating(p))
                .cloned()
                .collect();
            Some(terminating_pods.as_slice())
        } else {
            None
        };
        let mut pending = first_pending_indexes(
            &ctx.active_pods,
            terminating,
            &ctx.succeeded_indexes,
            ctx.failed_indexes.as_ref(),
            diff,
            index_bound(job),
        );
        if has_backoff_limit_per_index(job) {
            let (now_indexes, remaining) = pod_creation_info_for_independent_indexes(ctx, &pending, now);
            if !remaining.is_zero() {
                return Ok(ManagePlan::Backoff(remaining.max(SYNC_JOB_BATCH_PERIOD)));
            }
            pending = now_indexes;
        }
        pending.into_iter().map(Some).collect()
    } else {
        vec![None; diff]
    };
    pods_to_create(ctx, &indexes).map(ManagePlan::Create)
}

/// `wantActive` of upstream `manageJob`: with `completions`, the remaining completions capped at
/// `parallelism`; without, `parallelism` until one pod succeeded, then whatever is running.
pub fn want_active(job: &Job, succeeded: i32, active: i32) -> i32 {
    let parallelism = parallelism(job);
    match completions(job) {
        None if succeeded > 0 => active,
        None => parallelism,
        Some(completions) => completions.saturating_sub(succeeded).clamp(0, parallelism.max(0)),
    }
}

/// Upstream `getPodCreationInfoForIndependentIndexes`: the indexes whose own backoff is over; if
/// none, the shortest wait among them.
pub fn pod_creation_info_for_independent_indexes(
    ctx: &SyncJobCtx,
    indexes: &[i64],
    now: Timestamp,
) -> (Vec<i64>, Duration) {
    let mut ready = Vec::new();
    let mut min_remaining: Option<Duration> = None;
    for ix in indexes {
        let last_failed = ctx
            .pods_with_delayed_deletion_per_index
            .get(ix)
            .map(AsRef::as_ref);
        let remaining = remaining_time_per_index(
            now,
            DEFAULT_JOB_POD_FAILURE_BACKOFF,
            MAX_JOB_POD_FAILURE_BACKOFF,
            last_failed,
        );
        if remaining.is_zero() {
            ready.push(*ix);
        } else {
            min_remaining = Some(min_remaining.map_or(remaining, |m| m.min(remaining)));
        }
    }
    if !ready.is_empty() {
        return (ready, Duration::ZERO);
    }
    (ready, min_remaining.unwrap_or(Duration::ZERO))
}

/// Upstream `activePodsForRemoval`: Indexed pods with a missing, out-of-range or duplicated index
/// first, then as many more as needed in `ActivePods` order (unscheduled, pending, not ready first).
pub fn active_pods_for_removal(job: &Job, pods: &[Arc<Pod>], rm_at_least: usize) -> Vec<Arc<Pod>> {
    let (mut rm, mut left) = if is_indexed_job(job) {
        duplicated_index_pods_for_removal(pods, index_bound(job))
    } else {
        (Vec::new(), pods.to_vec())
    };
    if rm.len() < rm_at_least {
        sort_arc_active_pods(&mut left);
        let more = rm_at_least - rm.len();
        rm.extend(left.into_iter().take(more));
    }
    rm
}

/// The pods `manageJob` creates: the template with the tracking finalizer; Indexed ones with their
/// index (annotation, label, env, hostname, generateName `<job>-<index>-`) and, with
/// `backoffLimitPerIndex`, the failure counts inherited from the pod they replace.
pub fn pods_to_create(ctx: &SyncJobCtx, indexes: &[Option<i64>]) -> Result<Vec<Pod>, PodTemplateError> {
    let job = &ctx.job;
    let name = job.metadata.name.as_deref().unwrap_or("");
    let mut template = spec(job).template.clone();
    if is_indexed_job(job) {
        add_completion_index_env_variables(&mut template);
    }
    let meta = template.metadata.get_or_insert_with(Default::default);
    let finalizers = meta.finalizers.get_or_insert_with(Vec::new);
    if !finalizers.iter().any(|f| f == JOB_TRACKING_FINALIZER) {
        finalizers.push(JOB_TRACKING_FINALIZER.to_string());
    }
    let mut pods = Vec::with_capacity(indexes.len());
    for index in indexes {
        let mut t = template.clone();
        let mut generate_name = None;
        if let Some(ix) = index {
            set_completion_index(&mut t, name, *ix);
            generate_name = Some(pod_generate_name_with_index(name, *ix));
            if has_backoff_limit_per_index(job) {
                let replaced = ctx
                    .pods_with_delayed_deletion_per_index
                    .get(ix)
                    .map(AsRef::as_ref);
                set_index_failure_counts(&mut t, new_index_failure_counts(job, replaced));
            }
        }
        let owner = new_controller_ref(&job.metadata, "batch/v1", "Job");
        let mut pod = pod_from_template(&t, &job.metadata, owner)?;
        if generate_name.is_some() {
            pod.metadata.generate_name = generate_name;
        }
        pods.push(pod);
    }
    Ok(pods)
}

/// What the completion check after `manageJob` found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CompletionCheck {
    /// The Suspended condition changed (the status must be written).
    pub suspend_changed: bool,
    /// Event to record, `(reason, message)`: `Suspended` / `Resumed`.
    pub event: Option<(&'static str, &'static str)>,
}

/// The end of upstream `syncJob`'s non-finished branch: a Job with enough successes and no active pod
/// gets `SuccessCriteriaMet`; otherwise, if `manageJob` ran, the Suspended condition follows
/// `spec.suspend` (a resume restarts `startTime`, so the deadline counts from it).
pub fn check_completion(ctx: &mut SyncJobCtx, manage_job_called: bool, now: Timestamp) -> CompletionCheck {
    let complete = match completions(&ctx.job) {
        None => ctx.succeeded > 0 && ctx.active == 0,
        Some(completions) => ctx.succeeded >= completions && ctx.active == 0,
    };
    if complete {
        ctx.finished_condition = Some(new_success_condition(now));
        return CompletionCheck::default();
    }
    if !manage_job_called {
        return CompletionCheck::default();
    }
    let suspended = job_suspended(&ctx.job);
    let status = status_mut(&mut ctx.job);
    let conditions = status.conditions.get_or_insert_with(Vec::new);
    let (cond_status, reason, message) = if suspended {
        ("True", "JobSuspended", "Job suspended")
    } else {
        ("False", "JobResumed", "Job resumed")
    };
    let changed = util::ensure_job_condition_status(conditions, SUSPENDED, cond_status, reason, message, now);
    if conditions.is_empty() {
        status.conditions = None;
    }
    if !changed {
        return CompletionCheck::default();
    }
    if suspended {
        return CompletionCheck {
            suspend_changed: true,
            event: Some(("Suspended", "Job suspended")),
        };
    }
    status.start_time = Some(Time(now));
    CompletionCheck {
        suspend_changed: true,
        event: Some(("Resumed", "Job resumed")),
    }
}
