//! Label and field selectors, as the Kubernetes API server parses and applies them.
//!
//! Behaviour follows these upstream files (k8s.io/apimachinery, v1.33):
//! * `pkg/labels/selector.go`: the label selector lexer, parser, requirement
//!   validation, `Matches` and `String()`;
//! * `pkg/labels/labels.go`: `Set.String()` (our [`format_labels`]);
//! * `pkg/apis/meta/v1/helpers.go`: `LabelSelectorAsSelector` and `FormatLabelSelector`;
//! * `pkg/util/validation` (+ `field` errors, `errors.Aggregate`): label key/value
//!   validation and the error text that ends up in 400 responses;
//! * `pkg/fields/selector.go`: field selector parsing with `\` escaping;
//! * `pkg/apis/*/v1/conversion.go` (`AddFieldLabelConversionFunc`) and
//!   `pkg/registry/*/strategy.go` (`ToSelectableFields` / `GetAttrs`): which field
//!   labels each kind accepts and what value they take ([`field_value`]).
//!
//! Simplifications: objects are `serde_json::Value`s in their v1 JSON form, so the
//! v1->internal conversions that matter for selection (pod IP, events.k8s.io field
//! names) are re-done by hand; the `Transform` hook, `Requirements()` introspection
//! and the label selector's `RequiresExactMatch` are not provided. Error text follows
//! v1.33 wording ("must be no more than 63 characters", "a qualified name ...").

use serde_json::{Map, Value};
use std::fmt;

// ---------------------------------------------------------------------------
// Label selector: data model
// ---------------------------------------------------------------------------

/// A selection operator, spelled as in `k8s.io/apimachinery/pkg/selection`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Equals,
    DoubleEquals,
    NotEquals,
    In,
    NotIn,
    Exists,
    DoesNotExist,
    GreaterThan,
    LessThan,
}

/// Operators in the order upstream lists them in "expected: ..." errors.
const BINARY_OPERATORS: &str = "in, notin, =, ==, !=, gt, lt";

/// One `key op values` term of a label selector.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Requirement {
    key: String,
    op: Op,
    values: Vec<String>,
}

/// A parsed label selector (a conjunction of requirements, sorted by key).
///
/// `LabelSelector::default()` selects everything. The "nothing" selector (a nil
/// `metav1.LabelSelector`) matches no object at all.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LabelSelector {
    requirements: Vec<Requirement>,
    nothing: bool,
}

impl LabelSelector {
    /// Parses the `labelSelector` query syntax (`labels.Parse`).
    pub fn parse(s: &str) -> Result<Self, String> {
        let items = scan(s);
        let mut parser = Parser { items, pos: 0 };
        let mut requirements = parser.parse()?;
        requirements.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(Self {
            requirements,
            nothing: false,
        })
    }

    /// Converts a `metav1.LabelSelector` JSON value (`LabelSelectorAsSelector`):
    /// null selects nothing, `{}` selects everything.
    pub fn from_label_selector(sel: &Value) -> Result<Self, String> {
        let Some(obj) = sel.as_object() else {
            return Ok(Self {
                requirements: Vec::new(),
                nothing: true,
            });
        };
        let match_labels = obj.get("matchLabels").and_then(Value::as_object);
        let exprs = obj.get("matchExpressions").and_then(Value::as_array);
        let mut requirements = Vec::new();
        for (key, value) in match_labels.into_iter().flatten() {
            let value = value.as_str().unwrap_or_default().to_string();
            requirements.push(new_requirement(key, Op::Equals, vec![value], false)?);
        }
        for expr in exprs.into_iter().flatten() {
            requirements.push(requirement_from_expression(expr)?);
        }
        requirements.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(Self {
            requirements,
            nothing: false,
        })
    }

    /// Whether the labels (a `metadata.labels` map, possibly absent) satisfy every requirement.
    pub fn matches(&self, labels: Option<&Map<String, Value>>) -> bool {
        !self.nothing && self.requirements.iter().all(|r| r.matches(labels))
    }

    /// True when the selector does not restrict anything (`Selector.Empty()`).
    pub fn is_empty(&self) -> bool {
        !self.nothing && self.requirements.is_empty()
    }
}

impl fmt::Display for LabelSelector {
    /// `Selector.String()`: requirements joined by `,`, empty for everything/nothing.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, r) in self.requirements.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{r}")?;
        }
        Ok(())
    }
}

impl Requirement {
    fn matches(&self, labels: Option<&Map<String, Value>>) -> bool {
        let value = labels.and_then(|l| l.get(&self.key)).and_then(Value::as_str);
        let has = |v: &str| self.values.iter().any(|x| x == v);
        match self.op {
            Op::In | Op::Equals | Op::DoubleEquals => value.is_some_and(has),
            Op::NotIn | Op::NotEquals => !value.is_some_and(has),
            Op::Exists => value.is_some(),
            Op::DoesNotExist => value.is_none(),
            Op::GreaterThan | Op::LessThan => self.compare(value),
        }
    }

    fn compare(&self, value: Option<&str>) -> bool {
        let Some(actual) = value.and_then(|v| v.parse::<i64>().ok()) else {
            return false;
        };
        let [wanted] = self.values.as_slice() else {
            return false;
        };
        match wanted.parse::<i64>() {
            Ok(w) if self.op == Op::GreaterThan => actual > w,
            Ok(w) => actual < w,
            Err(_) => false,
        }
    }
}

impl fmt::Display for Requirement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let op = match self.op {
            Op::Exists => return f.write_str(&self.key),
            Op::DoesNotExist => return write!(f, "!{}", self.key),
            Op::Equals => "=",
            Op::DoubleEquals => "==",
            Op::NotEquals => "!=",
            Op::In => " in ",
            Op::NotIn => " notin ",
            Op::GreaterThan => ">",
            Op::LessThan => "<",
        };
        let mut values = self.values.clone();
        values.sort();
        let values = values.join(",");
        if matches!(self.op, Op::In | Op::NotIn) {
            write!(f, "{}{op}({values})", self.key)
        } else {
            write!(f, "{}{op}{values}", self.key)
        }
    }
}

