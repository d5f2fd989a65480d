//! Field paths, field sets and their `FieldsV1` JSON encoding.
//!
//! Mirrors structured-merge-diff `fieldpath/element.go`, `set.go`,
//! `serialize.go` and `serialize-pe.go`: a set is a trie of path elements
//! whose nodes are either *members* (the node itself is owned) or *children*
//! (something below it is owned), or both.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

/// One step of a path inside an object.
#[derive(Clone, Debug)]
pub enum PathElement {
    /// A struct field or map key (`f:name`).
    Field(String),
    /// An item of a map-list, by its key fields sorted by name (`k:{...}`).
    Key(Vec<(String, Value)>),
    /// An item of a set, by value (`v:...`).
    Value(Value),
    /// A list index (`i:3`); parsed but never produced for typed objects.
    Index(usize),
}

impl PathElement {
    fn rank(&self) -> u8 {
        match self {
            PathElement::Field(_) => 0,
            PathElement::Key(_) => 1,
            PathElement::Value(_) => 2,
            PathElement::Index(_) => 3,
        }
    }

    /// The `FieldsV1` key of this element (`f:name`, `k:{..}`, `v:..`, `i:n`).
    pub fn encode(&self) -> String {
        match self {
            PathElement::Field(name) => format!("f:{name}"),
            PathElement::Key(fields) => {
                let obj: Map<String, Value> = fields.iter().cloned().collect();
                format!("k:{}", Value::Object(obj))
            }
            PathElement::Value(v) => format!("v:{v}"),
            PathElement::Index(i) => format!("i:{i}"),
        }
    }

    /// Parses a `FieldsV1` key; `Ok(None)` for an unknown prefix.
    pub fn decode(text: &str) -> Result<Option<PathElement>, String> {
        let Some((prefix, rest)) = text.split_once(':') else {
            return Err(format!("invalid path element {text:?}"));
        };
        let bad = |e: serde_json::Error| format!("invalid path element {text:?}: {e}");
        Ok(Some(match prefix {
            "f" => PathElement::Field(rest.to_string()),
            "k" => match serde_json::from_str::<Value>(rest).map_err(bad)? {
                Value::Object(obj) => PathElement::Key(obj.into_iter().collect()),
                _ => return Err(format!("invalid key in path element {text:?}")),
            },
            "v" => PathElement::Value(serde_json::from_str(rest).map_err(bad)?),
            "i" => PathElement::Index(rest.parse().map_err(|_| format!("invalid index in {text:?}"))?),
            _ => return Ok(None),
        }))
    }
}

/// Upstream's path string (`.spec.containers[name="nginx"]`, `[=v]`, `[3]`).
impl std::fmt::Display for PathElement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PathElement::Field(name) => write!(f, ".{name}"),
            PathElement::Key(fields) => {
                let parts: Vec<String> = fields.iter().map(|(k, v)| format!("{k}={v}")).collect();
                write!(f, "[{}]", parts.join(","))
            }
            PathElement::Value(v) => write!(f, "[={v}]"),
            PathElement::Index(i) => write!(f, "[{i}]"),
        }
    }
}

impl Ord for PathElement {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (PathElement::Field(a), PathElement::Field(b)) => a.cmp(b),
            (PathElement::Key(a), PathElement::Key(b)) => compare_fields(a, b),
            (PathElement::Value(a), PathElement::Value(b)) => compare_values(a, b),
            (PathElement::Index(a), PathElement::Index(b)) => a.cmp(b),
            _ => self.rank().cmp(&other.rank()),
        }
    }
}

