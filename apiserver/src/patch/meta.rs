//! Field metadata for patching: how each field of a built-in kind merges.
//!
//! Strategic merge patch reads upstream's Go struct tags `patchStrategy` and
//! `patchMergeKey`; server-side apply reads the OpenAPI extensions
//! `x-kubernetes-list-type`, `x-kubernetes-list-map-keys` and
//! `x-kubernetes-map-type`. This module answers both questions for a path
//! inside an object, walking the type graph of the kind.
//!
//! API (kept stable; other modules call it):
//! - [`Schema::for_kind`] — the root node of a built-in kind.
//! - [`Schema::field`] — the node of a struct field; [`Schema::items`] — the
//!   node of a list element or map value.
//! - [`Schema::patch_strategy`], [`Schema::list_type`], [`Schema::map_atomic`],
//!   [`Schema::shape`], [`Schema::type_name`].
//! - Additions: [`Schema::patch_merge_key`], [`Schema::field_names`],
//!   [`Schema::kinds`], [`Schema::for_resource`] (a custom resource's
//!   structural schema when it has one: its `x-kubernetes-list-type`,
//!   `x-kubernetes-list-map-keys` and `x-kubernetes-map-type` drive
//!   server-side apply; it has no strategic-merge tags) and
//!   [`Schema::for_custom`].
//!
//! An unknown kind or field gives `None`; callers then treat maps as merged
//! key by key and lists as atomic (upstream's behaviour for unstructured
//! objects, e.g. custom resources).
//!
//! # How the graph is built
//!
//! The shapes come from the JSON schemas that `k8s-openapi` derives with
//! `schemars` (definition names such as `io.k8s.api.core.v1.PodSpec`). Those
//! schemas carry no patch metadata, so the facts are layered on from two
//! small tables transcribed from upstream `k8s.io/api` (`core/v1/types.go`,
//! `apps/v1/types.go`, `batch/v1/types.go`, `discovery/v1/types.go`) and `k8s.io/apimachinery`
//! (`pkg/apis/meta/v1/types.go`): the `patchStrategy`/`patchMergeKey` struct
//! tags and the `+listType`/`+listMapKey`/`+mapType`/`+structType` markers.
//! All kinds share one graph, built once on first use.
//!
//! Simplifications: only the kinds listed in [`Schema::kinds`] are known; the
//! tables cover the fields those kinds use (other lists fall back as in
//! kube-openapi: a merge list becomes an associative list keyed by its merge
//! key, everything else is atomic); opaque types (`IntOrString`, `Quantity`,
//! `Time`, `RawExtension`, `FieldsV1`) are scalars.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, LazyLock, Mutex};

use k8s_openapi::api::{
    admissionregistration, apps, autoscaling, batch, certificates, coordination, core, discovery, events,
    networking, node, policy, rbac, scheduling, storage,
};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions;
use k8s_openapi::kube_aggregator::pkg::apis::apiregistration;
use serde_json::{Map, Value};

use crate::crd::schema::node::{ListType as CustomListType, Node as CustomNode};
use crate::registry::ResourceInfo;

/// The JSON shape of a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Shape {
    /// A struct with named fields.
    Struct,
    /// A map with free-form keys (`labels`, `data`).
    Map,
    /// A list.
    List,
    /// A string, number, boolean, or an opaque value (IntOrString, Quantity, RawExtension).
    #[default]
    Scalar,
}

/// Strategic-merge-patch behaviour of a field (upstream `patchStrategy` tag).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum PatchStrategy {
    /// No tag: maps and structs merge key by key; lists are replaced.
    #[default]
    Default,
    /// `merge`: list elements merge by `key` (objects) or by value (primitives).
    Merge {
        /// `patchMergeKey`, `None` for primitive lists.
        key: Option<&'static str>,
    },
    /// `replace`: the whole field is replaced.
    Replace,
    /// `retainKeys` on a struct: `$retainKeys` is honoured.
    RetainKeys,
    /// `merge,retainKeys` on a list of objects.
    MergeRetainKeys {
        /// `patchMergeKey`.
        key: &'static str,
    },
}

/// Server-side-apply behaviour of a list (`x-kubernetes-list-type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ListType {
    /// Replaced as a whole; one owner.
    Atomic,
    /// A set of scalars, owned per value.
    Set,
    /// A map of objects keyed by these fields, owned per element.
    Map(&'static [&'static str]),
}

/// Index of a node in the shared graph.
type NodeId = usize;

/// The scalar node every primitive property points to.
const SCALAR: NodeId = 0;

/// Facts attached to a field (they belong to the parent's property, not to
/// the field's type).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct FieldTags {
    smp: PatchStrategy,
    list: Option<ListType>,
    map_atomic: Option<bool>,
}

/// A node in the type graph of a built-in kind, or of a custom resource's
/// structural schema.
#[derive(Clone, Debug)]
pub struct Schema {
    node: NodeId,
    tags: FieldTags,
    /// Set for a node of a custom resource's schema (then `node` and `tags`
    /// are unused).
    custom: Option<Custom>,
}

/// A position in a custom resource's schema.
#[derive(Clone, Debug)]
struct Custom {
    node: Arc<CustomNode>,
    /// The resource root: its `metadata` is ObjectMeta whatever the schema
    /// says.
    root: bool,
}

impl Schema {
    /// The root schema of a built-in kind, e.g. `("apps", "Deployment")`.
    /// The core group is `""` (`"core"` is accepted too).
    pub fn for_kind(group: &str, kind: &str) -> Option<Schema> {
        let group = if group == "core" { "" } else { group };
        let node = *graph().roots.get(&(group.to_owned(), kind.to_owned()))?;
        Some(Schema::builtin(node, FieldTags::default()))
    }

    /// The root schema of a resource: a custom resource's structural schema
    /// when its CRD version has one, else the built-in kind's.
    pub fn for_resource(info: &ResourceInfo) -> Option<Schema> {
        match info.custom.as_ref().and_then(|c| c.structural.as_ref()) {
            Some(structural) => Some(Schema::custom(structural.root.clone(), true)),
            None => Schema::for_kind(&info.group, &info.kind),
        }
    }