fn requirement_from_expression(expr: &Value) -> Result<Requirement, String> {
    let key = expr.get("key").and_then(Value::as_str).unwrap_or_default();
    let operator = expr.get("operator").and_then(Value::as_str).unwrap_or_default();
    let op = match operator {
        "In" => Op::In,
        "NotIn" => Op::NotIn,
        "Exists" => Op::Exists,
        "DoesNotExist" => Op::DoesNotExist,
        other => {
            return Err(format!(
                "{} is not a valid label selector operator",
                go_quote(other)
            ));
        }
    };
    let values: Vec<String> = expr
        .get("values")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|v| v.as_str().unwrap_or_default().to_string())
        .collect();
    // `append([]string(nil), values...)` stays nil when there are no values.
    let nil = values.is_empty();
    new_requirement(key, op, values, nil)
}

// ---------------------------------------------------------------------------
// Requirement validation (NewRequirement) and upstream error text
// ---------------------------------------------------------------------------

/// `labels.NewRequirement` with a nil field path. `nil_values` only changes how an
/// empty value list is rendered in error text (`[]string(nil)` vs `[]string{}`).
fn new_requirement(key: &str, op: Op, values: Vec<String>, nil_values: bool) -> Result<Requirement, String> {
    let mut errs = Vec::new();
    if let Some(e) = validate_label_key(key, "key") {
        errs.push(e);
    }
    let shown = go_string_slice(&values, nil_values);
    let invalid = |detail: &str| format!("values: Invalid value: {shown}: {detail}");
    match op {
        Op::In | Op::NotIn if values.is_empty() => {
            errs.push(invalid("for 'in', 'notin' operators, values set can't be empty"));
        }
        Op::Equals | Op::DoubleEquals | Op::NotEquals if values.len() != 1 => {
            errs.push(invalid("exact-match compatibility requires one single value"));
        }
        Op::Exists | Op::DoesNotExist if !values.is_empty() => {
            errs.push(invalid("values set must be empty for exists and does not exist"));
        }
        Op::GreaterThan | Op::LessThan => {
            if values.len() != 1 {
                errs.push(invalid("for 'Gt', 'Lt' operators, exactly one value is required"));
            }
            for (i, v) in values.iter().enumerate() {
                if v.parse::<i64>().is_err() {
                    errs.push(format!(
                        "values[{i}]: Invalid value: {}: for 'Gt', 'Lt' operators, the value must be an integer",
                        go_quote(v)
                    ));
                }
            }
        }
        _ => {}
    }
    for (i, v) in values.iter().enumerate() {
        let problems = crate::kinds::meta::is_valid_label_value(v);
        if !problems.is_empty() {
            errs.push(format!(
                "values[{i}][{key}]: Invalid value: {}: {}",
                go_quote(v),
                problems.join("; ")
            ));
        }
    }
    if errs.is_empty() {
        Ok(Requirement {
            key: key.to_string(),
            op,
            values,
        })
    } else {
        Err(aggregate(errs))
    }
}

/// `errors.NewAggregate(..).Error()`: one message as-is, several deduplicated in brackets.
fn aggregate(errs: Vec<String>) -> String {
    let mut seen: Vec<String> = Vec::new();
    for e in errs {
        if !seen.contains(&e) {
            seen.push(e);
        }
    }
    if seen.len() == 1 {
        seen.remove(0)
    } else {
        format!("[{}]", seen.join(", "))
    }
}

/// A `field.Invalid` error for a bad label key, or `None` when the key is valid.
fn validate_label_key(key: &str, path: &str) -> Option<String> {
    let problems = crate::kinds::meta::is_qualified_name(key);
    if problems.is_empty() {
        None
    } else {
        Some(format!(
            "{path}: Invalid value: {}: {}",
            go_quote(key),
            problems.join("; ")
        ))
    }
}

/// Go's `%q` for the strings that can show up in selector errors.
fn go_quote(s: &str) -> String {
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

/// Go's `%#v` of a `[]string`.
fn go_string_slice(values: &[String], nil: bool) -> String {
    if nil && values.is_empty() {
        return "[]string(nil)".to_string();
    }
    let quoted: Vec<String> = values.iter().map(|v| go_quote(v)).collect();
    format!("[]string{{{}}}", quoted.join(", "))
}

// ---------------------------------------------------------------------------
// Label selector: lexer
// ---------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tok {
    End,
    ClosedPar,
    Comma,
    DoesNotExist,
    DoubleEquals,
    Equals,
    GreaterThan,
    Identifier,
    In,
    LessThan,
    NotEquals,
    NotIn,
    OpenPar,
}

#[derive(Clone, Debug)]
struct Item {
    tok: Tok,
    lit: String,
}

fn keyword(s: &str) -> Option<Tok> {
    Some(match s {
        ")" => Tok::ClosedPar,
        "," => Tok::Comma,
        "!" => Tok::DoesNotExist,
        "==" => Tok::DoubleEquals,
        "=" => Tok::Equals,
        ">" => Tok::GreaterThan,
        "in" => Tok::In,
        "<" => Tok::LessThan,
        "!=" => Tok::NotEquals,
        "notin" => Tok::NotIn,
        "(" => Tok::OpenPar,
        _ => return None,
    })
}

fn is_whitespace(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\r' | b'\n')
}

fn is_special(c: u8) -> bool {
    matches!(c, b'=' | b'!' | b'(' | b')' | b',' | b'>' | b'<')
}

/// Tokenizes the whole input; the last item is always `End`.
fn scan(s: &str) -> Vec<Item> {
    let bytes = s.as_bytes();
    let mut pos = 0;
    let mut items = Vec::new();
    loop {
        while pos < bytes.len() && is_whitespace(bytes[pos]) {
            pos += 1;
        }
        // A NUL byte ends the input, as upstream's `read()` returns 0 at the end.
        if pos >= bytes.len() || bytes[pos] == 0 {
            items.push(Item {
                tok: Tok::End,
                lit: String::new(),
            });
            return items;
        }
        let start = pos;
        if is_special(bytes[pos]) {
            pos = scan_special(bytes, pos);
        } else {
            while pos < bytes.len()
                && bytes[pos] != 0
                && !is_special(bytes[pos])
                && !is_whitespace(bytes[pos])
            {
                pos += 1;
            }
        }
        let lit = &s[start..pos];
        let tok = keyword(lit).unwrap_or(Tok::Identifier);
        items.push(Item {
            tok,
            lit: lit.to_string(),
        });
    }
}

