//! What one garbage-collection pass deletes: pure functions of the cached pods and nodes.
//!
//! Upstream: `pkg/controller/podgc/gc_controller.go` (`isPodTerminated`, `isPodTerminating`,
//! `gcTerminated`, `gcTerminating`, `gcOrphaned`, `gcUnscheduledTerminating`,
//! `byEvictionAndCreationTimestamp`, `markFailedAndDeletePodWithCondition`),
//! `pkg/kubelet/eviction` (`PodIsEvicted`), `pkg/util/node` (`IsNodeReady`) and
//! `pkg/api/v1/pod/util.go` (`UpdatePodCondition`).
//!
//! ```text
//! gc_terminated(pods, threshold)        phase not Pending/Running/Unknown, beyond `threshold`:
//!                                       the excess, evicted first, then oldest, then by name
//! gc_terminating(pods, nodes)           deletionTimestamp set, its node NotReady and tainted
//!                                       node.kubernetes.io/out-of-service
//! orphaned_node_names(pods, nodes)      nodes pods are bound to that the cache does not know
//! gc_orphaned(pods, deleted)            pods bound to a node confirmed deleted
//! gc_unscheduled_terminating(pods)      deletionTimestamp set, no nodeName
//! mark_failed_patch(pod, cond, now)     the status patch that makes a pod Failed first
//! ```
//!
//! Every function returns pods in the order they are deleted. Nothing here reads a clock or
//! calls the API.

use std::cmp::Ordering;
use std::collections::BTreeSet;
use std::sync::Arc;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::{Node, Pod, PodCondition};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use serde_json::{Value, json};

use crate::controller_utils::pods::{is_terminal_phase, node_name, pod_phase};

/// The taint an administrator puts on a node that is shut down for good (upstream
/// `v1.TaintNodeOutOfService`): its terminating pods may be force-deleted.
pub const TAINT_NODE_OUT_OF_SERVICE: &str = "node.kubernetes.io/out-of-service";

/// Pod condition type of a pod about to be deleted by a controller (upstream `v1.DisruptionTarget`).
pub const DISRUPTION_TARGET: &str = "DisruptionTarget";

/// The reason of the `DisruptionTarget` condition an orphaned pod gets.
pub const DELETION_BY_POD_GC: &str = "DeletionByPodGC";

/// The message of that condition.
pub const NODE_NO_LONGER_EXISTS: &str = "PodGC: node no longer exists";

/// Upstream `isPodTerminated`: any phase but Pending, Running and Unknown (so also a pod with
/// no phase yet, as upstream's empty string).
pub fn is_pod_terminated(pod: &Pod) -> bool {
    !matches!(pod_phase(pod), "Pending" | "Running" | "Unknown")
}

/// Upstream `isPodTerminating` of the pod GC: a deletionTimestamp is set, whatever the phase
/// (unlike [`crate::controller_utils::pods::is_pod_terminating`], which excludes terminal pods).
pub fn is_pod_terminating(pod: &Pod) -> bool {
    pod.metadata.deletion_timestamp.is_some()
}

/// Upstream `eviction.PodIsEvicted`: Failed with reason `Evicted`.
pub fn pod_is_evicted(pod: &Pod) -> bool {
    let status = pod.status.as_ref();
    pod_phase(pod) == "Failed" && status.and_then(|s| s.reason.as_deref()) == Some("Evicted")
}

/// Upstream `nodeutil.IsNodeReady`: the node's `Ready` condition is `True`.
pub fn is_node_ready(node: &Node) -> bool {
    let conditions = node.status.as_ref().and_then(|s| s.conditions.as_ref());
    conditions
        .into_iter()
        .flatten()
        .any(|c| c.type_ == "Ready" && c.status == "True")
}

/// Upstream `taints.TaintKeyExists`.
pub fn taint_key_exists(node: &Node, key: &str) -> bool {
    let taints = node.spec.as_ref().and_then(|s| s.taints.as_ref());
    taints.into_iter().flatten().any(|t| t.key == key)
}

/// Upstream `byEvictionAndCreationTimestamp`: evicted pods first (they are nobody's history),
/// then the oldest, then by name.
pub fn by_eviction_and_creation_timestamp(a: &Pod, b: &Pod) -> Ordering {
    let created = |p: &Pod| p.metadata.creation_timestamp.as_ref().map(|t| t.0);
    pod_is_evicted(b)
        .cmp(&pod_is_evicted(a))
        .then_with(|| created(a).cmp(&created(b)))
        .then_with(|| a.metadata.name.cmp(&b.metadata.name))
}

fn sorted(mut pods: Vec<Arc<Pod>>) -> Vec<Arc<Pod>> {
    pods.sort_by(|a, b| by_eviction_and_creation_timestamp(a, b));
    pods
}

