//! What `manage` should do: which nodes need a daemon pod, which pods must go.
//!
//! Upstream: `pkg/controller/daemon/daemon_controller.go` (`manage`, `podsShouldBeOnNode`,
//! `getNodesToDaemonPods`, `getUnscheduledPodsWithoutNode`, `podByCreationTimestampAndPhase`,
//! `failedPodsBackoffKey`).
//!
//! Per node, from [`node_should_run_daemon_pod`] and the node's daemon pods:
//!
//! ```text
//! shouldRun, no pod                 → create one
//! shouldContinueRunning             → delete Failed pods (at most once per backoff delay per node)
//!                                     and Succeeded pods; of the rest
//!                                       no surge: keep the oldest, delete the others
//!                                       surge:    keep the oldest new-hash and the oldest old-hash pod;
//!                                                 delete the old one once it is not ready or the new
//!                                                 one is available; none left and shouldRun → create
//! !shouldContinueRunning, has pods  → delete them all
//! ```
//!
//! plus the unscheduled pods pinned to nodes that no longer exist. Pods already being deleted are
//! left alone everywhere.
//!
//! Simplified against upstream: nodes and pods are visited in name order (upstream: lister order
//! and Go map order), and the plan is a value; the sync raises expectations and writes.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::DaemonSet;
use k8s_openapi::api::core::v1::{Node, Pod};

use super::backoff::Backoff;
use super::placement::{get_target_node_name, hash_label, node_name_of, node_should_run_daemon_pod};
use super::update::allows_surge;
use crate::controller_utils::pods::{is_pod_available, is_pod_ready, node_name, pod_phase};

/// Upstream `BurstReplicas`: at most this many creations, and this many deletions, per sync.
pub const BURST_REPLICAS: usize = 250;

/// Event reason: a Failed daemon pod is deleted (upstream `FailedDaemonPodReason`).
pub const FAILED_DAEMON_POD_REASON: &str = "FailedDaemonPod";
/// Event reason: a Succeeded daemon pod is deleted (upstream `SucceededDaemonPodReason`).
pub const SUCCEEDED_DAEMON_POD_REASON: &str = "SucceededDaemonPod";
/// Event reason: the DaemonSet's selector is empty (upstream `SelectingAllReason`).
pub const SELECTING_ALL_REASON: &str = "SelectingAll";

/// An event `manage` wants recorded on the DaemonSet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlannedEvent {
    /// `Warning` or not (`Normal`).
    pub warning: bool,
    /// Upstream's reason.
    pub reason: &'static str,
    /// Upstream's message.
    pub message: String,
}

/// What one `manage` pass decided.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ManagePlan {
    /// Nodes that get a new daemon pod, in order.
    pub nodes_needing_daemon_pods: Vec<String>,
    /// Names of the pods to delete (in the DaemonSet's namespace).
    pub pods_to_delete: Vec<String>,
    /// Events to record on the DaemonSet.
    pub events: Vec<PlannedEvent>,
    /// Look again after this long (a failed pod waits for its backoff).
    pub requeue_after: Option<Duration>,
}

/// The daemon pods of one DaemonSet grouped by the node they run on or are pinned to.
pub type NodeToDaemonPods<'a> = BTreeMap<String, Vec<&'a Pod>>;

/// Upstream `getNodesToDaemonPods`: the claimed pods by target node. Pods with no target node are
/// skipped; so are terminal pods already being deleted unless `include_deleted_terminal`.
pub fn get_nodes_to_daemon_pods<'a>(
    pods: impl IntoIterator<Item = &'a Pod>,
    include_deleted_terminal: bool,
) -> NodeToDaemonPods<'a> {
    let mut out: NodeToDaemonPods<'a> = BTreeMap::new();
    for pod in pods {
        let terminal = matches!(pod_phase(pod), "Succeeded" | "Failed");
        if !include_deleted_terminal && terminal && pod.metadata.deletion_timestamp.is_some() {
            continue;
        }
        if let Some(node) = get_target_node_name(pod) {
            out.entry(node.to_owned()).or_default().push(pod);
        }
    }
    out
}

/// Upstream `podByCreationTimestampAndPhase`: bound pods first, then the older, then by name.
pub fn pod_by_creation_timestamp_and_phase(a: &Pod, b: &Pod) -> Ordering {
    let (a_bound, b_bound) = (!node_name(a).is_empty(), !node_name(b).is_empty());
    if a_bound != b_bound {
        return if a_bound {
            Ordering::Less
        } else {
            Ordering::Greater
        };
    }
    let created = |p: &Pod| p.metadata.creation_timestamp.as_ref().map(|t| t.0);
    match created(a).cmp(&created(b)) {
        Ordering::Equal => a.metadata.name.cmp(&b.metadata.name),
        other => other,
    }
}

/// Upstream `failedPodsBackoffKey`: `<uid>/<observedGeneration>/<node>`.
pub fn failed_pods_backoff_key(ds: &DaemonSet, node: &str) -> String {
    let uid = ds.metadata.uid.as_deref().unwrap_or("");
    let generation = ds
        .status
        .as_ref()
        .and_then(|s| s.observed_generation)
        .unwrap_or(0);
    format!("{uid}/{generation}/{node}")
}

