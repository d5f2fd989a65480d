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

/// Go's `%#v` of a `[]string`; `nil` renders an empty slice as `[]string(nil)`.
pub fn go_string_slice(values: &[String], nil: bool) -> String {
    if nil && values.is_empty() {
        return "[]string(nil)".to_string();
    }
    let quoted: Vec<String> = values.iter().map(|v| go_quote(v)).collect();
    format!("[]string{{{}}}", quoted.join(", "))
}
