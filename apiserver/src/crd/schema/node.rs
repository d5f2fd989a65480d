//! The compiled tree of an `openAPIV3Schema` (upstream
//! `apiextensions-apiserver/pkg/apiserver/schema/structural.go` and
//! `convert.go`: `NewStructural`).
//!
//! A [`Node`] holds what the structural schema knows of one position: its
//! type, `properties` / `additionalProperties` / `items`, the
//! `x-kubernetes-*` extensions, `default`, the value validations
//! (kube-openapi's), and the compiled CEL rules. Children are `Arc`s so the
//! patch metadata ([`crate::patch::meta::Schema`]) can hold a node of a
//! custom resource's schema.
//!
//! Building never fails: problems are reported by [`super::check`], which
//! walks the raw schema beside this tree.

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

use regex::Regex;
use serde_json::{Map, Value};

use super::cel::Rule;

/// `x-kubernetes-list-type`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ListType {
    /// `atomic` (the default for a list without the extension).
    Atomic,
    /// `set`: scalar items, unique.
    Set,
    /// `map`: object items, unique by `x-kubernetes-list-map-keys`.
    Map(Vec<String>),
}

/// `additionalProperties`.
#[derive(Debug)]
pub enum Additional {
    /// `additionalProperties: true`: any value, kept as is.
    Any,
    /// A schema for every value.
    Schema(Arc<Node>),
}

/// A `pattern`, compiled when a value first meets it. A schema can hold
/// hundreds (the Gateway API's do), most of which no object ever fills in,
/// and compiling every one was a good part of the time a CRD took to be
/// created.
#[derive(Debug)]
pub struct Pattern {
    /// As written.
    pub source: String,
    compiled: OnceLock<Option<Regex>>,
}

impl Pattern {
    fn new(source: &str) -> Pattern {
        Pattern {
            source: source.to_string(),
            compiled: OnceLock::new(),
        }
    }

    /// Whether `s` matches; `None` for a pattern the regex engine refuses
    /// (the CRD's checks refuse its syntax, so only one too large to compile).
    pub fn is_match(&self, s: &str) -> Option<bool> {
        let compiled = self.compiled.get_or_init(|| Regex::new(&self.source).ok());
        compiled.as_ref().map(|re| re.is_match(s))
    }

    /// Why `source` is not a valid regular expression, or `None`: its
    /// syntax only, as the regex engine reports it (checking does not compile).
    pub fn syntax_error(source: &str) -> Option<String> {
        regex_syntax::Parser::new()
            .parse(source)
            .err()
            .map(|e| e.to_string())
    }
}

/// The value validations of one node (upstream `ValueValidation`,
/// checked by kube-openapi).
#[derive(Debug, Default)]
pub struct Checks {
    /// `enum`.
    pub enum_values: Vec<Value>,
    /// `maximum` and `exclusiveMaximum`.
    pub maximum: Option<(f64, bool)>,
    /// `minimum` and `exclusiveMinimum`.
    pub minimum: Option<(f64, bool)>,
    /// `multipleOf`.
    pub multiple_of: Option<f64>,
    /// `maxLength` (in characters, as Go counts runes).
    pub max_length: Option<u64>,
    /// `minLength`.
    pub min_length: Option<u64>,
    /// `pattern`.
    pub pattern: Option<Pattern>,
    /// `maxItems`.
    pub max_items: Option<u64>,
    /// `minItems`.
    pub min_items: Option<u64>,
    /// `maxProperties`.
    pub max_properties: Option<u64>,
    /// `minProperties`.
    pub min_properties: Option<u64>,
    /// `required`.
    pub required: Vec<String>,
    /// `allOf`, `anyOf`, `oneOf` (value validations only, in a structural schema).
    pub all_of: Vec<Node>,
    /// `anyOf`.
    pub any_of: Vec<Node>,
    /// `oneOf`.
    pub one_of: Vec<Node>,
    /// `not`.
    pub not: Option<Box<Node>>,
}

/// One position of a structural schema.
#[derive(Debug, Default)]
pub struct Node {
    /// `type`, empty when unset.
    pub type_name: String,
    /// `nullable`.
    pub nullable: bool,
    /// `format`, empty when unset.
    pub format: String,
    /// `default`.
    pub default: Option<Value>,
    /// `properties`.
    pub properties: BTreeMap<String, Arc<Node>>,
    /// `additionalProperties`.
    pub additional: Option<Additional>,
    /// `items`.
    pub items: Option<Arc<Node>>,
    /// `x-kubernetes-preserve-unknown-fields: true`.
    pub preserve_unknown: bool,
    /// `x-kubernetes-embedded-resource: true`.
    pub embedded: bool,
    /// `x-kubernetes-int-or-string: true`.
    pub int_or_string: bool,
    /// `x-kubernetes-list-type` (`None` when unset).
    pub list_type: Option<ListType>,
    /// `x-kubernetes-map-type: atomic`.
    pub map_atomic: bool,
    /// The value validations.
    pub checks: Checks,
    /// `x-kubernetes-validations`.
    pub rules: Rules,
}

/// A node's `x-kubernetes-validations`, compiled when a value first meets
/// them: a server restarted on its data dir serves the stored CRDs without
/// compiling every rule of every schema first (the CRD's creation checked
/// that they compile).
#[derive(Debug, Default)]
pub struct Rules {
    raw: Option<Value>,
    compiled: OnceLock<Vec<Rule>>,
}

