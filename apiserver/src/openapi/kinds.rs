//! The Rust types behind the served kinds, and the generation of their
//! OpenAPI definitions.
//!
//! Upstream publishes definitions produced from the Go types by
//! `openapi-gen`; k8s-openapi carries the same descriptions and definition
//! names as `schemars` implementations, so a schema generator with OpenAPI 3
//! settings reproduces upstream's `components.schemas` closely. This module
//! only maps (group, version, kind) to a type and then touches up the few
//! places where the generated output differs from upstream's documents.

use k8s_openapi::api::{
    admissionregistration::v1 as admission, apps::v1 as apps, authentication::v1 as authentication,
    authorization::v1 as authorization, autoscaling::v1 as autoscaling, autoscaling::v2 as autoscaling_v2,
    batch::v1 as batch, certificates::v1 as certificates, coordination::v1 as coordination, core::v1 as core,
    discovery::v1 as discovery, events::v1 as events, networking::v1 as networking, node::v1 as node,
    policy::v1 as policy, rbac::v1 as rbac, scheduling::v1 as scheduling, storage::v1 as storage,
};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1 as apiextensions;
use k8s_openapi::apimachinery::pkg::apis::meta::v1 as meta;
use k8s_openapi::kube_aggregator::pkg::apis::apiregistration::v1 as apiregistration;
use schemars::generate::{SchemaGenerator, SchemaSettings};
use schemars::{JsonSchema, Schema};
use serde_json::{Map, Value, json};
use std::borrow::Cow;

/// Where `$ref`s point in the generated definitions.
pub(crate) const REF_PREFIX: &str = "#/components/schemas/";

/// A kind whose schema can be generated.
#[derive(Clone, Copy)]
pub(crate) struct KnownKind {
    pub group: &'static str,
    pub version: &'static str,
    pub kind: &'static str,
    name: fn() -> Cow<'static, str>,
    add: fn(&mut SchemaGenerator) -> Schema,
    decode: fn(&Value) -> Result<(), DecodeError>,
}

/// Why a value does not decode into a kind's type, and where.
pub(crate) type DecodeError = serde_path_to_error::Error<serde_json::Error>;

impl KnownKind {
    fn of<T>() -> KnownKind
    where
        T: k8s_openapi::Resource + JsonSchema + serde::de::DeserializeOwned,
    {
        KnownKind {
            group: T::GROUP,
            version: T::VERSION,
            kind: T::KIND,
            name: T::schema_name,
            add: SchemaGenerator::subschema_for::<T>,
            decode: |value| serde_path_to_error::deserialize::<_, T>(value).map(drop),
        }
    }

    /// Decodes `value` into the kind's k8s-openapi type, as upstream's
    /// decoder does into the Go type; the error says where it failed.
    pub fn decode(&self, value: &Value) -> Result<(), DecodeError> {
        (self.decode)(value)
    }

    /// The upstream definition name, e.g. `io.k8s.api.apps.v1.Deployment`.
    pub fn definition_name(&self) -> String {
        (self.name)().into_owned()
    }

    /// Adds the kind (and every type it uses) to `generator`.
    pub fn add_to(&self, generator: &mut SchemaGenerator) {
        (self.add)(generator);
    }
}

