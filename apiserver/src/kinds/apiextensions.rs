//! apiextensions.k8s.io/v1 CustomResourceDefinition: defaulting, strategy
//! and validation.
//!
//! Upstream: `staging/src/k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1/defaults.go`
//! (singular, listKind, conversion strategy, storedVersions),
//! `pkg/registry/customresourcedefinition/strategy.go` (status dropped on
//! create, generation bumped on a spec change, the storage version added to
//! `status.storedVersions`), `pkg/registry/customresourcedefinition/etcd.go`
//! (a delete adds the `customresourcecleanup.apiextensions.k8s.io`
//! finalizer and the Terminating condition, see [`mark_terminating`]) and
//! `pkg/apis/apiextensions/validation/validation.go`.
//!
//! Simplified: the schema itself is checked by [`Structural::compile`]
//! (its errors come back with paths under
//! `spec.versions[i].schema.openAPIV3Schema`); conversion webhooks are
//! accepted and validated for shape, but never called — a CRD with
//! `strategy: Webhook` is served as if it said `None` (apiVersion rewritten,
//! fields kept). JSONPaths of printer columns and scale paths are checked
//! for their prefix only, not parsed.

use serde_json::{Value, json};

use super::{child, default_key, set, set_meta};
use crate::crd::schema::Structural;
use crate::error::FieldError;
use crate::jsonpath::at;
use crate::validation::{is_dns1035_label, is_dns1123_subdomain};

/// The finalizer a deleted CRD keeps until its custom resources are gone.
pub const CLEANUP_FINALIZER: &str = "customresourcecleanup.apiextensions.k8s.io";

/// Printer column types (upstream `printerColumnDatatypes`, sorted).
const COLUMN_TYPES: [&str; 5] = ["boolean", "date", "integer", "number", "string"];
/// Printer column formats (upstream `customResourceColumnDefinitionFormats`, sorted).
const COLUMN_FORMATS: [&str; 8] = [
    "byte",
    "date",
    "date-time",
    "double",
    "float",
    "int32",
    "int64",
    "password",
];

/// `SetDefaults_CustomResourceDefinition`: singular and listKind from the
/// kind, conversion `None`, the webhook's review versions and port.
pub fn default_crd(obj: &mut Value) {
    if let Some(spec) = child(obj, "spec") {
        if let Some(names) = child(spec, "names") {
            let kind = names
                .get("kind")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            if names
                .get("singular")
                .and_then(Value::as_str)
                .unwrap_or("")
                .is_empty()
            {
                set(names, "singular", json!(kind.to_lowercase()));
            }
            if !kind.is_empty()
                && names
                    .get("listKind")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .is_empty()
            {
                set(names, "listKind", json!(format!("{kind}List")));
            }
        }
        default_key(spec, "conversion", json!({"strategy": "None"}));
        if let Some(conversion) = spec.get_mut("conversion")
            && conversion.get("strategy").and_then(Value::as_str) == Some("Webhook")
            && let Some(webhook) = child(conversion, "webhook")
        {
            default_key(webhook, "conversionReviewVersions", json!(["v1"]));
            if let Some(service) = webhook
                .get_mut("clientConfig")
                .and_then(|c| c.get_mut("service"))
                .filter(|s| s.is_object())
            {
                default_key(service, "port", json!(443));
            }
        }
    }
}

/// `PrepareForCreate`: status cleared, but for the storage version in
/// `storedVersions`.
pub fn prepare_create(obj: &mut Value) {
    let stored: Vec<Value> = storage_version(obj).map(|v| json!(v)).into_iter().collect();
    set(obj, "status", json!({"storedVersions": stored}));
    set_meta(obj, "generation", json!(1));
}

