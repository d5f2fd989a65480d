//! The sentences a DaemonSet sync records in the causal journal: which nodes get a daemon pod and
//! which pods go and why (`manage`), the failed pods waiting out their backoff, and the rolling
//! update's `maxUnavailable` / `maxSurge` arithmetic (`rollingUpdate`).
//!
//! Upstream: `daemon_controller.go` (`manage`, `podsShouldBeOnNode`) and `update.go`
//! (`rollingUpdate`, `updatedDesiredNodeCounts`). Upstream logs the node lists at `-v=4`
//! ("Nodes needing daemon pods for daemon set") without the reasons.
//!
//! The message functions take plain values and are tested by their exact sentences. The reasons
//! and counts are read again from the same inputs the plans read ([`delete_reason`],
//! [`rolling_counts`]); nothing here changes what the plans decide.

use std::collections::BTreeMap;
use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::DaemonSet;
use k8s_openapi::api::core::v1::{Node, Pod};

use super::placement::{
    hash_label, node_name_of, node_should_run_daemon_pod, required_node_affinity_matches,
};
use super::plan::{ManagePlan, NodeToDaemonPods};
use super::update::{Limits, RollingUpdatePlan, find_updated_pods_on_node, updated_desired_node_counts};
use crate::controller_utils::pods::{is_pod_available, pod_phase};
use crate::runtime::name_of;

pub use crate::runtime::Decision;
use crate::runtime::decision;

/// `manage`: the nodes that get a pod and the pods that go, each with its reason.
pub fn manage_message(nodes: &[String], deletes: &[(String, String)]) -> Decision {
    let mut parts = Vec::new();
    if !nodes.is_empty() {
        parts.push(format!(
            "nodes needing a daemon pod: {} ({})",
            nodes.join(", "),
            nodes.len()
        ));
    }
    if !deletes.is_empty() {
        let list: Vec<String> = deletes.iter().map(|(p, why)| format!("{p} ({why})")).collect();
        parts.push(format!("pods to delete: {}", list.join(", ")));
    }
    decision("manage", parts.join("; "))
}

/// `podsShouldBeOnNode`: failed pods wait out their per-node backoff before they are deleted.
pub fn backoff_wait(after: Duration) -> Decision {
    decision(
        "podsShouldBeOnNode",
        format!(
            "a Failed daemon pod waits out its backoff before it is deleted and replaced: looking again after {}s",
            after.as_secs()
        ),
    )
}

/// The numbers of one `rollingUpdate` pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RollingCounts {
    /// `desiredNumberScheduled`, `maxUnavailable`, `maxSurge`.
    pub limits: Limits,
    /// Nodes without an available pod (maxSurge 0), or nodes already surging (maxSurge > 0).
    pub used: i32,
    /// Nodes still running a pod of an old revision.
    pub outdated: usize,
}

/// `rollingUpdate` deleting old pods and, with surge, creating new ones beside them.
pub fn rolling_update_message(c: &RollingCounts, deletes: &[String], creates: &[String]) -> Decision {
    let l = c.limits;
    let arithmetic = if l.max_surge == 0 {
        format!(
            "maxUnavailable {} of desiredNumberScheduled {}, {} unavailable: room for {}",
            l.max_unavailable,
            l.desired_number_scheduled,
            c.used,
            (l.max_unavailable - c.used).max(0)
        )
    } else {
        format!(
            "maxSurge {} of desiredNumberScheduled {}, {} surging: room for {}",
            l.max_surge,
            l.desired_number_scheduled,
            c.used,
            (l.max_surge - c.used).max(0)
        )
    };
    let mut parts = vec![arithmetic];
    if !creates.is_empty() {
        parts.push(format!(
            "creating new pods beside the old ones on {}",
            creates.join(", ")
        ));
    }
    if !deletes.is_empty() {
        parts.push(format!("deleting old pods {}", deletes.join(", ")));
    }
    parts.push(format!("{} nodes run an old pod", c.outdated));
    decision("rollingUpdate", parts.join("; "))
}

/// `rollingUpdate` with old pods left but no room under the limits.
pub fn rolling_update_wait(c: &RollingCounts) -> Decision {
    let l = c.limits;
    let limit = if l.max_surge == 0 {
        format!(
            "maxUnavailable {} reached ({} unavailable)",
            l.max_unavailable, c.used
        )
    } else {
        format!("maxSurge {} reached ({} surging)", l.max_surge, c.used)
    };
    decision(
        "rollingUpdate",
        format!(
            "{} nodes still run an old pod, but {limit}: waiting for pods to become available",
            c.outdated
        ),
    )
}

