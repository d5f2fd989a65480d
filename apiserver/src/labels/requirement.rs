//! One `key op values` term of a label selector: the operators, matching,
//! `String()`, and `NewRequirement`'s validation with upstream error text.
//!
//! Upstream: `staging/src/k8s.io/apimachinery/pkg/labels/selector.go`
//! (`Requirement`, `NewRequirement`, `Matches`, `String`),
//! `staging/src/k8s.io/apimachinery/pkg/selection/operator.go` (the operators)
//! and `staging/src/k8s.io/apimachinery/pkg/util/errors/errors.go`
//! (`NewAggregate(..).Error()`).
//!
//! Simplified: values are kept as a sorted `Vec` rather than a string set; a
//! requirement built with a field path (`WithPath`) is not supported — errors
//! always carry the nil path, as `labels.Parse` and `LabelSelectorAsSelector` do.

use std::fmt;

use super::Labels;
use crate::gofmt::{go_quote, go_string_slice};
use crate::validation::{is_qualified_name, is_valid_label_value};

/// A selection operator, as in `k8s.io/apimachinery/pkg/selection`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Op {
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

impl Op {
    /// A `metav1.LabelSelectorRequirement` operator (`In`, `NotIn`, `Exists`, `DoesNotExist`).
    pub(super) fn from_label_selector(operator: &str) -> Result<Op, String> {
        match operator {
            "In" => Ok(Op::In),
            "NotIn" => Ok(Op::NotIn),
            "Exists" => Ok(Op::Exists),
            "DoesNotExist" => Ok(Op::DoesNotExist),
            other => Err(format!(
                "{} is not a valid label selector operator",
                go_quote(other)
            )),
        }
    }
}

/// One term of a selector (`labels.Requirement`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Requirement {
    pub(super) key: String,
    op: Op,
    values: Vec<String>,
}

impl Requirement {
    /// `labels.NewRequirement` with a nil field path. `nil_values` only changes
    /// how an empty value list shows in error text (`[]string(nil)` vs `[]string{}`).
    pub(super) fn new(key: &str, op: Op, values: Vec<String>, nil_values: bool) -> Result<Self, String> {
        let mut errs: Vec<String> = validate_label_key(key, "key").into_iter().collect();
        errs.extend(operator_errors(op, &values, nil_values));
        errs.extend(value_errors(key, &values));
        if !errs.is_empty() {
            return Err(aggregate(errs));
        }
        Ok(Requirement {
            key: key.to_string(),
            op,
            values,
        })
    }

    /// `Requirement.Matches`: a missing key satisfies only `NotIn`, `!=` and `!key`.
    pub(super) fn matches(&self, labels: &(impl Labels + ?Sized)) -> bool {
        let value = labels.get(&self.key);
        let has = |v: &str| self.values.iter().any(|x| x == v);
        match self.op {
            Op::In | Op::Equals | Op::DoubleEquals => value.is_some_and(has),
            Op::NotIn | Op::NotEquals => !value.is_some_and(has),
            Op::Exists => value.is_some(),
            Op::DoesNotExist => value.is_none(),
            Op::GreaterThan | Op::LessThan => self.compare(value),
        }
    }

    /// `Gt` / `Lt`: both sides must be integers, and there is exactly one value.
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
    /// `Requirement.String()`: `k`, `!k`, `k=v`, `k in (a,b)` with sorted values.
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

/// The operator-specific checks of `NewRequirement` (value counts, integer values).
fn operator_errors(op: Op, values: &[String], nil_values: bool) -> Vec<String> {
    let shown = go_string_slice(values, nil_values);
    let invalid = |detail: &str| format!("values: Invalid value: {shown}: {detail}");
    let mut errs = Vec::new();
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
    errs
}

/// Every value must be a valid label value.
fn value_errors(key: &str, values: &[String]) -> Vec<String> {
    let mut errs = Vec::new();
    for (i, v) in values.iter().enumerate() {
        let problems = is_valid_label_value(v);
        if !problems.is_empty() {
            errs.push(format!(
                "values[{i}][{key}]: Invalid value: {}: {}",
                go_quote(v),
                problems.join("; ")
            ));
        }
    }
    errs
}

/// A `field.Invalid` error for a bad label key at `path`, or `None` when the key is valid.
pub(super) fn validate_label_key(key: &str, path: &str) -> Option<String> {
    let problems = is_qualified_name(key);
    if problems.is_empty() {
        return None;
    }
    Some(format!(
        "{path}: Invalid value: {}: {}",
        go_quote(key),
        problems.join("; ")
    ))
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
