//! Filter: may this pod run on this node at all?
//!
//! Runs the default profile's filter plugins that matter without volumes,
//! host ports or inter-pod affinity, in upstream's order, stopping at the
//! first one that rejects the node (as `RunFilterPlugins` does):
//!
//! 1. `NodeUnschedulable` (plugins/nodeunschedulable): a cordoned node
//!    (`spec.unschedulable`) unless the pod tolerates
//!    `node.kubernetes.io/unschedulable:NoSchedule`.
//! 2. `NodeName` (plugins/nodename): `spec.nodeName`, if set, must name the node.
//! 3. `TaintToleration` (plugins/tainttoleration, `ToleratesTaint` in
//!    staging/src/k8s.io/api/core/v1/toleration.go): the first `NoSchedule`
//!    or `NoExecute` taint no toleration covers rejects the node;
//!    `PreferNoSchedule` only affects scoring. Upstream relies on the node
//!    lifecycle controller to turn node conditions into taints
//!    (`TaintNodesByCondition`); miniplane has none, so the taints it would
//!    add are derived here from `status.conditions` (see
//!    [`condition_taints`]).
//! 4. `NodeAffinity` (plugins/nodeaffinity and
//!    staging/src/k8s.io/component-helpers/scheduling/corev1/nodeaffinity):
//!    `spec.nodeSelector` and
//!    `requiredDuringSchedulingIgnoredDuringExecution`; terms are ORed,
//!    requirements inside a term ANDed; an empty term or one that fails to
//!    parse matches nothing.
//! 5. `NodeResourcesFit` (plugins/noderesources/fit.go): pod count, cpu,
//!    memory and ephemeral storage against `status.allocatable` minus what
//!    the non-terminal pods already on the node request. Every shortfall is
//!    reported, not just the first.
//!
//! Every rejection except `NodeResourcesFit`'s is "unresolvable": evicting
//! pods would not change it, which is what the preemption part of the
//! FailedScheduling message reports (see [`crate::decide`]).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use k8s_openapi::api::core::v1::{Node, NodeSelectorRequirement, NodeSelectorTerm, Pod, Taint, Toleration};

use crate::resources::{self, is_terminal};

/// Reason: the node is cordoned.
pub const REASON_UNSCHEDULABLE: &str = "node(s) were unschedulable";
/// Reason: `spec.nodeName` names another node.
pub const REASON_NODE_NAME: &str = "node(s) didn't match the requested node name";
/// Reason: nodeSelector / required node affinity does not match.
pub const REASON_NODE_AFFINITY: &str = "node(s) didn't match Pod's node affinity/selector";
/// Reason: the node is at its pod capacity.
pub const REASON_TOO_MANY_PODS: &str = "Too many pods";
/// Reason: not enough cpu left.
pub const REASON_INSUFFICIENT_CPU: &str = "Insufficient cpu";
/// Reason: not enough memory left.
pub const REASON_INSUFFICIENT_MEMORY: &str = "Insufficient memory";
/// Reason: not enough ephemeral storage left.
pub const REASON_INSUFFICIENT_EPHEMERAL: &str = "Insufficient ephemeral-storage";

/// Taint key for cordoned nodes.
pub const TAINT_UNSCHEDULABLE: &str = "node.kubernetes.io/unschedulable";
/// Taint key for nodes whose Ready condition is False (or missing).
pub const TAINT_NOT_READY: &str = "node.kubernetes.io/not-ready";
/// Taint key for nodes whose Ready condition is Unknown.
pub const TAINT_UNREACHABLE: &str = "node.kubernetes.io/unreachable";

/// The filter plugin that rejected a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Plugin {
    /// plugins/nodeunschedulable
    NodeUnschedulable,
    /// plugins/nodename
    NodeName,
    /// plugins/tainttoleration
    TaintToleration,
    /// plugins/nodeaffinity
    NodeAffinity,
    /// plugins/noderesources (Fit)
    NodeResourcesFit,
}

impl Plugin {
    /// Upstream's plugin name.
    pub fn name(self) -> &'static str {
        match self {
            Plugin::NodeUnschedulable => "NodeUnschedulable",
            Plugin::NodeName => "NodeName",
            Plugin::TaintToleration => "TaintToleration",
            Plugin::NodeAffinity => "NodeAffinity",
            Plugin::NodeResourcesFit => "NodeResourcesFit",
        }
    }
}

