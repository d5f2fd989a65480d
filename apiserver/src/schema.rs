//! Strict field validation: which fields of an object the schema of its
//! kind does not know.
//!
//! Upstream decodes request bodies into the Go types with a strict decoder
//! (sigs.k8s.io/json); under `fieldValidation=Strict` every unknown field
//! fails the request as `strict decoding error: unknown field "spec.bogus"`
//! (the path joins field names with `.` and list indexes as `[i]`), under
//! `Warn` each becomes a `Warning` header. Here the same question is
//! answered by walking the JSON value against the OpenAPI definitions that
//! [`crate::openapi`] generates, compiled once into a small graph.
//!
//! Rules, as upstream's decoder applies them:
//! * an object with `properties` accepts only those keys (case-sensitive);
//! * a map (`additionalProperties`) accepts any key and checks its values;
//! * opaque types (IntOrString, Quantity, RawExtension, FieldsV1) and any
//!   type mismatch are not this check's business.
//!
//! Simplified: the value is a parsed `serde_json::Value`, so fields come in
//! its key order (sorted unless serde_json's `preserve_order` is on), and
//! duplicate keys — upstream's `duplicate field "x"` — cannot be seen. A
//! kind without a generated schema (a custom resource) has no unknown
//! fields.

use crate::openapi::{generator, known_kinds, ref_target, take_definitions};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::LazyLock;

/// Paths of the fields of `obj` that the schema of `group`/`version`/`kind`
/// does not have, e.g. `spec.template.spec.containers[0].bogus`.
pub fn unknown_fields(group: &str, version: &str, kind: &str, obj: &Value) -> Vec<String> {
    let graph = &*GRAPH;
    let mut out = Vec::new();
    if let Some(root) = graph.root(group, version, kind) {
        graph.walk(root, obj, &mut String::new(), &mut out);
    }
    out
}

/// Whether strict validation knows the kind at all.
pub fn has_schema(group: &str, version: &str, kind: &str) -> bool {
    GRAPH.root(group, version, kind).is_some()
}

static GRAPH: LazyLock<Graph> = LazyLock::new(Graph::build);

/// Builds the graph now (see [`crate::prepare_tables`]).
pub(crate) fn prepare() {
    LazyLock::force(&GRAPH);
}

/// Where in a kind's schema a decoding error happened, in the terms of
/// upstream's message `json: cannot unmarshal <value> into Go struct field
/// <go_struct>.<field> of type <go_type>`.
#[derive(Debug, PartialEq, Eq)]
pub struct Located {
    /// The innermost struct that has the field, e.g. `DeploymentSpec`.
    pub go_struct: String,
    /// The struct fields from the root, joined by `.` (map keys and list
    /// indexes left out, as Go does), e.g. `spec.replicas`.
    pub field: String,
    /// The Go type of the value at the error, when it is not a scalar:
    /// `v1.DeploymentSpec`, `[]v1.Container`, `map[string]string`.
    pub go_type: Option<String>,
}

/// Follows `path` (as serde_path_to_error records it) through the schema of
/// `group`/`version`/`kind`.
pub fn locate(group: &str, version: &str, kind: &str, path: &serde_path_to_error::Path) -> Option<Located> {
    use serde_path_to_error::Segment;
    let graph = &*GRAPH;
    let mut id = graph.root(group, version, kind)?;
    let mut go_struct = kind.to_string();
    let mut fields: Vec<&str> = Vec::new();
    for segment in path.iter() {
        id = match (&graph.nodes[id], segment) {
            (Node::Struct(children), Segment::Map { key }) => {
                go_struct = graph.short_name(id).unwrap_or(kind).to_string();
                fields.push(key);
                children.get(key.as_str()).copied().unwrap_or(ANY)
            }
            (Node::Map(values), Segment::Map { .. }) => *values,
            (Node::List(items), Segment::Seq { .. }) => *items,
            _ => ANY,
        };
    }
    Some(Located {
        go_struct,
        field: fields.join("."),
        go_type: graph.go_type(id),
    })
}

/// Node 0: anything goes.
const ANY: usize = 0;

