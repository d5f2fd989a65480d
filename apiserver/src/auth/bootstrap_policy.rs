//! The default cluster roles and bindings every cluster starts with,
//! created at start-up when absent.
//!
//! Upstream: `plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go`
//! (`ClusterRoles`, `ClusterRoleBindings`) and the post-start hook of
//! `pkg/registry/rbac/rest/storage_rbac.go` that creates them. Every object
//! carries the label `kubernetes.io/bootstrapping: rbac-defaults` and the
//! annotation `rbac.authorization.kubernetes.io/autoupdate: "true"`.
//! `admin`, `edit` and `view` carry no rules of their own: they aggregate
//! the `system:aggregate-to-*` roles (and each other: view into edit, edit
//! into admin), which the ClusterRole aggregation controller fills in.
//!
//! Simplified: only the roles a client commonly checks are made (not the
//! `system:controller:*` roles of upstream's controllers, nor node,
//! scheduler or kube-proxy roles: miniplane's components call the API in
//! process); an existing object is left as it is (upstream reconciles the
//! rules of objects whose autoupdate annotation is "true").

use serde_json::{Value, json};

use crate::api::Api;
use crate::error::ApiResult;

const RBAC: &str = "rbac.authorization.k8s.io";
const READ: &[&str] = &["get", "list", "watch"];
const WRITE: &[&str] = &["create", "delete", "deletecollection", "patch", "update"];
const READ_WRITE: &[&str] = &[
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];

/// A resource rule (upstream `rbacv1helpers.NewRule(verbs...).Groups(...).Resources(...)`).
fn rule(verbs: &[&str], groups: &[&str], resources: &[&str]) -> Value {
    json!({"apiGroups": groups, "resources": resources, "verbs": verbs})
}

/// A non-resource rule (`NewRule(verbs...).URLs(...)`).
fn urls(verbs: &[&str], urls: &[&str]) -> Value {
    json!({"nonResourceURLs": urls, "verbs": verbs})
}

/// Where the object comes from, on every bootstrap object.
fn meta(name: &str, extra_labels: &[(&str, &str)]) -> Value {
    let mut labels = serde_json::Map::new();
    labels.insert("kubernetes.io/bootstrapping".into(), json!("rbac-defaults"));
    for (k, v) in extra_labels {
        labels.insert((*k).into(), json!(v));
    }
    json!({
        "name": name,
        "labels": labels,
        "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "true"},
    })
}

fn cluster_role(name: &str, labels: &[(&str, &str)], rules: Vec<Value>) -> Value {
    json!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": meta(name, labels),
        "rules": rules,
    })
}

/// A role whose rules are the union of the roles labelled `aggregate-to-<to>: "true"`.
fn aggregated(name: &str, to: &str, labels: &[(&str, &str)]) -> Value {
    let key = format!("rbac.authorization.k8s.io/aggregate-to-{to}");
    json!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": meta(name, labels),
        "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {key: "true"}}]},
        "rules": null,
    })
}

