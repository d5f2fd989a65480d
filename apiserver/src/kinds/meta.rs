//! ObjectMeta validation shared by every kind: name and generateName,
//! namespace, annotations, owner references, finalizers, and the
//! immutability of identity fields on update. Name and label syntax live in
//! [`crate::validation`], label maps and selectors in
//! [`crate::labels::validation`], Go `%#v` renderings in [`crate::gofmt`].
//!
//! Upstream: `staging/src/k8s.io/apimachinery/pkg/api/validation/objectmeta.go`
//! (`ValidateObjectMetaAccessor`, `ValidateObjectMetaAccessorUpdate`,
//! `ValidateAnnotations`, `ValidateOwnerReferences`, `ValidateFinalizers`) and
//! `staging/src/k8s.io/apimachinery/pkg/api/validation/generic.go` (the name
//! validators behind [`NameRule`]).
//!
//! Simplified: `managedFields` is not validated; the `resourceVersion must be
//! specified for an update` rule is left to the store, which knows whether
//! the strategy allows unconditional updates.

use serde_json::{Value, json};

use crate::error::FieldError;
use crate::gofmt::{go_quote, go_string_slice, go_time};
use crate::labels::validation::validate_labels;
use crate::validation::{
    invalid_raw, is_dns1035_label, is_dns1123_label, is_dns1123_subdomain, is_qualified_name, nonnegative,
};

/// Total bytes of annotation keys and values allowed on one object.
pub const ANNOTATIONS_LIMIT: usize = 256 * 1024;

/// Which name syntax a kind uses for `metadata.name`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NameRule {
    /// DNS-1123 subdomain, most kinds.
    Subdomain,
    /// DNS-1123 label: Namespace, StatefulSet.
    Label,
    /// DNS-1035 label: Service.
    Dns1035,
    /// A path segment (not `.` or `..`, no `/` or `%`): the RBAC kinds
    /// (upstream `path.IsValidPathSegmentName`), so `system:aggregate-to-view` is valid.
    PathSegment,
}

impl NameRule {
    /// Errors for `name`; with `prefix`, a trailing `-` is accepted
    /// (a `generateName` prefix), as upstream's `maskTrailingDash`.
    pub fn check(self, name: &str, prefix: bool) -> Vec<String> {
        let masked;
        let name = if prefix && name.len() > 1 && name.ends_with('-') {
            masked = format!("{}a", &name[..name.len() - 1]);
            masked.as_str()
        } else {
            name
        };
        match self {
            NameRule::Subdomain => is_dns1123_subdomain(name),
            NameRule::Label => is_dns1123_label(name),
            NameRule::Dns1035 => is_dns1035_label(name),
            NameRule::PathSegment => super::rbac::is_valid_path_segment_name(name),
        }
    }
}
/// Annotations: keys are qualified names compared in lower case; the total
/// size is capped.
pub fn validate_annotations(annotations: Option<&Value>, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let Some(Value::Object(m)) = annotations else {
        return errs;
    };
    let mut total = 0usize;
    for (k, v) in m {
        for msg in is_qualified_name(&k.to_lowercase()) {
            errs.push(FieldError::invalid(path, json!(k), msg));
        }
        total += k.len() + v.as_str().map_or(0, str::len);
    }
    if total > ANNOTATIONS_LIMIT {
        errs.push(FieldError::too_long(
            path,
            format!("must have at most {ANNOTATIONS_LIMIT} bytes"),
        ));
    }
    errs
}

fn validate_owner_references(refs: Option<&Value>, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let Some(Value::Array(refs)) = refs else {
        return errs;
    };
    let mut first_controller: Option<String> = None;
    for r in refs {
        let s = |k: &str| r.get(k).and_then(Value::as_str).unwrap_or_default();
        let version = s("apiVersion").rsplit('/').next().unwrap_or_default();
        if version.is_empty() {
            errs.push(FieldError::invalid(
                format!("{path}.apiVersion"),
                json!(s("apiVersion")),
                "version must not be empty",
            ));
        }
        for key in ["kind", "name", "uid"] {
            if s(key).is_empty() {
                errs.push(FieldError::invalid(
                    format!("{path}.{key}"),
                    json!(""),
                    "must not be empty",
                ));
            }
        }
        if s("apiVersion") == "v1" && s("kind") == "Event" {
            errs.push(invalid_raw(
                path,
                format!(
                    "v1.OwnerReference{{APIVersion:\"v1\", Kind:\"Event\", Name:{}}}",
                    go_quote(s("name"))
                ),
                "/v1, Kind=Event is disallowed from being an owner",
            ));
        }
        if r.get("controller").and_then(Value::as_bool) == Some(true) {
            let this = format!("{}/{}", s("kind"), s("name"));
            match &first_controller {
                Some(first) => errs.push(invalid_raw(
                    path,
                    "[]v1.OwnerReference{...}".to_string(),
                    &format!(
                        "Only one reference can have Controller set to true. Found \"true\" in references for {first} and {this}"
                    ),
                )),
                None => first_controller = Some(this),
            }
        }
    }
    errs
}

fn string_list(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| a.iter().filter_map(|x| x.as_str().map(str::to_string)).collect())
        .unwrap_or_default()
}

fn validate_finalizers(finalizers: Option<&Value>, path: &str) -> Vec<FieldError> {
    let list = string_list(finalizers);
    let mut errs = Vec::new();
    for f in &list {
        for msg in is_qualified_name(f) {
            errs.push(FieldError::invalid(path, json!(f), msg));
        }
    }
    if list.iter().any(|f| f == "orphan") && list.iter().any(|f| f == "foregroundDeletion") {
        errs.push(invalid_raw(
            path,
            go_string_slice(&list, false),
            "finalizer orphan and foregroundDeletion cannot be both set",
        ));
    }
    errs
}