    /// The root of a custom resource whose schema is `root`.
    pub fn for_custom(root: Arc<CustomNode>) -> Schema {
        Schema::custom(root, true)
    }

    fn builtin(node: NodeId, tags: FieldTags) -> Schema {
        Schema {
            node,
            tags,
            custom: None,
        }
    }

    fn custom(node: Arc<CustomNode>, root: bool) -> Schema {
        Schema {
            node: SCALAR,
            tags: FieldTags::default(),
            custom: Some(Custom { node, root }),
        }
    }

    /// The `(group, kind)` pairs [`Schema::for_kind`] knows.
    pub fn kinds() -> impl Iterator<Item = (&'static str, &'static str)> {
        KINDS.iter().map(|(group, kind, _)| (*group, *kind))
    }

    /// The node of a struct field.
    pub fn field(&self, name: &str) -> Option<Schema> {
        if let Some(c) = &self.custom {
            if c.root && name == "metadata" {
                return Schema::for_kind("", "ConfigMap")?.field("metadata");
            }
            return Some(Schema::custom(c.node.properties.get(name)?.clone(), false));
        }
        let (node, tags) = *graph().nodes[self.node].fields.get(name)?;
        Some(Schema::builtin(node, tags))
    }

    /// The field names of a struct node, sorted (empty for other shapes).
    pub fn field_names(&self) -> Vec<String> {
        match &self.custom {
            Some(c) => c.node.properties.keys().cloned().collect(),
            None => graph().nodes[self.node].fields.keys().cloned().collect(),
        }
    }

    /// The node of a list element or map value.
    pub fn items(&self) -> Option<Schema> {
        if let Some(c) = &self.custom {
            let n = &c.node;
            let next = n.items.as_ref().or_else(|| n.additional_schema())?;
            return Some(Schema::custom(next.clone(), false));
        }
        let node = graph().nodes[self.node].items?;
        Some(Schema::builtin(node, FieldTags::default()))
    }

    /// The JSON shape.
    pub fn shape(&self) -> Shape {
        match &self.custom {
            Some(c) => custom_shape(&c.node),
            None => graph().nodes[self.node].shape,
        }
    }

    /// Upstream type name when known, e.g. `io.k8s.api.core.v1.PodSpec`.
    pub fn type_name(&self) -> Option<&str> {
        if self.custom.is_some() {
            return None;
        }
        graph().nodes[self.node].name.as_deref()
    }

    /// The SMP strategy of this field.
    pub fn patch_strategy(&self) -> PatchStrategy {
        self.tags.smp
    }

    /// The SMP merge key of this field (`patchMergeKey`), if any.
    pub fn patch_merge_key(&self) -> Option<&'static str> {
        match self.tags.smp {
            PatchStrategy::Merge { key } => key,
            PatchStrategy::MergeRetainKeys { key } => Some(key),
            _ => None,
        }
    }

    /// The SSA list type (for [`Shape::List`] nodes). Without a marker,
    /// kube-openapi's fallback applies: a merge list is associative (keyed by
    /// its merge key, or a set for primitives); anything else is atomic.
    pub fn list_type(&self) -> ListType {
        if let Some(c) = &self.custom {
            return match &c.node.list_type {
                Some(CustomListType::Set) => ListType::Set,
                Some(CustomListType::Map(keys)) => ListType::Map(intern_keys(keys)),
                Some(CustomListType::Atomic) | None => ListType::Atomic,
            };
        }
        if let Some(list) = self.tags.list {
            return list;
        }
        match self.tags.smp {
            PatchStrategy::Merge { key: None } => ListType::Set,
            PatchStrategy::Merge { key: Some(key) } | PatchStrategy::MergeRetainKeys { key } => {
                single_key(key).map_or(ListType::Atomic, ListType::Map)
            }
            _ => ListType::Atomic,
        }
    }

    /// `x-kubernetes-map-type: atomic` on a map or struct (e.g. `LabelSelector`
    /// is granular, `nodeSelector` terms may be atomic).
    pub fn map_atomic(&self) -> bool {
        if let Some(c) = &self.custom {
            return c.node.map_atomic;
        }
        self.tags.map_atomic.unwrap_or(graph().nodes[self.node].atomic)
    }
}

/// The shape of a custom schema node: `object` with `additionalProperties`
/// is a map, any other object a struct.
fn custom_shape(n: &CustomNode) -> Shape {
    match n.type_name.as_str() {
        "array" => Shape::List,
        "object" if n.additional.is_some() && n.properties.is_empty() => Shape::Map,
        "object" => Shape::Struct,
        _ if n.embedded || !n.properties.is_empty() => Shape::Struct,
        _ => Shape::Scalar,
    }
}

/// The `'static` form of a custom list's `x-kubernetes-list-map-keys`
/// ([`ListType::Map`] holds static keys, as the built-in tables do). Each
/// distinct key list is leaked once and reused, so the memory is bounded by
/// the key lists CRDs have declared, not by how often schemas compile.
fn intern_keys(keys: &[String]) -> &'static [&'static str] {
    type Interned = HashMap<Vec<String>, &'static [&'static str]>;
    static KEYS: LazyLock<Mutex<Interned>> = LazyLock::new(Default::default);
    // A poisoned lock only means another thread panicked while inserting; the
    // map is still a valid map.
    let mut interned = KEYS.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(found) = interned.get(keys) {
        return found;
    }
    let leaked: Vec<&'static str> = keys
        .iter()
        .map(|k| &*Box::leak(k.clone().into_boxed_str()))
        .collect();
    let leaked: &'static [&'static str] = Box::leak(leaked.into_boxed_slice());
    interned.insert(keys.to_vec(), leaked);
    leaked
}

/// A `'static` one-element key list for the SSA fallback.
fn single_key(key: &str) -> Option<&'static [&'static str]> {
    const KEYS: &[&str] = &[
        "name",
        "type",
        "uid",
        "ip",
        "mountPath",
        "devicePath",
        "containerPort",
        "port",
        "topologyKey",
    ];
    let i = KEYS.iter().position(|k| *k == key)?;
    Some(std::slice::from_ref(&KEYS[i]))
}