/// Upstream `ClusterRoles()`, the part miniplane serves.
pub fn cluster_roles() -> Vec<Value> {
    let to_admin = [("rbac.authorization.k8s.io/aggregate-to-admin", "true")];
    let to_edit = [("rbac.authorization.k8s.io/aggregate-to-edit", "true")];
    let to_view = [("rbac.authorization.k8s.io/aggregate-to-view", "true")];
    vec![
        cluster_role(
            "cluster-admin",
            &[],
            vec![rule(&["*"], &["*"], &["*"]), urls(&["*"], &["*"])],
        ),
        cluster_role(
            "system:discovery",
            &[],
            vec![urls(
                &["get"],
                &[
                    "/api",
                    "/api/*",
                    "/apis",
                    "/apis/*",
                    "/healthz",
                    "/livez",
                    "/openapi",
                    "/openapi/*",
                    "/readyz",
                    "/version",
                    "/version/",
                ],
            )],
        ),
        cluster_role(
            "system:public-info-viewer",
            &[],
            vec![urls(
                &["get"],
                &["/healthz", "/livez", "/readyz", "/version", "/version/"],
            )],
        ),
        cluster_role(
            "system:basic-user",
            &[],
            vec![
                rule(&["create"], &["authentication.k8s.io"], &["selfsubjectreviews"]),
                rule(
                    &["create"],
                    &["authorization.k8s.io"],
                    &["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
                ),
            ],
        ),
        cluster_role(
            "system:auth-delegator",
            &[],
            vec![
                rule(&["create"], &["authentication.k8s.io"], &["tokenreviews"]),
                rule(&["create"], &["authorization.k8s.io"], &["subjectaccessreviews"]),
            ],
        ),
        cluster_role(
            "system:service-account-issuer-discovery",
            &[],
            vec![urls(
                &["get"],
                &[
                    "/.well-known/openid-configuration",
                    "/.well-known/openid-configuration/",
                    "/openid/v1/jwks",
                    "/openid/v1/jwks/",
                ],
            )],
        ),
        aggregated("admin", "admin", &[]),
        aggregated("edit", "edit", &to_admin),
        aggregated("view", "view", &to_edit),
        cluster_role("system:aggregate-to-admin", &to_admin, aggregate_to_admin()),
        cluster_role("system:aggregate-to-edit", &to_edit, aggregate_to_edit()),
        cluster_role("system:aggregate-to-view", &to_view, aggregate_to_view()),
    ]
}

/// What `admin` adds to `edit`: granting permissions inside the namespace.
fn aggregate_to_admin() -> Vec<Value> {
    vec![
        rule(
            &["create"],
            &["authorization.k8s.io"],
            &["localsubjectaccessreviews"],
        ),
        rule(READ_WRITE, &[RBAC], &["rolebindings", "roles"]),
    ]
}

/// What `edit` adds to `view`: writes, secrets, exec and friends.
fn aggregate_to_edit() -> Vec<Value> {
    vec![
        rule(
            READ,
            &[""],
            &[
                "pods/attach",
                "pods/exec",
                "pods/portforward",
                "pods/proxy",
                "secrets",
                "services/proxy",
            ],
        ),
        rule(&["impersonate"], &[""], &["serviceaccounts"]),
        rule(
            WRITE,
            &[""],
            &[
                "pods",
                "pods/attach",
                "pods/exec",
                "pods/portforward",
                "pods/proxy",
            ],
        ),
        rule(&["create"], &[""], &["pods/eviction"]),
        rule(
            WRITE,
            &[""],
            &[
                "configmaps",
                "events",
                "persistentvolumeclaims",
                "replicationcontrollers",
                "replicationcontrollers/scale",
                "secrets",
                "serviceaccounts",
                "services",
                "services/proxy",
            ],
        ),
        rule(&["create"], &[""], &["serviceaccounts/token"]),
        rule(
            WRITE,
            &["apps"],
            &[
                "daemonsets",
                "deployments",
                "deployments/rollback",
                "deployments/scale",
                "replicasets",
                "replicasets/scale",
                "statefulsets",
                "statefulsets/scale",
            ],
        ),
        rule(WRITE, &["autoscaling"], &["horizontalpodautoscalers"]),
        rule(WRITE, &["batch"], &["cronjobs", "jobs"]),
        rule(
            WRITE,
            &["extensions"],
            &[
                "daemonsets",
                "deployments",
                "deployments/rollback",
                "deployments/scale",
                "ingresses",
                "networkpolicies",
                "replicasets",
                "replicasets/scale",
                "replicationcontrollers/scale",
            ],
        ),
        rule(WRITE, &["policy"], &["poddisruptionbudgets"]),
        rule(WRITE, &["networking.k8s.io"], &["ingresses", "networkpolicies"]),
    ]
}

/// `view`: reading what is not a secret and cannot escalate.
fn aggregate_to_view() -> Vec<Value> {
    vec![
        rule(
            READ,
            &[""],
            &[
                "configmaps",
                "endpoints",
                "persistentvolumeclaims",
                "persistentvolumeclaims/status",
                "pods",
                "replicationcontrollers",
                "replicationcontrollers/scale",
                "serviceaccounts",
                "services",
                "services/status",
            ],
        ),
        rule(
            READ,
            &[""],
            &[
                "bindings",
                "events",
                "limitranges",
                "namespaces/status",
                "pods/log",
                "pods/status",
                "replicationcontrollers/status",
                "resourcequotas",
                "resourcequotas/status",
            ],
        ),
        rule(READ, &[""], &["namespaces"]),
        rule(READ, &["discovery.k8s.io"], &["endpointslices"]),
        rule(
            READ,
            &["apps"],
            &[
                "controllerrevisions",
                "daemonsets",
                "daemonsets/status",
                "deployments",
                "deployments/scale",
                "deployments/status",
                "replicasets",
                "replicasets/scale",
                "replicasets/status",
                "statefulsets",
                "statefulsets/scale",
                "statefulsets/status",
            ],
        ),
        rule(
            READ,
            &["autoscaling"],
            &["horizontalpodautoscalers", "horizontalpodautoscalers/status"],
        ),
        rule(
            READ,
            &["batch"],
            &["cronjobs", "cronjobs/status", "jobs", "jobs/status"],
        ),
        rule(
            READ,
            &["extensions"],
            &[
                "daemonsets",
                "daemonsets/status",
                "deployments",
                "deployments/scale",
                "deployments/status",
                "ingresses",
                "ingresses/status",
                "networkpolicies",
                "replicasets",
                "replicasets/scale",
                "replicasets/status",
                "replicationcontrollers/scale",
            ],
        ),
        rule(
            READ,
            &["policy"],
            &["poddisruptionbudgets", "poddisruptionbudgets/status"],
        ),
        rule(
            READ,
            &["networking.k8s.io"],
            &["ingresses", "ingresses/status", "networkpolicies"],
        ),
    ]
}

fn binding(role: &str, groups: &[&str]) -> Value {
    let subjects: Vec<Value> = groups
        .iter()
        .map(|g| json!({"apiGroup": RBAC, "kind": "Group", "name": g}))
        .collect();
    json!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": meta(role, &[]),
        "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": role},
        "subjects": subjects,
    })
}