/// Adds the storage version to `status.storedVersions` when missing.
pub fn add_stored_version(obj: &mut Value) {
    let Some(version) = storage_version(obj) else {
        return;
    };
    let Some(status) = child(obj, "status") else {
        return;
    };
    let stored = status
        .as_object_mut()
        .map(|m| m.entry("storedVersions").or_insert(json!([])));
    if let Some(Value::Array(list)) = stored
        && !list.iter().any(|v| v.as_str() == Some(version.as_str()))
    {
        list.push(json!(version));
    }
}

/// The name of the version marked `storage: true`.
pub fn storage_version(obj: &Value) -> Option<String> {
    versions(obj)
        .iter()
        .find(|v| v.get("storage").and_then(Value::as_bool) == Some(true))
        .and_then(|v| v.get("name").and_then(Value::as_str))
        .map(str::to_string)
}

fn versions(obj: &Value) -> &[Value] {
    at(obj, &["spec", "versions"])
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

/// A delete of a CRD not yet being deleted: the cleanup finalizer and the
/// Terminating condition (upstream `etcd.go` `Delete`).
pub fn mark_terminating(crd: &mut Value, finalizers: &mut Vec<String>, now: &str) {
    if !finalizers.iter().any(|f| f == CLEANUP_FINALIZER) {
        finalizers.push(CLEANUP_FINALIZER.to_string());
    }
    set_condition(
        crd,
        condition(
            "Terminating",
            true,
            "InstanceDeletionPending",
            "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon",
            now,
        ),
    );
}

/// A `status.conditions` entry.
pub fn condition(kind: &str, status: bool, reason: &str, message: &str, now: &str) -> Value {
    json!({
        "type": kind,
        "status": if status { "True" } else { "False" },
        "lastTransitionTime": now,
        "reason": reason,
        "message": message,
    })
}

/// Sets a condition, keeping its `lastTransitionTime` when the status is
/// unchanged (upstream `SetCRDCondition`).
pub fn set_condition(crd: &mut Value, mut new: Value) {
    let Some(status) = child(crd, "status") else {
        return;
    };
    let Some(conditions) = status
        .as_object_mut()
        .map(|m| m.entry("conditions").or_insert(json!([])))
    else {
        return;
    };
    if !conditions.is_array() {
        *conditions = json!([]);
    }
    let list = conditions.as_array_mut().expect("made an array above");
    match list.iter_mut().find(|c| c.get("type") == new.get("type")) {
        Some(old) => {
            if old.get("status") == new.get("status") {
                new["lastTransitionTime"] = old.get("lastTransitionTime").cloned().unwrap_or(Value::Null);
            }
            *old = new;
        }
        None => list.push(new),
    }
}

/// Whether the condition `kind` is `True`.
pub fn condition_true(crd: &Value, kind: &str) -> bool {
    at(crd, &["status", "conditions"])
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .any(|c| {
            c.get("type").and_then(Value::as_str) == Some(kind) && c.get("status") == Some(&json!("True"))
        })
}

// ---------------------------------------------------------------------------
// Validation

/// `ValidateCustomResourceDefinition` minus ObjectMeta (checked by the caller).
pub fn validate_crd(obj: &Value) -> Vec<FieldError> {
    let mut errs = validate_name(obj);
    errs.extend(validate_spec(obj.get("spec").unwrap_or(&Value::Null)));
    errs.extend(validate_names(
        at(obj, &["status", "acceptedNames"]),
        "status.acceptedNames",
    ));
    errs
}

/// What `ValidateCustomResourceDefinitionUpdate` adds to [`validate_crd`]:
/// immutable fields and the stored versions.
pub fn validate_crd_update(new: &Value, old: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let (spec, old_spec) = (
        new.get("spec").unwrap_or(&Value::Null),
        old.get("spec").unwrap_or(&Value::Null),
    );
    let mut immutable = vec![
        (&["group"][..], "spec.group"),
        (&["names", "plural"][..], "spec.names.plural"),
    ];
    if condition_true(old, "Established") {
        immutable.insert(0, (&["scope"][..], "spec.scope"));
        immutable.insert(1, (&["names", "kind"][..], "spec.names.kind"));
    }
    for (path, field) in immutable {
        let (a, b) = (at(spec, path), at(old_spec, path));
        if a != b {
            errs.push(FieldError::invalid(
                field,
                a.cloned().unwrap_or(json!("")),
                "field is immutable",
            ));
        }
    }
    errs.extend(validate_stored_versions(new));
    errs
}

fn validate_name(obj: &Value) -> Vec<FieldError> {
    let name = at(obj, &["metadata", "name"])
        .and_then(Value::as_str)
        .unwrap_or("");
    let plural = at(obj, &["spec", "names", "plural"])
        .and_then(Value::as_str)
        .unwrap_or("");
    let group = at(obj, &["spec", "group"]).and_then(Value::as_str).unwrap_or("");
    if name.is_empty() || name == format!("{plural}.{group}") {
        return Vec::new();
    }
    vec![FieldError::invalid(
        "metadata.name",
        json!(name),
        "must be spec.names.plural+\".\"+spec.group",
    )]
}

fn str_of<'a>(v: &'a Value, path: &[&str]) -> &'a str {
    at(v, path).and_then(Value::as_str).unwrap_or("")
}

