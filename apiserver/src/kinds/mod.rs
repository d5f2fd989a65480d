//! Per-kind registry strategies: defaulting, create/update preparation and
//! validation, as pure functions over `serde_json::Value`.
//!
//! The write path calls, in this order:
//! 1. [`default_object`] on every decoded request body (upstream layer D,
//!    `pkg/apis/*/v1/defaults.go` plus the conversions that shape v1 output);
//! 2. [`prepare_for_create`] / [`prepare_for_update`] /
//!    [`prepare_for_status_update`] (upstream layer S, the
//!    `PrepareFor*` methods of `pkg/registry/**/strategy.go`, plus the
//!    create-time admission defaults that a real cluster always applies to
//!    pods: ServiceAccount, DefaultTolerationSeconds, Priority);
//! 3. [`validate_create`] / [`validate_update`] (upstream
//!    `pkg/apis/*/validation`, `apimachinery/pkg/api/validation`).
//!
//! Messages and field paths follow upstream so `kubectl` prints the same
//! text; values that upstream prints with Go's `%#v` (maps, selectors,
//! IntOrString) are rendered the same way by helpers in [`meta`].
//!
//! Layout: [`meta`] holds name rules and ObjectMeta; [`pod`] PodSpec and Pod;
//! [`workloads`] Deployment, ReplicaSet, StatefulSet, DaemonSet; [`batch`]
//! Job and CronJob; [`core`] the other core/v1 kinds plus Lease,
//! ControllerRevision and events.k8s.io Events; [`discovery`] EndpointSlice;
//! [`storage`] PersistentVolume(Claim), StorageClass, CSIDriver; [`scheduling`]
//! PriorityClass, RuntimeClass; [`apiextensions`] CustomResourceDefinition.
//! Custom resources (rows with `ResourceInfo::custom`) get [`custom`]:
//! their schema's defaults and validation, status dropped on create when
//! the status subresource is on, generation bumped on any change outside
//! metadata (and status, with the subresource). Other unknown kinds get
//! the same generic strategy without a schema.
//!
//! Simplified overall: feature-gated fields are treated with 1.33 default
//! gates; resource quantities are compared numerically but not re-serialized
//! in canonical form; a few `%#v` renderings of large structs are shortened
//! (see each module).

pub mod admissionregistration;
pub mod apiextensions;
pub mod apiregistration;
pub mod autoscaling;
pub mod batch;
pub mod certificates;
pub mod core;
pub mod custom;
pub mod discovery;
pub mod ephemeral;
pub mod legacy;
pub mod meta;
pub mod networking;
pub mod pod;
pub mod policy;
pub mod quota;
pub mod rbac;
pub mod scheduling;
pub mod storage;
pub mod workloads;

#[cfg(test)]
mod tests;

use serde_json::{Map, Value, json};

use crate::error::FieldError;
use crate::jsonpath::at;
use crate::registry::{ResourceInfo, Subresource};

/// The built-in kinds with a strategy of their own (and, in [`crate::table`], a printer).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Pod,
    Namespace,
    Node,
    Service,
    Endpoints,
    ConfigMap,
    Secret,
    ServiceAccount,
    Event,
    Deployment,
    ReplicaSet,
    StatefulSet,
    DaemonSet,
    ControllerRevision,
    Job,
    CronJob,
    Lease,
    /// discovery.k8s.io/v1 EndpointSlice.
    EndpointSlice,
    /// events.k8s.io/v1 Event.
    EventV1,
    PersistentVolumeClaim,
    PersistentVolume,
    ResourceQuota,
    LimitRange,
    PodTemplate,
    ReplicationController,
    Role,
    RoleBinding,
    ClusterRole,
    ClusterRoleBinding,
    Ingress,
    IngressClass,
    NetworkPolicy,
    PodDisruptionBudget,
    /// autoscaling/v1 HorizontalPodAutoscaler (a view of the stored v2 object).
    HorizontalPodAutoscalerV1,
    /// autoscaling/v2 HorizontalPodAutoscaler.
    HorizontalPodAutoscaler,
    StorageClass,
    CSIDriver,
    PriorityClass,
    RuntimeClass,
    ValidatingWebhookConfiguration,
    MutatingWebhookConfiguration,
    ValidatingAdmissionPolicy,
    ValidatingAdmissionPolicyBinding,
    APIService,
    CertificateSigningRequest,
    /// apiextensions.k8s.io/v1 CustomResourceDefinition.
    CustomResourceDefinition,
    /// The create-only review kinds of authentication.k8s.io and authorization.k8s.io.
    Review,
    /// Custom resources and anything not listed.
    Other,
}