/// Upstream `ClusterRoleBindings()`, the part miniplane serves.
pub fn cluster_role_bindings() -> Vec<Value> {
    vec![
        binding("cluster-admin", &["system:masters"]),
        binding("system:discovery", &["system:authenticated"]),
        binding("system:basic-user", &["system:authenticated"]),
        binding(
            "system:public-info-viewer",
            &["system:authenticated", "system:unauthenticated"],
        ),
        binding(
            "system:service-account-issuer-discovery",
            &["system:serviceaccounts"],
        ),
    ]
}

/// Creates every default role and binding that does not exist yet.
pub async fn ensure(api: &Api) -> ApiResult<()> {
    let roles = api.resource(RBAC, "v1", "clusterroles")?;
    let bindings = api.resource(RBAC, "v1", "clusterrolebindings")?;
    let objects = cluster_roles()
        .into_iter()
        .map(|o| (&roles, o))
        .chain(cluster_role_bindings().into_iter().map(|o| (&bindings, o)));
    api.create_all_missing(objects).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_defaults_are_valid_and_created_once() {
        let api = crate::testkit::TestApi::builder().open();
        ensure(&api).await.unwrap();
        ensure(&api).await.unwrap();
        let info = api.resource(RBAC, "v1", "clusterroles").unwrap();
        let admin = api.get(&info, None, "admin").unwrap();
        assert_eq!(
            admin["metadata"]["labels"]["kubernetes.io/bootstrapping"],
            "rbac-defaults"
        );
        assert_eq!(
            admin["aggregationRule"]["clusterRoleSelectors"][0]["matchLabels"]["rbac.authorization.k8s.io/aggregate-to-admin"],
            "true"
        );
        let list = api.list(&info, None, &Default::default()).unwrap();
        assert_eq!(list.items.len(), cluster_roles().len());
        let info = api.resource(RBAC, "v1", "clusterrolebindings").unwrap();
        let crb = api.get(&info, None, "cluster-admin").unwrap();
        assert_eq!(crb["subjects"][0]["name"], "system:masters");
    }
}