/// Every kind that has a generated schema. The registry decides which of
/// them are served; a served kind not listed here (a custom resource) gets
/// paths but no schema.
pub(crate) fn known_kinds() -> Vec<KnownKind> {
    vec![
        KnownKind::of::<core::Namespace>(),
        KnownKind::of::<core::Pod>(),
        KnownKind::of::<core::Node>(),
        KnownKind::of::<core::Service>(),
        KnownKind::of::<core::Endpoints>(),
        KnownKind::of::<core::ConfigMap>(),
        KnownKind::of::<core::Secret>(),
        KnownKind::of::<core::ServiceAccount>(),
        KnownKind::of::<core::Event>(),
        KnownKind::of::<core::Binding>(),
        KnownKind::of::<core::PersistentVolume>(),
        KnownKind::of::<core::PersistentVolumeClaim>(),
        KnownKind::of::<core::PodTemplate>(),
        KnownKind::of::<core::ReplicationController>(),
        KnownKind::of::<core::LimitRange>(),
        KnownKind::of::<core::ResourceQuota>(),
        KnownKind::of::<apps::Deployment>(),
        KnownKind::of::<apps::ReplicaSet>(),
        KnownKind::of::<apps::StatefulSet>(),
        KnownKind::of::<apps::DaemonSet>(),
        KnownKind::of::<apps::ControllerRevision>(),
        KnownKind::of::<batch::Job>(),
        KnownKind::of::<batch::CronJob>(),
        KnownKind::of::<autoscaling::Scale>(),
        KnownKind::of::<autoscaling::HorizontalPodAutoscaler>(),
        KnownKind::of::<autoscaling_v2::HorizontalPodAutoscaler>(),
        KnownKind::of::<coordination::Lease>(),
        KnownKind::of::<events::Event>(),
        KnownKind::of::<discovery::EndpointSlice>(),
        KnownKind::of::<networking::Ingress>(),
        KnownKind::of::<networking::IngressClass>(),
        KnownKind::of::<networking::NetworkPolicy>(),
        KnownKind::of::<policy::PodDisruptionBudget>(),
        KnownKind::of::<policy::Eviction>(),
        KnownKind::of::<rbac::Role>(),
        KnownKind::of::<rbac::RoleBinding>(),
        KnownKind::of::<rbac::ClusterRole>(),
        KnownKind::of::<rbac::ClusterRoleBinding>(),
        KnownKind::of::<scheduling::PriorityClass>(),
        KnownKind::of::<storage::StorageClass>(),
        KnownKind::of::<storage::CSIDriver>(),
        KnownKind::of::<node::RuntimeClass>(),
        KnownKind::of::<admission::ValidatingWebhookConfiguration>(),
        KnownKind::of::<admission::MutatingWebhookConfiguration>(),
        KnownKind::of::<admission::ValidatingAdmissionPolicy>(),
        KnownKind::of::<admission::ValidatingAdmissionPolicyBinding>(),
        KnownKind::of::<apiregistration::APIService>(),
        KnownKind::of::<certificates::CertificateSigningRequest>(),
        KnownKind::of::<authentication::TokenRequest>(),
        KnownKind::of::<authentication::TokenReview>(),
        KnownKind::of::<authentication::SelfSubjectReview>(),
        KnownKind::of::<authorization::SubjectAccessReview>(),
        KnownKind::of::<authorization::SelfSubjectAccessReview>(),
        KnownKind::of::<authorization::SelfSubjectRulesReview>(),
        KnownKind::of::<authorization::LocalSubjectAccessReview>(),
        KnownKind::of::<apiextensions::CustomResourceDefinition>(),
    ]
}

/// The known kind for a (group, version, kind).
pub(crate) fn find(group: &str, version: &str, kind: &str) -> Option<KnownKind> {
    known_kinds()
        .into_iter()
        .find(|k| k.group == group && k.version == version && k.kind == kind)
}

/// A generator whose `$ref`s already point at `#/components/schemas/`, and
/// which turns `$ref`-with-siblings into `allOf: [{$ref}]` as upstream's v3
/// documents do.
pub(crate) fn generator() -> SchemaGenerator {
    SchemaSettings::openapi3()
        .with(|s| s.meta_schema = None)
        .into_generator()
}

/// The meta types every group-version document carries.
pub(crate) fn add_meta_types(generator: &mut SchemaGenerator) {
    generator.subschema_for::<meta::Status>();
    generator.subschema_for::<meta::DeleteOptions>();
    generator.subschema_for::<meta::Patch>();
    generator.subschema_for::<meta::ListMeta>();
    generator.subschema_for::<meta::WatchEvent<()>>();
}

/// Takes the generated definitions out of `generator`, with the shapes of
/// the opaque apimachinery types made to match upstream's.
pub(crate) fn take_definitions(generator: &mut SchemaGenerator) -> Map<String, Value> {
    let mut defs = generator.take_definitions(true);
    for def in defs.values_mut() {
        rewrite_refs(def);
    }
    fix_opaque_types(&mut defs);
    defs
}

