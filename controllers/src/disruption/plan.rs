//! Pure: a PodDisruptionBudget's status from its pods and the scale of their controllers.
//!
//! Upstream: `pkg/controller/disruption/disruption.go` (`getExpectedPodCount`,
//! `countHealthyPods`, `buildDisruptedPodMap`, `updatePdbStatus`, `failSafe`) and
//! `component-helpers/apps/poddisruptionbudget/helpers.go` (`UpdateDisruptionAllowedCondition`,
//! `ConditionsAreUpToDate`). Nothing here reads a clock: `now` is a parameter.
//!
//! ```text
//! expected, desired = get_expected_pod_count(spec, pods, scale of their controllers)
//!   maxUnavailable X      → expected = Σ scale, desired = expected − X (X rounded up if a percent)
//!   minAvailable N        → expected = number of pods, desired = N
//!   minAvailable P%       → expected = Σ scale, desired = ⌈P% × expected⌉
//! disrupted  = build_disrupted_pod_map: the evicted pods not yet deleting, kept 2 minutes
//! healthy    = count_healthy_pods: ready, not deleting, not just evicted
//! allowed    = healthy − desired, never below 0, and 0 while no pod is expected
//! ```
//!
//! A worked example: a Deployment of 3 and `minAvailable: 2`, all three ready. Expected 3
//! (the pods), desired 2, healthy 3, so one disruption is allowed. An eviction spends it
//! (the API server writes `disruptionsAllowed: 0` and notes the pod in `disruptedPods`); until
//! the pod is seen deleting, this planner counts it as unhealthy (healthy 2, allowed 0). The
//! replacement pod becomes ready elsewhere: healthy 3 again, allowed 1, and the next eviction
//! may proceed.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::policy::v1::{PodDisruptionBudget, PodDisruptionBudgetStatus};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use crate::controller_utils::pods::is_pod_ready;

/// How long an evicted pod may stay undeleted before the budget counts it again (upstream
/// `DeletionTimeout`).
pub const DELETION_TIMEOUT: Duration = Duration::from_secs(120);
/// The condition this controller keeps.
pub const DISRUPTION_ALLOWED: &str = "DisruptionAllowed";
/// Its reason when disruptions are allowed.
pub const SUFFICIENT_PODS: &str = "SufficientPods";
/// Its reason when none is.
pub const INSUFFICIENT_PODS: &str = "InsufficientPods";
/// Its reason when the sync failed (upstream `SyncFailedReason`).
pub const SYNC_FAILED: &str = "SyncFailed";

/// The scale of the controllers of a budget's pods (upstream `getExpectedScale`): their sum,
/// and the pods no controller owns.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ExpectedScale {
    /// Σ `spec.replicas` over the distinct controllers of the pods.
    pub count: i32,
    /// Names of the pods without a controller reference.
    pub unmanaged: Vec<String>,
}

/// What `getExpectedPodCount` returns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExpectedCount {
    /// `status.expectedPods`.
    pub expected: i32,
    /// `status.desiredHealthy`.
    pub desired_healthy: i32,
    /// Pods without a controller, for the `UnmanagedPods` event (only when the scale was needed).
    pub unmanaged: Vec<String>,
}

/// Upstream `getExpectedPodCount`. `scale` is the scale of the pods' controllers, or why it
/// could not be found; it is consulted only when the budget needs it (maxUnavailable, or a
/// percentage minAvailable).
pub fn get_expected_pod_count(
    pdb: &PodDisruptionBudget,
    pod_count: usize,
    scale: &Result<ExpectedScale, String>,
) -> Result<ExpectedCount, String> {
    let spec = pdb.spec.as_ref();
    let max_unavailable = spec.and_then(|s| s.max_unavailable.as_ref());
    let min_available = spec.and_then(|s| s.min_available.as_ref());
    match (max_unavailable, min_available) {
        (Some(max), _) => {
            let scale = scale.clone()?;
            let unavailable = scaled_value(max, scale.count)?;
            Ok(ExpectedCount {
                expected: scale.count,
                desired_healthy: (scale.count - unavailable).max(0),
                unmanaged: scale.unmanaged,
            })
        }
        (None, Some(IntOrString::Int(n))) => Ok(ExpectedCount {
            expected: i32::try_from(pod_count).unwrap_or(i32::MAX),
            desired_healthy: *n,
            unmanaged: Vec::new(),
        }),
        (None, Some(percent)) => {
            let scale = scale.clone()?;
            Ok(ExpectedCount {
                expected: scale.count,
                desired_healthy: scaled_value(percent, scale.count)?,
                unmanaged: scale.unmanaged,
            })
        }
        (None, None) => Ok(ExpectedCount {
            expected: 0,
            desired_healthy: 0,
            unmanaged: Vec::new(),
        }),
    }
}

