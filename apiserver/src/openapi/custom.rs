//! The OpenAPI v3 definitions of custom resources.
//!
//! Upstream: `apiextensions-apiserver/pkg/controller/openapi/builder/builder.go`
//! (`BuildOpenAPIV3`, `buildKubeNative`, `addEmbeddedProperties`,
//! `buildListSchema`) and `Structural.Unfold` of
//! `apiextensions-apiserver/pkg/apiserver/schema/unfold.go`. The
//! group-version document of a custom resource holds, besides the meta
//! types every document has:
//! * `<reversed group>.<version>.<Kind>` (`com.coreos.monitoring.v1.Prometheus`):
//!   the version's `openAPIV3Schema` with `metadata` a reference to
//!   ObjectMeta, `apiVersion` and `kind` described as TypeMeta describes
//!   them, an int-or-string field's `anyOf: [integer, string]` spelled out,
//!   and every `x-kubernetes-embedded-resource` given its own apiVersion,
//!   kind and metadata; tagged with its `x-kubernetes-group-version-kind`
//!   (what `kubectl explain` looks the kind up by). A version without a
//!   schema gets `{"type": "object"}` and the tag.
//! * `<...>.<Kind>List`, the list of it;
//! * the paths of every operation, as a built-in kind's ([`super::paths`]),
//!   with a PATCH that accepts JSON patch, merge patch and apply patch but
//!   not strategic merge patch: kubectl's client-side apply then finds no
//!   patch metadata to trust for the GVK and sends a JSON merge patch, as it
//!   does against upstream.
//!
//! Simplified: the schema is taken as written rather than through the
//! structural schema's `ToKubeOpenAPI` (which drops the few keywords a
//! structural schema ignores: `example` and `externalDocs` are dropped here
//! too); the list kind is always `<Kind>List` (the registry row does not
//! carry a CRD's `names.listKind`).

use serde_json::{Map, Value, json};

use super::kinds::{REF_PREFIX, gvk_list};
use crate::crd::CustomVersion;
use crate::registry::ResourceInfo;

const OBJECT_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";
const LIST_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta";

/// TypeMeta's `apiVersion`, as upstream's `addTypeMetaProperties` sets it.
const D_API_VERSION: &str = "APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources";
/// TypeMeta's `kind`.
const D_KIND: &str = "Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds";
/// PartialObjectMetadata's `metadata`.
const D_METADATA: &str = "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";
/// PartialObjectMetadataList's `metadata`.
const D_LIST_METADATA: &str = "Standard list metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds";
/// An embedded resource's `apiVersion` and `kind` (`addEmbeddedProperties`).
const D_EMBEDDED_API_VERSION: &str = "apiVersion defines the versioned schema of this representation of an object. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources";
const D_EMBEDDED_KIND: &str = "kind is a string value representing the type of this object. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds";

/// The definition name of a custom resource's kind: the group reversed
/// (upstream `util.ToRESTFriendlyName` of `<group>/<version>.<Kind>`).
pub(crate) fn definition_name(group: &str, version: &str, kind: &str) -> String {
    let reversed: Vec<&str> = group.rsplit('.').collect();
    format!("{}.{version}.{kind}", reversed.join("."))
}

/// Adds the kind and list definitions of every custom resource among
/// `resources` to `defs`.
pub(crate) fn add_definitions(defs: &mut Map<String, Value>, resources: &[std::sync::Arc<ResourceInfo>]) {
    for info in resources {
        if let Some(custom) = &info.custom {
            let name = definition_name(&info.group, &info.version, &info.kind);
            defs.insert(format!("{name}List"), list_schema(info, &name));
            defs.insert(name, kind_schema(info, custom));
        }
    }
}

/// `buildKubeNative`: the version's schema as a Kubernetes kind.
fn kind_schema(info: &ResourceInfo, custom: &CustomVersion) -> Value {
    let written = custom
        .version
        .schema
        .as_ref()
        .and_then(|s| s.open_api_v3_schema.as_ref())
        .and_then(|s| serde_json::to_value(s).ok());
    let mut schema = match written {
        Some(Value::Object(mut schema)) => {
            unfold_node(&mut schema);
            let props = properties(&mut schema);
            props.insert("metadata".into(), meta_ref(OBJECT_META, D_METADATA));
            props.insert("apiVersion".into(), string_property(D_API_VERSION));
            props.insert("kind".into(), string_property(D_KIND));
            schema
        }
        _ => Map::from_iter([("type".to_string(), json!("object"))]),
    };
    schema.insert(
        "x-kubernetes-group-version-kind".into(),
        gvk_list(&[(&info.group, &info.version, &info.kind)]),
    );
    Value::Object(schema)
}

/// `buildListSchema`.
fn list_schema(info: &ResourceInfo, item: &str) -> Value {
    let list_kind = info.list_kind();
    json!({
        "description": format!("{list_kind} is a list of {}", info.kind),
        "required": ["items"],
        "properties": {
            "apiVersion": string_property(D_API_VERSION),
            "kind": string_property(D_KIND),
            "items": {
                "description": format!(
                    "List of {}. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md",
                    info.plural
                ),
                "type": "array",
                "items": {"$ref": format!("{REF_PREFIX}{item}")},
            },
            "metadata": meta_ref(LIST_META, D_LIST_METADATA),
        },
        "x-kubernetes-group-version-kind": gvk_list(&[(&info.group, &info.version, &list_kind)]),
    })
}