/// Rewrites any JSON-Schema-style `#/$defs/X` reference to
/// `#/components/schemas/X` (the OpenAPI 3 settings already do this; the
/// pass is a guard for types that build references by hand).
pub(crate) fn rewrite_refs(value: &mut Value) {
    match value {
        Value::Object(map) => {
            if let Some(Value::String(r)) = map.get_mut("$ref")
                && let Some(name) = r.strip_prefix("#/$defs/")
            {
                *r = format!("{REF_PREFIX}{name}");
            }
            map.values_mut().for_each(rewrite_refs);
        }
        Value::Array(items) => items.iter_mut().for_each(rewrite_refs),
        _ => {}
    }
}

/// Upstream's v3 documents describe the two apimachinery types that take
/// either a number or a string as a `oneOf` of both (their Go types'
/// `OpenAPIV3OneOfTypes`), with no `type` of their own; kubectl explain then
/// shows `<IntOrString>` / `<Quantity>` rather than `<string>`.
fn fix_opaque_types(defs: &mut Map<String, Value>) {
    let mut set = |name: &str, extra: Value| {
        if let (Some(Value::Object(def)), Value::Object(extra)) = (defs.get_mut(name), extra) {
            def.remove("x-kubernetes-int-or-string");
            def.extend(extra);
        }
    };
    set(
        "io.k8s.apimachinery.pkg.util.intstr.IntOrString",
        json!({
            "format": "int-or-string",
            "oneOf": [{"type": "integer"}, {"type": "string"}],
            "x-kubernetes-int-or-string": true,
        }),
    );
    set(
        "io.k8s.apimachinery.pkg.api.resource.Quantity",
        json!({"oneOf": [{"type": "string"}, {"type": "number"}]}),
    );
}

/// The `x-kubernetes-group-version-kind` list of a definition.
pub(crate) fn gvk_list(gvks: &[(&str, &str, &str)]) -> Value {
    gvks.iter()
        .map(|(g, v, k)| json!({"group": g, "version": v, "kind": k}))
        .collect()
}

/// Marks a top-level kind's definition the way upstream does: with its GVK
/// and without `metadata` among the required fields.
pub(crate) fn mark_kind(def: &mut Value, group: &str, version: &str, kind: &str) {
    let Some(obj) = def.as_object_mut() else {
        return;
    };
    obj.insert(
        "x-kubernetes-group-version-kind".into(),
        gvk_list(&[(group, version, kind)]),
    );
    if let Some(Value::Array(required)) = obj.get_mut("required") {
        required.retain(|r| r != "metadata");
        if required.is_empty() {
            obj.remove("required");
        }
    }
}

/// The definition of `<Kind>List`, derived from the item kind's definition.
pub(crate) fn list_definition(
    item_name: &str,
    item_def: &Value,
    group: &str,
    version: &str,
    kind: &str,
) -> Value {
    let prop = |name: &str| item_def.pointer(&format!("/properties/{name}")).cloned();
    let mut properties = Map::new();
    if let Some(v) = prop("apiVersion") {
        properties.insert("apiVersion".into(), v);
    }
    properties.insert(
        "items".into(),
        json!({
            "description": format!("Items is the list of {kind}."),
            "type": "array",
            "items": {"$ref": format!("{REF_PREFIX}{item_name}")},
        }),
    );
    if let Some(v) = prop("kind") {
        properties.insert("kind".into(), v);
    }
    properties.insert(
        "metadata".into(),
        json!({
            "description": "Standard list metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata",
            "allOf": [{"$ref": format!("{REF_PREFIX}io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")}],
        }),
    );
    let list_kind = format!("{kind}List");
    json!({
        "description": format!("{list_kind} is a list of {kind}."),
        "type": "object",
        "properties": properties,
        "required": ["items"],
        "x-kubernetes-group-version-kind": gvk_list(&[(group, version, &list_kind)]),
    })
}

/// The definition name a `$ref` (direct or through a one-element `allOf`)
/// points at.
pub(crate) fn ref_target(schema: &Value) -> Option<&str> {
    if let Some(r) = schema.get("$ref").and_then(Value::as_str) {
        return r.strip_prefix(REF_PREFIX);
    }
    match schema.get("allOf").and_then(Value::as_array).map(Vec::as_slice) {
        Some([only]) => ref_target(only),
        _ => None,
    }
}
