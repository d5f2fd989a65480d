//! Helpers shared by every part of the Deployment controller.
//!
//! Upstream: `pkg/controller/deployment/util/deployment_util.go` (recent master, with the
//! `getNonNegativeInt32FromAnnotation` and `TerminatingReplicas` changes), plus `ComputeHash` and the
//! `ReplicaSetsBy*` orderings from `pkg/controller/controller_utils.go`.
//!
//! Simplified / different from upstream:
//! * Fields the API server would default (`spec.replicas` → 1, strategy → RollingUpdate 25%/25%,
//!   ReplicaSet `spec.replicas` → 1) are defaulted here when absent, so the planner behaves like on a real
//!   cluster even for an object that skipped defaulting. [`resolve_fenceposts`] itself keeps the upstream
//!   rule that a missing value counts as 0.
//! * [`compute_hash`] cannot reproduce Go's `spew` dump of the template. It hashes the canonical JSON
//!   encoding of the `PodTemplateSpec` (k8s-openapi serialises struct fields in a fixed order and maps as
//!   sorted `BTreeMap`s, so the bytes are deterministic) with FNV-1a 32-bit, then appends the collision
//!   count exactly as upstream (u32 little-endian + four zero bytes) and encodes the decimal sum with the
//!   upstream `SafeEncodeString` alphabet. Hashes therefore differ from a real cluster's but have the same
//!   properties (deterministic, change with template or collisionCount, DNS-safe).
//! * [`equal_ignore_hash`] compares typed values (`PartialEq`) after dropping the `pod-template-hash`
//!   label and treating an empty label map like a missing one; upstream's `Semantic.DeepEqual` also equates
//!   every empty/nil slice and compares quantities semantically.
//! * Arithmetic that upstream does in `int32` is done in `i64` and saturated back, so it cannot overflow.

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::fmt;

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::apps::v1::{Deployment, DeploymentCondition, DeploymentStatus, ReplicaSet};
use k8s_openapi::api::core::v1::PodTemplateSpec;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

// Re-exported for the property tests, which import it from here.
pub(crate) use crate::runtime::name_of;

/// Records the rollout sequence number of a ReplicaSet (and, copied, of its Deployment).
pub const REVISION_ANNOTATION: &str = "deployment.kubernetes.io/revision";
/// Comma-separated older revisions a re-used ReplicaSet has served (rollbacks).
pub const REVISION_HISTORY_ANNOTATION: &str = "deployment.kubernetes.io/revision-history";
/// `spec.replicas` of the Deployment when the ReplicaSet was last scaled.
pub const DESIRED_REPLICAS_ANNOTATION: &str = "deployment.kubernetes.io/desired-replicas";
/// `spec.replicas + maxSurge` of the Deployment when the ReplicaSet was last scaled.
pub const MAX_REPLICAS_ANNOTATION: &str = "deployment.kubernetes.io/max-replicas";
/// Legacy (extensions/v1beta1) rollback request annotation; never copied to ReplicaSets.
pub const DEPRECATED_ROLLBACK_TO: &str = "deprecated.deployment.rollback.to";
/// kubectl's client-side apply record; never copied to ReplicaSets.
pub const LAST_APPLIED_CONFIG_ANNOTATION: &str = "kubectl.kubernetes.io/last-applied-configuration";
/// Label added to the template, labels and selector of every ReplicaSet a Deployment creates.
pub const DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY: &str = "pod-template-hash";
/// Cap on the length of [`REVISION_HISTORY_ANNOTATION`] (upstream `maxRevHistoryLengthInChars`).
pub const MAX_REV_HISTORY_LENGTH_IN_CHARS: usize = 2000;

/// Condition type: the rollout is making progress (or not).
pub const DEPLOYMENT_PROGRESSING: &str = "Progressing";
/// Condition type: at least `replicas - maxUnavailable` pods are available.
pub const DEPLOYMENT_AVAILABLE: &str = "Available";
/// Condition type: copied from a ReplicaSet's `ReplicaFailure` condition.
pub const DEPLOYMENT_REPLICA_FAILURE: &str = "ReplicaFailure";

/// Progressing reason: a ReplicaSet was scaled as part of the rollout.
pub const REPLICA_SET_UPDATED_REASON: &str = "ReplicaSetUpdated";
/// Progressing reason: creating the new ReplicaSet failed.
pub const FAILED_RS_CREATE_REASON: &str = "ReplicaSetCreateError";
/// Progressing reason: the new ReplicaSet was created.
pub const NEW_REPLICA_SET_REASON: &str = "NewReplicaSetCreated";
/// Progressing reason: an existing ReplicaSet was found to be the new one.
pub const FOUND_NEW_RS_REASON: &str = "FoundNewReplicaSet";
/// Progressing reason: the rollout completed.
pub const NEW_RS_AVAILABLE_REASON: &str = "NewReplicaSetAvailable";
/// Progressing reason: no progress within `progressDeadlineSeconds`.
pub const TIMED_OUT_REASON: &str = "ProgressDeadlineExceeded";
/// Progressing reason: the Deployment is paused.
pub const PAUSED_DEPLOY_REASON: &str = "DeploymentPaused";
/// Progressing reason: the Deployment was resumed.
pub const RESUMED_DEPLOY_REASON: &str = "DeploymentResumed";
/// Available reason: enough pods are available.
pub const MINIMUM_REPLICAS_AVAILABLE: &str = "MinimumReplicasAvailable";
/// Available reason: too few pods are available.
pub const MINIMUM_REPLICAS_UNAVAILABLE: &str = "MinimumReplicasUnavailable";