/// Labels, annotations, owner references and finalizers: the parts checked
/// the same way on create and update.
fn validate_meta_common(meta: &Value) -> Vec<FieldError> {
    let mut errs = validate_labels(meta.get("labels"), "metadata.labels");
    errs.extend(validate_annotations(
        meta.get("annotations"),
        "metadata.annotations",
    ));
    errs.extend(validate_owner_references(
        meta.get("ownerReferences"),
        "metadata.ownerReferences",
    ));
    errs.extend(validate_finalizers(meta.get("finalizers"), "metadata.finalizers"));
    errs
}

/// `metadata` of a new object (upstream `ValidateObjectMetaAccessor`).
pub fn validate_object_meta(obj: &Value, namespaced: bool, rule: NameRule) -> Vec<FieldError> {
    let empty = json!({});
    let meta = obj.get("metadata").unwrap_or(&empty);
    let s = |k: &str| meta.get(k).and_then(Value::as_str).unwrap_or_default();
    let mut errs = Vec::new();
    let generate_name = s("generateName");
    if !generate_name.is_empty() {
        for msg in rule.check(generate_name, true) {
            errs.push(FieldError::invalid(
                "metadata.generateName",
                json!(generate_name),
                msg,
            ));
        }
    }
    let name = s("name");
    if name.is_empty() {
        errs.push(FieldError::required(
            "metadata.name",
            "name or generateName is required",
        ));
    } else {
        for msg in rule.check(name, false) {
            errs.push(FieldError::invalid("metadata.name", json!(name), msg));
        }
    }
    let ns = s("namespace");
    if namespaced {
        if ns.is_empty() {
            errs.push(FieldError::required("metadata.namespace", ""));
        } else {
            for msg in NameRule::Label.check(ns, false) {
                errs.push(FieldError::invalid("metadata.namespace", json!(ns), msg));
            }
        }
    } else if !ns.is_empty() {
        errs.push(FieldError::forbidden(
            "metadata.namespace",
            "not allowed on this type",
        ));
    }
    errs.extend(nonnegative(meta.get("generation"), "metadata.generation"));
    errs.extend(validate_meta_common(meta));
    errs
}

fn immutable(
    new: Option<&Value>,
    old: Option<&Value>,
    field: &str,
    render: fn(Option<&Value>) -> Value,
) -> Option<FieldError> {
    fn norm(v: Option<&Value>) -> Option<&Value> {
        v.filter(|x| !x.is_null() && x.as_str() != Some(""))
    }
    if norm(new) == norm(old) {
        return None;
    }
    Some(FieldError::invalid(field, render(new), "field is immutable"))
}

fn as_string_value(v: Option<&Value>) -> Value {
    json!(v.and_then(Value::as_str).unwrap_or_default())
}

fn as_plain_value(v: Option<&Value>) -> Value {
    v.cloned().unwrap_or(Value::Null)
}

/// `metadata` on update (upstream `ValidateObjectMetaAccessorUpdate`).
pub fn validate_object_meta_update(new: &Value, old: &Value) -> Vec<FieldError> {
    let empty = json!({});
    let nm = new.get("metadata").unwrap_or(&empty);
    let om = old.get("metadata").unwrap_or(&empty);
    let mut errs = Vec::new();
    if om.get("deletionTimestamp").is_some_and(|v| !v.is_null()) {
        let old_f = string_list(om.get("finalizers"));
        let mut extra: Vec<String> = string_list(nm.get("finalizers"))
            .into_iter()
            .filter(|f| !old_f.contains(f))
            .collect();
        extra.sort();
        extra.dedup();
        if !extra.is_empty() {
            errs.push(FieldError::forbidden(
                "metadata.finalizers",
                format!(
                    "no new finalizers can be added if the object is being deleted, found new finalizers {}",
                    go_string_slice(&extra, false)
                ),
            ));
        }
    }
    let new_gen = nm.get("generation").and_then(Value::as_i64).unwrap_or(0);
    let old_gen = om.get("generation").and_then(Value::as_i64).unwrap_or(0);
    if new_gen < old_gen {
        errs.push(FieldError::invalid(
            "metadata.generation",
            json!(new_gen),
            "must not be decremented",
        ));
    }
    for key in ["name", "namespace", "uid"] {
        errs.extend(immutable(
            nm.get(key),
            om.get(key),
            &format!("metadata.{key}"),
            as_string_value,
        ));
    }
    if let Some(mut e) = immutable(
        nm.get("creationTimestamp"),
        om.get("creationTimestamp"),
        "metadata.creationTimestamp",
        as_plain_value,
    ) {
        e.value = None;
        e.detail = format!("{}: field is immutable", go_time(nm.get("creationTimestamp")));
        errs.push(e);
    }
    if let Some(mut e) = immutable(
        nm.get("deletionTimestamp"),
        om.get("deletionTimestamp"),
        "metadata.deletionTimestamp",
        as_plain_value,
    ) {
        e.value = None;
        e.detail = format!("{}: field is immutable", go_time(nm.get("deletionTimestamp")));
        errs.push(e);
    }
    errs.extend(immutable(
        nm.get("deletionGracePeriodSeconds"),
        om.get("deletionGracePeriodSeconds"),
        "metadata.deletionGracePeriodSeconds",
        as_plain_value,
    ));
    errs.extend(validate_meta_common(nm));
    errs
}
