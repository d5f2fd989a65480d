//! The resource registry: which kinds are served, and how.
//!
//! Routes are not hard-wired per kind: the HTTP layer, discovery and OpenAPI
//! all read this table. A later CustomResourceDefinition adds a row at run
//! time ([`Registry::insert`]); the built-in rows come from [`builtin`].

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

/// A subresource served under a resource (`deployments/scale`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Subresource {
    /// `/status`: writes only `.status`; the main resource ignores status.
    Status,
    /// `/scale`: an `autoscaling/v1` Scale view of `spec.replicas`.
    Scale,
    /// `pods/binding`: assigns a pod to a node.
    Binding,
    /// `pods/log`: the container log, as text.
    Log,
    /// `pods/eviction`: a policy/v1 Eviction, honouring PodDisruptionBudgets.
    Eviction,
    /// `pods/ephemeralcontainers`: writes only `spec.ephemeralContainers`.
    EphemeralContainers,
    /// `serviceaccounts/token`: an authentication.k8s.io/v1 TokenRequest.
    Token,
    /// `certificatesigningrequests/approval`: writes only the Approved/Denied conditions.
    Approval,
}

impl Subresource {
    /// The path segment.
    pub fn as_str(self) -> &'static str {
        match self {
            Subresource::Status => "status",
            Subresource::Scale => "scale",
            Subresource::Binding => "binding",
            Subresource::Log => "log",
            Subresource::Eviction => "eviction",
            Subresource::EphemeralContainers => "ephemeralcontainers",
            Subresource::Token => "token",
            Subresource::Approval => "approval",
        }
    }
}

/// One served resource (a row of `kubectl api-resources`).
#[derive(Clone, Debug, PartialEq)]
pub struct ResourceInfo {
    /// API group, `""` for core.
    pub group: String,
    /// Version, e.g. `v1`.
    pub version: String,
    /// Kind, e.g. `Deployment`.
    pub kind: String,
    /// Plural resource name, e.g. `deployments`; the URL segment.
    pub plural: String,
    /// Singular, lower-case, e.g. `deployment`.
    pub singular: String,
    /// Namespaced or cluster-scoped.
    pub namespaced: bool,
    /// `po`, `deploy`, ...
    pub short_names: Vec<String>,
    /// `all`, ...
    pub categories: Vec<String>,
    /// Subresources served.
    pub subresources: Vec<Subresource>,
    /// Whether a spec change bumps `metadata.generation` (kinds with a spec
    /// and a status subresource).
    pub has_generation: bool,
    /// Storage key segment; for events.k8s.io events, `events` (they share
    /// storage with core/v1 events upstream — not done here, see `builtin`).
    pub storage_name: String,
    /// Only `create` is served: the review kinds (TokenReview,
    /// SubjectAccessReview, ...) answer a request and store nothing.
    pub create_only: bool,
    /// The version objects are stored in (upstream's storage version): this
    /// row's own version, or another served version of the same resource
    /// (autoscaling/v1 HorizontalPodAutoscalers are stored as v2). Requests
    /// convert through [`crate::conversion`].
    pub storage_version: String,
    /// For a custom resource, what its CustomResourceDefinition says of this
    /// version; `None` for built-in kinds.
    pub custom: Option<Arc<crate::crd::CustomVersion>>,
}

impl ResourceInfo {
    /// `apps/v1`, or `v1` for core.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// `DeploymentList`.
    pub fn list_kind(&self) -> String {
        format!("{}List", self.kind)
    }