/// Why a node cannot take a pod.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unfit {
    /// The plugin that rejected the node.
    pub plugin: Plugin,
    /// Upstream's reason strings, each counted separately in the
    /// FailedScheduling message.
    pub reasons: Vec<String>,
    /// `true` for upstream's `Unschedulable` (evicting lower-priority pods
    /// could help), `false` for `UnschedulableAndUnresolvable`.
    pub resolvable: bool,
}

impl Unfit {
    fn unresolvable(plugin: Plugin, reason: impl Into<String>) -> Unfit {
        Unfit {
            plugin,
            reasons: vec![reason.into()],
            resolvable: false,
        }
    }
}

impl fmt::Display for Unfit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.reasons.join(", "))
    }
}

impl std::error::Error for Unfit {}

/// Runs the filters. `pods_on_node` are the pods bound to `node`; terminal
/// ones (`Succeeded`/`Failed`) and `pod` itself are ignored.
pub fn filter(pod: &Pod, node: &Node, pods_on_node: &[&Pod]) -> Result<(), Unfit> {
    let tolerations = pod
        .spec
        .as_ref()
        .and_then(|s| s.tolerations.as_deref())
        .unwrap_or(&[]);
    let node_name = node.metadata.name.as_deref().unwrap_or("");

    // NodeUnschedulable
    if node.spec.as_ref().and_then(|s| s.unschedulable).unwrap_or(false) {
        let cordon = taint(TAINT_UNSCHEDULABLE, "NoSchedule");
        if !tolerations_tolerate(tolerations, &cordon) {
            return Err(Unfit::unresolvable(
                Plugin::NodeUnschedulable,
                REASON_UNSCHEDULABLE,
            ));
        }
    }

    // NodeName
    if let Some(wanted) = pod.spec.as_ref().and_then(|s| s.node_name.as_deref())
        && !wanted.is_empty()
        && wanted != node_name
    {
        return Err(Unfit::unresolvable(Plugin::NodeName, REASON_NODE_NAME));
    }

    // TaintToleration
    let untolerated = effective_taints(node).into_iter().find(|t| {
        matches!(t.effect.as_str(), "NoSchedule" | "NoExecute") && !tolerations_tolerate(tolerations, t)
    });
    if let Some(t) = untolerated {
        let reason = format!(
            "node(s) had untolerated taint {{{}: {}}}",
            t.key,
            t.value.as_deref().unwrap_or("")
        );
        return Err(Unfit::unresolvable(Plugin::TaintToleration, reason));
    }

    // NodeAffinity
    if !required_node_affinity_matches(pod, node) {
        return Err(Unfit::unresolvable(Plugin::NodeAffinity, REASON_NODE_AFFINITY));
    }

    // NodeResourcesFit
    let others: Vec<&Pod> = pods_on_node
        .iter()
        .copied()
        .filter(|p| !is_terminal(p) && !same_pod(p, pod))
        .collect();
    let shortfalls = insufficient_resources(pod, node, &others);
    if !shortfalls.is_empty() {
        return Err(Unfit {
            plugin: Plugin::NodeResourcesFit,
            reasons: shortfalls.into_iter().map(String::from).collect(),
            resolvable: true,
        });
    }
    Ok(())
}

pub(crate) fn same_pod(a: &Pod, b: &Pod) -> bool {
    a.metadata.namespace == b.metadata.namespace
        && a.metadata.name.is_some()
        && a.metadata.name == b.metadata.name
}

fn taint(key: &str, effect: &str) -> Taint {
    Taint {
        key: key.into(),
        value: None,
        effect: effect.into(),
        time_added: None,
    }
}

/// Upstream `Toleration.ToleratesTaint`: an empty effect matches every
/// effect, an empty key (only valid with `Exists`) matches every key,
/// `Exists` ignores the value and `Equal` (the default) compares it.
pub fn tolerates(toleration: &Toleration, taint: &Taint) -> bool {
    let effect = toleration.effect.as_deref().unwrap_or("");
    if !effect.is_empty() && effect != taint.effect {
        return false;
    }
    let key = toleration.key.as_deref().unwrap_or("");
    if !key.is_empty() && key != taint.key {
        return false;
    }
    match toleration.operator.as_deref().unwrap_or("") {
        "" | "Equal" => toleration.value.as_deref().unwrap_or("") == taint.value.as_deref().unwrap_or(""),
        "Exists" => true,
        _ => false,
    }
}

