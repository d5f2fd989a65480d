//! ObjectMeta rules shared by every kind: name formats, labels,
//! annotations, owner references, finalizers, label selectors, and the
//! immutability of identity fields on update.
//!
//! Upstream: `staging/src/k8s.io/apimachinery/pkg/util/validation/validation.go`
//! (name and label syntax, message texts), `.../api/validation/objectmeta.go`
//! (ObjectMeta on create and update), `.../apis/meta/v1/validation` (labels,
//! selectors). Regular expressions are checked by hand; the messages quote
//! the same regexes upstream prints.
//!
//! Simplified: `managedFields` is not validated; the `resourceVersion must be
//! specified for an update` rule is left to the store, which knows whether
//! the strategy allows unconditional updates.

use serde_json::{Map, Value, json};

use crate::error::{FieldError, FieldErrorType};

const DNS1123_LABEL_FMT: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const DNS1123_LABEL_MSG: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
const DNS1123_SUBDOMAIN_FMT: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
const DNS1123_SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const DNS1035_LABEL_FMT: &str = "[a-z]([-a-z0-9]*[a-z0-9])?";
const DNS1035_LABEL_MSG: &str = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character";
const QUALIFIED_NAME_FMT: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const QUALIFIED_NAME_MSG: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_FMT: &str = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";
const LABEL_VALUE_MSG: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

/// Total bytes of annotation keys and values allowed on one object.
pub const ANNOTATIONS_LIMIT: usize = 256 * 1024;

/// `must be no more than N characters`.
pub fn max_len_error(n: usize) -> String {
    format!("must be no more than {n} characters")
}

/// Upstream's regex failure text: examples joined so that a double space
/// appears (`'a',  or 'b'`), then the regex.
pub fn regex_error(msg: &str, fmt: &str, examples: &[&str]) -> String {
    let mut s = msg.to_string();
    if examples.is_empty() {
        s.push_str(&format!(" (regex used for validation is '{fmt}')"));
        return s;
    }
    s.push_str(" (e.g. ");
    for (i, e) in examples.iter().enumerate() {
        if i > 0 {
            s.push_str(" or ");
        }
        s.push_str(&format!("'{e}', "));
    }
    s.push_str(&format!("regex used for validation is '{fmt}')"));
    s
}

/// `must be between lo and hi, inclusive`.
pub fn range_error(lo: i64, hi: i64) -> String {
    format!("must be between {lo} and {hi}, inclusive")
}

fn is_lower_alnum(c: char) -> bool {
    c.is_ascii_lowercase() || c.is_ascii_digit()
}

/// `[a-z0-9]([-a-z0-9]*[a-z0-9])?`
fn matches_dns1123_label(s: &str) -> bool {
    let (Some(first), Some(last)) = (s.chars().next(), s.chars().last()) else {
        return false;
    };
    is_lower_alnum(first) && is_lower_alnum(last) && s.chars().all(|c| is_lower_alnum(c) || c == '-')
}

fn matches_dns1123_subdomain(s: &str) -> bool {
    s.split('.').all(matches_dns1123_label)
}

/// `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`
fn matches_qualified_part(s: &str) -> bool {
    let (Some(first), Some(last)) = (s.chars().next(), s.chars().last()) else {
        return false;
    };
    first.is_ascii_alphanumeric()
        && last.is_ascii_alphanumeric()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// DNS-1123 label (at most 63 characters): namespaces, container names.
pub fn is_dns1123_label(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > 63 {
        errs.push(max_len_error(63));
    }
    if !matches_dns1123_label(s) {
        if matches_dns1123_subdomain(s) {
            errs.push("must not contain dots".to_string());
        } else {
            errs.push(regex_error(
                DNS1123_LABEL_MSG,
                DNS1123_LABEL_FMT,
                &["my-name", "123-abc"],
            ));
        }
    }
    errs
}

/// DNS-1123 subdomain (at most 253 characters): most object names.
pub fn is_dns1123_subdomain(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > 253 {
        errs.push(max_len_error(253));
    }
    if !matches_dns1123_subdomain(s) {
        errs.push(regex_error(
            DNS1123_SUBDOMAIN_MSG,
            DNS1123_SUBDOMAIN_FMT,
            &["example.com"],
        ));
    }
    errs
}

/// DNS-1035 label (starts with a letter, at most 63): Service names.
pub fn is_dns1035_label(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > 63 {
        errs.push(max_len_error(63));
    }
    let starts_alpha = s.chars().next().is_some_and(|c| c.is_ascii_lowercase());
    if !(starts_alpha && matches_dns1123_label(s)) {
        errs.push(regex_error(
            DNS1035_LABEL_MSG,
            DNS1035_LABEL_FMT,
            &["my-name", "abc-123"],
        ));
    }
    errs
}

/// A label key, annotation key or finalizer: `[prefix/]name`.
pub fn is_qualified_name(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    let parts: Vec<&str> = s.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                errs.push("prefix part must be non-empty".to_string());
            } else {
                for m in is_dns1123_subdomain(prefix) {
                    errs.push(format!("prefix part {m}"));
                }
            }
            *name
        }
        _ => {
            errs.push(format!(
                "a qualified name {} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                regex_error(
                    QUALIFIED_NAME_MSG,
                    QUALIFIED_NAME_FMT,
                    &["MyName", "my.name", "123-abc"]
                )
            ));
            return errs;
        }
    };
    if name.is_empty() {
        errs.push("name part must be non-empty".to_string());
    } else if name.len() > 63 {
        errs.push(format!("name part {}", max_len_error(63)));
    }
    if !matches_qualified_part(name) {
        errs.push(format!(
            "name part {}",
            regex_error(
                QUALIFIED_NAME_MSG,
                QUALIFIED_NAME_FMT,
                &["MyName", "my.name", "123-abc"]
            )
        ));
    }
    errs
}

