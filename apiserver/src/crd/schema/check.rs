//! The CRD's own checks of its `openAPIV3Schema`: structural invariants
//! (upstream `apiextensions-apiserver/pkg/apiserver/schema/validation.go`,
//! `ValidateStructural`), the extension rules and defaults of
//! `pkg/apis/apiextensions/validation/validation.go`
//! (`ValidateCustomResourceDefinitionOpenAPISchema`), and the defaults'
//! validity (`pkg/apiserver/schema/defaulting/validation.go`).
//!
//! Paths are `field.Path`s under the caller's prefix:
//! `spec.versions[0].schema.openAPIV3Schema.properties[spec].type: Required
//! value: must not be empty for specified object fields`. Errors are sorted
//! by their text, as `ValidateStructural` sorts its own.
//!
//! Checked: `type` present (root / items / fields) and `object` at the root,
//! `items` on arrays, `additionalProperties` at the root, with `properties`,
//! or on an embedded resource; `x-kubernetes-int-or-string` with
//! `preserve-unknown-fields` / `embedded-resource`; embedded resources'
//! `type: object` and `properties`; the root `metadata` restricted to `name`
//! and `generateName`; `x-kubernetes-list-type` (values, `array` type,
//! `x-kubernetes-list-map-keys` with `map`, keys naming scalar item
//! properties, `object` items); `x-kubernetes-map-type` (values, `object`);
//! `uniqueItems: true`; patterns that do not compile; what a nested
//! `allOf` / `anyOf` / `oneOf` / `not` may not specify (the int-or-string
//! `anyOf` exception included); `default`s that fail their schema or carry
//! unknown fields; CEL rules and message expressions that do not compile.
//!
//! Skipped: structural completeness (a field specified only inside a
//! junctor), `$ref` / `definitions` / `patternProperties` /
//! `dependencies` and the other JSON-schema keywords a CRD forbids, the
//! `format` list, defaults inside `metadata`, `nullable` defaults, CEL cost
//! estimation and the rule-to-schema type checks (`oldSelf` on a
//! non-correlatable node, undefined fields).

use serde_json::{Map, Value, json};

use super::cel::Rule;
use super::node::Node;
use super::path::Path;
use super::{defaults, prune, validate};
use crate::error::FieldError;

/// Where a schema node sits (upstream `level`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Level {
    Root,
    Item,
    Field,
}

/// All the CRD-side errors of `raw`, under `field`.
pub fn check(raw: &Value, field: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    match raw.as_object() {
        Some(obj) => node(obj, Level::Root, field, &mut errs),
        None => errs.push(FieldError::required(field, "")),
    }
    errs.sort_by_key(|e| e.to_string());
    errs.dedup();
    errs
}

fn child(path: &str, name: &str) -> String {
    format!("{path}.{name}")
}

fn key(path: &str, name: &str, key: &str) -> String {
    format!("{path}.{name}[{key}]")
}

fn node(s: &Map<String, Value>, lvl: Level, path: &str, errs: &mut Vec<FieldError>) {
    let ty = s.get("type").and_then(Value::as_str).unwrap_or_default();
    let flag = |k: &str| s.get(k).and_then(Value::as_bool).unwrap_or(false);
    let (int_or_string, preserve, embedded) = (
        flag("x-kubernetes-int-or-string"),
        flag("x-kubernetes-preserve-unknown-fields"),
        flag("x-kubernetes-embedded-resource"),
    );
    let props = s.get("properties").and_then(Value::as_object);
    if ty == "array" && !s.get("items").is_some_and(Value::is_object) {
        errs.push(FieldError::required(child(path, "items"), "must be specified"));
    }
    if let Some(Value::Object(items)) = s.get("items") {
        node(items, Level::Item, &child(path, "items"), errs);
    }
    for (k, v) in props.into_iter().flatten() {
        if let Value::Object(p) = v {
            node(p, Level::Field, &key(path, "properties", k), errs);
        }
    }
    additional_properties(s, lvl, embedded, path, errs);
    if int_or_string && preserve {
        let f = child(path, "x-kubernetes-preserve-unknown-fields");
        errs.push(FieldError::invalid(
            f,
            json!(true),
            "must be false if x-kubernetes-int-or-string is true",
        ));
    }
    if int_or_string && embedded {
        let f = child(path, "x-kubernetes-embedded-resource");
        errs.push(FieldError::invalid(
            f,
            json!(true),
            "must be false if x-kubernetes-int-or-string is true",
        ));
    }
    junctors(s, path, errs);
    type_rules(ty, lvl, int_or_string, preserve, embedded, path, errs);
    if let Some(Value::Object(meta)) = props.and_then(|p| p.get("metadata")) {
        metadata(
            meta,
            lvl == Level::Root || embedded,
            lvl,
            &key(path, "properties", "metadata"),
            errs,
        );
    }
    if embedded && !preserve && props.is_none_or(Map::is_empty) {
        let detail = "must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields";
        errs.push(FieldError::required(child(path, "properties"), detail));
    }
    list_type(s, ty, path, errs);
    map_type(s, ty, path, errs);
    value_checks(s, path, errs);
    default(s, path, errs);
    rules(s, path, errs);
}