/// True when any toleration covers the taint.
pub fn tolerations_tolerate(tolerations: &[Toleration], taint: &Taint) -> bool {
    tolerations.iter().any(|t| tolerates(t, taint))
}

/// The `NoSchedule` taints upstream's node lifecycle controller would put on
/// a node because of its conditions: Ready=False (or no Ready condition, as
/// the kubelet registers nodes) gives `not-ready`, Ready=Unknown gives
/// `unreachable`, and MemoryPressure/DiskPressure/PIDPressure/
/// NetworkUnavailable=True give the matching `node.kubernetes.io/*` taint.
pub fn condition_taints(node: &Node) -> Vec<Taint> {
    let conditions = node
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_deref())
        .unwrap_or(&[]);
    let mut out = Vec::new();
    match conditions
        .iter()
        .find(|c| c.type_ == "Ready")
        .map(|c| c.status.as_str())
    {
        Some("True") => {}
        Some("Unknown") => out.push(taint(TAINT_UNREACHABLE, "NoSchedule")),
        _ => out.push(taint(TAINT_NOT_READY, "NoSchedule")),
    }
    for (cond, key) in [
        ("MemoryPressure", "node.kubernetes.io/memory-pressure"),
        ("DiskPressure", "node.kubernetes.io/disk-pressure"),
        ("PIDPressure", "node.kubernetes.io/pid-pressure"),
        ("NetworkUnavailable", "node.kubernetes.io/network-unavailable"),
    ] {
        if conditions.iter().any(|c| c.type_ == cond && c.status == "True") {
            out.push(taint(key, "NoSchedule"));
        }
    }
    out
}

/// `spec.taints` followed by the [`condition_taints`] not already present
/// (same key and effect).
pub fn effective_taints(node: &Node) -> Vec<Taint> {
    let mut taints: Vec<Taint> = node
        .spec
        .as_ref()
        .and_then(|s| s.taints.clone())
        .unwrap_or_default();
    for t in condition_taints(node) {
        if !taints
            .iter()
            .any(|have| have.key == t.key && have.effect == t.effect)
        {
            taints.push(t);
        }
    }
    taints
}

/// `spec.nodeSelector` and required node affinity both match the node.
pub fn required_node_affinity_matches(pod: &Pod, node: &Node) -> bool {
    let Some(spec) = pod.spec.as_ref() else {
        return true;
    };
    let labels = node.metadata.labels.clone().unwrap_or_default();
    if let Some(selector) = spec.node_selector.as_ref()
        && !selector.iter().all(|(k, v)| labels.get(k) == Some(v))
    {
        return false;
    }
    let required = spec
        .affinity
        .as_ref()
        .and_then(|a| a.node_affinity.as_ref())
        .and_then(|na| na.required_during_scheduling_ignored_during_execution.as_ref());
    match required {
        None => true,
        Some(sel) => sel
            .node_selector_terms
            .iter()
            .any(|t| term_matches(t, node) == Some(true)),
    }
}

/// Whether one node-selector term matches the node. `None` for an empty
/// term or one that does not parse (upstream drops both, so they match
/// nothing).
pub fn term_matches(term: &NodeSelectorTerm, node: &Node) -> Option<bool> {
    let exprs = term.match_expressions.as_deref().unwrap_or(&[]);
    let fields = term.match_fields.as_deref().unwrap_or(&[]);
    if exprs.is_empty() && fields.is_empty() {
        return None;
    }
    let empty = BTreeMap::new();
    let labels = node.metadata.labels.as_ref().unwrap_or(&empty);
    let mut all = true;
    for e in exprs {
        all &= label_requirement_matches(e, labels)?;
    }
    let name = node.metadata.name.as_deref().unwrap_or("");
    for f in fields {
        all &= field_requirement_matches(f, name)?;
    }
    Some(all)
}