    /// The verbs served on the collection and its objects, as discovery lists them.
    pub fn verbs(&self) -> &'static [&'static str] {
        if self.create_only {
            &["create"]
        } else {
            &[
                "create",
                "delete",
                "deletecollection",
                "get",
                "list",
                "patch",
                "update",
                "watch",
            ]
        }
    }

    /// Whether `sub` is served.
    pub fn has(&self, sub: Subresource) -> bool {
        self.subresources.contains(&sub)
    }

    /// The store key of one object: `/registry/<group>/<plural>/<ns>/<name>`.
    pub fn key(&self, namespace: Option<&str>, name: &str) -> String {
        format!("{}{}", self.prefix(namespace), name)
    }

    /// The store prefix of a collection, all namespaces when `namespace` is
    /// `None` for a namespaced kind.
    pub fn prefix(&self, namespace: Option<&str>) -> String {
        let group = if self.group.is_empty() {
            "core"
        } else {
            &self.group
        };
        match (self.namespaced, namespace) {
            (true, Some(ns)) => format!("/registry/{group}/{}/{ns}/", self.storage_name),
            _ => format!("/registry/{group}/{}/", self.storage_name),
        }
    }
}

/// Resources keyed by (group, version, plural).
type ResourceMap = BTreeMap<(String, String, String), Arc<ResourceInfo>>;

/// The table of served resources. Cheap to clone; shared by every handler.
#[derive(Clone, Debug)]
pub struct Registry {
    /// Keyed by (group, version, plural). `RwLock` because CRDs will add rows
    /// at run time; readers hold it only to clone an `Arc`.
    inner: Arc<RwLock<ResourceMap>>,
    /// Counts the changes of the table; [`Registry::subscribe`]rs (the
    /// APIService sync, `api/apiservices.rs`) wake on each. The sender lives
    /// as long as any clone of the registry.
    changes: Arc<tokio::sync::watch::Sender<u64>>,
}

impl Default for Registry {
    fn default() -> Self {
        Self::new()
    }
}

impl Registry {
    /// A registry of the built-in kinds.
    pub fn new() -> Self {
        let r = Registry {
            inner: Arc::default(),
            changes: Arc::new(tokio::sync::watch::Sender::new(0)),
        };
        for info in builtin() {
            r.insert(info);
        }
        r
    }

    /// Adds or replaces a resource.
    pub fn insert(&self, info: ResourceInfo) {
        let key = (info.group.clone(), info.version.clone(), info.plural.clone());
        self.inner
            .write()
            .expect("registry lock poisoned")
            .insert(key, Arc::new(info));
        self.changes.send_modify(|n| *n += 1);
    }

    /// Removes a resource; `None` when there was no such row. Subscribers
    /// see the change as they see an insert.
    pub fn remove(&self, group: &str, version: &str, plural: &str) -> Option<Arc<ResourceInfo>> {
        let key = (group.to_string(), version.to_string(), plural.to_string());
        let removed = self.inner.write().expect("registry lock poisoned").remove(&key);
        if removed.is_some() {
            self.changes.send_modify(|n| *n += 1);
        }
        removed
    }

    /// A receiver that sees a change each time a row is added, replaced or removed.
    pub fn subscribe(&self) -> tokio::sync::watch::Receiver<u64> {
        self.changes.subscribe()
    }

    /// Looks up a resource by URL parts.
    pub fn get(&self, group: &str, version: &str, plural: &str) -> Option<Arc<ResourceInfo>> {
        let map = self.inner.read().expect("registry lock poisoned");
        map.get(&(group.to_string(), version.to_string(), plural.to_string()))
            .cloned()
    }

    /// Looks up a resource by apiVersion and kind.
    pub fn by_kind(&self, api_version: &str, kind: &str) -> Option<Arc<ResourceInfo>> {
        self.all()
            .into_iter()
            .find(|r| r.kind == kind && r.api_version() == api_version)
    }

    /// Every resource, sorted by group, version, plural.
    pub fn all(&self) -> Vec<Arc<ResourceInfo>> {
        let map = self.inner.read().expect("registry lock poisoned");
        map.values().cloned().collect()
    }