impl Rules {
    fn new(raw: Option<&Value>) -> Rules {
        Rules {
            raw: raw
                .filter(|v| v.as_array().is_some_and(|a| !a.is_empty()))
                .cloned(),
            compiled: OnceLock::new(),
        }
    }

    /// Whether the node has any rule.
    pub fn is_empty(&self) -> bool {
        self.raw.is_none()
    }

    /// The rules that compile (the checks report those that do not).
    pub fn compiled(&self) -> &[Rule] {
        self.compiled
            .get_or_init(|| Rule::compile_all(self.raw.as_ref()).0)
    }
}

impl Node {
    /// Builds the tree of `raw`.
    pub fn build(raw: &Value) -> Node {
        let Some(obj) = raw.as_object() else {
            return Node::default();
        };
        let mut node = Node {
            type_name: str_of(obj, "type").to_string(),
            nullable: bool_of(obj, "nullable"),
            format: str_of(obj, "format").to_string(),
            default: obj.get("default").cloned(),
            preserve_unknown: bool_of(obj, "x-kubernetes-preserve-unknown-fields"),
            embedded: bool_of(obj, "x-kubernetes-embedded-resource"),
            int_or_string: bool_of(obj, "x-kubernetes-int-or-string"),
            list_type: list_type_of(obj),
            map_atomic: str_of(obj, "x-kubernetes-map-type") == "atomic",
            checks: checks_of(obj),
            rules: Rules::new(obj.get("x-kubernetes-validations")),
            ..Node::default()
        };
        if let Some(Value::Object(props)) = obj.get("properties") {
            for (k, v) in props {
                node.properties.insert(k.clone(), Arc::new(Node::build(v)));
            }
        }
        node.additional = match obj.get("additionalProperties") {
            Some(Value::Bool(true)) => Some(Additional::Any),
            Some(v @ Value::Object(_)) => Some(Additional::Schema(Arc::new(Node::build(v)))),
            _ => None,
        };
        if let Some(items) = obj.get("items").filter(|v| v.is_object()) {
            node.items = Some(Arc::new(Node::build(items)));
        }
        node
    }

    /// The schema of the values of an object's unknown keys, if any.
    pub fn additional_schema(&self) -> Option<&Arc<Node>> {
        match &self.additional {
            Some(Additional::Schema(s)) => Some(s),
            _ => None,
        }
    }

    /// The list type, `atomic` when unset.
    pub fn list_type_or_atomic(&self) -> ListType {
        self.list_type.clone().unwrap_or(ListType::Atomic)
    }
}

fn str_of<'a>(obj: &'a Map<String, Value>, key: &str) -> &'a str {
    obj.get(key).and_then(Value::as_str).unwrap_or_default()
}

fn bool_of(obj: &Map<String, Value>, key: &str) -> bool {
    obj.get(key).and_then(Value::as_bool).unwrap_or(false)
}

fn u64_of(obj: &Map<String, Value>, key: &str) -> Option<u64> {
    obj.get(key).and_then(Value::as_u64)
}

fn f64_of(obj: &Map<String, Value>, key: &str) -> Option<f64> {
    obj.get(key).and_then(Value::as_f64)
}

fn list_type_of(obj: &Map<String, Value>) -> Option<ListType> {
    match obj.get("x-kubernetes-list-type")?.as_str()? {
        "atomic" => Some(ListType::Atomic),
        "set" => Some(ListType::Set),
        "map" => {
            let keys = obj
                .get("x-kubernetes-list-map-keys")
                .and_then(Value::as_array)
                .map(|keys| {
                    keys.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default();
            Some(ListType::Map(keys))
        }
        _ => None,
    }
}

fn nested(obj: &Map<String, Value>, key: &str) -> Vec<Node> {
    match obj.get(key) {
        Some(Value::Array(list)) => list.iter().map(Node::build).collect(),
        _ => Vec::new(),
    }
}

fn checks_of(obj: &Map<String, Value>) -> Checks {
    Checks {
        enum_values: obj
            .get("enum")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default(),
        maximum: f64_of(obj, "maximum").map(|m| (m, bool_of(obj, "exclusiveMaximum"))),
        minimum: f64_of(obj, "minimum").map(|m| (m, bool_of(obj, "exclusiveMinimum"))),
        multiple_of: f64_of(obj, "multipleOf"),
        max_length: u64_of(obj, "maxLength"),
        min_length: u64_of(obj, "minLength"),
        pattern: obj
            .get("pattern")
            .and_then(Value::as_str)
            .filter(|p| !p.is_empty())
            .map(Pattern::new),
        max_items: u64_of(obj, "maxItems"),
        min_items: u64_of(obj, "minItems"),
        max_properties: u64_of(obj, "maxProperties"),
        min_properties: u64_of(obj, "minProperties"),
        required: obj
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).map(str::to_string).collect())
            .unwrap_or_default(),
        all_of: nested(obj, "allOf"),
        any_of: nested(obj, "anyOf"),
        one_of: nested(obj, "oneOf"),
        not: obj
            .get("not")
            .filter(|v| v.is_object())
            .map(|v| Box::new(Node::build(v))),
    }
}