// ---------------------------------------------------------------------------
// Hand-written facts (upstream struct tags and list/map/struct markers).
// Type names are short: `core.v1.X` is `io.k8s.api.core.v1.X`, `meta.v1.X`
// is `io.k8s.apimachinery.pkg.apis.meta.v1.X`.

const NAME: &[&str] = &["name"];
const TYPE: &[&str] = &["type"];
const RULE: &[&str] = &["rule"];
const IP: &[&str] = &["ip"];

const fn merge(key: &'static str) -> PatchStrategy {
    PatchStrategy::Merge { key: Some(key) }
}
const fn merge_retain(key: &'static str) -> PatchStrategy {
    PatchStrategy::MergeRetainKeys { key }
}
const VALUES: PatchStrategy = PatchStrategy::Merge { key: None };
const NONE: PatchStrategy = PatchStrategy::Default;
const ATOMIC: Option<ListType> = Some(ListType::Atomic);
const SET: Option<ListType> = Some(ListType::Set);
const fn keyed(keys: &'static [&'static str]) -> Option<ListType> {
    Some(ListType::Map(keys))
}

/// (type, field, SMP strategy, SSA list type).
type FieldTag = (&'static str, &'static str, PatchStrategy, Option<ListType>);

#[rustfmt::skip]
const FIELD_TAGS: &[FieldTag] = &[
    // apiextensions.k8s.io/v1 (apiextensions/v1/types.go, types_jsonschema.go: conditions
    // +listType=map by type, CEL rules merge by rule; the other lists are atomic)
    ("apiextensions.v1.CustomResourceDefinitionSpec", "versions", NONE, ATOMIC),
    ("apiextensions.v1.CustomResourceDefinitionNames", "shortNames", NONE, ATOMIC),
    ("apiextensions.v1.CustomResourceDefinitionNames", "categories", NONE, ATOMIC),
    ("apiextensions.v1.CustomResourceDefinitionVersion", "additionalPrinterColumns", NONE, ATOMIC),
    ("apiextensions.v1.CustomResourceDefinitionStatus", "conditions", NONE, keyed(TYPE)),
    ("apiextensions.v1.CustomResourceDefinitionStatus", "storedVersions", NONE, ATOMIC),
    ("apiextensions.v1.WebhookConversion", "conversionReviewVersions", NONE, ATOMIC),
    ("apiextensions.v1.JSONSchemaProps", "x-kubernetes-validations", merge("rule"), keyed(RULE)),
    ("meta.v1.ObjectMeta", "finalizers", VALUES, SET),
    ("meta.v1.ObjectMeta", "ownerReferences", merge("uid"), keyed(&["uid"])),
    ("meta.v1.ObjectMeta", "managedFields", NONE, ATOMIC),
    ("meta.v1.LabelSelector", "matchExpressions", NONE, ATOMIC),
    ("meta.v1.LabelSelectorRequirement", "values", NONE, ATOMIC),
    ("core.v1.PodSpec", "volumes", merge_retain("name"), keyed(NAME)),
    ("core.v1.PodSpec", "initContainers", merge("name"), keyed(NAME)),
    ("core.v1.PodSpec", "containers", merge("name"), keyed(NAME)),
    ("core.v1.PodSpec", "ephemeralContainers", merge("name"), keyed(NAME)),
    ("core.v1.PodSpec", "imagePullSecrets", merge("name"), keyed(NAME)),
    ("core.v1.PodSpec", "hostAliases", merge("ip"), keyed(IP)),
    ("core.v1.PodSpec", "topologySpreadConstraints", merge("topologyKey"), keyed(&["topologyKey", "whenUnsatisfiable"])),
    ("core.v1.PodSpec", "schedulingGates", merge("name"), keyed(NAME)),
    ("core.v1.PodSpec", "resourceClaims", merge_retain("name"), keyed(NAME)),
    ("core.v1.PodSpec", "tolerations", NONE, ATOMIC),
    ("core.v1.PodSpec", "readinessGates", NONE, ATOMIC),
    ("core.v1.PodSecurityContext", "supplementalGroups", NONE, ATOMIC),
    ("core.v1.PodSecurityContext", "sysctls", NONE, ATOMIC),
    ("core.v1.Capabilities", "add", NONE, ATOMIC),
    ("core.v1.Capabilities", "drop", NONE, ATOMIC),
    ("core.v1.Container", "ports", merge("containerPort"), keyed(&["containerPort", "protocol"])),
    ("core.v1.Container", "env", merge("name"), keyed(NAME)),
    ("core.v1.Container", "volumeMounts", merge("mountPath"), keyed(&["mountPath"])),
    ("core.v1.Container", "volumeDevices", merge("devicePath"), keyed(&["devicePath"])),
    ("core.v1.Container", "envFrom", NONE, ATOMIC),
    ("core.v1.Container", "args", NONE, ATOMIC),
    ("core.v1.Container", "command", NONE, ATOMIC),
    ("core.v1.Container", "resizePolicy", NONE, ATOMIC),
    ("core.v1.EphemeralContainer", "ports", merge("containerPort"), keyed(&["containerPort", "protocol"])),
    ("core.v1.EphemeralContainer", "env", merge("name"), keyed(NAME)),
    ("core.v1.EphemeralContainer", "volumeMounts", merge("mountPath"), keyed(&["mountPath"])),
    ("core.v1.EphemeralContainer", "volumeDevices", merge("devicePath"), keyed(&["devicePath"])),
    ("core.v1.EphemeralContainer", "envFrom", NONE, ATOMIC),
    ("core.v1.EphemeralContainer", "args", NONE, ATOMIC),
    ("core.v1.EphemeralContainer", "command", NONE, ATOMIC),
    ("core.v1.EphemeralContainer", "resizePolicy", NONE, ATOMIC),
    ("core.v1.ResourceRequirements", "claims", NONE, keyed(NAME)),
    ("core.v1.PodStatus", "conditions", merge("type"), keyed(TYPE)),
    ("core.v1.PodStatus", "podIPs", merge("ip"), keyed(IP)),
    ("core.v1.PodStatus", "hostIPs", merge("ip"), ATOMIC),
    ("core.v1.PodStatus", "resourceClaimStatuses", merge_retain("name"), keyed(NAME)),
    ("core.v1.PodStatus", "containerStatuses", NONE, ATOMIC),
    ("core.v1.PodStatus", "initContainerStatuses", NONE, ATOMIC),
    ("core.v1.PodStatus", "ephemeralContainerStatuses", NONE, ATOMIC),
    ("core.v1.ContainerStatus", "volumeMounts", merge("mountPath"), keyed(&["mountPath"])),
    ("core.v1.ContainerStatus", "allocatedResourcesStatus", merge("name"), keyed(NAME)),
    ("core.v1.ResourceStatus", "resources", NONE, keyed(&["resourceID"])),
    ("core.v1.ServiceSpec", "ports", merge("port"), keyed(&["port", "protocol"])),
    ("core.v1.ServiceSpec", "clusterIPs", NONE, ATOMIC),
    ("core.v1.ServiceSpec", "externalIPs", NONE, ATOMIC),
    ("core.v1.ServiceSpec", "ipFamilies", NONE, ATOMIC),
    ("core.v1.ServiceSpec", "loadBalancerSourceRanges", NONE, ATOMIC),
    ("core.v1.ServiceStatus", "conditions", merge("type"), keyed(TYPE)),
    ("core.v1.LoadBalancerStatus", "ingress", NONE, ATOMIC),
    ("core.v1.LoadBalancerIngress", "ports", NONE, ATOMIC),
    ("core.v1.ServiceAccount", "secrets", merge("name"), keyed(NAME)),
    ("core.v1.ServiceAccount", "imagePullSecrets", NONE, ATOMIC),
    ("core.v1.NodeSpec", "podCIDRs", VALUES, SET),
    ("core.v1.NodeSpec", "taints", NONE, ATOMIC),
    ("core.v1.NodeStatus", "addresses", merge("type"), keyed(TYPE)),
    ("core.v1.NodeStatus", "conditions", merge("type"), keyed(TYPE)),
    ("core.v1.NodeStatus", "images", NONE, ATOMIC),
    ("core.v1.NodeStatus", "volumesInUse", NONE, ATOMIC),
    ("core.v1.NodeStatus", "volumesAttached", NONE, ATOMIC),
    ("core.v1.NamespaceSpec", "finalizers", NONE, ATOMIC),
    ("core.v1.NamespaceStatus", "conditions", merge("type"), keyed(TYPE)),
    ("core.v1.PersistentVolumeClaimStatus", "conditions", merge("type"), keyed(TYPE)),
    ("core.v1.Endpoints", "subsets", NONE, ATOMIC),
    ("core.v1.EndpointSubset", "addresses", NONE, ATOMIC),
    ("core.v1.EndpointSubset", "notReadyAddresses", NONE, ATOMIC),
    ("core.v1.EndpointSubset", "ports", NONE, ATOMIC),
    ("core.v1.NodeSelector", "nodeSelectorTerms", NONE, ATOMIC),
    ("core.v1.NodeSelectorTerm", "matchExpressions", NONE, ATOMIC),
    ("core.v1.NodeSelectorTerm", "matchFields", NONE, ATOMIC),
    ("apps.v1.DeploymentSpec", "strategy", PatchStrategy::RetainKeys, None),
    ("apps.v1.DeploymentStatus", "conditions", merge("type"), keyed(TYPE)),
    ("apps.v1.ReplicaSetStatus", "conditions", merge("type"), keyed(TYPE)),
    ("apps.v1.StatefulSetStatus", "conditions", merge("type"), keyed(TYPE)),
    ("apps.v1.DaemonSetStatus", "conditions", merge("type"), keyed(TYPE)),
    ("apps.v1.StatefulSetSpec", "volumeClaimTemplates", NONE, ATOMIC),
    ("batch.v1.JobStatus", "conditions", merge("type"), ATOMIC),
    ("batch.v1.CronJobStatus", "active", NONE, ATOMIC),
    ("discovery.v1.EndpointSlice", "endpoints", NONE, ATOMIC),
    ("discovery.v1.EndpointSlice", "ports", NONE, ATOMIC),
    ("discovery.v1.Endpoint", "addresses", NONE, SET),
    ("discovery.v1.EndpointHints", "forZones", NONE, ATOMIC),
    ("discovery.v1.EndpointHints", "forNodes", NONE, ATOMIC),
    // networking.k8s.io/v1 and policy/v1 (networking/v1/types.go: every list +listType=atomic;
    // policy/v1/types.go: conditions merge by type, the selector is patchStrategy=replace)
    ("networking.v1.IngressSpec", "tls", NONE, ATOMIC),
    ("networking.v1.IngressSpec", "rules", NONE, ATOMIC),
    ("networking.v1.IngressTLS", "hosts", NONE, ATOMIC),
    ("networking.v1.HTTPIngressRuleValue", "paths", NONE, ATOMIC),
    ("networking.v1.IngressLoadBalancerStatus", "ingress", NONE, ATOMIC),
    ("networking.v1.IngressLoadBalancerIngress", "ports", NONE, ATOMIC),
    ("networking.v1.NetworkPolicySpec", "ingress", NONE, ATOMIC),
    ("networking.v1.NetworkPolicySpec", "egress", NONE, ATOMIC),
    ("networking.v1.NetworkPolicySpec", "policyTypes", NONE, ATOMIC),
    ("networking.v1.NetworkPolicyIngressRule", "ports", NONE, ATOMIC),
    ("networking.v1.NetworkPolicyIngressRule", "from", NONE, ATOMIC),
    ("networking.v1.NetworkPolicyEgressRule", "ports", NONE, ATOMIC),
    ("networking.v1.NetworkPolicyEgressRule", "to", NONE, ATOMIC),
    ("networking.v1.IPBlock", "except", NONE, ATOMIC),
    ("policy.v1.PodDisruptionBudgetSpec", "selector", PatchStrategy::Replace, None),
    ("policy.v1.PodDisruptionBudgetStatus", "conditions", merge("type"), keyed(TYPE)),
    // rbac.authorization.k8s.io/v1 (rbac/v1/types.go: every list +listType=atomic)
    ("rbac.v1.Role", "rules", NONE, ATOMIC),
    ("rbac.v1.ClusterRole", "rules", NONE, ATOMIC),
    ("rbac.v1.AggregationRule", "clusterRoleSelectors", NONE, ATOMIC),
    ("rbac.v1.PolicyRule", "verbs", NONE, ATOMIC),
    ("rbac.v1.PolicyRule", "apiGroups", NONE, ATOMIC),
    ("rbac.v1.PolicyRule", "resources", NONE, ATOMIC),
    ("rbac.v1.PolicyRule", "resourceNames", NONE, ATOMIC),
    ("rbac.v1.PolicyRule", "nonResourceURLs", NONE, ATOMIC),
    ("rbac.v1.RoleBinding", "subjects", NONE, ATOMIC),
    ("rbac.v1.ClusterRoleBinding", "subjects", NONE, ATOMIC),
    // certificates.k8s.io/v1 (certificates/v1/types.go: usages and groups +listType=atomic,
    // conditions +listType=map +listMapKey=type without a patchStrategy)
    ("certificates.v1.CertificateSigningRequestSpec", "usages", NONE, ATOMIC),
    ("certificates.v1.CertificateSigningRequestSpec", "groups", NONE, ATOMIC),
    ("certificates.v1.CertificateSigningRequestStatus", "conditions", NONE, keyed(TYPE)),
    // core/v1 quota and limits (core/v1/types.go: ResourceQuotaSpec, ScopeSelector,
    // LimitRangeSpec lists +listType=atomic; RC conditions merge by type)
    ("core.v1.ResourceQuotaSpec", "scopes", NONE, ATOMIC),
    ("core.v1.ScopeSelector", "matchExpressions", NONE, ATOMIC),
    ("core.v1.ScopedResourceSelectorRequirement", "values", NONE, ATOMIC),
    ("core.v1.LimitRangeSpec", "limits", NONE, ATOMIC),
    ("core.v1.ReplicationControllerStatus", "conditions", merge("type"), keyed(TYPE)),
    // core/v1 PersistentVolume(Claim), storage.k8s.io/v1, node.k8s.io/v1 (core/v1/types.go,
    // storage/v1/types.go, node/v1/types.go: these lists +listType=atomic; a CSI driver's
    // lifecycle modes +listType=set)
    ("core.v1.PersistentVolumeSpec", "accessModes", NONE, ATOMIC),
    ("core.v1.PersistentVolumeSpec", "mountOptions", NONE, ATOMIC),
    ("core.v1.PersistentVolumeClaimSpec", "accessModes", NONE, ATOMIC),
    ("core.v1.PersistentVolumeClaimStatus", "accessModes", NONE, ATOMIC),
    ("storage.v1.StorageClass", "mountOptions", NONE, ATOMIC),
    ("storage.v1.StorageClass", "allowedTopologies", NONE, ATOMIC),
    ("core.v1.TopologySelectorTerm", "matchLabelExpressions", NONE, ATOMIC),
    ("core.v1.TopologySelectorLabelRequirement", "values", NONE, ATOMIC),
    ("storage.v1.CSIDriverSpec", "volumeLifecycleModes", NONE, SET),
    ("storage.v1.CSIDriverSpec", "tokenRequests", NONE, ATOMIC),
    ("node.v1.Scheduling", "tolerations", NONE, ATOMIC),
    // admissionregistration.k8s.io/v1, autoscaling/v2, apiregistration.k8s.io/v1
    // (admissionregistration/v1/types.go: webhooks and match conditions merge by name,
    // the other lists +listType=atomic, validationActions a set; autoscaling/v2/types.go:
    // metrics, policies and currentMetrics atomic, conditions merge by type;
    // apiregistration/v1/types.go: conditions merge by type)
    ("admissionregistration.v1.ValidatingWebhookConfiguration", "webhooks", merge("name"), keyed(NAME)),
    ("admissionregistration.v1.MutatingWebhookConfiguration", "webhooks", merge("name"), keyed(NAME)),
    ("admissionregistration.v1.ValidatingWebhook", "rules", NONE, ATOMIC),
    ("admissionregistration.v1.ValidatingWebhook", "admissionReviewVersions", NONE, ATOMIC),
    ("admissionregistration.v1.ValidatingWebhook", "matchConditions", merge("name"), keyed(NAME)),
    ("admissionregistration.v1.MutatingWebhook", "rules", NONE, ATOMIC),
    ("admissionregistration.v1.MutatingWebhook", "admissionReviewVersions", NONE, ATOMIC),
    ("admissionregistration.v1.MutatingWebhook", "matchConditions", merge("name"), keyed(NAME)),
    ("admissionregistration.v1.RuleWithOperations", "operations", NONE, ATOMIC),
    ("admissionregistration.v1.RuleWithOperations", "apiGroups", NONE, ATOMIC),
    ("admissionregistration.v1.RuleWithOperations", "apiVersions", NONE, ATOMIC),
    ("admissionregistration.v1.RuleWithOperations", "resources", NONE, ATOMIC),
    ("admissionregistration.v1.NamedRuleWithOperations", "resourceNames", NONE, ATOMIC),
    ("admissionregistration.v1.NamedRuleWithOperations", "operations", NONE, ATOMIC),
    ("admissionregistration.v1.NamedRuleWithOperations", "apiGroups", NONE, ATOMIC),
    ("admissionregistration.v1.NamedRuleWithOperations", "apiVersions", NONE, ATOMIC),
    ("admissionregistration.v1.NamedRuleWithOperations", "resources", NONE, ATOMIC),
    ("admissionregistration.v1.MatchResources", "resourceRules", NONE, ATOMIC),
    ("admissionregistration.v1.MatchResources", "excludeResourceRules", NONE, ATOMIC),
    ("admissionregistration.v1.ValidatingAdmissionPolicySpec", "validations", NONE, ATOMIC),
    ("admissionregistration.v1.ValidatingAdmissionPolicySpec", "auditAnnotations", NONE, ATOMIC),
    ("admissionregistration.v1.ValidatingAdmissionPolicySpec", "variables", NONE, ATOMIC),
    ("admissionregistration.v1.ValidatingAdmissionPolicySpec", "matchConditions", merge("name"), keyed(NAME)),
    ("admissionregistration.v1.ValidatingAdmissionPolicyStatus", "conditions", NONE, keyed(TYPE)),
    ("admissionregistration.v1.TypeChecking", "expressionWarnings", NONE, ATOMIC),
    ("admissionregistration.v1.ValidatingAdmissionPolicyBindingSpec", "validationActions", NONE, SET),
    ("autoscaling.v2.HorizontalPodAutoscalerSpec", "metrics", NONE, ATOMIC),
    ("autoscaling.v2.HPAScalingRules", "policies", NONE, ATOMIC),
    ("autoscaling.v2.HorizontalPodAutoscalerStatus", "currentMetrics", NONE, ATOMIC),
    ("autoscaling.v2.HorizontalPodAutoscalerStatus", "conditions", merge("type"), keyed(TYPE)),
    ("apiregistration.v1.APIServiceStatus", "conditions", merge("type"), keyed(TYPE)),
];