pub(crate) fn kind_of(info: &ResourceInfo) -> Kind {
    if info.custom.is_some() {
        return Kind::Other;
    }
    match (info.group.as_str(), info.kind.as_str()) {
        ("", "Pod") => Kind::Pod,
        ("", "Namespace") => Kind::Namespace,
        ("", "Node") => Kind::Node,
        ("", "Service") => Kind::Service,
        ("", "Endpoints") => Kind::Endpoints,
        ("", "ConfigMap") => Kind::ConfigMap,
        ("", "Secret") => Kind::Secret,
        ("", "ServiceAccount") => Kind::ServiceAccount,
        ("", "Event") => Kind::Event,
        ("apps", "Deployment") => Kind::Deployment,
        ("apps", "ReplicaSet") => Kind::ReplicaSet,
        ("apps", "StatefulSet") => Kind::StatefulSet,
        ("apps", "DaemonSet") => Kind::DaemonSet,
        ("apps", "ControllerRevision") => Kind::ControllerRevision,
        ("batch", "Job") => Kind::Job,
        ("batch", "CronJob") => Kind::CronJob,
        ("coordination.k8s.io", "Lease") => Kind::Lease,
        ("discovery.k8s.io", "EndpointSlice") => Kind::EndpointSlice,
        ("events.k8s.io", "Event") => Kind::EventV1,
        ("", "PersistentVolumeClaim") => Kind::PersistentVolumeClaim,
        ("", "PersistentVolume") => Kind::PersistentVolume,
        ("", "ResourceQuota") => Kind::ResourceQuota,
        ("", "LimitRange") => Kind::LimitRange,
        ("", "PodTemplate") => Kind::PodTemplate,
        ("", "ReplicationController") => Kind::ReplicationController,
        ("rbac.authorization.k8s.io", "Role") => Kind::Role,
        ("rbac.authorization.k8s.io", "RoleBinding") => Kind::RoleBinding,
        ("rbac.authorization.k8s.io", "ClusterRole") => Kind::ClusterRole,
        ("rbac.authorization.k8s.io", "ClusterRoleBinding") => Kind::ClusterRoleBinding,
        ("networking.k8s.io", "Ingress") => Kind::Ingress,
        ("networking.k8s.io", "IngressClass") => Kind::IngressClass,
        ("networking.k8s.io", "NetworkPolicy") => Kind::NetworkPolicy,
        ("policy", "PodDisruptionBudget") => Kind::PodDisruptionBudget,
        ("autoscaling", "HorizontalPodAutoscaler") if info.version == "v1" => Kind::HorizontalPodAutoscalerV1,
        ("autoscaling", "HorizontalPodAutoscaler") => Kind::HorizontalPodAutoscaler,
        ("storage.k8s.io", "StorageClass") => Kind::StorageClass,
        ("storage.k8s.io", "CSIDriver") => Kind::CSIDriver,
        ("scheduling.k8s.io", "PriorityClass") => Kind::PriorityClass,
        ("node.k8s.io", "RuntimeClass") => Kind::RuntimeClass,
        ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration") => {
            Kind::ValidatingWebhookConfiguration
        }
        ("admissionregistration.k8s.io", "MutatingWebhookConfiguration") => {
            Kind::MutatingWebhookConfiguration
        }
        ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy") => Kind::ValidatingAdmissionPolicy,
        ("admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding") => {
            Kind::ValidatingAdmissionPolicyBinding
        }
        ("apiregistration.k8s.io", "APIService") => Kind::APIService,
        ("certificates.k8s.io", "CertificateSigningRequest") => Kind::CertificateSigningRequest,
        ("apiextensions.k8s.io", "CustomResourceDefinition") => Kind::CustomResourceDefinition,
        ("authentication.k8s.io" | "authorization.k8s.io", _) => Kind::Review,
        _ => Kind::Other,
    }
}