const ROLLING_UPDATE: &str = "RollingUpdate";
const DEFAULT_FENCEPOST: &str = "25%";

/// An `IntOrString` that is neither an int nor a percentage (upstream: validation rejects these).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IntOrPercentError(pub String);

impl fmt::Display for IntOrPercentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid value for IntOrString: {}", self.0)
    }
}

impl std::error::Error for IntOrPercentError {}

// ---------------------------------------------------------------------------------------------
// Field accessors (with API-server defaults)
// ---------------------------------------------------------------------------------------------

/// `spec.replicas`, defaulting to 1.
pub fn spec_replicas(d: &Deployment) -> i32 {
    d.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1)
}

/// `spec.replicas` of a ReplicaSet, defaulting to 1.
pub fn rs_replicas(rs: &ReplicaSet) -> i32 {
    rs.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1)
}

/// Sets `spec.replicas` of a ReplicaSet.
pub fn set_rs_replicas(rs: &mut ReplicaSet, replicas: i32) {
    rs.spec.get_or_insert_with(Default::default).replicas = Some(replicas);
}

/// `status.availableReplicas` of a ReplicaSet (0 if absent).
pub fn rs_available(rs: &ReplicaSet) -> i32 {
    rs.status.as_ref().and_then(|s| s.available_replicas).unwrap_or(0)
}

/// `status.replicas` of a ReplicaSet (0 if absent).
pub fn rs_status_replicas(rs: &ReplicaSet) -> i32 {
    rs.status.as_ref().map_or(0, |s| s.replicas)
}

fn rs_ready(rs: &ReplicaSet) -> i32 {
    rs.status.as_ref().and_then(|s| s.ready_replicas).unwrap_or(0)
}

/// The Deployment's `status`, or an empty one.
pub fn deployment_status(d: &Deployment) -> DeploymentStatus {
    d.status.clone().unwrap_or_default()
}

/// True unless the strategy is explicitly something other than `RollingUpdate` (API default).
pub fn is_rolling_update(d: &Deployment) -> bool {
    let ty = d
        .spec
        .as_ref()
        .and_then(|s| s.strategy.as_ref())
        .and_then(|s| s.type_.as_deref());
    ty.is_none_or(|t| t == ROLLING_UPDATE)
}