fn label_requirement_matches(
    req: &NodeSelectorRequirement,
    labels: &BTreeMap<String, String>,
) -> Option<bool> {
    let values = req.values.as_deref().unwrap_or(&[]);
    let have = labels.get(&req.key);
    match req.operator.as_str() {
        "In" | "NotIn" => {
            if values.is_empty() {
                return None;
            }
            let hit = have.is_some_and(|v| values.contains(v));
            Some(if req.operator == "In" { hit } else { !hit })
        }
        "Exists" | "DoesNotExist" => {
            if !values.is_empty() {
                return None;
            }
            Some(have.is_some() == (req.operator == "Exists"))
        }
        "Gt" | "Lt" => {
            let [bound] = values else { return None };
            let bound: i64 = bound.parse().ok()?;
            let Some(v) = have.and_then(|v| v.parse::<i64>().ok()) else {
                return Some(false);
            };
            Some(if req.operator == "Gt" {
                v > bound
            } else {
                v < bound
            })
        }
        _ => None,
    }
}

fn field_requirement_matches(req: &NodeSelectorRequirement, node_name: &str) -> Option<bool> {
    if req.key != "metadata.name" {
        return None;
    }
    let [value] = req.values.as_deref().unwrap_or(&[]) else {
        return None;
    };
    match req.operator.as_str() {
        "In" => Some(value == node_name),
        "NotIn" => Some(value != node_name),
        _ => None,
    }
}

/// The node names a pod's required node affinity pins it to through
/// `matchFields` on `metadata.name` with `In` (upstream NodeAffinity
/// PreFilter). `None` when some term does not pin names (all nodes stay
/// candidates); `Some(empty)` when the terms contradict each other.
pub fn pinned_node_names(pod: &Pod) -> Option<BTreeSet<String>> {
    let terms = &pod
        .spec
        .as_ref()?
        .affinity
        .as_ref()?
        .node_affinity
        .as_ref()?
        .required_during_scheduling_ignored_during_execution
        .as_ref()?
        .node_selector_terms;
    if terms.is_empty() {
        return None;
    }
    let mut union = BTreeSet::new();
    for t in terms {
        let mut term_names: Option<BTreeSet<String>> = None;
        for f in t.match_fields.iter().flatten() {
            if f.key == "metadata.name" && f.operator == "In" {
                let s: BTreeSet<String> = f.values.iter().flatten().cloned().collect();
                term_names = Some(match term_names {
                    None => s,
                    Some(prev) => prev.intersection(&s).cloned().collect(),
                });
            }
        }
        union.extend(term_names?);
    }
    Some(union)
}

