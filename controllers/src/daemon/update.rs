//! The RollingUpdate strategy: which old pods to delete, or which nodes get a surge pod.
//!
//! Upstream: `pkg/controller/daemon/update.go` (`rollingUpdate`, `findUpdatedPodsOnNode`,
//! `updatedDesiredNodeCounts`) and `pkg/controller/daemon/util/daemonset_util.go` (`SurgeCount`,
//! `UnavailableCount`, `AllowsSurge`).
//!
//! Both limits are percentages of the nodes that should run the DaemonSet, rounded **up** (unlike
//! the Deployment, whose maxUnavailable rounds down); if both come out 0 on a non-empty DaemonSet,
//! one pod may be unavailable. Example: 3 nodes, `maxUnavailable: 50%` → ceil(1.5) = 2.
//!
//! Without surge (`maxSurge` 0) old pods are deleted and `manage` recreates them:
//!
//! ```text
//! per node  no pod, or old+new          → counts as unavailable
//!           only new, not available     → counts as unavailable
//!           only old, not available     → delete it now (counts as unavailable)
//!           only old, available         → candidate, while unavailable < maxUnavailable
//! delete    the unavailable old pods + the first (maxUnavailable − unavailable) candidates
//! ```
//!
//! With surge a new pod is created beside the old one, and `manage` deletes the old one once the
//! new one is available:
//!
//! ```text
//! per node  only old, not available     → a new pod now (or delete the old one if the node no
//!                                          longer fits the DaemonSet)
//!           only old, available         → surge candidate, while surging < maxSurge; on a node that
//!                                          no longer fits: delete, as far as availability allows
//!           old+new, new not available  → counts as surging
//!           old+new, new available      → delete the old one
//! create    the replacements + the first (maxSurge − surging) candidates
//! ```
//!
//! Worked example (3 nodes, `maxSurge: 1`, every old pod available): the first pass creates one new
//! pod on the first node (surging 0 < 1); the next passes see that node surging, so nothing more,
//! until its new pod is available: then its old pod is deleted, the node no longer surges, and the
//! next node gets its new pod. At every moment each node has an available pod.
//!
//! Simplified against upstream: nodes are visited in name order (upstream: Go map order).

use std::collections::BTreeMap;

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::DaemonSet;
use k8s_openapi::api::core::v1::{Node, Pod};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::placement::{get_template_generation, is_pod_updated, node_name_of, node_should_run_daemon_pod};
use super::plan::NodeToDaemonPods;
use crate::controller_utils::pods::is_pod_available;
use crate::deployment::util::get_scaled_value_from_int_or_percent;

/// What one rolling-update pass decided.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RollingUpdatePlan {
    /// Old pods to delete (names).
    pub pods_to_delete: Vec<String>,
    /// Nodes that get a new pod beside their old one.
    pub nodes_to_create: Vec<String>,
}

/// Why the limits cannot be computed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct InvalidLimit(pub String);

/// The update strategy is RollingUpdate (the API server's default).
pub fn is_rolling_update(ds: &DaemonSet) -> bool {
    let type_ = ds
        .spec
        .as_ref()
        .and_then(|s| s.update_strategy.as_ref())
        .and_then(|u| u.type_.as_deref());
    // The API server defaults the type to RollingUpdate.
    matches!(type_, None | Some("RollingUpdate"))
}

fn rolling(ds: &DaemonSet) -> Option<&k8s_openapi::api::apps::v1::RollingUpdateDaemonSet> {
    ds.spec
        .as_ref()?
        .update_strategy
        .as_ref()?
        .rolling_update
        .as_ref()
}

/// Upstream `SurgeCount`: maxSurge of `number_to_schedule`, rounded up; 0 unless RollingUpdate with
/// a maxSurge.
pub fn surge_count(ds: &DaemonSet, number_to_schedule: i32) -> Result<i32, InvalidLimit> {
    if !is_rolling_update(ds) {
        return Ok(0);
    }
    let Some(surge) = rolling(ds).and_then(|r| r.max_surge.as_ref()) else {
        return Ok(0);
    };
    get_scaled_value_from_int_or_percent(surge, number_to_schedule, true)
        .map_err(|e| InvalidLimit(e.to_string()))
}