fn name(pod: &Pod) -> String {
    pod.metadata.name.clone().unwrap_or_default()
}

fn min_ready_seconds(ds: &DaemonSet) -> i32 {
    ds.spec.as_ref().and_then(|s| s.min_ready_seconds).unwrap_or(0)
}

/// Upstream `manage` without the writes: every node's [`pods_should_be_on_node`], then the
/// unscheduled pods of vanished nodes.
pub fn manage(
    ds: &DaemonSet,
    nodes: &[&Node],
    node_to_daemon_pods: &NodeToDaemonPods<'_>,
    hash: &str,
    now: Timestamp,
    backoff: &mut Backoff,
) -> ManagePlan {
    let mut plan = ManagePlan::default();
    for node in nodes {
        pods_should_be_on_node(node, node_to_daemon_pods, ds, hash, now, backoff, &mut plan);
    }
    plan.pods_to_delete
        .extend(get_unscheduled_pods_without_node(nodes, node_to_daemon_pods));
    plan
}

/// Upstream `podsShouldBeOnNode`: adds to `plan` what this node needs.
pub fn pods_should_be_on_node(
    node: &Node,
    node_to_daemon_pods: &NodeToDaemonPods<'_>,
    ds: &DaemonSet,
    hash: &str,
    now: Timestamp,
    backoff: &mut Backoff,
    plan: &mut ManagePlan,
) {
    let should = node_should_run_daemon_pod(node, ds);
    let node_name = node_name_of(node);
    let daemon_pods = node_to_daemon_pods.get(node_name);
    let ns = ds.metadata.namespace.as_deref().unwrap_or("");

    if should.should_run && daemon_pods.is_none() {
        plan.nodes_needing_daemon_pods.push(node_name.to_owned());
        return;
    }
    let daemon_pods: &[&Pod] = daemon_pods.map_or(&[], Vec::as_slice);
    if !should.should_continue_running {
        for pod in daemon_pods {
            if pod.metadata.deletion_timestamp.is_none() {
                plan.pods_to_delete.push(name(pod));
            }
        }
        return;
    }

    let mut running: Vec<&Pod> = Vec::new();
    for pod in daemon_pods.iter().copied() {
        if pod.metadata.deletion_timestamp.is_some() {
            continue;
        }
        match pod_phase(pod) {
            "Failed" => {
                let key = failed_pods_backoff_key(ds, node_name);
                if backoff.is_in_back_off_since_update(&key, now) {
                    let delay = backoff.get(&key);
                    plan.requeue_after = Some(plan.requeue_after.map_or(delay, |d| d.min(delay)));
                    continue;
                }
                backoff.next(&key, now);
                plan.events.push(PlannedEvent {
                    warning: true,
                    reason: FAILED_DAEMON_POD_REASON,
                    message: format!(
                        "Found failed daemon pod {ns}/{} on node {node_name}, will try to kill it",
                        name(pod)
                    ),
                });
                plan.pods_to_delete.push(name(pod));
            }
            "Succeeded" => {
                plan.events.push(PlannedEvent {
                    warning: false,
                    reason: SUCCEEDED_DAEMON_POD_REASON,
                    message: format!(
                        "Found succeeded daemon pod {ns}/{} on node {node_name}, will try to delete it",
                        name(pod)
                    ),
                });
                plan.pods_to_delete.push(name(pod));
            }
            _ => running.push(pod),
        }
    }
    running.sort_by(|a, b| pod_by_creation_timestamp_and_phase(a, b));

    if !allows_surge(ds) {
        // Keep the oldest; a node left with none gets its pod on the next sync.
        plan.pods_to_delete
            .extend(running.iter().skip(1).map(|p| name(p)));
        return;
    }
    if running.len() <= 1 {
        if running.is_empty() && should.should_run {
            plan.nodes_needing_daemon_pods.push(node_name.to_owned());
        }
        return;
    }
    // Surge: at most the oldest new-hash and the oldest old-hash pod survive.
    let mut oldest_new: Option<&Pod> = None;
    let mut oldest_old: Option<&Pod> = None;
    for pod in running {
        let slot = if hash_label(&pod.metadata) == hash {
            &mut oldest_new
        } else {
            &mut oldest_old
        };
        if slot.is_none() {
            *slot = Some(pod);
        } else {
            plan.pods_to_delete.push(name(pod));
        }
    }
    if let (Some(new), Some(old)) = (oldest_new, oldest_old)
        && (!is_pod_ready(old) || is_pod_available(new, min_ready_seconds(ds), now))
    {
        plan.pods_to_delete.push(name(old));
    }
}

/// Upstream `getUnscheduledPodsWithoutNode`: unbound pods pinned to nodes that do not exist (no
/// scheduler will bind them and the pod GC ignores unbound pods).
pub fn get_unscheduled_pods_without_node(
    nodes: &[&Node],
    node_to_daemon_pods: &NodeToDaemonPods<'_>,
) -> Vec<String> {
    let existing: BTreeSet<&str> = nodes.iter().map(|n| node_name_of(n)).collect();
    node_to_daemon_pods
        .iter()
        .filter(|(node, _)| !existing.contains(node.as_str()))
        .flat_map(|(_, pods)| pods.iter())
        .filter(|p| node_name(p).is_empty())
        .map(|p| name(p))
        .collect()
}
