//! RBAC end to end, through the real kubectl: the four kinds (tables,
//! validation, every verb), the default roles and their aggregation, the
//! RBAC authorizer's 403s (`--authorization rbac`), impersonation,
//! `kubectl auth can-i` (with and without `--list`), a service account
//! acting with its own token, and the RBAC documents of a real install
//! manifest applied server-side.

use std::time::Duration;

use e2e::{Cluster, Config};
use serde_json::Value;

/// How long a controller may take to converge.
const WAIT: Duration = Duration::from_secs(20);

/// The ingress-nginx install manifest for kind, as published.
const INGRESS_NGINX: &str = include_str!("../../testdata/manifests/ingress-nginx-kind.yaml");

async fn rbac_cluster() -> Cluster {
    Cluster::start_with(Config {
        authorization: "rbac".parse().expect("a mode"),
        ..Config::ephemeral()
    })
    .await
}

/// Applies `yaml` with `kubectl apply -f` (extra `args` first).
async fn apply(c: &Cluster, args: &[&str], yaml: &str) -> String {
    let file = c.file("manifest.yaml", yaml);
    let mut all = vec!["apply"];
    all.extend_from_slice(args);
    all.extend(["-f", file.to_str().expect("utf-8 path")]);
    c.ok(&all).await
}

/// `kubectl create -f` of `yaml`, expected to fail: its stderr.
async fn create_fails(c: &Cluster, yaml: &str) -> String {
    c.create_fails(yaml).await
}

/// The whitespace-separated cells of each line of a table.
fn table(out: &str) -> Vec<Vec<String>> {
    out.lines()
        .map(|l| l.split_whitespace().map(str::to_string).collect())
        .collect()
}

/// Polls `kubectl get ... -o json` until `check` holds, for up to [`WAIT`].
async fn eventually(c: &Cluster, args: &[&str], what: &str, check: impl Fn(&Value) -> bool) -> Value {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let v = c.json(args).await;
        if check(&v) {
            return v;
        }
        assert!(tokio::time::Instant::now() < deadline, "never saw {what}: {v:#}");
        c.server().api().clock().sleep(Duration::from_millis(100)).await;
    }
}

/// Whether a role's rules grant something on `resource`.
fn grants(role: &Value, resource: &str) -> bool {
    role["rules"].as_array().into_iter().flatten().any(|r| {
        r["resources"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|x| x == resource)
    })
}

