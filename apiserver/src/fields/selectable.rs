//! Selectable fields: which field labels a kind accepts in a field selector,
//! and the value each takes on an object.
//!
//! Upstream: the `AddFieldLabelConversionFunc` calls in
//! `pkg/apis/core/v1/conversion.go`, `pkg/apis/apps/v1/conversion.go`,
//! `pkg/apis/batch/v1/conversion.go`, `pkg/apis/events/v1/conversion.go`,
//! and the `ToSelectableFields` / `GetAttrs` functions of the registry
//! strategies (`pkg/registry/core/pod/strategy.go`, `.../node/strategy.go`,
//! `.../namespace/strategy.go`, `.../event/strategy.go`, ...), with the
//! default `metav1` rule (`metadata.name`, `metadata.namespace`) for the rest.
//!
//! Simplified: objects are v1 JSON, so the v1->internal conversions that
//! matter (pod IP, events.k8s.io field names) are re-done here. Only kinds
//! the registry serves are listed (no ReplicationController or
//! CertificateSigningRequest); custom resources get the default rule.

use serde_json::Value;

use crate::jsonpath::{bool_at, int_at, str_at};
use crate::kinds::Kind;

/// A supported field's value; `None` for a label that is accepted but absent
/// from the selectable set (it compares as "").
type FieldValue = Option<String>;

/// The value of field label `field` on `obj`, an object of `kind`.
///
/// `Err` carries upstream's text for an unsupported label: "field label not
/// supported: X" for kinds with their own conversion function, the default
/// metav1 message otherwise.
pub(crate) fn field_value(kind: Kind, obj: &Value, field: &str) -> Result<FieldValue, String> {
    let value = match kind {
        Kind::Pod => pod_field(obj, field),
        Kind::Node => node_field(obj, field),
        Kind::Namespace => namespace_field(obj, field),
        Kind::Event => event_field(obj, field, &CORE_EVENT),
        Kind::EventV1 => event_field(obj, field, &EVENTS_V1_EVENT),
        Kind::Secret => secret_field(obj, field).or_else(|| meta_field(obj, field)),
        Kind::Service => service_field(obj, field).or_else(|| meta_field(obj, field)),
        Kind::ReplicaSet => replicas_field(obj, field).or_else(|| meta_field(obj, field)),
        Kind::Job => job_field(obj, field).or_else(|| meta_field(obj, field)),
        _ => {
            return meta_field(obj, field).ok_or_else(|| {
                format!(
                    "\"{field}\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\""
                )
            });
        }
    };
    value.ok_or_else(|| format!("field label not supported: {field}"))
}

/// The string at `path` as a present field value.
fn string(obj: &Value, path: &[&str]) -> Option<FieldValue> {
    Some(Some(str_at(obj, path).to_string()))
}

/// `metadata.name` and `metadata.namespace`, which every kind but Node and
/// Namespace accepts (they are cluster-scoped and list only the name).
fn meta_field(obj: &Value, field: &str) -> Option<FieldValue> {
    match field {
        "metadata.name" => string(obj, &["metadata", "name"]),
        "metadata.namespace" => string(obj, &["metadata", "namespace"]),
        _ => None,
    }
}

/// Pod field labels; `None` means "not supported".
fn pod_field(obj: &Value, field: &str) -> Option<FieldValue> {
    let spec = |k: &str| string(obj, &["spec", k]);
    match field {
        "metadata.name" | "metadata.namespace" => meta_field(obj, field),
        "spec.nodeName" | "spec.host" => spec("nodeName"),
        "spec.restartPolicy" => spec("restartPolicy"),
        "spec.schedulerName" => spec("schedulerName"),
        "spec.serviceAccountName" => spec("serviceAccountName"),
        "spec.hostNetwork" => Some(Some(bool_at(obj, &["spec", "hostNetwork"]).to_string())),
        "status.phase" => string(obj, &["status", "phase"]),
        "status.podIP" => Some(Some(pod_ip(obj))),
        "status.nominatedNodeName" => string(obj, &["status", "nominatedNodeName"]),
        // Accepted by the conversion function but absent from the selectable set.
        "status.podIPs" => Some(None),
        _ => None,
    }
}

/// The pod's primary IP as the internal type sees it: `status.podIP` wins over `podIPs[0]`.
pub(crate) fn pod_ip(obj: &Value) -> String {
    let ip = str_at(obj, &["status", "podIP"]);
    if !ip.is_empty() {
        return ip.to_string();
    }
    obj.pointer("/status/podIPs/0/ip")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

fn node_field(obj: &Value, field: &str) -> Option<FieldValue> {
    match field {
        "metadata.name" => meta_field(obj, field),
        "spec.unschedulable" => Some(Some(bool_at(obj, &["spec", "unschedulable"]).to_string())),
        _ => None,
    }
}

fn namespace_field(obj: &Value, field: &str) -> Option<FieldValue> {
    match field {
        "metadata.name" => meta_field(obj, field),
        "status.phase" => string(obj, &["status", "phase"]),
        _ => None,
    }
}

fn secret_field(obj: &Value, field: &str) -> Option<FieldValue> {
    (field == "type").then(|| Some(str_at(obj, &["type"]).to_string()))
}

fn service_field(obj: &Value, field: &str) -> Option<FieldValue> {
    match field {
        "spec.clusterIP" => string(obj, &["spec", "clusterIP"]),
        "spec.type" => string(obj, &["spec", "type"]),
        _ => None,
    }
}

fn replicas_field(obj: &Value, field: &str) -> Option<FieldValue> {
    (field == "status.replicas").then(|| Some(int_at(obj, &["status", "replicas"]).to_string()))
}

fn job_field(obj: &Value, field: &str) -> Option<FieldValue> {
    (field == "status.successful").then(|| Some(int_at(obj, &["status", "succeeded"]).to_string()))
}

/// Where an Event version keeps what the core field set names: the object
/// the event is about, the reporter, and the deprecated source.
struct EventShape {
    object: &'static str,
    reporter: &'static str,
    source: &'static str,
}

/// core/v1 Event.
const CORE_EVENT: EventShape = EventShape {
    object: "involvedObject",
    reporter: "reportingComponent",
    source: "source",
};

/// events.k8s.io/v1 Event: its labels map onto the core field set
/// (`regarding.kind` is `involvedObject.kind`), read from the v1 names.
const EVENTS_V1_EVENT: EventShape = EventShape {
    object: "regarding",
    reporter: "reportingController",
    source: "deprecatedSource",
};

/// The fields of the referenced object an event's field selector may name.
const EVENT_OBJECT_FIELDS: [&str; 7] = [
    "kind",
    "namespace",
    "name",
    "uid",
    "apiVersion",
    "resourceVersion",
    "fieldPath",
];

fn event_field(obj: &Value, field: &str, shape: &EventShape) -> Option<FieldValue> {
    if let Some((object, key)) = field.split_once('.')
        && object == shape.object
        && EVENT_OBJECT_FIELDS.contains(&key)
    {
        return string(obj, &[object, key]);
    }
    match field {
        "metadata.name" | "metadata.namespace" => meta_field(obj, field),
        "reason" | "type" => string(obj, &[field]),
        "source" => Some(Some(first_non_empty(&[
            str_at(obj, &[shape.source, "component"]),
            str_at(obj, &[shape.reporter]),
        ]))),
        f if f == shape.reporter => string(obj, &[f]),
        _ => None,
    }
}

fn first_non_empty(candidates: &[&str]) -> String {
    candidates
        .iter()
        .find(|s| !s.is_empty())
        .copied()
        .unwrap_or_default()
        .to_string()
}