/// Struct types marked `+structType=atomic`.
const ATOMIC_STRUCTS: &[&str] = &[
    "meta.v1.LabelSelector",
    "meta.v1.OwnerReference",
    "core.v1.ObjectReference",
    "core.v1.LocalObjectReference",
    "core.v1.TypedLocalObjectReference",
    "core.v1.NodeSelector",
    "core.v1.NodeSelectorTerm",
    "core.v1.ObjectFieldSelector",
    "core.v1.ResourceFieldSelector",
    "core.v1.ConfigMapKeySelector",
    "core.v1.SecretKeySelector",
    "discovery.v1.EndpointPort",
    // admissionregistration.k8s.io/v1
    "admissionregistration.v1.MatchResources",
    "admissionregistration.v1.NamedRuleWithOperations",
    "admissionregistration.v1.ParamKind",
    // rbac.authorization.k8s.io/v1
    "rbac.v1.Subject",
    "rbac.v1.RoleRef",
];

/// Map fields marked `+mapType=atomic`.
const ATOMIC_MAP_FIELDS: &[(&str, &str)] = &[
    ("core.v1.PodSpec", "nodeSelector"),
    ("core.v1.ServiceSpec", "selector"),
    // core/v1 quota and limits
    ("core.v1.ReplicationControllerSpec", "selector"),
    // node.k8s.io/v1
    ("node.v1.Scheduling", "nodeSelector"),
];