/// `(maxSurge, maxUnavailable)` as written in the spec; a missing `rollingUpdate` block gets the API
/// defaults (25%/25%).
fn rolling_params(d: &Deployment) -> (Option<IntOrString>, Option<IntOrString>) {
    let ru = d
        .spec
        .as_ref()
        .and_then(|s| s.strategy.as_ref())
        .and_then(|s| s.rolling_update.as_ref());
    match ru {
        Some(ru) => (ru.max_surge.clone(), ru.max_unavailable.clone()),
        None => {
            let default = IntOrString::String(DEFAULT_FENCEPOST.to_string());
            (Some(default.clone()), Some(default))
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Fenceposts
// ---------------------------------------------------------------------------------------------

/// Upstream `intstr.GetScaledValueFromIntOrPercent`: ints pass through, `"N%"` scales `total`
/// (ceil when `round_up`, floor otherwise), anything else is an error.
pub fn get_scaled_value_from_int_or_percent(
    value: &IntOrString,
    total: i32,
    round_up: bool,
) -> Result<i32, IntOrPercentError> {
    match value {
        IntOrString::Int(v) => Ok(*v),
        IntOrString::String(s) => {
            let Some(digits) = s.strip_suffix('%') else {
                return Err(IntOrPercentError(format!("{s:?} is not a percentage")));
            };
            let pct: i64 = digits
                .parse()
                .map_err(|e| IntOrPercentError(format!("{s:?}: {e}")))?;
            let scaled = pct as f64 * f64::from(total) / 100.0;
            let rounded = if round_up { scaled.ceil() } else { scaled.floor() };
            Ok(rounded as i32)
        }
    }
}

/// Upstream `ResolveFenceposts`: resolves `(surge, unavailable)` for `desired` replicas. Surge rounds
/// up, unavailable rounds down, missing values count as 0, and if both end up 0 unavailable becomes 1.
pub fn resolve_fenceposts(
    max_surge: Option<&IntOrString>,
    max_unavailable: Option<&IntOrString>,
    desired: i32,
) -> Result<(i32, i32), IntOrPercentError> {
    let zero = IntOrString::Int(0);
    let surge = get_scaled_value_from_int_or_percent(max_surge.unwrap_or(&zero), desired, true)?;
    let unavailable = get_scaled_value_from_int_or_percent(max_unavailable.unwrap_or(&zero), desired, false)?;
    if surge == 0 && unavailable == 0 {
        return Ok((0, 1));
    }
    Ok((surge, unavailable))
}

fn resolved_fenceposts(d: &Deployment) -> (i32, i32) {
    let (surge, unavailable) = rolling_params(d);
    // Invalid values are rejected by validation; upstream ignores the error the same way.
    resolve_fenceposts(surge.as_ref(), unavailable.as_ref(), spec_replicas(d)).unwrap_or((0, 0))
}

/// Upstream `MaxUnavailable`: 0 for Recreate or zero replicas, else the resolved value clamped to
/// `spec.replicas`.
pub fn max_unavailable(d: &Deployment) -> i32 {
    let replicas = spec_replicas(d);
    if !is_rolling_update(d) || replicas == 0 {
        return 0;
    }
    resolved_fenceposts(d).1.min(replicas)
}

/// Upstream `MinAvailable`: `spec.replicas - MaxUnavailable` (0 for Recreate).
pub fn min_available(d: &Deployment) -> i32 {
    if !is_rolling_update(d) {
        return 0;
    }
    spec_replicas(d) - max_unavailable(d)
}

/// Upstream `MaxSurge`: the resolved surge (0 for Recreate).
pub fn max_surge(d: &Deployment) -> i32 {
    if !is_rolling_update(d) {
        return 0;
    }
    resolved_fenceposts(d).0
}

/// Upstream `NewRSNewReplicas`: the size the new ReplicaSet may grow to now. `all_rss` must include the
/// new ReplicaSet itself when it exists (as upstream's callers do).
///
/// The limit is on pods that exist, not on pods that are ready: all ReplicaSets together may have at
/// most `replicas + maxSurge`. The new ReplicaSet takes whatever room is left under that ceiling, but
/// never more than `replicas` itself. Room appears only when old ReplicaSets shrink, and they shrink
/// only when enough pods are available (see `reconcile_old_replica_sets` in `rolling.rs`), so the two
/// halves of a rolling update pace each other: surge decides how far ahead the new side may run,
/// unavailability how far behind the old side may fall. Example: replicas 10, maxSurge 25% (rounded
/// up: 3). With 10 old pods, the new ReplicaSet may grow to 3 at once; after the old one drops to 8 it
/// may grow to 5; it never passes 10 however small the old ones become. Recreate has no surge: the
/// new ReplicaSet gets `replicas` (the strategy only calls this once the old pods are gone).
pub fn new_rs_new_replicas<'a>(
    d: &Deployment,
    all_rss: impl IntoIterator<Item = &'a ReplicaSet>,
    new_rs: &ReplicaSet,
) -> Result<i32, IntOrPercentError> {
    let replicas = spec_replicas(d);
    if !is_rolling_update(d) {
        return Ok(replicas);
    }
    let (surge, _) = rolling_params(d);
    let surge =
        get_scaled_value_from_int_or_percent(surge.as_ref().unwrap_or(&IntOrString::Int(0)), replicas, true)?;
    let current = i64::from(get_replica_count_for_replica_sets(all_rss));
    let max_total = i64::from(replicas) + i64::from(surge);
    let new_size = i64::from(rs_replicas(new_rs));
    if current >= max_total {
        return Ok(rs_replicas(new_rs));
    }
    let scale_up = (max_total - current).min(i64::from(replicas) - new_size);
    Ok(saturate(new_size + scale_up))
}

fn saturate(v: i64) -> i32 {
    v.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32
}

// ---------------------------------------------------------------------------------------------
// Replica counts
// ---------------------------------------------------------------------------------------------

/// Σ `spec.replicas`.
pub fn get_replica_count_for_replica_sets<'a>(rss: impl IntoIterator<Item = &'a ReplicaSet>) -> i32 {
    saturate(rss.into_iter().map(|rs| i64::from(rs_replicas(rs))).sum())
}

/// Σ `status.replicas`.
pub fn get_actual_replica_count_for_replica_sets<'a>(rss: impl IntoIterator<Item = &'a ReplicaSet>) -> i32 {
    saturate(rss.into_iter().map(|rs| i64::from(rs_status_replicas(rs))).sum())
}

/// Σ `status.readyReplicas`.
pub fn get_ready_replica_count_for_replica_sets<'a>(rss: impl IntoIterator<Item = &'a ReplicaSet>) -> i32 {
    saturate(rss.into_iter().map(|rs| i64::from(rs_ready(rs))).sum())
}

