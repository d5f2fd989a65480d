//! Where a DaemonSet's pods belong: which nodes should run one, and the pod made for a node.
//!
//! Upstream: `pkg/controller/daemon/daemon_controller.go` (`NodeShouldRunDaemonPod`, `predicates`,
//! `NewPod`) and `pkg/controller/daemon/util/daemonset_util.go` (`AddOrUpdateDaemonPodTolerations`,
//! `CreatePodTemplate`, `ReplaceDaemonSetPodNodeNameNodeAffinity`, `GetTargetNodeName`,
//! `IsPodUpdated`, `GetTemplateGeneration`).
//!
//! The two predicates are written here rather than borrowed from `scheduler-stub/src/filter.rs`
//! (`tolerations_tolerate`, `required_node_affinity_matches`): `scheduler-stub` depends on this
//! crate, so this crate cannot depend on it. [`toleration_tolerates_taint`] is upstream's
//! `Toleration.ToleratesTaint`, [`find_matching_untolerated_taint`] component-helpers'
//! `FindMatchingUntoleratedTaint`, and [`required_node_affinity_matches`] component-helpers'
//! `nodeaffinity.GetRequiredNodeAffinity(pod).Match(node)`.
//!
//! As upstream, only `spec.taints` count here: a node's conditions become taints through the node
//! lifecycle controller, not through this controller.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::DaemonSet;
use k8s_openapi::api::core::v1::{
    Affinity, Node, NodeAffinity, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm, Pod, PodSpec,
    PodTemplateSpec, Taint, Toleration,
};

/// Label every daemon pod and revision carries: the hash of its revision
/// (upstream `apps.DefaultDaemonSetUniqueLabelKey` = `ControllerRevisionHashLabelKey`).
pub const DEFAULT_DAEMON_SET_UNIQUE_LABEL_KEY: &str = "controller-revision-hash";
/// Legacy label of pods made while the DaemonSet carried [`TEMPLATE_GENERATION_ANNOTATION`]
/// (upstream `extensions.DaemonSetTemplateGenerationKey`).
pub const DAEMON_SET_TEMPLATE_GENERATION_KEY: &str = "pod-template-generation";
/// The deprecated annotation with the DaemonSet's template generation
/// (upstream `apps.DeprecatedTemplateGeneration`).
pub const TEMPLATE_GENERATION_ANNOTATION: &str = "deprecated.daemonset.template.generation";

/// Taint of a node whose Ready condition is not True.
pub const TAINT_NODE_NOT_READY: &str = "node.kubernetes.io/not-ready";
/// Taint of a node whose Ready condition is Unknown.
pub const TAINT_NODE_UNREACHABLE: &str = "node.kubernetes.io/unreachable";
/// Taint of a node under disk pressure.
pub const TAINT_NODE_DISK_PRESSURE: &str = "node.kubernetes.io/disk-pressure";
/// Taint of a node under memory pressure.
pub const TAINT_NODE_MEMORY_PRESSURE: &str = "node.kubernetes.io/memory-pressure";
/// Taint of a node under PID pressure.
pub const TAINT_NODE_PID_PRESSURE: &str = "node.kubernetes.io/pid-pressure";
/// Taint of a cordoned node.
pub const TAINT_NODE_UNSCHEDULABLE: &str = "node.kubernetes.io/unschedulable";
/// Taint of a node whose network is not configured.
pub const TAINT_NODE_NETWORK_UNAVAILABLE: &str = "node.kubernetes.io/network-unavailable";

/// `matchFields` key naming a node (upstream `metav1.ObjectNameField`).
pub const OBJECT_NAME_FIELD: &str = "metadata.name";

/// Upstream `NodeShouldRunDaemonPod`'s answer for one node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShouldRun {
    /// A daemon pod should be created on the node if it has none.
    pub should_run: bool,
    /// A daemon pod already on the node may stay.
    pub should_continue_running: bool,
}

impl ShouldRun {
    const NO: ShouldRun = ShouldRun {
        should_run: false,
        should_continue_running: false,
    };
    const YES: ShouldRun = ShouldRun {
        should_run: true,
        should_continue_running: true,
    };
}