/// Layer D: versioned defaulting of a request body.
pub fn default_object(info: &ResourceInfo, obj: &mut Value) {
    if let Some(custom) = &info.custom {
        return custom::default_object(custom, obj);
    }
    match kind_of(info) {
        Kind::Pod => pod::default_pod(obj),
        Kind::Namespace => core::default_namespace(obj),
        Kind::Node => core::default_node(obj),
        Kind::Service => core::default_service(obj),
        Kind::Endpoints => core::default_endpoints(obj),
        Kind::Secret => core::default_secret(obj),
        Kind::Deployment => workloads::default_deployment(obj),
        Kind::ReplicaSet => workloads::default_replicaset(obj),
        Kind::StatefulSet => workloads::default_statefulset(obj),
        Kind::DaemonSet => workloads::default_daemonset(obj),
        Kind::Job => batch::default_job(obj),
        Kind::CronJob => batch::default_cronjob(obj),
        Kind::EndpointSlice => discovery::default_endpoint_slice(obj),
        // storage and scheduling classes
        Kind::PersistentVolume => storage::default_persistent_volume(obj),
        Kind::PersistentVolumeClaim => storage::default_persistent_volume_claim(obj),
        Kind::StorageClass => storage::default_storage_class(obj),
        Kind::CSIDriver => storage::default_csi_driver(obj),
        Kind::PriorityClass => scheduling::default_priority_class(obj),
        // quota and limits
        Kind::LimitRange => quota::default_limit_range(obj),
        Kind::PodTemplate => legacy::default_pod_template(obj),
        Kind::ReplicationController => legacy::default_replication_controller(obj),
        Kind::NetworkPolicy => networking::default_network_policy(obj),
        Kind::IngressClass => networking::default_ingress_class(obj),
        Kind::RoleBinding | Kind::ClusterRoleBinding => rbac::default_binding(obj),
        // autoscaling, admissionregistration, apiregistration
        Kind::HorizontalPodAutoscalerV1 => autoscaling::default_hpa_v1(obj),
        Kind::HorizontalPodAutoscaler => autoscaling::default_hpa(obj),
        Kind::ValidatingWebhookConfiguration => {
            admissionregistration::default_webhook_configuration(obj, false)
        }
        Kind::MutatingWebhookConfiguration => admissionregistration::default_webhook_configuration(obj, true),
        Kind::ValidatingAdmissionPolicy => admissionregistration::default_policy(obj),
        Kind::ValidatingAdmissionPolicyBinding => admissionregistration::default_binding(obj),
        Kind::APIService => apiregistration::default_api_service(obj),
        Kind::CustomResourceDefinition => apiextensions::default_crd(obj),
        _ => {}
    }
}

/// Layer S on create (after name, uid and creationTimestamp are set).
pub fn prepare_for_create(info: &ResourceInfo, obj: &mut Value) {
    let kind = kind_of(info);
    if info.has(Subresource::Status) {
        match fresh_status(kind, obj) {
            Some(status) => set(obj, "status", status),
            None if kind == Kind::Other => remove(obj, "status"),
            None => {}
        }
    }
    if info.has_generation {
        set_meta(obj, "generation", json!(1));
    }
    match kind {
        Kind::Pod => pod::prepare_pod_create(obj),
        Kind::Namespace => core::prepare_namespace_create(obj),
        Kind::Service => core::prepare_service_create(obj),
        Kind::DaemonSet => workloads::prepare_daemonset_create(obj),
        Kind::Job => batch::prepare_job_create(obj),
        Kind::CertificateSigningRequest => certificates::prepare_csr_create(obj),
        Kind::CustomResourceDefinition => apiextensions::prepare_create(obj),
        _ => {}
    }
}

