//! One scheduling attempt: filter every node, score the survivors, bind to
//! the best, or explain the failure exactly as kube-scheduler's
//! FailedScheduling event does.
//!
//! Follows upstream pkg/scheduler/schedule_one.go (`schedulePod`,
//! `findNodesThatFitPod`), the message format of `FitError.Error` in
//! pkg/scheduler/framework/types.go, and the PostFilter message of
//! pkg/scheduler/framework/plugins/defaultpreemption +
//! pkg/scheduler/framework/preemption:
//!
//! ```text
//! 0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't match Pod's node affinity/selector. preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, 2 Preemption is not helpful for scheduling.
//! ```
//!
//! Each node contributes the reasons of the first filter that rejected it;
//! equal reasons are counted and the `"<count> <reason>"` strings are sorted
//! as strings (so "10 …" sorts before "2 …", as in Go). The preemption part
//! is a second such histogram over what preemption found per node:
//!
//! * unresolvable rejections (everything but NodeResourcesFit) give
//!   "Preemption is not helpful for scheduling";
//! * a resource shortfall on a node with no lower-priority pods gives
//!   "No preemption victims found for incoming pod";
//! * a resource shortfall that remains after removing every lower-priority
//!   pod repeats the filter's reasons.
//!
//! If removing lower-priority pods *would* make room somewhere, upstream
//! evicts them and nominates the node; its event then carries only the
//! filter part. This crate reproduces that message but performs no
//! eviction or nomination. `preemptionPolicy: Never` yields
//! "preemption: not eligible due to preemptionPolicy=Never.". With no nodes
//! at all the message is upstream's "no nodes available to schedule pods".
//!
//! A `matchFields` `metadata.name In` node affinity (how DaemonSet pods are
//! pinned) narrows the candidate nodes up front as upstream's NodeAffinity
//! PreFilter does; the other nodes are reported as "node(s) didn't satisfy
//! plugin(s) \[NodeAffinity\]", and contradictory pins as "pod affinity terms
//! conflict". Scheduling gates, `schedulerName`, nominated nodes and
//! percentageOfNodesToScore are the caller's business or not modelled.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Node, Pod};

use crate::filter::{self, Unfit};
use crate::resources::is_terminal;
use crate::score;

/// Message when the cluster has no nodes (upstream `ErrNoNodesAvailable`).
pub const NO_NODES_AVAILABLE: &str = "no nodes available to schedule pods";
/// Preemption status for nodes where evicting pods cannot help.
pub const PREEMPTION_NOT_HELPFUL: &str = "Preemption is not helpful for scheduling";
/// Preemption status for nodes without lower-priority pods.
pub const NO_PREEMPTION_VICTIMS: &str = "No preemption victims found for incoming pod";
/// Preemption message for `preemptionPolicy: Never` pods.
pub const NOT_ELIGIBLE_NEVER: &str = "not eligible due to preemptionPolicy=Never.";
/// PreFilter rejection for contradictory `metadata.name` pins.
pub const AFFINITY_TERMS_CONFLICT: &str = "pod affinity terms conflict";

/// The outcome of one scheduling attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Bind the pod to this node.
    Bind(String),
    /// No node fits; `message` is the FailedScheduling event message (also
    /// the PodScheduled=False condition message).
    Unschedulable {
        /// Upstream-formatted explanation.
        message: String,
    },
}