/// The node's name ("" if it has none).
pub fn node_name_of(node: &Node) -> &str {
    node.metadata.name.as_deref().unwrap_or("")
}

/// Upstream `NodeShouldRunDaemonPod`: simulate the DaemonSet's pod (template plus the default
/// tolerations) on `node`.
///
/// * `template.spec.nodeName` naming another node, nodeSelector or required node affinity not
///   matching → neither run nor continue running.
/// * A `NoSchedule`/`NoExecute` taint not tolerated → do not start a pod; one already there may
///   continue unless some `NoExecute` taint is not tolerated.
pub fn node_should_run_daemon_pod(node: &Node, ds: &DaemonSet) -> ShouldRun {
    let Some(spec) = new_pod_spec(ds) else {
        return ShouldRun::NO;
    };
    let name = node_name_of(node);
    if let Some(wanted) = ds_template_spec(ds).and_then(|s| s.node_name.as_deref())
        && !wanted.is_empty()
        && wanted != name
    {
        return ShouldRun::NO;
    }
    if !required_node_affinity_matches(&spec, node) {
        return ShouldRun::NO;
    }
    let taints = node
        .spec
        .as_ref()
        .and_then(|s| s.taints.as_deref())
        .unwrap_or(&[]);
    let tolerations = spec.tolerations.as_deref().unwrap_or(&[]);
    let blocking = find_matching_untolerated_taint(taints, tolerations, |t| {
        t.effect == "NoExecute" || t.effect == "NoSchedule"
    });
    if blocking.is_none() {
        return ShouldRun::YES;
    }
    let evicting = find_matching_untolerated_taint(taints, tolerations, |t| t.effect == "NoExecute");
    ShouldRun {
        should_run: false,
        should_continue_running: evicting.is_none(),
    }
}

fn ds_template_spec(ds: &DaemonSet) -> Option<&PodSpec> {
    ds.spec.as_ref()?.template.spec.as_ref()
}

/// Upstream `NewPod` (the spec part): the template's spec with the default daemon tolerations.
/// `None` for a DaemonSet without a spec.
fn new_pod_spec(ds: &DaemonSet) -> Option<PodSpec> {
    let mut spec = ds_template_spec(ds)?.clone();
    add_or_update_daemon_pod_tolerations(&mut spec);
    Some(spec)
}

/// The tolerations upstream gives every daemon pod: `not-ready` and `unreachable` `NoExecute` with
/// no time limit (the node lifecycle controller never evicts them), `disk-pressure`,
/// `memory-pressure`, `pid-pressure` and `unschedulable` `NoSchedule`, and for host-network pods
/// `network-unavailable` `NoSchedule`.
pub fn default_daemon_tolerations(host_network: bool) -> Vec<Toleration> {
    let exists = |key: &str, effect: &str| Toleration {
        key: Some(key.to_owned()),
        operator: Some("Exists".to_owned()),
        effect: Some(effect.to_owned()),
        value: None,
        toleration_seconds: None,
    };
    let mut out = vec![
        exists(TAINT_NODE_NOT_READY, "NoExecute"),
        exists(TAINT_NODE_UNREACHABLE, "NoExecute"),
        exists(TAINT_NODE_DISK_PRESSURE, "NoSchedule"),
        exists(TAINT_NODE_MEMORY_PRESSURE, "NoSchedule"),
        exists(TAINT_NODE_PID_PRESSURE, "NoSchedule"),
        exists(TAINT_NODE_UNSCHEDULABLE, "NoSchedule"),
    ];
    if host_network {
        out.push(exists(TAINT_NODE_NETWORK_UNAVAILABLE, "NoSchedule"));
    }
    out
}