/// The status a new object starts with, or `None` to keep what was sent
/// (Node) or to drop it (custom resources).
fn fresh_status(kind: Kind, obj: &Value) -> Option<Value> {
    Some(match kind {
        Kind::Pod => pod::initial_status(obj),
        Kind::Namespace => json!({"phase": "Active"}),
        Kind::PersistentVolume => storage::initial_pv_status(obj),
        Kind::PersistentVolumeClaim => json!({"phase": "Pending"}),
        Kind::Service | Kind::Ingress => json!({"loadBalancer": {}}),
        Kind::PodDisruptionBudget => policy::initial_status(),
        Kind::Deployment | Kind::Job | Kind::CronJob => json!({}),
        Kind::ReplicaSet | Kind::ReplicationController => json!({"replicas": 0}),
        Kind::ResourceQuota => json!({}),
        Kind::HorizontalPodAutoscaler => autoscaling::initial_status(),
        Kind::ValidatingAdmissionPolicy => json!({}),
        Kind::APIService => apiregistration::initial_status(obj),
        Kind::StatefulSet => json!({"availableReplicas": 0, "replicas": 0}),
        Kind::DaemonSet => json!({
            "currentNumberScheduled": 0,
            "desiredNumberScheduled": 0,
            "numberMisscheduled": 0,
            "numberReady": 0,
        }),
        _ => return None,
    })
}

/// Layer S on update of the main resource.
pub fn prepare_for_update(info: &ResourceInfo, new: &mut Value, old: &Value) {
    let kind = kind_of(info);
    if info.has(Subresource::Status) {
        copy_key(new, old, "status");
    }
    if info.has_generation {
        match at(old, &["metadata", "generation"]) {
            Some(g) => set_meta(new, "generation", g.clone()),
            None => remove_meta(new, "generation"),
        }
    }
    let bump = match kind {
        Kind::Deployment => {
            !sem_eq(new.get("spec"), old.get("spec"))
                || !sem_eq(
                    at(new, &["metadata", "annotations"]),
                    at(old, &["metadata", "annotations"]),
                )
        }
        Kind::DaemonSet => workloads::prepare_daemonset_update(new, old),
        Kind::Other if info.custom.is_some() => custom::generation_changes(info, new, old),
        Kind::Other => !sem_eq(Some(&without_meta_status(new)), Some(&without_meta_status(old))),
        Kind::ValidatingWebhookConfiguration | Kind::MutatingWebhookConfiguration => {
            !sem_eq(new.get("webhooks"), old.get("webhooks"))
        }
        _ => !sem_eq(new.get("spec"), old.get("spec")),
    };
    if info.has_generation && bump {
        let g = at(old, &["metadata", "generation"])
            .and_then(Value::as_i64)
            .unwrap_or(0);
        set_meta(new, "generation", json!(g + 1));
    }
    match kind {
        Kind::CertificateSigningRequest => certificates::prepare_csr_update(new, old),
        Kind::Namespace => core::prepare_namespace_update(new, old),
        Kind::Service => core::prepare_service_update(new, old),
        Kind::CustomResourceDefinition => apiextensions::add_stored_version(new),
        _ => {}
    }
}