/// `intstr.GetScaledValueFromIntOrPercent(v, total, roundUp=true)`.
pub fn scaled_value(v: &IntOrString, total: i32) -> Result<i32, String> {
    match v {
        IntOrString::Int(n) => Ok(*n),
        IntOrString::String(s) => {
            let percent: i64 = s
                .strip_suffix('%')
                .and_then(|n| n.parse().ok())
                .ok_or_else(|| format!("invalid value for IntOrString: invalid value \"{s}\""))?;
            let scaled = (percent * i64::from(total) + 99).div_euclid(100);
            Ok(i32::try_from(scaled).unwrap_or(i32::MAX))
        }
    }
}

/// What `buildDisruptedPodMap` decides.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DisruptedPods {
    /// The entries to keep: pods evicted less than [`DELETION_TIMEOUT`] ago and not yet deleting.
    pub kept: BTreeMap<String, Time>,
    /// When the oldest kept entry expires: the budget must be looked at again then.
    pub recheck: Option<Timestamp>,
    /// Pods whose entry expired without their deletion being seen (a `NotDeleted` event each).
    pub not_deleted: Vec<String>,
}

/// Upstream `buildDisruptedPodMap`: drops the entries of pods that are gone or deleting, and
/// those older than [`DELETION_TIMEOUT`].
pub fn build_disrupted_pod_map(
    pods: &[Arc<Pod>],
    pdb: &PodDisruptionBudget,
    now: Timestamp,
) -> DisruptedPods {
    let mut out = DisruptedPods::default();
    let Some(disrupted) = pdb.status.as_ref().and_then(|s| s.disrupted_pods.as_ref()) else {
        return out;
    };
    for pod in pods {
        if pod.metadata.deletion_timestamp.is_some() {
            continue;
        }
        let name = pod.metadata.name.clone().unwrap_or_default();
        let Some(since) = disrupted.get(&name) else {
            continue;
        };
        let expected_deletion = since.0 + SignedDuration::try_from(DELETION_TIMEOUT).unwrap_or_default();
        // Upstream keeps an entry at the very instant it expires (`Before`); here it goes, so
        // that the recheck scheduled for that instant finds it expired rather than
        // rescheduling itself for "now" again (the simulated clock does not move on its own).
        if expected_deletion <= now {
            out.not_deleted.push(name);
        } else {
            out.recheck = Some(
                out.recheck
                    .map_or(expected_deletion, |r| r.min(expected_deletion)),
            );
            out.kept.insert(name, since.clone());
        }
    }
    out
}

/// Upstream `countHealthyPods`: ready pods, not deleting, not evicted in the last
/// [`DELETION_TIMEOUT`].
pub fn count_healthy_pods(pods: &[Arc<Pod>], disrupted: &BTreeMap<String, Time>, now: Timestamp) -> i32 {
    let timeout = SignedDuration::try_from(DELETION_TIMEOUT).unwrap_or_default();
    let healthy = pods.iter().filter(|pod| {
        let evicted = pod
            .metadata
            .name
            .as_ref()
            .and_then(|n| disrupted.get(n))
            .is_some_and(|since| since.0 + timeout > now);
        pod.metadata.deletion_timestamp.is_none() && !evicted && is_pod_ready(pod)
    });
    i32::try_from(healthy.count()).unwrap_or(i32::MAX)
}