/// Longest run of special characters that still forms an operator token.
fn scan_special(bytes: &[u8], start: usize) -> usize {
    let mut end = start;
    let mut best = start;
    while end < bytes.len() && is_special(bytes[end]) {
        end += 1;
        let candidate = std::str::from_utf8(&bytes[start..end]).unwrap_or_default();
        if keyword(candidate).is_some() {
            best = end;
        } else if best > start {
            break;
        }
    }
    best.max(start + 1)
}

// ---------------------------------------------------------------------------
// Label selector: parser
// ---------------------------------------------------------------------------

struct Parser {
    items: Vec<Item>,
    pos: usize,
}

/// In value position `in` and `notin` are plain identifiers.
fn as_value(tok: Tok) -> Tok {
    match tok {
        Tok::In | Tok::NotIn => Tok::Identifier,
        t => t,
    }
}

impl Parser {
    fn lookahead(&self, values: bool) -> (Tok, String) {
        let item = &self.items[self.pos.min(self.items.len() - 1)];
        let tok = if values { as_value(item.tok) } else { item.tok };
        (tok, item.lit.clone())
    }

    fn consume(&mut self, values: bool) -> (Tok, String) {
        let out = self.lookahead(values);
        self.pos += 1;
        out
    }

    fn parse(&mut self) -> Result<Vec<Requirement>, String> {
        let mut requirements = Vec::new();
        loop {
            let (tok, lit) = self.lookahead(true);
            match tok {
                Tok::Identifier | Tok::DoesNotExist => {
                    let r = self
                        .parse_requirement()
                        .map_err(|e| format!("unable to parse requirement: {e}"))?;
                    requirements.push(r);
                    let (t, l) = self.consume(true);
                    match t {
                        Tok::End => return Ok(requirements),
                        Tok::Comma => {
                            let (t2, l2) = self.lookahead(true);
                            if t2 != Tok::Identifier && t2 != Tok::DoesNotExist {
                                return Err(format!("found '{l2}', expected: identifier after ','"));
                            }
                        }
                        _ => return Err(format!("found '{l}', expected: ',' or 'end of string'")),
                    }
                }
                Tok::End => return Ok(requirements),
                _ => {
                    return Err(format!(
                        "found '{lit}', expected: !, identifier, or 'end of string'"
                    ));
                }
            }
        }
    }

    fn parse_requirement(&mut self) -> Result<Requirement, String> {
        let (key, unary) = self.parse_key_and_infer_operator()?;
        if let Some(op) = unary {
            return new_requirement(&key, op, Vec::new(), false);
        }
        let op = self.parse_operator()?;
        let mut values = match op {
            Op::In | Op::NotIn => self.parse_values()?,
            _ => self.parse_exact_value()?,
        };
        values.sort();
        values.dedup();
        new_requirement(&key, op, values, false)
    }

    /// Returns the key and, for `k` / `!k`, the inferred unary operator.
    fn parse_key_and_infer_operator(&mut self) -> Result<(String, Option<Op>), String> {
        let (mut tok, mut lit) = self.consume(true);
        let negated = tok == Tok::DoesNotExist;
        if negated {
            (tok, lit) = self.consume(true);
        }
        if tok != Tok::Identifier {
            return Err(format!("found '{lit}', expected: identifier"));
        }
        if let Some(e) = validate_label_key(&lit, "<nil>") {
            return Err(e);
        }
        let (next, _) = self.lookahead(true);
        let unary = if negated {
            Some(Op::DoesNotExist)
        } else if matches!(next, Tok::End | Tok::Comma) {
            Some(Op::Exists)
        } else {
            None
        };
        Ok((lit, unary))
    }

    fn parse_operator(&mut self) -> Result<Op, String> {
        let (tok, lit) = self.consume(false);
        Ok(match tok {
            Tok::In => Op::In,
            Tok::Equals => Op::Equals,
            Tok::DoubleEquals => Op::DoubleEquals,
            Tok::GreaterThan => Op::GreaterThan,
            Tok::LessThan => Op::LessThan,
            Tok::NotIn => Op::NotIn,
            Tok::NotEquals => Op::NotEquals,
            _ => return Err(format!("found '{lit}', expected: {BINARY_OPERATORS}")),
        })
    }

    fn parse_values(&mut self) -> Result<Vec<String>, String> {
        let (tok, lit) = self.consume(true);
        if tok != Tok::OpenPar {
            return Err(format!("found '{lit}' expected: '('"));
        }
        let (tok, lit) = self.lookahead(true);
        match tok {
            Tok::Identifier | Tok::Comma => {
                let values = self.parse_identifiers_list()?;
                let (closing, _) = self.consume(true);
                if closing != Tok::ClosedPar {
                    return Err(format!("found '{lit}', expected: ')'"));
                }
                Ok(values)
            }
            Tok::ClosedPar => {
                self.consume(true);
                Ok(vec![String::new()])
            }
            _ => Err(format!("found '{lit}', expected: ',', ')' or identifier")),
        }
    }

    fn parse_identifiers_list(&mut self) -> Result<Vec<String>, String> {
        let mut values: Vec<String> = Vec::new();
        loop {
            let (tok, lit) = self.consume(true);
            match tok {
                Tok::Identifier => {
                    values.push(lit);
                    let (next, next_lit) = self.lookahead(true);
                    match next {
                        Tok::Comma => continue,
                        Tok::ClosedPar => return Ok(values),
                        _ => return Err(format!("found '{next_lit}', expected: ',' or ')'")),
                    }
                }
                Tok::Comma => {
                    if values.is_empty() {
                        values.push(String::new());
                    }
                    let (next, _) = self.lookahead(true);
                    if next == Tok::ClosedPar {
                        values.push(String::new());
                        return Ok(values);
                    }
                    if next == Tok::Comma {
                        values.push(String::new());
                    }
                }
                _ => return Err(format!("found '{lit}', expected: ',', or identifier")),
            }
        }
    }

