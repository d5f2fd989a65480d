//! Pure helpers every other file of the Job controller reads: the spec with its defaults, when a pod
//! counts as failed, and the Job conditions (types, reasons, messages, `ensureJobConditionStatus`).
//!
//! Upstream: `pkg/controller/job/job_controller.go` (`newCondition`, `ensureJobConditionStatus`,
//! `findConditionByType`, `isPodFailed`, `jobSuspended`, `onlyReplaceFailedPods`,
//! `pastBackoffLimitOnFailure`, `pastActiveDeadline`), `pkg/controller/job/util/utils.go`
//! (`IsJobFinished`, `FinishedCondition`), `indexed_job_utils.go` (`isIndexedJob`,
//! `hasBackoffLimitPerIndex`) and the reason constants of `k8s.io/api/batch/v1`.
//!
//! Simplified: the feature gates are fixed as in Kubernetes 1.33 (`JobPodReplacementPolicy`,
//! `JobManagedBy`, `JobBackoffLimitPerIndex`, `JobSuccessPolicy`, `PodIndexLabel` all on), so the
//! terminating pods are always tracked and the terminal conditions are always delayed behind
//! `FailureTarget` / `SuccessCriteriaMet`.

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::batch::v1::{Job, JobCondition, JobSpec};
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use crate::controller_utils::pods::pod_phase;

/// Condition type: the Job completed (`JobComplete`).
pub const COMPLETE: &str = "Complete";
/// Condition type: the Job failed (`JobFailed`).
pub const FAILED: &str = "Failed";
/// Condition type: the Job is suspended (`JobSuspended`).
pub const SUSPENDED: &str = "Suspended";
/// Interim condition before `Failed`, written while the pods are still terminating (`JobFailureTarget`).
pub const FAILURE_TARGET: &str = "FailureTarget";
/// Interim condition before `Complete` (`JobSuccessCriteriaMet`).
pub const SUCCESS_CRITERIA_MET: &str = "SuccessCriteriaMet";

/// Reason: more failed pods than `backoffLimit` (`JobReasonBackoffLimitExceeded`).
pub const REASON_BACKOFF_LIMIT_EXCEEDED: &str = "BackoffLimitExceeded";
/// Reason: `activeDeadlineSeconds` passed (`JobReasonDeadlineExceeded`).
pub const REASON_DEADLINE_EXCEEDED: &str = "DeadlineExceeded";
/// Reason: a `FailJob` rule of the pod failure policy matched (`JobReasonPodFailurePolicy`).
pub const REASON_POD_FAILURE_POLICY: &str = "PodFailurePolicy";
/// Reason: more failed indexes than `maxFailedIndexes` (`JobReasonMaxFailedIndexesExceeded`).
pub const REASON_MAX_FAILED_INDEXES_EXCEEDED: &str = "MaxFailedIndexesExceeded";
/// Reason: every index finished and some failed (`JobReasonFailedIndexes`).
pub const REASON_FAILED_INDEXES: &str = "FailedIndexes";
/// Reason: a success policy rule matched (`JobReasonSuccessPolicy`).
pub const REASON_SUCCESS_POLICY: &str = "SuccessPolicy";
/// Reason: `completions` pods succeeded (`JobReasonCompletionsReached`).
pub const REASON_COMPLETIONS_REACHED: &str = "CompletionsReached";

/// Message of [`REASON_BACKOFF_LIMIT_EXCEEDED`].
pub const MESSAGE_BACKOFF_LIMIT_EXCEEDED: &str = "Job has reached the specified backoff limit";
/// Message of [`REASON_DEADLINE_EXCEEDED`].
pub const MESSAGE_DEADLINE_EXCEEDED: &str = "Job was active longer than specified deadline";
/// Message of [`REASON_MAX_FAILED_INDEXES_EXCEEDED`].
pub const MESSAGE_MAX_FAILED_INDEXES_EXCEEDED: &str =
    "Job has exceeded the specified maximal number of failed indexes";
/// Message of [`REASON_FAILED_INDEXES`].
pub const MESSAGE_FAILED_INDEXES: &str = "Job has failed indexes";
/// Message of [`REASON_COMPLETIONS_REACHED`].
pub const MESSAGE_COMPLETIONS_REACHED: &str = "Reached expected number of succeeded pods";

/// The `spec.managedBy` value that means this controller (`JobControllerName`).
pub const JOB_CONTROLLER_NAME: &str = "kubernetes.io/job-controller";

/// The Job's spec, or an empty one (the API server always writes one).
pub fn spec(job: &Job) -> &JobSpec {
    static EMPTY: std::sync::OnceLock<JobSpec> = std::sync::OnceLock::new();
    job.spec
        .as_ref()
        .unwrap_or_else(|| EMPTY.get_or_init(JobSpec::default))
}

/// `spec.parallelism` (defaulted to 1 by the API server).
pub fn parallelism(job: &Job) -> i32 {
    spec(job).parallelism.unwrap_or(1)
}

/// `spec.completions`; `None` means "one success finishes the Job" (only parallelism was given).
pub fn completions(job: &Job) -> Option<i32> {
    spec(job).completions
}

/// `spec.backoffLimit` (defaulted to 6, or MaxInt32 with `backoffLimitPerIndex`).
pub fn backoff_limit(job: &Job) -> i32 {
    spec(job).backoff_limit.unwrap_or(6)
}

/// Upstream `isIndexedJob`: `completionMode: Indexed`.
pub fn is_indexed_job(job: &Job) -> bool {
    spec(job).completion_mode.as_deref() == Some("Indexed")
}