/// `ValidateCustomResourceDefinitionSpec` (v1: a schema per version).
fn validate_spec(spec: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let group = str_of(spec, &["group"]);
    if group.is_empty() {
        errs.push(FieldError::required("spec.group", ""));
    } else if let e @ [_, ..] = is_dns1123_subdomain(group).as_slice() {
        errs.push(FieldError::invalid("spec.group", json!(group), e.join(",")));
    } else if !group.contains('.') {
        errs.push(FieldError::invalid(
            "spec.group",
            json!(group),
            "should be a domain with at least one dot",
        ));
    }
    match str_of(spec, &["scope"]) {
        "" => errs.push(FieldError::required("spec.scope", "")),
        "Cluster" | "Namespaced" => {}
        other => errs.push(FieldError::not_supported(
            "spec.scope",
            json!(other),
            &["Cluster", "Namespaced"],
        )),
    }
    errs.extend(validate_versions(spec));
    for (field, path) in [
        ("plural", "spec.names.plural"),
        ("singular", "spec.names.singular"),
        ("kind", "spec.names.kind"),
        ("listKind", "spec.names.listKind"),
    ] {
        if str_of(spec, &["names", field]).is_empty() {
            errs.push(FieldError::required(path, ""));
        }
    }
    errs.extend(validate_names(spec.get("names"), "spec.names"));
    errs.extend(validate_conversion(spec.get("conversion")));
    if spec.get("preserveUnknownFields").and_then(Value::as_bool) == Some(true) {
        errs.push(FieldError::invalid(
            "spec.preserveUnknownFields",
            json!(true),
            "cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead",
        ));
    }
    errs
}

fn validate_versions(spec: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let list = spec
        .get("versions")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let mut seen: Vec<&str> = Vec::new();
    let mut unique = true;
    let mut storage = 0;
    for (i, v) in list.iter().enumerate() {
        let name = str_of(v, &["name"]);
        if v.get("storage").and_then(Value::as_bool) == Some(true) {
            storage += 1;
        }
        if seen.contains(&name) {
            unique = false;
        }
        seen.push(name);
        if let e @ [_, ..] = is_dns1035_label(name).as_slice() {
            errs.push(FieldError::invalid(
                format!("spec.versions[{i}].name"),
                json!(name),
                e.join(","),
            ));
        }
        errs.extend(validate_version(v, &format!("spec.versions[{i}]")));
    }
    let versions_value = Value::Array(list.to_vec());
    if !unique {
        errs.push(FieldError::invalid(
            "spec.versions",
            versions_value.clone(),
            "must contain unique version names",
        ));
    }
    if list.is_empty() {
        errs.push(FieldError::required(
            "spec.versions",
            "must have exactly one version marked as storage version",
        ));
    } else if storage != 1 {
        errs.push(FieldError::invalid(
            "spec.versions",
            versions_value,
            "must have exactly one version marked as storage version",
        ));
    }
    errs
}