/// Expands a short type name of the tables above.
fn full_name(short: &str) -> String {
    if let Some(rest) = short.strip_prefix("apiextensions.") {
        return format!("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.{rest}");
    }
    if let Some(rest) = short.strip_prefix("apiregistration.") {
        return format!("io.k8s.kube-aggregator.pkg.apis.apiregistration.{rest}");
    }
    match short.strip_prefix("meta.") {
        Some(rest) => format!("io.k8s.apimachinery.pkg.apis.meta.{rest}"),
        None => format!("io.k8s.api.{short}"),
    }
}

// ---------------------------------------------------------------------------
// The graph.

/// (group, kind, JSON schema generator).
type KindEntry = (&'static str, &'static str, fn() -> Value);

const KINDS: &[KindEntry] = &[
    (
        "apiextensions.k8s.io",
        "CustomResourceDefinition",
        schema_of::<apiextensions::v1::CustomResourceDefinition>,
    ),
    ("", "Pod", schema_of::<core::v1::Pod>),
    ("", "Node", schema_of::<core::v1::Node>),
    ("", "Namespace", schema_of::<core::v1::Namespace>),
    ("", "Service", schema_of::<core::v1::Service>),
    ("", "Endpoints", schema_of::<core::v1::Endpoints>),
    ("", "ConfigMap", schema_of::<core::v1::ConfigMap>),
    ("", "Secret", schema_of::<core::v1::Secret>),
    ("", "ServiceAccount", schema_of::<core::v1::ServiceAccount>),
    ("", "Event", schema_of::<core::v1::Event>),
    ("events.k8s.io", "Event", schema_of::<events::v1::Event>),
    ("apps", "Deployment", schema_of::<apps::v1::Deployment>),
    ("apps", "ReplicaSet", schema_of::<apps::v1::ReplicaSet>),
    ("apps", "StatefulSet", schema_of::<apps::v1::StatefulSet>),
    ("apps", "DaemonSet", schema_of::<apps::v1::DaemonSet>),
    (
        "apps",
        "ControllerRevision",
        schema_of::<apps::v1::ControllerRevision>,
    ),
    ("batch", "Job", schema_of::<batch::v1::Job>),
    ("batch", "CronJob", schema_of::<batch::v1::CronJob>),
    (
        "coordination.k8s.io",
        "Lease",
        schema_of::<coordination::v1::Lease>,
    ),
    (
        "discovery.k8s.io",
        "EndpointSlice",
        schema_of::<discovery::v1::EndpointSlice>,
    ),
    (
        "",
        "PersistentVolumeClaim",
        schema_of::<core::v1::PersistentVolumeClaim>,
    ),
    ("", "PersistentVolume", schema_of::<core::v1::PersistentVolume>),
    ("", "ResourceQuota", schema_of::<core::v1::ResourceQuota>),
    ("", "LimitRange", schema_of::<core::v1::LimitRange>),
    ("", "PodTemplate", schema_of::<core::v1::PodTemplate>),
    (
        "",
        "ReplicationController",
        schema_of::<core::v1::ReplicationController>,
    ),
    ("rbac.authorization.k8s.io", "Role", schema_of::<rbac::v1::Role>),
    (
        "rbac.authorization.k8s.io",
        "RoleBinding",
        schema_of::<rbac::v1::RoleBinding>,
    ),
    (
        "rbac.authorization.k8s.io",
        "ClusterRole",
        schema_of::<rbac::v1::ClusterRole>,
    ),
    (
        "rbac.authorization.k8s.io",
        "ClusterRoleBinding",
        schema_of::<rbac::v1::ClusterRoleBinding>,
    ),
    (
        "networking.k8s.io",
        "Ingress",
        schema_of::<networking::v1::Ingress>,
    ),
    (
        "networking.k8s.io",
        "IngressClass",
        schema_of::<networking::v1::IngressClass>,
    ),
    (
        "networking.k8s.io",
        "NetworkPolicy",
        schema_of::<networking::v1::NetworkPolicy>,
    ),
    (
        "policy",
        "PodDisruptionBudget",
        schema_of::<policy::v1::PodDisruptionBudget>,
    ),
    // Keyed by group and kind: the v2 shape serves both versions' patches.
    (
        "autoscaling",
        "HorizontalPodAutoscaler",
        schema_of::<autoscaling::v2::HorizontalPodAutoscaler>,
    ),
    (
        "storage.k8s.io",
        "StorageClass",
        schema_of::<storage::v1::StorageClass>,
    ),
    ("storage.k8s.io", "CSIDriver", schema_of::<storage::v1::CSIDriver>),
    (
        "scheduling.k8s.io",
        "PriorityClass",
        schema_of::<scheduling::v1::PriorityClass>,
    ),
    ("node.k8s.io", "RuntimeClass", schema_of::<node::v1::RuntimeClass>),
    (
        "admissionregistration.k8s.io",
        "ValidatingWebhookConfiguration",
        schema_of::<admissionregistration::v1::ValidatingWebhookConfiguration>,
    ),
    (
        "admissionregistration.k8s.io",
        "MutatingWebhookConfiguration",
        schema_of::<admissionregistration::v1::MutatingWebhookConfiguration>,
    ),
    (
        "admissionregistration.k8s.io",
        "ValidatingAdmissionPolicy",
        schema_of::<admissionregistration::v1::ValidatingAdmissionPolicy>,
    ),
    (
        "admissionregistration.k8s.io",
        "ValidatingAdmissionPolicyBinding",
        schema_of::<admissionregistration::v1::ValidatingAdmissionPolicyBinding>,
    ),
    (
        "apiregistration.k8s.io",
        "APIService",
        schema_of::<apiregistration::v1::APIService>,
    ),
    (
        "certificates.k8s.io",
        "CertificateSigningRequest",
        schema_of::<certificates::v1::CertificateSigningRequest>,
    ),
];