/// Upstream `UnavailableCount`: maxUnavailable of `number_to_schedule`, rounded up; 0 unless
/// RollingUpdate. A missing value counts as 1, the API server's default (upstream would fail on it,
/// but never sees one).
pub fn unavailable_count(ds: &DaemonSet, number_to_schedule: i32) -> Result<i32, InvalidLimit> {
    if !is_rolling_update(ds) {
        return Ok(0);
    }
    let Some(r) = rolling(ds) else {
        return Ok(0);
    };
    let one = IntOrString::Int(1);
    let value = r.max_unavailable.as_ref().unwrap_or(&one);
    get_scaled_value_from_int_or_percent(value, number_to_schedule, true)
        .map_err(|e| InvalidLimit(e.to_string()))
}

/// Upstream `AllowsSurge`: more than one pod per node may run during an update.
pub fn allows_surge(ds: &DaemonSet) -> bool {
    surge_count(ds, 1).is_ok_and(|s| s > 0)
}

/// The limits of one pass (upstream `updatedDesiredNodeCounts`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// New pods that may run beside old ones.
    pub max_surge: i32,
    /// Nodes that may be without an available pod.
    pub max_unavailable: i32,
    /// Nodes that should run the DaemonSet.
    pub desired_number_scheduled: i32,
}

/// Upstream `updatedDesiredNodeCounts`: the limits for this DaemonSet on these nodes; also adds an
/// empty entry to `node_to_daemon_pods` for every node that should run a pod and has none.
pub fn updated_desired_node_counts(
    ds: &DaemonSet,
    nodes: &[&Node],
    node_to_daemon_pods: &mut NodeToDaemonPods<'_>,
) -> Result<Limits, InvalidLimit> {
    let mut desired = 0;
    for node in nodes {
        if !node_should_run_daemon_pod(node, ds).should_run {
            continue;
        }
        desired += 1;
        node_to_daemon_pods
            .entry(node_name_of(node).to_owned())
            .or_default();
    }
    let max_unavailable = unavailable_count(ds, desired)
        .map_err(|e| InvalidLimit(format!("invalid value for MaxUnavailable: {e}")))?;
    let max_surge =
        surge_count(ds, desired).map_err(|e| InvalidLimit(format!("invalid value for MaxSurge: {e}")))?;
    let max_unavailable = if desired > 0 && max_unavailable == 0 && max_surge == 0 {
        1
    } else {
        max_unavailable
    };
    Ok(Limits {
        max_surge,
        max_unavailable,
        desired_number_scheduled: desired,
    })
}

/// Upstream `findUpdatedPodsOnNode`: the node's one new and one old pod (ignoring pods being
/// deleted); `None` when it has more than one of either (left for `manage` to prune).
pub fn find_updated_pods_on_node<'a>(
    ds: &DaemonSet,
    pods_on_node: &[&'a Pod],
    hash: &str,
) -> Option<(Option<&'a Pod>, Option<&'a Pod>)> {
    let generation = get_template_generation(ds);
    let (mut new, mut old) = (None, None);
    for pod in pods_on_node.iter().copied() {
        if pod.metadata.deletion_timestamp.is_some() {
            continue;
        }
        let slot = if is_pod_updated(pod, hash, generation) {
            &mut new
        } else {
            &mut old
        };
        if slot.is_some() {
            return None;
        }
        *slot = Some(pod);
    }
    Some((new, old))
}

fn name(pod: &Pod) -> String {
    pod.metadata.name.clone().unwrap_or_default()
}

