//! Checks a custom resource's value against its schema, with kube-openapi's
//! messages (upstream `k8s.io/kube-openapi/pkg/validation/validate`:
//! `schema.go`, `type.go`, `validator.go`, `slice_validator.go`,
//! `object_validator.go`, `schema_props.go`; messages from
//! `pkg/validation/errors/schema.go`), turned into field errors as
//! `apiextensions-apiserver/pkg/apiserver/validation/validation.go`
//! (`kubeOpenAPIResultToFieldErrors`) does:
//!
//! - a wrong type: `spec.replicas: Invalid value: "string": spec.replicas in
//!   body must be of type integer: "string"`;
//! - `required`: `spec.x: Required value`; `enum`: `Unsupported value`;
//!   `maxLength`: `Too long: may not be more than N bytes`; `maxItems` /
//!   `maxProperties`: `Too many`; every other check `Invalid value: <value>:
//!   <kube-openapi message>`;
//! - `allOf` / `anyOf` / `oneOf` / `not` failures are not field errors
//!   upstream, so they print as `<nil>: Invalid value: "": "spec.x" must ...`.
//!
//! Order at one node follows kube-openapi's validators: type, the junctors
//! (`anyOf`, `oneOf`, `allOf`, `not`),
//! string, format, number, list (items first), enum, object (values first,
//! then `required`). Properties are visited in name order (upstream's is Go's
//! random map order).
//!
//! Simplified: of the failing `anyOf` / `oneOf` alternatives, the one whose
//! errors are reported beside the junctor's message is the first with the
//! fewest errors (kube-openapi counts the checks each passed); `uniqueItems`
//! and `patternProperties` are not checked (a CRD may not use them).

use serde_json::{Value, json};

use super::formats;
use super::node::Node;
use super::path::{Path, Seg};
use crate::error::{FieldError, FieldErrorType};

/// Validates `v` at `path` against `node`, appending to `errs`.
pub fn validate(node: &Node, v: &Value, path: &mut Path, errs: &mut Vec<FieldError>) {
    let name = path.openapi();
    if v.is_null() {
        check_null(node, &name, errs);
        check_enum(node, v, &name, errs);
        return;
    }
    check_type(node, v, &name, errs);
    check_junctors(node, v, path, &name, errs);
    match v {
        Value::String(s) => {
            check_string(node, s, &name, errs);
            if !formats::valid(&node.format, s) {
                let detail = format!("{name} in body must be of type {}: {}", node.format, go_q(s));
                errs.push(type_invalid(&name, json!(s), detail));
            }
        }
        Value::Number(_) => check_number(node, v, &name, errs),
        Value::Array(items) => {
            if let Some(item_schema) = &node.items {
                for (i, item) in items.iter().enumerate() {
                    path.with(Seg::Index(i), |p| validate(item_schema, item, p, errs));
                }
            }
            check_list_size(node, items.len(), &name, errs);
        }
        _ => {}
    }
    check_enum(node, v, &name, errs);
    if let Value::Object(obj) = v {
        check_object(node, obj, path, &name, errs);
    }
}

/// Go's `%q` of a string.
fn go_q(s: &str) -> String {
    crate::gofmt::go_quote(s)
}

fn invalid(name: &str, value: Value, detail: String) -> FieldError {
    FieldError::invalid(name, value, detail)
}

fn type_invalid(name: &str, value: Value, detail: String) -> FieldError {
    FieldError {
        kind: FieldErrorType::TypeInvalid,
        field: name.to_string(),
        value: Some(value),
        detail,
    }
}

/// The types a node accepts (`integer,string` for int-or-string); empty
/// when any.
fn accepted(node: &Node) -> Vec<&str> {
    if node.int_or_string {
        vec!["integer", "string"]
    } else if node.type_name.is_empty() {
        Vec::new()
    } else {
        vec![node.type_name.as_str()]
    }
}