/// One version: its schema (required in v1, must compile), subresources,
/// printer columns.
fn validate_version(v: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    match at(v, &["schema", "openAPIV3Schema"]) {
        None | Some(Value::Null) => errs.push(FieldError::required(
            format!("{path}.schema.openAPIV3Schema"),
            "schemas are required",
        )),
        Some(schema) => {
            if let Err(e) = Structural::compile(schema, &format!("{path}.schema.openAPIV3Schema")) {
                errs.extend(e);
            }
        }
    }
    if let Some(warning) = v.get("deprecationWarning").and_then(Value::as_str) {
        if v.get("deprecated").and_then(Value::as_bool) != Some(true) {
            errs.push(FieldError::invalid(
                format!("{path}.deprecationWarning"),
                json!(warning),
                "can only be set for deprecated versions",
            ));
        } else if warning.len() > 256 {
            errs.push(FieldError::too_long(
                format!("{path}.deprecationWarning"),
                "may not be more than 256 bytes",
            ));
        }
    }
    errs.extend(validate_scale(
        at(v, &["subresources", "scale"]),
        &format!("{path}.subresources.scale"),
    ));
    for (i, col) in super::items(v, "additionalPrinterColumns").enumerate() {
        errs.extend(validate_column(
            col,
            &format!("{path}.additionalPrinterColumns[{i}]"),
        ));
    }
    errs
}

/// `ValidateCustomResourceDefinitionSubresources`, the scale part.
fn validate_scale(scale: Option<&Value>, path: &str) -> Vec<FieldError> {
    let Some(scale) = scale.filter(|s| s.is_object()) else {
        return Vec::new();
    };
    let mut errs = Vec::new();
    for (field, prefixes, detail) in [
        (
            "specReplicasPath",
            &[".spec."][..],
            "should be a json path under .spec",
        ),
        (
            "statusReplicasPath",
            &[".status."][..],
            "should be a json path under .status",
        ),
        (
            "labelSelectorPath",
            &[".spec.", ".status."][..],
            "should be a json path under either .spec or .status",
        ),
    ] {
        let value = str_of(scale, &[field]);
        if value.is_empty() {
            if field != "labelSelectorPath" {
                errs.push(FieldError::required(format!("{path}.{field}"), ""));
            }
        } else if !prefixes.iter().any(|p| value.starts_with(p)) {
            errs.push(FieldError::invalid(
                format!("{path}.{field}"),
                json!(value),
                detail,
            ));
        }
    }
    errs
}

/// `ValidateCustomResourceColumnDefinition`.
fn validate_column(col: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if str_of(col, &["name"]).is_empty() {
        errs.push(FieldError::required(format!("{path}.name"), ""));
    }
    match str_of(col, &["type"]) {
        "" => errs.push(FieldError::required(
            format!("{path}.type"),
            format!("must be one of {}", COLUMN_TYPES.join(",")),
        )),
        t if !COLUMN_TYPES.contains(&t) => errs.push(FieldError::not_supported(
            format!("{path}.type"),
            json!(t),
            &COLUMN_TYPES,
        )),
        _ => {}
    }
    let format = str_of(col, &["format"]);
    if !format.is_empty() && !COLUMN_FORMATS.contains(&format) {
        errs.push(FieldError::not_supported(
            format!("{path}.format"),
            json!(format),
            &COLUMN_FORMATS,
        ));
    }
    if str_of(col, &["jsonPath"]).is_empty() {
        errs.push(FieldError::required(format!("{path}.jsonPath"), ""));
    }
    errs
}

