//! Score: which feasible node is best?
//!
//! The default profile's score plugins that need no volume, image or
//! inter-pod information, each 0..=100 after normalization, summed with
//! upstream's default weights:
//!
//! | plugin (upstream file) | weight |
//! |---|---|
//! | `NodeResourcesFit` LeastAllocated (noderesources/least_allocated.go) | 1 |
//! | `NodeResourcesBalancedAllocation` (noderesources/balanced_allocation.go) | 1 |
//! | `TaintToleration` PreferNoSchedule (tainttoleration) | 3 |
//! | `NodeAffinity` preferred terms (nodeaffinity) | 2 |
//! | `PodTopologySpread` system default spreading (podtopologyspread/scoring.go) | 2 |
//!
//! * LeastAllocated: for cpu and memory, `(allocatable - requested) * 100 /
//!   allocatable`, averaged; requested includes the incoming pod and charges
//!   100m / 200Mi for containers that request nothing (upstream
//!   `NonZeroRequested`). Resources the node has none of are left out.
//! * BalancedAllocation: `(1 - |cpuFraction - memFraction| / 2) * 100` with
//!   real requests; skipped (0 everywhere) for pods requesting nothing.
//! * TaintToleration: fewer untolerated `PreferNoSchedule` taints is better.
//! * NodeAffinity: sum of the weights of matching preferred terms,
//!   normalized against the best node.
//! * PodTopologySpread: upstream's system defaults spread pods selected by a
//!   Service / ReplicaSet / ReplicationController / StatefulSet over
//!   `kubernetes.io/hostname` (maxSkew 3) and `topology.kubernetes.io/zone`
//!   (maxSkew 5). Simplified here: the "same workload" test is "same
//!   controller owner UID" and applies only to pods controlled by a
//!   ReplicaSet, ReplicationController or StatefulSet (Services are not
//!   consulted); every node is its own hostname domain; the zone constraint
//!   applies when some feasible node carries the zone label.
//!
//! Upstream breaks ties between equally scored nodes at random; here the
//! lexicographically smallest node name wins, so decisions are reproducible.
//! ImageLocality and InterPodAffinity scoring are not modelled.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Node, Pod};

use crate::filter::{self, tolerations_tolerate};
use crate::resources::{self, Resources, is_terminal};

/// Upstream `MaxNodeScore`.
pub const MAX_NODE_SCORE: i64 = 100;
/// Weight of the least-allocated score.
pub const WEIGHT_LEAST_ALLOCATED: i64 = 1;
/// Weight of the balanced-allocation score.
pub const WEIGHT_BALANCED_ALLOCATION: i64 = 1;
/// Weight of the PreferNoSchedule taint score.
pub const WEIGHT_TAINT_TOLERATION: i64 = 3;
/// Weight of the preferred node affinity score.
pub const WEIGHT_NODE_AFFINITY: i64 = 2;
/// Weight of the topology spread score.
pub const WEIGHT_TOPOLOGY_SPREAD: i64 = 2;

const ZONE_LABEL: &str = "topology.kubernetes.io/zone";
const HOSTNAME_MAX_SKEW: f64 = 3.0;
const ZONE_MAX_SKEW: f64 = 5.0;

/// One node's normalized plugin scores and their weighted total.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeScore {
    /// Node name.
    pub node: String,
    /// Weighted sum of the plugin scores.
    pub total: i64,
    /// NodeResourcesFit (LeastAllocated), 0..=100.
    pub least_allocated: i64,
    /// NodeResourcesBalancedAllocation, 0..=100.
    pub balanced_allocation: i64,
    /// TaintToleration (PreferNoSchedule), 0..=100.
    pub taint_toleration: i64,
    /// NodeAffinity (preferred terms), 0..=100.
    pub node_affinity: i64,
    /// PodTopologySpread (system defaults), 0..=100.
    pub topology_spread: i64,
}