/// Upstream `hasBackoffLimitPerIndex`: `backoffLimitPerIndex` is set.
pub fn has_backoff_limit_per_index(job: &Job) -> bool {
    spec(job).backoff_limit_per_index.is_some()
}

/// Upstream `jobSuspended`: `spec.suspend` is true.
pub fn job_suspended(job: &Job) -> bool {
    spec(job).suspend == Some(true)
}

/// Upstream `onlyReplaceFailedPods`: replacements wait until a pod is terminal (`podReplacementPolicy:
/// Failed`, or any pod failure policy).
pub fn only_replace_failed_pods(job: &Job) -> bool {
    let s = spec(job);
    s.pod_replacement_policy.as_deref() == Some("Failed") || s.pod_failure_policy.is_some()
}

/// Upstream `managedByExternalController`: the name in `spec.managedBy` when it is not this controller.
pub fn managed_by_external_controller(job: &Job) -> Option<&str> {
    spec(job)
        .managed_by
        .as_deref()
        .filter(|m| *m != JOB_CONTROLLER_NAME)
}

/// The Job's conditions (empty when there is no status).
pub fn conditions(job: &Job) -> &[JobCondition] {
    job.status
        .as_ref()
        .and_then(|s| s.conditions.as_deref())
        .unwrap_or(&[])
}

/// Upstream `findConditionByType`.
pub fn find_condition<'a>(list: &'a [JobCondition], type_: &str) -> Option<&'a JobCondition> {
    list.iter().find(|c| c.type_ == type_)
}

/// Upstream `IsJobFinished`: a `Complete` or `Failed` condition with status True.
pub fn is_job_finished(job: &Job) -> bool {
    conditions(job)
        .iter()
        .any(|c| (c.type_ == COMPLETE || c.type_ == FAILED) && c.status == "True")
}

/// Upstream `newCondition`: probe and transition time are `now`.
pub fn new_condition(type_: &str, status: &str, reason: &str, message: &str, now: Timestamp) -> JobCondition {
    JobCondition {
        type_: type_.to_string(),
        status: status.to_string(),
        last_probe_time: Some(Time(now)),
        last_transition_time: Some(Time(now)),
        reason: (!reason.is_empty()).then(|| reason.to_string()),
        message: (!message.is_empty()).then(|| message.to_string()),
    }
}

/// Upstream `ensureJobConditionStatus`: replaces the condition of `type_` if its status, reason or
/// message differ, appends it if missing (but never a new False condition). Returns whether the list
/// changed.
pub fn ensure_job_condition_status(
    list: &mut Vec<JobCondition>,
    type_: &str,
    status: &str,
    reason: &str,
    message: &str,
    now: Timestamp,
) -> bool {
    if let Some(c) = list.iter_mut().find(|c| c.type_ == type_) {
        let same = c.status == status
            && c.reason.as_deref().unwrap_or("") == reason
            && c.message.as_deref().unwrap_or("") == message;
        if same {
            return false;
        }
        *c = new_condition(type_, status, reason, message, now);
        return true;
    }
    if status != "False" {
        list.push(new_condition(type_, status, reason, message, now));
        return true;
    }
    false
}

/// Upstream `isPodFailed`: phase Failed; or, unless replacements wait for terminal pods, a pod being
/// deleted that did not succeed (an orphan may never reach Failed).
pub fn is_pod_failed(pod: &Pod, job: &Job) -> bool {
    let phase = pod_phase(pod);
    if phase == "Failed" {
        return true;
    }
    if only_replace_failed_pods(job) {
        return false;
    }
    pod.metadata.deletion_timestamp.is_some() && phase != "Succeeded"
}

/// Upstream `pastBackoffLimitOnFailure`: with `restartPolicy: OnFailure`, the container restarts of
/// the pending and running pods reach `backoffLimit` (any restart at all when the limit is 0).
pub fn past_backoff_limit_on_failure<'a>(job: &Job, pods: impl IntoIterator<Item = &'a Pod>) -> bool {
    let restart_policy = spec(job)
        .template
        .spec
        .as_ref()
        .and_then(|s| s.restart_policy.as_deref());
    if restart_policy != Some("OnFailure") {
        return false;
    }
    let mut restarts: i64 = 0;
    for pod in pods {
        let phase = pod_phase(pod);
        if phase != "Running" && phase != "Pending" {
            continue;
        }
        let Some(status) = pod.status.as_ref() else {
            continue;
        };
        let init = status.init_container_statuses.iter().flatten();
        let regular = status.container_statuses.iter().flatten();
        restarts += init
            .chain(regular)
            .map(|c| i64::from(c.restart_count))
            .sum::<i64>();
    }
    let limit = i64::from(backoff_limit(job));
    if limit == 0 {
        return restarts > 0;
    }
    restarts >= limit
}

/// Upstream `pastActiveDeadline`: `activeDeadlineSeconds` have passed since `startTime` (never while
/// suspended).
pub fn past_active_deadline(job: &Job, now: Timestamp) -> bool {
    match remaining_active_time(job, now) {
        Some(left) => left <= SignedDuration::ZERO,
        None => false,
    }
}

/// How long until `activeDeadlineSeconds` pass, when the deadline applies (set, started, not
/// suspended); zero or negative when it has passed.
pub fn remaining_active_time(job: &Job, now: Timestamp) -> Option<SignedDuration> {
    let deadline = spec(job).active_deadline_seconds?;
    let start = job.status.as_ref()?.start_time.as_ref()?.0;
    if job_suspended(job) {
        return None;
    }
    let allowed = SignedDuration::from_secs(deadline);
    Some(allowed - now.duration_since(start))
}