enum Node {
    Any,
    /// A JSON scalar, with its Go type (`int32`, `string`, `bool`, ...).
    Scalar(&'static str),
    Struct(HashMap<Box<str>, usize>),
    Map(usize),
    List(usize),
}

/// The compiled schemas of every known kind.
struct Graph {
    nodes: Vec<Node>,
    /// The definition name of each node that is a named definition.
    names: HashMap<usize, String>,
    roots: Vec<((&'static str, &'static str, &'static str), usize)>,
}

impl Graph {
    fn build() -> Graph {
        let kinds = known_kinds();
        let mut generator = generator();
        for kind in &kinds {
            kind.add_to(&mut generator);
        }
        let defs = take_definitions(&mut generator);
        let mut builder = Builder {
            defs: &defs,
            nodes: vec![Node::Any],
            by_name: HashMap::new(),
        };
        let roots = kinds
            .iter()
            .map(|k| {
                (
                    (k.group, k.version, k.kind),
                    builder.definition(&k.definition_name()),
                )
            })
            .collect();
        Graph {
            nodes: builder.nodes,
            names: builder.by_name.into_iter().map(|(name, id)| (id, name)).collect(),
            roots,
        }
    }

    /// `DeploymentSpec` for `io.k8s.api.apps.v1.DeploymentSpec`.
    fn short_name(&self, id: usize) -> Option<&str> {
        let name = self.names.get(&id)?;
        name.rsplit('.').next()
    }

    /// Go's name of a non-scalar node's type, e.g. `[]v1.Container`.
    fn go_type(&self, id: usize) -> Option<String> {
        match &self.nodes[id] {
            Node::Any => None,
            Node::Scalar(go) => Some(go.to_string()),
            Node::Struct(_) => {
                let name = self.names.get(&id)?;
                let mut parts = name.rsplit('.');
                let (ty, package) = (parts.next()?, parts.next()?);
                Some(format!("{package}.{ty}"))
            }
            Node::List(items) => Some(format!("[]{}", self.go_type(*items)?)),
            Node::Map(values) => Some(format!("map[string]{}", self.go_type(*values)?)),
        }
    }

    fn root(&self, group: &str, version: &str, kind: &str) -> Option<usize> {
        self.roots
            .iter()
            .find(|((g, v, k), _)| *g == group && *v == version && *k == kind)
            .map(|(_, id)| *id)
    }

    fn walk(&self, id: usize, value: &Value, path: &mut String, out: &mut Vec<String>) {
        match (&self.nodes[id], value) {
            (Node::Struct(fields), Value::Object(obj)) => self.walk_struct(fields, obj, path, out),
            (Node::Map(values), Value::Object(obj)) => {
                for (key, v) in obj {
                    let len = push_field(path, key);
                    self.walk(*values, v, path, out);
                    path.truncate(len);
                }
            }
            (Node::List(items), Value::Array(list)) => {
                for (i, item) in list.iter().enumerate() {
                    let len = path.len();
                    path.push_str(&format!("[{i}]"));
                    self.walk(*items, item, path, out);
                    path.truncate(len);
                }
            }
            _ => {}
        }
    }

    fn walk_struct(
        &self,
        fields: &HashMap<Box<str>, usize>,
        obj: &Map<String, Value>,
        path: &mut String,
        out: &mut Vec<String>,
    ) {
        for (key, v) in obj {
            let len = push_field(path, key);
            match fields.get(key.as_str()) {
                Some(child) => self.walk(*child, v, path, out),
                None => out.push(path.clone()),
            }
            path.truncate(len);
        }
    }
}

/// Appends `.key` (or `key` at the root); returns the length to truncate to.
fn push_field(path: &mut String, key: &str) -> usize {
    let len = path.len();
    if len > 0 {
        path.push('.');
    }
    path.push_str(key);
    len
}

/// Compiles definitions into nodes, each definition once.
struct Builder<'a> {
    defs: &'a Map<String, Value>,
    nodes: Vec<Node>,
    by_name: HashMap<String, usize>,
}

impl Builder<'_> {
    /// The node of a named definition (reserved before it is filled, so
    /// recursive types terminate).
    fn definition(&mut self, name: &str) -> usize {
        if let Some(id) = self.by_name.get(name) {
            return *id;
        }
        let Some(def) = self.defs.get(name) else {
            return ANY;
        };
        let id = self.nodes.len();
        self.nodes.push(Node::Any);
        self.by_name.insert(name.to_string(), id);
        self.nodes[id] = self.shape(def);
        id
    }

    /// The node of an inline schema or reference.
    fn schema(&mut self, schema: &Value) -> usize {
        if let Some(target) = ref_target(schema) {
            return self.definition(target);
        }
        match self.shape(schema) {
            Node::Any => ANY,
            node => {
                self.nodes.push(node);
                self.nodes.len() - 1
            }
        }
    }