/// Σ `status.availableReplicas`.
pub fn get_available_replica_count_for_replica_sets<'a>(
    rss: impl IntoIterator<Item = &'a ReplicaSet>,
) -> i32 {
    saturate(rss.into_iter().map(|rs| i64::from(rs_available(rs))).sum())
}

/// Σ `status.terminatingReplicas`, or `None` when a ReplicaSet the ReplicaSet controller has already
/// synced (observedGeneration > 0) does not report the field (count unknown). Never-synced ReplicaSets
/// without the field contribute 0.
pub fn get_terminating_replica_count_for_replica_sets<'a>(
    rss: impl IntoIterator<Item = &'a ReplicaSet>,
) -> Option<i32> {
    let mut total = 0i64;
    for rs in rss {
        let status = rs.status.clone().unwrap_or_default();
        match status.terminating_replicas {
            Some(n) => total += i64::from(n),
            None if status.observed_generation.unwrap_or(0) == 0 => {}
            None => return None,
        }
    }
    Some(saturate(total))
}

/// ReplicaSets with `spec.replicas > 0` (upstream `FilterActiveReplicaSets`).
pub fn is_active(rs: &ReplicaSet) -> bool {
    rs_replicas(rs) > 0
}

// ---------------------------------------------------------------------------------------------
// Rollout state predicates
// ---------------------------------------------------------------------------------------------

/// Upstream `IsSaturated`: the new ReplicaSet owns all desired replicas, agrees via its
/// `desired-replicas` annotation and all of them are available.
pub fn is_saturated(d: &Deployment, rs: Option<&ReplicaSet>) -> bool {
    let Some(rs) = rs else { return false };
    let Some(desired) = get_desired_replicas_annotation(rs) else {
        return false;
    };
    let replicas = spec_replicas(d);
    rs_replicas(rs) == replicas && desired == replicas && rs_available(rs) == replicas
}

/// Upstream `DeploymentComplete`: all desired replicas are updated and available, no old pods remain
/// and the status reflects the latest generation.
pub fn deployment_complete(d: &Deployment, new_status: &DeploymentStatus) -> bool {
    let replicas = spec_replicas(d);
    new_status.updated_replicas.unwrap_or(0) == replicas
        && new_status.replicas.unwrap_or(0) == replicas
        && new_status.available_replicas.unwrap_or(0) == replicas
        && new_status.observed_generation.unwrap_or(0) >= d.metadata.generation.unwrap_or(0)
}

/// Upstream `DeploymentProgressing`: compared with the stored status, more pods were updated, fewer
/// old pods remain, or more pods are ready / available.
pub fn deployment_progressing(d: &Deployment, new_status: &DeploymentStatus) -> bool {
    let old = deployment_status(d);
    let n = |v: Option<i32>| v.unwrap_or(0);
    let old_old = n(old.replicas) - n(old.updated_replicas);
    let new_old = n(new_status.replicas) - n(new_status.updated_replicas);
    n(new_status.updated_replicas) > n(old.updated_replicas)
        || new_old < old_old
        || n(new_status.ready_replicas) > n(old.ready_replicas)
        || n(new_status.available_replicas) > n(old.available_replicas)
}

/// Upstream `HasProgressDeadline`: set and not `MaxInt32`.
pub fn has_progress_deadline(d: &Deployment) -> bool {
    progress_deadline_seconds(d).is_some()
}

/// The progress deadline in seconds, if the Deployment has one.
pub fn progress_deadline_seconds(d: &Deployment) -> Option<i32> {
    d.spec
        .as_ref()
        .and_then(|s| s.progress_deadline_seconds)
        .filter(|s| *s != i32::MAX)
}

/// Upstream `HasRevisionHistoryLimit`: set and not `MaxInt32`.
pub fn revision_history_limit(d: &Deployment) -> Option<i32> {
    d.spec
        .as_ref()
        .and_then(|s| s.revision_history_limit)
        .filter(|s| *s != i32::MAX)
}

/// Upstream `DeploymentTimedOut`: the Progressing condition's `lastUpdateTime + deadline` is strictly
/// before `now` (or the condition already says `ProgressDeadlineExceeded`).
pub fn deployment_timed_out(d: &Deployment, new_status: &DeploymentStatus, now: Timestamp) -> bool {
    let Some(deadline) = progress_deadline_seconds(d) else {
        return false;
    };
    let Some(cond) = get_deployment_condition(new_status, DEPLOYMENT_PROGRESSING) else {
        return false;
    };
    match cond.reason.as_deref() {
        Some(NEW_RS_AVAILABLE_REASON) => false,
        Some(TIMED_OUT_REASON) => true,
        _ => deadline_passed(cond, deadline, now),
    }
}

fn deadline_passed(cond: &DeploymentCondition, deadline: i32, now: Timestamp) -> bool {
    let from = cond
        .last_update_time
        .as_ref()
        .map_or(Timestamp::UNIX_EPOCH, |t| t.0);
    from.saturating_add(SignedDuration::from_secs(i64::from(deadline)))
        .is_ok_and(|end| end < now)
}