/// Schedules `pod` onto one of `nodes`. `pods_by_node` maps node names to
/// the pods bound there (terminal pods are ignored).
pub fn schedule(pod: &Pod, nodes: &[&Node], pods_by_node: &BTreeMap<String, Vec<&Pod>>) -> Decision {
    if nodes.is_empty() {
        return Decision::Unschedulable {
            message: NO_NODES_AVAILABLE.to_owned(),
        };
    }
    let total = nodes.len();
    let name_of = |n: &Node| n.metadata.name.clone().unwrap_or_default();
    let pods_on = |name: &str| pods_by_node.get(name).map(Vec::as_slice).unwrap_or(&[]);

    // NodeAffinity PreFilter.
    let pinned = filter::pinned_node_names(pod);
    if pinned.as_ref().is_some_and(|s| s.is_empty()) {
        let message = format!("0/{total} nodes are available: {AFFINITY_TERMS_CONFLICT}.");
        let absent = (0..total).map(|_| vec![PREEMPTION_NOT_HELPFUL.to_owned()]);
        return Decision::Unschedulable {
            message: with_preemption(pod, message, total, || Some(absent.collect())),
        };
    }

    let mut feasible: Vec<&Node> = Vec::new();
    let mut rejected: Vec<(&Node, Unfit)> = Vec::new();
    for &node in nodes {
        let name = name_of(node);
        if pinned.as_ref().is_some_and(|s| !s.contains(&name)) {
            let reason = format!(
                "node(s) didn't satisfy plugin(s) [{}]",
                filter::Plugin::NodeAffinity.name()
            );
            rejected.push((
                node,
                Unfit {
                    plugin: filter::Plugin::NodeAffinity,
                    reasons: vec![reason],
                    resolvable: false,
                },
            ));
            continue;
        }
        match filter::filter(pod, node, pods_on(&name)) {
            Ok(()) => feasible.push(node),
            Err(unfit) => rejected.push((node, unfit)),
        }
    }

    if !feasible.is_empty() {
        let ranked = score::score(pod, &feasible, nodes, pods_by_node);
        if let Some(best) = ranked.into_iter().next() {
            return Decision::Bind(best.node);
        }
    }

    let message = histogram_message(total, rejected.iter().map(|(_, u)| u.reasons.clone()));
    let preemption = || preemption_statuses(pod, &rejected, pods_by_node);
    Decision::Unschedulable {
        message: with_preemption(pod, message, total, preemption),
    }
}

/// The message of a PreFilter rejection that no node can resolve (the
/// VolumeBinding plugin's, [`crate::volumes`]): `reason` for every node, and
/// preemption cannot help.
pub fn prefilter_rejected(pod: &Pod, total: usize, reason: &str) -> String {
    let message = format!("0/{total} nodes are available: {reason}.");
    let absent = (0..total).map(|_| vec![PREEMPTION_NOT_HELPFUL.to_owned()]);
    with_preemption(pod, message, total, || Some(absent.collect()))
}

/// `0/<total> nodes are available: <sorted "count reason" list>.`
pub fn histogram_message(total: usize, per_node: impl IntoIterator<Item = Vec<String>>) -> String {
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for reasons in per_node {
        for r in reasons {
            *counts.entry(r).or_default() += 1;
        }
    }
    let mut parts: Vec<String> = counts.into_iter().map(|(r, c)| format!("{c} {r}")).collect();
    parts.sort();
    let mut msg = format!("0/{total} nodes are available:");
    if !parts.is_empty() {
        msg.push(' ');
        msg.push_str(&parts.join(", "));
        msg.push('.');
    }
    msg
}

/// Appends the PostFilter (preemption) part. `statuses` yields one reason
/// list per node, or `None` when preemption would succeed somewhere.
fn with_preemption(
    pod: &Pod,
    message: String,
    total: usize,
    statuses: impl FnOnce() -> Option<Vec<Vec<String>>>,
) -> String {
    let spec = pod.spec.as_ref();
    if spec.and_then(|s| s.preemption_policy.as_deref()) == Some("Never") {
        return format!("{message} preemption: {NOT_ELIGIBLE_NEVER}");
    }
    match statuses() {
        Some(per_node) => format!("{message} preemption: {}", histogram_message(total, per_node)),
        None => message,
    }
}

fn priority(p: &Pod) -> i32 {
    p.spec.as_ref().and_then(|s| s.priority).unwrap_or(0)
}