    fn parse_exact_value(&mut self) -> Result<Vec<String>, String> {
        let (tok, _) = self.lookahead(true);
        if matches!(tok, Tok::End | Tok::Comma) {
            return Ok(vec![String::new()]);
        }
        let (tok, lit) = self.consume(true);
        if tok == Tok::Identifier {
            Ok(vec![lit])
        } else {
            Err(format!("found '{lit}', expected: identifier"))
        }
    }
}

// ---------------------------------------------------------------------------
// Label formatting helpers used by the table printers
// ---------------------------------------------------------------------------

/// `metav1.FormatLabelSelector`: the selector string, `<none>` when it is empty
/// (or null), `<error>` when it does not convert.
pub fn format_label_selector(sel: &Value) -> String {
    match LabelSelector::from_label_selector(sel) {
        Ok(s) => {
            let text = s.to_string();
            if text.is_empty() {
                "<none>".to_string()
            } else {
                text
            }
        }
        Err(_) => "<error>".to_string(),
    }
}

/// `LabelSelectorAsSelector(sel).String()` (empty selector -> ""), or `<invalid>`
/// when the selector does not convert, as the Deployment printer shows it.
pub fn label_selector_string(sel: &Value) -> String {
    match LabelSelector::from_label_selector(sel) {
        Ok(s) => s.to_string(),
        Err(_) => "<invalid>".to_string(),
    }
}

/// `labels.FormatLabels`: `k=v` pairs sorted as strings, joined by `,`; `<none>` when empty.
pub fn format_labels(labels: Option<&Map<String, Value>>) -> String {
    let mut pairs: Vec<String> = labels
        .into_iter()
        .flatten()
        .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
        .collect();
    if pairs.is_empty() {
        return "<none>".to_string();
    }
    pairs.sort();
    pairs.join(",")
}

// ---------------------------------------------------------------------------
// Field selector
// ---------------------------------------------------------------------------

#[derive(Clone, Debug, PartialEq, Eq)]
struct FieldTerm {
    field: String,
    value: String,
    negated: bool,
}

/// A parsed field selector: a conjunction of `field=value` / `field!=value` terms.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FieldSelector {
    terms: Vec<FieldTerm>,
}

impl FieldSelector {
    /// Parses the `fieldSelector` query syntax (`fields.ParseSelector`).
    pub fn parse(s: &str) -> Result<Self, String> {
        let mut parts = split_terms(s);
        parts.sort();
        let mut terms = Vec::new();
        for part in parts.iter().filter(|p| !p.is_empty()) {
            let Some((field, op, raw)) = split_term(part) else {
                return Err(format!("invalid selector: '{s}'; can't understand '{part}'"));
            };
            let value = unescape_field_value(raw)?;
            terms.push(FieldTerm {
                field: field.to_string(),
                value,
                negated: op == "!=",
            });
        }
        Ok(Self { terms })
    }

    /// Whether every term holds; `get` returns a field's value (absent means "").
    pub fn matches(&self, get: impl Fn(&str) -> Option<String>) -> bool {
        self.terms.iter().all(|t| {
            let actual = get(&t.field).unwrap_or_default();
            (actual == t.value) != t.negated
        })
    }

    /// The field names the selector uses, in selector order.
    pub fn fields(&self) -> Vec<&str> {
        self.terms.iter().map(|t| t.field.as_str()).collect()
    }

    /// True when the selector has no terms.
    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }

    /// The value a term requires with `=`/`==` (`RequiresExactMatch`), if any.
    pub fn requires_exact_match(&self, field: &str) -> Option<&str> {
        self.terms
            .iter()
            .find(|t| t.field == field && !t.negated)
            .map(|t| t.value.as_str())
    }
}

impl fmt::Display for FieldSelector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, t) in self.terms.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            let op = if t.negated { "!=" } else { "=" };
            write!(f, "{}{op}{}", t.field, escape_field_value(&t.value))?;
        }
        Ok(())
    }
}

/// Splits on commas not preceded by a backslash escape (escapes are kept).
fn split_terms(s: &str) -> Vec<&str> {
    if s.is_empty() {
        return Vec::new();
    }
    let mut terms = Vec::new();
    let mut start = 0;
    let mut in_slash = false;
    for (i, c) in s.char_indices() {
        if in_slash {
            in_slash = false;
        } else if c == '\\' {
            in_slash = true;
        } else if c == ',' {
            terms.push(&s[start..i]);
            start = i + 1;
        }
    }
    terms.push(&s[start..]);
    terms
}

/// Splits at the first operator (`!=`, `==`, then `=`) found scanning left to right.
fn split_term(term: &str) -> Option<(&str, &'static str, &str)> {
    for (i, _) in term.char_indices() {
        let rest = &term[i..];
        for op in ["!=", "==", "="] {
            if let Some(value) = rest.strip_prefix(op) {
                return Some((&term[..i], op, value));
            }
        }
    }
    None
}

/// `fields.UnescapeValue`.
fn unescape_field_value(s: &str) -> Result<String, String> {
    if !s.contains(['\\', ',', '=']) {
        return Ok(s.to_string());
    }
    let mut out = String::with_capacity(s.len());
    let mut in_slash = false;
    for c in s.chars() {
        if in_slash {
            if !matches!(c, '\\' | ',' | '=') {
                return Err(format!("invalid field selector: invalid escape sequence: \\{c}"));
            }
            out.push(c);
            in_slash = false;
            continue;
        }
        match c {
            '\\' => in_slash = true,
            ',' | '=' => {
                return Err(format!(
                    "invalid field selector: unescaped character in value: {}",
                    c as u32
                ));
            }
            c => out.push(c),
        }
    }
    if in_slash {
        return Err("invalid field selector: invalid escape sequence: \\".to_string());
    }
    Ok(out)
}

/// `fields.EscapeValue`.
fn escape_field_value(s: &str) -> String {
    s.replace('\\', "\\\\").replace(',', "\\,").replace('=', "\\=")
}