// ---------------------------------------------------------------------------------------------
// Conditions
// ---------------------------------------------------------------------------------------------

/// Upstream `NewDeploymentCondition`; both timestamps are `now` truncated to whole seconds (the wire
/// precision of `metav1.Time`).
pub fn new_deployment_condition(
    type_: &str,
    status: &str,
    reason: &str,
    message: String,
    now: Timestamp,
) -> DeploymentCondition {
    let t = Time(truncate_to_second(now));
    DeploymentCondition {
        type_: type_.to_string(),
        status: status.to_string(),
        reason: Some(reason.to_string()),
        message: Some(message),
        last_update_time: Some(t.clone()),
        last_transition_time: Some(t),
    }
}

/// `now` without its sub-second part.
pub fn truncate_to_second(now: Timestamp) -> Timestamp {
    Timestamp::from_second(now.as_second()).unwrap_or(now)
}

/// Upstream `GetDeploymentCondition`.
pub fn get_deployment_condition<'a>(
    status: &'a DeploymentStatus,
    type_: &str,
) -> Option<&'a DeploymentCondition> {
    status.conditions.as_ref()?.iter().find(|c| c.type_ == type_)
}

/// Upstream `SetDeploymentCondition`: no-op when a condition of that type already has the same status
/// and reason; keeps `lastTransitionTime` when only the reason changes; the condition moves to the end.
pub fn set_deployment_condition(status: &mut DeploymentStatus, mut condition: DeploymentCondition) {
    if let Some(current) = get_deployment_condition(status, &condition.type_) {
        if current.status == condition.status && current.reason == condition.reason {
            return;
        }
        if current.status == condition.status {
            condition.last_transition_time = current.last_transition_time.clone();
        }
    }
    remove_deployment_condition(status, &condition.type_.clone());
    status.conditions.get_or_insert_with(Vec::new).push(condition);
}

/// Upstream `RemoveDeploymentCondition`.
pub fn remove_deployment_condition(status: &mut DeploymentStatus, type_: &str) {
    if let Some(conds) = status.conditions.as_mut() {
        conds.retain(|c| c.type_ != type_);
        if conds.is_empty() {
            status.conditions = None;
        }
    }
}

/// Upstream `ReplicaSetToDeploymentCondition`.
pub fn replica_set_to_deployment_condition(
    cond: &k8s_openapi::api::apps::v1::ReplicaSetCondition,
) -> DeploymentCondition {
    DeploymentCondition {
        type_: cond.type_.clone(),
        status: cond.status.clone(),
        reason: cond.reason.clone(),
        message: cond.message.clone(),
        last_transition_time: cond.last_transition_time.clone(),
        last_update_time: cond.last_transition_time.clone(),
    }
}

// ---------------------------------------------------------------------------------------------
// Annotations and revisions
// ---------------------------------------------------------------------------------------------

/// Why an annotation could not be read as a non-negative int32.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnnotationError(pub String);

impl fmt::Display for AnnotationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for AnnotationError {}

/// Upstream `getNonNegativeInt32FromAnnotation`: `Ok(None)` when absent, `Err` when not a decimal in
/// `0..=i32::MAX` (messages mirror Go's "invalid syntax" / "out of range").
pub fn get_non_negative_int32_from_annotation(
    annotations: Option<&BTreeMap<String, String>>,
    key: &str,
) -> Result<Option<i32>, AnnotationError> {
    let Some(raw) = annotations.and_then(|a| a.get(key)) else {
        return Ok(None);
    };
    if raw.is_empty() || !raw.bytes().all(|b| b.is_ascii_digit()) {
        return Err(AnnotationError(format!("parsing {raw:?}: invalid syntax")));
    }
    let value: u64 = match raw.parse() {
        Ok(v) if v <= u64::from(u32::MAX) => v,
        _ => return Err(AnnotationError(format!("parsing {raw:?}: value out of range"))),
    };
    i32::try_from(value).map(Some).map_err(|_| {
        AnnotationError(format!(
            "value {value} is out of range (higher than {})",
            i32::MAX
        ))
    })
}

/// Upstream `GetDesiredReplicasAnnotation` (invalid values read as absent).
pub fn get_desired_replicas_annotation(rs: &ReplicaSet) -> Option<i32> {
    get_non_negative_int32_from_annotation(rs.metadata.annotations.as_ref(), DESIRED_REPLICAS_ANNOTATION)
        .ok()
        .flatten()
}

/// Upstream `getMaxReplicasAnnotation` (invalid values read as absent).
pub fn get_max_replicas_annotation(rs: &ReplicaSet) -> Option<i32> {
    get_non_negative_int32_from_annotation(rs.metadata.annotations.as_ref(), MAX_REPLICAS_ANNOTATION)
        .ok()
        .flatten()
}