/// Scores the `feasible` nodes for `pod`, best first (ties by node name).
/// `all_nodes` is every node in the cluster (zone spreading counts pods on
/// nodes that did not pass the filters too); `pods_by_node` maps node names
/// to the pods bound there.
pub fn score(
    pod: &Pod,
    feasible: &[&Node],
    all_nodes: &[&Node],
    pods_by_node: &BTreeMap<String, Vec<&Pod>>,
) -> Vec<NodeScore> {
    let names: Vec<String> = feasible.iter().map(|n| node_name(n).to_owned()).collect();
    let on = |name: &str| -> Vec<&Pod> {
        pods_by_node
            .get(name)
            .map(|v| {
                v.iter()
                    .copied()
                    .filter(|p| !is_terminal(p) && !filter::same_pod(p, pod))
                    .collect()
            })
            .unwrap_or_default()
    };

    let least: Vec<i64> = feasible
        .iter()
        .zip(&names)
        .map(|(n, name)| least_allocated(pod, n, &on(name)))
        .collect();
    let balanced: Vec<i64> = if resources::pod_requests(pod).is_zero() {
        vec![0; feasible.len()]
    } else {
        feasible
            .iter()
            .zip(&names)
            .map(|(n, name)| balanced_allocation(pod, n, &on(name)))
            .collect()
    };
    let taints = default_normalize(
        feasible
            .iter()
            .map(|n| intolerable_prefer_no_schedule(pod, n))
            .collect(),
        true,
    );
    let affinity = default_normalize(
        feasible
            .iter()
            .map(|n| preferred_affinity_weight(pod, n))
            .collect(),
        false,
    );
    let spread = topology_spread(pod, feasible, all_nodes, pods_by_node);

    let mut out: Vec<NodeScore> = names
        .into_iter()
        .enumerate()
        .map(|(i, node)| NodeScore {
            node,
            total: WEIGHT_LEAST_ALLOCATED * least[i]
                + WEIGHT_BALANCED_ALLOCATION * balanced[i]
                + WEIGHT_TAINT_TOLERATION * taints[i]
                + WEIGHT_NODE_AFFINITY * affinity[i]
                + WEIGHT_TOPOLOGY_SPREAD * spread[i],
            least_allocated: least[i],
            balanced_allocation: balanced[i],
            taint_toleration: taints[i],
            node_affinity: affinity[i],
            topology_spread: spread[i],
        })
        .collect();
    out.sort_by(|a, b| b.total.cmp(&a.total).then_with(|| a.node.cmp(&b.node)));
    out
}

fn node_name(n: &Node) -> &str {
    n.metadata.name.as_deref().unwrap_or("")
}

/// `(requested, allocatable)` pairs for cpu and memory after adding `pod`.
fn cpu_mem(node: &Node, pod_req: Resources, used: Resources) -> [(i64, i64); 2] {
    let alloc = resources::node_allocatable(node).resources;
    [
        (used.milli_cpu.saturating_add(pod_req.milli_cpu), alloc.milli_cpu),
        (used.memory.saturating_add(pod_req.memory), alloc.memory),
    ]
}

/// NodeResourcesFit LeastAllocated score, 0..=100.
pub fn least_allocated(pod: &Pod, node: &Node, others: &[&Pod]) -> i64 {
    let used = resources::sum_requests(others.iter().copied(), true);
    let pairs = cpu_mem(node, resources::pod_requests_non_zero(pod), used);
    let scored: Vec<i64> = pairs
        .iter()
        .filter(|(_, alloc)| *alloc > 0)
        .map(|&(req, alloc)| {
            if req > alloc {
                0
            } else {
                ((alloc - req) as i128 * 100 / alloc as i128) as i64
            }
        })
        .collect();
    if scored.is_empty() {
        0
    } else {
        scored.iter().sum::<i64>() / scored.len() as i64
    }
}

/// NodeResourcesBalancedAllocation score, 0..=100.
pub fn balanced_allocation(pod: &Pod, node: &Node, others: &[&Pod]) -> i64 {
    let used = resources::sum_requests(others.iter().copied(), false);
    let fractions: Vec<f64> = cpu_mem(node, resources::pod_requests(pod), used)
        .iter()
        .filter(|(_, alloc)| *alloc > 0)
        .map(|&(req, alloc)| (req as f64 / alloc as f64).min(1.0))
        .collect();
    let std = match fractions.as_slice() {
        [a, b] => ((a - b) / 2.0).abs(),
        _ => 0.0,
    };
    ((1.0 - std) * MAX_NODE_SCORE as f64) as i64
}

fn intolerable_prefer_no_schedule(pod: &Pod, node: &Node) -> i64 {
    let tolerations: Vec<_> = pod
        .spec
        .as_ref()
        .and_then(|s| s.tolerations.as_deref())
        .unwrap_or(&[])
        .iter()
        .filter(|t| matches!(t.effect.as_deref(), None | Some("") | Some("PreferNoSchedule")))
        .cloned()
        .collect();
    let taints = node
        .spec
        .as_ref()
        .and_then(|s| s.taints.as_deref())
        .unwrap_or(&[]);
    taints
        .iter()
        .filter(|t| t.effect == "PreferNoSchedule" && !tolerations_tolerate(&tolerations, t))
        .count() as i64
}