/// The JSON type kube-openapi infers from a decoded value.
pub fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_f64() => "number",
        Value::Number(_) => "integer",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn check_null(node: &Node, name: &str, errs: &mut Vec<FieldError>) {
    let types = accepted(node);
    if !types.is_empty() && !node.nullable {
        let joined = types.join(",");
        let detail = format!("{name} in body must be of type {joined}: \"null\"");
        errs.push(type_invalid(name, json!("null"), detail));
    }
}

fn check_type(node: &Node, v: &Value, name: &str, errs: &mut Vec<FieldError>) {
    let types = accepted(node);
    if types.is_empty() {
        return;
    }
    let actual = json_type(v);
    let float_int =
        actual == "number" && types.contains(&"integer") && v.as_f64().is_some_and(|f| f.fract() == 0.0);
    let int_float = actual == "integer" && types.contains(&"number");
    if types.contains(&actual) || float_int || int_float {
        return;
    }
    let joined = types.join(",");
    let detail = format!("{name} in body must be of type {joined}: {}", go_q(actual));
    errs.push(type_invalid(name, json!(actual), detail));
}

fn check_junctors(node: &Node, v: &Value, path: &mut Path, name: &str, errs: &mut Vec<FieldError>) {
    let c = &node.checks;
    let results = |alts: &[Node], path: &mut Path| -> Vec<Vec<FieldError>> {
        alts.iter()
            .map(|alt| {
                let mut e = Vec::new();
                validate(alt, v, path, &mut e);
                e
            })
            .collect()
    };
    if !c.any_of.is_empty() {
        let found = results(&c.any_of, path);
        if !found.iter().any(Vec::is_empty) {
            errs.push(nil_error(format!(
                "{} must validate at least one schema (anyOf)",
                go_q(name)
            )));
            errs.extend(best(found));
        }
    }
    if !c.one_of.is_empty() {
        let found = results(&c.one_of, path);
        let valid = found.iter().filter(|e| e.is_empty()).count();
        if valid != 1 {
            let more = if valid == 0 {
                "Found none valid".to_string()
            } else {
                format!("Found {valid} valid alternatives")
            };
            let msg = format!(
                "{} must validate one and only one schema (oneOf). {more}",
                go_q(name)
            );
            errs.push(nil_error(msg));
            if valid == 0 {
                errs.extend(best(found));
            }
        }
    }
    if !c.all_of.is_empty() {
        let found = results(&c.all_of, path);
        let valid = found.iter().filter(|e| e.is_empty()).count();
        let all = found.len();
        errs.extend(found.into_iter().flatten());
        if valid != all {
            let more = if valid == 0 { ". None validated" } else { "" };
            errs.push(nil_error(format!(
                "{} must validate all the schemas (allOf){more}",
                go_q(name)
            )));
        }
    }
    if let Some(not) = &c.not
        && results(std::slice::from_ref(&**not), path)
            .iter()
            .all(Vec::is_empty)
    {
        errs.push(nil_error(format!(
            "{} must not validate the schema (not)",
            go_q(name)
        )));
    }
}

/// The failing alternative kube-openapi reports: the one that matched
/// most (here: the first with the fewest errors).
fn best(found: Vec<Vec<FieldError>>) -> Vec<FieldError> {
    found.into_iter().min_by_key(Vec::len).unwrap_or_default()
}

/// A kube-openapi error that is not a `Validation`: upstream makes it
/// `field.Invalid(nil, "", msg)`, printed with the field `<nil>`.
fn nil_error(detail: String) -> FieldError {
    FieldError::invalid("<nil>", json!(""), detail)
}

fn check_string(node: &Node, s: &str, name: &str, errs: &mut Vec<FieldError>) {
    let c = &node.checks;
    let len = s.chars().count() as u64;
    if let Some(max) = c.max_length
        && len > max
    {
        errs.push(FieldError::too_long(
            name,
            format!("may not be more than {max} bytes"),
        ));
        return;
    }
    if let Some(min) = c.min_length
        && len < min
    {
        errs.push(invalid(
            name,
            json!(s),
            format!("{name} in body should be at least {min} chars long"),
        ));
        return;
    }
    if let Some(pattern) = &c.pattern
        && pattern.is_match(s) == Some(false)
    {
        errs.push(invalid(
            name,
            json!(s),
            format!("{name} in body should match '{}'", pattern.source),
        ));
    }
}