// ---------------------------------------------------------------------------
// The kinds

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn roles_and_bindings_through_kubectl_with_upstream_tables() {
    let mut c = Cluster::start().await;
    c.ok(&[
        "create",
        "role",
        "pod-reader",
        "--verb=get,list",
        "--resource=pods",
    ])
    .await;
    c.ok(&[
        "create",
        "clusterrole",
        "cm-reader",
        "--verb=get",
        "--resource=configmaps",
    ])
    .await;
    let roles = table(&c.ok(&["get", "roles"]).await);
    assert_eq!(roles[0], ["NAME", "CREATED", "AT"]);
    assert_eq!(roles[1][0], "pod-reader");
    assert!(roles[1][1].ends_with('Z'), "CREATED AT is a timestamp: {roles:?}");
    let cr = table(&c.ok(&["get", "clusterrole", "cm-reader"]).await);
    assert_eq!(cr[0], ["NAME", "CREATED", "AT"]);

    c.ok(&[
        "create",
        "rolebinding",
        "read-pods",
        "--role=pod-reader",
        "--user=jane",
        "--group=devs",
        "--serviceaccount=default:builder",
    ])
    .await;
    let rb = table(&c.ok(&["get", "rolebinding", "read-pods", "-o", "wide"]).await);
    assert_eq!(
        rb[0],
        ["NAME", "ROLE", "AGE", "USERS", "GROUPS", "SERVICEACCOUNTS"]
    );
    assert_eq!(rb[1][0..2], ["read-pods", "Role/pod-reader"]);
    assert_eq!(rb[1][3..], ["jane", "devs", "default/builder"]);
    let narrow = table(&c.ok(&["get", "rolebinding", "read-pods"]).await);
    assert_eq!(narrow[0], ["NAME", "ROLE", "AGE"]);
    c.ok(&[
        "create",
        "clusterrolebinding",
        "cm",
        "--clusterrole=cm-reader",
        "--group=devs",
    ])
    .await;
    let crb = table(&c.ok(&["get", "clusterrolebinding", "cm", "-o", "wide"]).await);
    assert_eq!(
        crb[0],
        ["NAME", "ROLE", "AGE", "USERS", "GROUPS", "SERVICEACCOUNTS"]
    );
    assert_eq!(crb[1][1], "ClusterRole/cm-reader");
    // Defaulting: the subjects' apiGroups, as upstream's v1 defaults.
    let rb = c.json(&["get", "rolebinding", "read-pods"]).await;
    assert_eq!(rb["subjects"][0]["apiGroup"], "rbac.authorization.k8s.io");
    assert_eq!(rb["roleRef"]["apiGroup"], "rbac.authorization.k8s.io");

    // Update (replace), patch, list across namespaces, delete.
    let mut role = c.json(&["get", "role", "pod-reader"]).await;
    role["rules"][0]["verbs"] = serde_json::json!(["get", "list", "watch"]);
    let file = c.file("role.json", &role.to_string());
    c.ok(&["replace", "-f", file.to_str().unwrap()]).await;
    let role = c.json(&["get", "role", "pod-reader"]).await;
    assert_eq!(
        role["rules"][0]["verbs"],
        serde_json::json!(["get", "list", "watch"])
    );
    c.ok(&[
        "patch",
        "rolebinding",
        "read-pods",
        "--type=merge",
        "-p",
        r#"{"subjects":[{"kind":"User","name":"joe"}]}"#,
    ])
    .await;
    let rb = table(&c.ok(&["get", "rolebinding", "read-pods", "-o", "wide"]).await);
    assert_eq!(rb[1][3], "joe");
    let err = c
        .fails(&[
            "patch",
            "rolebinding",
            "read-pods",
            "--type=merge",
            "-p",
            r#"{"roleRef":{"name":"other"}}"#,
        ])
        .await;
    assert!(
        err.contains(r#"roleRef: Invalid value: rbac.RoleRef{APIGroup:"rbac.authorization.k8s.io", Kind:"Role", Name:"other"}: cannot change roleRef"#),
        "{err}"
    );
    let all = c.ok(&["get", "roles,rolebindings", "-A", "-o", "name"]).await;
    assert!(all.contains("role.rbac.authorization.k8s.io/pod-reader"), "{all}");
    assert!(
        all.contains("rolebinding.rbac.authorization.k8s.io/read-pods"),
        "{all}"
    );
    for (kind, name) in [
        ("rolebinding", "read-pods"),
        ("role", "pod-reader"),
        ("clusterrolebinding", "cm"),
        ("clusterrole", "cm-reader"),
    ] {
        c.ok(&["delete", kind, name]).await;
        assert!(c.fails(&["get", kind, name]).await.contains("NotFound"));
    }
    c.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_kind_refuses_what_upstream_refuses_with_its_field_path() {
    let mut c = Cluster::start().await;
    let err = create_fails(
        &c,
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: r}\nrules:\n- apiGroups: ['']\n  resources: [pods]\n",
    )
    .await;
    assert!(
        err.contains(r#"The Role "r" is invalid: rules[0].verbs: Required value: verbs must contain at least one value"#),
        "{err}"
    );
    let err = create_fails(
        &c,
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: c}\nrules:\n- verbs: [get]\n  resources: [pods]\n  nonResourceURLs: [/healthz]\n",
    )
    .await;
    assert!(
        err.contains(r#"rules[0].nonResourceURLs: Invalid value: []string{"/healthz"}: rules cannot apply to both regular resources and non-resource URLs"#),
        "{err}"
    );
    let err = create_fails(
        &c,
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {name: b}\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: r}\nsubjects:\n- {kind: Robot, name: x}\n",
    )
    .await;
    assert!(
        err.contains(r#"subjects[0].kind: Unsupported value: "Robot": supported values: "ServiceAccount", "User", "Group""#),
        "{err}"
    );
    let err = create_fails(
        &c,
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: b}\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: r}\nsubjects:\n- {kind: ServiceAccount, name: sa}\n",
    )
    .await;
    assert!(
        err.contains(r#"roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole""#),
        "{err}"
    );
    assert!(err.contains("subjects[0].namespace: Required value"), "{err}");
    // RBAC names are path segments: colons are fine, slashes are not.
    c.ok(&[
        "create",
        "clusterrole",
        "example:viewer",
        "--verb=get",
        "--resource=pods",
    ])
    .await;
    c.stop().await;
}

/// Runs `kubectl get <plural> --watch --output-watch-events` while `act`
/// runs, and returns once every needle was printed, in order.
async fn watch_sees(c: &Cluster, plural: &str, needles: &[&str], act: impl AsyncFnOnce()) {
    c.watch_while(&[plural], &[], needles, act).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watching_rolebindings_sees_add_modify_delete() {
    let mut c = Cluster::start().await;
    watch_sees(
        &c,
        "rolebindings",
        &["ADDED", "MODIFIED", "DELETED"],
        async || {
            c.ok(&["create", "rolebinding", "w", "--clusterrole=view", "--user=jane"])
                .await;
            c.ok(&["label", "rolebinding", "w", "team=a"]).await;
            c.ok(&["delete", "rolebinding", "w"]).await;
        },
    )
    .await;
    c.stop().await;
}

// ---------------------------------------------------------------------------
// Default roles and aggregation

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn default_roles_exist_and_aggregate() {
    let mut c = Cluster::start().await;
    let admin = eventually(&c, &["get", "clusterrole", "admin"], "admin aggregated", |r| {
        grants(r, "rolebindings") && grants(r, "pods/exec") && grants(r, "pods")
    })
    .await;
    assert_eq!(
        admin["metadata"]["labels"]["kubernetes.io/bootstrapping"],
        "rbac-defaults"
    );
    assert_eq!(
        admin["metadata"]["annotations"]["rbac.authorization.kubernetes.io/autoupdate"],
        "true"
    );
    let yaml = c.ok(&["get", "clusterrole", "admin", "-o", "yaml"]).await;
    assert!(
        yaml.contains("aggregationRule:") && yaml.contains("localsubjectaccessreviews"),
        "{yaml}"
    );
    let view = eventually(&c, &["get", "clusterrole", "view"], "view aggregated", |r| {
        grants(r, "pods")
    })
    .await;
    assert!(!grants(&view, "secrets"), "view does not read secrets");
    for name in [
        "cluster-admin",
        "edit",
        "system:discovery",
        "system:basic-user",
        "system:public-info-viewer",
        "system:auth-delegator",
        "system:service-account-issuer-discovery",
    ] {
        c.ok(&["get", "clusterrole", name]).await;
    }
    let crb = c.json(&["get", "clusterrolebinding", "cluster-admin"]).await;
    assert_eq!(crb["subjects"][0]["name"], "system:masters");
    let public = c
        .json(&["get", "clusterrolebinding", "system:public-info-viewer"])
        .await;
    assert_eq!(public["subjects"][1]["name"], "system:unauthenticated");

    // A new role labelled aggregate-to-view reaches view, edit and admin.
    apply(
        &c,
        &[],
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: widgets-view\n  labels: {rbac.authorization.k8s.io/aggregate-to-view: \"true\"}\nrules:\n- {apiGroups: [example.com], resources: [widgets], verbs: [get, list]}\n",
    )
    .await;
    for role in ["view", "edit", "admin"] {
        eventually(&c, &["get", "clusterrole", role], "widgets aggregated", |r| {
            grants(r, "widgets")
        })
        .await;
    }
    c.ok(&["delete", "clusterrole", "widgets-view"]).await;
    eventually(&c, &["get", "clusterrole", "view"], "widgets gone", |r| {
        !grants(r, "widgets")
    })
    .await;
    c.stop().await;
}

// ---------------------------------------------------------------------------
// The RBAC authorizer

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rbac_mode_forbids_with_upstreams_message_and_allows_what_is_bound() {
    let mut c = rbac_cluster().await;
    let sa = "system:serviceaccount:default:sa";
    let err = c.fails(&["get", "pods", "--as", sa]).await;
    assert!(
        err.contains(r#"Error from server (Forbidden): pods is forbidden: User "system:serviceaccount:default:sa" cannot list resource "pods" in API group "" in the namespace "default""#),
        "{err}"
    );
    c.ok(&["create", "serviceaccount", "sa"]).await;
    c.ok(&[
        "create",
        "role",
        "pod-reader",
        "--verb=get,list",
        "--resource=pods",
    ])
    .await;
    c.ok(&[
        "create",
        "rolebinding",
        "sa-reads-pods",
        "--role=pod-reader",
        "--serviceaccount=default:sa",
    ])
    .await;
    c.ok(&["get", "pods", "--as", sa]).await;
    let err = c.fails(&["get", "secrets", "--as", sa]).await;
    assert!(
        err.contains(r#"secrets is forbidden: User "system:serviceaccount:default:sa" cannot list resource "secrets" in API group "" in the namespace "default""#),
        "{err}"
    );
    let err = c.fails(&["get", "pods", "-n", "kube-system", "--as", sa]).await;
    assert!(err.contains(r#"in the namespace "kube-system""#), "{err}");
    let err = c.fails(&["get", "nodes", "--as", sa]).await;
    assert!(
        err.contains(r#"nodes is forbidden: User "system:serviceaccount:default:sa" cannot list resource "nodes" in API group "" at the cluster scope"#),
        "{err}"
    );
    let err = c.fails(&["get", "--raw", "/metrics", "--as", "jane"]).await;
    assert!(
        err.contains(r#"forbidden: User "jane" cannot get path "/metrics""#),
        "{err}"
    );
    // Discovery is open to every authenticated user (system:discovery).
    c.ok(&["api-resources", "--as", "jane"]).await;
    c.ok(&["get", "--raw", "/version", "--as", "jane"]).await;
    // The admin (system:masters) may still do anything.
    c.ok(&["get", "secrets,nodes"]).await;

    // can-i agrees with the authorizer.
    let yes = c.run(&["auth", "can-i", "list", "pods", "--as", sa]).await;
    assert!(yes.success && yes.stdout.trim() == "yes", "{yes:?}");
    let no = c.run(&["auth", "can-i", "list", "secrets", "--as", sa]).await;
    assert!(!no.success && no.stdout.trim() == "no", "{no:?}");
    let named = c.run(&["auth", "can-i", "get", "pods/web", "--as", sa]).await;
    assert_eq!(named.stdout.trim(), "yes", "{named:?}");
    let list = table(&c.ok(&["auth", "can-i", "--list", "--as", sa]).await);
    assert_eq!(
        list[0],
        ["Resources", "Non-Resource", "URLs", "Resource", "Names", "Verbs"]
    );
    assert!(
        list.contains(&vec![
            "pods".into(),
            "[]".into(),
            "[]".into(),
            "[get".into(),
            "list]".into()
        ]),
        "{list:?}"
    );
    assert!(
        list.iter()
            .any(|r| r[0] == "selfsubjectaccessreviews.authorization.k8s.io"),
        "{list:?}"
    );
    // Non-resource rows have an empty Resources cell.
    assert!(
        list.iter().any(|r| r[0] == "[/api/*]" && r[2] == "[get]"),
        "{list:?}"
    );
    assert!(!list.iter().any(|r| r[0] == "secrets"), "{list:?}");
    c.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aggregated_roles_grant_in_rbac_mode() {
    let mut c = rbac_cluster().await;
    c.ok(&[
        "create",
        "rolebinding",
        "jane-views",
        "--clusterrole=view",
        "--user=jane",
    ])
    .await;
    // view is filled by the aggregation controller: wait for it to grant.
    let deadline = tokio::time::Instant::now() + WAIT;
    while c
        .run(&["get", "deployments", "--as", "jane"])
        .await
        .stdout
        .contains("forbidden")
    {
        assert!(tokio::time::Instant::now() < deadline);
        c.server().api().clock().sleep(Duration::from_millis(100)).await;
    }
    eventually(&c, &["get", "clusterrole", "view"], "view aggregated", |r| {
        grants(r, "deployments")
    })
    .await;
    c.ok(&["get", "deployments,configmaps,pods", "--as", "jane"])
        .await;
    let err = c.fails(&["get", "secrets", "--as", "jane"]).await;
    assert!(err.contains("Forbidden"), "{err}");
    let err = c.fails(&["create", "configmap", "x", "--as", "jane"]).await;
    assert!(
        err.contains(r#"configmaps is forbidden: User "jane" cannot create resource "configmaps" in API group "" in the namespace "default""#),
        "{err}"
    );
    // A binding to a role that does not exist says so in the reason.
    c.ok(&[
        "create",
        "rolebinding",
        "dangling",
        "--role=missing",
        "--user=joe",
    ])
    .await;
    let err = c.fails(&["get", "pods", "--as", "joe"]).await;
    assert!(
        err.contains(
            r#"in the namespace "default": RBAC: role.rbac.authorization.k8s.io "missing" not found"#
        ),
        "{err}"
    );
    c.stop().await;
}

// ---------------------------------------------------------------------------
// Impersonation and service-account tokens

/// A kubeconfig for the cluster that authenticates with `token` only (no
/// client certificate), so the request is that token's user.
fn token_kubeconfig(c: &Cluster, admin: &Value, token: &str) -> std::path::PathBuf {
    let cluster = &admin["clusters"][0]["cluster"];
    let config = serde_json::json!({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": cluster}],
        "users": [{"name": "u", "user": {"token": token}}],
        "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u", "namespace": "default"}}],
        "current-context": "c",
    });
    c.file("token-kubeconfig.json", &config.to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_service_account_acts_with_its_own_token_and_may_not_impersonate() {
    let mut c = rbac_cluster().await;
    c.ok(&["create", "serviceaccount", "sa"]).await;
    c.ok(&[
        "create",
        "role",
        "pod-reader",
        "--verb=get,list",
        "--resource=pods",
    ])
    .await;
    c.ok(&[
        "create",
        "rolebinding",
        "sa-reads-pods",
        "--role=pod-reader",
        "--serviceaccount=default:sa",
    ])
    .await;
    let token = c.ok(&["create", "token", "sa"]).await;
    let admin = c.json(&["config", "view", "--raw"]).await;
    let kubeconfig = token_kubeconfig(&c, &admin, token.trim());
    let kc = format!("--kubeconfig={}", kubeconfig.display());
    c.ok(&["get", "pods", &kc]).await;
    let err = c.fails(&["get", "secrets", &kc]).await;
    assert!(
        err.contains(r#"Error from server (Forbidden): secrets is forbidden: User "system:serviceaccount:default:sa" cannot list resource "secrets" in API group "" in the namespace "default""#),
        "{err}"
    );
    let yes = c.run(&["auth", "can-i", "list", "pods", &kc]).await;
    assert_eq!(yes.stdout.trim(), "yes", "{yes:?}");
    let no = c.run(&["auth", "can-i", "list", "secrets", &kc]).await;
    assert_eq!(no.stdout.trim(), "no", "{no:?}");

    // Impersonation needs the `impersonate` verb.
    let err = c.fails(&["get", "pods", &kc, "--as", "alice"]).await;
    assert!(
        err.contains(r#"users "alice" is forbidden: User "system:serviceaccount:default:sa" cannot impersonate resource "users" in API group "" at the cluster scope"#),
        "{err}"
    );
    c.ok(&[
        "create",
        "clusterrole",
        "impersonator",
        "--verb=impersonate",
        "--resource=users,groups",
    ])
    .await;
    c.ok(&[
        "create",
        "clusterrolebinding",
        "sa-impersonates",
        "--clusterrole=impersonator",
        "--serviceaccount=default:sa",
    ])
    .await;
    // alice has no rights; impersonating her now works and is forbidden as alice.
    let err = c.fails(&["get", "pods", &kc, "--as", "alice"]).await;
    assert!(
        err.contains(r#"User "alice" cannot list resource "pods""#),
        "{err}"
    );
    // Every part is checked: the uid is not granted.
    let err = c
        .fails(&["get", "pods", &kc, "--as", "alice", "--as-uid", "u-1"])
        .await;
    assert!(
        err.contains(r#"uids.authentication.k8s.io "u-1" is forbidden: User "system:serviceaccount:default:sa" cannot impersonate resource "uids" in API group "authentication.k8s.io" at the cluster scope"#),
        "{err}"
    );
    c.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn always_allow_answers_yes_and_reviews_are_create_only() {
    let mut c = Cluster::start().await;
    let yes = c
        .run(&["auth", "can-i", "delete", "nodes", "--as", "nobody"])
        .await;
    assert_eq!(yes.stdout.trim(), "yes", "{yes:?}");
    let list = table(&c.ok(&["auth", "can-i", "--list", "--as", "nobody"]).await);
    assert!(
        list.iter()
            .any(|r| r[0] == "*.*" && r.last().map(String::as_str) == Some("[*]")),
        "{list:?}"
    );
    // Impersonation works in always-allow mode too: the user is the impersonated one.
    let err = c
        .fails(&[
            "get",
            "--raw",
            "/api/v1/namespaces/default/pods/none",
            "--as",
            "nobody",
        ])
        .await;
    assert!(err.contains("NotFound"), "{err}");
    let err = c.fails(&["get", "selfsubjectaccessreviews"]).await;
    assert!(
        err.contains("MethodNotAllowed") || err.contains("does not allow this method"),
        "{err}"
    );
    let sar = r#"{"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview","spec":{"resourceAttributes":{"verb":"get","resource":"pods"}}}"#;
    let file = c.file("sar.json", sar);
    let err = c.fails(&["create", "-f", file.to_str().unwrap()]).await;
    assert!(
        err.contains(r#"spec.user: Invalid value: "": at least one of user or group must be specified"#),
        "{err}"
    );
    c.stop().await;
}

// ---------------------------------------------------------------------------
// A real install manifest

/// The documents of a multi-document YAML stream whose `kind` is one of `kinds`.
fn documents_of_kinds<'a>(yaml: &'a str, kinds: &[&str]) -> Vec<&'a str> {
    yaml.split("\n---")
        .filter(|doc| {
            doc.lines().any(|l| {
                l.strip_prefix("kind: ")
                    .is_some_and(|k| kinds.contains(&k.trim()))
            })
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ingress_nginx_rbac_applies_server_side() {
    let mut c = rbac_cluster().await;
    let rbac_kinds = ["Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding"];
    let mut wanted: Vec<&str> = vec!["Namespace", "ServiceAccount"];
    wanted.extend(rbac_kinds);
    let docs = documents_of_kinds(INGRESS_NGINX, &wanted);
    let out = apply(&c, &["--server-side"], &docs.join("\n---\n")).await;
    let created: Vec<&str> = out
        .lines()
        .filter(|l| l.ends_with("serverside-applied"))
        .collect();
    let rbac_docs = documents_of_kinds(INGRESS_NGINX, &rbac_kinds);
    assert_eq!(rbac_docs.len(), 8, "the manifest's RBAC documents");
    assert_eq!(created.len(), docs.len(), "{out}");
    for kind in rbac_kinds {
        let plural = format!("{}s", kind.to_lowercase());
        let listed = c
            .ok(&[
                "get",
                &plural,
                "-A",
                "-l",
                "app.kubernetes.io/name=ingress-nginx",
                "-o",
                "name",
            ])
            .await;
        let expected = rbac_docs
            .iter()
            .filter(|d| d.lines().any(|l| l == format!("kind: {kind}")))
            .count();
        assert_eq!(listed.lines().count(), expected, "{kind}: {listed}");
    }
    // The controller's service account may read what its ClusterRole grants.
    let sa = "system:serviceaccount:ingress-nginx:ingress-nginx";
    c.ok(&["get", "ingresses", "-A", "--as", sa]).await;
    let can = c
        .run(&["auth", "can-i", "list", "secrets", "-A", "--as", sa])
        .await;
    assert_eq!(can.stdout.trim(), "yes", "{can:?}");
    let cannot = c
        .run(&[
            "auth",
            "can-i",
            "delete",
            "secrets",
            "-n",
            "ingress-nginx",
            "--as",
            sa,
        ])
        .await;
    assert_eq!(cannot.stdout.trim(), "no", "{cannot:?}");
    // Applied again, nothing changes.
    let again = apply(&c, &["--server-side"], &docs.join("\n---\n")).await;
    assert!(
        again.lines().all(|l| l.ends_with("serverside-applied")),
        "{again}"
    );
    c.stop().await;
}