    fn shape(&mut self, schema: &Value) -> Node {
        if let Some(Value::Object(props)) = schema.get("properties") {
            let fields = props
                .iter()
                .map(|(name, prop)| (name.as_str().into(), self.schema(prop)))
                .collect();
            return Node::Struct(fields);
        }
        if let Some(items) = schema.get("items").filter(|i| i.is_object()) {
            return Node::List(self.schema(items));
        }
        if let Some(values) = schema.get("additionalProperties").filter(|a| a.is_object()) {
            return Node::Map(self.schema(values));
        }
        let format = schema.get("format").and_then(Value::as_str);
        match (schema.get("type").and_then(Value::as_str), format) {
            (Some("string"), Some("byte")) => Node::Scalar("[]uint8"),
            (Some("string"), _) => Node::Scalar("string"),
            (Some("boolean"), _) => Node::Scalar("bool"),
            (Some("integer"), Some("int32")) => Node::Scalar("int32"),
            (Some("integer"), _) => Node::Scalar("int64"),
            (Some("number"), _) => Node::Scalar("float64"),
            _ => Node::Any,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn deployment() -> Value {
        json!({
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "web", "labels": {"app": "web"}, "annotations": {"a": "b"}},
            "spec": {
                "replicas": 2,
                "selector": {"matchLabels": {"app": "web"}},
                "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 1}},
                "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {
                        "containers": [{
                            "name": "nginx",
                            "image": "nginx:1.27",
                            "ports": [{"containerPort": 80}],
                            "resources": {"limits": {"cpu": "500m", "memory": "128Mi"}},
                            "env": [{"name": "A", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
                        }],
                        "volumes": [{"name": "v", "emptyDir": {}}],
                    },
                },
            },
            "status": {"replicas": 2, "conditions": [{"type": "Available", "status": "True"}]},
        })
    }

    #[test]
    fn valid_deployment_has_no_unknown_fields() {
        assert!(unknown_fields("apps", "v1", "Deployment", &deployment()).is_empty());
    }

    #[test]
    fn bogus_fields_are_found_at_every_depth() {
        let mut d = deployment();
        d["bogus"] = json!(1);
        d["metadata"]["bogus"] = json!("x");
        d["spec"]["bogus"] = json!(true);
        d["spec"]["strategy"]["rollingUpdate"]["bogus"] = json!(1);
        d["spec"]["template"]["spec"]["containers"][0]["bogus"] = json!({"deep": 1});
        d["spec"]["template"]["spec"]["containers"][0]["ports"][0]["bogus"] = json!(1);
        d["status"]["conditions"][0]["bogus"] = json!(1);
        let found = unknown_fields("apps", "v1", "Deployment", &d);
        assert_eq!(
            found,
            [
                "bogus",
                "metadata.bogus",
                "spec.bogus",
                "spec.strategy.rollingUpdate.bogus",
                "spec.template.spec.containers[0].bogus",
                "spec.template.spec.containers[0].ports[0].bogus",
                "status.conditions[0].bogus",
            ]
        );
    }

    #[test]
    fn field_names_are_case_sensitive() {
        let d = json!({"apiVersion": "apps/v1", "kind": "Deployment", "Spec": {}});
        assert_eq!(unknown_fields("apps", "v1", "Deployment", &d), ["Spec"]);
    }

    #[test]
    fn maps_and_opaque_types_accept_any_key() {
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "managedFields": [{"fieldsV1": {"f:data": {}}}]}, "data": {"anything": "x"}});
        assert!(unknown_fields("", "v1", "ConfigMap", &cm).is_empty());
    }

    #[test]
    fn unknown_kinds_have_no_unknown_fields() {
        let w = json!({"apiVersion": "example.com/v1", "kind": "Widget", "bogus": 1});
        assert!(unknown_fields("example.com", "v1", "Widget", &w).is_empty());
        assert!(!has_schema("example.com", "v1", "Widget"));
        assert!(has_schema("", "v1", "Pod"));
    }

    #[test]
    fn events_and_core_events_differ() {
        let e = json!({"apiVersion": "events.k8s.io/v1", "kind": "Event", "note": "x", "eventTime": "2024-01-01T00:00:00.000000Z"});
        assert!(unknown_fields("events.k8s.io", "v1", "Event", &e).is_empty());
        assert_eq!(unknown_fields("", "v1", "Event", &e), ["note"]);
    }
}