/// Upstream `SetReplicasAnnotations`; true if anything changed.
pub fn set_replicas_annotations(rs: &mut ReplicaSet, desired: i32, max: i32) -> bool {
    let annotations = rs.metadata.annotations.get_or_insert_with(BTreeMap::new);
    let mut updated = false;
    for (key, value) in [
        (DESIRED_REPLICAS_ANNOTATION, desired),
        (MAX_REPLICAS_ANNOTATION, max),
    ] {
        let value = value.to_string();
        if annotations.get(key) != Some(&value) {
            annotations.insert(key.to_string(), value);
            updated = true;
        }
    }
    updated
}

/// Upstream `ReplicasAnnotationsNeedUpdate`.
pub fn replicas_annotations_need_update(rs: &ReplicaSet, desired: i32, max: i32) -> bool {
    let Some(annotations) = rs.metadata.annotations.as_ref() else {
        return true;
    };
    annotations.get(DESIRED_REPLICAS_ANNOTATION) != Some(&desired.to_string())
        || annotations.get(MAX_REPLICAS_ANNOTATION) != Some(&max.to_string())
}

/// The `(desired, max)` pair a Deployment stamps on the ReplicaSets it scales.
pub fn replicas_annotation_values(d: &Deployment) -> (i32, i32) {
    let replicas = spec_replicas(d);
    (replicas, saturate(i64::from(replicas) + i64::from(max_surge(d))))
}

/// Upstream `skipCopyAnnotation`: annotations that stay on the Deployment only.
pub fn skip_copy_annotation(key: &str) -> bool {
    matches!(
        key,
        LAST_APPLIED_CONFIG_ANNOTATION
            | REVISION_ANNOTATION
            | REVISION_HISTORY_ANNOTATION
            | DESIRED_REPLICAS_ANNOTATION
            | MAX_REPLICAS_ANNOTATION
            | DEPRECATED_ROLLBACK_TO
    )
}

fn copy_deployment_annotations_to_replica_set(d: &Deployment, rs: &mut ReplicaSet) -> bool {
    let target = rs.metadata.annotations.get_or_insert_with(BTreeMap::new);
    let mut changed = false;
    for (k, v) in d.metadata.annotations.iter().flatten() {
        if skip_copy_annotation(k) || target.get(k) == Some(v) {
            continue;
        }
        target.insert(k.clone(), v.clone());
        changed = true;
    }
    changed
}

/// Upstream `SetNewReplicaSetAnnotations`: copy the Deployment's annotations, raise the revision to
/// `new_revision` when the ReplicaSet's is numerically smaller (recording the old one in
/// `revision-history`, capped at `rev_history_limit_in_chars`), and on creation (`!exists`) stamp the
/// replicas annotations. Returns true if the annotations changed.
pub fn set_new_replica_set_annotations(
    d: &Deployment,
    rs: &mut ReplicaSet,
    new_revision: &str,
    exists: bool,
    rev_history_limit_in_chars: usize,
) -> bool {
    let mut changed = copy_deployment_annotations_to_replica_set(d, rs);
    let annotations = rs.metadata.annotations.get_or_insert_with(BTreeMap::new);
    let old_revision = annotations.get(REVISION_ANNOTATION).cloned();
    let old_int = match old_revision.as_deref() {
        None | Some("") => 0,
        Some(s) => match s.parse::<i64>() {
            Ok(v) => v,
            Err(_) => return false,
        },
    };
    let Ok(new_int) = new_revision.parse::<i64>() else {
        return false;
    };
    if old_int < new_int {
        annotations.insert(REVISION_ANNOTATION.to_string(), new_revision.to_string());
        changed = true;
        if let Some(old) = old_revision {
            append_revision_history(annotations, &old, rev_history_limit_in_chars);
        }
    }
    if !exists {
        let (desired, max) = replicas_annotation_values(d);
        changed |= set_replicas_annotations(rs, desired, max);
    }
    changed
}

fn append_revision_history(annotations: &mut BTreeMap<String, String>, old: &str, limit: usize) {
    let history = annotations
        .get(REVISION_HISTORY_ANNOTATION)
        .cloned()
        .unwrap_or_default();
    if history.is_empty() {
        annotations.insert(REVISION_HISTORY_ANNOTATION.to_string(), old.to_string());
        return;
    }
    let entries: Vec<&str> = history.split(',').collect();
    let mut total = history.len() + old.len() + 1;
    let mut start = 0;
    while total > limit && start < entries.len() {
        total -= entries[start].len() + 1;
        start += 1;
    }
    if total <= limit {
        let mut kept: Vec<&str> = entries[start..].to_vec();
        kept.push(old);
        annotations.insert(REVISION_HISTORY_ANNOTATION.to_string(), kept.join(","));
    }
}

