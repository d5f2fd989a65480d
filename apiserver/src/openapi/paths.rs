//! The `paths` of a group-version document.
//!
//! Upstream lists, per resource, the collection path (list, create,
//! deletecollection), the item path (read, replace, patch, delete), the
//! all-namespaces list and watch paths, and one path per subresource; each
//! operation names its GVK in `x-kubernetes-group-version-kind` (an object,
//! unlike the list on definitions) and its query parameters. kubectl reads
//! two things from here: whether the PATCH operation of a GVK accepts
//! `fieldValidation` (the server-side validation check of apply/create/
//! replace) and whether it accepts strategic merge patch (client-side apply
//! then trusts the definitions' patch metadata).
//!
//! Simplified: no deprecated `/watch/` paths, no `pretty`-only details,
//! responses list JSON and YAML only, and `pods/log` is described as text.

use super::kinds::REF_PREFIX;
use crate::registry::{ResourceInfo, Subresource};
use serde_json::{Map, Value, json};

/// What the document needs to know about one served resource.
pub(crate) struct PathSpec<'a> {
    pub info: &'a ResourceInfo,
    /// Definition name of the kind, when it has a generated schema.
    pub definition: Option<String>,
    /// Whether strategic merge patch may be advertised for it.
    pub smp: bool,
}

/// Adds every path of `spec` to `paths`.
pub(crate) fn add_resource(paths: &mut Map<String, Value>, spec: &PathSpec<'_>) {
    let info = spec.info;
    let base = group_version_path(&info.group, &info.version);
    let collection = if info.namespaced {
        format!("{base}/namespaces/{{namespace}}/{}", info.plural)
    } else {
        format!("{base}/{}", info.plural)
    };
    let item = format!("{collection}/{{name}}");
    let op = Ops::new(spec);
    paths.insert(collection.clone(), op.collection());
    paths.insert(item.clone(), op.item());
    if info.namespaced {
        paths.insert(format!("{base}/{}", info.plural), op.all_namespaces());
    }
    for sub in &info.subresources {
        paths.insert(format!("{item}/{}", sub.as_str()), op.subresource(*sub));
    }
}

/// `/api/v1` or `/apis/<group>/<version>`.
pub(crate) fn group_version_path(group: &str, version: &str) -> String {
    if group.is_empty() {
        format!("/api/{version}")
    } else {
        format!("/apis/{group}/{version}")
    }
}

/// Builds the operations of one resource.
struct Ops<'a> {
    spec: &'a PathSpec<'a>,
    /// `AppsV1`, `CoreV1`, `CoordinationV1`: the operation id infix.
    id_infix: String,
    /// `Namespaced` or empty.
    scope: &'static str,
    /// `apps_v1`, `core_v1`.
    tag: String,
}

impl<'a> Ops<'a> {
    fn new(spec: &'a PathSpec<'a>) -> Self {
        let info = spec.info;
        let group_word = info
            .group
            .split('.')
            .next()
            .filter(|g| !g.is_empty())
            .unwrap_or("core");
        Ops {
            spec,
            id_infix: format!("{}{}", capitalize(group_word), capitalize(&info.version)),
            scope: if info.namespaced { "Namespaced" } else { "" },
            tag: format!("{group_word}_{}", info.version),
        }
    }

    fn gvk(&self) -> Value {
        let i = self.spec.info;
        json!({"group": i.group, "version": i.version, "kind": i.kind})
    }

    fn kind_ref(&self, list: bool) -> Option<String> {
        let def = self.spec.definition.as_ref()?;
        Some(if list { format!("{def}List") } else { def.clone() })
    }

    /// One operation object.
    fn operation(
        &self,
        verb: &str,
        action: &str,
        suffix: &str,
        query: &[&str],
        response: Option<String>,
    ) -> Value {
        let kind = &self.spec.info.kind;
        let id = format!("{verb}{}{}{kind}{suffix}", self.id_infix, self.scope);
        let mut op = json!({
            "description": format!("{action} {kind}{suffix}"),
            "operationId": id,
            "tags": [self.tag],
            "x-kubernetes-action": action,
            "x-kubernetes-group-version-kind": self.gvk(),
            "parameters": query.iter().map(|q| query_param(q)).collect::<Vec<_>>(),
            "responses": responses(response.as_deref(), action),
        });
        if query.is_empty() {
            op.as_object_mut().map(|o| o.remove("parameters"));
        }
        op
    }

    fn collection(&self) -> Value {
        let read = self.kind_ref(false);
        let list = self.kind_ref(true);
        let mut post = self.operation("create", "post", "", WRITE_PARAMS, read.clone());
        set_body(
            &mut post,
            body(&["application/json", "application/yaml"], read.as_deref()),
        );
        with_path_params(
            json!({
                "get": self.operation("list", "list", "", LIST_PARAMS, list),
                "post": post,
                "delete": self.operation("delete", "deletecollection", "", DELETE_COLLECTION_PARAMS, Some(STATUS.into())),
            }),
            self.spec.info.namespaced,
            false,
        )
    }