// ---------------------------------------------------------------------------
// Selectable fields per kind
// ---------------------------------------------------------------------------

/// The value of field label `field` on `obj` (a v1 JSON object of `group`/`kind`).
///
/// `Err` carries upstream's text for an unsupported label: "field label not supported: X"
/// for kinds with their own conversion function, the default metav1 message otherwise.
/// `Ok(None)` is a supported label absent from the selectable set (it compares as "").
pub fn field_value(group: &str, kind: &str, obj: &Value, field: &str) -> Result<Option<String>, String> {
    let unsupported = || Err(format!("field label not supported: {field}"));
    let value = match (group, kind) {
        ("", "Pod") => match pod_field(obj, field) {
            Some(v) => v,
            None => return unsupported(),
        },
        ("", "Node") => match field {
            "metadata.name" => meta_str(obj, "name"),
            "spec.unschedulable" => Some(bool_at(obj, &["spec", "unschedulable"]).to_string()),
            _ => return unsupported(),
        },
        ("", "Namespace") => match field {
            "metadata.name" => meta_str(obj, "name"),
            "status.phase" => Some(str_at(obj, &["status", "phase"])),
            _ => return unsupported(),
        },
        ("", "Event") => match core_event_field(obj, field) {
            Some(v) => v,
            None => return unsupported(),
        },
        ("events.k8s.io", "Event") => match events_event_field(obj, field) {
            Some(v) => v,
            None => return unsupported(),
        },
        ("", "Secret") => match field {
            "type" => Some(str_at(obj, &["type"])),
            _ => return meta_field_or(obj, field, unsupported),
        },
        ("", "Service") => match field {
            "spec.clusterIP" => Some(str_at(obj, &["spec", "clusterIP"])),
            "spec.type" => Some(str_at(obj, &["spec", "type"])),
            _ => return meta_field_or(obj, field, unsupported),
        },
        ("", "ReplicationController") | ("apps", "ReplicaSet") => match field {
            "status.replicas" => Some(int_at(obj, &["status", "replicas"]).to_string()),
            _ => return meta_field_or(obj, field, unsupported),
        },
        ("batch", "Job") => match field {
            "status.successful" => Some(int_at(obj, &["status", "succeeded"]).to_string()),
            _ => return meta_field_or(obj, field, unsupported),
        },
        ("certificates.k8s.io", "CertificateSigningRequest") => match field {
            "metadata.name" => meta_str(obj, "name"),
            "spec.signerName" => Some(str_at(obj, &["spec", "signerName"])),
            _ => return unsupported(),
        },
        _ => {
            return meta_field_or(obj, field, || {
                Err(format!(
                    "\"{field}\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\""
                ))
            });
        }
    };
    Ok(value)
}

fn meta_field_or(
    obj: &Value,
    field: &str,
    otherwise: impl FnOnce() -> Result<Option<String>, String>,
) -> Result<Option<String>, String> {
    match field {
        "metadata.name" => Ok(meta_str(obj, "name")),
        "metadata.namespace" => Ok(meta_str(obj, "namespace")),
        _ => otherwise(),
    }
}

/// Pod field labels; the outer `None` means "not supported".
fn pod_field(obj: &Value, field: &str) -> Option<Option<String>> {
    let spec = |k: &str| Some(str_at(obj, &["spec", k]));
    Some(match field {
        "metadata.name" => meta_str(obj, "name"),
        "metadata.namespace" => meta_str(obj, "namespace"),
        "spec.nodeName" | "spec.host" => spec("nodeName"),
        "spec.restartPolicy" => spec("restartPolicy"),
        "spec.schedulerName" => spec("schedulerName"),
        "spec.serviceAccountName" => spec("serviceAccountName"),
        "spec.hostNetwork" => Some(bool_at(obj, &["spec", "hostNetwork"]).to_string()),
        "status.phase" => Some(str_at(obj, &["status", "phase"])),
        "status.podIP" => Some(pod_ip(obj)),
        "status.nominatedNodeName" => Some(str_at(obj, &["status", "nominatedNodeName"])),
        // Accepted by the conversion function but absent from the selectable set.
        "status.podIPs" => None,
        _ => return None,
    })
}

/// The pod's primary IP as the internal type sees it: `status.podIP` wins over `podIPs[0]`.
pub(crate) fn pod_ip(obj: &Value) -> String {
    let ip = str_at(obj, &["status", "podIP"]);
    if !ip.is_empty() {
        return ip;
    }
    obj.pointer("/status/podIPs/0/ip")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

fn core_event_field(obj: &Value, field: &str) -> Option<Option<String>> {
    let involved = |k: &str| Some(str_at(obj, &["involvedObject", k]));
    Some(match field {
        "metadata.name" => meta_str(obj, "name"),
        "metadata.namespace" => meta_str(obj, "namespace"),
        "involvedObject.kind" => involved("kind"),
        "involvedObject.namespace" => involved("namespace"),
        "involvedObject.name" => involved("name"),
        "involvedObject.uid" => involved("uid"),
        "involvedObject.apiVersion" => involved("apiVersion"),
        "involvedObject.resourceVersion" => involved("resourceVersion"),
        "involvedObject.fieldPath" => involved("fieldPath"),
        "reason" => Some(str_at(obj, &["reason"])),
        "reportingComponent" => Some(str_at(obj, &["reportingComponent"])),
        "type" => Some(str_at(obj, &["type"])),
        "source" => Some(first_non_empty(
            str_at(obj, &["source", "component"]),
            str_at(obj, &["reportingComponent"]),
        )),
        _ => return None,
    })
}

/// events.k8s.io/v1 labels are mapped onto the core field set, read from the v1 names.
fn events_event_field(obj: &Value, field: &str) -> Option<Option<String>> {
    let regarding = |k: &str| Some(str_at(obj, &["regarding", k]));
    Some(match field {
        "metadata.name" => meta_str(obj, "name"),
        "metadata.namespace" => meta_str(obj, "namespace"),
        "regarding.kind" => regarding("kind"),
        "regarding.namespace" => regarding("namespace"),
        "regarding.name" => regarding("name"),
        "regarding.uid" => regarding("uid"),
        "regarding.apiVersion" => regarding("apiVersion"),
        "regarding.resourceVersion" => regarding("resourceVersion"),
        "regarding.fieldPath" => regarding("fieldPath"),
        "reason" => Some(str_at(obj, &["reason"])),
        "reportingController" => Some(str_at(obj, &["reportingController"])),
        "type" => Some(str_at(obj, &["type"])),
        "source" => Some(first_non_empty(
            str_at(obj, &["deprecatedSource", "component"]),
            str_at(obj, &["reportingController"]),
        )),
        _ => return None,
    })
}

fn first_non_empty(a: String, b: String) -> String {
    if a.is_empty() { b } else { a }
}

fn meta_str(obj: &Value, key: &str) -> Option<String> {
    Some(str_at(obj, &["metadata", key]))
}

fn at<'a>(obj: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(obj, |v, k| v.get(k))
}

