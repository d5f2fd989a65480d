//! The DaemonSet's status counters.
//!
//! Upstream: `pkg/controller/daemon/daemon_controller.go` (`updateDaemonSetStatus`,
//! `storeDaemonSetStatus`).
//!
//! Per node that should run the DaemonSet: `desiredNumberScheduled`; if it has daemon pods,
//! `currentNumberScheduled`, and its oldest pod (bound first, then by creation time) decides
//! `numberReady`, `numberAvailable` and `updatedNumberScheduled`. A node that should not run it but
//! has pods counts in `numberMisscheduled`. `numberUnavailable = desired − available`.
//!
//! `collisionCount` is not computed here: it is raised only when a revision name collides (see
//! [`super::history`]) and carried over otherwise.

use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::{DaemonSet, DaemonSetStatus};
use k8s_openapi::api::core::v1::Node;

use super::placement::{get_template_generation, is_pod_updated, node_name_of, node_should_run_daemon_pod};
use super::plan::{NodeToDaemonPods, pod_by_creation_timestamp_and_phase};
use crate::controller_utils::pods::{is_pod_available, is_pod_ready};

/// The counters upstream computes (before they are written).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Nodes that should run a daemon pod.
    pub desired_number_scheduled: i32,
    /// Of those, nodes with at least one daemon pod.
    pub current_number_scheduled: i32,
    /// Nodes with daemon pods that should not run one.
    pub number_misscheduled: i32,
    /// Nodes whose oldest daemon pod is ready.
    pub number_ready: i32,
    /// Nodes whose oldest daemon pod carries the current revision.
    pub updated_number_scheduled: i32,
    /// Nodes whose oldest daemon pod is available.
    pub number_available: i32,
    /// `desired − available`.
    pub number_unavailable: i32,
}

/// Upstream `updateDaemonSetStatus`'s counting.
pub fn calculate_counts(
    ds: &DaemonSet,
    nodes: &[&Node],
    node_to_daemon_pods: &NodeToDaemonPods<'_>,
    hash: &str,
    now: Timestamp,
) -> Counts {
    let mut c = Counts::default();
    let min_ready = ds.spec.as_ref().and_then(|s| s.min_ready_seconds).unwrap_or(0);
    let generation = get_template_generation(ds);
    for node in nodes {
        let should_run = node_should_run_daemon_pod(node, ds).should_run;
        let pods = node_to_daemon_pods
            .get(node_name_of(node))
            .filter(|p| !p.is_empty());
        if !should_run {
            if pods.is_some() {
                c.number_misscheduled += 1;
            }
            continue;
        }
        c.desired_number_scheduled += 1;
        let Some(pods) = pods else { continue };
        c.current_number_scheduled += 1;
        let Some(pod) = pods
            .iter()
            .copied()
            .min_by(|a, b| pod_by_creation_timestamp_and_phase(a, b))
        else {
            continue;
        };
        if is_pod_ready(pod) {
            c.number_ready += 1;
            if is_pod_available(pod, min_ready, now) {
                c.number_available += 1;
            }
        }
        if is_pod_updated(pod, hash, generation) {
            c.updated_number_scheduled += 1;
        }
    }
    c.number_unavailable = c.desired_number_scheduled - c.number_available;
    c
}

/// Upstream `storeDaemonSetStatus`'s early return: the counters are as stored and the stored
/// `observedGeneration` is not behind.
pub fn status_up_to_date(ds: &DaemonSet, c: &Counts) -> bool {
    let s = ds.status.clone().unwrap_or_default();
    let generation = ds.metadata.generation.unwrap_or(0);
    s.desired_number_scheduled == c.desired_number_scheduled
        && s.current_number_scheduled == c.current_number_scheduled
        && s.number_misscheduled == c.number_misscheduled
        && s.number_ready == c.number_ready
        && s.updated_number_scheduled.unwrap_or(0) == c.updated_number_scheduled
        && s.number_available.unwrap_or(0) == c.number_available
        && s.number_unavailable.unwrap_or(0) == c.number_unavailable
        && s.observed_generation.unwrap_or(0) >= generation
}

/// `status` with the counters applied, and `observedGeneration` raised to `generation` when
/// `update_observed_gen` (not while expectations are pending: that generation was not acted on).
pub fn apply_counts(
    status: Option<&DaemonSetStatus>,
    c: &Counts,
    generation: Option<i64>,
    update_observed_gen: bool,
) -> DaemonSetStatus {
    let mut s = status.cloned().unwrap_or_default();
    if update_observed_gen {
        s.observed_generation = generation;
    }
    s.desired_number_scheduled = c.desired_number_scheduled;
    s.current_number_scheduled = c.current_number_scheduled;
    s.number_misscheduled = c.number_misscheduled;
    s.number_ready = c.number_ready;
    s.updated_number_scheduled = Some(c.updated_number_scheduled);
    s.number_available = Some(c.number_available);
    s.number_unavailable = Some(c.number_unavailable);
    s
}

/// Upstream: with minReadySeconds and ready pods not yet available, look again after
/// minReadySeconds (a guard against missed readiness changes).
pub fn availability_requeue_after(ds: &DaemonSet, c: &Counts) -> Option<Duration> {
    let min_ready = ds.spec.as_ref().and_then(|s| s.min_ready_seconds).unwrap_or(0);
    (min_ready > 0 && c.number_ready != c.number_available)
        .then(|| Duration::from_secs(u64::from(min_ready.unsigned_abs())))
}