/// Upstream `rollingUpdate` without the writes. `node_to_daemon_pods` is the claimed pods by node
/// (without deleted terminal pods); nodes of the map missing from `nodes` count as nodes that should
/// not run the DaemonSet.
pub fn rolling_update(
    ds: &DaemonSet,
    nodes: &[&Node],
    node_to_daemon_pods: &NodeToDaemonPods<'_>,
    hash: &str,
    now: Timestamp,
) -> Result<RollingUpdatePlan, InvalidLimit> {
    let mut by_node = node_to_daemon_pods.clone();
    let limits = updated_desired_node_counts(ds, nodes, &mut by_node)?;
    let min_ready = ds.spec.as_ref().and_then(|s| s.min_ready_seconds).unwrap_or(0);
    let available = |p: &Pod| is_pod_available(p, min_ready, now);
    let node_objects: BTreeMap<&str, &Node> = nodes.iter().map(|n| (node_name_of(n), *n)).collect();
    let should_run = |node: &str| {
        node_objects
            .get(node)
            .is_some_and(|n| node_should_run_daemon_pod(n, ds).should_run)
    };

    if limits.max_surge == 0 {
        let mut num_unavailable = 0;
        let mut allowed_replacement_pods = Vec::new();
        let mut candidate_pods_to_delete = Vec::new();
        for pods in by_node.values() {
            let Some((new, old)) = find_updated_pods_on_node(ds, pods, hash) else {
                num_unavailable += 1;
                continue;
            };
            match (new, old) {
                (None, None) | (Some(_), Some(_)) => num_unavailable += 1,
                (Some(new), None) => {
                    if !available(new) {
                        num_unavailable += 1;
                    }
                }
                (None, Some(old)) => {
                    if !available(old) {
                        allowed_replacement_pods.push(name(old));
                        num_unavailable += 1;
                    } else if num_unavailable < limits.max_unavailable {
                        candidate_pods_to_delete.push(name(old));
                    }
                }
            }
        }
        let remaining = (limits.max_unavailable - num_unavailable).max(0) as usize;
        let remaining = remaining.min(candidate_pods_to_delete.len());
        let mut pods_to_delete = allowed_replacement_pods;
        pods_to_delete.extend(candidate_pods_to_delete.into_iter().take(remaining));
        return Ok(RollingUpdatePlan {
            pods_to_delete,
            nodes_to_create: Vec::new(),
        });
    }

    let mut old_pods_to_delete = Vec::new();
    let mut should_not_run_pods_to_delete = Vec::new();
    let mut candidate_new_nodes = Vec::new();
    let mut allowed_new_nodes = Vec::new();
    let mut num_surge = 0;
    let mut num_available = 0;
    for (node, pods) in &by_node {
        let Some((new, old)) = find_updated_pods_on_node(ds, pods, hash) else {
            num_surge += 1;
            continue;
        };
        // Availability counts every node, also the ones being given up.
        if let Some(p) = old.or(new)
            && available(p)
        {
            num_available += 1;
        }
        match (new, old) {
            (_, None) => {}
            (None, Some(old)) => {
                if !available(old) {
                    if should_run(node) {
                        allowed_new_nodes.push(node.clone());
                    } else {
                        old_pods_to_delete.push(name(old));
                    }
                } else if !should_run(node) {
                    should_not_run_pods_to_delete.push(name(old));
                } else if num_surge < limits.max_surge {
                    candidate_new_nodes.push(node.clone());
                }
            }
            (Some(new), Some(old)) => {
                if available(new) {
                    old_pods_to_delete.push(name(old));
                } else {
                    num_surge += 1;
                }
            }
        }
    }
    // Pods on nodes that no longer fit go only while the available pods exceed the desired ones,
    // so that moving the DaemonSet between nodes never leaves it without available pods.
    let deletable = (num_available - limits.desired_number_scheduled).max(0) as usize;
    old_pods_to_delete.extend(should_not_run_pods_to_delete.into_iter().take(deletable));
    let remaining = (limits.max_surge - num_surge).max(0) as usize;
    let remaining = remaining.min(candidate_new_nodes.len());
    let mut nodes_to_create = allowed_new_nodes;
    nodes_to_create.extend(candidate_new_nodes.into_iter().take(remaining));
    Ok(RollingUpdatePlan {
        pods_to_delete: old_pods_to_delete,
        nodes_to_create,
    })
}