/// Upstream `AddOrUpdateDaemonPodTolerations`: adds each default toleration, or replaces a
/// toleration with the same key, operator, value and effect (upstream
/// `AddOrUpdateTolerationInPodSpec`, whose `MatchToleration` compares those four).
pub fn add_or_update_daemon_pod_tolerations(spec: &mut PodSpec) {
    let host_network = spec.host_network.unwrap_or(false);
    let tolerations = spec.tolerations.get_or_insert_with(Vec::new);
    for wanted in default_daemon_tolerations(host_network) {
        let same = |t: &Toleration| {
            t.key.as_deref().unwrap_or("") == wanted.key.as_deref().unwrap_or("")
                && operator(t) == operator(&wanted)
                && t.value.as_deref().unwrap_or("") == wanted.value.as_deref().unwrap_or("")
                && t.effect.as_deref().unwrap_or("") == wanted.effect.as_deref().unwrap_or("")
        };
        match tolerations.iter_mut().find(|t| same(t)) {
            Some(existing) => *existing = wanted,
            None => tolerations.push(wanted),
        }
    }
}

/// The toleration's operator, `Equal` when unset.
fn operator(t: &Toleration) -> &str {
    match t.operator.as_deref() {
        None | Some("") => "Equal",
        Some(op) => op,
    }
}

/// Upstream `Toleration.ToleratesTaint`: an empty effect matches every effect, an empty key (with
/// `Exists`) every key; `Exists` ignores the value, `Equal` compares it.
pub fn toleration_tolerates_taint(toleration: &Toleration, taint: &Taint) -> bool {
    let effect = toleration.effect.as_deref().unwrap_or("");
    if !effect.is_empty() && effect != taint.effect {
        return false;
    }
    let key = toleration.key.as_deref().unwrap_or("");
    if !key.is_empty() && key != taint.key {
        return false;
    }
    match operator(toleration) {
        "Equal" => toleration.value.as_deref().unwrap_or("") == taint.value.as_deref().unwrap_or(""),
        "Exists" => true,
        _ => false,
    }
}

/// Upstream `FindMatchingUntoleratedTaint`: the first taint passing `filter` that no toleration
/// covers.
pub fn find_matching_untolerated_taint<'a>(
    taints: &'a [Taint],
    tolerations: &[Toleration],
    filter: impl Fn(&Taint) -> bool,
) -> Option<&'a Taint> {
    taints
        .iter()
        .filter(|t| filter(t))
        .find(|t| !tolerations.iter().any(|tol| toleration_tolerates_taint(tol, t)))
}

/// Upstream `nodeaffinity.GetRequiredNodeAffinity(pod).Match(node)`: every `nodeSelector` pair is
/// a label of the node, and some required node-affinity term matches (terms are ORed,
/// requirements inside one ANDed; an empty term, or one that does not parse, matches nothing).
pub fn required_node_affinity_matches(spec: &PodSpec, node: &Node) -> bool {
    let empty = BTreeMap::new();
    let labels = node.metadata.labels.as_ref().unwrap_or(&empty);
    if let Some(selector) = &spec.node_selector
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
            .any(|t| term_matches(t, labels, node_name_of(node)) == Some(true)),
    }
}

/// One node-selector term; `None` when it is empty or does not parse.
fn term_matches(term: &NodeSelectorTerm, labels: &BTreeMap<String, String>, name: &str) -> Option<bool> {
    let exprs = term.match_expressions.as_deref().unwrap_or(&[]);
    let fields = term.match_fields.as_deref().unwrap_or(&[]);
    if exprs.is_empty() && fields.is_empty() {
        return None;
    }
    let mut all = true;
    for e in exprs {
        all &= requirement_matches(e, labels.get(&e.key).map(String::as_str))?;
    }
    for f in fields {
        if f.key != OBJECT_NAME_FIELD || !matches!(f.operator.as_str(), "In" | "NotIn") {
            return None;
        }
        if f.values.as_deref().unwrap_or(&[]).len() != 1 {
            return None;
        }
        all &= requirement_matches(f, Some(name))?;
    }
    Some(all)
}