/// A bound as Go's `%v` prints it: integral values without a fraction.
fn go_number(f: f64) -> String {
    if f.fract() == 0.0 && f.abs() < 1e21 {
        format!("{}", f as i128)
    } else {
        format!("{f}")
    }
}

fn check_number(node: &Node, v: &Value, name: &str, errs: &mut Vec<FieldError>) {
    let c = &node.checks;
    let Some(x) = v.as_f64() else { return };
    if let Some(factor) = c.multiple_of
        && factor != 0.0
    {
        let not_multiple = match v.as_i64() {
            Some(i) if factor.fract() == 0.0 => i % (factor as i64) != 0,
            _ => (x / factor).fract() != 0.0,
        };
        if not_multiple {
            let detail = format!("{name} in body should be a multiple of {}", go_number(factor));
            errs.push(invalid(name, v.clone(), detail));
        }
    }
    if let Some((min, exclusive)) = c.minimum
        && (x < min || (exclusive && x == min))
    {
        let op = if exclusive {
            "greater than"
        } else {
            "greater than or equal to"
        };
        let detail = format!("{name} in body should be {op} {}", go_number(min));
        errs.push(invalid(name, v.clone(), detail));
    }
    if let Some((max, exclusive)) = c.maximum
        && (x > max || (exclusive && x == max))
    {
        let op = if exclusive {
            "less than"
        } else {
            "less than or equal to"
        };
        let detail = format!("{name} in body should be {op} {}", go_number(max));
        errs.push(invalid(name, v.clone(), detail));
    }
}

fn check_list_size(node: &Node, len: usize, name: &str, errs: &mut Vec<FieldError>) {
    let c = &node.checks;
    if let Some(min) = c.min_items
        && (len as u64) < min
    {
        let detail = format!("{name} in body should have at least {min} items");
        errs.push(invalid(name, json!(len), detail));
    }
    if let Some(max) = c.max_items
        && len as u64 > max
    {
        errs.push(FieldError::too_many(name, len, max as usize));
    }
}

/// Whether two JSON values are equal as kube-openapi's enum check compares
/// them (numbers by value).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}

fn check_enum(node: &Node, v: &Value, name: &str, errs: &mut Vec<FieldError>) {
    let values = &node.checks.enum_values;
    if values.is_empty() || values.iter().any(|e| same(e, v)) {
        return;
    }
    let supported: Vec<String> = values
        .iter()
        .map(|e| match e {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .collect();
    let supported: Vec<&str> = supported.iter().map(String::as_str).collect();
    errs.push(FieldError::not_supported(name, v.clone(), &supported));
}

fn check_object(
    node: &Node,
    obj: &serde_json::Map<String, Value>,
    path: &mut Path,
    name: &str,
    errs: &mut Vec<FieldError>,
) {
    let c = &node.checks;
    let n = obj.len() as u64;
    if let Some(min) = c.min_properties
        && n < min
    {
        let detail = format!("{name} in body should have at least {min} properties");
        errs.push(invalid(name, json!(min), detail));
        return;
    }
    if let Some(max) = c.max_properties
        && n > max
    {
        errs.push(FieldError::too_many(name, obj.len(), max as usize));
        return;
    }
    if let Some(values) = node.additional_schema() {
        for (k, v) in obj {
            if !node.properties.contains_key(k) {
                path.with(Seg::Key(k.clone()), |p| validate(values, v, p, errs));
            }
        }
    }
    for (k, prop) in &node.properties {
        if let Some(v) = obj.get(k) {
            path.with(Seg::Field(k.clone()), |p| validate(prop, v, p, errs));
        }
    }
    for k in &c.required {
        if !obj.contains_key(k) {
            let field = if path.is_root() {
                k.clone()
            } else {
                format!("{name}.{k}")
            };
            errs.push(FieldError::required(field, ""));
        }
    }
}