    /// The group-versions served, in discovery order: core (`""`, `v1`)
    /// first, then by upstream's group and version priorities
    /// ([`crate::kinds::apiregistration::discovery_order`]; a group's
    /// preferred version comes first).
    pub fn group_versions(&self) -> Vec<(String, String)> {
        let mut gvs: Vec<(String, String)> = Vec::new();
        for r in self.all() {
            let gv = (r.group.clone(), r.version.clone());
            if !gvs.contains(&gv) {
                gvs.push(gv);
            }
        }
        crate::kinds::apiregistration::discovery_order(gvs)
    }
}

/// Builds one row. `flags` is a compact spec: namespaced?, generation?.
#[allow(clippy::too_many_arguments)] // a table row; named columns would not read better
fn row(
    group: &str,
    version: &str,
    kind: &str,
    plural: &str,
    namespaced: bool,
    short: &[&str],
    categories: &[&str],
    subresources: &[Subresource],
) -> ResourceInfo {
    ResourceInfo {
        group: group.into(),
        version: version.into(),
        kind: kind.into(),
        plural: plural.into(),
        singular: kind.to_lowercase(),
        namespaced,
        short_names: short.iter().map(|s| s.to_string()).collect(),
        categories: categories.iter().map(|s| s.to_string()).collect(),
        subresources: subresources.to_vec(),
        has_generation: false,
        storage_name: plural.into(),
        create_only: false,
        storage_version: version.into(),
        custom: None,
    }
}

/// A row whose objects are stored in another version of the same resource.
fn stored_as(version: &str, mut r: ResourceInfo) -> ResourceInfo {
    r.storage_version = version.into();
    r
}

/// The built-in resources, as upstream serves them (scope, short names,
/// categories, subresources).
pub fn builtin() -> Vec<ResourceInfo> {
    use Subresource::*;
    let all = &["all"][..];
    let with_gen = |mut r: ResourceInfo| {
        r.has_generation = true;
        r
    };
    vec![
        // core/v1
        row(
            "",
            "v1",
            "Namespace",
            "namespaces",
            false,
            &["ns"],
            &[],
            &[Status],
        ),
        with_gen(row(
            "",
            "v1",
            "Pod",
            "pods",
            true,
            &["po"],
            all,
            &[Status, Binding, Log, Eviction, EphemeralContainers],
        )),
        row("", "v1", "Node", "nodes", false, &["no"], &[], &[Status]),
        row("", "v1", "Service", "services", true, &["svc"], all, &[Status]),
        row("", "v1", "Endpoints", "endpoints", true, &["ep"], &[], &[]),
        row("", "v1", "ConfigMap", "configmaps", true, &["cm"], &[], &[]),
        row("", "v1", "Secret", "secrets", true, &[], &[], &[]),
        row(
            "",
            "v1",
            "ServiceAccount",
            "serviceaccounts",
            true,
            &["sa"],
            &[],
            &[Token],
        ),
        row("", "v1", "Event", "events", true, &["ev"], &[], &[]),
        // apps/v1
        with_gen(row(
            "apps",
            "v1",
            "Deployment",
            "deployments",
            true,
            &["deploy"],
            all,
            &[Scale, Status],
        )),
        with_gen(row(
            "apps",
            "v1",
            "ReplicaSet",
            "replicasets",
            true,
            &["rs"],
            all,
            &[Scale, Status],
        )),
        with_gen(row(
            "apps",
            "v1",
            "StatefulSet",
            "statefulsets",
            true,
            &["sts"],
            all,
            &[Scale, Status],
        )),
        with_gen(row(
            "apps",
            "v1",
            "DaemonSet",
            "daemonsets",
            true,
            &["ds"],
            all,
            &[Status],
        )),
        row(
            "apps",
            "v1",
            "ControllerRevision",
            "controllerrevisions",
            true,
            &[],
            &[],
            &[],
        ),
        // batch/v1
        with_gen(row("batch", "v1", "Job", "jobs", true, &[], all, &[Status])),
        with_gen(row(
            "batch",
            "v1",
            "CronJob",
            "cronjobs",
            true,
            &["cj"],
            all,
            &[Status],
        )),
        // coordination.k8s.io/v1
        row(
            "coordination.k8s.io",
            "v1",
            "Lease",
            "leases",
            true,
            &[],
            &[],
            &[],
        ),
        // discovery.k8s.io/v1
        row(
            "discovery.k8s.io",
            "v1",
            "EndpointSlice",
            "endpointslices",
            true,
            &[],
            &[],
            &[],
        ),
        // events.k8s.io/v1 (stored apart from core/v1 events here)
        row("events.k8s.io", "v1", "Event", "events", true, &["ev"], &[], &[]),
    ]
    .into_iter()
    .chain(breadth())
    .collect()
}