fn schema_of<T: schemars::JsonSchema>() -> Value {
    schemars::schema_for!(T).to_value()
}

#[derive(Debug, Default)]
struct Node {
    shape: Shape,
    name: Option<String>,
    fields: BTreeMap<String, (NodeId, FieldTags)>,
    items: Option<NodeId>,
    atomic: bool,
}

#[derive(Debug)]
struct Graph {
    nodes: Vec<Node>,
    roots: HashMap<(String, String), NodeId>,
}

static GRAPH: LazyLock<Graph> = LazyLock::new(build_graph);

fn graph() -> &'static Graph {
    &GRAPH
}

/// Builds the graph now (see [`crate::prepare_tables`]).
pub(crate) fn prepare() {
    LazyLock::force(&GRAPH);
}

fn build_graph() -> Graph {
    let mut defs = BTreeMap::new();
    let mut root_names = Vec::new();
    for (group, kind, make) in KINDS {
        let mut root = make();
        if let Some(Value::Object(more)) = root.as_object_mut().and_then(|o| o.remove("$defs")) {
            defs.extend(more);
        }
        let title = root["title"].as_str().unwrap_or(kind).to_owned();
        root_names.push(((group.to_string(), kind.to_string()), title.clone()));
        defs.insert(title, root);
    }
    let mut builder = Builder::new(&defs);
    builder.fill_all(&defs);
    builder.apply_tables();
    let roots = root_names
        .into_iter()
        .filter_map(|(key, title)| Some((key, *builder.ids.get(&title)?)))
        .collect();
    Graph {
        nodes: builder.nodes,
        roots,
    }
}