impl PartialOrd for PathElement {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for PathElement {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for PathElement {}

/// Lexical order of sorted key lists (smd `value.FieldList.Compare`).
fn compare_fields(a: &[(String, Value)], b: &[(String, Value)]) -> Ordering {
    for (x, y) in a.iter().zip(b) {
        let c = x.0.cmp(&y.0).then_with(|| compare_values(&x.1, &y.1));
        if c != Ordering::Equal {
            return c;
        }
    }
    a.len().cmp(&b.len())
}

fn value_rank(v: &Value) -> u8 {
    match v {
        Value::Number(n) if n.is_f64() => 0,
        Value::Number(_) => 1,
        Value::String(_) => 2,
        Value::Bool(_) => 3,
        Value::Array(_) => 4,
        Value::Object(_) => 5,
        Value::Null => 6,
    }
}

/// Total order on JSON values (smd `value.Compare`): floats, ints, strings,
/// bools, lists, maps, null; ints and floats compare numerically.
pub fn compare_values(a: &Value, b: &Value) -> Ordering {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => compare_numbers(x, y),
        (Value::String(x), Value::String(y)) => x.cmp(y),
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        (Value::Array(x), Value::Array(y)) => {
            for (p, q) in x.iter().zip(y) {
                let c = compare_values(p, q);
                if c != Ordering::Equal {
                    return c;
                }
            }
            x.len().cmp(&y.len())
        }
        (Value::Object(x), Value::Object(y)) => {
            let xs: Vec<(String, Value)> = x.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
            let ys: Vec<(String, Value)> = y.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
            compare_fields(&xs, &ys)
        }
        (Value::Null, Value::Null) => Ordering::Equal,
        _ => value_rank(a).cmp(&value_rank(b)),
    }
}

fn compare_numbers(x: &serde_json::Number, y: &serde_json::Number) -> Ordering {
    let int = |n: &serde_json::Number| n.as_i64().map(i128::from).or_else(|| n.as_u64().map(i128::from));
    match (int(x), int(y)) {
        (Some(a), Some(b)) => a.cmp(&b),
        _ => {
            let (a, b) = (x.as_f64().unwrap_or(0.0), y.as_f64().unwrap_or(0.0));
            a.partial_cmp(&b).unwrap_or(Ordering::Equal)
        }
    }
}

/// A path: a sequence of elements from the object root.
pub type Path = Vec<PathElement>;

/// Renders a path the way conflict messages show it.
pub fn path_string(path: &[PathElement]) -> String {
    path.iter().map(ToString::to_string).collect()
}

/// A set of paths, stored as a trie (smd `fieldpath.Set`).
///
/// Invariant: every child set is non-empty.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FieldSet {
    members: BTreeSet<PathElement>,
    children: BTreeMap<PathElement, FieldSet>,
}

impl FieldSet {
    /// The empty set.
    pub fn new() -> FieldSet {
        FieldSet::default()
    }

    /// True when no path is in the set.
    pub fn is_empty(&self) -> bool {
        self.members.is_empty() && self.children.is_empty()
    }

    /// Adds a path; the empty path (the whole object) is never tracked.
    pub fn insert(&mut self, path: &[PathElement]) {
        match path {
            [] => {}
            [last] => {
                self.members.insert(last.clone());
            }
            [first, rest @ ..] => self.children.entry(first.clone()).or_default().insert(rest),
        }
    }

    /// Whether the exact path is a member.
    pub fn has(&self, path: &[PathElement]) -> bool {
        match path {
            [] => false,
            [last] => self.members.contains(last),
            [first, rest @ ..] => self.children.get(first).is_some_and(|c| c.has(rest)),
        }
    }

    /// Whether the element is a member at this level.
    pub fn has_member(&self, pe: &PathElement) -> bool {
        self.members.contains(pe)
    }

    /// Marks an element as a member at this level.
    pub fn insert_member(&mut self, pe: PathElement) {
        self.members.insert(pe);
    }

    /// The members at this level.
    pub fn members(&self) -> impl Iterator<Item = &PathElement> {
        self.members.iter()
    }

    /// The subset below `pe` (empty if none).
    pub fn with_prefix(&self, pe: &PathElement) -> FieldSet {
        self.children.get(pe).cloned().unwrap_or_default()
    }

    /// The subset below `pe`, borrowed.
    pub fn child(&self, pe: &PathElement) -> Option<&FieldSet> {
        self.children.get(pe)
    }

    /// Iterates the child subsets.
    pub fn children(&self) -> impl Iterator<Item = (&PathElement, &FieldSet)> {
        self.children.iter()
    }

    /// Replaces the child subset at `pe`; an empty subset removes it.
    pub fn set_child(&mut self, pe: PathElement, set: FieldSet) {
        if set.is_empty() {
            self.children.remove(&pe);
        } else {
            self.children.insert(pe, set);
        }
    }