fn preferred_affinity_weight(pod: &Pod, node: &Node) -> i64 {
    let Some(terms) = pod
        .spec
        .as_ref()
        .and_then(|s| s.affinity.as_ref())
        .and_then(|a| a.node_affinity.as_ref())
        .and_then(|na| na.preferred_during_scheduling_ignored_during_execution.as_ref())
    else {
        return 0;
    };
    terms
        .iter()
        .filter(|t| t.weight != 0 && filter::term_matches(&t.preference, node) == Some(true))
        .map(|t| i64::from(t.weight))
        .sum()
}

/// Upstream `helper.DefaultNormalizeScore`: scale to 0..=100 against the
/// maximum, optionally reversed (lower raw score is better).
fn default_normalize(raw: Vec<i64>, reverse: bool) -> Vec<i64> {
    let max = raw.iter().copied().max().unwrap_or(0).max(0);
    if max == 0 {
        let fill = if reverse { MAX_NODE_SCORE } else { 0 };
        return vec![fill; raw.len()];
    }
    raw.into_iter()
        .map(|s| {
            let s = MAX_NODE_SCORE * s / max;
            if reverse { MAX_NODE_SCORE - s } else { s }
        })
        .collect()
}

/// The controller owner UID that default spreading groups by, if any.
fn spreading_owner(pod: &Pod) -> Option<&str> {
    let owner = pod
        .metadata
        .owner_references
        .as_ref()?
        .iter()
        .find(|o| o.controller == Some(true))?;
    matches!(
        owner.kind.as_str(),
        "ReplicaSet" | "ReplicationController" | "StatefulSet"
    )
    .then_some(owner.uid.as_str())
}

fn same_owner_count(owner: &str, namespace: Option<&String>, pods: Option<&Vec<&Pod>>) -> i64 {
    pods.into_iter()
        .flatten()
        .filter(|p| {
            !is_terminal(p)
                && p.metadata.deletion_timestamp.is_none()
                && p.metadata.namespace.as_ref() == namespace
                && p.metadata
                    .owner_references
                    .iter()
                    .flatten()
                    .any(|o| o.controller == Some(true) && o.uid == owner)
        })
        .count() as i64
}