struct Builder {
    nodes: Vec<Node>,
    ids: HashMap<String, NodeId>,
}

impl Builder {
    /// Reserves one node per definition so references can be resolved in any order.
    fn new(defs: &BTreeMap<String, Value>) -> Builder {
        let mut nodes = vec![Node::default()];
        let mut ids = HashMap::new();
        for name in defs.keys() {
            ids.insert(name.clone(), nodes.len());
            nodes.push(Node {
                name: Some(name.clone()),
                ..Node::default()
            });
        }
        Builder { nodes, ids }
    }

    fn fill_all(&mut self, defs: &BTreeMap<String, Value>) {
        for (name, def) in defs {
            let id = self.ids[name];
            let (shape, items, fields) = self.describe(def);
            let node = &mut self.nodes[id];
            node.shape = shape;
            node.items = items;
            node.fields = fields;
        }
    }

    /// Shape, element and fields of a schema object.
    fn describe(&mut self, schema: &Value) -> (Shape, Option<NodeId>, BTreeMap<String, (NodeId, FieldTags)>) {
        if let Some(props) = schema.get("properties").and_then(Value::as_object) {
            return (Shape::Struct, None, self.fields(props));
        }
        match json_type(schema) {
            Some("array") => {
                let items = schema.get("items").map(|i| self.node_for(i));
                (Shape::List, items, BTreeMap::new())
            }
            Some("object") => match schema.get("additionalProperties") {
                Some(ap @ Value::Object(_)) => (Shape::Map, Some(self.node_for(ap)), BTreeMap::new()),
                _ => (Shape::Scalar, None, BTreeMap::new()),
            },
            _ => (Shape::Scalar, None, BTreeMap::new()),
        }
    }

    fn fields(&mut self, props: &Map<String, Value>) -> BTreeMap<String, (NodeId, FieldTags)> {
        props
            .iter()
            .map(|(field, prop)| (field.clone(), (self.node_for(prop), FieldTags::default())))
            .collect()
    }

    /// The node a property points to: a definition, a new anonymous node, or
    /// the shared scalar.
    fn node_for(&mut self, prop: &Value) -> NodeId {
        if let Some(target) = prop.get("$ref").and_then(Value::as_str) {
            let name = target.rsplit('/').next().unwrap_or(target);
            return self.ids.get(name).copied().unwrap_or(SCALAR);
        }
        let (shape, items, fields) = self.describe(prop);
        if shape == Shape::Scalar {
            return SCALAR;
        }
        self.nodes.push(Node {
            shape,
            name: None,
            fields,
            items,
            atomic: false,
        });
        self.nodes.len() - 1
    }