/// Layer S on update through `/status`: everything but `status` and most
/// of `metadata` comes from the stored object.
pub fn prepare_for_status_update(info: &ResourceInfo, new: &mut Value, old: &Value) {
    let kind = kind_of(info);
    let mut keys: Vec<String> = Vec::new();
    for v in [&*new, old] {
        keys.extend(v.as_object().into_iter().flat_map(|m| m.keys().cloned()));
    }
    for k in keys {
        if !matches!(k.as_str(), "metadata" | "status" | "apiVersion" | "kind") {
            copy_key(new, old, &k);
        }
    }
    match kind {
        Kind::Deployment | Kind::ReplicaSet | Kind::StatefulSet | Kind::DaemonSet => {
            copy_meta(new, old, "labels")
        }
        Kind::Pod => copy_meta(new, old, "ownerReferences"),
        Kind::CertificateSigningRequest => certificates::prepare_csr_status_update(new, old),
        Kind::Other if info.custom.is_some() => custom::prepare_status_update(new, old),
        _ => {}
    }
    if info.has_generation {
        match at(old, &["metadata", "generation"]) {
            Some(g) => set_meta(new, "generation", g.clone()),
            None => remove_meta(new, "generation"),
        }
    }
}

/// Full validation of a new object.
pub fn validate_create(info: &ResourceInfo, obj: &Value) -> Vec<FieldError> {
    let kind = kind_of(info);
    let mut errs = meta::validate_object_meta(obj, info.namespaced, name_rule(kind));
    errs.extend(validate_spec(kind, obj));
    match kind {
        Kind::CronJob => errs.extend(batch::validate_cronjob_name(obj)),
        Kind::Pod => errs.extend(ephemeral::validate_create(obj)),
        Kind::Service => errs.extend(core::validate_reserved_cluster_ip(obj)),
        Kind::CertificateSigningRequest => errs.extend(certificates::validate_csr(obj)),
        Kind::Ingress => errs.extend(networking::validate_ingress_class_annotation(obj)),
        Kind::HorizontalPodAutoscaler => errs.extend(autoscaling::validate_hpa(obj)),
        _ => {}
    }
    if let Some(custom) = &info.custom {
        errs.extend(custom::validate(custom, obj, None));
    }
    errs
}

/// Validation of an update: ObjectMeta update rules, the spec rules of
/// create, and each kind's immutability rules.
pub fn validate_update(info: &ResourceInfo, new: &Value, old: &Value) -> Vec<FieldError> {
    let kind = kind_of(info);
    let mut errs = meta::validate_object_meta_update(new, old);
    errs.extend(validate_spec(kind, new));
    errs.extend(match kind {
        Kind::Pod => pod::validate_pod_update(new, old),
        Kind::Deployment | Kind::ReplicaSet | Kind::DaemonSet => {
            workloads::validate_selector_immutable(new, old)
        }
        Kind::StatefulSet => workloads::validate_statefulset_update(new, old),
        Kind::ControllerRevision => core::validate_controller_revision_update(new, old),
        Kind::Job => batch::validate_job_update(new, old),
        Kind::Service => core::validate_service_update(new, old),
        Kind::ConfigMap => core::validate_configmap_update(new, old),
        Kind::Secret => core::validate_secret_update(new, old),
        Kind::EndpointSlice => discovery::validate_endpoint_slice_update(new, old),
        Kind::HorizontalPodAutoscaler => autoscaling::validate_hpa_update(new, old),
        Kind::CertificateSigningRequest => certificates::validate_csr_update(new, old),
        Kind::ResourceQuota => quota::validate_resource_quota_status(new),
        Kind::PersistentVolume => storage::validate_persistent_volume_update(new, old),
        Kind::PersistentVolumeClaim => storage::validate_persistent_volume_claim_update(new, old),
        Kind::StorageClass => storage::validate_storage_class_update(new, old),
        Kind::CSIDriver => storage::validate_csi_driver_update(new, old),
        Kind::PriorityClass => scheduling::validate_priority_class_update(new, old),
        Kind::RuntimeClass => scheduling::validate_runtime_class_update(new, old),
        Kind::IngressClass => networking::validate_ingress_class_update(new, old),
        Kind::PodDisruptionBudget => policy::validate_pdb_status(new),
        Kind::RoleBinding | Kind::ClusterRoleBinding => rbac::validate_binding_update(new, old),
        Kind::CustomResourceDefinition => apiextensions::validate_crd_update(new, old),
        _ => Vec::new(),
    });
    if let Some(custom) = &info.custom {
        errs.extend(custom::validate(custom, new, Some(old)));
    }
    errs
}

