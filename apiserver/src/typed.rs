//! Typed decoding: every object the API server stores decodes into its
//! kind's type.
//!
//! Upstream decodes each request body into the Go struct of its kind
//! (`runtime.Decode` in `handlers/create.go` and `update.go`; for a patch,
//! the patched JSON in `handlers/patch.go`), so a value of the wrong type
//! never reaches etcd. Here objects travel as `serde_json::Value`s, and
//! this module is the same gate: the value must deserialize into the
//! k8s-openapi struct of its kind, or the write fails with upstream's
//! error —
//!
//! * a create or update body: 400 BadRequest, `ConfigMap in version "v1"
//!   cannot be handled as a ConfigMap: json: cannot unmarshal number into Go
//!   struct field ConfigMap.data of type string`;
//! * a patch result: 422 Invalid on the field `patch`, whose value is the
//!   patched object.
//!
//! Simplified: the message is rebuilt from serde's error and the OpenAPI
//! schema, so it names Go's types and fields as upstream does for type
//! mismatches and out-of-range numbers; other failures (a malformed
//! timestamp) keep serde's wording. Kinds without a k8s-openapi type (custom
//! resources) are not checked here.

use std::collections::HashMap;
use std::sync::LazyLock;

use serde_json::Value;

use crate::error::{ApiError, FieldError};
use crate::openapi::{KnownKind, known_kinds};
use crate::registry::ResourceInfo;

/// Where a value came from, which decides the error upstream answers with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// A create or update body (400).
    Body,
    /// The result of applying a patch (422 on `patch`).
    Patch,
}