/// The kinds real install manifests, charts and operators use beyond the
/// workloads: storage, policy, networking, RBAC, admission, identity.
fn breadth() -> Vec<ResourceInfo> {
    use Subresource::*;
    let all = &["all"][..];
    let ext = &["api-extensions"][..];
    let with_gen = |mut r: ResourceInfo| {
        r.has_generation = true;
        r
    };
    let review = |mut r: ResourceInfo| {
        r.create_only = true;
        r
    };
    let core = |kind, plural, namespaced, short: &[&str], subs: &[Subresource]| {
        row("", "v1", kind, plural, namespaced, short, &[], subs)
    };
    vec![
        // core/v1
        core(
            "PersistentVolumeClaim",
            "persistentvolumeclaims",
            true,
            &["pvc"],
            &[Status],
        ),
        core("PersistentVolume", "persistentvolumes", false, &["pv"], &[Status]),
        core("ResourceQuota", "resourcequotas", true, &["quota"], &[Status]),
        core("LimitRange", "limitranges", true, &["limits"], &[]),
        core("PodTemplate", "podtemplates", true, &[], &[]),
        with_gen(row(
            "",
            "v1",
            "ReplicationController",
            "replicationcontrollers",
            true,
            &["rc"],
            all,
            &[Scale, Status],
        )),
        // rbac.authorization.k8s.io/v1
        row(
            "rbac.authorization.k8s.io",
            "v1",
            "Role",
            "roles",
            true,
            &[],
            &[],
            &[],
        ),
        row(
            "rbac.authorization.k8s.io",
            "v1",
            "RoleBinding",
            "rolebindings",
            true,
            &[],
            &[],
            &[],
        ),
        row(
            "rbac.authorization.k8s.io",
            "v1",
            "ClusterRole",
            "clusterroles",
            false,
            &[],
            &[],
            &[],
        ),
        row(
            "rbac.authorization.k8s.io",
            "v1",
            "ClusterRoleBinding",
            "clusterrolebindings",
            false,
            &[],
            &[],
            &[],
        ),
        // networking.k8s.io/v1
        with_gen(row(
            "networking.k8s.io",
            "v1",
            "Ingress",
            "ingresses",
            true,
            &["ing"],
            &[],
            &[Status],
        )),
        with_gen(row(
            "networking.k8s.io",
            "v1",
            "IngressClass",
            "ingressclasses",
            false,
            &[],
            &[],
            &[],
        )),
        with_gen(row(
            "networking.k8s.io",
            "v1",
            "NetworkPolicy",
            "networkpolicies",
            true,
            &["netpol"],
            &[],
            &[],
        )),
        // policy/v1
        with_gen(row(
            "policy",
            "v1",
            "PodDisruptionBudget",
            "poddisruptionbudgets",
            true,
            &["pdb"],
            &[],
            &[Status],
        )),
        // autoscaling/v1 and v2: one object, stored as v2, two views
        stored_as(
            "v2",
            row(
                "autoscaling",
                "v1",
                "HorizontalPodAutoscaler",
                "horizontalpodautoscalers",
                true,
                &["hpa"],
                all,
                &[Status],
            ),
        ),
        row(
            "autoscaling",
            "v2",
            "HorizontalPodAutoscaler",
            "horizontalpodautoscalers",
            true,
            &["hpa"],
            all,
            &[Status],
        ),
        // storage.k8s.io/v1
        row(
            "storage.k8s.io",
            "v1",
            "StorageClass",
            "storageclasses",
            false,
            &["sc"],
            &[],
            &[],
        ),
        row(
            "storage.k8s.io",
            "v1",
            "CSIDriver",
            "csidrivers",
            false,
            &[],
            &[],
            &[],
        ),
        // scheduling.k8s.io/v1, node.k8s.io/v1
        row(
            "scheduling.k8s.io",
            "v1",
            "PriorityClass",
            "priorityclasses",
            false,
            &["pc"],
            &[],
            &[],
        ),
        row(
            "node.k8s.io",
            "v1",
            "RuntimeClass",
            "runtimeclasses",
            false,
            &[],
            &[],
            &[],
        ),
        // admissionregistration.k8s.io/v1
        with_gen(row(
            "admissionregistration.k8s.io",
            "v1",
            "ValidatingWebhookConfiguration",
            "validatingwebhookconfigurations",
            false,
            &[],
            ext,
            &[],
        )),
        with_gen(row(
            "admissionregistration.k8s.io",
            "v1",
            "MutatingWebhookConfiguration",
            "mutatingwebhookconfigurations",
            false,
            &[],
            ext,
            &[],
        )),
        with_gen(row(
            "admissionregistration.k8s.io",
            "v1",
            "ValidatingAdmissionPolicy",
            "validatingadmissionpolicies",
            false,
            &[],
            ext,
            &[Status],
        )),
        with_gen(row(
            "admissionregistration.k8s.io",
            "v1",
            "ValidatingAdmissionPolicyBinding",
            "validatingadmissionpolicybindings",
            false,
            &[],
            ext,
            &[],
        )),
        // apiextensions.k8s.io/v1
        with_gen(row(
            "apiextensions.k8s.io",
            "v1",
            "CustomResourceDefinition",
            "customresourcedefinitions",
            false,
            &["crd", "crds"],
            ext,
            &[Status],
        )),
        // apiregistration.k8s.io/v1, certificates.k8s.io/v1
        row(
            "apiregistration.k8s.io",
            "v1",
            "APIService",
            "apiservices",
            false,
            &[],
            ext,
            &[Status],
        ),
        row(
            "certificates.k8s.io",
            "v1",
            "CertificateSigningRequest",
            "certificatesigningrequests",
            false,
            &["csr"],
            &[],
            &[Approval, Status],
        ),
        // authentication.k8s.io/v1, authorization.k8s.io/v1: reviews, created and answered
        review(row(
            "authentication.k8s.io",
            "v1",
            "TokenReview",
            "tokenreviews",
            false,
            &[],
            &[],
            &[],
        )),
        review(row(
            "authentication.k8s.io",
            "v1",
            "SelfSubjectReview",
            "selfsubjectreviews",
            false,
            &[],
            &[],
            &[],
        )),
        review(row(
            "authorization.k8s.io",
            "v1",
            "SubjectAccessReview",
            "subjectaccessreviews",
            false,
            &[],
            &[],
            &[],
        )),
        review(row(
            "authorization.k8s.io",
            "v1",
            "SelfSubjectAccessReview",
            "selfsubjectaccessreviews",
            false,
            &[],
            &[],
            &[],
        )),
        review(row(
            "authorization.k8s.io",
            "v1",
            "SelfSubjectRulesReview",
            "selfsubjectrulesreviews",
            false,
            &[],
            &[],
            &[],
        )),
        review(row(
            "authorization.k8s.io",
            "v1",
            "LocalSubjectAccessReview",
            "localsubjectaccessreviews",
            true,
            &[],
            &[],
            &[],
        )),
    ]
}