/// What preemption would report for each rejected node (every node is
/// rejected when this runs), or `None` if evicting lower-priority pods
/// would make room on some node.
fn preemption_statuses(
    pod: &Pod,
    rejected: &[(&Node, Unfit)],
    pods_by_node: &BTreeMap<String, Vec<&Pod>>,
) -> Option<Vec<Vec<String>>> {
    let mine = priority(pod);
    let mut out = Vec::with_capacity(rejected.len());
    for (node, unfit) in rejected {
        if !unfit.resolvable {
            out.push(vec![PREEMPTION_NOT_HELPFUL.to_owned()]);
            continue;
        }
        let name = node.metadata.name.as_deref().unwrap_or("");
        let live: Vec<&Pod> = pods_by_node
            .get(name)
            .map(|v| {
                v.iter()
                    .copied()
                    .filter(|p| !is_terminal(p) && !filter::same_pod(p, pod))
                    .collect()
            })
            .unwrap_or_default();
        let survivors: Vec<&Pod> = live.iter().copied().filter(|p| priority(p) >= mine).collect();
        if survivors.len() == live.len() {
            out.push(vec![NO_PREEMPTION_VICTIMS.to_owned()]);
            continue;
        }
        match filter::filter(pod, node, &survivors) {
            Ok(()) => return None,
            Err(still) => out.push(still.reasons),
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{NodeBuilder, PodBuilder, expr, field_term, node, pod, term};

    fn run(nodes: Vec<NodeBuilder>, existing: Vec<PodBuilder>, p: PodBuilder) -> Decision {
        let nodes: Vec<Node> = nodes.into_iter().map(NodeBuilder::build).collect();
        let existing: Vec<Pod> = existing.into_iter().map(PodBuilder::build).collect();
        let node_refs: Vec<&Node> = nodes.iter().collect();
        let mut by_node: BTreeMap<String, Vec<&Pod>> = BTreeMap::new();
        for q in &existing {
            let n = q
                .spec
                .as_ref()
                .and_then(|s| s.node_name.clone())
                .unwrap_or_default();
            by_node.entry(n).or_default().push(q);
        }
        schedule(&p.build(), &node_refs, &by_node)
    }

    fn msg(d: Decision) -> String {
        match d {
            Decision::Unschedulable { message } => message,
            Decision::Bind(n) => panic!("unexpectedly bound to {n}"),
        }
    }

    #[test]
    fn binds_to_only_fitting_node() {
        let d = run(
            vec![node("a").cpu("1"), node("b").cpu("4")],
            vec![],
            pod("p").requests("2", ""),
        );
        assert_eq!(d, Decision::Bind("b".into()));
    }

    #[test]
    fn binds_to_least_loaded() {
        let d = run(
            vec![node("a"), node("b")],
            vec![pod("x").requests("3", "8Gi").node_name("a")],
            pod("p").requests("500m", "1Gi"),
        );
        assert_eq!(d, Decision::Bind("b".into()));
    }

    #[test]
    fn no_nodes() {
        assert_eq!(
            msg(run(vec![], vec![], pod("p"))),
            "no nodes available to schedule pods"
        );
    }

    #[test]
    fn affinity_and_cpu_mixed() {
        let m = msg(run(
            vec![node("a").cpu("1").label("disk", "ssd"), node("b"), node("c")],
            vec![],
            pod("p").requests("2", "").node_selector("disk", "ssd"),
        ));
        assert_eq!(
            m,
            "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't match Pod's node affinity/selector. \
             preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, \
             2 Preemption is not helpful for scheduling."
        );
    }

    #[test]
    fn all_unresolvable() {
        let m = msg(run(
            vec![node("a"), node("b"), node("c")],
            vec![],
            pod("p").node_selector("disk", "ssd"),
        ));
        assert_eq!(
            m,
            "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector. \
             preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
        );
    }

    #[test]
    fn taints_unschedulable_and_not_ready() {
        let m = msg(run(
            vec![
                node("cp").taint("node-role.kubernetes.io/control-plane", "", "NoSchedule"),
                node("w1").condition("Ready", "False"),
                node("w2").unschedulable(),
            ],
            vec![],
            pod("p"),
        ));
        assert_eq!(
            m,
            "0/3 nodes are available: 1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }, \
             1 node(s) had untolerated taint {node.kubernetes.io/not-ready: }, 1 node(s) were unschedulable. \
             preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
        );
    }

    #[test]
    fn multiple_reasons_per_node_each_counted() {
        let m = msg(run(
            vec![node("a").cpu("1").memory("1Gi"), node("b").cpu("1")],
            vec![],
            pod("p").requests("2", "2Gi"),
        ));
        assert_eq!(
            m,
            "0/2 nodes are available: 1 Insufficient memory, 2 Insufficient cpu. \
             preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod."
        );
    }

    #[test]
    fn counts_sort_as_strings() {
        let mut nodes: Vec<NodeBuilder> = (0..10)
            .map(|i| node(&format!("t{i}")).taint("k", "v", "NoSchedule"))
            .collect();
        nodes.push(node("x").cpu("1"));
        nodes.push(node("y").cpu("1"));
        let m = msg(run(nodes, vec![], pod("p").requests("2", "")));
        assert_eq!(
            m,
            "0/12 nodes are available: 10 node(s) had untolerated taint {k: v}, 2 Insufficient cpu. \
             preemption: 0/12 nodes are available: 10 Preemption is not helpful for scheduling, \
             2 No preemption victims found for incoming pod."
        );
    }

    #[test]
    fn too_many_pods() {
        let m = msg(run(
            vec![node("a").pods("1")],
            vec![pod("x").node_name("a")],
            pod("p"),
        ));
        assert_eq!(
            m,
            "0/1 nodes are available: 1 Too many pods. \
             preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."
        );
    }

    #[test]
    fn preemption_never() {
        let m = msg(run(
            vec![node("a").cpu("1")],
            vec![],
            pod("p").requests("2", "").preemption_never(),
        ));
        assert_eq!(
            m,
            "0/1 nodes are available: 1 Insufficient cpu. preemption: not eligible due to preemptionPolicy=Never."
        );
    }

    #[test]
    fn lower_priority_victims_that_do_not_free_enough() {
        let m = msg(run(
            vec![node("a").cpu("2")],
            vec![
                pod("low").requests("500m", "").priority(-10).node_name("a"),
                pod("hi").requests("1500m", "").node_name("a"),
            ],
            pod("p").requests("1", ""),
        ));
        assert_eq!(
            m,
            "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 Insufficient cpu."
        );
    }

    #[test]
    fn preemption_would_help_drops_the_preemption_part() {
        let m = msg(run(
            vec![node("a").cpu("2")],
            vec![pod("low").requests("1500m", "").priority(-10).node_name("a")],
            pod("p").requests("1", ""),
        ));
        assert_eq!(m, "0/1 nodes are available: 1 Insufficient cpu.");
    }

    #[test]
    fn daemonset_style_pin() {
        let pin = |n: &str| pod("ds").required(field_term(vec![expr("metadata.name", "In", &[n])]));
        let nodes = || vec![node("a").cpu("1"), node("b"), node("c")];
        assert_eq!(run(nodes(), vec![], pin("b")), Decision::Bind("b".into()));
        let m = msg(run(nodes(), vec![], pin("a").requests("2", "")));
        assert_eq!(
            m,
            "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't satisfy plugin(s) [NodeAffinity]. \
             preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, \
             2 Preemption is not helpful for scheduling."
        );
        let m = msg(run(nodes(), vec![], pin("gone")));
        assert_eq!(
            m,
            "0/3 nodes are available: 3 node(s) didn't satisfy plugin(s) [NodeAffinity]. \
             preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
        );
    }

    #[test]
    fn conflicting_pins() {
        let p = pod("p").required(field_term(vec![
            expr("metadata.name", "In", &["a"]),
            expr("metadata.name", "In", &["b"]),
        ]));
        assert_eq!(
            msg(run(vec![node("a"), node("b")], vec![], p)),
            "0/2 nodes are available: pod affinity terms conflict. \
             preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
        );
    }

    #[test]
    fn tolerated_taint_and_affinity_bind() {
        let d = run(
            vec![
                node("gpu")
                    .taint("dedicated", "gpu", "NoSchedule")
                    .label("accel", "nvidia"),
                node("cpu"),
            ],
            vec![],
            pod("p")
                .toleration("dedicated", "Equal", "gpu", "NoSchedule")
                .required(term(vec![expr("accel", "In", &["nvidia"])])),
        );
        assert_eq!(d, Decision::Bind("gpu".into()));
    }

    #[test]
    fn replicas_spread_across_nodes() {
        // Schedule four replicas one after another; they alternate.
        let nodes: Vec<Node> = ["a", "b"].iter().map(|n| node(n).build()).collect();
        let node_refs: Vec<&Node> = nodes.iter().collect();
        let mut placed: Vec<Pod> = Vec::new();
        for i in 0..4 {
            let p = pod(&format!("web-{i}"))
                .requests("100m", "128Mi")
                .owner("ReplicaSet", "web")
                .build();
            let mut by_node: BTreeMap<String, Vec<&Pod>> = BTreeMap::new();
            for q in &placed {
                let n = q
                    .spec
                    .as_ref()
                    .and_then(|s| s.node_name.clone())
                    .unwrap_or_default();
                by_node.entry(n).or_default().push(q);
            }
            let Decision::Bind(n) = schedule(&p, &node_refs, &by_node) else {
                panic!("unschedulable")
            };
            let mut p = p;
            if let Some(s) = p.spec.as_mut() {
                s.node_name = Some(n);
            }
            placed.push(p);
        }
        let where_: Vec<String> = placed
            .iter()
            .filter_map(|p| p.spec.as_ref()?.node_name.clone())
            .collect();
        assert_eq!(where_, ["a", "b", "a", "b"]);
    }
}
