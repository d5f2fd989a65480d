//! Go `fmt` renderings that upstream error messages embed: `%q` of a string and
//! `%#v` of the few Go values the API server prints (`[]string`,
//! `map[string]string`, `*v1.LabelSelector`, `intstr.IntOrString`, `time.Time`).
//!
//! Upstream: Go's `fmt` and `strconv.Quote` (the `%q` verb), as used by
//! `staging/src/k8s.io/apimachinery/pkg/util/validation/field/errors.go`
//! (`field.Invalid` prints values with `%#v` / `%q`).
//!
//! Simplified: values are `serde_json::Value`s in their v1 JSON form; `%q`
//! escapes control characters but prints every other character as-is (Go
//! also escapes non-printable Unicode as `\u....`).

use serde_json::Value;

/// Go's `%q` of a string (`strconv.Quote`).
pub fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\u{b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The `%q` of each item joined by `, `, as in "supported values: ...".
pub fn go_quoted_list(items: &[&str]) -> String {
    let quoted: Vec<String> = items.iter().map(|s| go_quote(s)).collect();
    quoted.join(", ")
}

/// A JSON value the way `field.Error` prints it (`%#v`-ish): strings
/// quoted, numbers and booleans bare, null as `null`.
pub fn go_value(v: &Value) -> String {
    match v {
        Value::String(s) => go_quote(s),
        Value::Null => "null".into(),
        other => other.to_string(),
    }
}

/// Go's `%#v` of a `[]string` held as a JSON array; absent is `[]string(nil)`.
pub fn go_string_list(v: Option<&Value>) -> String {
    match v.and_then(Value::as_array) {
        None => "[]string(nil)".to_string(),
        Some(items) => {
            let items: Vec<String> = items
                .iter()
                .map(|x| x.as_str().unwrap_or_default().to_string())
                .collect();
            go_string_slice(&items, false)
        }
    }
}

/// Go's `%#v` of a `[]string`; `nil` renders an empty slice as `[]string(nil)`.
pub fn go_string_slice(values: &[String], nil: bool) -> String {
    if nil && values.is_empty() {
        return "[]string(nil)".to_string();
    }
    let quoted: Vec<String> = values.iter().map(|v| go_quote(v)).collect();
    format!("[]string{{{}}}", quoted.join(", "))
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
        .map(|k| format!("{}:{}", go_quote(k), go_quote(m[*k].as_str().unwrap_or_default())))
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
    let values = go_string_list(r.get("values"));
    format!(
        "v1.LabelSelectorRequirement{{Key:{}, Operator:{}, Values:{values}}}",
        go_quote(&s("key")),
        go_quote(&s("operator"))
    )
}

/// Go `%#v` of an `intstr.IntOrString` value (upstream prints the struct).
pub fn go_int_or_string(v: &Value) -> String {
    match v {
        Value::String(s) => format!("intstr.IntOrString{{Type:1, IntVal:0, StrVal:{}}}", go_quote(s)),
        other => format!(
            "intstr.IntOrString{{Type:0, IntVal:{}, StrVal:\"\"}}",
            other.as_i64().unwrap_or_default()
        ),
    }
}

/// Go's `time.Time.String()` of an RFC 3339 UTC timestamp, as printed for
/// `creationTimestamp: Invalid value: ...: field is immutable`.
pub fn go_time(v: Option<&Value>) -> String {
    match v.and_then(Value::as_str) {
        Some(t) => {
            let t = t.trim_end_matches('Z').replacen('T', " ", 1);
            format!("{t} +0000 UTC")
        }
        None => "null".to_string(),
    }
}
