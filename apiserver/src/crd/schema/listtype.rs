//! `x-kubernetes-list-type` checks on a custom resource (upstream
//! `apiextensions-apiserver/pkg/apiserver/schema/listtype/validation.go`),
//! and, on the same walk, the `apiVersion` / `kind` of embedded resources
//! (upstream `pkg/registry/customresource/validator.go`,
//! `validateEmbeddedResource`).
//!
//! - `set`: a repeated item is `Duplicate value: "a"` at its index;
//! - `map`: items must be objects carrying every key; a repeated key tuple is
//!   `spec.ports[1]: Duplicate value: map[string]interface {}{"name":"a"}`
//!   (Go's `%#v` of the key map);
//! - embedded resource: `apiVersion` and `kind` required, strings, not
//!   empty. Simplified: the group/version and kind syntax and the embedded
//!   object's metadata are not checked.
//!
//! Paths print as `field.Path` does (`spec.items[0]`, map keys `[key]`).
//! One hash set per list: linear in the list's size.

use std::collections::HashSet;

use serde_json::{Map, Value};

use super::node::{ListType, Node};
use super::path::{Path, Seg};
use crate::error::{FieldError, FieldErrorType};
use crate::gofmt::go_quote;
use crate::kinds::meta::NameRule;

/// Checks the list types and embedded resources under `x`.
pub fn validate(node: &Node, x: &Value, path: &mut Path, errs: &mut Vec<FieldError>) {
    match x {
        Value::Array(items) => {
            match &node.list_type {
                Some(ListType::Set) => check_set(items, path, errs),
                Some(ListType::Map(keys)) => check_map(keys, items, path, errs),
                _ => {}
            }
            if let Some(item_schema) = &node.items {
                for (i, item) in items.iter().enumerate() {
                    path.with(Seg::Index(i), |p| validate(item_schema, item, p, errs));
                }
            }
        }
        Value::Object(obj) => {
            if node.embedded {
                check_embedded(obj, path, errs);
            }
            for (k, v) in obj {
                if let Some(prop) = node.properties.get(k) {
                    path.with(Seg::Field(k.clone()), |p| validate(prop, v, p, errs));
                } else if let Some(values) = node.additional_schema() {
                    path.with(Seg::Key(k.clone()), |p| validate(values, v, p, errs));
                }
            }
        }
        _ => {}
    }
}

fn check_set(items: &[Value], path: &mut Path, errs: &mut Vec<FieldError>) {
    let mut seen = HashSet::new();
    for (i, item) in items.iter().enumerate() {
        if !seen.insert(canonical(item)) {
            let field = path.with(Seg::Index(i), |p| p.field());
            errs.push(FieldError::duplicate(field, item.clone()));
        }
    }
}

fn check_map(keys: &[String], items: &[Value], path: &mut Path, errs: &mut Vec<FieldError>) {
    let mut seen = HashSet::new();
    for (i, item) in items.iter().enumerate() {
        let field = path.with(Seg::Index(i), |p| p.field());
        let Value::Object(obj) = item else {
            let detail = "must be an object for an array of list-type map";
            errs.push(FieldError::invalid(field, item.clone(), detail));
            continue;
        };
        if obj.is_empty() {
            errs.push(FieldError::required(
                field,
                "must not be empty for an array of list-type map",
            ));
            continue;
        }
        let mut key_obj = Map::new();
        for k in keys {
            match obj.get(k) {
                Some(v) => {
                    key_obj.insert(k.clone(), v.clone());
                }
                None => errs.push(FieldError::required(format!("{field}.{k}"), "")),
            }
        }
        if !seen.insert(canonical(&Value::Object(key_obj.clone()))) {
            errs.push(FieldError {
                kind: FieldErrorType::Duplicate,
                field,
                value: None,
                detail: go_map(&key_obj),
            });
        }
    }
}

/// A value's identity for duplicate detection (object keys sorted, numbers
/// by value).
fn canonical(v: &Value) -> String {
    match v {
        Value::Number(n) => n.as_f64().map_or_else(|| n.to_string(), |f| f.to_string()),
        Value::Array(items) => {
            let inner: Vec<String> = items.iter().map(canonical).collect();
            format!("[{}]", inner.join(","))
        }
        Value::Object(obj) => {
            let mut entries: Vec<String> = obj
                .iter()
                .map(|(k, v)| format!("{k:?}:{}", canonical(v)))
                .collect();
            entries.sort();
            format!("{{{}}}", entries.join(","))
        }
        other => other.to_string(),
    }
}

/// Go's `%#v` of a `map[string]interface{}` of scalars, keys sorted.
fn go_map(m: &Map<String, Value>) -> String {
    let mut entries: Vec<(&String, &Value)> = m.iter().collect();
    entries.sort_by(|a, b| a.0.cmp(b.0));
    let parts: Vec<String> = entries
        .into_iter()
        .map(|(k, v)| {
            let v = match v {
                Value::String(s) => go_quote(s),
                Value::Null => "interface {}(nil)".to_string(),
                other => other.to_string(),
            };
            format!("{}:{v}", go_quote(k))
        })
        .collect();
    format!("map[string]interface {{}}{{{}}}", parts.join(", "))
}

/// An embedded resource's TypeMeta and ObjectMeta (upstream
/// `schema/objectmeta/validation.go`, `validateEmbeddedResource`).
fn check_embedded(obj: &Map<String, Value>, path: &mut Path, errs: &mut Vec<FieldError>) {
    for key in ["apiVersion", "kind"] {
        let field = path.with(Seg::Field(key.to_string()), |p| p.field());
        match obj.get(key) {
            None => errs.push(FieldError::required(field, "")),
            Some(Value::String(s)) if s.is_empty() => errs.push(FieldError::required(field, "")),
            Some(Value::String(kind)) if key == "kind" => {
                let problems = crate::validation::is_dns1035_label(&kind.to_lowercase());
                if !problems.is_empty() {
                    let detail = format!(
                        "may have mixed case, but should otherwise match: {}",
                        problems.join(",")
                    );
                    errs.push(FieldError::invalid(field, Value::String(kind.clone()), detail));
                }
            }
            Some(Value::String(_)) => {}
            Some(other) => errs.push(FieldError::invalid(field, other.clone(), "must be a string")),
        }
    }
    if let Some(Value::Object(meta)) = obj.get("metadata") {
        let mut meta = meta.clone();
        if meta
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .is_empty()
        {
            // Upstream names it so that only the other fields are checked.
            meta.insert("name".into(), Value::String("fakename".into()));
        }
        let namespaced = meta
            .get("namespace")
            .and_then(Value::as_str)
            .is_some_and(|ns| !ns.is_empty());
        let wrapped = serde_json::json!({ "metadata": meta });
        let prefix = path.field();
        for mut e in crate::kinds::meta::validate_object_meta(&wrapped, namespaced, NameRule::PathSegment) {
            e.field = format!("{prefix}.{}", e.field);
            errs.push(e);
        }
    }
}