/// Why `podsShouldBeOnNode` (or `getUnscheduledPodsWithoutNode`) deletes `pod`.
pub fn delete_reason(
    ds: &DaemonSet,
    nodes: &[&Node],
    by_node: &NodeToDaemonPods<'_>,
    hash: &str,
    pod: &str,
) -> String {
    let Some((node_name, p)) = by_node
        .iter()
        .find_map(|(n, pods)| pods.iter().find(|p| name_of(&p.metadata) == pod).map(|p| (n, *p)))
    else {
        return "no longer found".to_owned();
    };
    let Some(node) = nodes.iter().find(|n| node_name_of(n) == node_name) else {
        return format!("pinned to node {node_name}, which no longer exists");
    };
    if !node_should_run_daemon_pod(node, ds).should_continue_running {
        return format!("node {node_name} no longer fits: {}", misfit(ds, node));
    }
    match pod_phase(p) {
        "Failed" => format!("Failed on node {node_name}; deleted at most once per backoff delay"),
        "Succeeded" => format!("Succeeded on node {node_name}"),
        _ if hash_label(&p.metadata) != hash => {
            format!("old revision on node {node_name}: its new pod is available, or it is not ready")
        }
        _ => format!("one too many on node {node_name}: the oldest daemon pod stays"),
    }
}

/// Which of `NodeShouldRunDaemonPod`'s checks the node fails.
fn misfit(ds: &DaemonSet, node: &Node) -> String {
    let Some(spec) = ds.spec.as_ref().and_then(|s| s.template.spec.as_ref()) else {
        return "the DaemonSet has no pod template".to_owned();
    };
    if let Some(wanted) = spec.node_name.as_deref().filter(|n| !n.is_empty())
        && wanted != node_name_of(node)
    {
        return format!("the template's nodeName is {wanted}");
    }
    if !required_node_affinity_matches(spec, node) {
        return "nodeSelector or required node affinity does not match".to_owned();
    }
    "a NoExecute taint is not tolerated".to_owned()
}

/// The `manage` decisions of `plan`: what it creates and deletes, and the backoff it waits for.
pub fn manage(
    ds: &DaemonSet,
    nodes: &[&Node],
    by_node: &NodeToDaemonPods<'_>,
    hash: &str,
    plan: &ManagePlan,
) -> Vec<Decision> {
    let mut out = Vec::new();
    if !plan.nodes_needing_daemon_pods.is_empty() || !plan.pods_to_delete.is_empty() {
        let deletes: Vec<(String, String)> = plan
            .pods_to_delete
            .iter()
            .map(|p| (p.clone(), delete_reason(ds, nodes, by_node, hash, p)))
            .collect();
        out.push(manage_message(&plan.nodes_needing_daemon_pods, &deletes));
    }
    if let Some(after) = plan.requeue_after {
        out.push(backoff_wait(after));
    }
    out
}

/// The numbers `rollingUpdate` worked from, read again from its inputs.
pub fn rolling_counts(
    ds: &DaemonSet,
    nodes: &[&Node],
    by_node: &NodeToDaemonPods<'_>,
    hash: &str,
    now: Timestamp,
) -> Option<RollingCounts> {
    let mut by_node: BTreeMap<String, Vec<&Pod>> = by_node.clone();
    let limits = updated_desired_node_counts(ds, nodes, &mut by_node).ok()?;
    let min_ready = ds.spec.as_ref().and_then(|s| s.min_ready_seconds).unwrap_or(0);
    let available = |p: &Pod| is_pod_available(p, min_ready, now);
    let (mut used, mut outdated) = (0, 0);
    for pods in by_node.values() {
        let found = find_updated_pods_on_node(ds, pods, hash);
        if matches!(found, Some((_, Some(_)))) {
            outdated += 1;
        }
        let counts = match (limits.max_surge, found) {
            (_, None) => true,
            (0, Some((None, None) | (Some(_), Some(_)))) => true,
            (0, Some((Some(new), None))) => !available(new),
            (0, Some((None, Some(old)))) => !available(old),
            (_, Some((Some(new), Some(_)))) => !available(new),
            _ => false,
        };
        used += i32::from(counts);
    }
    Some(RollingCounts {
        limits,
        used,
        outdated,
    })
}