/// A described reference, as the v3 documents write one: `allOf: [{$ref}]`.
fn meta_ref(definition: &str, description: &str) -> Value {
    json!({
        "description": description,
        "allOf": [{"$ref": format!("{REF_PREFIX}{definition}")}],
    })
}

fn string_property(description: &str) -> Value {
    json!({"description": description, "type": "string"})
}

/// The `properties` object of a schema, made if absent.
fn properties(schema: &mut Map<String, Value>) -> &mut Map<String, Value> {
    let props = schema
        .entry("properties")
        .or_insert_with(|| Value::Object(Map::new()));
    if !props.is_object() {
        *props = Value::Object(Map::new());
    }
    match props {
        Value::Object(map) => map,
        _ => unreachable!("made an object just above"),
    }
}

/// `Structural.Unfold` and `addEmbeddedProperties`, on every node of the
/// structural tree (properties, items, additionalProperties).
fn unfold(schema: &mut Value) {
    if let Some(obj) = schema.as_object_mut() {
        unfold_node(obj);
    }
}

fn unfold_node(obj: &mut Map<String, Value>) {
    obj.remove("example");
    obj.remove("externalDocs");
    if let Some(Value::Object(props)) = obj.get_mut("properties") {
        props.values_mut().for_each(unfold);
    }
    for key in ["items", "additionalProperties"] {
        if let Some(child) = obj.get_mut(key) {
            unfold(child);
        }
    }
    if flag(obj, "x-kubernetes-int-or-string") {
        unfold_int_or_string(obj);
    }
    if flag(obj, "x-kubernetes-embedded-resource") {
        embed(obj);
    }
}

fn flag(obj: &Map<String, Value>, key: &str) -> bool {
    obj.get(key).and_then(Value::as_bool) == Some(true)
}

/// `[{type: integer}, {type: string}]`.
fn int_or_string() -> Value {
    json!([{"type": "integer"}, {"type": "string"}])
}

/// An int-or-string field says so in `anyOf`, unless it already does
/// (directly, or in the first `allOf`).
fn unfold_int_or_string(obj: &mut Map<String, Value>) {
    let spelled = |v: Option<&Value>| v == Some(&int_or_string());
    let first_all_of = obj
        .get("allOf")
        .and_then(Value::as_array)
        .and_then(|a| a.first())
        .and_then(|f| f.get("anyOf"));
    if spelled(obj.get("anyOf")) || spelled(first_all_of) {
        return;
    }
    if !obj.contains_key("anyOf") {
        obj.insert("anyOf".into(), int_or_string());
        return;
    }
    let mut all_of = vec![json!({"anyOf": int_or_string()})];
    if let Some(Value::Array(rest)) = obj.remove("allOf") {
        all_of.extend(rest);
    }
    obj.insert("allOf".into(), Value::Array(all_of));
}

/// An embedded resource gets apiVersion, kind and metadata, and requires
/// the first two.
fn embed(obj: &mut Map<String, Value>) {
    let props = properties(obj);
    props.insert("apiVersion".into(), string_property(D_EMBEDDED_API_VERSION));
    props.insert("kind".into(), string_property(D_EMBEDDED_KIND));
    props.insert("metadata".into(), meta_ref(OBJECT_META, D_METADATA));
    let required = obj.entry("required").or_insert_with(|| json!([]));
    if let Value::Array(required) = required {
        for field in ["kind", "apiVersion"] {
            if !required.iter().any(|r| r == field) {
                required.push(field.into());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn definition_names_reverse_the_group() {
        assert_eq!(
            definition_name("monitoring.coreos.com", "v1", "Prometheus"),
            "com.coreos.monitoring.v1.Prometheus"
        );
        assert_eq!(
            definition_name("example", "v1beta1", "Widget"),
            "example.v1beta1.Widget"
        );
    }

    #[test]
    fn int_or_string_is_spelled_out_once() {
        let mut bare = json!({"x-kubernetes-int-or-string": true});
        unfold(&mut bare);
        assert_eq!(bare["anyOf"], int_or_string());
        let mut written =
            json!({"x-kubernetes-int-or-string": true, "anyOf": int_or_string(), "pattern": "^x"});
        let before = written.clone();
        unfold(&mut written);
        assert_eq!(written, before);
        let mut other = json!({"x-kubernetes-int-or-string": true, "anyOf": [{"minimum": 1}]});
        unfold(&mut other);
        assert_eq!(other["allOf"], json!([{"anyOf": int_or_string()}]));
        assert_eq!(other["anyOf"], json!([{"minimum": 1}]));
    }

    #[test]
    fn embedded_resources_get_type_and_object_meta() {
        let mut schema = json!({
            "type": "object",
            "properties": {"template": {
                "type": "object",
                "x-kubernetes-embedded-resource": true,
                "x-kubernetes-preserve-unknown-fields": true,
                "required": ["spec"],
                "example": {"a": 1}
            }}
        });
        unfold(&mut schema);
        let template = &schema["properties"]["template"];
        assert_eq!(template["required"], json!(["spec", "kind", "apiVersion"]));
        assert_eq!(template["properties"]["kind"]["type"], "string");
        assert_eq!(
            template["properties"]["metadata"]["allOf"][0]["$ref"],
            format!("{REF_PREFIX}{OBJECT_META}")
        );
        assert!(template.get("example").is_none());
    }
}