    /// Paths in either set.
    pub fn union(&self, other: &FieldSet) -> FieldSet {
        let mut out = self.clone();
        out.members.extend(other.members.iter().cloned());
        for (pe, set) in &other.children {
            let merged = match out.children.get(pe) {
                Some(mine) => mine.union(set),
                None => set.clone(),
            };
            out.children.insert(pe.clone(), merged);
        }
        out
    }

    /// Paths in both sets.
    pub fn intersection(&self, other: &FieldSet) -> FieldSet {
        let members = self.members.intersection(&other.members).cloned().collect();
        let mut out = FieldSet {
            members,
            children: BTreeMap::new(),
        };
        for (pe, set) in &self.children {
            if let Some(theirs) = other.children.get(pe) {
                out.set_child(pe.clone(), set.intersection(theirs));
            }
        }
        out
    }

    /// Paths of `self` not in `other`; removing a member keeps its children.
    pub fn difference(&self, other: &FieldSet) -> FieldSet {
        let members = self.members.difference(&other.members).cloned().collect();
        let mut out = FieldSet {
            members,
            children: BTreeMap::new(),
        };
        for (pe, set) in &self.children {
            match other.children.get(pe) {
                Some(theirs) => out.set_child(pe.clone(), set.difference(theirs)),
                None => out.set_child(pe.clone(), set.clone()),
            }
        }
        out
    }

    /// Paths of `self` neither in `other` nor below a member of `other`.
    pub fn recursive_difference(&self, other: &FieldSet) -> FieldSet {
        let members = self.members.difference(&other.members).cloned().collect();
        let mut out = FieldSet {
            members,
            children: BTreeMap::new(),
        };
        for (pe, set) in &self.children {
            if other.members.contains(pe) {
                continue;
            }
            match other.children.get(pe) {
                Some(theirs) => out.set_child(pe.clone(), set.recursive_difference(theirs)),
                None => out.set_child(pe.clone(), set.clone()),
            }
        }
        out
    }

    /// All member paths: a node's members (sorted) before its children.
    pub fn paths(&self) -> Vec<Path> {
        let mut out = Vec::new();
        self.collect_paths(&mut Vec::new(), &mut out);
        out
    }

    fn collect_paths(&self, prefix: &mut Path, out: &mut Vec<Path>) {
        for pe in &self.members {
            let mut p = prefix.clone();
            p.push(pe.clone());
            out.push(p);
        }
        for (pe, set) in &self.children {
            prefix.push(pe.clone());
            set.collect_paths(prefix, out);
            prefix.pop();
        }
    }

    /// The `FieldsV1` JSON object of this set.
    pub fn to_fields_v1(&self) -> Value {
        Value::Object(self.encode_contents(false))
    }

    fn encode_contents(&self, include_self: bool) -> Map<String, Value> {
        let mut out = Map::new();
        if include_self && !self.is_empty() {
            out.insert(".".to_string(), Value::Object(Map::new()));
        }
        let keys: BTreeSet<&PathElement> = self.members.iter().chain(self.children.keys()).collect();
        for pe in keys {
            let body = match self.children.get(pe) {
                Some(child) => child.encode_contents(self.members.contains(pe)),
                None => Map::new(),
            };
            out.insert(pe.encode(), Value::Object(body));
        }
        out
    }

    /// Parses a `FieldsV1` JSON object.
    pub fn from_fields_v1(value: &Value) -> Result<FieldSet, String> {
        let Value::Object(obj) = value else {
            return Err("FieldsV1 must be a JSON object".to_string());
        };
        Ok(Self::decode_contents(obj)?.0)
    }

    /// Returns the set and whether the node itself was marked with `"."`.
    fn decode_contents(obj: &Map<String, Value>) -> Result<(FieldSet, bool), String> {
        let mut set = FieldSet::new();
        let mut is_member = false;
        for (key, body) in obj {
            if key == "." {
                is_member = true;
                continue;
            }
            let Some(pe) = PathElement::decode(key)? else {
                continue;
            };
            let Value::Object(inner) = body else {
                return Err(format!("FieldsV1 entry {key:?} must be an object"));
            };
            if inner.is_empty() {
                set.members.insert(pe);
                continue;
            }
            let (child, member) = Self::decode_contents(inner)?;
            if member {
                set.members.insert(pe.clone());
            }
            set.set_child(pe, child);
        }
        Ok((set, is_member))
    }
}