/// Upstream `gcTerminated`: when more than `threshold` pods are terminated, the excess, in
/// deletion order. A threshold of 0 turns this off (upstream only calls it when it is positive).
///
/// Example: threshold 1, pods `a` Failed (created first), `b` Succeeded, `c` Failed: three
/// terminated, two too many, so `a` and `b` go, the newest (`c`) stays.
pub fn gc_terminated(pods: &[Arc<Pod>], threshold: usize) -> Vec<Arc<Pod>> {
    if threshold == 0 {
        return Vec::new();
    }
    let terminated: Vec<Arc<Pod>> = pods.iter().filter(|p| is_pod_terminated(p)).cloned().collect();
    let Some(delete_count) = terminated.len().checked_sub(threshold).filter(|n| *n > 0) else {
        return Vec::new();
    };
    let mut ordered = sorted(terminated);
    ordered.truncate(delete_count);
    ordered
}

/// Upstream `gcTerminating`: terminating pods whose node (found in `nodes`) is not Ready and
/// carries the out-of-service taint. A pod whose node is not known is left to [`gc_orphaned`].
pub fn gc_terminating(pods: &[Arc<Pod>], nodes: &[Arc<Node>]) -> Vec<Arc<Pod>> {
    let out_of_service = |name: &str| {
        nodes.iter().any(|n| {
            n.metadata.name.as_deref() == Some(name)
                && !is_node_ready(n)
                && taint_key_exists(n, TAINT_NODE_OUT_OF_SERVICE)
        })
    };
    let terminating = pods
        .iter()
        .filter(|p| is_pod_terminating(p) && out_of_service(node_name(p)))
        .cloned()
        .collect();
    sorted(terminating)
}

/// The first half of upstream `gcOrphaned`: the names of the nodes pods are bound to that are
/// not among `nodes` (upstream puts each into quarantine before asking the API server).
pub fn orphaned_node_names(pods: &[Arc<Pod>], nodes: &[Arc<Node>]) -> BTreeSet<String> {
    let existing = existing_node_names(nodes);
    pods.iter()
        .map(|p| node_name(p))
        .filter(|n| !n.is_empty() && !existing.contains(*n))
        .map(str::to_string)
        .collect()
}

/// The names of `nodes` (upstream `existingNodeNames`).
pub fn existing_node_names(nodes: &[Arc<Node>]) -> BTreeSet<&str> {
    nodes.iter().filter_map(|n| n.metadata.name.as_deref()).collect()
}

/// The second half of upstream `gcOrphaned`: the pods bound to a node in `deleted` (the nodes
/// whose absence the API server confirmed after the quarantine), in cache order.
pub fn gc_orphaned(pods: &[Arc<Pod>], deleted: &BTreeSet<String>) -> Vec<Arc<Pod>> {
    pods.iter()
        .filter(|p| deleted.contains(node_name(p)))
        .cloned()
        .collect()
}

/// Upstream `gcUnscheduledTerminating`: terminating pods never bound to a node (no kubelet will
/// ever finish their deletion).
pub fn gc_unscheduled_terminating(pods: &[Arc<Pod>]) -> Vec<Arc<Pod>> {
    pods.iter()
        .filter(|p| is_pod_terminating(p) && node_name(p).is_empty())
        .cloned()
        .collect()
}

/// The condition an orphaned pod gets before it is deleted.
pub fn orphaned_condition() -> PodCondition {
    PodCondition {
        type_: DISRUPTION_TARGET.to_string(),
        status: "True".to_string(),
        reason: Some(DELETION_BY_POD_GC.to_string()),
        message: Some(NODE_NO_LONGER_EXISTS.to_string()),
        ..PodCondition::default()
    }
}

/// The first step of upstream `markFailedAndDeletePodWithCondition`: for a pod not yet
/// Succeeded or Failed, the strategic-merge status patch that makes it Failed (so that a Job or
/// a ReplicaSet counts it as gone even if the delete fails), with `condition` added or updated
/// as upstream `UpdatePodCondition` does (its lastTransitionTime `now`, or the old one when the
/// status did not change). `None` for a terminal pod: it is only deleted.
///
/// The patch names the pod's uid, as upstream `PatchPodStatus` does, so it cannot land on a
/// namesake created meanwhile.
pub fn mark_failed_patch(pod: &Pod, condition: Option<&PodCondition>, now: Timestamp) -> Option<Value> {
    if is_terminal_phase(pod_phase(pod)) {
        return None;
    }
    let mut status = json!({"phase": "Failed"});
    if let Some(condition) = condition {
        let mut condition = condition.clone();
        condition.last_transition_time = Some(Time(now));
        let old = pod
            .status
            .as_ref()
            .and_then(|s| s.conditions.as_ref())
            .and_then(|cs| cs.iter().find(|c| c.type_ == condition.type_));
        if let Some(old) = old.filter(|o| o.status == condition.status) {
            condition.last_transition_time = old.last_transition_time.clone();
        }
        // A condition serializes infallibly (strings and a timestamp); Null is never sent.
        let condition = serde_json::to_value(&condition).unwrap_or(Value::Null);
        if !condition.is_null() {
            status["conditions"] = json!([condition]);
        }
    }
    let mut patch = json!({"status": status});
    if let Some(uid) = &pod.metadata.uid {
        patch["metadata"] = json!({"uid": uid});
    }
    Some(patch)
}
