//! Label selectors: one [`Selector`] for lists, watches, validation and
//! controllers, built from query text, from a JSON `metav1.LabelSelector`, or
//! from the typed `k8s_openapi` `LabelSelector`.
//!
//! Upstream:
//! * `staging/src/k8s.io/apimachinery/pkg/labels/selector.go`: `Selector`,
//!   `Everything`, `Nothing`, `Parse`, `Matches`, `Empty`, `String`;
//! * `staging/src/k8s.io/apimachinery/pkg/labels/labels.go`: the `Labels`
//!   interface and `Set.String()` / `FormatLabels` ([`format_labels`]);
//! * `staging/src/k8s.io/apimachinery/pkg/apis/meta/v1/helpers.go`:
//!   `LabelSelectorAsSelector` ([`Selector::from_json`], [`Selector::from_typed`])
//!   and `FormatLabelSelector` ([`format_label_selector`]).
//!
//! Semantics pinned by the tests: a nil `metav1.LabelSelector` selects
//! nothing, `{}` selects everything; `In`/`NotIn` without values is an error
//! when converting a `metav1.LabelSelector`, while the query text `k notin ()`
//! means "not the empty value"; a `NotIn` or `!=` requirement is satisfied
//! by an absent key.
//!
//! Simplified: no `Requirements()` introspection, `RequiresExactMatch`,
//! `Add` or the `Transform` hook; errors are plain strings with upstream text.

mod lex;
mod parse;
mod requirement;
#[cfg(test)]
mod tests;
pub mod validation;

use std::collections::BTreeMap;
use std::fmt;

use k8s_openapi::apimachinery::pkg::apis::meta::v1 as metav1;
use serde_json::{Map, Value};

use requirement::{Op, Requirement};

/// A label set a selector can be matched against (upstream `labels.Labels`).
pub trait Labels {
    /// The value of label `key`, `None` when the label is absent.
    fn get(&self, key: &str) -> Option<&str>;
}

impl Labels for BTreeMap<String, String> {
    fn get(&self, key: &str) -> Option<&str> {
        BTreeMap::get(self, key).map(String::as_str)
    }
}

/// A JSON `metadata.labels` map; a non-string value counts as absent.
impl Labels for Map<String, Value> {
    fn get(&self, key: &str) -> Option<&str> {
        Map::get(self, key).and_then(Value::as_str)
    }
}

/// A JSON value that should be a labels object; anything else has no labels.
impl Labels for Value {
    fn get(&self, key: &str) -> Option<&str> {
        self.as_object().and_then(|m| Labels::get(m, key))
    }
}

/// Absent labels: the empty set.
impl<L: Labels + ?Sized> Labels for Option<&L> {
    fn get(&self, key: &str) -> Option<&str> {
        self.and_then(|l| l.get(key))
    }
}

/// A label selector: a conjunction of requirements sorted by key, or the
/// selector that matches nothing.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Selector {
    requirements: Vec<Requirement>,
    nothing: bool,
}

impl Selector {
    /// `labels.Everything()`: selects every object (also `Selector::default()`).
    pub fn everything() -> Self {
        Self::default()
    }

    /// `labels.Nothing()`: selects no object at all.
    pub fn nothing() -> Self {
        Self {
            requirements: Vec::new(),
            nothing: true,
        }
    }

    /// Parses the `labelSelector` query syntax (`labels.Parse`).
    pub fn parse(s: &str) -> Result<Self, String> {
        Ok(Self::from_requirements(parse::parse(s)?))
    }

    /// `LabelSelectorAsSelector` of a JSON `metav1.LabelSelector`: null (or any
    /// non-object) selects nothing, `{}` selects everything.
    pub fn from_json(sel: &Value) -> Result<Self, String> {
        let Some(obj) = sel.as_object() else {
            return Ok(Self::nothing());
        };
        let match_labels = obj.get("matchLabels").and_then(Value::as_object);
        let labels = match_labels.into_iter().flatten();
        let labels = labels.map(|(k, v)| (k.as_str(), v.as_str().unwrap_or_default()));
        let exprs = obj.get("matchExpressions").and_then(Value::as_array);
        let exprs = exprs.into_iter().flatten().map(|e| {
            let s = |k: &str| e.get(k).and_then(Value::as_str).unwrap_or_default();
            let values = e.get("values").and_then(Value::as_array).into_iter().flatten();
            let values = values.map(|v| v.as_str().unwrap_or_default().to_string());
            (s("key"), s("operator"), values.collect())
        });
        Self::from_label_selector(labels, exprs)
    }

    /// `LabelSelectorAsSelector` of a typed `metav1.LabelSelector`: `None`
    /// selects nothing, an empty selector selects everything.
    pub fn from_typed(sel: Option<&metav1::LabelSelector>) -> Result<Self, String> {
        let Some(sel) = sel else {
            return Ok(Self::nothing());
        };
        let labels = sel.match_labels.iter().flatten();
        let labels = labels.map(|(k, v)| (k.as_str(), v.as_str()));
        let exprs = sel.match_expressions.iter().flatten().map(|e| {
            let values = e.values.clone().unwrap_or_default();
            (e.key.as_str(), e.operator.as_str(), values)
        });
        Self::from_label_selector(labels, exprs)
    }

    /// The shared body of `LabelSelectorAsSelector`: `matchLabels` become `=`
    /// requirements, `matchExpressions` set-based ones; the first error wins.
    fn from_label_selector<'a>(
        labels: impl Iterator<Item = (&'a str, &'a str)>,
        exprs: impl Iterator<Item = (&'a str, &'a str, Vec<String>)>,
    ) -> Result<Self, String> {
        let mut requirements = Vec::new();
        for (key, value) in labels {
            requirements.push(Requirement::new(key, Op::Equals, vec![value.to_string()], false)?);
        }
        for (key, operator, values) in exprs {
            let op = Op::from_label_selector(operator)?;
            // `append([]string(nil), values...)` stays nil when there are no values.
            let nil = values.is_empty();
            requirements.push(Requirement::new(key, op, values, nil)?);
        }
        Ok(Self::from_requirements(requirements))
    }

    fn from_requirements(mut requirements: Vec<Requirement>) -> Self {
        requirements.sort_by(|a, b| a.key.cmp(&b.key));
        Self {
            requirements,
            nothing: false,
        }
    }

    /// `Selector.Matches`: whether the labels satisfy every requirement.
    pub fn matches(&self, labels: &(impl Labels + ?Sized)) -> bool {
        !self.nothing && self.requirements.iter().all(|r| r.matches(labels))
    }

    /// `Selector.Empty()`: true when the selector selects everything.
    pub fn is_empty(&self) -> bool {
        !self.nothing && self.requirements.is_empty()
    }
}

impl fmt::Display for Selector {
    /// `Selector.String()`: requirements joined by `,`; empty for everything and nothing.
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

/// `metav1.FormatLabelSelector` of a JSON selector: its string, `<none>` when
/// that is empty (or the selector is null), `<error>` when it does not convert.
pub fn format_label_selector(sel: &Value) -> String {
    match Selector::from_json(sel) {
        Ok(s) if s.to_string().is_empty() => "<none>".to_string(),
        Ok(s) => s.to_string(),
        Err(_) => "<error>".to_string(),
    }
}

/// `LabelSelectorAsSelector(sel).String()` (empty selector -> ""), or
/// `<invalid>` when the selector does not convert, as the Deployment printer shows it.
pub fn label_selector_string(sel: &Value) -> String {
    match Selector::from_json(sel) {
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