/// Upstream `Revision`: the revision annotation as an int (absent → 0).
pub fn revision(meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta) -> Result<i64, String> {
    match meta.annotations.as_ref().and_then(|a| a.get(REVISION_ANNOTATION)) {
        None => Ok(0),
        Some(v) => v.parse().map_err(|e| format!("revision {v:?}: {e}")),
    }
}

/// Upstream `MaxRevision`: the highest parsable revision (0 if none).
pub fn max_revision<'a>(rss: impl IntoIterator<Item = &'a ReplicaSet>) -> i64 {
    rss.into_iter()
        .filter_map(|rs| revision(&rs.metadata).ok())
        .max()
        .unwrap_or(0)
        .max(0)
}

/// Upstream `LastRevision`: the second-highest revision (the one a plain rollback goes to).
pub fn last_revision<'a>(rss: impl IntoIterator<Item = &'a ReplicaSet>) -> i64 {
    let (mut max, mut second) = (0i64, 0i64);
    for v in rss.into_iter().filter_map(|rs| revision(&rs.metadata).ok()) {
        if v >= max {
            second = max;
            max = v;
        } else if v > second {
            second = v;
        }
    }
    second
}

/// Upstream `SetDeploymentRevision` on a plain annotation map; true if it changed.
pub fn set_deployment_revision(annotations: &mut BTreeMap<String, String>, revision: &str) -> bool {
    if annotations.get(REVISION_ANNOTATION).map(String::as_str) == Some(revision) {
        return false;
    }
    annotations.insert(REVISION_ANNOTATION.to_string(), revision.to_string());
    true
}

// ---------------------------------------------------------------------------------------------
// Proportions (used by proportional scaling)
// ---------------------------------------------------------------------------------------------

/// Upstream `getReplicaSetFraction`: how many replicas `rs` should gain (negative: lose) so it keeps its
/// share of `spec.replicas + maxSurge`, relative to the `max-replicas` it was last scaled for.
///
/// The share is measured against the annotation, not against today's sizes: each ReplicaSet remembers
/// (in `deployment.kubernetes.io/max-replicas`) the Deployment ceiling it was last sized for. A
/// ReplicaSet of 6 sized for a ceiling of 12 holds half of it; if the ceiling becomes 18 it should
/// hold 9, so its fraction is 6 × 18 / 12 − 6 = +3. Without the annotation (an old object) the
/// Deployment's `status.replicas` stands in for the old ceiling.
pub fn get_replica_set_fraction(rs: &ReplicaSet, d: &Deployment) -> i32 {
    let size = i64::from(rs_replicas(rs));
    if spec_replicas(d) == 0 {
        return saturate(-size);
    }
    let (_, deployment_max) = replicas_annotation_values(d);
    let before = match get_max_replicas_annotation(rs) {
        Some(v) if v != 0 => v,
        _ => deployment_status(d).replicas.unwrap_or(0),
    };
    if before == 0 {
        return 0;
    }
    let scaled = (size * i64::from(deployment_max)) as f64 / f64::from(before);
    saturate(scaled.round() as i64 - size)
}

/// Upstream `GetReplicaSetProportion`: the fraction, limited so the running total `added` never passes
/// `to_add` (min when scaling up, max when scaling down).
pub fn get_replica_set_proportion(rs: &ReplicaSet, d: &Deployment, to_add: i32, added: i32) -> i32 {
    if rs_replicas(rs) == 0 || to_add == 0 || to_add == added {
        return 0;
    }
    let fraction = get_replica_set_fraction(rs, d);
    let allowed = to_add - added;
    if to_add > 0 {
        fraction.min(allowed)
    } else {
        fraction.max(allowed)
    }
}

// ---------------------------------------------------------------------------------------------
// Orderings (controller_utils.go)
// ---------------------------------------------------------------------------------------------

fn creation(rs: &ReplicaSet) -> Option<Timestamp> {
    rs.metadata.creation_timestamp.as_ref().map(|t| t.0)
}

/// `ReplicaSetsByCreationTimestamp`: oldest first, name as tie-break (missing timestamp = oldest).
pub fn by_creation_timestamp(a: &ReplicaSet, b: &ReplicaSet) -> Ordering {
    creation(a)
        .cmp(&creation(b))
        .then_with(|| name_of(&a.metadata).cmp(name_of(&b.metadata)))
}

/// `ReplicaSetsBySizeOlder`: larger first, ties oldest first.
pub fn by_size_older(a: &ReplicaSet, b: &ReplicaSet) -> Ordering {
    rs_replicas(b)
        .cmp(&rs_replicas(a))
        .then_with(|| by_creation_timestamp(a, b))
}

/// `ReplicaSetsBySizeNewer`: larger first, ties newest first.
pub fn by_size_newer(a: &ReplicaSet, b: &ReplicaSet) -> Ordering {
    rs_replicas(b)
        .cmp(&rs_replicas(a))
        .then_with(|| by_creation_timestamp(b, a))
}