fn str_at(obj: &Value, path: &[&str]) -> String {
    at(obj, path)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

fn bool_at(obj: &Value, path: &[&str]) -> bool {
    at(obj, path).and_then(Value::as_bool).unwrap_or(false)
}

fn int_at(obj: &Value, path: &[&str]) -> i64 {
    at(obj, path).and_then(Value::as_i64).unwrap_or(0)
}

// ---------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn labels(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    fn matches(sel: &str, set: Value) -> bool {
        LabelSelector::parse(sel)
            .unwrap_or_else(|e| panic!("{sel}: {e}"))
            .matches(Some(&labels(set)))
    }

    #[test]
    fn parse_good_strings_round_trip() {
        for s in [
            "x=a,y=b,z=c",
            "",
            "x!=a,y=b",
            "x=",
            "x= ",
            "x=,z= ",
            "x= ,z= ",
            "!x",
            "x>1",
            "x>1,z<5",
        ] {
            let sel = LabelSelector::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"));
            assert_eq!(sel.to_string(), s.replace(' ', ""), "{s}");
        }
    }

    #[test]
    fn parse_bad_strings() {
        for s in ["x=a||y=b", "x==a==b", "!x=a", "x<a"] {
            assert!(LabelSelector::parse(s).is_err(), "{s}");
        }
    }

    #[test]
    fn deterministic_parse() {
        let a = LabelSelector::parse("x=a,a=x").unwrap();
        let b = LabelSelector::parse("a=x,x=a").unwrap();
        assert_eq!(a.to_string(), b.to_string());
        assert_eq!(a.to_string(), "a=x,x=a");
    }

    #[test]
    fn selector_matches() {
        assert!(matches("", json!({"x": "y"})));
        assert!(matches("x=y", json!({"x": "y"})));
        assert!(matches("x=y,z=w", json!({"x": "y", "z": "w"})));
        assert!(matches("x!=y,z!=w", json!({"x": "z", "z": "a"})));
        assert!(matches("notin=in", json!({"notin": "in"})));
        assert!(matches("x", json!({"x": "z"})));
        assert!(matches("!x", json!({"y": "z"})));
        assert!(matches("x>1", json!({"x": "2"})));
        assert!(matches("x<1", json!({"x": "0"})));
        assert!(!matches("x=z", json!({})));
        assert!(!matches("x=y", json!({"x": "z"})));
        assert!(!matches("x=y,z=w", json!({"x": "w", "z": "w"})));
        assert!(!matches("x!=y,z!=w", json!({"x": "z", "z": "w"})));
        assert!(!matches("x", json!({"y": "z"})));
        assert!(!matches("!x", json!({"x": "z"})));
        assert!(!matches("x>1", json!({"x": "0"})));
        assert!(!matches("x<1", json!({"x": "2"})));
        assert!(!matches("z>1", json!({"z": "v2"})));
        let set = json!({"foo": "bar", "baz": "blah"});
        assert!(matches("foo=bar", set.clone()));
        assert!(matches("baz=blah", set.clone()));
        assert!(matches("foo=bar,baz=blah", set.clone()));
        assert!(!matches("foo=blah", set.clone()));
        assert!(!matches("baz=bar", set.clone()));
        assert!(!matches("foo=bar,foobar=bar,baz=blah", set));
    }

    #[test]
    fn set_based_matching() {
        assert!(matches(
            "x in (foo),y notin (alpha)",
            json!({"x": "foo", "y": "baz"})
        ));
        assert!(!matches(
            "x in (foo),y in (alpha)",
            json!({"x": "foo", "y": "baz"})
        ));
        assert!(matches("x notin (),y", json!({"y": ""})));
        assert!(matches("!x,y", json!({"y": ""})));
        assert!(!matches("x notin (),!y", json!({"y": ""})));
        assert!(!matches("x in ()", json!({"y": "baz"})));
        // No labels at all.
        let sel = LabelSelector::parse("!a,b notin (c)").unwrap();
        assert!(sel.matches(None));
        assert!(!LabelSelector::parse("a").unwrap().matches(None));
    }

    #[test]
    fn set_selector_parser_valid() {
        let cases = [
            ("", ""),
            ("\rx", "x"),
            (
                "this-is-a-dns.domain.com/key-with-dash",
                "this-is-a-dns.domain.com/key-with-dash",
            ),
            (
                "this-is-another-dns.domain.com/key-with-dash in (so,what)",
                "this-is-another-dns.domain.com/key-with-dash in (so,what)",
            ),
            (
                "0.1.2.domain/99 notin (10.10.100.1, tick.tack.clock)",
                "0.1.2.domain/99 notin (10.10.100.1,tick.tack.clock)",
            ),
            ("foo  in\t (abc)", "foo in (abc)"),
            ("x notin\n (abc)", "x notin (abc)"),
            ("x  notin\t\t\t(abc,def)", "x notin (abc,def)"),
            ("x in (abc,def)", "x in (abc,def)"),
            ("x in (abc,)", "x in (,abc)"),
            ("x in ()", "x in ()"),
            (
                "x notin (abc,,def),bar,z in (),w",
                "bar,w,x notin (,abc,def),z in ()",
            ),
            ("x,y in (a)", "x,y in (a)"),
            ("x=a", "x=a"),
            ("x>1", "x>1"),
            ("x<7", "x<7"),
            ("x=a,y!=b", "x=a,y!=b"),
            ("x=a,y!=b,z in (h,i,j)", "x=a,y!=b,z in (h,i,j)"),
            ("x notin ( )", "x notin ()"),
            ("x notin (, a)", "x notin (,a)"),
            ("a ", "a"),
            ("a in (x,y,notin, z,in)", "a in (in,notin,x,y,z)"),
        ];
        for (input, want) in cases {
            let sel = LabelSelector::parse(input).unwrap_or_else(|e| panic!("{input:?}: {e}"));
            assert_eq!(sel.to_string(), want, "{input:?}");
        }
    }

    #[test]
    fn set_selector_parser_invalid() {
        for s in [
            "x=a||y=b",
            "x,,y",
            ",x,y",
            "x nott in (y)",
            "a in (xyz),",
            "a in (xyz)b notin ()",
            "a in (xyz abc)",
            "a notin(",
            "a (",
            "(",
        ] {
            assert!(LabelSelector::parse(s).is_err(), "{s:?} should fail");
        }
        assert_eq!(LabelSelector::parse("y,x").unwrap().to_string(), "x,y");
    }

    #[test]
    fn error_messages_match_upstream() {
        let err = |s: &str| LabelSelector::parse(s).unwrap_err();
        assert_eq!(
            err("a in (xyz abc)"),
            "unable to parse requirement: found 'abc', expected: ',' or ')'"
        );
        assert_eq!(err("("), "found '(', expected: !, identifier, or 'end of string'");
        assert_eq!(err("a in (xyz),"), "found '', expected: identifier after ','");
        assert_eq!(
            err("a b"),
            "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"
        );
        assert_eq!(
            err("a in (xyz)b notin ()"),
            "found 'b', expected: ',' or 'end of string'"
        );
        assert_eq!(
            err("x<a"),
            "unable to parse requirement: values[0]: Invalid value: \"a\": for 'Gt', 'Lt' operators, the value must be an integer"
        );
        assert_eq!(
            err("a@b=c"),
            "unable to parse requirement: <nil>: Invalid value: \"a@b\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
        );
        assert_eq!(
            err("a=b@c"),
            "unable to parse requirement: values[0][a]: Invalid value: \"b@c\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
        );
        assert!(err("Foo.com/a=b").contains("prefix part a lowercase RFC 1123 subdomain"));
        assert!(err("/a").contains("prefix part must be non-empty"));
        assert!(err(&"a".repeat(64)).contains("name part must be no more than 63 characters"));
    }

    #[test]
    fn values_are_sorted_and_deduplicated() {
        let sel = LabelSelector::parse("x in (b,a,b)").unwrap();
        assert_eq!(sel.to_string(), "x in (a,b)");
    }

    #[test]
    fn from_label_selector_conversion() {
        let sel = LabelSelector::from_label_selector(&json!({
            "matchLabels": {"app": "web", "tier": "fe"},
            "matchExpressions": [
                {"key": "env", "operator": "In", "values": ["prod", "dev"]},
                {"key": "zone", "operator": "DoesNotExist"},
                {"key": "canary", "operator": "Exists"},
                {"key": "team", "operator": "NotIn", "values": ["x"]}
            ]
        }))
        .unwrap();
        assert_eq!(
            sel.to_string(),
            "app=web,canary,env in (dev,prod),team notin (x),tier=fe,!zone"
        );
        assert!(sel.matches(Some(&labels(
            json!({"app": "web", "tier": "fe", "env": "dev", "canary": ""})
        ))));
        assert!(!sel.matches(Some(&labels(json!({"app": "web", "tier": "fe", "env": "dev"})))));

        let everything = LabelSelector::from_label_selector(&json!({})).unwrap();
        assert!(everything.is_empty());
        assert!(everything.matches(None));
        let nothing = LabelSelector::from_label_selector(&Value::Null).unwrap();
        assert!(!nothing.is_empty());
        assert!(!nothing.matches(Some(&labels(json!({"a": "b"})))));
    }

    #[test]
    fn from_label_selector_errors() {
        let bad_op = json!({"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["1"]}]});
        assert_eq!(
            LabelSelector::from_label_selector(&bad_op).unwrap_err(),
            "\"Gt\" is not a valid label selector operator"
        );
        let empty_in = json!({"matchExpressions": [{"key": "a", "operator": "In"}]});
        assert_eq!(
            LabelSelector::from_label_selector(&empty_in).unwrap_err(),
            "values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't be empty"
        );
        let exists_vals = json!({"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]});
        assert_eq!(
            LabelSelector::from_label_selector(&exists_vals).unwrap_err(),
            "values: Invalid value: []string{\"x\"}: values set must be empty for exists and does not exist"
        );
        assert_eq!(format_label_selector(&bad_op), "<error>");
        assert_eq!(label_selector_string(&bad_op), "<invalid>");
    }

    #[test]
    fn formatting_helpers() {
        assert_eq!(format_label_selector(&Value::Null), "<none>");
        assert_eq!(format_label_selector(&json!({})), "<none>");
        assert_eq!(
            format_label_selector(&json!({"matchLabels": {"app": "web"}})),
            "app=web"
        );
        assert_eq!(label_selector_string(&json!({})), "");
        assert_eq!(
            label_selector_string(&json!({"matchLabels": {"b": "1", "a": "2"}})),
            "a=2,b=1"
        );
        assert_eq!(format_labels(None), "<none>");
        assert_eq!(format_labels(Some(&Map::new())), "<none>");
        // Sorted as "k=v" strings, like labels.Set.String(): "a.b=2" < "a=1".
        assert_eq!(
            format_labels(Some(&labels(json!({"a": "1", "a.b": "2"})))),
            "a.b=2,a=1"
        );
    }

    #[test]
    fn field_selector_parse_and_match() {
        let sel = FieldSelector::parse("status.phase=Running,spec.nodeName!=n1,metadata.name==x").unwrap();
        assert_eq!(
            sel.fields(),
            vec!["metadata.name", "spec.nodeName", "status.phase"]
        );
        assert_eq!(
            sel.to_string(),
            "metadata.name=x,spec.nodeName!=n1,status.phase=Running"
        );
        let get = |f: &str| match f {
            "metadata.name" => Some("x".to_string()),
            "status.phase" => Some("Running".to_string()),
            _ => None,
        };
        assert!(sel.matches(get));
        assert_eq!(sel.requires_exact_match("metadata.name"), Some("x"));
        assert!(FieldSelector::parse("").unwrap().is_empty());
        assert!(FieldSelector::parse(",,").unwrap().is_empty());
        assert!(FieldSelector::parse("a=").unwrap().matches(|_| None));
    }

    #[test]
    fn field_selector_escaping() {
        let sel = FieldSelector::parse(r"a=x\,y\=z\\w,b!=c").unwrap();
        assert!(sel.matches(|f| (f == "a").then(|| r"x,y=z\w".to_string())));
        assert_eq!(sel.to_string(), r"a=x\,y\=z\\w,b!=c");
        assert_eq!(
            FieldSelector::parse("a").unwrap_err(),
            "invalid selector: 'a'; can't understand 'a'"
        );
        assert_eq!(
            FieldSelector::parse("a=b=c").unwrap_err(),
            "invalid field selector: unescaped character in value: 61"
        );
        assert_eq!(
            FieldSelector::parse(r"a=b\n").unwrap_err(),
            r"invalid field selector: invalid escape sequence: \n"
        );
        assert_eq!(
            FieldSelector::parse(r"a=b\").unwrap_err(),
            r"invalid field selector: invalid escape sequence: \"
        );
        // `!=` is found before `=`; `==` before `=`.
        let sel = FieldSelector::parse("a==b").unwrap();
        assert!(sel.matches(|_| Some("b".to_string())));
    }

    #[test]
    fn field_values_per_kind() {
        let pod = json!({
            "metadata": {"name": "p", "namespace": "ns"},
            "spec": {"nodeName": "n1", "restartPolicy": "Always", "schedulerName": "default-scheduler",
                     "serviceAccountName": "default"},
            "status": {"phase": "Running", "podIPs": [{"ip": "10.0.0.7"}]}
        });
        let f = |field: &str| field_value("", "Pod", &pod, field);
        assert_eq!(f("metadata.namespace"), Ok(Some("ns".into())));
        assert_eq!(f("spec.nodeName"), Ok(Some("n1".into())));
        assert_eq!(f("spec.host"), Ok(Some("n1".into())));
        assert_eq!(f("spec.hostNetwork"), Ok(Some("false".into())));
        assert_eq!(f("status.podIP"), Ok(Some("10.0.0.7".into())));
        assert_eq!(f("status.podIPs"), Ok(None));
        assert_eq!(
            f("spec.containers"),
            Err("field label not supported: spec.containers".into())
        );

        let node = json!({"metadata": {"name": "n"}, "spec": {"unschedulable": true}});
        assert_eq!(
            field_value("", "Node", &node, "spec.unschedulable"),
            Ok(Some("true".into()))
        );
        assert!(field_value("", "Node", &node, "metadata.namespace").is_err());

        let ev = json!({"metadata": {"name": "e"}, "involvedObject": {"kind": "Pod", "name": "p"},
                        "reportingComponent": "kubelet", "type": "Normal"});
        assert_eq!(
            field_value("", "Event", &ev, "involvedObject.kind"),
            Ok(Some("Pod".into()))
        );
        assert_eq!(
            field_value("", "Event", &ev, "source"),
            Ok(Some("kubelet".into()))
        );
        let ev2 = json!({"regarding": {"kind": "Pod"}, "reportingController": "c"});
        assert_eq!(
            field_value("events.k8s.io", "Event", &ev2, "regarding.kind"),
            Ok(Some("Pod".into()))
        );
        assert_eq!(
            field_value("events.k8s.io", "Event", &ev2, "source"),
            Ok(Some("c".into()))
        );
        assert!(field_value("events.k8s.io", "Event", &ev2, "involvedObject.kind").is_err());

        let job = json!({"status": {"succeeded": 3}});
        assert_eq!(
            field_value("batch", "Job", &job, "status.successful"),
            Ok(Some("3".into()))
        );
        let rs = json!({"status": {}});
        assert_eq!(
            field_value("apps", "ReplicaSet", &rs, "status.replicas"),
            Ok(Some("0".into()))
        );
        let secret = json!({"type": "Opaque", "metadata": {"namespace": "d"}});
        assert_eq!(
            field_value("", "Secret", &secret, "type"),
            Ok(Some("Opaque".into()))
        );
        assert_eq!(
            field_value("", "Secret", &secret, "metadata.namespace"),
            Ok(Some("d".into()))
        );
        let svc = json!({"spec": {"type": "ClusterIP", "clusterIP": "10.96.0.1"}});
        assert_eq!(
            field_value("", "Service", &svc, "spec.clusterIP"),
            Ok(Some("10.96.0.1".into()))
        );
        let ns = json!({"status": {"phase": "Active"}});
        assert_eq!(
            field_value("", "Namespace", &ns, "status.phase"),
            Ok(Some("Active".into()))
        );

        let cm = json!({"metadata": {"name": "c", "namespace": "d"}});
        assert_eq!(
            field_value("", "ConfigMap", &cm, "metadata.name"),
            Ok(Some("c".into()))
        );
        assert_eq!(
            field_value("apps", "Deployment", &cm, "spec.replicas"),
            Err("\"spec.replicas\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\"".into())
        );
    }

    #[test]
    fn field_selector_against_object() {
        let pod = json!({"metadata": {"name": "p"}, "status": {"phase": "Running"}});
        let sel = FieldSelector::parse("status.phase=Running,metadata.name!=q").unwrap();
        for f in sel.fields() {
            assert!(field_value("", "Pod", &pod, f).is_ok());
        }
        assert!(sel.matches(|f| field_value("", "Pod", &pod, f).ok().flatten()));
    }
}