/// The `rollingUpdate` decision: what it deletes and creates, or the limit that holds old pods
/// back; none when no node runs an old pod.
pub fn rolling_update(counts: &RollingCounts, plan: &RollingUpdatePlan) -> Option<Decision> {
    if !plan.pods_to_delete.is_empty() || !plan.nodes_to_create.is_empty() {
        return Some(rolling_update_message(
            counts,
            &plan.pods_to_delete,
            &plan.nodes_to_create,
        ));
    }
    (counts.outdated > 0).then(|| rolling_update_wait(counts))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(max_surge: i32, max_unavailable: i32, used: i32, outdated: usize) -> RollingCounts {
        RollingCounts {
            limits: Limits {
                max_surge,
                max_unavailable,
                desired_number_scheduled: 3,
            },
            used,
            outdated,
        }
    }

    #[test]
    fn manage_lists_nodes_and_reasons() {
        let d = manage_message(
            &["n1".into(), "n2".into()],
            &[(
                "ds-x".into(),
                "node n3 no longer fits: nodeSelector or required node affinity does not match".into(),
            )],
        );
        assert_eq!(d.function, "manage");
        assert_eq!(
            d.message,
            "nodes needing a daemon pod: n1, n2 (2); pods to delete: ds-x (node n3 no longer fits: \
             nodeSelector or required node affinity does not match)"
        );
        assert_eq!(
            manage_message(&["n1".into()], &[]).message,
            "nodes needing a daemon pod: n1 (1)"
        );
    }

    #[test]
    fn backoff() {
        let d = backoff_wait(Duration::from_secs(20));
        assert_eq!(d.function, "podsShouldBeOnNode");
        assert_eq!(
            d.message,
            "a Failed daemon pod waits out its backoff before it is deleted and replaced: looking again after 20s"
        );
    }

    #[test]
    fn rolling_update_arithmetic() {
        assert_eq!(
            rolling_update_message(&counts(0, 1, 0, 3), &["ds-a".into()], &[]).message,
            "maxUnavailable 1 of desiredNumberScheduled 3, 0 unavailable: room for 1; deleting old pods ds-a; \
             3 nodes run an old pod"
        );
        assert_eq!(
            rolling_update_message(&counts(1, 0, 0, 2), &[], &["n1".into()]).message,
            "maxSurge 1 of desiredNumberScheduled 3, 0 surging: room for 1; creating new pods beside the old ones \
             on n1; 2 nodes run an old pod"
        );
        assert_eq!(
            rolling_update_wait(&counts(0, 1, 1, 2)).message,
            "2 nodes still run an old pod, but maxUnavailable 1 reached (1 unavailable): waiting for pods to become available"
        );
    }
}

/// [`manage`] and [`rolling_update`] over real plans.
#[cfg(test)]
mod plan_tests {
    use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

    use super::*;
    use crate::daemon::backoff::Backoff;
    use crate::daemon::plan::{self, get_nodes_to_daemon_pods};
    use crate::daemon::tests::fixtures::{DsBuilder, ds, node, now, pod, t};
    use crate::daemon::update;

    fn manage_of(d: DsBuilder, nodes: &[Node], pods: &[Pod]) -> Vec<String> {
        let d = d.build();
        let nodes: Vec<&Node> = nodes.iter().collect();
        let by_node = get_nodes_to_daemon_pods(pods.iter(), false);
        let p = plan::manage(&d, &nodes, &by_node, "new", now(), &mut Backoff::default());
        manage(&d, &nodes, &by_node, "new", &p)
            .into_iter()
            .map(|d| d.message)
            .collect()
    }

    fn rolling_of(d: DsBuilder, nodes: &[Node], pods: &[Pod]) -> Option<String> {
        let d = d.build();
        let nodes: Vec<&Node> = nodes.iter().collect();
        let by_node = get_nodes_to_daemon_pods(pods.iter(), false);
        let p = update::rolling_update(&d, &nodes, &by_node, "new", now()).expect("limits");
        let counts = rolling_counts(&d, &nodes, &by_node, "new", now()).expect("limits");
        rolling_update(&counts, &p).map(|d| d.message)
    }

    #[test]
    fn manage_names_the_nodes_and_why_pods_go() {
        let nodes = vec![node("n1").label("role", "agent").build(), node("n2").build()];
        let pods = [pod("a").on("n2").build()];
        assert_eq!(
            manage_of(ds("agent").node_selector("role", "agent"), &nodes, &pods),
            [
                "nodes needing a daemon pod: n1 (1); pods to delete: a (node n2 no longer fits: \
              nodeSelector or required node affinity does not match)"
            ]
        );
        let pods = [
            pod("a").on("n1").hash("new").build(),
            pod("b").pinned("gone").build(),
        ];
        assert_eq!(
            manage_of(ds("agent"), &nodes[..1], &pods),
            ["pods to delete: b (pinned to node gone, which no longer exists)"]
        );
    }

    #[test]
    fn a_placed_daemon_set_decides_nothing() {
        let nodes = vec![node("n1").build()];
        let pods = [pod("a").on("n1").hash("new").ready_since(t(-100)).build()];
        assert!(manage_of(ds("agent"), &nodes, &pods).is_empty());
        assert_eq!(rolling_of(ds("agent"), &nodes, &pods), None);
    }

    #[test]
    fn rolling_update_gives_the_arithmetic_or_the_wait() {
        let nodes = vec![node("n1").build(), node("n2").build()];
        let old = |name: &str, n: &str| pod(name).on(n).hash("old").ready_since(t(-100)).build();
        let pods = [old("a", "n1"), old("b", "n2")];
        assert_eq!(
            rolling_of(ds("agent").unavailable(IntOrString::Int(1)), &nodes, &pods).as_deref(),
            Some(
                "maxUnavailable 1 of desiredNumberScheduled 2, 0 unavailable: room for 1; deleting old pods a; \
                 2 nodes run an old pod"
            )
        );
        let pods = [pod("a").on("n1").hash("new").build(), old("b", "n2")];
        assert_eq!(
            rolling_of(ds("agent").unavailable(IntOrString::Int(1)), &nodes, &pods).as_deref(),
            Some(
                "1 nodes still run an old pod, but maxUnavailable 1 reached (1 unavailable): waiting for pods to \
                 become available"
            )
        );
    }
}