fn additional_properties(
    s: &Map<String, Value>,
    lvl: Level,
    embedded: bool,
    path: &str,
    errs: &mut Vec<FieldError>,
) {
    let Some(additional) = s.get("additionalProperties") else {
        return;
    };
    let f = child(path, "additionalProperties");
    if lvl == Level::Root {
        errs.push(FieldError::forbidden(&f, "must not be used at the root"));
    }
    if s.get("properties")
        .and_then(Value::as_object)
        .is_some_and(|p| !p.is_empty())
        && (additional.is_object() || additional == &json!(false))
    {
        errs.push(FieldError::forbidden(
            &f,
            "additionalProperties and properties are mutual exclusive",
        ));
    }
    if embedded {
        errs.push(FieldError::forbidden(
            &f,
            "must not be used if x-kubernetes-embedded-resource is set",
        ));
    }
    if let Value::Object(a) = additional {
        node(a, Level::Field, &f, errs);
    }
}

fn type_rules(
    ty: &str,
    lvl: Level,
    int_or_string: bool,
    preserve: bool,
    embedded: bool,
    path: &str,
    errs: &mut Vec<FieldError>,
) {
    let f = child(path, "type");
    if embedded && ty != "object" {
        let detail = "must be object if x-kubernetes-embedded-resource is true";
        if ty.is_empty() {
            errs.push(FieldError::required(&f, detail));
        } else {
            errs.push(FieldError::invalid(&f, json!(ty), detail));
        }
    } else if ty.is_empty() && !int_or_string && !preserve {
        let detail = match lvl {
            Level::Root => "must not be empty at the root",
            Level::Item => "must not be empty for specified array items",
            Level::Field => "must not be empty for specified object fields",
        };
        errs.push(FieldError::required(&f, detail));
    }
    if lvl == Level::Root && !ty.is_empty() && ty != "object" {
        errs.push(FieldError::invalid(&f, json!(ty), "must be object at the root"));
    }
    if !ty.is_empty() && !["object", "array", "string", "integer", "number", "boolean"].contains(&ty) {
        let supported = ["array", "boolean", "integer", "number", "object", "string"];
        errs.push(FieldError::not_supported(&f, json!(ty), &supported));
    }
}

fn metadata(meta: &Map<String, Value>, check: bool, lvl: Level, path: &str, errs: &mut Vec<FieldError>) {
    let ty = meta.get("type").and_then(Value::as_str).unwrap_or_default();
    if check && ty != "object" {
        errs.push(FieldError::invalid(
            child(path, "type"),
            json!(ty),
            "must be object",
        ));
    }
    if lvl != Level::Root {
        return;
    }
    let names_only = meta.keys().all(|k| k == "type" || k == "properties")
        && meta
            .get("properties")
            .and_then(Value::as_object)
            .is_none_or(|p| p.keys().all(|k| k == "name" || k == "generateName"));
    if !names_only {
        let detail = "must not specify anything other than name and generateName, but metadata is implicitly specified";
        errs.push(FieldError::forbidden(path, detail));
    }
}