static KINDS: LazyLock<HashMap<(&'static str, &'static str, &'static str), KnownKind>> =
    LazyLock::new(|| {
        known_kinds()
            .into_iter()
            .map(|k| ((k.group, k.version, k.kind), k))
            .collect()
    });

/// Builds the table now (see [`crate::prepare_tables`]).
pub(crate) fn prepare() {
    LazyLock::force(&KINDS);
}

/// Checks that `object` decodes into the type of `info`'s kind.
pub fn check(info: &ResourceInfo, object: &Value, origin: Origin) -> Result<(), ApiError> {
    let key = (info.group.as_str(), info.version.as_str(), info.kind.as_str());
    let Some(kind) = KINDS.get(&key) else {
        return Ok(());
    };
    let Err(e) = kind.decode(object) else {
        return Ok(());
    };
    let message = go_message(info, &e);
    Err(match origin {
        Origin::Body => ApiError::bad_request(format!(
            "{kind} in version \"{version}\" cannot be handled as a {kind}: {message}",
            kind = info.kind,
            version = info.version,
        )),
        Origin::Patch => ApiError::invalid(
            "",
            "",
            "",
            &[FieldError::invalid(
                "patch",
                Value::String(object.to_string()),
                message,
            )],
        ),
    })
}

/// Upstream's (Go's `encoding/json`) wording of a decoding error:
/// `json: cannot unmarshal <value> into Go struct field <Struct>.<field> of type <type>`.
fn go_message(info: &ResourceInfo, e: &crate::openapi::DecodeError) -> String {
    let serde_message = e.inner().to_string();
    let place = crate::schema::locate(&info.group, &info.version, &info.kind, e.path());
    let mismatch = Mismatch::parse(&serde_message);
    match (place, mismatch) {
        (Some(place), Some(m)) => {
            let go_type = place.go_type.or(m.expected).unwrap_or_else(|| "unknown".into());
            let into = if place.field.is_empty() {
                format!("Go value of type {go_type}")
            } else {
                format!(
                    "Go struct field {}.{} of type {go_type}",
                    place.go_struct, place.field
                )
            };
            format!("json: cannot unmarshal {} into {into}", m.value)
        }
        _ => format!("{}: {serde_message}", e.path()),
    }
}

/// serde's `invalid type: integer `5`, expected a string` (or `invalid
/// value: integer `99999999999`, expected i32`), in Go's terms.
struct Mismatch {
    /// Go's name of the JSON value: `number`, `string`, `bool`, `array`,
    /// `object`; for an out-of-range number, `number 99999999999`.
    value: String,
    /// Go's name of the expected scalar type, when serde names one.
    expected: Option<String>,
}

impl Mismatch {
    fn parse(message: &str) -> Option<Mismatch> {
        let (out_of_range, rest) = if let Some(rest) = message.strip_prefix("invalid type: ") {
            (false, rest)
        } else {
            (true, message.strip_prefix("invalid value: ")?)
        };
        let (got, expected) = rest.split_once(", expected ")?;
        let json_type = match got.split_whitespace().next()? {
            "integer" | "floating" => "number",
            "string" => "string",
            "boolean" => "bool",
            "sequence" => "array",
            "map" => "object",
            _ => return None,
        };
        let value = if out_of_range && json_type == "number" {
            let literal = got.split('`').nth(1).unwrap_or_default();
            format!("number {literal}")
        } else if out_of_range {
            return None;
        } else {
            json_type.to_string()
        };
        let expected = match expected {
            "i32" => Some("int32"),
            "i64" => Some("int64"),
            "u8" | "u16" | "u32" | "u64" => Some("uint64"),
            "f64" | "f32" => Some("float64"),
            "a string" => Some("string"),
            "a boolean" => Some("bool"),
            _ => None,
        };
        Some(Mismatch {
            value,
            expected: expected.map(str::to_string),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::Registry;
    use serde_json::json;

    fn info(api_version: &str, kind: &str) -> std::sync::Arc<ResourceInfo> {
        Registry::new().by_kind(api_version, kind).expect("built-in kind")
    }

    fn body_error(api_version: &str, kind: &str, object: Value) -> String {
        let err = check(&info(api_version, kind), &object, Origin::Body).unwrap_err();
        assert_eq!(err.reason, crate::error::Reason::BadRequest);
        err.message
    }

    #[test]
    fn well_typed_objects_pass() {
        let cm =
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "1"}});
        check(&info("v1", "ConfigMap"), &cm, Origin::Body).unwrap();
        let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
            "spec": {"containers": [{"name": "c", "image": "i", "ports": [{"containerPort": 80}],
            "resources": {"limits": {"cpu": 1, "memory": "1Gi"}}}]}});
        check(&info("v1", "Pod"), &pod, Origin::Body).unwrap();
    }

    #[test]
    fn a_number_in_configmap_data_is_refused_as_upstream() {
        let cm =
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": 5}});
        assert_eq!(
            body_error("v1", "ConfigMap", cm),
            "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: json: cannot unmarshal number into Go struct field ConfigMap.data of type string"
        );
    }

    #[test]
    fn nested_fields_name_the_innermost_struct() {
        let d = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "w"}, "spec": {"replicas": "abc"}});
        assert_eq!(
            body_error("apps/v1", "Deployment", d),
            "Deployment in version \"v1\" cannot be handled as a Deployment: json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32"
        );
        let p = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
            "spec": {"containers": [{"name": "c", "ports": [{"containerPort": true}]}]}});
        assert!(body_error("v1", "Pod", p).ends_with(
            "json: cannot unmarshal bool into Go struct field ContainerPort.spec.containers.ports.containerPort of type int32"
        ));
    }

    #[test]
    fn structs_lists_and_ranges_are_named_as_go_does() {
        let d = json!({"apiVersion": "apps/v1", "kind": "Deployment", "spec": "x"});
        assert!(body_error("apps/v1", "Deployment", d).ends_with(
            "json: cannot unmarshal string into Go struct field Deployment.spec of type v1.DeploymentSpec"
        ));
        let p = json!({"apiVersion": "v1", "kind": "Pod", "spec": {"containers": {"name": "c"}}});
        assert!(body_error("v1", "Pod", p).ends_with(
            "json: cannot unmarshal object into Go struct field PodSpec.spec.containers of type []v1.Container"
        ));
        let d = json!({"apiVersion": "apps/v1", "kind": "Deployment", "spec": {"replicas": 99999999999u64}});
        assert!(body_error("apps/v1", "Deployment", d).ends_with(
            "json: cannot unmarshal number 99999999999 into Go struct field DeploymentSpec.spec.replicas of type int32"
        ));
    }

    #[test]
    fn a_patch_result_is_invalid_on_the_patch_field() {
        let d = json!({"apiVersion": "apps/v1", "kind": "Deployment", "spec": {"replicas": "abc"}});
        let err = check(&info("apps/v1", "Deployment"), &d, Origin::Patch).unwrap_err();
        assert_eq!(err.reason, crate::error::Reason::Invalid);
        assert!(
            err.message
                .starts_with(" \"\" is invalid: patch: Invalid value: \"{"),
            "{}",
            err.message
        );
        assert!(err.message.ends_with("of type int32"), "{}", err.message);
    }

    #[test]
    fn kinds_without_a_type_are_not_checked() {
        let mut registry_info = (*info("v1", "ConfigMap")).clone();
        registry_info.group = "example.com".into();
        registry_info.kind = "Widget".into();
        check(&registry_info, &json!({"spec": {"size": "x"}}), Origin::Body).unwrap();
    }
}