    fn item(&self) -> Value {
        let read = self.kind_ref(false);
        let ops = json!({
            "get": self.operation("read", "get", "", &[], read.clone()),
            "put": self.put("", read.clone()),
            "patch": self.patch("", read),
            "delete": self.delete(),
        });
        with_path_params(ops, self.spec.info.namespaced, true)
    }

    fn all_namespaces(&self) -> Value {
        let kind = &self.spec.info.kind;
        let mut get = self.operation("list", "list", "", LIST_PARAMS, self.kind_ref(true));
        get["operationId"] = format!("list{}{kind}ForAllNamespaces", self.id_infix).into();
        json!({"get": get, "parameters": [query_param("pretty")]})
    }

    fn subresource(&self, sub: Subresource) -> Value {
        let ops = match sub {
            Subresource::Status => self.read_write("Status"),
            Subresource::EphemeralContainers => self.read_write("EphemeralContainers"),
            Subresource::Approval => self.read_write("Approval"),
            Subresource::Scale => self.scale(),
            Subresource::Binding => self.post("Binding", ("", "v1", "Binding"), "io.k8s.api.core.v1.Binding"),
            Subresource::Eviction => self.post(
                "Eviction",
                ("policy", "v1", "Eviction"),
                "io.k8s.api.policy.v1.Eviction",
            ),
            Subresource::Token => self.post(
                "Token",
                ("authentication.k8s.io", "v1", "TokenRequest"),
                "io.k8s.api.authentication.v1.TokenRequest",
            ),
            Subresource::Log => {
                let mut get = self.operation("read", "get", "Log", LOG_PARAMS, None);
                get["responses"] = json!({"200": {"description": "OK", "content": {"text/plain": {"schema": {"type": "string"}}}}});
                json!({"get": get})
            }
        };
        with_path_params(ops, self.spec.info.namespaced, true)
    }

    /// get, put and patch of the kind itself through a subresource (`/status`).
    fn read_write(&self, suffix: &str) -> Value {
        let read = self.kind_ref(false);
        json!({
            "get": self.operation("read", "get", suffix, &[], read.clone()),
            "put": self.put(suffix, read.clone()),
            "patch": self.patch(suffix, read),
        })
    }

    /// A create-only subresource whose body is another kind (`pods/binding`).
    fn post(&self, suffix: &str, (group, version, kind): (&str, &str, &str), definition: &str) -> Value {
        let mut post = self.operation("create", "post", suffix, WRITE_PARAMS, None);
        post["x-kubernetes-group-version-kind"] = json!({"group": group, "version": version, "kind": kind});
        set_body(&mut post, body(&["application/json"], Some(definition)));
        json!({"post": post})
    }

    fn scale(&self) -> Value {
        let scale = Some("io.k8s.api.autoscaling.v1.Scale".to_string());
        let scale_gvk = json!({"group": "autoscaling", "version": "v1", "kind": "Scale"});
        let mut ops = json!({
            "get": self.operation("read", "get", "Scale", &[], scale.clone()),
            "put": self.put("Scale", scale.clone()),
            "patch": self.patch_with("Scale", scale, false),
        });
        for verb in ["get", "put", "patch"] {
            ops[verb]["x-kubernetes-group-version-kind"] = scale_gvk.clone();
        }
        ops
    }

    fn put(&self, suffix: &str, schema: Option<String>) -> Value {
        let mut op = self.operation("replace", "put", suffix, WRITE_PARAMS, schema.clone());
        set_body(
            &mut op,
            body(&["application/json", "application/yaml"], schema.as_deref()),
        );
        op
    }

    fn patch(&self, suffix: &str, schema: Option<String>) -> Value {
        self.patch_with(suffix, schema, self.spec.smp)
    }

    fn patch_with(&self, suffix: &str, schema: Option<String>, smp: bool) -> Value {
        let mut op = self.operation("patch", "patch", suffix, PATCH_PARAMS, schema);
        let mut types = vec!["application/json-patch+json", "application/merge-patch+json"];
        if smp {
            types.push("application/strategic-merge-patch+json");
        }
        types.push("application/apply-patch+yaml");
        set_body(
            &mut op,
            body(&types, Some("io.k8s.apimachinery.pkg.apis.meta.v1.Patch")),
        );
        op
    }

    fn delete(&self) -> Value {
        let mut op = self.operation("delete", "delete", "", DELETE_PARAMS, Some(STATUS.into()));
        set_body(
            &mut op,
            body(
                &["application/json"],
                Some("io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions"),
            ),
        );
        op["requestBody"]["required"] = false.into();
        op
    }
}