fn list_type(s: &Map<String, Value>, ty: &str, path: &str, errs: &mut Vec<FieldError>) {
    let list_type = s.get("x-kubernetes-list-type").and_then(Value::as_str);
    let keys = s.get("x-kubernetes-list-map-keys").and_then(Value::as_array);
    let keys_field = child(path, "x-kubernetes-list-map-keys");
    if let Some(lt) = list_type {
        if !["atomic", "set", "map"].contains(&lt) {
            let f = child(path, "x-kubernetes-list-type");
            errs.push(FieldError::not_supported(f, json!(lt), &["atomic", "set", "map"]));
        }
        if ty != "array" {
            let detail = "must be array if x-kubernetes-list-type is specified";
            errs.push(FieldError::invalid(child(path, "type"), json!(ty), detail));
        }
    }
    let has_keys = keys.is_some_and(|k| !k.is_empty());
    if list_type == Some("map") && !has_keys {
        errs.push(FieldError::required(
            &keys_field,
            "must not be empty if x-kubernetes-list-type is map",
        ));
    }
    if list_type != Some("map") && has_keys {
        errs.push(FieldError::forbidden(
            &keys_field,
            "must be empty if x-kubernetes-list-type is not map",
        ));
    }
    if list_type == Some("map")
        && has_keys
        && let Some(Value::Object(items)) = s.get("items")
    {
        map_keys(items, keys.into_iter().flatten(), path, &keys_field, errs);
    }
}

fn map_keys<'a>(
    items: &Map<String, Value>,
    keys: impl Iterator<Item = &'a Value>,
    path: &str,
    keys_field: &str,
    errs: &mut Vec<FieldError>,
) {
    let item_type = items.get("type").and_then(Value::as_str).unwrap_or_default();
    if item_type != "object" {
        let f = format!("{path}.items.type");
        errs.push(FieldError::invalid(
            f,
            json!(item_type),
            "must be object when x-kubernetes-list-type is map",
        ));
        return;
    }
    let props = items.get("properties").and_then(Value::as_object);
    let keys: Vec<&Value> = keys.collect();
    for k in &keys {
        let name = k.as_str().unwrap_or_default();
        match props.and_then(|p| p.get(name)) {
            None => {
                let detail = "entries must all be names of item properties";
                errs.push(FieldError::invalid(
                    keys_field,
                    Value::Array(keys.iter().map(|v| (*v).clone()).collect()),
                    detail,
                ));
                return;
            }
            Some(p) => {
                let t = p.get("type").and_then(Value::as_str).unwrap_or_default();
                if !["string", "integer", "number", "boolean"].contains(&t) {
                    let f = format!("{path}.items.properties[{name}].type");
                    errs.push(FieldError::invalid(
                        f,
                        json!(t),
                        "must be a scalar type if parent array type is map",
                    ));
                }
            }
        }
    }
}

fn map_type(s: &Map<String, Value>, ty: &str, path: &str, errs: &mut Vec<FieldError>) {
    let Some(mt) = s.get("x-kubernetes-map-type").and_then(Value::as_str) else {
        return;
    };
    if !["granular", "atomic"].contains(&mt) {
        let f = child(path, "x-kubernetes-map-type");
        errs.push(FieldError::not_supported(f, json!(mt), &["granular", "atomic"]));
    }
    if ty != "object" {
        let detail = "must be object if x-kubernetes-map-type is specified";
        errs.push(FieldError::invalid(child(path, "type"), json!(ty), detail));
    }
}

fn value_checks(s: &Map<String, Value>, path: &str, errs: &mut Vec<FieldError>) {
    if s.get("uniqueItems").and_then(Value::as_bool) == Some(true) {
        let detail = "uniqueItems cannot be set to true since the runtime complexity becomes quadratic";
        errs.push(FieldError::forbidden(child(path, "uniqueItems"), detail));
    }
    if let Some(p) = s.get("pattern").and_then(Value::as_str)
        && let Some(e) = super::node::Pattern::syntax_error(p)
    {
        let detail = format!("must be a valid regular expression, but isn't: {e}");
        errs.push(FieldError::invalid(child(path, "pattern"), json!(p), detail));
    }
}

/// What a nested (junctor) schema may not specify.
const NESTED_FORBIDDEN: &[(&str, &str)] = &[
    ("additionalProperties", "must be undefined to be structural"),
    ("default", "must be undefined to be structural"),
    ("title", "must be empty to be structural"),
    ("description", "must be empty to be structural"),
    ("nullable", "must be false to be structural"),
    ("externalDocs", "must be undefined to be structural"),
    (
        "x-kubernetes-preserve-unknown-fields",
        "must be false to be structural",
    ),
    ("x-kubernetes-embedded-resource", "must be false to be structural"),
    ("x-kubernetes-int-or-string", "must be false to be structural"),
    ("x-kubernetes-list-map-keys", "must be empty to be structural"),
    ("x-kubernetes-list-type", "must be undefined to be structural"),
    ("x-kubernetes-map-type", "must be undefined to be structural"),
    ("x-kubernetes-validations", "must be empty to be structural"),
];