/// One requirement against the value the node has for its key (`None`: absent).
fn requirement_matches(req: &NodeSelectorRequirement, have: Option<&str>) -> Option<bool> {
    let values = req.values.as_deref().unwrap_or(&[]);
    match req.operator.as_str() {
        "In" | "NotIn" => {
            if values.is_empty() {
                return None;
            }
            let hit = have.is_some_and(|v| values.iter().any(|w| w == v));
            Some(hit == (req.operator == "In"))
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

/// Upstream `GetTemplateGeneration`: the deprecated template-generation annotation, if present and
/// a number.
pub fn get_template_generation(ds: &DaemonSet) -> Option<i64> {
    ds.metadata
        .annotations
        .as_ref()?
        .get(TEMPLATE_GENERATION_ANNOTATION)?
        .parse()
        .ok()
}

/// Upstream `CreatePodTemplate`: the template with the default tolerations and the labels
/// `pod-template-generation` (if the DaemonSet has a generation annotation) and
/// `controller-revision-hash`.
pub fn create_pod_template(
    template: &PodTemplateSpec,
    generation: Option<i64>,
    hash: &str,
) -> PodTemplateSpec {
    let mut out = template.clone();
    add_or_update_daemon_pod_tolerations(out.spec.get_or_insert_with(PodSpec::default));
    let labels = out
        .metadata
        .get_or_insert_with(Default::default)
        .labels
        .get_or_insert_with(BTreeMap::new);
    if let Some(g) = generation {
        labels.insert(DAEMON_SET_TEMPLATE_GENERATION_KEY.to_owned(), g.to_string());
    }
    if !hash.is_empty() {
        labels.insert(DEFAULT_DAEMON_SET_UNIQUE_LABEL_KEY.to_owned(), hash.to_owned());
    }
    out
}

/// Upstream `ReplaceDaemonSetPodNodeNameNodeAffinity`: the required node affinity becomes the one
/// term `matchFields: metadata.name In [node]`; preferred affinity and pod (anti-)affinity stay.
pub fn replace_daemon_set_pod_node_name_node_affinity(affinity: Option<Affinity>, node: &str) -> Affinity {
    let selector = NodeSelector {
        node_selector_terms: vec![NodeSelectorTerm {
            match_fields: Some(vec![NodeSelectorRequirement {
                key: OBJECT_NAME_FIELD.to_owned(),
                operator: "In".to_owned(),
                values: Some(vec![node.to_owned()]),
            }]),
            match_expressions: None,
        }],
    };
    let mut affinity = affinity.unwrap_or_default();
    let node_affinity = affinity.node_affinity.get_or_insert_with(NodeAffinity::default);
    node_affinity.required_during_scheduling_ignored_during_execution = Some(selector);
    affinity
}

/// Upstream `GetTargetNodeName`: `spec.nodeName`, or for a pod not yet bound the node its required
/// affinity pins it to (`matchFields metadata.name In [one node]`). `None` when neither says.
pub fn get_target_node_name(pod: &Pod) -> Option<&str> {
    let spec = pod.spec.as_ref()?;
    if let Some(n) = spec.node_name.as_deref().filter(|n| !n.is_empty()) {
        return Some(n);
    }
    let terms = &spec
        .affinity
        .as_ref()?
        .node_affinity
        .as_ref()?
        .required_during_scheduling_ignored_during_execution
        .as_ref()?
        .node_selector_terms;
    for term in terms {
        for f in term.match_fields.iter().flatten() {
            if f.key == OBJECT_NAME_FIELD && f.operator == "In" {
                return match f.values.as_deref() {
                    Some([one]) => Some(one.as_str()),
                    _ => None,
                };
            }
        }
    }
    None
}

/// Upstream `IsPodUpdated`: the pod carries the current revision's hash, or (legacy) the
/// DaemonSet's template generation.
pub fn is_pod_updated(pod: &Pod, hash: &str, generation: Option<i64>) -> bool {
    let labels = pod.metadata.labels.as_ref();
    let label = |k: &str| labels.and_then(|l| l.get(k)).map(String::as_str);
    let template_matches =
        generation.is_some_and(|g| label(DAEMON_SET_TEMPLATE_GENERATION_KEY) == Some(g.to_string().as_str()));
    let hash_matches = !hash.is_empty() && label(DEFAULT_DAEMON_SET_UNIQUE_LABEL_KEY) == Some(hash);
    hash_matches || template_matches
}

/// The revision hash label of a pod or revision ("" when absent).
pub fn hash_label(meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta) -> &str {
    meta.labels
        .as_ref()
        .and_then(|l| l.get(DEFAULT_DAEMON_SET_UNIQUE_LABEL_KEY))
        .map_or("", String::as_str)
}