/// A label value: empty, or a qualified-name part of at most 63.
pub fn is_valid_label_value(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > 63 {
        errs.push(max_len_error(63));
    }
    if !s.is_empty() && !matches_qualified_part(s) {
        errs.push(regex_error(
            LABEL_VALUE_MSG,
            LABEL_VALUE_FMT,
            &["MyValue", "my_value", "12345"],
        ));
    }
    errs
}

/// Which name syntax a kind uses for `metadata.name`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NameRule {
    /// DNS-1123 subdomain, most kinds.
    Subdomain,
    /// DNS-1123 label: Namespace, StatefulSet.
    Label,
    /// DNS-1035 label: Service.
    Dns1035,
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
        }
    }
}

/// `Invalid value: <raw>: <detail>` where `raw` is already Go-formatted
/// (`map[string]string{...}`, `v1.LabelSelector{...}`), so it is not quoted.
pub fn invalid_raw(field: impl Into<String>, raw: String, detail: &str) -> FieldError {
    let detail = if detail.is_empty() {
        raw
    } else {
        format!("{raw}: {detail}")
    };
    FieldError {
        kind: FieldErrorType::Invalid,
        field: field.into(),
        value: None,
        detail,
    }
}

/// `must be greater than or equal to 0` for a negative integer field.
pub fn nonnegative(v: Option<&Value>, field: &str) -> Vec<FieldError> {
    match v.and_then(Value::as_i64) {
        Some(n) if n < 0 => vec![FieldError::invalid(
            field,
            json!(n),
            "must be greater than or equal to 0",
        )],
        _ => Vec::new(),
    }
}

/// `must be greater than zero` for a zero or negative integer field.
pub fn positive(v: Option<&Value>, field: &str) -> Vec<FieldError> {
    match v.and_then(Value::as_i64) {
        Some(n) if n <= 0 => vec![FieldError::invalid(field, json!(n), "must be greater than zero")],
        _ => Vec::new(),
    }
}

/// Go `%#v` of a `map[string]string`, keys sorted as Go's fmt does.
pub fn go_string_map(m: Option<&Value>) -> String {
    let Some(Value::Object(m)) = m else {
        return "map[string]string(nil)".to_string();
    };
    let mut keys: Vec<&String> = m.keys().collect();
    keys.sort();
    let body: Vec<String> = keys
        .iter()
        .map(|k| format!("{k:?}:{:?}", m[*k].as_str().unwrap_or_default()))
        .collect();
    format!("map[string]string{{{}}}", body.join(", "))
}

/// Go `%#v` of a `v1.LabelSelector` (the form upstream prints for
/// `field is immutable` on `spec.selector`).
pub fn go_label_selector(sel: Option<&Value>) -> String {
    let Some(sel) = sel.filter(|s| s.is_object()) else {
        return "(*v1.LabelSelector)(nil)".to_string();
    };
    let exprs = match sel.get("matchExpressions").and_then(Value::as_array) {
        None => "[]v1.LabelSelectorRequirement(nil)".to_string(),
        Some(list) => {
            let items: Vec<String> = list.iter().map(go_requirement).collect();
            format!("[]v1.LabelSelectorRequirement{{{}}}", items.join(", "))
        }
    };
    format!(
        "v1.LabelSelector{{MatchLabels:{}, MatchExpressions:{exprs}}}",
        go_string_map(sel.get("matchLabels"))
    )
}

fn go_requirement(r: &Value) -> String {
    let s = |k: &str| r.get(k).and_then(Value::as_str).unwrap_or_default().to_string();
    let values = match r.get("values").and_then(Value::as_array) {
        None => "[]string(nil)".to_string(),
        Some(v) => {
            let items: Vec<String> = v
                .iter()
                .map(|x| format!("{:?}", x.as_str().unwrap_or_default()))
                .collect();
            format!("[]string{{{}}}", items.join(", "))
        }
    };
    format!(
        "v1.LabelSelectorRequirement{{Key:{:?}, Operator:{:?}, Values:{values}}}",
        s("key"),
        s("operator")
    )
}