fn name_rule(kind: Kind) -> meta::NameRule {
    match kind {
        Kind::Namespace | Kind::StatefulSet => meta::NameRule::Label,
        Kind::Service => meta::NameRule::Dns1035,
        Kind::Role | Kind::ClusterRole | Kind::RoleBinding | Kind::ClusterRoleBinding => {
            meta::NameRule::PathSegment
        }
        // Upstream does not care what CSRs are called; a path segment is the store's limit.
        Kind::CertificateSigningRequest => meta::NameRule::PathSegment,
        // `v1.` (the core group) is a valid APIService name; the rest of the rule is in `validate_api_service`
        Kind::APIService => meta::NameRule::PathSegment,
        _ => meta::NameRule::Subdomain,
    }
}

fn validate_spec(kind: Kind, obj: &Value) -> Vec<FieldError> {
    match kind {
        Kind::Pod => pod::validate_pod(obj),
        Kind::Namespace => core::validate_namespace(obj),
        Kind::Service => core::validate_service(obj),
        Kind::ConfigMap => core::validate_configmap(obj),
        Kind::Secret => core::validate_secret(obj),
        Kind::ControllerRevision => core::validate_controller_revision(obj),
        Kind::Deployment => workloads::validate_deployment(obj),
        Kind::ReplicaSet => workloads::validate_replicaset(obj),
        Kind::StatefulSet => workloads::validate_statefulset(obj),
        Kind::DaemonSet => workloads::validate_daemonset(obj),
        Kind::Job => batch::validate_job(obj),
        Kind::CronJob => batch::validate_cronjob(obj),
        Kind::EndpointSlice => discovery::validate_endpoint_slice(obj),
        Kind::Event => core::validate_event(obj),
        Kind::EventV1 => core::validate_event_v1_namespace(obj),
        Kind::PersistentVolume => storage::validate_persistent_volume(obj),
        Kind::PersistentVolumeClaim => storage::validate_persistent_volume_claim(obj),
        Kind::StorageClass => storage::validate_storage_class(obj),
        Kind::CSIDriver => storage::validate_csi_driver(obj),
        Kind::PriorityClass => scheduling::validate_priority_class(obj),
        Kind::RuntimeClass => scheduling::validate_runtime_class(obj),
        // quota and limits
        Kind::ResourceQuota => quota::validate_resource_quota(obj),
        Kind::LimitRange => quota::validate_limit_range(obj),
        Kind::PodTemplate => legacy::validate_pod_template_object(obj),
        Kind::ReplicationController => legacy::validate_replication_controller(obj),
        Kind::Ingress => networking::validate_ingress(obj),
        Kind::IngressClass => networking::validate_ingress_class(obj),
        Kind::NetworkPolicy => networking::validate_network_policy(obj),
        Kind::PodDisruptionBudget => policy::validate_pdb(obj),
        Kind::Role => rbac::validate_role(obj),
        Kind::ClusterRole => rbac::validate_cluster_role(obj),
        Kind::RoleBinding => rbac::validate_binding(obj, true),
        Kind::ClusterRoleBinding => rbac::validate_binding(obj, false),
        Kind::ValidatingWebhookConfiguration => {
            admissionregistration::validate_webhook_configuration(obj, false)
        }
        Kind::MutatingWebhookConfiguration => {
            admissionregistration::validate_webhook_configuration(obj, true)
        }
        Kind::ValidatingAdmissionPolicy => admissionregistration::validate_policy(obj),
        Kind::ValidatingAdmissionPolicyBinding => admissionregistration::validate_binding(obj),
        Kind::APIService => apiregistration::validate_api_service(obj),
        Kind::CustomResourceDefinition => apiextensions::validate_crd(obj),
        _ => Vec::new(),
    }
}