/// NodeResourcesFit: which of pods / cpu / memory / ephemeral-storage the
/// node lacks, in upstream's order. `others` are the live pods on the node.
pub fn insufficient_resources(pod: &Pod, node: &Node, others: &[&Pod]) -> Vec<&'static str> {
    let alloc = resources::node_allocatable(node);
    let used = resources::sum_requests(others.iter().copied(), false);
    let want = resources::pod_requests(pod);
    let mut out = Vec::new();
    let live = i64::try_from(others.iter().filter(|p| !is_terminal(p)).count()).unwrap_or(i64::MAX);
    if live.saturating_add(1) > alloc.pods {
        out.push(REASON_TOO_MANY_PODS);
    }
    let short = |want: i64, alloc: i64, used: i64| want > 0 && want > alloc.saturating_sub(used);
    if short(want.milli_cpu, alloc.resources.milli_cpu, used.milli_cpu) {
        out.push(REASON_INSUFFICIENT_CPU);
    }
    if short(want.memory, alloc.resources.memory, used.memory) {
        out.push(REASON_INSUFFICIENT_MEMORY);
    }
    if short(
        want.ephemeral_storage,
        alloc.resources.ephemeral_storage,
        used.ephemeral_storage,
    ) {
        out.push(REASON_INSUFFICIENT_EPHEMERAL);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{NodeBuilder, PodBuilder, container, expr, field_term, node, pod, term};

    fn run(p: PodBuilder, n: NodeBuilder, existing: Vec<PodBuilder>) -> Result<(), Unfit> {
        let existing: Vec<Pod> = existing.into_iter().map(PodBuilder::build).collect();
        let refs: Vec<&Pod> = existing.iter().collect();
        filter(&p.build(), &n.build(), &refs)
    }

    fn reasons(r: Result<(), Unfit>) -> Vec<String> {
        match r {
            Ok(()) => vec![],
            Err(u) => u.reasons,
        }
    }

    #[test]
    fn node_unschedulable() {
        let cases: Vec<(&str, PodBuilder, NodeBuilder, Vec<&str>)> = vec![
            ("schedulable node", pod("p"), node("n"), vec![]),
            (
                "cordoned",
                pod("p"),
                node("n").unschedulable(),
                vec![REASON_UNSCHEDULABLE],
            ),
            (
                "cordoned but tolerated",
                pod("p").toleration(TAINT_UNSCHEDULABLE, "Exists", "", "NoSchedule"),
                node("n").unschedulable(),
                vec![],
            ),
            (
                "toleration for other effect does not help",
                pod("p").toleration(TAINT_UNSCHEDULABLE, "Exists", "", "NoExecute"),
                node("n").unschedulable(),
                vec![REASON_UNSCHEDULABLE],
            ),
            (
                "wildcard toleration",
                pod("p").toleration("", "Exists", "", ""),
                node("n").unschedulable(),
                vec![],
            ),
        ];
        for (name, p, n, want) in cases {
            assert_eq!(reasons(run(p, n, vec![])), want, "{name}");
        }
        let err = run(pod("p"), node("n").unschedulable(), vec![]).unwrap_err();
        assert_eq!((err.plugin, err.resolvable), (Plugin::NodeUnschedulable, false));
    }

    #[test]
    fn node_name() {
        assert_eq!(
            reasons(run(pod("p").node_name("n"), node("n"), vec![])),
            Vec::<String>::new()
        );
        assert_eq!(
            reasons(run(pod("p").node_name("other"), node("n"), vec![])),
            vec![REASON_NODE_NAME]
        );
    }

    #[test]
    fn taint_toleration() {
        let cases: Vec<(&str, PodBuilder, NodeBuilder, Vec<&str>)> = vec![
            ("no taints", pod("p"), node("n"), vec![]),
            (
                "NoSchedule untolerated",
                pod("p"),
                node("n").taint("dedicated", "gpu", "NoSchedule"),
                vec!["node(s) had untolerated taint {dedicated: gpu}"],
            ),
            (
                "NoExecute untolerated",
                pod("p"),
                node("n").taint("k", "", "NoExecute"),
                vec!["node(s) had untolerated taint {k: }"],
            ),
            (
                "PreferNoSchedule ignored",
                pod("p"),
                node("n").taint("k", "v", "PreferNoSchedule"),
                vec![],
            ),
            (
                "Equal with value",
                pod("p").toleration("dedicated", "Equal", "gpu", "NoSchedule"),
                node("n").taint("dedicated", "gpu", "NoSchedule"),
                vec![],
            ),
            (
                "default operator is Equal",
                pod("p").toleration("dedicated", "", "gpu", ""),
                node("n").taint("dedicated", "gpu", "NoSchedule"),
                vec![],
            ),
            (
                "Equal with wrong value",
                pod("p").toleration("dedicated", "Equal", "cpu", "NoSchedule"),
                node("n").taint("dedicated", "gpu", "NoSchedule"),
                vec!["node(s) had untolerated taint {dedicated: gpu}"],
            ),
            (
                "Exists ignores value",
                pod("p").toleration("dedicated", "Exists", "", "NoSchedule"),
                node("n").taint("dedicated", "gpu", "NoSchedule"),
                vec![],
            ),
            (
                "effect mismatch",
                pod("p").toleration("dedicated", "Exists", "", "NoExecute"),
                node("n").taint("dedicated", "gpu", "NoSchedule"),
                vec!["node(s) had untolerated taint {dedicated: gpu}"],
            ),
            (
                "first untolerated taint is reported",
                pod("p").toleration("a", "Exists", "", ""),
                node("n")
                    .taint("a", "1", "NoSchedule")
                    .taint("b", "2", "NoSchedule")
                    .taint("c", "3", "NoExecute"),
                vec!["node(s) had untolerated taint {b: 2}"],
            ),
            (
                "control-plane taint",
                pod("p"),
                node("n").taint("node-role.kubernetes.io/control-plane", "", "NoSchedule"),
                vec!["node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }"],
            ),
            (
                "Ready=False becomes not-ready",
                pod("p"),
                node("n").condition("Ready", "False"),
                vec!["node(s) had untolerated taint {node.kubernetes.io/not-ready: }"],
            ),
            (
                "no Ready condition becomes not-ready",
                pod("p"),
                node("n").no_conditions(),
                vec!["node(s) had untolerated taint {node.kubernetes.io/not-ready: }"],
            ),
            (
                "Ready=Unknown becomes unreachable",
                pod("p"),
                node("n").condition("Ready", "Unknown"),
                vec!["node(s) had untolerated taint {node.kubernetes.io/unreachable: }"],
            ),
            (
                "not-ready tolerated",
                pod("p").toleration(TAINT_NOT_READY, "Exists", "", "NoSchedule"),
                node("n").condition("Ready", "False"),
                vec![],
            ),
            (
                "NoExecute toleration (DefaultTolerationSeconds) does not cover NoSchedule not-ready",
                pod("p").toleration(TAINT_NOT_READY, "Exists", "", "NoExecute"),
                node("n").condition("Ready", "False"),
                vec!["node(s) had untolerated taint {node.kubernetes.io/not-ready: }"],
            ),
            (
                "disk pressure",
                pod("p"),
                node("n").condition("DiskPressure", "True"),
                vec!["node(s) had untolerated taint {node.kubernetes.io/disk-pressure: }"],
            ),
            (
                "explicit not-ready taint not duplicated",
                pod("p").toleration(TAINT_NOT_READY, "Exists", "", ""),
                node("n")
                    .condition("Ready", "False")
                    .taint(TAINT_NOT_READY, "", "NoSchedule"),
                vec![],
            ),
        ];
        for (name, p, n, want) in cases {
            assert_eq!(reasons(run(p, n, vec![])), want, "{name}");
        }
    }

    #[test]
    fn node_affinity() {
        let n = || node("n1").label("disk", "ssd").label("gen", "5");
        let cases: Vec<(&str, PodBuilder, bool)> = vec![
            ("no constraints", pod("p"), true),
            ("nodeSelector match", pod("p").node_selector("disk", "ssd"), true),
            (
                "nodeSelector mismatch",
                pod("p").node_selector("disk", "hdd"),
                false,
            ),
            (
                "nodeSelector missing label",
                pod("p").node_selector("zone", "a"),
                false,
            ),
            (
                "In",
                pod("p").required(term(vec![expr("disk", "In", &["hdd", "ssd"])])),
                true,
            ),
            (
                "In miss",
                pod("p").required(term(vec![expr("disk", "In", &["hdd"])])),
                false,
            ),
            (
                "NotIn",
                pod("p").required(term(vec![expr("disk", "NotIn", &["hdd"])])),
                true,
            ),
            (
                "NotIn absent label",
                pod("p").required(term(vec![expr("zone", "NotIn", &["a"])])),
                true,
            ),
            (
                "NotIn miss",
                pod("p").required(term(vec![expr("disk", "NotIn", &["ssd"])])),
                false,
            ),
            (
                "Exists",
                pod("p").required(term(vec![expr("disk", "Exists", &[])])),
                true,
            ),
            (
                "Exists miss",
                pod("p").required(term(vec![expr("zone", "Exists", &[])])),
                false,
            ),
            (
                "DoesNotExist",
                pod("p").required(term(vec![expr("zone", "DoesNotExist", &[])])),
                true,
            ),
            (
                "DoesNotExist miss",
                pod("p").required(term(vec![expr("disk", "DoesNotExist", &[])])),
                false,
            ),
            (
                "Gt",
                pod("p").required(term(vec![expr("gen", "Gt", &["4"])])),
                true,
            ),
            (
                "Gt equal",
                pod("p").required(term(vec![expr("gen", "Gt", &["5"])])),
                false,
            ),
            (
                "Lt",
                pod("p").required(term(vec![expr("gen", "Lt", &["6"])])),
                true,
            ),
            (
                "Lt miss",
                pod("p").required(term(vec![expr("gen", "Lt", &["5"])])),
                false,
            ),
            (
                "Gt non-numeric label",
                pod("p").required(term(vec![expr("disk", "Gt", &["1"])])),
                false,
            ),
            (
                "Gt two values is invalid",
                pod("p").required(term(vec![expr("gen", "Gt", &["1", "2"])])),
                false,
            ),
            (
                "In without values is invalid",
                pod("p").required(term(vec![expr("disk", "In", &[])])),
                false,
            ),
            (
                "unknown operator",
                pod("p").required(term(vec![expr("disk", "Like", &["ssd"])])),
                false,
            ),
            (
                "requirements ANDed",
                pod("p").required(term(vec![
                    expr("disk", "In", &["ssd"]),
                    expr("gen", "In", &["4"]),
                ])),
                false,
            ),
            (
                "terms ORed",
                pod("p")
                    .required(term(vec![expr("gen", "In", &["4"])]))
                    .required(term(vec![expr("disk", "In", &["ssd"])])),
                true,
            ),
            (
                "empty term matches nothing",
                pod("p").required(term(vec![])),
                false,
            ),
            (
                "invalid term skipped, valid term still matches",
                pod("p")
                    .required(term(vec![expr("gen", "Gt", &["x"])]))
                    .required(term(vec![expr("disk", "Exists", &[])])),
                true,
            ),
            (
                "matchFields name In",
                pod("p").required(field_term(vec![expr("metadata.name", "In", &["n1"])])),
                true,
            ),
            (
                "matchFields name miss",
                pod("p").required(field_term(vec![expr("metadata.name", "In", &["n2"])])),
                false,
            ),
            (
                "matchFields NotIn",
                pod("p").required(field_term(vec![expr("metadata.name", "NotIn", &["n2"])])),
                true,
            ),
            (
                "matchFields other key invalid",
                pod("p").required(field_term(vec![expr("metadata.uid", "In", &["n1"])])),
                false,
            ),
            (
                "nodeSelector and affinity both required",
                pod("p")
                    .node_selector("disk", "hdd")
                    .required(term(vec![expr("disk", "Exists", &[])])),
                false,
            ),
        ];
        for (name, p, fits) in cases {
            let want: Vec<String> = if fits {
                vec![]
            } else {
                vec![REASON_NODE_AFFINITY.into()]
            };
            assert_eq!(reasons(run(p, n(), vec![])), want, "{name}");
        }
    }

    #[test]
    fn pinned_names_follow_prefilter() {
        let pinned = |p: PodBuilder| pinned_node_names(&p.build());
        assert_eq!(pinned(pod("p")), None);
        assert_eq!(
            pinned(pod("p").required(field_term(vec![expr("metadata.name", "In", &["a", "b"])]))),
            Some(["a".to_string(), "b".to_string()].into())
        );
        assert_eq!(
            pinned(
                pod("p")
                    .required(field_term(vec![expr("metadata.name", "In", &["a"])]))
                    .required(term(vec![expr("disk", "Exists", &[])]))
            ),
            None,
            "a term without names lets every node through"
        );
        assert_eq!(
            pinned(pod("p").required(field_term(vec![
                expr("metadata.name", "In", &["a"]),
                expr("metadata.name", "In", &["b"]),
            ]))),
            Some(BTreeSet::new())
        );
    }

    type FitCase = (
        &'static str,
        PodBuilder,
        NodeBuilder,
        Vec<PodBuilder>,
        Vec<&'static str>,
    );

    #[test]
    fn resources_fit() {
        let used = |cpu: &str, mem: &str| pod("other").requests(cpu, mem).node_name("n");
        let cases: Vec<FitCase> = vec![
            (
                "fits empty node",
                pod("p").requests("2", "1Gi"),
                node("n").cpu("2"),
                vec![],
                vec![],
            ),
            (
                "too much cpu",
                pod("p").requests("2500m", "1Gi"),
                node("n").cpu("2"),
                vec![],
                vec![REASON_INSUFFICIENT_CPU],
            ),
            (
                "existing pods count",
                pod("p").requests("1", "1Gi"),
                node("n").cpu("2"),
                vec![used("1500m", "")],
                vec![REASON_INSUFFICIENT_CPU],
            ),
            (
                "exactly full is fine",
                pod("p").requests("500m", ""),
                node("n").cpu("2"),
                vec![used("1500m", "")],
                vec![],
            ),
            (
                "terminal pods release resources",
                pod("p").requests("1", ""),
                node("n").cpu("2"),
                vec![
                    used("1500m", "").phase("Succeeded"),
                    used("1500m", "").phase("Failed"),
                ],
                vec![],
            ),
            (
                "cpu and memory both short",
                pod("p").requests("3", "32Gi"),
                node("n").cpu("2").memory("16Gi"),
                vec![],
                vec![REASON_INSUFFICIENT_CPU, REASON_INSUFFICIENT_MEMORY],
            ),
            (
                "too many pods",
                pod("p"),
                node("n").pods("2"),
                vec![used("", ""), used("", "")],
                vec![REASON_TOO_MANY_PODS],
            ),
            (
                "too many pods listed first",
                pod("p").requests("8", ""),
                node("n").pods("1"),
                vec![used("", "")],
                vec![REASON_TOO_MANY_PODS, REASON_INSUFFICIENT_CPU],
            ),
            (
                "no allocatable: zero pods",
                pod("p"),
                node("n").no_allocatable(),
                vec![],
                vec![REASON_TOO_MANY_PODS],
            ),
            (
                "zero requests fit a zero-cpu node",
                pod("p").requests("", ""),
                node("n").cpu("0").memory("0"),
                vec![],
                vec![],
            ),
            (
                "ephemeral storage",
                pod("p").ephemeral("2Gi"),
                node("n").ephemeral("1Gi"),
                vec![],
                vec![REASON_INSUFFICIENT_EPHEMERAL],
            ),
            (
                "init container max rule",
                pod("p").init_container(container("i", "3", "")).requests("1", ""),
                node("n").cpu("2"),
                vec![],
                vec![REASON_INSUFFICIENT_CPU],
            ),
            (
                "overhead counts",
                pod("p").requests("1900m", "").overhead("200m", "0"),
                node("n").cpu("2"),
                vec![],
                vec![REASON_INSUFFICIENT_CPU],
            ),
        ];
        for (name, p, n, existing, want) in cases {
            assert_eq!(reasons(run(p, n, existing)), want, "{name}");
        }
        let err = run(pod("p").requests("9", ""), node("n"), vec![]).unwrap_err();
        assert_eq!((err.plugin, err.resolvable), (Plugin::NodeResourcesFit, true));
    }

    #[test]
    fn first_failing_plugin_wins() {
        // Cordoned, tainted, wrong labels and too small: only the first is reported.
        let n = node("n").unschedulable().taint("k", "v", "NoSchedule").cpu("1");
        let p = pod("p").node_selector("x", "y").requests("2", "");
        assert_eq!(reasons(run(p, n, vec![])), vec![REASON_UNSCHEDULABLE]);
        let n = node("n").taint("k", "v", "NoSchedule").cpu("1");
        let p = pod("p").node_selector("x", "y").requests("2", "");
        assert_eq!(
            reasons(run(p, n, vec![])),
            vec!["node(s) had untolerated taint {k: v}"]
        );
        let p = pod("p").node_selector("x", "y").requests("2", "");
        assert_eq!(
            reasons(run(p, node("n").cpu("1"), vec![])),
            vec![REASON_NODE_AFFINITY]
        );
    }

    #[test]
    fn toleration_semantics() {
        let t = |k: &str, op: &str, v: &str, e: &str| Toleration {
            key: (!k.is_empty()).then(|| k.into()),
            operator: (!op.is_empty()).then(|| op.into()),
            value: (!v.is_empty()).then(|| v.into()),
            effect: (!e.is_empty()).then(|| e.into()),
            toleration_seconds: None,
        };
        let taint = Taint {
            key: "k".into(),
            value: Some("v".into()),
            effect: "NoSchedule".into(),
            time_added: None,
        };
        assert!(tolerates(&t("k", "Equal", "v", "NoSchedule"), &taint));
        assert!(tolerates(&t("k", "Exists", "", ""), &taint));
        assert!(tolerates(&t("", "Exists", "", "NoSchedule"), &taint));
        assert!(!tolerates(&t("k", "Equal", "", "NoSchedule"), &taint));
        assert!(!tolerates(&t("k", "Gt", "v", ""), &taint));
        assert!(!tolerates(&t("other", "Exists", "", ""), &taint));
    }
}