/// Upstream `updatePdbStatus`: the status to write, or `None` when the budget's status is
/// already this one.
pub fn update_pdb_status(
    pdb: &PodDisruptionBudget,
    current_healthy: i32,
    expected: &ExpectedCount,
    disrupted: BTreeMap<String, Time>,
    now: Timestamp,
) -> Option<PodDisruptionBudgetStatus> {
    let mut allowed = current_healthy - expected.desired_healthy;
    if expected.expected <= 0 || allowed <= 0 {
        allowed = 0;
    }
    let generation = pdb.metadata.generation.unwrap_or(0);
    let old = pdb.status.clone().unwrap_or_default();
    let disrupted = (!disrupted.is_empty()).then_some(disrupted);
    let unchanged = old.current_healthy == current_healthy
        && old.desired_healthy == expected.desired_healthy
        && old.expected_pods == expected.expected
        && old.disruptions_allowed == allowed
        && old.disrupted_pods.clone().filter(|m| !m.is_empty()) == disrupted
        && old.observed_generation.unwrap_or(0) == generation
        && conditions_are_up_to_date(pdb);
    if unchanged {
        return None;
    }
    let mut status = PodDisruptionBudgetStatus {
        current_healthy,
        desired_healthy: expected.desired_healthy,
        expected_pods: expected.expected,
        disruptions_allowed: allowed,
        disrupted_pods: disrupted,
        observed_generation: Some(generation),
        conditions: old.conditions,
    };
    update_disruption_allowed_condition(&mut status, now);
    Some(status)
}

/// Upstream `failSafe`: when the sync failed, at least allow no disruption, and say why.
pub fn fail_safe(pdb: &PodDisruptionBudget, error: &str, now: Timestamp) -> PodDisruptionBudgetStatus {
    let mut status = pdb.status.clone().unwrap_or_default();
    status.disruptions_allowed = 0;
    let observed = status.observed_generation;
    set_status_condition(
        status.conditions.get_or_insert_with(Vec::new),
        "False",
        SYNC_FAILED,
        error,
        observed,
        now,
    );
    status
}

/// `UpdateDisruptionAllowedCondition`: True/SufficientPods while a disruption is allowed,
/// False/InsufficientPods otherwise.
pub fn update_disruption_allowed_condition(status: &mut PodDisruptionBudgetStatus, now: Timestamp) {
    let (value, reason) = if status.disruptions_allowed > 0 {
        ("True", SUFFICIENT_PODS)
    } else {
        ("False", INSUFFICIENT_PODS)
    };
    let observed = status.observed_generation;
    let conditions = status.conditions.get_or_insert_with(Vec::new);
    set_status_condition(conditions, value, reason, "", observed, now);
}

/// `ConditionsAreUpToDate`: the condition exists, matches `disruptionsAllowed`, and the status
/// has observed the current generation.
pub fn conditions_are_up_to_date(pdb: &PodDisruptionBudget) -> bool {
    let Some(status) = pdb.status.as_ref() else {
        return false;
    };
    let Some(c) = status
        .conditions
        .iter()
        .flatten()
        .find(|c| c.type_ == DISRUPTION_ALLOWED)
    else {
        return false;
    };
    if status.observed_generation != pdb.metadata.generation {
        return false;
    }
    if status.disruptions_allowed > 0 {
        c.status == "True" && c.reason == SUFFICIENT_PODS
    } else {
        c.status == "False" && c.reason == INSUFFICIENT_PODS
    }
}

/// `meta.SetStatusCondition` for [`DISRUPTION_ALLOWED`]: the transition time moves only when
/// the status changes.
fn set_status_condition(
    conditions: &mut Vec<Condition>,
    status: &str,
    reason: &str,
    message: &str,
    observed_generation: Option<i64>,
    now: Timestamp,
) {
    let existing = conditions.iter_mut().find(|c| c.type_ == DISRUPTION_ALLOWED);
    let Some(c) = existing else {
        conditions.push(Condition {
            type_: DISRUPTION_ALLOWED.to_string(),
            status: status.to_string(),
            reason: reason.to_string(),
            message: message.to_string(),
            observed_generation,
            last_transition_time: Time(now),
        });
        return;
    };
    if c.status != status {
        c.status = status.to_string();
        c.last_transition_time = Time(now);
    }
    c.reason = reason.to_string();
    c.message = message.to_string();
    c.observed_generation = observed_generation;
}