/// PodTopologySpread with the system default constraints, normalized.
fn topology_spread(
    pod: &Pod,
    feasible: &[&Node],
    all_nodes: &[&Node],
    pods_by_node: &BTreeMap<String, Vec<&Pod>>,
) -> Vec<i64> {
    let Some(owner) = spreading_owner(pod) else {
        return vec![0; feasible.len()];
    };
    let ns = pod.metadata.namespace.as_ref();
    let zone_of = |n: &Node| {
        n.metadata
            .labels
            .as_ref()
            .and_then(|l| l.get(ZONE_LABEL))
            .cloned()
    };

    let host_weight = ((feasible.len() + 2) as f64).ln();
    let feasible_zones: std::collections::BTreeSet<String> =
        feasible.iter().filter_map(|n| zone_of(n)).collect();
    let zone_weight = ((feasible_zones.len() + 2) as f64).ln();
    let mut zone_counts: BTreeMap<String, i64> = BTreeMap::new();
    if !feasible_zones.is_empty() {
        for n in all_nodes {
            let Some(z) = zone_of(n).filter(|z| feasible_zones.contains(z)) else {
                continue;
            };
            if !filter::required_node_affinity_matches(pod, n) {
                continue;
            }
            *zone_counts.entry(z).or_default() += same_owner_count(owner, ns, pods_by_node.get(node_name(n)));
        }
    }

    let raw: Vec<i64> = feasible
        .iter()
        .map(|n| {
            let here = same_owner_count(owner, ns, pods_by_node.get(node_name(n)));
            let mut s = here as f64 * host_weight + (HOSTNAME_MAX_SKEW - 1.0);
            if let Some(z) = zone_of(n) {
                let c = zone_counts.get(&z).copied().unwrap_or(0);
                s += c as f64 * zone_weight + (ZONE_MAX_SKEW - 1.0);
            }
            s.round() as i64
        })
        .collect();
    let (min, max) = (
        raw.iter().copied().min().unwrap_or(0),
        raw.iter().copied().max().unwrap_or(0),
    );
    raw.into_iter()
        .map(|s| {
            if max == 0 {
                MAX_NODE_SCORE
            } else {
                MAX_NODE_SCORE * (max + min - s) / max
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{NodeBuilder, PodBuilder, expr, node, pod, term};

    struct World {
        nodes: Vec<Node>,
        pods: Vec<Pod>,
    }

    impl World {
        fn new(nodes: Vec<NodeBuilder>, pods: Vec<PodBuilder>) -> World {
            World {
                nodes: nodes.into_iter().map(NodeBuilder::build).collect(),
                pods: pods.into_iter().map(PodBuilder::build).collect(),
            }
        }

        fn rank(&self, p: PodBuilder) -> Vec<NodeScore> {
            let p = p.build();
            let nodes: Vec<&Node> = self.nodes.iter().collect();
            let mut by_node: BTreeMap<String, Vec<&Pod>> = BTreeMap::new();
            for q in &self.pods {
                let n = q
                    .spec
                    .as_ref()
                    .and_then(|s| s.node_name.clone())
                    .unwrap_or_default();
                by_node.entry(n).or_default().push(q);
            }
            score(&p, &nodes, &nodes, &by_node)
        }

        fn order(&self, p: PodBuilder) -> Vec<String> {
            self.rank(p).into_iter().map(|s| s.node).collect()
        }
    }

    #[test]
    fn least_allocated_prefers_emptier_node() {
        let w = World::new(
            vec![node("a").cpu("4").memory("8Gi"), node("b").cpu("4").memory("8Gi")],
            vec![pod("x").requests("2", "4Gi").node_name("a")],
        );
        let ranked = w.rank(pod("p").requests("1", "1Gi"));
        assert_eq!(ranked[0].node, "b");
        // b: cpu (4000-1000)*100/4000 = 75, mem (8-1)/8 = 87 -> 81
        assert_eq!(ranked[0].least_allocated, 81);
        // a: cpu (4000-3000)/4000 = 25, mem (8-5)/8 = 37 -> 31
        assert_eq!(ranked[1].least_allocated, 31);
    }

    #[test]
    fn least_allocated_charges_defaults_for_requestless_pods() {
        let n = node("a").cpu("1").memory("1000Mi").build();
        let besteffort = pod("x").requests("", "").build();
        // 100m of 1000m and 200Mi of 1000Mi used by the incoming pod alone.
        assert_eq!(
            least_allocated(&pod("p").requests("", "").build(), &n, &[]),
            (90 + 80) / 2
        );
        // A pod without containers is charged nothing.
        assert_eq!(least_allocated(&pod("p").build(), &n, &[]), 100);
        // An existing best-effort pod counts the same defaults.
        assert_eq!(
            least_allocated(&pod("p").requests("", "").build(), &n, &[&besteffort]),
            (80 + 60) / 2
        );
    }

    #[test]
    fn least_allocated_over_capacity_and_zero_allocatable() {
        let n = node("a").cpu("1").memory("0").build();
        assert_eq!(
            least_allocated(&pod("p").requests("2", "1Gi").build(), &n, &[]),
            0
        );
        assert_eq!(
            least_allocated(&pod("p").requests("500m", "1Gi").build(), &n, &[]),
            50
        );
    }

    #[test]
    fn balanced_allocation_scores() {
        let n = node("a").cpu("4").memory("4Gi").build();
        assert_eq!(
            balanced_allocation(&pod("p").requests("2", "2Gi").build(), &n, &[]),
            100
        );
        assert_eq!(
            balanced_allocation(&pod("p").requests("4", "0").build(), &n, &[]),
            50
        );
        // best-effort pods skip the plugin entirely
        let w = World::new(vec![node("a")], vec![]);
        assert_eq!(w.rank(pod("p"))[0].balanced_allocation, 0);
    }

    #[test]
    fn ties_break_by_name() {
        let w = World::new(vec![node("c"), node("a"), node("b")], vec![]);
        assert_eq!(w.order(pod("p").requests("1", "1Gi")), ["a", "b", "c"]);
    }

    #[test]
    fn spreads_replicas_of_same_owner() {
        let rs = |name: &str, n: &str| {
            pod(name)
                .requests("100m", "64Mi")
                .owner("ReplicaSet", "web-1")
                .node_name(n)
        };
        let w = World::new(
            vec![
                node("a").cpu("64").memory("256Gi"),
                node("b").cpu("64").memory("256Gi"),
            ],
            vec![
                rs("w1", "a"),
                rs("w2", "a"),
                pod("other").requests("100m", "64Mi").node_name("b"),
            ],
        );
        let ranked = w.rank(pod("w3").requests("100m", "64Mi").owner("ReplicaSet", "web-1"));
        assert_eq!(ranked[0].node, "b", "{ranked:?}");
        assert!(ranked[0].topology_spread > ranked[1].topology_spread);
        // a: 2*ln(4)+2 = 4.77 -> 5; b: 2; score = 100*(5+2-s)/5
        assert_eq!((ranked[0].topology_spread, ranked[1].topology_spread), (100, 40));
        // A pod of a different owner is not pushed away from a.
        let other = w.rank(pod("z").requests("100m", "64Mi").owner("ReplicaSet", "api-1"));
        assert_eq!(
            other.iter().map(|s| s.topology_spread).collect::<Vec<_>>(),
            [100, 100]
        );
        // Bare pods and Job pods do not spread.
        assert_eq!(
            w.rank(pod("bare"))
                .iter()
                .map(|s| s.topology_spread)
                .collect::<Vec<_>>(),
            [0, 0]
        );
        assert_eq!(
            w.rank(pod("j").owner("Job", "j"))
                .iter()
                .map(|s| s.topology_spread)
                .collect::<Vec<_>>(),
            [0, 0]
        );
    }

    #[test]
    fn spreading_beats_small_resource_differences() {
        // a is slightly emptier, but already runs two replicas.
        let rs = |name: &str, n: &str| {
            pod(name)
                .requests("10m", "10Mi")
                .owner("ReplicaSet", "web")
                .node_name(n)
        };
        let w = World::new(
            vec![
                node("a").cpu("8").memory("32Gi"),
                node("b").cpu("8").memory("32Gi"),
            ],
            vec![
                rs("w1", "a"),
                rs("w2", "a"),
                pod("x").requests("500m", "1Gi").node_name("b"),
            ],
        );
        assert_eq!(
            w.order(pod("w3").requests("10m", "10Mi").owner("ReplicaSet", "web")),
            ["b", "a"]
        );
    }

    #[test]
    fn zone_spreading_counts_whole_zone() {
        let rs = |name: &str, n: &str| {
            pod(name)
                .requests("10m", "10Mi")
                .owner("StatefulSet", "db")
                .node_name(n)
        };
        let w = World::new(
            vec![
                node("a1").label(ZONE_LABEL, "a"),
                node("a2").label(ZONE_LABEL, "a"),
                node("b1").label(ZONE_LABEL, "b"),
            ],
            vec![rs("d0", "a1")],
        );
        // a2 is empty but shares zone a with d0; b1 is best.
        assert_eq!(
            w.order(pod("d1").requests("10m", "10Mi").owner("StatefulSet", "db")),
            ["b1", "a2", "a1"]
        );
    }

    #[test]
    fn prefer_no_schedule_taint_is_avoided() {
        let w = World::new(
            vec![node("a").taint("k", "v", "PreferNoSchedule"), node("b")],
            vec![],
        );
        assert_eq!(w.order(pod("p")), ["b", "a"]);
        let ranked = w.rank(pod("p").toleration("k", "Exists", "", "PreferNoSchedule"));
        assert_eq!(
            ranked.iter().map(|s| s.taint_toleration).collect::<Vec<_>>(),
            [100, 100]
        );
        // NoSchedule-only tolerations do not count for PreferNoSchedule taints.
        let ranked = w.rank(pod("p").toleration("k", "Exists", "", "NoSchedule"));
        assert_eq!(ranked[0].node, "b");
    }

    #[test]
    fn preferred_node_affinity() {
        let w = World::new(
            vec![
                node("a"),
                node("b").label("disk", "ssd"),
                node("c").label("gen", "3"),
            ],
            vec![],
        );
        let p = pod("p")
            .preferred(80, term(vec![expr("disk", "In", &["ssd"])]))
            .preferred(20, term(vec![expr("gen", "Exists", &[])]));
        let ranked = w.rank(p);
        assert_eq!(
            ranked
                .iter()
                .map(|s| (s.node.as_str(), s.node_affinity))
                .collect::<Vec<_>>(),
            [("b", 100), ("c", 25), ("a", 0)]
        );
    }

    #[test]
    fn normalize_helper() {
        assert_eq!(default_normalize(vec![0, 1, 2], true), [100, 50, 0]);
        assert_eq!(default_normalize(vec![0, 0], true), [100, 100]);
        assert_eq!(default_normalize(vec![0, 0], false), [0, 0]);
        assert_eq!(default_normalize(vec![3, 1], false), [100, 33]);
    }
}