    fn apply_tables(&mut self) {
        for (ty, field, smp, list) in FIELD_TAGS {
            if let Some(tags) = self.tags_mut(ty, field) {
                tags.smp = *smp;
                tags.list = *list;
            }
        }
        for (ty, field) in ATOMIC_MAP_FIELDS {
            if let Some(tags) = self.tags_mut(ty, field) {
                tags.map_atomic = Some(true);
            }
        }
        for ty in ATOMIC_STRUCTS {
            if let Some(&id) = self.ids.get(&full_name(ty)) {
                self.nodes[id].atomic = true;
            }
        }
    }

    fn tags_mut(&mut self, ty: &str, field: &str) -> Option<&mut FieldTags> {
        let id = *self.ids.get(&full_name(ty))?;
        self.nodes[id].fields.get_mut(field).map(|(_, tags)| tags)
    }
}

/// The JSON-schema `type`, ignoring `"null"` in a type list.
fn json_type(schema: &Value) -> Option<&str> {
    match schema.get("type")? {
        Value::String(s) => Some(s),
        Value::Array(types) => types.iter().filter_map(Value::as_str).find(|t| *t != "null"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(kind: (&str, &str), path: &[&str]) -> Schema {
        let mut s = Schema::for_kind(kind.0, kind.1).expect("kind");
        for step in path {
            s = match *step {
                "[]" => s.items(),
                name => s.field(name),
            }
            .unwrap_or_else(|| panic!("no {step} in {path:?}"));
        }
        s
    }

    #[test]
    fn every_kind_resolves() {
        for (group, kind) in Schema::kinds() {
            let s = Schema::for_kind(group, kind).expect(kind);
            assert_eq!(s.shape(), Shape::Struct, "{kind}");
            assert!(s.field("metadata").is_some(), "{kind}");
        }
        assert!(Schema::for_kind("apps", "Nope").is_none());
    }

    #[test]
    fn table_entries_name_real_fields() {
        for (ty, field, _, _) in FIELD_TAGS {
            let id = graph()
                .nodes
                .iter()
                .position(|n| n.name.as_deref() == Some(&full_name(ty)));
            let id = id.unwrap_or_else(|| panic!("unknown type {ty}"));
            assert!(graph().nodes[id].fields.contains_key(*field), "{ty}.{field}");
        }
        for ty in ATOMIC_STRUCTS {
            assert!(
                graph()
                    .nodes
                    .iter()
                    .any(|n| n.name.as_deref() == Some(&full_name(ty))),
                "{ty}"
            );
        }
    }

    #[test]
    fn pod_fields() {
        let pod = ("", "Pod");
        let containers = at(pod, &["spec", "containers"]);
        assert_eq!(containers.shape(), Shape::List);
        assert_eq!(containers.patch_strategy(), merge("name"));
        assert_eq!(containers.list_type(), ListType::Map(&["name"]));
        let c = containers.items().unwrap();
        assert_eq!(c.type_name(), Some("io.k8s.api.core.v1.Container"));
        let ports = c.field("ports").unwrap();
        assert_eq!(ports.patch_merge_key(), Some("containerPort"));
        assert_eq!(ports.list_type(), ListType::Map(&["containerPort", "protocol"]));
        assert_eq!(
            at(pod, &["spec", "volumes"]).patch_strategy(),
            PatchStrategy::MergeRetainKeys { key: "name" }
        );
        let ns = at(pod, &["spec", "nodeSelector"]);
        assert_eq!(ns.shape(), Shape::Map);
        assert!(ns.map_atomic());
        assert_eq!(ns.patch_strategy(), PatchStrategy::Default);
        assert_eq!(at(pod, &["metadata", "labels"]).shape(), Shape::Map);
        assert!(!at(pod, &["metadata", "labels"]).map_atomic());
        assert_eq!(at(pod, &["metadata", "finalizers"]).list_type(), ListType::Set);
        assert_eq!(at(pod, &["status", "hostIPs"]).list_type(), ListType::Atomic);
        assert_eq!(
            at(pod, &["spec", "tolerations"]).patch_strategy(),
            PatchStrategy::Default
        );
        let args = at(pod, &["spec", "containers", "[]", "args"]);
        assert_eq!(args.list_type(), ListType::Atomic);
        assert_eq!(args.items().unwrap().shape(), Shape::Scalar);
        let limits = at(pod, &["spec", "containers", "[]", "resources", "limits"]);
        assert_eq!(limits.shape(), Shape::Map);
        assert_eq!(
            limits.items().unwrap().type_name(),
            Some("io.k8s.apimachinery.pkg.api.resource.Quantity")
        );
    }

    #[test]
    fn workload_fields() {
        let d = ("apps", "Deployment");
        assert_eq!(
            at(d, &["spec", "strategy"]).patch_strategy(),
            PatchStrategy::RetainKeys
        );
        assert!(at(d, &["spec", "selector"]).map_atomic());
        assert_eq!(
            at(d, &["status", "conditions"]).list_type(),
            ListType::Map(&["type"])
        );
        let job = at(("batch", "Job"), &["status", "conditions"]);
        assert_eq!(job.patch_strategy(), merge("type"));
        assert_eq!(job.list_type(), ListType::Atomic);
        let cj = at(
            ("batch", "CronJob"),
            &["spec", "jobTemplate", "spec", "template", "spec", "containers"],
        );
        assert_eq!(cj.patch_merge_key(), Some("name"));
        let svc = at(("", "Service"), &["spec", "ports"]);
        assert_eq!(svc.patch_merge_key(), Some("port"));
        assert_eq!(svc.list_type(), ListType::Map(&["port", "protocol"]));
        assert!(at(("", "Service"), &["spec", "selector"]).map_atomic());
        assert_eq!(at(("", "Node"), &["spec", "podCIDRs"]).patch_strategy(), VALUES);
        assert_eq!(at(("", "ConfigMap"), &["data"]).shape(), Shape::Map);
        assert!(Schema::for_kind("events.k8s.io", "Event").is_some());
        assert!(at(("", "Pod"), &["metadata", "ownerReferences", "[]"]).map_atomic());
    }
}