const STATUS: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.Status";
const WRITE_PARAMS: &[&str] = &["dryRun", "fieldManager", "fieldValidation"];
const PATCH_PARAMS: &[&str] = &["dryRun", "fieldManager", "fieldValidation", "force"];
const DELETE_PARAMS: &[&str] = &[
    "dryRun",
    "gracePeriodSeconds",
    "orphanDependents",
    "propagationPolicy",
];
const LOG_PARAMS: &[&str] = &[
    "container",
    "follow",
    "previous",
    "sinceSeconds",
    "tailLines",
    "timestamps",
];
const LIST_PARAMS: &[&str] = &[
    "allowWatchBookmarks",
    "continue",
    "fieldSelector",
    "labelSelector",
    "limit",
    "resourceVersion",
    "resourceVersionMatch",
    "sendInitialEvents",
    "timeoutSeconds",
    "watch",
];
const DELETE_COLLECTION_PARAMS: &[&str] = &[
    "continue",
    "dryRun",
    "fieldSelector",
    "gracePeriodSeconds",
    "labelSelector",
    "limit",
    "orphanDependents",
    "propagationPolicy",
    "resourceVersion",
    "resourceVersionMatch",
    "timeoutSeconds",
];

/// A query parameter, with its type and a short description.
fn query_param(name: &str) -> Value {
    let (ty, description) = match name {
        "dryRun" => (
            "string",
            "If present, the change is validated but not persisted. The only valid value is All.",
        ),
        "fieldManager" => (
            "string",
            "The name of the actor making the change, recorded in managedFields.",
        ),
        "fieldValidation" => (
            "string",
            "How to treat fields the schema does not know, or duplicated fields: Ignore drops them, Warn drops them and adds a Warning header, Strict fails the request.",
        ),
        "force" => (
            "boolean",
            "Server-side apply only: take ownership of fields other managers own instead of failing with a conflict.",
        ),
        "gracePeriodSeconds" => (
            "integer",
            "Seconds before the object is deleted; 0 deletes at once.",
        ),
        "orphanDependents" => ("boolean", "Deprecated: use propagationPolicy."),
        "propagationPolicy" => (
            "string",
            "How dependents are garbage collected: Orphan, Background or Foreground.",
        ),
        "limit" | "timeoutSeconds" | "sinceSeconds" | "tailLines" => {
            ("integer", "A number limiting the response.")
        }
        "watch" | "allowWatchBookmarks" | "sendInitialEvents" | "follow" | "previous" | "timestamps" => {
            ("boolean", "A switch of the list, watch or log behaviour.")
        }
        "pretty" => ("string", "If 'true', the output is indented."),
        _ => ("string", "A selector, continuation token or resource version."),
    };
    json!({"name": name, "in": "query", "description": description, "schema": {"type": ty, "uniqueItems": true}})
}

fn path_param(name: &str, description: &str) -> Value {
    json!({"name": name, "in": "path", "required": true, "description": description, "schema": {"type": "string", "uniqueItems": true}})
}

/// Adds the path-level parameters (`name`, `namespace`, `pretty`).
fn with_path_params(mut ops: Value, namespaced: bool, item: bool) -> Value {
    let mut params = Vec::new();
    if item {
        params.push(path_param("name", "name of the object"));
    }
    if namespaced {
        params.push(path_param(
            "namespace",
            "object name and auth scope, such as for teams and projects",
        ));
    }
    params.push(query_param("pretty"));
    ops["parameters"] = params.into();
    ops
}

fn schema_ref(definition: Option<&str>) -> Value {
    match definition {
        Some(def) => json!({"$ref": format!("{REF_PREFIX}{def}")}),
        None => json!({"type": "object"}),
    }
}

fn body(types: &[&str], definition: Option<&str>) -> Value {
    let schema = schema_ref(definition);
    let content: Map<String, Value> = types
        .iter()
        .map(|t| (t.to_string(), json!({"schema": schema})))
        .collect();
    json!({"content": content, "required": true})
}

fn set_body(op: &mut Value, body: Value) {
    op["requestBody"] = body;
}

/// Response objects: 200, plus 201 for writes and 202 for deletes.
fn responses(definition: Option<&str>, action: &str) -> Value {
    let content = |d: Option<&str>| {
        let schema = schema_ref(d);
        json!({"application/json": {"schema": schema}, "application/yaml": {"schema": schema}})
    };
    let mut out = json!({
        "200": {"description": "OK", "content": content(definition)},
        "401": {"description": "Unauthorized"},
    });
    match action {
        "post" | "put" | "patch" => {
            out["201"] = json!({"description": "Created", "content": content(definition)})
        }
        "delete" | "deletecollection" => {
            out["202"] = json!({"description": "Accepted", "content": content(definition)})
        }
        _ => {}
    }
    out
}

fn capitalize(word: &str) -> String {
    let mut chars = word.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}
