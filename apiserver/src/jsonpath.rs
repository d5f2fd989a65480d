//! Reading a JSON object by a path of field names, with Go zero values for
//! what is absent: the one helper set for code that inspects v1 objects.
//!
//! Upstream has no single counterpart: Go code reads typed structs, whose
//! absent fields are zero values (`""`, `0`, `false`); these helpers give the
//! same answers on `serde_json::Value`s (compare
//! `staging/src/k8s.io/apimachinery/pkg/apis/meta/v1/unstructured/helpers.go`,
//! `NestedFieldNoCopy` / `NestedString`).
//!
//! Simplified: only object keys are followed (no list indexes); a value of
//! the wrong type reads as the zero value. Kubernetes JSONPath templates
//! (`{.items[?(@.type=="Ready")].status}`, as `kubectl -o jsonpath` and
//! CRD printer columns write them) are [`template`].

pub mod template;

use serde_json::Value;

/// The value at `path`, if every step is an object key.
pub fn at<'a>(obj: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(obj, |v, k| v.get(k))
}

/// The string at `path`, or `""`.
pub fn str_at<'a>(obj: &'a Value, path: &[&str]) -> &'a str {
    at(obj, path).and_then(Value::as_str).unwrap_or_default()
}

/// The integer at `path` (a float is truncated), or `0`.
pub fn int_at(obj: &Value, path: &[&str]) -> i64 {
    at(obj, path)
        .and_then(|v| v.as_i64().or_else(|| v.as_f64().map(|f| f as i64)))
        .unwrap_or(0)
}

/// The boolean at `path`, or `false`.
pub fn bool_at(obj: &Value, path: &[&str]) -> bool {
    at(obj, path).and_then(Value::as_bool).unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn zero_values_for_absent_or_mistyped() {
        let obj = json!({"spec": {"n": 3, "f": 2.7, "b": true, "s": "x"}, "list": [1]});
        assert_eq!(at(&obj, &["spec", "n"]), Some(&json!(3)));
        assert_eq!(at(&obj, &["list", "0"]), None);
        assert_eq!(at(&obj, &[]), Some(&obj));
        assert_eq!(str_at(&obj, &["spec", "s"]), "x");
        assert_eq!(str_at(&obj, &["spec", "n"]), "");
        assert_eq!(int_at(&obj, &["spec", "n"]), 3);
        assert_eq!(int_at(&obj, &["spec", "f"]), 2);
        assert_eq!(int_at(&obj, &["spec", "missing"]), 0);
        assert!(bool_at(&obj, &["spec", "b"]));
        assert!(!bool_at(&obj, &["spec", "s"]));
    }
}