/// The `anyOf: [{type: integer}, {type: string}]` of an int-or-string.
fn int_or_string_any_of(v: Option<&Value>) -> bool {
    v == Some(&json!([{"type": "integer"}, {"type": "string"}]))
}

fn junctors(s: &Map<String, Value>, path: &str, errs: &mut Vec<FieldError>) {
    let skip_any_of = int_or_string_any_of(s.get("anyOf"));
    for junctor in ["allOf", "anyOf", "oneOf"] {
        if junctor == "anyOf" && skip_any_of {
            continue;
        }
        let Some(Value::Array(alts)) = s.get(junctor) else {
            continue;
        };
        for (i, alt) in alts.iter().enumerate() {
            let skip = junctor == "allOf" && i == 0 && int_or_string_any_of(alt.get("anyOf"));
            nested(alt, skip, &format!("{path}.{junctor}[{i}]"), errs);
        }
    }
    if let Some(not) = s.get("not") {
        nested(not, false, &child(path, "not"), errs);
    }
}

fn nested(v: &Value, skip_any_of: bool, path: &str, errs: &mut Vec<FieldError>) {
    let Some(s) = v.as_object() else { return };
    if s.contains_key("type") && !skip_any_of {
        errs.push(FieldError::forbidden(
            child(path, "type"),
            "must be empty to be structural",
        ));
    }
    for (k, detail) in NESTED_FORBIDDEN {
        let set = match s.get(*k) {
            None | Some(Value::Bool(false)) | Some(Value::Null) => false,
            Some(Value::String(x)) => !x.is_empty(),
            Some(Value::Array(x)) => !x.is_empty(),
            Some(_) => true,
        };
        if set {
            errs.push(FieldError::forbidden(child(path, k), *detail));
        }
    }
    let props = s.get("properties").and_then(Value::as_object);
    if props.is_some_and(|p| p.contains_key("metadata")) {
        let f = key(path, "properties", "metadata");
        errs.push(FieldError::forbidden(
            f,
            "must not be specified in a nested context",
        ));
    }
    junctors_nested(s, skip_any_of, path, errs);
    if let Some(items) = s.get("items") {
        nested(items, false, &child(path, "items"), errs);
    }
    for (k, p) in props.into_iter().flatten() {
        nested(p, false, &key(path, "properties", k), errs);
    }
}

fn junctors_nested(s: &Map<String, Value>, skip_any_of: bool, path: &str, errs: &mut Vec<FieldError>) {
    for junctor in ["allOf", "anyOf", "oneOf"] {
        if junctor == "anyOf" && (skip_any_of || int_or_string_any_of(s.get("anyOf"))) {
            continue;
        }
        let Some(Value::Array(alts)) = s.get(junctor) else {
            continue;
        };
        for (i, alt) in alts.iter().enumerate() {
            nested(alt, false, &format!("{path}.{junctor}[{i}]"), errs);
        }
    }
}

/// A `default` must validate against its schema (with the defaults nested
/// in it applied) and survive pruning unchanged.
fn default(s: &Map<String, Value>, path: &str, errs: &mut Vec<FieldError>) {
    let Some(default) = s.get("default") else { return };
    let f = child(path, "default");
    let schema = Node::build(&Value::Object(s.clone()));
    // Nested defaults apply first, so `default: {}` may rely on them.
    let mut defaulted = default.clone();
    defaults::apply(&schema, &mut defaulted);
    let mut found = Vec::new();
    validate::validate(&schema, &defaulted, &mut Path::default(), &mut found);
    for mut e in found {
        // kube-openapi names the default's root "", and the error lands
        // under `<path>.default`.
        e.field = if e.field.is_empty() {
            f.clone()
        } else {
            format!("{f}.{}", e.field)
        };
        errs.push(e);
    }
    let mut pruned = default.clone();
    if !prune::prune_value(&schema, &mut pruned).is_empty() {
        errs.push(FieldError::invalid(
            &f,
            default.clone(),
            "must not have unknown fields",
        ));
    }
}

fn rules(s: &Map<String, Value>, path: &str, errs: &mut Vec<FieldError>) {
    let (_, failures) = Rule::compile_all(s.get("x-kubernetes-validations"));
    for e in failures {
        errs.push(FieldError {
            kind: crate::error::FieldErrorType::Invalid,
            field: format!("{path}.x-kubernetes-validations[{}].{}", e.index, e.field),
            value: None,
            detail: e.detail,
        });
    }
}