/// Go `%#v` of an `intstr.IntOrString` value (upstream prints the struct).
pub fn go_int_or_string(v: &Value) -> String {
    match v {
        Value::String(s) => format!("intstr.IntOrString{{Type:1, IntVal:0, StrVal:{s:?}}}"),
        other => format!(
            "intstr.IntOrString{{Type:0, IntVal:{}, StrVal:\"\"}}",
            other.as_i64().unwrap_or_default()
        ),
    }
}

/// Go's `time.Time.String()` of an RFC 3339 UTC timestamp, as printed for
/// `creationTimestamp: Invalid value: ...: field is immutable`.
fn go_time(v: Option<&Value>) -> String {
    match v.and_then(Value::as_str) {
        Some(t) => {
            let t = t.trim_end_matches('Z').replacen('T', " ", 1);
            format!("{t} +0000 UTC")
        }
        None => "null".to_string(),
    }
}

/// Labels (`metadata.labels`, `spec.selector.matchLabels`, ...): every key a
/// qualified name, every value a label value; errors name the map, not the key.
pub fn validate_labels(labels: Option<&Value>, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let Some(Value::Object(m)) = labels else {
        return errs;
    };
    for (k, v) in m {
        for msg in is_qualified_name(k) {
            errs.push(FieldError::invalid(path, json!(k), msg));
        }
        let v = v.as_str().unwrap_or_default();
        for msg in is_valid_label_value(v) {
            errs.push(FieldError::invalid(path, json!(v), msg));
        }
    }
    errs
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
                    "v1.OwnerReference{{APIVersion:\"v1\", Kind:\"Event\", Name:{:?}}}",
                    s("name")
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

fn go_string_slice(items: &[String]) -> String {
    let q: Vec<String> = items.iter().map(|s| format!("{s:?}")).collect();
    format!("[]string{{{}}}", q.join(", "))
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
            go_string_slice(&list),
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
                    go_string_slice(&extra)
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

/// `spec.selector` as a `metav1.LabelSelector` (upstream
/// `ValidateLabelSelector`, strict about label values).
pub fn validate_label_selector(sel: Option<&Value>, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let Some(sel) = sel else {
        return errs;
    };
    let exprs = sel.get("matchExpressions").and_then(Value::as_array);
    for (i, r) in exprs.into_iter().flatten().enumerate() {
        errs.extend(validate_requirement(r, &format!("{path}.matchExpressions[{i}]")));
    }
    errs.extend(validate_labels(
        sel.get("matchLabels"),
        &format!("{path}.matchLabels"),
    ));
    errs
}

fn validate_requirement(r: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let op = r.get("operator").and_then(Value::as_str).unwrap_or_default();
    let values = string_list(r.get("values"));
    match op {
        "In" | "NotIn" if values.is_empty() => errs.push(FieldError::required(
            format!("{path}.values"),
            "must be specified when `operator` is 'In' or 'NotIn'",
        )),
        "Exists" | "DoesNotExist" if !values.is_empty() => errs.push(FieldError::forbidden(
            format!("{path}.values"),
            "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
        )),
        "In" | "NotIn" | "Exists" | "DoesNotExist" => {}
        other => errs.push(FieldError::invalid(
            format!("{path}.operator"),
            json!(other),
            "not a valid selector operator",
        )),
    }
    let key = r.get("key").and_then(Value::as_str).unwrap_or_default();
    for msg in is_qualified_name(key) {
        errs.push(FieldError::invalid(format!("{path}.key"), json!(key), msg));
    }
    for (i, v) in values.iter().enumerate() {
        for msg in is_valid_label_value(v) {
            errs.push(FieldError::invalid(format!("{path}.values[{i}]"), json!(v), msg));
        }
    }
    errs
}

/// Whether a selector has neither matchLabels nor matchExpressions.
pub fn selector_is_empty(sel: &Value) -> bool {
    let n = |k: &str| match sel.get(k) {
        Some(Value::Object(m)) => m.len(),
        Some(Value::Array(a)) => a.len(),
        _ => 0,
    };
    n("matchLabels") + n("matchExpressions") == 0
}

/// Whether `labels` satisfies a `metav1.LabelSelector` (`None` labels are
/// an empty set).
pub fn selector_matches(sel: &Value, labels: Option<&Value>) -> bool {
    let empty = Map::new();
    let labels = labels.and_then(Value::as_object).unwrap_or(&empty);
    let get = |k: &str| labels.get(k).and_then(Value::as_str);
    if let Some(Value::Object(ml)) = sel.get("matchLabels")
        && ml.iter().any(|(k, v)| get(k) != v.as_str())
    {
        return false;
    }
    let exprs = sel.get("matchExpressions").and_then(Value::as_array);
    exprs.into_iter().flatten().all(|r| {
        let key = r.get("key").and_then(Value::as_str).unwrap_or_default();
        let values = string_list(r.get("values"));
        let has = |v: &str| values.iter().any(|x| x == v);
        match r.get("operator").and_then(Value::as_str).unwrap_or_default() {
            "In" => get(key).is_some_and(has),
            "NotIn" => !get(key).is_some_and(has),
            "Exists" => get(key).is_some(),
            "DoesNotExist" => get(key).is_none(),
            _ => false,
        }
    })
}