/// `ReplicaSetsByRevision`: lowest revision first; unparsable or equal revisions fall back to creation
/// order.
pub fn by_revision(a: &ReplicaSet, b: &ReplicaSet) -> Ordering {
    match (revision(&a.metadata), revision(&b.metadata)) {
        (Ok(ra), Ok(rb)) if ra != rb => ra.cmp(&rb),
        _ => by_creation_timestamp(a, b),
    }
}

// ---------------------------------------------------------------------------------------------
// New / old ReplicaSets and the template hash
// ---------------------------------------------------------------------------------------------

/// Upstream `EqualIgnoreHash`: templates equal apart from the `pod-template-hash` label.
pub fn equal_ignore_hash(t1: &PodTemplateSpec, t2: &PodTemplateSpec) -> bool {
    strip_hash(t1) == strip_hash(t2)
}

fn strip_hash(t: &PodTemplateSpec) -> PodTemplateSpec {
    let mut copy = t.clone();
    let meta = copy.metadata.get_or_insert_with(Default::default);
    if let Some(labels) = meta.labels.as_mut() {
        labels.remove(DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY);
        if labels.is_empty() {
            meta.labels = None;
        }
    }
    if meta.annotations.as_ref().is_some_and(BTreeMap::is_empty) {
        meta.annotations = None;
    }
    copy
}

fn rs_template(rs: &ReplicaSet) -> PodTemplateSpec {
    rs.spec
        .as_ref()
        .and_then(|s| s.template.clone())
        .unwrap_or_default()
}

fn deployment_template(d: &Deployment) -> PodTemplateSpec {
    d.spec.as_ref().map(|s| s.template.clone()).unwrap_or_default()
}

/// Upstream `FindNewReplicaSet`: the oldest ReplicaSet whose template equals the Deployment's
/// (ignoring the hash label).
pub fn find_new_replica_set<'a>(d: &Deployment, rs_list: &'a [ReplicaSet]) -> Option<&'a ReplicaSet> {
    let template = deployment_template(d);
    let mut sorted: Vec<&ReplicaSet> = rs_list.iter().collect();
    sorted.sort_by(|a, b| by_creation_timestamp(a, b));
    sorted
        .into_iter()
        .find(|rs| equal_ignore_hash(&rs_template(rs), &template))
}

/// Upstream `FindOldReplicaSets`: `(active old, all old)` — every ReplicaSet except the new one, the
/// first list only those with `spec.replicas > 0`. Input order is kept.
pub fn find_old_replica_sets<'a>(
    d: &Deployment,
    rs_list: &'a [ReplicaSet],
) -> (Vec<&'a ReplicaSet>, Vec<&'a ReplicaSet>) {
    let new_rs = find_new_replica_set(d, rs_list);
    let all: Vec<&ReplicaSet> = rs_list
        .iter()
        .filter(|rs| !new_rs.is_some_and(|n| std::ptr::eq(*rs, n)))
        .collect();
    let active = all.iter().copied().filter(|rs| is_active(rs)).collect();
    (active, all)
}

/// Upstream `FindActiveOrLatest`: with at most one active ReplicaSet, that one (or, with none, the new
/// ReplicaSet, else the newest old one); `None` when several are active.
pub fn find_active_or_latest<'a>(
    new_rs: Option<&'a ReplicaSet>,
    old_rss: &[&'a ReplicaSet],
) -> Option<&'a ReplicaSet> {
    let mut newest_first: Vec<&ReplicaSet> = old_rss.to_vec();
    newest_first.sort_by(|a, b| by_creation_timestamp(b, a));
    let active: Vec<&ReplicaSet> = newest_first
        .iter()
        .copied()
        .chain(new_rs)
        .filter(|rs| is_active(rs))
        .collect();
    match active.len() {
        0 => new_rs.or_else(|| newest_first.first().copied()),
        1 => Some(active[0]),
        _ => None,
    }
}

const SAFE_ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

/// Upstream `rand.SafeEncodeString`: maps every byte through a 27-character alphabet without vowels
/// (so no words are formed) and without look-alike characters.
pub fn safe_encode_string(s: &str) -> String {
    s.bytes()
        .map(|b| SAFE_ALPHABET[usize::from(b) % SAFE_ALPHABET.len()] as char)
        .collect()
}

/// FNV-1a, 32-bit.
fn fnv32a(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5u32, |h, b| {
        (h ^ u32::from(*b)).wrapping_mul(0x0100_0193)
    })
}

/// Upstream `ComputeHash` (see the module docs for what is hashed instead of Go's spew dump).
pub fn compute_hash(template: &PodTemplateSpec, collision_count: Option<i32>) -> String {
    let mut bytes = serde_json::to_vec(template).unwrap_or_default();
    if let Some(count) = collision_count {
        bytes.extend_from_slice(&(count as u32).to_le_bytes());
        bytes.extend_from_slice(&[0u8; 4]);
    }
    safe_encode_string(&fnv32a(&bytes).to_string())
}