/// `ValidateCustomResourceDefinitionNames` (spec and status alike).
fn validate_names(names: Option<&Value>, path: &str) -> Vec<FieldError> {
    let Some(names) = names.filter(|n| n.is_object()) else {
        return Vec::new();
    };
    let mut errs = Vec::new();
    for field in ["plural", "singular"] {
        let value = str_of(names, &[field]);
        if let e @ [_, ..] = is_dns1035_label(value).as_slice()
            && !value.is_empty()
        {
            errs.push(FieldError::invalid(
                format!("{path}.{field}"),
                json!(value),
                e.join(","),
            ));
        }
    }
    for field in ["kind", "listKind"] {
        let value = str_of(names, &[field]);
        if let e @ [_, ..] = is_dns1035_label(&value.to_lowercase()).as_slice()
            && !value.is_empty()
        {
            errs.push(FieldError::invalid(
                format!("{path}.{field}"),
                json!(value),
                format!("may have mixed case, but should otherwise match: {}", e.join(",")),
            ));
        }
    }
    for list in ["shortNames", "categories"] {
        for (i, item) in super::items(names, list).enumerate() {
            let value = item.as_str().unwrap_or("");
            if let e @ [_, ..] = is_dns1035_label(value).as_slice() {
                errs.push(FieldError::invalid(
                    format!("{path}.{list}[{i}]"),
                    json!(value),
                    e.join(","),
                ));
            }
        }
    }
    let kind = str_of(names, &["kind"]);
    if !kind.is_empty() && kind == str_of(names, &["listKind"]) {
        errs.push(FieldError::invalid(
            format!("{path}.listKind"),
            json!(kind),
            "kind and listKind may not be the same",
        ));
    }
    errs
}

/// `validateCustomResourceConversion`.
fn validate_conversion(conversion: Option<&Value>) -> Vec<FieldError> {
    let Some(conversion) = conversion.filter(|c| c.is_object()) else {
        return Vec::new();
    };
    let mut errs = Vec::new();
    let webhook = conversion.get("webhook").filter(|w| !w.is_null());
    match str_of(conversion, &["strategy"]) {
        "None" => {
            if webhook.is_some() {
                errs.push(FieldError::forbidden(
                    "spec.conversion.webhook",
                    "should not be set when strategy is not set to Webhook",
                ));
            }
        }
        "Webhook" => {
            if webhook
                .and_then(|w| w.get("clientConfig"))
                .is_none_or(Value::is_null)
            {
                errs.push(FieldError::required(
                    "spec.conversion.webhook.clientConfig",
                    "required when strategy is set to Webhook",
                ));
            }
        }
        other => errs.push(FieldError::not_supported(
            "spec.conversion.strategy",
            json!(other),
            &["None", "Webhook"],
        )),
    }
    errs
}

/// `ValidateCustomResourceDefinitionStoredVersions`.
fn validate_stored_versions(crd: &Value) -> Vec<FieldError> {
    let stored: Vec<&str> = at(crd, &["status", "storedVersions"])
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    if stored.is_empty() {
        return vec![FieldError::invalid(
            "status.storedVersions",
            json!(stored),
            "must have at least one stored version",
        )];
    }
    let mut errs = Vec::new();
    let names: Vec<&str> = versions(crd).iter().map(|v| str_of(v, &["name"])).collect();
    if let Some(storage) = storage_version(crd)
        && !stored.contains(&storage.as_str())
    {
        errs.push(FieldError::invalid(
            "status.storedVersions",
            json!(storage),
            format!("must have the storage version {storage}"),
        ));
    }
    for (i, v) in stored.iter().enumerate() {
        if !names.contains(v) {
            errs.push(FieldError::invalid(
                format!("status.storedVersions[{i}]"),
                json!(v),
                "must appear in spec.versions",
            ));
        }
    }
    errs
}

#[cfg(test)]
#[path = "apiextensions_tests.rs"]
mod tests;