// ---------------------------------------------------------------------------
// Value helpers shared by the kind modules.

/// The object under `key`, created as `{}` when absent or null. `None` when
/// `v` is not an object or the child has another type (left for validation
/// or the decoder to reject).
pub(crate) fn child<'a>(v: &'a mut Value, key: &str) -> Option<&'a mut Value> {
    let m = v.as_object_mut()?;
    let slot = m.entry(key).or_insert(Value::Null);
    if slot.is_null() {
        *slot = json!({});
    }
    slot.is_object().then_some(slot)
}

/// Sets `key` to `value` when it is absent or null.
pub(crate) fn default_key(v: &mut Value, key: &str, value: Value) {
    if let Some(m) = v.as_object_mut() {
        let slot = m.entry(key).or_insert(Value::Null);
        if slot.is_null() {
            *slot = value;
        }
    }
}

/// Sets `key` to `value` unconditionally (no-op on non-objects).
pub(crate) fn set(v: &mut Value, key: &str, value: Value) {
    if let Some(m) = v.as_object_mut() {
        m.insert(key.to_string(), value);
    }
}

pub(crate) fn remove(v: &mut Value, key: &str) {
    if let Some(m) = v.as_object_mut() {
        m.remove(key);
    }
}

pub(crate) fn set_meta(v: &mut Value, key: &str, value: Value) {
    if let Some(meta) = child(v, "metadata") {
        set(meta, key, value);
    }
}

fn remove_meta(v: &mut Value, key: &str) {
    if let Some(meta) = v.get_mut("metadata") {
        remove(meta, key);
    }
}

/// `new[key] := old[key]`, removing it from `new` when `old` lacks it.
pub(crate) fn copy_key(new: &mut Value, old: &Value, key: &str) {
    match old.get(key) {
        Some(v) => set(new, key, v.clone()),
        None => remove(new, key),
    }
}

fn copy_meta(new: &mut Value, old: &Value, key: &str) {
    match at(old, &["metadata", key]) {
        Some(v) => set_meta(new, key, v.clone()),
        None => remove_meta(new, key),
    }
}

/// The items of the array under `key`, mutably (empty when absent).
pub(crate) fn items_mut<'a>(v: &'a mut Value, key: &str) -> impl Iterator<Item = &'a mut Value> {
    v.get_mut(key).and_then(Value::as_array_mut).into_iter().flatten()
}

/// The items of the array under `key` (empty when absent).
pub(crate) fn items<'a>(v: &'a Value, key: &str) -> impl Iterator<Item = &'a Value> {
    v.get(key).and_then(Value::as_array).into_iter().flatten()
}

/// Drops nulls, empty objects and empty arrays, recursively: what
/// upstream's semantic equality treats as "unset".
fn normalize(v: &Value) -> Option<Value> {
    match v {
        Value::Null => None,
        Value::Object(m) => {
            let out: Map<String, Value> = m
                .iter()
                .filter_map(|(k, v)| normalize(v).map(|v| (k.clone(), v)))
                .collect();
            (!out.is_empty()).then_some(Value::Object(out))
        }
        Value::Array(a) if a.is_empty() => None,
        Value::Array(a) => Some(Value::Array(
            a.iter().map(|x| normalize(x).unwrap_or(Value::Null)).collect(),
        )),
        other => Some(other.clone()),
    }
}

/// Semantic equality (upstream `apiequality.Semantic.DeepEqual`): nil and
/// empty maps and slices are equal.
pub(crate) fn sem_eq(a: Option<&Value>, b: Option<&Value>) -> bool {
    a.and_then(normalize) == b.and_then(normalize)
}

fn without_meta_status(v: &Value) -> Value {
    let mut v = v.clone();
    remove(&mut v, "metadata");
    remove(&mut v, "status");
    v
}
